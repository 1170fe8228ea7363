"""`nfeval linkage`: the input format, every method on a file, resume, the command line.

The judge methods run on :class:`FakeJudge`, whose label distribution and
replies follow a ``quality=N`` marker in the candidate's text (so a correct
judge is known in advance); ``refppl`` runs on the tiny GPT-2; the lexical
methods need no model. The one run with a real model (SmolLM2 on the
committed example) is marked slow.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.cli import main
from nfeval.linkage import judges as J
from nfeval.linkage import score_file as SF
from nfeval.linkage.settings import LinkageSettings
from nfeval.models.base import Generation, LanguageModel, ModelInfo, normalize

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "linkage_answers.jsonl"
_QUALITY = re.compile(r"quality=(\d)")


class FakeJudge(LanguageModel):
    """A judge that reads the ``quality=N`` marker of the candidate (0..3) and the
    ``level=N`` marker of a pairwise reference.

    prob: LINKAGE puts its mass on rank 4 - N, pointwise on score 3N, pairwise
    on the candidate when N is above the reference's level (C on a tie, else
    on the reference). sample: the same label as ``[[k]]``, or a reply
    without a label when the candidate says "garbled".
    """

    info = ModelInfo(name="fake-judge", backend="test", source="test", dtype="float32")

    def __init__(self):
        self.calls = 0

    @staticmethod
    def _label(prompt: str) -> str:
        marks = list(_QUALITY.finditer(prompt))  # the candidate's is the last one
        q = int(marks[-1].group(1)) if marks else 0
        if "[The End of Assistant A" in prompt:  # pairwise
            lv = re.search(r"level=(\d)", prompt)
            level = int(lv.group(1)) if lv else q  # unmarked answers tie
            first = bool(marks) and marks[-1].start() < prompt.find("[The End of Assistant A")
            if q == level:
                return "C"
            return ("A" if first else "B") if q > level else ("B" if first else "A")
        if "0-10" in prompt:  # pointwise
            return str(3 * q)
        return str(4 - q)  # LINKAGE rank

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        self.calls += 1
        best = self._label(prompt)
        return {lab: (0.0 if lab.removesuffix("]]") == best else -4.0) for lab in labels}

    def label_distribution(self, prompt, labels):
        return normalize(self.label_logprobs(prompt, labels))

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls += 1
        m = ([None] + list(_QUALITY.finditer(prompt)))[-1]
        if m is not None and "garbled" in prompt[max(0, m.start() - 20):m.start()]:
            return Generation("I cannot decide.", "length", 4)
        return Generation(f"My verdict: [[{self._label(prompt)}", "stop", 5)

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "<user>" + "".join(m.content for m in messages) + "<assistant>"


class FakeWriter(LanguageModel):
    """A reference writer: a golden answer, then three numbered degraded answers."""

    info = ModelInfo(name="fake-writer", backend="test", source="test")

    def __init__(self):
        self.calls = 0

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls += 1
        if "Answer1" in prompt and "Below are" in prompt:
            return Generation("Answer1: a fair answer.\nAnswer2: a weak answer.\n"
                              "Answer3: an unrelated answer.", "stop", 12)
        return Generation("Answer: the best possible golden answer.", "stop", 7)

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(m.content for m in messages)


def line(qid, question="Why is the sky blue?", cands=None, refs=None, **extra):
    obj = {"id": qid, "question": question,
           "candidates": cands if cands is not None else [
               {"id": "good", "text": "Rayleigh scattering of sunlight. quality=3", "grade": 3},
               {"id": "ok", "text": "Light scatters in air. quality=2", "grade": 2},
               {"id": "meh", "text": "Because of the air. quality=1", "grade": 1},
               {"id": "bad", "text": "The sea reflects on it. quality=0", "grade": 0}],
           **extra}
    if refs is not False:
        obj["references"] = refs if refs is not None else [
            {"text": "Short blue light scatters most off air molecules. level=3", "grade": 3},
            {"text": "Air scatters blue light. level=2", "grade": 2},
            {"text": "It is the air. level=1", "grade": 1},
            {"text": "Clouds are white. level=0", "grade": 0}]
    return json.dumps(obj)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache, and tmp_path as the working folder (default outputs land there)."""
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "cache"


