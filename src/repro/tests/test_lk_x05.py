"""lk_x05 (judge size): the reading of a change between judges, and the paired change itself
on frames built here, where the answer is known."""

import numpy as np
import pandas as pd
import pytest

from nfeval_repro.linkage.lk_x05 import comparisons, judge_pairs, reading, size_rows


def test_reading_names_the_direction_against_the_papers_sign():
    assert reading(0.01, 0.2, 0.15, 40) == "moves toward the paper's sign"
    assert reading(-0.2, -0.01, 0.15, 40) == "moves away from the paper's sign"
    assert reading(-0.05, 0.2, 0.15, 40) == "cannot tell at n"
    # a paper margin below 0: the paper's sign is negative
    assert reading(-0.2, -0.01, -0.05, 40) == "moves toward the paper's sign"
    # no margin printed: the claim's direction (LINKAGE beats the baseline)
    assert reading(0.01, 0.2, float("nan"), 40) == "moves toward the paper's sign"
    assert reading(0.01, 0.2, 0.15, 9) == "too few questions"


def _frame(judge_noise: float, n_questions: int = 30, seed: int = 0) -> pd.DataFrame:
    """LINKAGE 0-shot whose scores follow the grades up to ``judge_noise``, and ROUGE-1 that
    follows them loosely: the less noise, the larger LINKAGE minus ROUGE-1."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        grades = rng.integers(0, 4, 8)
        for i, g in enumerate(grades):
            for method, noise in (("linkage-0shot", judge_noise), ("rouge1", 2.0)):
                rows.append({"dataset": "antique", "method": method, "qid": str(q),
                             "doc_id": f"{q}-{i}", "grade": int(g),
                             "score": float(g + rng.normal(0, noise))})
    return pd.DataFrame(rows)


def _paper() -> pd.DataFrame:
    """The paper's LINKAGE (Mistral-7B) and ROUGE-1 rows: a margin of +0.2."""
    return pd.DataFrame([
        {"dataset": "antique", "method": "linkage-0shot", "judge": "mistral",
         "coefficient": "spearman", "paper": 0.5},
        {"dataset": "antique", "method": "rouge1", "judge": "", "coefficient": "spearman",
         "paper": 0.3}])


def test_a_judge_that_follows_the_grades_closer_moves_toward_the_papers_sign():
    paper = _paper()
    big, small = "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"
    rows = size_rows({big: _frame(0.3), small: _frame(3.0, seed=1)}, big, [small], paper)
    row = rows[rows["comparison"] == "linkage-0shot - rouge1"].iloc[0]
    assert row["paper_margin"] == pytest.approx(0.2)
    assert row["n_questions"] == 30 and row["change"] > 0
    assert row["reading"] == "moves toward the paper's sign"
    # the same judge on both sides: nothing to tell
    same = size_rows({big: _frame(0.3), small: _frame(0.3)}, big, [small], paper)
    assert same.loc[same["comparison"] == "linkage-0shot - rouge1", "change"].iloc[0] == 0


def test_every_l1_and_l2_row_of_the_claims_is_compared():
    rows = comparisons()
    assert len(rows) == 2 * 5 + 2 * 3
    assert ("L1", "linkage-fewshot", "bertscore-cls") in rows
    assert ("L2", "linkage-0shot", "pairwise-release") in rows


def test_every_two_judges_are_compared_the_largest_first():
    big = "qwen2.5-coder-1.5b-instruct"
    small = ["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"]
    assert judge_pairs(big, small) == [
        (big, "smollm2-135m-instruct"), (big, "qwen2.5-coder-0.5b-instruct"),
        ("qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct")]
    assert judge_pairs(big, ["gemma3-270m"]) == [(big, "gemma3-270m")]


def test_the_step_between_two_smaller_judges_is_read_too():
    paper = _paper()
    big, mid, low = ("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct",
                     "smollm2-135m-instruct")
    # the middle judge follows the grades worst: the smallest-to-middle step moves away
    frames = {big: _frame(0.3), mid: _frame(6.0, seed=1), low: _frame(0.6, seed=2)}
    rows = size_rows(frames, big, [low, mid], paper)
    rows = rows[rows["comparison"] == "linkage-0shot - rouge1"]
    got = dict(zip(zip(rows["larger"], rows["smaller"]), rows["reading"]))
    assert got[(big, mid)] == "moves toward the paper's sign"
    assert got[(mid, low)] == "moves away from the paper's sign"


def test_judge_sizes_are_written_as_the_model_names_write_them():
    from nfeval_repro.linkage.lk_x05 import size_label

    assert [size_label(v) for v in (0.135, 0.27, 0.5, 1.5, 7.0)] == [
        "135M", "270M", "0.5B", "1.5B", "7B"]


def test_the_figure_of_four_judges_has_no_overlapping_text():
    """Four judges at 0.135B-1.5B and the paper's 7B on one log axis: every tick label and
    title drawn apart (the axis labels once overlapped at this width)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nfeval_repro.figure_layout import layout_problems
    from nfeval_repro.linkage.lk_x05 import SIZES, figure

    big = "qwen2.5-coder-1.5b-instruct"
    small = [j for j in SIZES if j != big]
    rows, reads = [], []
    for claim, a, b in comparisons():
        for d in ("antique", "trec-dl-nf"):
            for j, size in SIZES.items():
                rows.append({"claim": claim, "dataset": d, "comparison": f"{a} - {b}",
                             "judge": j, "size_b": size, "ours": 0.1 * size - 0.1,
                             "ci_low": 0.1 * size - 0.2, "ci_high": 0.1 * size,
                             "n_questions": 20, "paper_margin": 0.1})
            for larger, s in judge_pairs(big, small):
                reads.append({"claim": claim, "dataset": d, "comparison": f"{a} - {b}",
                              "larger": larger, "smaller": s,
                              "reading": "moves toward the paper's sign"})
    fig = figure(pd.DataFrame(rows), pd.DataFrame(reads))
    try:
        assert layout_problems(fig) == []
        bottom = [ax for ax in fig.axes if ax.get_visible()][-1]  # the panel under the axis
        labels = {t.get_text() for t in bottom.get_xticklabels()}
        assert {"135M", "270M", "0.5B", "1.5B", "7B"} <= labels
    finally:
        plt.close(fig)
