"""D.A.'s Table 3 intervals and comparisons in the reproduction (nfeval_repro.debateqa.da_labels):
their statistics equal the library's ``da_metrics`` (tests/test_da.py tests D.A. itself)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nfeval import NfevalError
from nfeval.debateqa.da import DAResult, da_metrics


def _toy_frame(methods, n_questions=10, seed=0, nan_share=0.0):
    """Four labelled answers per question; each method's scores drawn at random."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        for a in range(4):
            y = int(rng.integers(0, 2))
            for m in methods:
                s = float(rng.random())
                if rng.random() < nan_share:
                    s = math.nan
                rows.append({"method": m, "qid": f"q{q}", "key": f"q{q}:{a}", "label": y,
                             "score": s})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("labels,scores", [
    ([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1]),           # test_da.py's hand-checked case
    ([1, 1, 0, 0, 1], [1.0, math.nan, 0.0, 1.0, 0.0]),
    ([1, 0, 1, 0, 1, 0], [0.5, 0.5, 0.5, 0.2, 0.7, 0.7]),  # ties at the threshold
    ([1, 1, 1, 0], [1.0, 1.0, 1.0, 1.0]),           # one predicted class: MCC 0
    ([0, 0, 0, 0], [0.1, 0.2, 0.9, 0.3]),           # one label: AUROC NaN, F1 0
])
def test_binary_statistic_equals_da_metrics(labels, scores):
    from nfeval_repro.debateqa.da_labels import DA_STATISTICS, binary_statistic

    want = da_metrics(labels, scores)
    for name in DA_STATISTICS:
        got = binary_statistic(name, labels, scores)
        assert (math.isnan(got) and math.isnan(want[name])) or got == pytest.approx(want[name])


@pytest.mark.parametrize("other", [None, 2])
def test_the_vectorized_bootstrap_statistics_equal_the_loop_to_the_last_bit(other):
    """da_rows and da_paired_rows compute every resample at once, each answer weighted by how
    often its question is drawn; every value must be the loop's exactly (ties at 0.5, one
    class left, unscored answers, questions without answers)."""
    from nfeval_repro.debateqa.da_labels import (DA_STATISTICS, LabelledQuestion, _statistic,
                                                    _vectorized)

    rng = np.random.default_rng(1)
    for trial in range(40):
        q = int(rng.integers(1, 25))
        units = []
        for i in range(q):
            k = int(rng.integers(1, 6))
            scores = rng.choice([0.0, 0.25, 0.5, 1.0, float(rng.random())], size=(k, 3))
            scores[rng.random((k, 3)) < 0.2] = np.nan
            units.append(LabelledQuestion(i, rng.integers(0, 2, size=k), scores))
        draws = rng.integers(0, q, size=(40, q))
        for name in DA_STATISTICS:
            stat = _statistic(name, 0, other)
            loop = np.array([stat([units[i] for i in row]) for row in draws])
            vec = _vectorized(units, name, 0, other)(draws)
            assert np.array_equal(loop, vec, equal_nan=True), (trial, name)


def test_binary_statistic_rejects():
    from nfeval_repro.debateqa.da_labels import binary_statistic

    with pytest.raises(NfevalError, match="statistic"):
        binary_statistic("precision", [1, 0], [1.0, 0.0])
    with pytest.raises(NfevalError, match="labels"):
        binary_statistic("accuracy", [1, 0], [1.0])
    assert math.isnan(binary_statistic("accuracy", [1], [math.nan]))


def test_question_units_group_answers_by_question():
    import pandas as pd

    from nfeval_repro.debateqa.da_labels import question_units

    frame = pd.DataFrame({
        "judge": ["a", "a", "a", "b", "b"], "method": ["p"] * 5,
        "qid": [1, 1, 2, 1, 2], "key": ["x", "y", "z", "x", "z"],
        "label": [1, 0, 1, 1, 1], "score": [0.9, 0.1, 0.8, 0.7, 0.6]})
    units, keys = question_units(frame, by=["judge", "method"])
    assert keys == [("a", "p"), ("b", "p")]
    assert [u.qid for u in units] == [1, 2]
    assert units[0].labels.tolist() == [1, 0]
    assert units[0].scores[:, 0].tolist() == [0.9, 0.1]
    assert units[0].scores[0, 1] == 0.7 and math.isnan(units[0].scores[1, 1])  # b skipped y
    frame.loc[3, "label"] = 0
    with pytest.raises(NfevalError, match="more than one label"):
        question_units(frame, by=["judge", "method"])


def test_da_rows_estimates_equal_da_metrics_and_are_seeded():
    from nfeval_repro.debateqa.da_labels import da_rows

    frame = _toy_frame(["p", "q"], n_questions=12, nan_share=0.1)
    rows = da_rows(frame, seed=3)
    assert len(rows) == 8 and list(rows.columns[:6]) == ["method", "statistic", "ours", "ci_low",
                                                        "ci_high", "n_questions"]
    for m, part in frame.groupby("method"):
        want = da_metrics(part["label"].tolist(), part["score"].tolist())
        got = rows[rows["method"] == m].set_index("statistic")
        for name in ("accuracy", "f1", "auroc", "mcc"):
            assert got.loc[name, "ours"] == pytest.approx(want[name])
            assert got.loc[name, "ci_low"] <= got.loc[name, "ours"] <= got.loc[name, "ci_high"]
            assert got.loc[name, "ci_low"] < got.loc[name, "ci_high"]
        assert (got["n_questions"] == 12).all()
        assert (got["n_answers"] == want["n_scored"]).all()
        assert (got["n_unparsed"] == want["n_unparsed"]).all()
    assert rows.equals(da_rows(frame, seed=3))          # deterministic
    assert not rows.equals(da_rows(frame, seed=4))      # the seed matters