@pytest.fixture
def answers(tmp_path):
    p = tmp_path / "mine.jsonl"
    p.write_text("\n".join(line(f"q{i}") for i in range(1, 4)) + "\n")
    return p


@pytest.fixture
def fake(monkeypatch):
    """`nfeval linkage` with FakeJudge as every model it loads."""
    import nfeval.cli as cli

    judge = FakeJudge()
    monkeypatch.setattr("nfeval.models.loader.ModelLoader.load", lambda self, name, backend=None, **kw: judge)
    return judge


# --------------------------------------------------------------------------- the format

def test_the_committed_example_is_valid():
    lf = SF.read_linkage_file(EXAMPLE)
    assert lf.skipped == [] and len(lf.questions) == 4 and lf.has_grades
    for q in lf.questions:
        assert 3 <= len(q.candidates) <= 4 and q.graded_references
        assert [r.grade for r in q.references] == [3, 2, 1, 0]  # sorted best first
        assert all(c.grade is not None for c in q.candidates)


def test_bad_lines_are_named_and_left_out():
    text = "\n".join([
        line("q1"),                                           # 1 fine
        "{not json",                                          # 2
        json.dumps({"question": "No id?", "candidates": [{"text": "x"}]}),  # 3
        line("q1"),                                           # 4 duplicate id
        line("q5", cands=[]),                                 # 5 no candidates
        line("q6", cands=[{"id": "a", "text": "  "}]),        # 6 empty text
        line("q7", cands=[{"text": "x", "grade": "high"}]),   # 7 grade not a number
        line("q8", refs=[{"text": "a", "grade": 3}, {"text": "b"}]),  # 8 mixed grades
        line("q9", refs=[{"text": "a", "grade": -1}]),        # 9 negative grade
        "",                                                   # 10 blank
        line("q11", cands=[{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]),  # 11
        "[1, 2]",                                             # 12 not an object
        line("q13", refs=False),                              # 13 fine (no references)
    ]) + "\n\n"
    lf = SF.parse_linkage_text(text, "t.jsonl")
    assert [q.qid for q in lf.questions] == ["q1", "q13"]
    assert [q.line for q in lf.questions] == [1, 13]
    got = {int(s.split(":")[0].split()[1]): s for s in lf.skipped}
    assert sorted(got) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert "invalid JSON" in got[2] and "no id" in got[3]
    assert "duplicate question id 'q1' (first on line 1" in got[4]
    assert "non-empty list" in got[5] and "'text' is empty" in got[6]
    assert "grade must be a number" in got[7] and "every reference a grade" in got[8]
    assert "integer >= 0" in got[9] and "blank" in got[10] and "used twice" in got[11]


def test_reference_order_and_defaults():
    lf = SF.parse_linkage_text("\n".join([
        line("g", refs=[{"text": "one", "grade": 1}, {"id": "best", "text": "three", "grade": 3},
                        {"text": "also one", "grade": 1}]),
        line("u", refs=[{"text": "first"}, {"text": "second"}, {"text": "third"}],
             cands=[{"text": "a"}, {"text": "b", "grade": 2.5}]),
    ]))
    g, u = lf.questions
    assert [(r.doc_id, r.grade) for r in g.references] == [("best", 3), ("r1", 1), ("r3", 1)]
    assert g.graded_references and not u.graded_references
    assert [(r.text, r.grade) for r in u.references] == [("first", 2), ("second", 1),
                                                         ("third", 0)]
    assert [(c.doc_id, c.grade) for c in u.candidates] == [("c1", None), ("c2", 2.5)]


def test_limit_keeps_the_first_valid_questions():
    lf = SF.parse_linkage_text("\n".join(["oops", line("a"), line("b"), line("c")]), limit=2)
    assert [q.qid for q in lf.questions] == ["a", "b"] and len(lf.skipped) == 1


def test_questions_without_references():
    lf = SF.parse_linkage_text("\n".join([line("a"), line("b", refs=False)]))
    need, skipped = SF.reference_plan(lf, "linkage")
    assert need == {} and len(skipped) == 1 and skipped[0].startswith("line 2: question b")
    assert SF.reference_plan(lf, "pointwise") == ({}, [])  # needs no references
    assert SF.reference_plan(lf, "linkage", generator=True)[0] == {"b": "0gt"}
    assert SF.reference_plan(lf, "linkage", "1gt", generator=True)[0] == {"a": "1gt"}
    assert SF.reference_plan(lf, "bleu", "0gt", generator=True)[0] == {"a": "0gt", "b": "0gt"}
    with pytest.raises(NfevalError, match="--generator"):
        SF.reference_plan(lf, "linkage", "0gt")


# --------------------------------------------------------------------------- the methods

@pytest.mark.parametrize("method", ["linkage", "pointwise", "pointwise-ref",
                                    "pointwise-ref-graded", "pairwise"])
def test_judge_methods_prob(mirror, cache, answers, method):
    lf = SF.read_linkage_file(answers)
    res = SF.score_linkage_file(lf, method, FakeJudge(), progress=False)
    t = res.table
    assert list(t.columns) == SF.COLUMNS and len(t) == 12
    assert t.groupby("qid")["rank"].apply(list).tolist() == [[1, 2, 3, 4]] * 3
    assert not t["unparsed"].any() and t["raw"].isna().all()
    first = json.loads(t["dist"][0])
    if method == "pairwise":
        assert [d["reference"] for d in first] == ["r1", "r2", "r3", "r4"]
        assert set(first[0]["dist"]) == {"A", "B", "C"} and t["n_outputs"].eq(4).all()
        assert 0 <= t["score"].min() and t["score"].max() <= 1
    else:
        assert math.isclose(sum(first.values()), 1.0) and t["n_outputs"].eq(1).all()
    corr = res.correlations.set_index("coefficient")
    assert corr.loc["spearman", "ours"] == pytest.approx(1.0)
    assert corr.loc["kendall", "n_questions"] == 3
    sig = res.signature.as_string()
    assert f"metric:{method}|" in sig and "model:fake-judge" in sig and "seed:0" in sig
    assert "n:12" in sig and "dtype:float32" in sig and "prompt:none" not in sig
    assert res.summary("mine.jsonl").startswith("File: mine.jsonl, ")


def test_sample_mode_keeps_replies_and_flags_unparsed(mirror, cache, tmp_path):
    cands = [{"id": "a", "text": "Great. quality=3", "grade": 3},
             {"id": "b", "text": "garbled quality=1", "grade": 1},
             {"id": "c", "text": "Poor. quality=0", "grade": 0}]
    lf = SF.parse_linkage_text(line("q", cands=cands))
    res = SF.score_linkage_file(lf, LinkageSettings("linkage", mode="sample"), FakeJudge(),
                                progress=False)
    t = res.table
    assert t["unparsed"].tolist() == [False, True, False]
    assert t["score"].tolist()[0] == -1.0 and math.isnan(t["score"][1])
    assert t["raw"][0].startswith("My verdict: [[1]]") and t["dist"].isna().all()
    assert pd.isna(t["rank"][1]) and t["rank"][2] == 2
    assert res.n_unparsed == 1 and "1 unparsed" in res.summary("x")
    imputed = SF.score_linkage_file(lf, LinkageSettings("linkage", mode="sample",
                                                        unparsed="release"),
                                    FakeJudge(), progress=False, use_cache=False)
    assert imputed.table["score"][1] == -2.0


@pytest.mark.parametrize("method", ["rouge1", "rouge2", "rougeL", "bleu"])
def test_lexical_methods_need_no_model(cache, answers, method):
    res = SF.score_linkage_file(SF.read_linkage_file(answers), method, progress=False)
    t = res.table
    assert len(t) == 12 and t["score"].notna().all()
    assert json.loads(t["detail"][0]) == {"ground_truth": "r1"}
    assert f"metric:{method}|" in res.signature.as_string()
    assert "refs:file" in res.signature.as_string()


def test_refppl_on_the_tiny_model(cache, answers, tiny_gpt2):
    from nfeval.linkage.refppl import refppl_question

    lf = SF.read_linkage_file(answers)
    res = SF.score_linkage_file(lf, "refppl", tiny_gpt2, progress=False)
    q = lf.questions[0]
    direct = refppl_question(tiny_gpt2, q.question, q.references, q.candidates)
    assert res.table["score"][:4].tolist() == pytest.approx([r.score for r in direct])
    assert "metric:refppl|variant:top-grade-mean-nll" in res.signature.as_string()


def test_fewshot_demonstrations_come_from_other_questions(mirror, cache, answers, monkeypatch):
    seen = {}
    real = J.judge_candidates

    def spy(judge, question, refs, cands, cfg, *, demonstrations=(), **kw):
        seen[question.qid] = [d.qid for d in demonstrations]
        return real(judge, question, refs, cands, cfg, demonstrations=demonstrations, **kw)

    monkeypatch.setattr(J, "judge_candidates", spy)
    lf = SF.read_linkage_file(answers)
    res = SF.score_linkage_file(lf, LinkageSettings("linkage", shots=2), FakeJudge(),
                                progress=False)
    assert all(len(v) == 2 and qid not in v for qid, v in seen.items()) and len(seen) == 3
    assert "variant:prob-2shot" in res.signature.as_string()
    with pytest.raises(NfevalError, match="--shots 3"):
        SF.score_linkage_file(lf, LinkageSettings("linkage", shots=3), FakeJudge(),
                              progress=False)


def test_generated_reference_lists_are_made_once(mirror, cache, tmp_path):
    lf = SF.parse_linkage_text("\n".join([line("a", refs=False), line("b")]))
    writer = FakeWriter()
    res = SF.score_linkage_file(lf, "linkage", FakeJudge(), generator=writer, progress=False)
    t = res.table
    assert t.groupby("qid")["references"].first().to_dict() == {"a": "0gt:3210",
                                                                 "b": "file:3210"}
    assert "refs:file+fake-writer" in res.signature.as_string()
    calls = writer.calls
    assert calls == 2  # one golden answer, one degraded-answer output
    again = SF.score_linkage_file(lf, "linkage", FakeJudge(), generator=writer,
                                  progress=False)
    assert writer.calls == calls  # cached
    pd.testing.assert_frame_equal(again.table, t)
    one = SF.score_linkage_file(lf, LinkageSettings("bleu", references="1gt"), None,
                                generator=writer, progress=False)
    assert one.table["references"].unique().tolist() == ["1gt:3210"]  # only "b" has refs
    assert one.n_questions == 1 and any("ground truth" in s for s in one.skipped)


def test_interrupted_run_resumes_without_recomputing(mirror, cache, answers, monkeypatch):
    from nfeval.debateqa.scoring import Interrupted

    real = J.judge_candidates
    calls = []

    def flaky(*a, **kw):
        if len(calls) == 1:
            raise KeyboardInterrupt
        calls.append(a[1].qid)
        return real(*a, **kw)

    monkeypatch.setattr(J, "judge_candidates", flaky)
    lf = SF.read_linkage_file(answers)
    with pytest.raises(Interrupted, match="after 1 of 3 questions.*rerun the same command"):
        SF.score_linkage_file(lf, "linkage", FakeJudge(), progress=False)
    monkeypatch.setattr(J, "judge_candidates", lambda *a, **kw: calls.append(a[1].qid)
                        or real(*a, **kw))
    res = SF.score_linkage_file(lf, "linkage", FakeJudge(), progress=False)
    assert calls == ["q1", "q2", "q3"]  # q1 came from the cache on the second run
    fresh = SF.score_linkage_file(lf, "linkage", FakeJudge(), progress=False, use_cache=False)
    pd.testing.assert_frame_equal(res.table, fresh.table)


# --------------------------------------------------------------------------- the command line

def test_cli_scores_and_prints_the_signature(models_extra, mirror, cache, answers, fake, tmp_path, capsys,
                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["linkage", "--answers", str(answers), "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"File: {answers}, LINKAGE (prob, 0-shot): 12 candidates of 3 "
                             "questions scored")
    assert "| metric:linkage|variant:prob-0shot|model:fake-judge|" in out[0]
    assert out[1].startswith("kendall with the human grades: 1.000 (") and "95% CI" in out[1]
    assert [o.split()[0] for o in out[1:]] == ["kendall", "spearman", "pearson"]
    table = pd.read_csv(tmp_path / "mine.linkage.csv")
    assert list(table.columns) == SF.COLUMNS and len(table) == 12


def test_cli_names_bad_lines_and_scores_the_rest(models_extra, mirror, cache, answers, fake, tmp_path,
                                                 capsys):
    answers.write_text(line("q1") + "\n{broken\n" + line("q1") + "\n")
    out = tmp_path / "s.csv"
    assert main(["linkage", "--answers", str(answers), "--out", str(out),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "nfeval: skipped line 2: invalid JSON" in err
    assert "nfeval: skipped line 3: duplicate question id 'q1'" in err
    assert pd.read_csv(out)["qid"].unique().tolist() == ["q1"]


def test_cli_stdin_and_stdout(models_extra, mirror, cache, answers, fake, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(answers.read_text()))
    assert main(["linkage", "--answers", "-", "--out", "-", "--method", "pointwise",
                 "--limit", "2", "--no-progress"]) == 0
    cap = capsys.readouterr()
    table = pd.read_csv(io.StringIO(cap.out))
    assert len(table) == 8 and table["method"].eq("pointwise").all()
    assert "File: <stdin>, pointwise without references (prob)" in cap.err  # summary: stderr
    assert "metric:pointwise|" in cap.err


@pytest.mark.parametrize("argv,status,msg", [
    (["--method", "rougeL", "--shots", "2"], 2, "--shots is for the LLM judge"),
    (["--method", "bleu", "--model", "x"], 2, "uses no language model"),
    (["--method", "pairwise", "--unparsed", "release"], 2, "for method 'linkage' only"),
    (["--references", "0gt"], 2, "--generator"),
    (["--unparsed", "often"], 2, "--unparsed must be"),
    (["--answers", "/no/such/file.jsonl"], 2, "does not exist"),
])
def test_cli_usage_errors_exit_2(models_extra, mirror, cache, answers, fake, capsys, argv, status,
                                 msg):
    args = {"--answers": str(answers)}
    args.update(dict(zip(argv[::2], argv[1::2])))
    assert main(["linkage", *[x for kv in args.items() for x in kv], "--no-progress"]) == status
    err = capsys.readouterr().err
    assert err.startswith("nfeval: error: ") and msg in err


def test_cli_nothing_scored_exits_1(models_extra, mirror, cache, answers, fake, capsys):
    answers.write_text("{broken\n" + line("q1", refs=False) + "\n")
    assert main(["linkage", "--answers", str(answers), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "line 1: invalid JSON" in err and "line 2: question q1 has no references" in err
    assert "nfeval: nothing scored: " in err
    answers.write_text(line("q1", cands=[{"text": "garbled quality=1"}]) + "\n")
    assert main(["linkage", "--answers", str(answers), "--mode", "sample",
                 "--no-progress"]) == 1  # every reply unparsed


@pytest.mark.parametrize("method", ["rouge1", "bleu", "pairwise", "pointwise-ref-graded"])
def test_cli_every_method_on_the_example(models_extra, mirror, cache, fake, tmp_path, capsys, method):
    out = tmp_path / "e.csv"
    assert main(["linkage", "--answers", str(EXAMPLE), "--method", method, "--out", str(out),
                 "--no-progress"]) == 0
    assert len(pd.read_csv(out)) == 15
    assert f"metric:{method}|" in capsys.readouterr().out


def test_cli_refppl_loads_the_given_model(mirror, cache, answers, tiny_gpt2_dir, capsys,
                                          tmp_path):
    out = tmp_path / "r.csv"
    assert main(["linkage", "--answers", str(answers), "--method", "refppl", "--model",
                 str(tiny_gpt2_dir), "--dtype", "float32", "--out", str(out),
                 "--no-progress"]) == 0
    assert "metric:refppl|" in capsys.readouterr().out and len(pd.read_csv(out)) == 12


def test_cli_method_names_match_the_library():
    from nfeval.cli import LINKAGE_METHODS

    assert tuple(LINKAGE_METHODS) == SF.METHODS


def test_help_explains_the_format_and_methods():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "nfeval", "linkage", "--help"],
                         capture_output=True, text=True)
    assert out.returncode == 0
    for needle in ('"candidates"', '"references"', "pairwise", "refppl", "bertscore",
                   "--generator", "Exit status", "130", "examples/linkage_answers.jsonl"):
        assert needle in out.stdout, needle


@pytest.mark.slow
def test_example_end_to_end_with_smollm2(models_extra, mirror, tmp_path):
    """The committed example, LINKAGE 0-shot prob, the embedded SmolLM2, offline."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NFEVAL_OFFLINE": "1"}
    out = tmp_path / "e.csv"
    run = subprocess.run([sys.executable, "-m", "nfeval", "linkage", "--answers", str(EXAMPLE),
                          "--model", "smollm2-135m-instruct", "--out", str(out), "--no-cache",
                          "--no-progress"], capture_output=True, text=True, env=env,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert "metric:linkage|variant:prob-0shot|model:smollm2-135m-instruct|" in lines[0]
    assert len(lines) == 4 and lines[3].startswith("pearson with the human grades")
    table = pd.read_csv(out)
    assert len(table) == 15 and table["score"].between(-5, -1).all()
    assert all(abs(sum(json.loads(d).values()) - 1) < 1e-6 for d in table["dist"])


def test_one_reference_without_a_grade_is_named_like_any_bad_line():
    text = "\n".join([line("q1", refs=[{"text": "The only reference."}]),
                      line("q2", refs=[{"text": "The only reference.", "grade": 2}]),
                      line("q3", refs=[{"text": "Best."}, {"text": "Worst."}])])
    lf = SF.parse_linkage_text(text)
    assert [q.qid for q in lf.questions] == ["q2", "q3"]
    assert lf.skipped == ["line 1: question q1: its one reference has no grade, and one "
                          "reference without a grade is no ranking: give it a grade (an "
                          "integer, 3 best), or list two or more references best first"]


def test_cli_mode_is_prob_or_generate_as_in_nfeval_da(models_extra, mirror, cache, answers,
                                                       fake, tmp_path, capsys):
    """One vocabulary: --mode generate works as nfeval da spells it; the older sample is read
    as generate (a note says so), to the same file name, signature and scores."""
    import nfeval.cli as cli

    outs = {}
    for word in ("generate", "sample"):
        outs[word] = tmp_path / f"{word}.csv"
        assert main(["linkage", "--answers", str(answers), "--mode", word, "--out",
                     str(outs[word]), "--no-progress"]) == 0
        captured = capsys.readouterr()
        assert "variant:generate-0shot|" in captured.out
        assert ("--mode sample is read as --mode generate" in captured.err) == (word == "sample")
    pd.testing.assert_frame_equal(pd.read_csv(outs["generate"]), pd.read_csv(outs["sample"]))
    assert cli._default_out(answers, "linkage", (("mode", "generate", "prob"),)).endswith(
        ".linkage.mode-generate.csv")
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["linkage"].format_help()
    assert "prob|generate" in help_text and "sample is an older spelling" in help_text


def test_judge_config_reads_sample_as_generate_and_keeps_its_cache_key():
    from nfeval.linkage.judgments import JudgeConfig

    new, old = JudgeConfig(method="linkage", mode="generate"), JudgeConfig(method="linkage",
                                                                           mode="sample")
    assert new == old and new.mode == "generate"
    assert new.as_dict()["mode"] == "sample"  # the store's keys of earlier runs still match
    assert JudgeConfig(**new.as_dict()) == new
    with pytest.raises(NfevalError, match="use 'prob' or 'generate'"):
        JudgeConfig(method="linkage", mode="greedy")


@pytest.mark.parametrize("slots", ["braced", "release"])
def test_cli_one_prompt_hash_in_signature_output_name_and_sha256sum(
        models_extra, mirror, cache, answers, fake, tmp_path, capsys, slots):
    """The signature's prompt hash, the output name's and the file's sha256 are one hash,
    whichever spelling the prompt's slots use (the judges fill the #name form)."""
    import hashlib

    text = ("Question: {question}\nReferences:\n{ground}\nCandidate: {candidate}\n"
            "Give the candidate's rank as [[k]].\r\n")
    if slots == "release":
        text = text.replace("{", "#").replace("}", "")
    prompt = tmp_path / "mine.txt"
    prompt.write_bytes(text.encode("utf-8"))  # CRLF kept: hashed as the bytes on disk
    sha = hashlib.sha256(prompt.read_bytes()).hexdigest()
    assert main(["linkage", "--answers", str(answers), "--prompt", str(prompt),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"prompt:{sha[:12]}|" in out
    assert (tmp_path / f"mine.linkage.prompt-{sha[:12]}.csv").is_file()
