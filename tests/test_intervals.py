"""Intervals: seeded, degenerate cases explicit, paired differences paired."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nfeval.metrics.correlation import correlation_rows, paired_rows, per_question
from nfeval.metrics.intervals import (
    cluster_interval,
    mean_interval,
    paired_difference,
    proportion_interval,
    std_interval,
)


def test_mean_interval_contains_the_mean_and_is_seeded():
    vals = [0.65, 0.24, 0.68, 0.44, -0.71, -0.53]  # issue 12's six per-question Spearmans
    a = mean_interval(vals, seed=0, key="x")
    b = mean_interval(vals, seed=0, key="x")
    c = mean_interval(vals, seed=1, key="x")
    assert a == b and a != c
    assert a.estimate == pytest.approx(np.mean(vals))
    assert a.low < a.estimate < a.high and a.n == 6
    assert 0.4 < a.half_width < 0.8  # "about +-0.6"


@pytest.mark.parametrize("values, expect", [
    ([], (math.nan, math.nan, math.nan, 0)),
    ([0.3], (0.3, math.nan, math.nan, 1)),
    ([0.5, 0.5, 0.5], (0.5, 0.5, 0.5, 3)),
    ([0.2, math.nan, 0.2], (0.2, 0.2, 0.2, 2)),  # NaN left out
])
def test_mean_interval_degenerate_cases(values, expect):
    iv = mean_interval(values)
    got = (iv.estimate, iv.low, iv.high, iv.n)
    for g, e in zip(got, expect):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e)


def test_paired_difference_uses_only_common_units():
    a = {"q1": 0.5, "q2": 0.7, "q3": 0.1}
    b = {"q1": 0.5, "q2": 0.7, "q4": 0.9}
    iv = paired_difference(a, b)
    assert (iv.estimate, iv.low, iv.high, iv.n) == (0.0, 0.0, 0.0, 2)


def test_paired_interval_is_narrower_than_unpaired_when_units_vary_together():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 1, 40)
    a = {i: b + 0.3 + rng.normal(0, 0.05) for i, b in enumerate(base)}
    b = {i: v for i, v in enumerate(base)}
    paired = paired_difference(a, b)
    assert paired.low > 0.2 and paired.high < 0.4 and paired.excludes(0)
    alone = mean_interval(list(a.values()))
    assert alone.half_width > 5 * paired.half_width


@pytest.mark.parametrize("hits, n, low, high", [
    (5, 10, 0.2366, 0.7634),  # Wilson, by hand: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
])
def test_wilson_interval(hits, n, low, high):
    iv = proportion_interval(hits, n)
    assert iv.estimate == hits / n and iv.method == "wilson"
    assert iv.low == pytest.approx(low, abs=1e-4) and iv.high == pytest.approx(high, abs=1e-4)


def test_cluster_interval_counts_undefined_resamples():
    # one cluster holds the only positive label: resamples without it have no AUROC
    units = [[(0, 0.1)], [(0, 0.2)], [(1, 0.9)], [(0, 0.3)]]

    def auroc(us):  # the share of (positive, negative) pairs ordered right; ties count half
        pos = [s for u in us for y, s in u if y == 1]
        neg = [s for u in us for y, s in u if y == 0]
        if not pos or not neg:
            return math.nan
        return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))

    iv = cluster_interval(units, auroc, seed=0, key="auroc")
    assert iv.estimate == 1.0 and iv.n_undefined > 0 and iv.low == iv.high == 1.0
    assert cluster_interval(units, auroc, seed=0, key="auroc") == iv


def _frame():
    rows = []
    for q, (grades, good, bad) in enumerate([
        ([0, 1, 2, 3], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]),
        ([3, 2, 1, 0], [0.9, 0.5, 0.4, 0.1], [0.1, 0.2, 0.3, 0.4]),
        ([1, 1, 2, 2], [0.1, 0.1, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]),  # bad: constant, undefined
    ]):
        for i, g in enumerate(grades):
            rows.append({"method": "good", "qid": str(q), "grade": g, "score": good[i]})
            rows.append({"method": "bad", "qid": str(q), "grade": g, "score": bad[i]})
    return pd.DataFrame(rows)


def test_correlation_rows_schema_and_values():
    rows = correlation_rows(_frame())
    good = rows[(rows["method"] == "good") & (rows["coefficient"] == "spearman")].iloc[0]
    assert good["ours"] == pytest.approx(1.0) and good["n_questions"] == 3
    bad = rows[(rows["method"] == "bad") & (rows["coefficient"] == "spearman")].iloc[0]
    assert bad["ours"] == pytest.approx(-1.0) and bad["n_questions"] == 2
    assert bad["n_skipped_undefined"] == 1
    assert list(rows.columns[:6]) == ["method", "coefficient", "ours", "ci_low", "ci_high",
                                      "n_questions"]


def test_paired_rows_on_the_questions_both_define():
    d = paired_rows(_frame(), [("good", "bad")], coefficients=("spearman",)).iloc[0]
    assert d["method"] == "good - bad" and d["n_questions"] == 2
    assert d["ours"] == pytest.approx(2.0) and d["a_mean"] == pytest.approx(1.0)


def test_per_question_drops_nan_scores():
    f = _frame()
    f.loc[0, "score"] = math.nan
    pq = per_question(f, coefficients=("kendall",))
    row = pq[(pq["method"] == "good") & (pq["qid"] == "0")].iloc[0]
    assert row["n_items"] == 3 and row["n_dropped"] == 1 and row["value"] == pytest.approx(1.0)


def test_std_interval_covers_the_true_spread_of_three_normal_draws():
    rng = np.random.default_rng(0)
    samples = rng.normal(0.3, 0.05, size=(4000, 3))
    ivs = [std_interval(row) for row in samples]
    cover = np.mean([iv.low <= 0.05 <= iv.high for iv in ivs])
    assert 0.93 < cover < 0.97
    iv = ivs[0]
    assert iv.estimate == pytest.approx(np.std(samples[0], ddof=1)) and iv.n == 3
    assert iv.unit == "draws" and iv.method == "chi-square"
    assert iv.low / iv.estimate == pytest.approx(0.5206, abs=1e-3)
    assert iv.high / iv.estimate == pytest.approx(6.285, abs=1e-2)


def test_std_interval_needs_two_values():
    one = std_interval([0.4, float("nan")])
    assert one.n == 1 and math.isnan(one.estimate) and math.isnan(one.low)
    same = std_interval([0.25, 0.25, 0.25])
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)


def test_an_interval_on_fewer_than_ten_units_carries_a_warning():
    from nfeval.metrics.intervals import SMALL_N, small_n_warning

    assert "only 2 questions" in small_n_warning(2) and "cannot be trusted" in small_n_warning(2)
    assert small_n_warning(SMALL_N) == "" and small_n_warning(0) == ""
    assert "answers" in small_n_warning(3, "answers")
