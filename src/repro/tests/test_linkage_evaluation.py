"""LINKAGE table helpers: judge samples, judge correlation rows, paper rows, WebGLM accuracy, rescaling."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval_repro.linkage.evaluation import (
    best_worst_accuracy,
    judge_correlations,
    method_scale,
    rescale_0_10,
    webglm_split,
    with_paper_rows,
)
from nfeval.linkage.judges import JudgeConfig, Judgment, QuestionScores
from nfeval.linkage.references import ReferenceSplit


def _split(grades, qid="q"):
    cands = tuple(GradedAnswer(f"d{i}", f"text {i}", g, g) for i, g in enumerate(grades))
    return ReferenceSplit(qid, "3210", 0, (), cands)


def _scores(qid, values, parsed=None):
    parsed = parsed or [True] * len(values)
    js = [Judgment(i, v, p) for i, (v, p) in enumerate(zip(values, parsed))]
    return QuestionScores(qid, JudgeConfig(), list(values), js)


def test_judge_correlations_rows_and_counts():
    s1, s2 = _split([3, 2, 1, 0], "a"), _split([3, 2, 1], "b")
    r1 = _scores("a", [4.0, 3.0, 2.0, 1.0])  # perfect
    r2 = _scores("b", [1.0, 1.0, 1.0], [True, False, True])  # constant: skipped
    t = judge_correlations([r1, r2], [s1, s2])
    assert list(t["coefficient"]) == ["kendall", "spearman", "pearson"]
    assert t["ours"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert (t["n_questions"] == 1).all() and (t["n_skipped_undefined"] == 1).all()
    assert (t["n_unparsed"] == 1).all() and (t["n_outputs"] == 7).all()


def test_with_paper_rows_repeats_ours_for_each_paper_judge():
    ours = pd.DataFrame({"method": ["m", "x"], "coefficient": ["k", "k"], "ours": [0.1, 0.2]})
    paper = pd.DataFrame({"method": ["m", "m"], "judge": ["mistral", "chatgpt"],
                          "coefficient": ["k", "k"], "paper": [0.3, 0.4]})
    out = with_paper_rows(ours, paper, ["method", "coefficient"])
    assert len(out) == 3
    assert out[out.method == "m"]["ours"].tolist() == [0.1, 0.1]
    assert sorted(out[out.method == "m"]["judge"]) == ["chatgpt", "mistral"]
    assert math.isnan(out[out.method == "x"]["paper"].iloc[0])
    with pytest.raises(NfevalError):
        with_paper_rows(ours[ours.method == "x"], paper, ["method", "coefficient"])
    kept = with_paper_rows(ours[ours.method == "x"], paper, ["method", "coefficient"],
                           require_all=False)
    assert len(kept) == 3 and kept[kept.method == "m"]["ours"].isna().all()


def test_webglm_split_orders_references_best_first():
    q = GradedQuestion("0", "why?", [GradedAnswer("0", "a", 3, 3), GradedAnswer("1", "b", 1, 1)],
                       {0: "r0", 1: "r1", 2: "r2", 3: "r3", 4: "r4"})
    s = webglm_split(q)
    assert [r.text for r in s.references] == ["r3", "r2", "r1", "r0"]
    assert s.reference_grades == (3, 2, 1, 0) and len(s.candidates) == 2
    with pytest.raises(NfevalError):
        webglm_split(GradedQuestion("1", "?", [], {3: "x"}))


@pytest.mark.parametrize("scores,best,both", [
    ([0.9, 0.5, 0.1], 1, 1),  # right order
    ([0.9, 0.1, 0.5], 1, 0),  # best right, worst wrong
    ([0.5, 0.9, 0.1], 0, 0),
    ([0.9, 0.9, 0.1], 0, 0),  # tie at the top is a miss
    ([0.9, 0.1, 0.1], 1, 0),  # tie at the bottom: best only
    ([1.0, 1.0, 1.0], 0, 0),
])
def test_best_worst_accuracy_hand_checked(scores, best, both):
    got = best_worst_accuracy({"q": [3, 2, 1]}, {"q": scores})
    assert (got["acc_best"], got["acc_best_worst"], got["n"]) == (best, both, 1)


def test_best_worst_accuracy_averages_and_counts_nan():
    got = best_worst_accuracy({"a": [3, 2, 1], "b": [3, 2, 1]},
                              {"a": [3.0, 2.0, 1.0], "b": [math.nan, 1.0, 0.0]})
    assert got["acc_best"] == 0.5 and got["n_nan"] == 1


@pytest.mark.parametrize("method,m,value,expected", [
    ("linkage-0shot", 8, -1.0, 10.0),
    ("linkage-fewshot", 8, -9.0, 0.0),
    ("linkage", 4, -3.0, 5.0),
    ("pointwise-ref", 0, 7.0, 7.0),
    ("pairwise", 0, 0.25, 2.5),
    ("bleu", 0, 0.5, 5.0),
    ("bertscore-cls", 0, 0.0, 5.0),
])
def test_rescale_0_10(method, m, value, expected):
    assert rescale_0_10(value, *method_scale(method, m)) == pytest.approx(expected)


def test_method_scale_errors():
    with pytest.raises(NfevalError):
        method_scale("linkage", 0)
    with pytest.raises(NfevalError):
        method_scale("unknown")
    with pytest.raises(NfevalError):
        rescale_0_10(1.0, 2.0, 2.0)


def _question(qid, grades):
    return GradedQuestion(qid, f"question {qid}?",
                          [GradedAnswer(f"{qid}-{i}", f"answer {qid} {i}", g, g)
                           for i, g in enumerate(grades)])


def test_judge_sample_first_judgeable_questions_capped():
    from nfeval_repro.linkage.evaluation import judge_sample

    qs = [_question("0", [3, 2, 1, 0, 0]),  # candidates all grade 0: not judgeable
          _question("1", [3, 2, 1, 0, 3, 2, 1, 0, 0, 0]),
          _question("2", [3, 2, 1, 0, 3, 0]),
          _question("3", [3, 2, 1, 0, 2, 1])]
    js = judge_sample(qs, "3210", seed=0, limit=2, max_candidates=3)
    assert [s.qid for s in js.judged] == ["1", "2"]
    assert len(js.splits) == 4 and js.n_unjudgeable == 1 and js.n_not_judged == 2
    assert len(js.judged[0].candidates) == 3 and len(js.judged[1].candidates) == 2
    assert len(judge_sample(qs, "3210", limit=0).judged) == 3


@pytest.mark.parametrize("value,method,expected", [
    ("drop", "pairwise", "drop"), ("release", "linkage-0shot", "release"),
    ("release", "pointwise-ref", "drop"), ("2", "linkage", 2.0), (5.0, "pointwise", 5.0),
])
def test_unparsed_policy(value, method, expected):
    from nfeval_repro.linkage.evaluation import unparsed_policy

    assert unparsed_policy(value, method) == expected


def test_unparsed_policy_rejects_text():
    from nfeval_repro.linkage.evaluation import unparsed_policy

    with pytest.raises(NfevalError):
        unparsed_policy("skip", "linkage")
