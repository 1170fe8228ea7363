"""Figures a person can read: no two pieces of text drawn over each other, no figure much
taller than wide.

:func:`layout_problems` draws a matplotlib figure and lists what a reader would stumble on:
text boxes (titles, the suptitle, axis labels, tick labels, legend and annotation texts) that
overlap one another, and a height more than :data:`MAX_HEIGHT_RATIO` times the width.
:func:`nfeval_repro.tables.save_figure` runs it on every figure it saves and prints what it finds;
with ``NFEVAL_FIGURE_CHECK=1`` (the test suite sets it) it raises instead, so a notebook test
fails on a figure with overlapping text.
"""

from __future__ import annotations

import os

__all__ = ["CHECK_ENV", "MAX_HEIGHT_RATIO", "SCREEN_PX", "FigureLayoutError", "check",
           "layout_problems", "smallest_text_on_screen"]

CHECK_ENV = "NFEVAL_FIGURE_CHECK"
#: The tallest figure, as height over width, that reads at a page's width.
MAX_HEIGHT_RATIO = 2.0
#: The width, in pixels, a figure is shown at in a README or notebook column on a screen.
SCREEN_PX = 880
#: Overlap (in pixels, each way) that counts: anti-aliased edges touching are not one.
_SLACK = 1.0


class FigureLayoutError(AssertionError):
    """A figure with text drawn over text, or too tall to read."""


def _undrawn_tick_labels(fig) -> set[int]:
    """Tick labels matplotlib keeps but does not draw (ticks outside the view limits)."""
    drawn, every = set(), set()
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                every.update((id(tick.label1), id(tick.label2)))
            try:
                shown = axis._update_ticks()  # the ticks drawn: those inside the view
            except Exception:  # noqa: BLE001 -- a private API; without it, check them all
                return set()
            for tick in shown:
                drawn.update((id(tick.label1), id(tick.label2)))
    return every - drawn


def _texts(fig):
    """Every visible, non-empty text the figure draws."""
    from matplotlib.text import Text

    skip = _undrawn_tick_labels(fig)
    # a hidden panel draws none of its texts (its tick labels do not name their axes)
    skip |= {id(t) for ax in fig.get_axes() if not ax.get_visible() for t in ax.findobj(Text)}
    out = []
    for t in fig.findobj(Text):
        if id(t) in skip or not t.get_visible() or not t.get_text().strip():
            continue
        if t.get_figure() is None or (t.axes is not None and not t.axes.get_visible()):
            continue
        out.append(t)
    return out


def _overlap(a, b) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > _SLACK
            and min(a.y1, b.y1) - max(a.y0, b.y0) > _SLACK)


def layout_problems(fig) -> list[str]:
    """What is wrong with the figure's layout (empty: nothing)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    w, h = fig.get_size_inches()
    if h > MAX_HEIGHT_RATIO * w:
        problems.append(f"the figure is {h:.1f} in tall and {w:.1f} in wide (more than "
                        f"{MAX_HEIGHT_RATIO:g}:1); split it or link it")
    texts = _texts(fig)
    boxes = []
    for t in texts:
        try:
            bb = t.get_window_extent(renderer)
        except (RuntimeError, ValueError):
            continue
        if bb.width > 0 and bb.height > 0:
            boxes.append((t, bb))
    seen = 0
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            (ta, a), (tb, b) = boxes[i], boxes[j]
            if _overlap(a, b):
                problems.append(f"text {ta.get_text()[:40]!r} overlaps {tb.get_text()[:40]!r}")
                seen += 1
                if seen >= 10:
                    return problems + ["(more overlaps not listed)"]
    return problems


def check(fig, name: str) -> list[str]:
    """:func:`layout_problems`, printed; raised as :class:`FigureLayoutError` when
    ``NFEVAL_FIGURE_CHECK=1``."""
    problems = layout_problems(fig)
    if problems:
        text = f"figure {name}: " + "; ".join(problems)
        if os.environ.get(CHECK_ENV) == "1":
            raise FigureLayoutError(text)
        import sys

        print(f"nfeval: layout: {text}", file=sys.stderr)
    return problems


def smallest_text_on_screen(fig, screen_px: int = SCREEN_PX,
                            dpi: int = 150) -> tuple[float, str]:
    """The height in screen pixels of the figure's smallest text when the saved figure (its
    tight bounding box at ``dpi``, as :func:`nfeval_repro.tables.save_figure` writes it) is
    shown at most ``screen_px`` wide, and that text. A figure 18 inches wide with 5.5-point
    labels shows them under 4 px tall: unreadable without zooming."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width
    shown = min(screen_px, width_in * dpi)  # a narrower image is shown at its own size
    scale = shown / (width_in * 72.0)  # screen px per point
    texts = _texts(fig)
    if not texts:
        return float("inf"), ""
    t = min(texts, key=lambda t: t.get_fontsize())
    return t.get_fontsize() * scale, t.get_text()
