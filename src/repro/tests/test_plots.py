"""Figure helpers (nfeval_repro.plots)."""

import matplotlib.pyplot as plt
import pandas as pd

from nfeval_repro.linkage.generated_lists import tick_label
from nfeval_repro.plots import (BarStyle, display_name, interval_bars, paper_differences,
                                short_names)


def test_short_names_are_distinct_and_keep_what_tells_two_sizes_apart():
    names = ["qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma3-270m",
             "qwen2.5-coder-1.5b-instruct", "acknowledge_rule", "smollm2-135m-instruct"]
    got = short_names(names)
    assert got == {"qwen2.5-coder-0.5b-instruct": "qwen2.5 0.5b", "smollm2-135m-instruct": "smollm2",
                   "gemma3-270m": "gemma3", "qwen2.5-coder-1.5b-instruct": "qwen2.5 1.5b",
                   "acknowledge_rule": "acknowledge_rule"}
    assert len(set(got.values())) == len(got)


def test_interval_bars_ticks_carry_the_label_of_each_group_and_its_n():
    table = pd.DataFrame({"method": ["linkage-0shot - pointwise-noref", "linkage-0shot-human"],
                          "ours": [0.1, 0.3], "ci_low": [0.0, 0.2], "ci_high": [0.2, 0.4],
                          "n_questions": [40, 39]})
    fig, ax = plt.subplots()
    interval_bars(ax, table, x="method", paper=None, style=BarStyle(label=tick_label))
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert ticks == ["linkage-0shot\nminus\npointwise\nn=40",  # the command line's name
                     "linkage-0shot\n(human refs)\nn=39"]


def test_figures_name_a_method_as_the_command_line_does():
    assert display_name("pointwise-noref") == "pointwise"
    assert display_name("linkage-0shot - pointwise-noref") == "linkage-0shot - pointwise"
    assert display_name("1GT: pointwise-noref-human") == "1GT: pointwise-noref-human"
    assert display_name("pointwise-ref") == "pointwise-ref" and display_name(3) == "3"
    table = pd.DataFrame({"method": ["a", "a"], "hue": ["pointwise-noref", "pointwise-ref"],
                          "ours": [0.1, 0.2], "ci_low": [0.0, 0.1], "ci_high": [0.2, 0.3],
                          "n_questions": [5, 5]})
    fig, ax = plt.subplots()
    interval_bars(ax, table, x="method", hue="hue", paper=None)
    legend = [t for t in ax.get_legend_handles_labels()[1]]
    plt.close(fig)
    assert legend == ["pointwise", "pointwise-ref"]


def test_paper_differences_mark_the_papers_margin_on_difference_rows_only():
    table = pd.DataFrame({
        "kind": ["mean", "mean", "mean", "difference", "difference", "difference"],
        "shots": [0, 1, 3, "1 - 0", "3 - 0", "5 - 0"],
        "coefficient": ["spearman"] * 6,
        "paper": [0.30, 0.41, None, None, None, None]})
    got = paper_differences(table, label="shots", keys=["coefficient"])
    assert got["paper"].iloc[:2].tolist() == [0.30, 0.41] and pd.isna(got["paper"].iloc[2])
    assert abs(got["paper"].iloc[3] - 0.11) < 1e-12
    assert got["paper"].iloc[4:].isna().all()  # 3-shot paper missing; no 5-shot row
    assert table["paper"].iloc[3:].isna().all()  # the input is left as it was
    two_judges = pd.concat([table.iloc[:1], table])
    assert paper_differences(two_judges, label="shots", keys=["coefficient"])["paper"].iloc[4:].isna().all()


def test_interval_bars_compact_leaves_no_empty_slot_and_marks_zero_and_undefined_bars():
    table = pd.DataFrame({"method": ["a", "a", "b", "c"], "judge": ["j1", "j2", "j2", "j1"],
                          "ours": [0.5, 0.0, 0.4, float("nan")], "ci_low": [0.4, 0.0, 0.3, float("nan")],
                          "ci_high": [0.6, 0.0, 0.5, float("nan")], "n_questions": [10, 10, 10, 0]})
    fig, ax = plt.subplots()
    interval_bars(ax, table, x="method", hue="judge", paper=None, style=BarStyle(compact=True))
    centres = sorted(round(float(p.get_x() + p.get_width() / 2), 6) for p in ax.patches)
    zero_marks = [c for c in ax.collections if 2.5 in list(c.get_linewidths())]
    texts = [t.get_text() for t in ax.texts]
    plt.close(fig)
    # group a: two bars either side of its tick; b: its one bar centred on 1; c: "n/a" (NaN)
    assert centres == [-0.2, 0.2, 1.0, 2.0]
    assert len(zero_marks) == 1 and texts == ["n/a"]
