"""Intervals and stability measures of the DebateQA systems (nfeval_repro.debateqa.system_stats).

Every case is built so the expected number can be checked by hand: scores are
small integers laid out per (system, question), with the written answer sets
named ``written:<set>`` as :func:`nfeval_repro.debateqa.systems.collect_systems` names them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from nfeval_repro.debateqa.system_stats import (
    answer_correlation,
    cohen_kappa,
    combined_rows,
    decision_agreement_rows,
    difference_rows,
    fast_correlation,
    mean_and_difference_rows,
    mean_rows,
    model_systems,
    ratio_rows,
    stability_rows,
    system_correlation,
    within_question_correlation,
)
from nfeval.metrics.intervals import N_RESAMPLES

MODELS = ["m1", "m2", "m3"]
WRITTEN = ["written:balanced", "written:one_sided", "written:off_topic", "written:short"]


def frame(values: dict, metric: str = "pd") -> pd.DataFrame:
    """{(evaluator, system, qid): score} -> the long score frame of score_systems."""
    return pd.DataFrame([{"system": s, "id": q, "metric": metric, "evaluator": e, "score": v}
                         for (e, s, q), v in values.items()])


def ordered(evaluators=("a", "b"), systems=MODELS + WRITTEN, qids=range(1, 7), scale=None):
    """Every evaluator orders the systems the same way on every question (system j
    scores j + 10 * question, times an evaluator factor)."""
    scale = scale or {e: i + 1 for i, e in enumerate(evaluators)}
    return frame({(e, s, q): scale[e] * (j + 10 * q) for e in evaluators
                  for j, s in enumerate(systems) for q in qids})


@pytest.mark.parametrize("method", ["kendall", "spearman", "pearson"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_correlation_equals_scipy_with_ties(method, seed):
    from nfeval.metrics.correlation import correlation

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, size=40).astype(float)  # many ties
    b = a + rng.integers(-2, 3, size=40)
    assert fast_correlation(a, b, method) == pytest.approx(correlation(a, b, method), abs=1e-12)
    assert math.isnan(fast_correlation(a, np.ones(40), method))
    assert math.isnan(fast_correlation([1.0], [2.0], method))
    with_nan = np.append(a, np.nan), np.append(b, 3.0)
    assert fast_correlation(*with_nan, method) == pytest.approx(fast_correlation(a, b, method))


def test_model_systems_drops_the_written_sets():
    assert model_systems(MODELS + WRITTEN) == MODELS
    assert model_systems(WRITTEN) == []


def test_identical_rankings_give_tau_one_with_a_zero_width_interval():
    scores = ordered()
    row = system_correlation(scores, ("pd", "a"), ("pd", "b"), method="kendall", seed=0)
    assert row["ours"] == 1.0 and row["ci_low"] == row["ci_high"] == 1.0
    assert row["n_systems"] == 7 and row["n_questions"] == 6 and row["n_undefined"] == 0
    ans = answer_correlation(scores, ("pd", "a"), ("pd", "b"), method="spearman", seed=0)
    assert ans["ours"] == pytest.approx(1.0) and ans["ci_low"] == pytest.approx(1.0)
    assert ans["n_answers"] == 42


def test_the_same_seed_gives_the_same_bounds():
    rng = np.random.default_rng(3)
    scores = frame({(e, s, q): float(rng.normal()) for e in "ab" for s in MODELS + WRITTEN
                    for q in range(8)})
    first = stability_rows(scores, "pd", seed=7)
    second = stability_rows(scores, "pd", seed=7)
    pd.testing.assert_frame_equal(first, second)
    other = stability_rows(scores, "pd", seed=8)
    assert not np.allclose(first["ci_low"], other["ci_low"], equal_nan=True)
    assert (first["ci_low"].fillna(-9) <= first["ci_high"].fillna(9)).all()


def test_models_only_tau_uses_only_the_generator_systems():
    # the written sets (far apart, 100..400) agree; the three models swap order
    values = {}
    for q in range(1, 6):
        for j, s in enumerate(WRITTEN):
            values[("a", s, q)] = values[("b", s, q)] = 100.0 * (j + 1) + q
        for j, s in enumerate(MODELS):
            values[("a", s, q)] = 10.0 + j + q
            values[("b", s, q)] = 10.0 - j + q  # the reverse order
    table = stability_rows(frame(values), "pd", seed=0).set_index(["scope", "quantity"])
    everyone = table.loc[("all", "ranking_kendall")]
    models = table.loc[("models", "ranking_kendall")]
    assert models["n_systems"] == 3 and models["ours"] == -1.0
    assert models["ci_low"] == models["ci_high"] == -1.0
    assert everyone["n_systems"] == 7 and everyone["ours"] > 0.5
    # tau over 7 systems with the 3 models reversed: 3 discordant pairs of 21
    assert everyone["ours"] == pytest.approx((18 - 3) / 21)
    assert table.loc[("models", "answer_spearman"), "n_answers"] == 15


def test_pooled_and_within_question_agreement_differ_by_the_question_level():
    # within every question the two evaluators agree exactly; the question levels are
    # opposite (a: question 2 high, b: question 1 high), so the pooled correlation is negative
    values = {}
    for s, j in zip(MODELS, range(3)):
        values[("a", s, 1)], values[("a", s, 2)] = j, 100 + j
        values[("b", s, 1)], values[("b", s, 2)] = 100 + j, j
    scores = frame(values)
    within = within_question_correlation(scores, ("pd", "a"), ("pd", "b"), seed=0)
    assert within["ours"] == 1.0 and within["n_questions"] == 2
    pooled = answer_correlation(scores, ("pd", "a"), ("pd", "b"), method="spearman", seed=0)
    assert pooled["ours"] < 0


def test_answer_correlation_skips_answers_one_evaluator_lacks():
    scores = ordered(qids=range(1, 4))
    scores = scores[~((scores.evaluator == "b") & (scores.system == "m1") & (scores.id == 1))]
    row = answer_correlation(scores, ("pd", "a"), ("pd", "b"), method="kendall", seed=0)
    assert row["n_answers"] == 7 * 3 - 1 and row["ours"] == pytest.approx(1.0)


def test_constant_scores_are_undefined_not_an_error():
    scores = ordered(scale={"a": 1, "b": 0})  # evaluator b scores every answer 0
    row = system_correlation(scores, ("pd", "a"), ("pd", "b"), seed=0)
    assert math.isnan(row["ours"]) and math.isnan(row["ci_low"])
    assert row["n_undefined"] == N_RESAMPLES


@pytest.mark.parametrize("a, b, expected", [
    ([1, 1, 0, 0], [1, 0, 0, 0], 0.5),  # po .75, pe .5
    ([1, 0, 1, 0], [0, 1, 0, 1], -1.0),
    ([1, 1, 1, 1], [1, 1, 0, 0], 0.0),  # one judge constant
])
def test_cohen_kappa_by_hand_and_as_sklearn(a, b, expected):
    assert cohen_kappa(np.array(a), np.array(b)) == pytest.approx(expected)
    assert cohen_kappa(np.array(a), np.array(b)) == pytest.approx(cohen_kappa_score(a, b))


def test_cohen_kappa_of_two_identical_constant_judges_is_undefined():
    assert math.isnan(cohen_kappa(np.ones(4), np.ones(4)))


def test_decision_agreement_rows():
    # 4 questions x 2 systems; judge a says 1 for system m1 only, b says 1 everywhere
    values = {}
    for q in range(4):
        values[("a", "m1", q)], values[("a", "m2", q)] = 0.9, 0.2
        values[("b", "m1", q)], values[("b", "m2", q)] = 0.8, 0.7
    table = decision_agreement_rows(frame(values, "da"), seed=0).set_index(["a", "b", "quantity"])
    assert table.loc[("a", "-", "share_judged_1"), "ours"] == 0.5
    assert table.loc[("b", "-", "share_judged_1"), "ours"] == 1.0
    agree = table.loc[("a", "b", "agreement")]
    assert agree["ours"] == 0.5 and agree["ci_low"] == agree["ci_high"] == 0.5
    assert agree["n_answers"] == 8 and agree["n_questions"] == 4
    assert table.loc[("a", "b", "cohen_kappa"), "ours"] == 0.0
    assert table.loc[("a", "b", "answer_spearman"), "ours"] == pytest.approx(1.0)


def test_mean_rows_by_hand():
    df = pd.DataFrame({"system": ["s"] * 4 + ["t"], "id": [1, 2, 3, 3, 1],
                       "score": [1.0, 2.0, 3.0, 5.0, 7.0]})
    out = mean_rows(df, ["system"], seed=0).set_index("system")
    # question 3 is averaged first (4.0): mean of 1, 2, 4
    assert out.loc["s", "ours"] == pytest.approx(7 / 3) and out.loc["s", "n_questions"] == 3
    assert out.loc["s", "ci_low"] <= 7 / 3 <= out.loc["s", "ci_high"]
    assert math.isnan(out.loc["t", "ci_low"]) and out.loc["t", "n_questions"] == 1
    same = mean_rows(df.assign(score=2.0), ["system"], seed=0).set_index("system")
    assert same.loc["s", "ci_low"] == same.loc["s", "ci_high"] == 2.0


def test_difference_rows_pairs_the_questions():
    df = pd.DataFrame({"gen": "g", "prompt": ["basic"] * 3 + ["rich"] * 2,
                       "id": [1, 2, 3, 1, 2], "score": [10.0, 20.0, 99.0, 7.0, 18.0]})
    out = difference_rows(df, ["gen", "prompt"], column="prompt", pairs=[("rich", "basic")],
                          seed=0)
    row = out.iloc[0]
    assert row["prompt"] == "rich - basic" and row["n_questions"] == 2
    assert row["ours"] == pytest.approx(-2.5)  # (-3 + -2) / 2; question 3 unpaired


def test_mean_and_difference_rows_stacks_means_then_differences():
    df = pd.DataFrame({"gen": "g", "prompt": ["basic"] * 3 + ["rich"] * 2,
                       "id": [1, 2, 3, 1, 2], "score": [10.0, 20.0, 99.0, 7.0, 18.0]})
    out = mean_and_difference_rows(df, ["gen", "prompt"], column="prompt",
                                   pairs=[("rich", "basic")], seed=0)
    assert out["quantity"].tolist() == ["mean", "mean", "difference"]
    assert out["prompt"].tolist() == ["basic", "rich", "rich - basic"]
    assert out["ours"].tolist() == pytest.approx([43.0, 12.5, -2.5])
    means_only = mean_and_difference_rows(df, ["gen", "prompt"], column="prompt", pairs=[],
                                          seed=0)
    assert means_only["quantity"].tolist() == ["mean", "mean"]


def test_ratio_rows_is_a_ratio_of_sums():
    df = pd.DataFrame({"g": "x", "id": [1, 2, 3], "hit": [1, 0, 3], "all": [2, 2, 4]})
    row = ratio_rows(df, ["g"], numerator="hit", denominator="all", seed=0).iloc[0]
    assert row["ours"] == pytest.approx(0.5) and row["n_questions"] == 3
    assert 0 <= row["ci_low"] <= 0.5 <= row["ci_high"] <= 1


def test_combined_rows_follow_da_at_k0_and_pd_for_large_k():
    values = {}
    for q in range(5):
        for j, s in enumerate(MODELS):
            values[("bb", s, q)] = 100 + 10 * j + q  # P.D.: m1 best (lowest)
            values[("jd", s, q)] = 0.1 * j + 0.01 * q  # D.A.: m3 best (highest)
    scores = pd.concat([frame({k: v for k, v in values.items() if k[0] == "bb"}, "pd"),
                        frame({k: v for k, v in values.items() if k[0] == "jd"}, "da")])
    out = combined_rows(scores, [0.0, 100.0], pd_evaluator="bb", da_evaluator="jd", seed=0)
    ranks = out[out.quantity == "rank"].pivot(index="system", columns="k", values="ours")
    assert list(ranks[0.0]) == [3, 2, 1] and list(ranks[100.0]) == [1, 2, 3]
    comb = out[out.quantity == "combined"]
    assert (comb["ci_low"] <= comb["ours"] + 1e-9).all()
    assert (comb["ours"] <= comb["ci_high"] + 1e-9).all()
    assert out[out.quantity == "rank"]["ci_low"].isna().all()


def test_the_vectorized_ranking_kendall_equals_the_loop_to_the_last_bit():
    """system_correlation's Kendall bootstrap computes all resamples at once; every resample's
    value must be the loop's exactly (NaN where the loop's is), with ties, missing answers and
    resamples where a system has no answer."""
    import numpy as np

    from nfeval_repro.debateqa import system_stats as di

    rng = np.random.default_rng(1)
    for trial in range(20):
        q, s = int(rng.integers(2, 40)), int(rng.integers(2, 8))
        mx = rng.normal(size=(q, s)).round(int(rng.integers(0, 3)))
        my = rng.normal(size=(q, s)).round(1)
        mx[rng.random((q, s)) < 0.25] = np.nan
        my[rng.random((q, s)) < 0.25] = np.nan
        if trial % 3 == 0:
            mx[:, 1] = mx[:, 0]  # two systems scored alike: tied means
        draws = rng.integers(0, q, size=(600, q))
        loop = np.array([di._corr(di._means(mx, r), di._means(my, r), "kendall")
                         for r in draws])
        vec = di._batch_kendall_b(di._batch_means(mx, draws), di._batch_means(my, draws))
        assert np.array_equal(np.isnan(loop), np.isnan(vec)), trial
        assert np.array_equal(loop[~np.isnan(loop)], vec[~np.isnan(vec)]), trial


@pytest.mark.parametrize("method", ["kendall", "spearman"])
def test_the_vectorized_pooled_answer_correlation_equals_the_loop_to_the_last_bit(method):
    """answer_correlation's bootstrap weights each answer by how often its question is drawn;
    every resample's value must be the loop's on the resample's answers exactly (ties, missing
    scores, resamples with fewer than two answers or a constant side)."""
    import numpy as np

    from nfeval_repro.debateqa import system_stats as di

    rng = np.random.default_rng(2)
    for trial in range(60):
        q, s = int(rng.integers(1, 25)), int(rng.integers(1, 9))
        mx = (rng.choice([0.0, 1.0, 2.0, 0.5], size=(q, s)) if trial % 2
              else rng.normal(size=(q, s)))
        my = rng.choice([0.0, 1.0], size=(q, s)) if trial % 3 == 0 else rng.random((q, s))
        mx[rng.random((q, s)) < 0.3] = np.nan
        my[rng.random((q, s)) < 0.1] = np.nan
        draws = rng.integers(0, q, size=(50, q))
        loop = np.array([di.fast_correlation(mx[r].ravel(), my[r].ravel(), method)
                         for r in draws])
        vec = di._batch_answer_correlation(mx, my, draws, method)
        assert np.array_equal(loop, vec, equal_nan=True), trial
        if method == "kendall":  # the pair counts computed once, as the bootstrap does
            pre = di._batch_answer_correlation(mx, my, draws, method, di.kendall_blocks(mx, my))
            assert np.array_equal(loop, pre, equal_nan=True), trial


def test_every_vectorized_interval_gives_the_rows_of_the_loop(monkeypatch):
    """stability_rows, decision_agreement_rows and combined_rows with their bootstraps
    vectorized, against
    the same rows with every resample computed one by one: equal to the last bit."""
    import numpy as np

    import nfeval_repro.debateqa.system_stats as di

    rng = np.random.default_rng(4)
    values = {(e, s, q): float(rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]))
              for e in ("a", "b") for s in MODELS + WRITTEN for q in range(9)
              if rng.random() > 0.15}
    for metric in ("pd", "da"):
        scores = frame(values, metric)
        fast = [stability_rows(scores, metric, scopes=("all",), seed=3),
                decision_agreement_rows(scores, metric=metric, seed=3)]
        both = pd.concat([scores, frame(values, "pd" if metric == "da" else "da")])
        both = both[both["system"].isin(MODELS[:2] if metric == "pd" else MODELS)]
        fast.append(combined_rows(both, [0.5], pd_evaluator="a", da_evaluator="b", seed=3))
        plain = di.cluster_interval

        def loop(*args, vectorized=None, **kwargs):
            return plain(*args, **kwargs)

        monkeypatch.setattr(di, "cluster_interval", loop)
        slow = [stability_rows(scores, metric, scopes=("all",), seed=3),
                decision_agreement_rows(scores, metric=metric, seed=3),
                combined_rows(both, [0.5], pd_evaluator="a", da_evaluator="b", seed=3)]
        monkeypatch.undo()
        for a, b in zip(fast, slow):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
