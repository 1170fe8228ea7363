"""Correlation protocol: hand-checkable cases, ties, constant vectors, skip counts."""

import math

import pytest

from nfeval import NfevalError
from nfeval.metrics import correlation, question_correlations

# (grades, scores, kendall tau-b, spearman, pearson), worked by hand:
# ties case: tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) = 1 / sqrt(2 * 2) = 0.5;
# ranks (2.5, 2.5, 1) vs (3, 1.5, 1.5) give rho = 0.75 / 1.5 = 0.5;
# raw values: cov = 1/3, var = 6/9 each, so r = 0.5.
CASES = [
    ([3, 2, 1, 0], [4, 3, 2, 1], 1.0, 1.0, 1.0),
    ([3, 2, 1, 0], [1, 2, 3, 4], -1.0, -1.0, -1.0),
    ([1, 1, 0], [1, 0, 0], 0.5, 0.5, 0.5),
    # one discordant pair out of three: tau = (2 - 1) / 3; rho = 1 - 6 * 2 / (3 * 8) = 0.5
    ([3, 2, 1], [2, 3, 1], 1 / 3, 0.5, 0.5),
]


@pytest.mark.parametrize("grades,scores,k,s,p", CASES)
def test_hand_checked(grades, scores, k, s, p):
    assert correlation(grades, scores, "kendall") == pytest.approx(k)
    assert correlation(grades, scores, "spearman") == pytest.approx(s)
    assert correlation(grades, scores, "pearson") == pytest.approx(p)


@pytest.mark.parametrize(
    "grades,scores",
    [([2, 2, 2], [1, 2, 3]), ([0, 1, 2], [5, 5, 5]), ([1], [1]), ([], [])],
)
def test_undefined_is_nan(grades, scores):
    for coef in ("kendall", "spearman", "pearson"):
        assert math.isnan(correlation(grades, scores, coef))


def test_mean_skips_and_counts_undefined_questions():
    grades = {"a": [3, 2, 1, 0], "b": [1, 1, 1], "c": [3, 0], "d": [2, 1, 0]}
    scores = {"a": [4, 3, 2, 1], "b": [3, 2, 1], "c": [0, 1], "d": [7, 7, 7]}
    out = question_correlations(grades, scores)
    for coef in ("kendall", "spearman", "pearson"):
        summary = out[coef]
        assert summary.mean == pytest.approx(0.0)  # (1 + -1) / 2
        assert (summary.n_used, summary.n_skipped) == (2, 2)
        assert math.isnan(summary.per_question["b"]) and math.isnan(summary.per_question["d"])


def test_nan_scores_are_dropped_and_counted():
    out = question_correlations({"q": [3, 2, 1, 0]}, {"q": [4, float("nan"), 2, 1]})
    assert out["kendall"].mean == pytest.approx(1.0)
    assert out["kendall"].n_dropped_items == 1


def test_all_questions_undefined_gives_nan_mean_not_error():
    out = question_correlations({"q": [1, 1]}, {"q": [0, 1]})
    assert math.isnan(out["pearson"].mean) and out["pearson"].n_skipped == 1


def test_matches_scipy_on_random_data():
    import numpy as np
    from scipy import stats

    rng = np.random.default_rng(0)
    g = rng.integers(0, 4, size=30)
    s = rng.normal(size=30) + g
    assert correlation(g, s, "kendall") == pytest.approx(stats.kendalltau(g, s).statistic)
    assert correlation(g, s, "spearman") == pytest.approx(stats.spearmanr(g, s).statistic)
    assert correlation(g, s, "pearson") == pytest.approx(stats.pearsonr(g, s).statistic)


def _scipy(g, s):
    import warnings

    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (stats.kendalltau(g, s).statistic, stats.spearmanr(g, s).statistic,
                stats.pearsonr(g, s).statistic)


def _ours(g, s):
    from nfeval.metrics.correlation import kendall_tau_b, pearson_r, spearman_rho

    return kendall_tau_b(g, s), spearman_rho(g, s), pearson_r(g, s)


def _same_bits(a, b):
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def test_equals_scipy_to_the_last_bit_with_ties_and_near_constant_scores():
    """The coefficients are scipy's to the last bit, not approximately (the committed tables
    were first computed with scipy, and rebuilding them must give the same numbers)."""
    import numpy as np

    rng = np.random.default_rng(1)
    for trial in range(1200):
        n = int(rng.integers(2, 40))
        g = rng.integers(0, 4, n).astype(float)
        s = [rng.normal(size=n), rng.integers(0, 5, n).astype(float),
             rng.normal(size=n) * 1e-3 + 5, np.round(rng.normal(size=n), 2)][trial % 4]
        if g.min() == g.max() or s.min() == s.max():
            continue
        assert _same_bits(_ours(g, s), _scipy(g, s)), (g.tolist(), s.tolist())
    with_nan = np.array([1.0, float("nan"), 3.0])
    assert all(math.isnan(v) for v in _ours(with_nan, np.array([1.0, 2.0, 3.0])))


@pytest.mark.parametrize(
    "grades,scores,msg",
    [({"a": [1, 2]}, {"b": [1, 2]}, "different questions"), ({"a": [1, 2]}, {"a": [1]}, "2 grades but 1 scores")],
)
def test_bad_input(grades, scores, msg):
    with pytest.raises(NfevalError, match=msg):
        question_correlations(grades, scores)


def test_unknown_coefficient():
    with pytest.raises(NfevalError, match="unknown coefficient"):
        correlation([1, 2], [1, 2], "tau")


def test_per_question_memo_computes_each_input_once_and_returns_the_same_rows(monkeypatch):
    import importlib

    import pandas as pd

    C = importlib.import_module("nfeval.metrics.correlation")  # the module, not the function
    frame = pd.DataFrame({"method": ["a"] * 6 + ["b"] * 6, "qid": (["q1"] * 3 + ["q2"] * 3) * 2,
                          "grade": [3, 1, 0, 2, 1, 0] * 2,
                          "score": [0.9, 0.2, 0.1, 0.5, 0.7, 0.0, 1, 2, 3, 3, 2, float("nan")]})
    plain = C.per_question(frame)
    calls = []
    inner = C._per_question
    monkeypatch.setattr(C, "_per_question", lambda *a: calls.append(1) or inner(*a))
    with C.per_question_memo():
        first, again = C.per_question(frame), C.per_question(frame.copy())
        first.loc[0, "value"] = 99.0  # a caller's change does not reach the memo
        # a shift keeps every rank: another input (computed again), the same coefficients
        shifted = C.per_question(frame.assign(score=frame["score"] + 1))
        # q1 of method a reversed: its ranks change, so must its coefficients
        reordered = frame.copy()
        reordered.loc[0:2, "score"] = [0.1, 0.2, 0.9]
        changed = C.per_question(reordered)
    assert len(calls) == 3  # the same content once, each changed input once more
    pd.testing.assert_frame_equal(again, plain)
    pd.testing.assert_frame_equal(shifted, plain, check_exact=False, rtol=0, atol=1e-12)
    moved = changed.compare(plain)
    assert len(moved) and set(changed.loc[moved.index, "qid"]) == {"q1"}
    assert set(changed.loc[moved.index, "method"]) == {"a"}
    C.per_question(frame)
    assert len(calls) == 4  # outside the memo nothing is kept
