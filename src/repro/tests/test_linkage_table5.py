"""LINKAGE Table 5 (WebGLM): per-question hits, tie rules, intervals, paired differences and
the lexical diagnosis (nfeval_repro.linkage.evaluation, .table5, .table5_scores)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval_repro.linkage.evaluation import best_worst_accuracy, best_worst_hits
from nfeval_repro.linkage import webglm_hits as t5
from nfeval_repro.linkage import webglm_scores as t5s
from nfeval.linkage.lexical import bleu
from nfeval.metrics.intervals import proportion_interval

# --------------------------------------------------------------------------- hits and ties

# (grades, scores, miss (best, best+worst), expected (best, best+worst)), worked by hand.
CASES = [
    ([3, 2, 1], [0.9, 0.5, 0.1], (1, 1), (1, 1)),  # right order
    ([3, 2, 1], [0.9, 0.1, 0.5], (1, 0), (1, 0)),  # best right, worst wrong
    ([3, 2, 1], [0.5, 0.9, 0.1], (0, 0), (0, 0)),
    ([3, 2, 1], [0.9, 0.9, 0.1], (0, 0), (1 / 2, 1 / 2)),  # top tie of 2 holding the best
    ([3, 2, 1], [0.1, 0.9, 0.9], (0, 0), (0, 0)),  # top tie without the best
    ([3, 2, 1], [0.9, 0.1, 0.1], (1, 0), (1, 1 / 2)),  # bottom tie of 2 holding the worst
    ([3, 2, 1], [1.0, 1.0, 1.0], (0, 0), (1 / 3, 1 / 6)),  # all tied: chance
    ([3, 3, 2], [0.1, 0.9, 0.5], (1, 0), (1, 0)),  # either grade-3 answer is the best
    ([3, 3, 2], [0.9, 0.5, 0.1], (1, 1), (1, 1)),
    ([3, 3, 2], [1.0, 1.0, 1.0], (0, 0), (2 / 3, 1 / 3)),  # 2 of 6 orders: 3,3,2 and 3,3,2
    ([3, 2, 2], [1.0, 1.0, 1.0], (0, 0), (1 / 3, 1 / 3)),
    ([3, 2, 2], [0.9, 0.1, 0.1], (1, 0), (1, 1)),  # a bottom tie of two worst answers
]


@pytest.mark.parametrize("grades,scores,miss,expected", CASES)
def test_best_worst_hits_hand_checked(grades, scores, miss, expected):
    for ties, want in (("miss", miss), ("expected", expected)):
        row = best_worst_hits({"q": grades}, {"q": scores}, ties=ties).loc["q"]
        assert (row["best"], row["best_worst"]) == pytest.approx(want), ties


def test_best_worst_hits_counts_ties_and_nan():
    hits = best_worst_hits({"a": [3, 2, 1], "b": [3, 2, 1], "c": [3, 2, 1]},
                           {"a": [0.9, 0.9, 0.1], "b": [math.nan, 1.0, 0.0],
                            "c": [1.0, 1.0, 1.0]}, ties="expected")
    assert list(hits.index) == ["a", "b", "c"]
    assert hits.loc["a", "top_tie"] == 2 and hits.loc["a", "bottom_tie"] == 0
    assert hits.loc["c", "top_tie"] == 3 and hits.loc["c", "bottom_tie"] == 3
    assert hits.loc["b", "nan"] == 1 and hits.loc["b", "best"] == 0 == hits.loc["b", "best_worst"]


def test_best_worst_hits_errors():
    with pytest.raises(NfevalError):
        best_worst_hits({"q": [3, 2, 1]}, {"q": [1, 2, 3]}, ties="random")
    with pytest.raises(NfevalError):
        best_worst_hits({"q": [3, 2, 1]}, {"r": [1, 2, 3]})
    with pytest.raises(NfevalError):
        best_worst_hits({"q": [3]}, {"q": [1.0]})


def test_best_worst_accuracy_averages_and_counts():
    grades = {"a": [3, 2, 1], "b": [3, 2, 1], "c": [3, 2, 1]}
    scores = {"a": [3.0, 2.0, 1.0], "b": [math.nan, 1.0, 0.0], "c": [1.0, 1.0, 0.0]}
    got = best_worst_accuracy(grades, scores)
    assert got["acc_best"] == pytest.approx(1 / 3) and got["n_nan"] == 1
    assert got["n_top_ties"] == 1 and got["n_bottom_ties"] == 0
    exp = best_worst_accuracy(grades, scores, ties="expected")
    assert exp["acc_best"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert exp["acc_best_worst"] == pytest.approx((1 + 0 + 0.5) / 3)


# --------------------------------------------------------------------------- rows

def _frame(method: str, per_question: dict[str, list[float]],
           grades: tuple[int, ...] = (3, 2, 1)) -> pd.DataFrame:
    return pd.DataFrame([{"method": method, "qid": q, "doc_id": str(i), "grade": g, "score": s}
                         for q, scores in per_question.items()
                         for i, (g, s) in enumerate(zip(grades, scores))])


RIGHT, WRONG, BEST_ONLY, TOP_TIE = [3, 2, 1], [1, 2, 3], [3, 1, 2], [3, 3, 1]


def _two_methods() -> pd.DataFrame:
    linkage = _frame("linkage", {"q1": RIGHT, "q2": RIGHT, "q3": BEST_ONLY, "q4": WRONG})
    rouge = _frame("rougeL", {"q1": WRONG, "q2": RIGHT, "q3": WRONG, "q4": TOP_TIE})
    return pd.concat([linkage, rouge], ignore_index=True)


def test_accuracy_rows_wilson_and_counts():
    hits = t5.hit_frame(_two_methods())
    rows = t5.accuracy_rows(hits).set_index(["method", "metric"])
    lk = rows.loc[("linkage", "acc_best")]
    want = proportion_interval(3, 4)
    assert (lk["ours"], lk["ci_low"], lk["ci_high"], lk["n_questions"]) == pytest.approx(
        (0.75, want.low, want.high, 4))
    assert lk["interval"] == "wilson" and lk["hits"] == 3
    assert rows.loc[("linkage", "acc_best_worst"), "ours"] == 0.5
    rg = rows.loc[("rougeL", "acc_best")]
    assert rg["ours"] == 0.25 and rg["n_top_ties"] == 1 and rg["n_bottom_ties"] == 0


def test_accuracy_rows_expected_ties_use_the_bootstrap():
    hits = t5.hit_frame(_two_methods(), ties="expected")
    rows = t5.accuracy_rows(hits, ties="expected", seed=0).set_index(["method", "metric"])
    rg = rows.loc[("rougeL", "acc_best")]
    assert rg["ours"] == pytest.approx((0 + 1 + 0 + 0.5) / 4) and rg["interval"] == "bootstrap"
    assert rg["ties"] == "expected" and rg["ci_low"] <= rg["ours"] <= rg["ci_high"]
    again = t5.accuracy_rows(hits, ties="expected", seed=0)
    assert again.equals(t5.accuracy_rows(hits, ties="expected", seed=0))


def test_difference_rows_are_paired_means():
    hits = t5.hit_frame(_two_methods())
    assert t5.comparisons(["rougeL", "linkage", "length"]) == [("linkage", "rougeL"),
                                                              ("linkage", "length")]
    assert t5.comparisons(["rougeL"]) == []
    rows = t5.difference_rows(hits, [("linkage", "rougeL")], seed=0).set_index("metric")
    best = rows.loc["acc_best"]
    # per-question best hits: linkage 1,1,1,0; rougeL 0,1,0,0 -> differences 1,0,1,0
    assert best["method"] == "linkage - rougeL" and best["ours"] == pytest.approx(0.5)
    assert (best["a_mean"], best["b_mean"], best["n_questions"]) == (0.75, 0.25, 4)
    assert best["ci_low"] <= 0.5 <= best["ci_high"]
    same = t5.difference_rows(hits, [("linkage", "linkage")]).set_index("metric")
    assert (same[["ours", "ci_low", "ci_high"]] == 0).all().all()


def test_difference_rows_use_common_questions_only():
    a = _frame("linkage", {"q1": RIGHT, "q2": RIGHT})
    b = _frame("bleu", {"q2": WRONG, "q3": WRONG})
    rows = t5.difference_rows(t5.hit_frame(pd.concat([a, b])), [("linkage", "bleu")])
    assert (rows["n_questions"] == 1).all() and (rows["ours"] == 1).all()


def test_chance_hits_are_one_third_and_one_sixth():
    hits = t5.chance_hits(_frame("x", {"q1": RIGHT, "q2": WRONG}))
    assert hits["best"].tolist() == pytest.approx([1 / 3, 1 / 3])
    assert hits["best_worst"].tolist() == pytest.approx([1 / 6, 1 / 6])


# --------------------------------------------------------------------------- the diagnosis

@pytest.mark.parametrize("hits,size,paper,most,p", [
    ([1] * 10 + [0] * 90, 50, 0.32, 0.2, 0.0),  # 10 hits can never make 16 of 50
    ([1] * 10 + [0] * 90, 50, 0.0, 0.2, 1.0),
    ([1] * 60 + [0] * 40, 50, 1.0, 1.0, None),  # some subset is all hits, rarely
    ([1, 0, 1, 0], 50, 0.5, 0.5, 1.0),  # fewer questions than the size: the one subset
    ([1, 0, 1, 0], 50, 0.75, 0.5, 0.0),
])
def test_subset_reach_is_hypergeometric(hits, size, paper, most, p):
    got = t5.subset_reach(hits, size, paper)
    assert got["most"] == pytest.approx(most)
    assert got["low"] <= sum(hits) / len(hits) <= got["high"]
    if p is not None:
        assert got["p_at_least"] == pytest.approx(p)
    else:
        assert 0 < got["p_at_least"] < 1e-6


def test_subset_reach_two_of_four():
    # 2 hits among 4 questions, subsets of 2: P(both hits) = 1/C(4,2) = 1/6
    assert t5.subset_reach([1, 1, 0, 0], 2, 1.0)["p_at_least"] == pytest.approx(1 / 6)
    assert math.isnan(t5.subset_reach([1, 0], 1)["p_at_least"])
    with pytest.raises(NfevalError):
        t5.subset_reach([0.5, 1.0], 1)


def test_bleu_score_none_is_the_release_call():
    cand = "the cat sat on the mat today"
    ref = "the cat sat on a mat"
    assert t5.bleu_score(cand, ref) == pytest.approx(bleu(cand, ref))
    tiny = t5.bleu_score("a b c d", "d c b a")  # no 2-gram in common: method0 is ~0
    assert tiny < 1e-30 and t5.bleu_score("a b c d", "d c b a", "method1") > 1e-3
    assert t5.bleu_score("", ref) == 0.0
    with pytest.raises(NfevalError):
        t5.bleu_score(cand, ref, "smooth")


def _question(qid: str, texts: tuple[str, str, str], grades=(3, 2, 1),
              models=("gpt", "mistral", "llama")) -> GradedQuestion:
    answers = [GradedAnswer(str(i), t, g, g, m) for i, (t, g, m) in enumerate(zip(texts, grades,
                                                                                 models))]
    refs = {3: "the cat sat on the mat all day long", 2: "a cat sat on a mat",
            1: "cats like mats", 0: "dogs bark at night"}
    return GradedQuestion(qid, f"question {qid}?", answers, refs)


QUESTIONS = [
    _question("0", ("the cat sat on the mat all day", "a cat sat on the mat", "dogs bark")),
    _question("1", ("dogs bark at the cat", "the cat sat on the mat all day long and more",
                    "cats like mats"), models=("mistral", "gpt", "llama")),
    _question("2", ("cats like mats a lot", "cats like mats", "cats"), grades=(3, 2, 2)),
]


def test_lexical_variants_grounds_and_pools():
    v = t5.lexical_variants(QUESTIONS, smoothing=("none", "method1"))
    assert set(v["metric"]) == {"length", "rougeL", "bleu"}
    assert list(dict.fromkeys(v["ground"])) == ["", "ground3", "ground2", "ground1", "ground0",
                                                 "mean", "max"]
    n_answers = 9
    assert len(v[v["metric"] == "length"]) == n_answers
    rl = v[(v["metric"] == "rougeL") & (v["variant"] == "rouge-score")]
    wide = rl.pivot_table(index=["qid", "doc_id"], columns="ground", values="score")
    singles = wide[["ground0", "ground1", "ground2", "ground3"]]
    assert np.allclose(wide["mean"], singles.mean(axis=1))
    assert np.allclose(wide["max"], singles.max(axis=1))
    only3 = t5.lexical_variants(QUESTIONS, grounds=(3,), rouge=("release",), smoothing=("none",))
    assert set(only3["ground"]) == {"", "ground3"} and len(only3) == 3 * n_answers
    with pytest.raises(NfevalError):
        t5.lexical_variants(QUESTIONS, grounds=("median",))


def test_question_subsets():
    subsets = t5.question_subsets(QUESTIONS, size=2)
    assert subsets["all"] == ["0", "1", "2"]
    assert subsets["first 2"] == ["0", "1"] and subsets["last 2"] == ["1", "2"]
    assert subsets["three grades"] == ["0", "1"]
    assert subsets["best by gpt"] == ["0", "2"] and subsets["best by mistral"] == ["1"]
    assert subsets["best by llama"] == []


def test_diagnostic_table_rows():
    v = t5.lexical_variants(QUESTIONS, grounds=(3, "max"), smoothing=("none",))
    paper = {("rougeL", "acc_best"): 0.5, ("bleu", "acc_best_worst"): 0.25}
    d = t5.diagnostic_table(v, t5.question_subsets(QUESTIONS, size=2), paper, size=2)
    chance = d[(d["metric"] == "chance") & (d["subset"] == "three grades")].set_index("acc")
    assert chance.loc["acc_best", "ours"] == pytest.approx(1 / 3)
    assert chance.loc["acc_best_worst", "ours"] == pytest.approx(1 / 6)
    length = d[(d["metric"] == "length") & (d["subset"] == "all")].set_index("acc")
    # longest answer: q0 grade 3 (best, worst right), q1 grade 2 (miss), q2 grade 3 (3,2,2: hit)
    assert length.loc["acc_best", "ours"] == pytest.approx(2 / 3)
    assert length.loc["acc_best", "length_tau"] == pytest.approx(1.0)
    row = d[(d["metric"] == "rougeL") & (d["variant"] == "rouge-score") & (d["ground"] == "ground3")
            & (d["subset"] == "all") & (d["acc"] == "acc_best")].iloc[0]
    assert row["gap"] == pytest.approx(row["ours"] - 0.5) and row["random_size"] == 2
    assert 0 <= row["p_random_at_least_paper"] <= 1
    empty = d[(d["subset"] == "best by llama")]
    assert (empty["n_questions"] == 0).all() and empty["ours"].isna().all()
    assert d[d["subset"] != "all"]["random_most"].isna().all()


def test_webglm_sample_limits_in_file_order():
    s = t5s.webglm_sample(QUESTIONS, limit=2)
    assert [x.qid for x in s.judged] == ["0", "1"] and len(s.splits) == 3
    assert s.judged[0].reference_grades == (3, 2, 1, 0) and s.n_not_judged == 1
    assert len(t5s.webglm_sample(QUESTIONS).judged) == 3


def test_length_frame_scores_words():
    f = t5s.length_frame(t5s.webglm_sample(QUESTIONS).splits)
    assert f.loc[(f["qid"] == "0") & (f["doc_id"] == "2"), "score"].item() == 2.0
    assert set(f["method"]) == {"length"} and set(f["dataset"]) == {"webglm"}


def _judged_frame() -> pd.DataFrame:
    frame = _two_methods().assign(dataset="webglm", our_judge="", unparsed=0)
    frame.loc[frame["method"] == "linkage", ["our_judge", "unparsed"]] = ["judge-x", 1]
    return frame


def test_table_rows_adds_tie_variants_only_where_ties_occur():
    rows, hits = t5.table_rows(_judged_frame(), seed=0)
    assert set(hits) == {"miss", "expected"}
    main = rows[~rows["method"].str.contains(" - ")]
    assert set(main.loc[main["ties"] == "expected", "method"]) == {"rougeL"}  # only rougeL ties
    diffs = rows[rows["method"].str.contains(" - ")]
    assert set(zip(diffs["method"], diffs["ties"])) == {("linkage - rougeL", "miss"),
                                                        ("linkage - rougeL", "expected")}
    lk = rows[(rows["method"] == "linkage") & (rows["metric"] == "acc_best")].iloc[0]
    assert lk["our_judge"] == "judge-x" and lk["n_unparsed"] == 12 and lk["dataset"] == "webglm"
    assert diffs["our_judge"].eq("judge-x").all()


def test_paper_columns_joins_main_rows_only():
    rows, _ = t5.table_rows(_judged_frame(), seed=0)
    paper = pd.DataFrame({"dataset": "webglm", "method": ["rougeL", "linkage"],
                          "judge": [math.nan, "mistral"], "metric": "acc_best",
                          "paper": [0.42, 0.76]})
    out = t5.paper_columns(rows, paper)
    assert len(out) == len(rows)
    lk = out[(out["method"] == "linkage") & (out["metric"] == "acc_best")].iloc[0]
    assert lk["judge"] == "mistral" and lk["gap"] == pytest.approx(0.75 - 0.76)
    assert lk["paper_in_ci"] == "yes"
    rg = out[(out["method"] == "rougeL") & (out["metric"] == "acc_best")]
    assert rg.set_index("ties")["paper"].isna().tolist() == [False, True]
    assert out.loc[out["method"].str.contains(" - "), "paper"].isna().all()
    with pytest.raises(NfevalError):
        t5.paper_columns(rows, paper.assign(method="bleu"))


def test_automatic_frame_has_both_rouge_rows():
    sample = t5s.webglm_sample(QUESTIONS)
    f = t5s.automatic_frame(QUESTIONS, sample.splits, methods=("rougeL-release", "rougeL", "bleu"))
    assert list(dict.fromkeys(f["method"])) == ["rougeL-release", "rougeL", "bleu"]
    assert len(f) == 9 * 3 and set(f["sample"]) == {"all"}
    from nfeval.linkage.lexical import rouge_f1, rouge_release
    a, ref = QUESTIONS[0].answers[0].text, QUESTIONS[0].references[3]
    first = f[(f["qid"] == "0") & (f["doc_id"] == "0")].set_index("method")["score"]
    assert first["rougeL"] == pytest.approx(rouge_f1(a, ref)["rougeL"])
    assert first["rougeL-release"] == pytest.approx(rouge_release(a, ref)["rougeL"])
    sigs = t5s.automatic_signatures(("rougeL", "rougeL-release"), seed=0, n=3)
    assert [s.variant for s in sigs] == ["rouge-score-f1", "release-f1"]
    with pytest.raises(NfevalError):
        t5s.automatic_frame(QUESTIONS, sample.splits, methods=("rouge1",))


def test_paper_columns_prints_the_paper_beside_both_variants():
    frame = pd.concat([_judged_frame(), _frame("rougeL-release", {"q1": RIGHT}).assign(
        dataset="webglm", our_judge="", unparsed=0)], ignore_index=True)
    rows, _ = t5.table_rows(frame)
    paper = pd.DataFrame({"dataset": "webglm", "method": ["rougeL"], "judge": [math.nan],
                          "metric": "acc_best", "paper": [0.42]})
    out = t5.paper_columns(rows, paper)
    got = out[(out["metric"] == "acc_best") & (out["ties"] == "miss")].set_index("method")["paper"]
    assert got["rougeL"] == got["rougeL-release"] == 0.42 and math.isnan(got["linkage"])
