"""Figures a person can read (nfeval_repro.figure_layout): overlapping text and too-tall figures are
found, a clean figure passes, and every committed figure is at most twice as tall as wide."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from nfeval_repro.figure_layout import FigureLayoutError, check, layout_problems  # noqa: E402
from nfeval.paths import ROOT  # noqa: E402


def test_overlapping_tick_labels_are_found():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xticks(range(8), [f"a long method name {i}" for i in range(8)])
    try:
        problems = layout_problems(fig)
    finally:
        plt.close(fig)
    assert problems and "overlaps" in problems[0]


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
