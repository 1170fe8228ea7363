"""`nfeval pd` / `nfeval da` on files: release format, bad lines, summary line, resume."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from testkit import TINY_TEXTS, release_formula

from nfeval import NfevalError
from nfeval.cli import main
from nfeval.debateqa.scoring import Interrupted, NothingScored, prepare_inputs, score_pd

QUESTIONS = [
    {"id": 1, "question": "Should animal research continue?",
     "partial_answers": [{"point_of_view": t.split(". ")[0], "explanation": t.split(". ", 1)[1]}
                         for t in TINY_TEXTS[:3]]},
    {"id": 2, "question": "Should voting be mandatory?",
     "partial_answers": [{"point_of_view": "Voting should be mandatory",
                          "explanation": "Turnout would rise and represent everyone."}]},
]
ANSWERS = [
    {"generation": "Some say animal research is needed, others call it cruel.", "id": 1},
    {"generation": "Mandatory voting raises turnout.", "id": 2},
]


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    q = tmp_path / "questions.jsonl"
    q.write_text("".join(json.dumps(x) + "\n" for x in QUESTIONS))
    a = tmp_path / "answers.jsonl"
    a.write_text("".join(json.dumps(x) + "\n" for x in ANSWERS))
    return q, a


def test_official_pd_from_the_command_line_equals_the_hand_computation(
        files, tiny_gpt2, tiny_gpt2_dir, capsys, monkeypatch, tmp_path):
    q, a = files
    monkeypatch.chdir(tmp_path)
    assert main(["pd", "--answers", str(a), "--split", str(q), "--model", str(tiny_gpt2_dir),
                 "--variant", "official", "--dtype", "float32"]) == 0
    out = capsys.readouterr().out.strip()
    m = re.fullmatch(r"File: (.+), Average P\.D\. score: ([0-9.e+-]+) \(95% CI [0-9.e+-]+ to "
                     r"[0-9.e+-]+, 2 answers\) \(warning: only 2 answers; [^)]+\) \| (metric:.+)",
                     out)
    assert m and m.group(1) == str(a.resolve())
    sig = m.group(3)
    assert sig.startswith("metric:perspective_diversity|variant:official|model:")
    assert "|dtype:float32|prompt:none|seed:0|n:2|" in sig
    expected = [release_formula(tiny_gpt2, ANSWERS[0]["generation"], TINY_TEXTS[:3]),
                release_formula(tiny_gpt2, ANSWERS[1]["generation"], [TINY_TEXTS[3]])]
    assert float(m.group(2)) == pytest.approx(sum(expected) / 2, rel=1e-5)
    # the name carries the settings that differ from the defaults (another model and variant)
    table = pd.read_csv(tmp_path / f"answers.pd.{tiny_gpt2_dir.name}.variant-official.csv")
    assert list(table["id"]) == [1, 2] and table["pd"].tolist() == pytest.approx(expected, rel=1e-5)


def test_bad_lines_are_listed_and_valid_ones_scored(files, tiny_gpt2_dir, capsys, tmp_path):
    q, a = files
    a.write_text(
        json.dumps(ANSWERS[0]) + "\n"            # line 1: fine
        + "{not json\n"                          # line 2: malformed
        + json.dumps(ANSWERS[0]) + "\n"          # line 3: duplicate id
        + json.dumps({"generation": "  ", "id": 2}) + "\n"   # line 4: empty answer
        + json.dumps({"generation": "x", "id": 77}) + "\n"   # line 5: unknown id
    )
    out_csv = tmp_path / "scores.csv"
    assert main(["pd", "--answers", str(a), "--split", str(q), "--model", str(tiny_gpt2_dir),
                 "--dtype", "float32", "--out", str(out_csv)]) == 0
    err = capsys.readouterr().err
    for needle in ("line 2", "line 3", "line 4", "id 77"):
        assert needle in err, needle
    assert pd.read_csv(out_csv)["id"].tolist() == [1]


@pytest.mark.parametrize("argv,msg", [
    (["--split", "/no/such/questions.jsonl"], "does not exist"),
    (["--model", "no-such-model"], "no-such-model"),
])
def test_clear_errors(models_extra, files, capsys, argv, msg):
    q, a = files
    base = {"--answers": str(a), "--split": str(q), "--model": "smollm2-135m-instruct"}
    base.update(dict(zip(argv[::2], argv[1::2])))
    assert main(["pd", *[x for kv in base.items() for x in kv]]) == 2
    assert msg in capsys.readouterr().err


def test_no_valid_line_is_an_error(files, tiny_gpt2_dir):
    q, a = files
    a.write_text(json.dumps({"generation": "x", "id": 99}) + "\n")
    with pytest.raises(NothingScored, match="no answer can be scored"):
        prepare_inputs(a, str(q))
    assert issubclass(NothingScored, NfevalError) and NothingScored.exit_status == 1


def test_interrupted_run_resumes_without_recomputing(files, tiny_gpt2, monkeypatch):
    import nfeval.debateqa.pd as pdmod

    q, a = files
    inputs = prepare_inputs(a, str(q))
    real = pdmod.pd_score
    calls = []

    def flaky(*args, **kw):
        if len(calls) == 1:
            raise KeyboardInterrupt
        calls.append(kw.get("id"))
        return real(*args, **kw)

    monkeypatch.setattr(pdmod, "pd_score", flaky)
    with pytest.raises(Interrupted, match="interrupted after 1 of 2 answers; the 1 finished "
                                          "answers are cached: rerun the same command"):
        score_pd(inputs, tiny_gpt2, progress=False)
    assert issubclass(Interrupted, KeyboardInterrupt)  # never an ordinary error (exit 2)
    monkeypatch.setattr(pdmod, "pd_score", lambda *a, **kw: calls.append(kw.get("id")) or real(*a, **kw))
    table = score_pd(inputs, tiny_gpt2, progress=False)
    assert calls == [1, 2]  # answer 1 came from the cache on the second run
    fresh = score_pd(inputs, tiny_gpt2, progress=False, use_cache=False)
    assert table["pd"].tolist() == pytest.approx(fresh["pd"].tolist())


def test_changed_answer_text_is_rescored(files, tiny_gpt2):
    q, a = files
    first = score_pd(prepare_inputs(a, str(q)), tiny_gpt2, progress=False)
    a.write_text(json.dumps({"generation": "A different answer.", "id": 1}) + "\n")
    second = score_pd(prepare_inputs(a, str(q)), tiny_gpt2, progress=False)
    assert second["pd"][0] != first["pd"][0]


def test_answers_input_lists_what_it_cannot_score():
    from nfeval.data import load_debateqa
    from nfeval.debateqa.scoring import answers_input, question_file

    path = question_file("sample")
    items = {it.id: it for it in load_debateqa(path)}
    inputs = answers_input({9001: "An answer.", 9002: "  ", 1: "Unknown id."}, items, path,
                           name="sys", skipped=["line 3: bad JSON"])
    assert inputs.answers == {9001: "An answer."}
    assert inputs.skipped == ["line 3: bad JSON", "id 9002: empty answer",
                              "id 1: not in the question file questions.jsonl"]
    assert inputs.split_sha256 and inputs.answers_path.name == "sys"


def test_limit_seed_stdin_and_stdout(files, tiny_gpt2_dir, capsys, monkeypatch, tmp_path):
    import io

    q, a = files
    monkeypatch.setattr("sys.stdin", io.StringIO(a.read_text()))
    assert main(["pd", "--answers", "-", "--split", str(q), "--model", str(tiny_gpt2_dir),
                 "--dtype", "float32", "--limit", "1", "--seed", "7", "--out", "-",
                 "--no-progress"]) == 0
    cap = capsys.readouterr()
    table = pd.read_csv(io.StringIO(cap.out))  # only the CSV on stdout
    assert table["id"].tolist() == [1]
    assert "File: <stdin>, Average P.D. score: " in cap.err and "|seed:7|n:1|" in cap.err
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(a.read_text()))
    assert main(["pd", "--answers", "-", "--split", str(q), "--model", str(tiny_gpt2_dir),
                 "--dtype", "float32", "--no-progress"]) == 0
    # default name for stdin, with the model that differs from the default
    assert len(pd.read_csv(tmp_path / f"stdin.pd.{tiny_gpt2_dir.name}.csv")) == 2


def test_nothing_scored_exits_1(files, tiny_gpt2_dir, capsys):
    q, a = files
    a.write_text("{bad\n" + json.dumps({"generation": "x", "id": 99}) + "\n")
    assert main(["pd", "--answers", str(a), "--split", str(q), "--model",
                 str(tiny_gpt2_dir)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nfeval: nothing scored: ") and "line 1" in err


def test_da_prints_its_signature(files, tiny_gpt2_wide_dir, capsys, tmp_path, mirror):
    q, a = files
    out = tmp_path / "da.csv"
    assert main(["da", "--answers", str(a), "--split", str(q), "--judge", str(tiny_gpt2_wide_dir),
                 "--dtype", "float32", "--out", str(out), "--no-progress"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"File: {a}, Average D.A. score: ")
    assert "| metric:dispute_awareness|variant:prob|" in line and "|prompt:8c5d60ca52e9|" in line
    table = pd.read_csv(out)
    assert len(table) == 2 and (table["cut_tokens"] == 0).all()


def test_da_with_a_window_too_small_for_its_instructions_is_a_clear_error(
        files, tiny_gpt2_dir, capsys, tmp_path, mirror):
    q, a = files
    code = main(["da", "--answers", str(a), "--split", str(q), "--judge", str(tiny_gpt2_dir),
                 "--dtype", "float32", "--out", str(tmp_path / "da.csv"), "--no-progress"])
    assert code != 0
    assert "no room is left for the answer" in capsys.readouterr().err
