"""The Python API on in-memory data, the run summary JSON, ``nfeval compare`` and
``--prompt``: what a user calls instead of writing files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import stubs
from testkit import needs

import nfeval
from nfeval import NfevalError
from nfeval.cli import main
from nfeval.compare import compare_files

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"  # the checkout's
EXAMPLE = EXAMPLES / "linkage_answers.jsonl"
QUESTIONS = ["Why is the sky blue?", "Why do onions make you cry?", "What is rain?"]
CANDIDATES = [["Air scatters blue light most.", "It mirrors the sea."],
              ["They release an irritant gas when cut.", "Onions are sad."],
              ["Water falling from clouds.", "A kind of wind."]]
REFERENCES = [["Air molecules scatter blue sunlight most.", "The sea.", "No idea."],
              ["Cutting releases a gas that irritates the eyes.", "Gas.", "Sadness."],
              ["Rain is water falling from clouds.", "Weather.", "Wind."]]
GRADES = [[2, 0], [2, 0], [1, 0]]
OWN_PROMPT = "Question: #question\nReferences:\n#ground\nAnswer: #candidate\nScore: [["


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_linkage_score_on_lists_equals_the_file_command(cache):
    res = nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, grades=GRADES,
                               method="rougeL", progress=False)
    lines = [json.dumps({"id": f"q{i + 1}", "question": q,
                         "candidates": [{"text": t, "grade": g} for t, g in zip(c, gr)],
                         "references": [{"text": t} for t in r]})
             for i, (q, c, r, gr) in enumerate(zip(QUESTIONS, CANDIDATES, REFERENCES, GRADES))]
    (cache / "in.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["linkage", "--answers", "in.jsonl", "--method", "rougeL", "--no-progress",
                 "--summary", "s.json"]) == 0
    from_file = pd.read_csv(cache / "in.rougeL.csv")
    frame = res.to_frame()
    assert list(frame["score"]) == list(from_file["score"])  # full precision in the CSV
    summary = json.loads((cache / "s.json").read_text())
    assert summary["score"]["mean"] == pytest.approx(res.score.estimate, abs=0)
    assert summary["score"]["n"] == 3 and summary["score"]["unit"] == "questions"
    assert res.score.low <= res.score.estimate <= res.score.high
    assert summary["per_item"] == "in.rougeL.csv"
    assert [c["coefficient"] for c in summary["correlations_with_grades"]] == [
        "kendall", "spearman", "pearson"]
    # the mean's interval resamples whole questions: recompute it by hand
    per_q = frame.groupby("qid", sort=False)["score"].agg(["sum", "count"])
    assert res.score.estimate == pytest.approx(per_q["sum"].sum() / per_q["count"].sum())


def test_bad_input_names_every_entry_before_a_model_loads(cache):
    with pytest.raises(NfevalError, match=r"candidates has 2 entries for 3 questions"):
        nfeval.linkage.score(QUESTIONS, CANDIDATES[:2], REFERENCES)
    bad = [list(c) for c in CANDIDATES]
    bad[1] = ["ok", ""]
    with pytest.raises(NfevalError, match=r"questions\[1\]") as err:
        nfeval.linkage.score(QUESTIONS, bad, REFERENCES, method="linkage",
                             model="no-such-model-is-loaded")
    assert "no-such-model" not in str(err.value)  # the input was checked first
    with pytest.raises(NfevalError, match=r"cannot be scored with linkage"):
        nfeval.linkage.score(QUESTIONS, CANDIDATES, None, method="linkage",
                             model="no-such-model-is-loaded")
    with pytest.raises(NfevalError, match="uses no language model"):
        nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, method="bleu", model="x")


def test_an_own_judge_prompt_is_used_checked_and_signed(cache):
    judge = stubs.LengthJudge("len")
    res = nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, grades=GRADES,
                               method="pointwise-ref", model=judge, prompt=OWN_PROMPT,
                               progress=False, use_cache=False)
    longer = nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, method="pointwise-ref",
                                  model=judge, prompt=OWN_PROMPT + " " * 200,
                                  progress=False, use_cache=False)
    assert res.n_scored == 6
    assert res.signature.prompt_sha256 != longer.signature.prompt_sha256
    assert not res.to_frame()["score"].equals(longer.to_frame()["score"])
    with pytest.raises(NfevalError, match=r"lacks the slot\(s\) \{ground\}"):
        nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, method="linkage", model=judge,
                             prompt="Q: #question A: #candidate")
    with pytest.raises(NfevalError, match=r"\{answer_a\}, \{answer_b\}"):
        nfeval.linkage.score(QUESTIONS, CANDIDATES, REFERENCES, method="pairwise",
                             model=judge, prompt=OWN_PROMPT)
    (cache / "p.txt").write_text("Q: #question only")
    assert main(["linkage", "--answers", str(EXAMPLE), "--method", "pointwise",
                 "--prompt", "p.txt"]) == 2
    assert main(["linkage", "--answers", str(EXAMPLE), "--method", "rougeL",
                 "--prompt", "p.txt"]) == 2
    (cache / "da.txt").write_text("Is it debated? {question}")
    assert main(["da", "--answers", str(EXAMPLES / "debateqa_answers.jsonl"),
                 "--split", "sample", "--prompt", "da.txt"]) == 2


def test_pd_on_lists_matches_the_kernel(tiny_gpt2, cache):
    from nfeval.debateqa.pd import pd_score

    answers = ["Some say yes, others no.", "It is obvious."]
    povs = [["Yes. It helps.", "No. It harms."], ["Maybe. It depends."]]
    res = nfeval.debateqa.perspective_diversity(answers, partial_answers=povs,
                                                model=tiny_gpt2, progress=False)
    assert res.lower_is_better and res.item_unit == "answers" and res.score.n == 2
    for value, a, p in zip(res.to_frame()["pd"], answers, povs):
        assert value == pytest.approx(pd_score(tiny_gpt2, a, p).score, rel=1e-6)
    assert res.score.low <= res.score.estimate <= res.score.high
    assert "cannot be trusted" in repr(res) and res.summary()["score"]["warning"]
    with pytest.raises(NfevalError, match="2 entries for 3 answers"):
        nfeval.debateqa.perspective_diversity(answers + ["x"], partial_answers=povs,
                                              model=tiny_gpt2)
    with pytest.raises(NfevalError, match="empty answer"):
        nfeval.debateqa.perspective_diversity(["ok", " "], partial_answers=povs,
                                              model=tiny_gpt2)


def test_compare_pairs_items_and_refuses_other_items(cache, capsys):
    for m in ("rougeL", "bleu"):
        assert main(["linkage", "--answers", str(EXAMPLE), "--method", m,
                     "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", "linkage_answers.rougeL.csv", "linkage_answers.bleu.csv",
                 "--summary", "c.json"]) == 0
    out = capsys.readouterr().out
    assert "kendall with the human grades" in out and "A - B" in out
    c = json.loads((cache / "c.json").read_text())
    # the paired difference is the mean over questions of the per-question difference
    from nfeval.metrics.correlation import per_question

    frames = [pd.read_csv(cache / f"linkage_answers.{m}.csv").assign(method=m)
              for m in ("rougeL", "bleu")]
    pq = per_question(pd.concat(frames), by=["method"], coefficients=["kendall"])
    wide = pq.pivot(index="qid", columns="method", values="value").dropna()
    assert c["difference"]["a_minus_b"] == pytest.approx((wide["rougeL"] - wide["bleu"]).mean())
    assert c["difference"]["n"] == len(wide) and c["difference"]["warning"]
    # other items: refused, naming them
    t = pd.read_csv(cache / "linkage_answers.bleu.csv")
    t.iloc[1:].to_csv(cache / "fewer.csv", index=False)
    with pytest.raises(NfevalError, match=r"1 only in A \(\('bread', 'c1'\)\)"):
        compare_files(cache / "linkage_answers.rougeL.csv", cache / "fewer.csv")
    # different methods without grades: refused; the same method: scores compared
    t.assign(grade=None).to_csv(cache / "nogr_b.csv", index=False)
    pd.read_csv(cache / "linkage_answers.rougeL.csv").assign(grade=None).to_csv(
        cache / "nogr_a.csv", index=False)
    with pytest.raises(NfevalError, match="different scales"):
        compare_files(cache / "nogr_a.csv", cache / "nogr_b.csv")
    same = compare_files(cache / "nogr_b.csv", cache / "nogr_b.csv")
    assert same.difference.estimate == 0 and "cannot tell" in same.reading()


def test_compare_debateqa_files_by_id(cache):
    pd.DataFrame({"id": [1, 2, 3, 4], "pd": [10.0, 12.0, 9.0, 11.0]}).to_csv("a.csv",
                                                                             index=False)
    pd.DataFrame({"id": [4, 3, 2, 1], "pd": [12.0, 10.0, 13.0, 11.0]}).to_csv("b.csv",
                                                                             index=False)
    c = compare_files("a.csv", "b.csv")
    assert c.difference.estimate == pytest.approx(-1.0) and c.lower_is_better
    assert c.a_mean == pytest.approx(10.5) and c.b_mean == pytest.approx(11.5)
    pd.DataFrame({"id": [1, 2], "da": [1.0, 0.0]}).to_csv("d.csv", index=False)
    with pytest.raises(NfevalError, match="a pd file and B a da file"):
        compare_files("a.csv", "d.csv")


def test_a_first_hub_download_says_how_large_it_is(monkeypatch, capsys):
    from types import SimpleNamespace

    huggingface_hub = needs("huggingface_hub")

    from nfeval.models import registry

    files = [SimpleNamespace(rfilename="model-00001.safetensors", size=2_000_000_000),
             SimpleNamespace(rfilename="model-00002.safetensors", size=1_500_000_000),
             SimpleNamespace(rfilename="pytorch_model.bin", size=9_000_000_000),
             SimpleNamespace(rfilename="config.json", size=700)]

    class Api:
        def model_info(self, hub_id, files_metadata=False):
            assert files_metadata
            return SimpleNamespace(siblings=files)

    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    assert registry.hub_download_size("org/model") == 3_500_000_000
    registry.announce_download("org/model")
    err = capsys.readouterr().err
    assert "downloading it from the hub (about 3.5 GB)" in err
