"""Figures a person can read (nfeval_repro.figure_layout): overlapping text and too-tall figures are
found, a clean figure passes, and every committed figure is at most twice as tall as wide."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from nfeval_repro.figure_layout import FigureLayoutError, check, layout_problems  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]  # the checkout


def test_overlapping_tick_labels_are_found():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xticks(range(8), [f"a long method name {i}" for i in range(8)])
    try:
        problems = layout_problems(fig)
    finally:
        plt.close(fig)
    assert problems and "overlaps" in problems[0]


def test_a_hidden_panels_tick_labels_are_not_read_as_drawn():
    """A grid's unused panels are hidden; their tick labels (which name no axes) draw nothing."""
    fig, axes = plt.subplots(1, 2, figsize=(3, 2))
    axes[1].set_xticks(range(8), [f"a long method name {i}" for i in range(8)])
    axes[1].set_visible(False)
    try:
        assert layout_problems(fig) == []
        axes[1].set_visible(True)
        assert layout_problems(fig)
    finally:
        plt.close(fig)


def test_a_title_over_another_is_found_and_a_clean_figure_passes():
    fig, axes = plt.subplots(2, 1, figsize=(4, 4))
    axes[0].set_title("first panel")
    axes[1].set_title("second panel")
    fig.tight_layout()
    assert layout_problems(fig) == []
    fig.suptitle("a main title", y=0.93)  # drawn over the first panel's title
    assert any("a main title" in p for p in layout_problems(fig))
    plt.close(fig)


def test_a_figure_taller_than_twice_its_width_is_found(monkeypatch):
    fig = plt.figure(figsize=(2, 5))
    assert any("more than 2:1" in p for p in layout_problems(fig))
    monkeypatch.setenv("NFEVAL_FIGURE_CHECK", "1")
    with pytest.raises(FigureLayoutError, match="figure tall"):
        check(fig, "tall")
    plt.close(fig)


@pytest.mark.parametrize("png", sorted((ROOT / "figures").glob("*.png")), ids=lambda p: p.name)
def test_every_committed_figure_is_at_most_twice_as_tall_as_wide(png):
    from PIL import Image

    with Image.open(png) as im:
        w, h = im.size
    assert h <= 2 * w, f"{png.name} is {w}x{h} px"


def test_small_text_on_a_wide_figure_is_measured_as_a_screen_shows_it():
    from nfeval_repro.figure_layout import smallest_text_on_screen

    wide, ax = plt.subplots(figsize=(18, 4))
    ax.set_yticks([0, 1], ["a label at 5.5 points", "another"], fontsize=5.5)
    narrow, ax2 = plt.subplots(figsize=(8, 4))
    ax2.set_yticks([0, 1], ["a label at 8 points", "another"], fontsize=8)
    try:
        assert smallest_text_on_screen(wide)[0] < 4.5
        assert smallest_text_on_screen(narrow)[0] > 10
    finally:
        plt.close(wide)
        plt.close(narrow)


def test_the_claims_figures_read_at_a_screens_width():
    """The overview and each claim's forest plot: no text under 10 px tall when the figure
    is shown 880 px wide, no overlap, none taller than twice its width."""
    import pandas as pd

    from nfeval_repro import claims as C
    from nfeval_repro.figure_layout import smallest_text_on_screen

    table = pd.read_csv(ROOT / "results" / "claims.csv")
    figures = {"overview": C.verdict_overview(table)}
    figures.update({c: C.forest_plot(table, c) for c in table["claim"].drop_duplicates()})
    assert set(figures) - {"overview"} == set(C.CLAIMS)
    try:
        for name, fig in figures.items():
            px, text = smallest_text_on_screen(fig)
            assert px >= 10, f"{name}: {text!r} is {px:.1f} px tall at 880 px"
            assert layout_problems(fig) == [], name
    finally:
        for fig in figures.values():
            plt.close(fig)
    with pytest.raises(ValueError, match="no rows"):
        C.forest_plot(table, "Z9")
