"""lk_x02: the pairwise judge's position diagnostics, on pairs whose answer is known."""

from __future__ import annotations

import pandas as pd
import pytest

from nfeval_repro.linkage import lk_x02


def _pairs(first_bias: bool) -> pd.DataFrame:
    """Two datasets x 12 questions x 4 pairs, judged at random positions and in both
    orders; the judge prefers the first slot (``first_bias``) or the better answer."""
    rows = []
    for ds in lk_x02.DATASETS:
        for q in range(12):
            for k in range(4):
                cand_better = k % 2 == 0
                for proto, first in (("random", k < 2), ("candidate first", True),
                                     ("candidate second", False)):
                    prefers_first = True if first_bias else (cand_better == first)
                    p_first, p_second = (0.5, 0.3) if prefers_first else (0.3, 0.5)
                    p_cand, p_ref = (p_first, p_second) if first else (p_second, p_first)
                    rows.append({"dataset": ds, "protocol": proto, "qid": str(q),
                                 "candidate": f"c{k}", "reference": "r", "candidate_first": first,
                                 "p_first": p_first, "p_second": p_second, "p_candidate": p_cand,
                                 "p_reference": p_ref})
    return pd.DataFrame(rows)


def _stat(table, ds, statistic):
    return table[(table["dataset"] == ds) & (table["statistic"] == statistic)].iloc[0]


def test_a_judge_of_the_first_slot_is_never_consistent():
    empty = pd.DataFrame(columns=["dataset", "method", "qid", "doc_id", "grade", "score"])
    t = lk_x02.summary_rows(_pairs(first_bias=True), empty)
    for ds in lk_x02.DATASETS:
        first = _stat(t, ds, "prefers the first answer (share of pairs)")
        assert first["ours"] == 1.0 and first["n_questions"] == 12 and first["n_pairs"] == 48
        same = _stat(t, ds, "same answer preferred in both orders (share of pairs)")
        assert same["ours"] == 0.0 and same["n_pairs"] == 48
        assert _stat(t, ds, "mean P(first) - P(second)")["ours"] == pytest.approx(0.2)


def test_a_judge_of_the_content_is_consistent_and_unbiased():
    empty = pd.DataFrame(columns=["dataset", "method", "qid", "doc_id", "grade", "score"])
    t = lk_x02.summary_rows(_pairs(first_bias=False), empty)
    for ds in lk_x02.DATASETS:
        assert _stat(t, ds, "same answer preferred in both orders (share of pairs)")["ours"] == 1
        first = _stat(t, ds, "prefers the first answer (share of pairs)")
        assert first["ours"] == 0.5 and first["ci_low"] <= 0.5 <= first["ci_high"]
        both = _stat(t, ds, "first answer preferred in both orders (share of pairs)")
        assert both["ours"] == 0.0


def test_both_orders_averaged_is_the_mean_outcome_weighted_by_grade():
    from nfeval.linkage.judgments import JudgeConfig, Judgment, QuestionScores

    cfg = JudgeConfig(method="pairwise")
    a = QuestionScores("q", cfg, [0.0], [Judgment(0, 1.0, True, 0, True, 4.0),
                                         Judgment(0, 0.0, True, 1, True, 1.0)])
    b = QuestionScores("q", cfg, [0.0], [Judgment(0, 0.0, True, 0, False, 4.0),
                                         Judgment(0, 0.5, True, 1, False, 1.0)])
    out = lk_x02._averaged([a], [b], None)
    assert out[0].scores == pytest.approx([(4 * 0.5 + 1 * 0.25) / 5])