def test_cluster_interval_is_wider_than_answers_are_independent():
    # four identical answers per question: the cluster bootstrap resamples 10 units,
    # not 40 independent answers, so its interval is about twice as wide as Wilson's
    from nfeval_repro.debateqa.da_labels import da_rows
    from nfeval.metrics.intervals import proportion_interval

    frame = _toy_frame(["p"], n_questions=10)
    first = frame.groupby("qid")[["label", "score"]].transform("first")
    frame[["label", "score"]] = first
    row = da_rows(frame, statistics=["accuracy"]).iloc[0]
    hits = round(row["ours"] * 40)
    wilson = proportion_interval(hits, 40, unit="answers")
    assert row["ci_high"] - row["ci_low"] > 1.5 * (wilson.high - wilson.low)


def test_paired_difference_of_identical_scores_is_zero():
    from nfeval_repro.debateqa.da_labels import da_paired_rows

    frame = _toy_frame(["p"], n_questions=8)
    frame = _concat([frame, frame.assign(method="same")])
    rows = da_paired_rows(frame, [("same", "p")])
    assert rows["method"].tolist() == ["same - p"] * 4
    assert (rows["ours"] == 0).all()
    assert (rows["ci_low"] == 0).all() and (rows["ci_high"] == 0).all()
    assert (rows["n_questions"] == 8).all() and (rows["n_answers"] == 32).all()


def test_paired_difference_estimate_and_answers_scored_by_both():
    from nfeval_repro.debateqa.da_labels import binary_statistic, da_paired_rows

    frame = _toy_frame(["p", "q"], n_questions=12, nan_share=0.15, seed=1)
    rows = da_paired_rows(frame, [("q", "p")], seed=0).set_index("statistic")
    wide = frame.pivot(index="key", columns="method", values="score")
    labels = frame.groupby("key")["label"].first()
    both = wide.dropna().index
    for name in ("accuracy", "f1", "auroc", "mcc"):
        a = binary_statistic(name, labels[both], wide.loc[both, "q"])
        b = binary_statistic(name, labels[both], wide.loc[both, "p"])
        assert rows.loc[name, "ours"] == pytest.approx(a - b)
        assert rows.loc[name, "a_value"] == pytest.approx(a)
        assert rows.loc[name, "ci_low"] <= rows.loc[name, "ours"] <= rows.loc[name, "ci_high"]
        assert rows.loc[name, "n_answers"] == len(both)
    with pytest.raises(NfevalError, match="no scores"):
        da_paired_rows(frame, [("q", "nope")])


def test_paired_rows_label_only_the_columns_that_differ():
    from nfeval_repro.debateqa.da_labels import da_paired_rows

    frame = _toy_frame(["p", "r"], n_questions=5)
    frame["judge"] = "big"
    frame = _concat([frame, frame[frame["method"] == "p"].assign(judge="small")])
    rows = da_paired_rows(frame, [(("big", "p"), ("small", "p")), (("big", "p"), ("big", "r"))],
                          by=["judge", "method"], statistics=["accuracy"])
    assert rows[["judge", "method"]].values.tolist() == [["big - small", "p"], ["big", "p - r"]]


def test_one_question_gives_the_estimate_without_an_interval():
    from nfeval_repro.debateqa.da_labels import da_rows

    rows = da_rows(_toy_frame(["p"], n_questions=1), statistics=["accuracy"])
    assert rows["n_questions"].tolist() == [1]
    assert math.isnan(rows["ci_low"].iloc[0]) and not math.isnan(rows["ours"].iloc[0])


def test_da_comparisons_judges_and_the_acknowledge_rule():
    from nfeval_repro.debateqa.da_labels import da_comparisons

    pairs = da_comparisons(["small", "big"])
    assert pairs[:2] == [(("big", "da_prob"), ("small", "da_prob")),
                         (("big", "da_zs_prob"), ("small", "da_zs_prob"))]
    ack = ("none", "acknowledge_rule")
    assert pairs[2:8] == [((j, m), ack) for j in ("small", "big")
                          for m in ("da_prob", "da_zs_prob", "da_generate")]
    # each judge's D.A. minus its D.A.-ZS: the paper's "necessity of including demonstrations"
    assert pairs[8:10] == [((j, "da_prob"), (j, "da_zs_prob")) for j in ("small", "big")]
    assert pairs[10:] == [(("none", "da_official"), ack)]
    assert len(da_comparisons(["only"])) == 5  # no judge difference with one judge


def test_da_frame_rows():
    from nfeval_repro.debateqa.da_labels import da_frame

    res = [DAResult("a:1", 0.7, 1, "prob", p_one=0.7), DAResult("b:1", math.nan, None,
                                                                 "generate", raw="yes")]
    frame = da_frame(res, judge="j", method="m")
    assert list(frame.columns) == ["judge", "method", "key", "score", "raw"]
    assert frame["key"].tolist() == ["a:1", "b:1"] and frame["score"].iloc[0] == 0.7
    assert math.isnan(frame["score"].iloc[1]) and frame["raw"].iloc[1] == "yes"
    assert da_frame([], judge="j").columns.tolist() == ["judge", "key", "score", "raw"]


def _concat(frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)
