"""Figures with their uncertainty: every bar carries its 95% interval and its n.

:func:`interval_bars` draws a results table in long form (``ours``,
``ci_low``, ``ci_high``, ``n_<unit>``, optionally ``paper``) as grouped bars
with error bars from the interval, the number of resampled units printed
under each group, and the paper's value as a black marker where it exists.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Text sizes (points) of the claims' and the experiments' figures, at :data:`FIGURE_WIDTH`
#: inches: shown at a screen column's 880 px, the smallest is 12 px tall.
FONT = {"tick": 8, "label": 8, "legend": 8, "suptitle": 10}
FIGURE_WIDTH = 8.0

__all__ = ["BarStyle", "DATASET_NAMES", "display_name", "interval_bars", "interval_errors",
           "paper_differences", "short_names"]

#: Each dataset id as the figures and the claims' summaries print it.
DATASET_NAMES = {"antique": "ANTIQUE", "trec-dl-nf": "TREC-DL-NF", "webglm": "WebGLM",
                 "debateqa sample": "the DebateQA sample"}

#: Table row ids shown under the name ``nfeval linkage --method`` gives the same method:
#: the tables keep ``pointwise-noref`` (beside ``pointwise-ref``), the command line says
#: ``pointwise``.
DISPLAY_NAMES = {"pointwise-noref": "pointwise"}
_DISPLAY = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, DISPLAY_NAMES)) + r")(?![\w-])")


def display_name(value: Any) -> str:
    """``value`` as a figure shows it: every table row id in it that the command line spells
    otherwise (:data:`DISPLAY_NAMES`) replaced by the command line's name."""
    return _DISPLAY.sub(lambda m: DISPLAY_NAMES[m.group(1)], str(value))


@dataclass(frozen=True)
class BarStyle:
    """How :func:`interval_bars` draws its bars and texts (the table's columns aside)."""

    #: the hues' colours, in hue order (cycled); None: matplotlib's ``C0``, ``C1``, ...
    colors: Sequence[str] | None = None
    #: the legend text of the paper's marker (a black diamond)
    paper_label: str = "paper"
    #: turns a group's value into its tick text, above the ``n=`` line (e.g. long method
    #: names on several lines)
    label: Callable[[Any], str] = str
    #: within a group only the hues that have a row take a slot (centred on the tick), so a
    #: group with fewer bars shows no empty slots; colours stay those of the hue
    compact: bool = False


def interval_bars(ax, table: pd.DataFrame, *, x: str, hue: str | None = None,
                  n: str = "n_questions", paper: str | None = "paper",
                  order: Sequence | None = None, hue_order: Sequence | None = None,
                  ylabel: str = "", style: BarStyle = BarStyle()) -> None:
    """Grouped bars of ``ours`` with ``ci_low``..``ci_high`` error bars (one bar per row),
    drawn as ``style`` says.

    ``x`` names the column whose values are the groups on the x axis (in
    ``order``), ``hue`` the column whose values sit side by side within a group.
    Each group's tick label gets ``n=`` (the ``n`` column; a range when the
    bars of a group rest on different n) below the group's text (``style.label``); tick
    and legend texts show methods by their command-line names (:func:`display_name`).
    Rows with a ``paper`` value get a black diamond at it. A bar too short to see (under 1%
    of the y range) gets a short thick line in its colour at its value, and a row whose
    estimate is undefined (NaN) an "n/a" in its slot, so neither reads as a missing row.
    ``ylabel``: the y axis's label (empty: none).
    """
    order = list(order) if order is not None else list(dict.fromkeys(table[x]))
    hues = ([None] if hue is None else
            (list(hue_order) if hue_order is not None else list(dict.fromkeys(table[hue]))))
    width = 0.8 / len(hues)
    palette = style.colors or [f"C{i}" for i in range(len(hues))]
    labels_done: set = set()
    has = set(zip(table[x], [None] * len(table) if hue is None else table[hue]))
    present = {xv: [hv for hv in hues if (xv, hv) in has] for xv in order}
    small: list[tuple[float, float, float, str]] = []
    for hi, hv in enumerate(hues):
        part = table if hue is None else table[table[hue] == hv]
        for xi, xv in enumerate(order):
            row = part[part[x] == xv]
            if row.empty:
                continue
            r = row.iloc[0]
            if style.compact:
                k, slots = present[xv].index(hv), len(present[xv])
                pos = xi + (k - (slots - 1) / 2) * width
            else:
                pos = xi - 0.4 + width * (hi + 0.5)
            est, lo, hi_ = float(r["ours"]), float(r["ci_low"]), float(r["ci_high"])
            small.append((pos, est, width * 0.92, palette[hi % len(palette)]))
            err = None
            if not (math.isnan(lo) or math.isnan(hi_)):
                err = np.array([[max(est - lo, 0.0)], [max(hi_ - est, 0.0)]])
            lab = None if hv in labels_done else (display_name(hv) if hv is not None else None)
            labels_done.add(hv)
            ax.bar(pos, est, width * 0.92, color=palette[hi % len(palette)], label=lab,
                   yerr=err, capsize=2, error_kw={"lw": 0.8})
            if paper and paper in row.columns and not pd.isna(r[paper]):
                pl = style.paper_label if "paper" not in labels_done else None
                labels_done.add("paper")
                ax.plot(pos, float(r[paper]), marker="D", color="black", ms=4, ls="",
                        label=pl, zorder=5)
    ticks = []
    for xv in order:
        ns = table.loc[table[x] == xv, n].dropna().astype(int) if n in table.columns else []
        name = display_name(style.label(xv))
        if len(ns) == 0:
            ticks.append(name)
        elif ns.min() == ns.max():
            ticks.append(f"{name}\nn={ns.min()}")
        else:
            ticks.append(f"{name}\nn={ns.min()}-{ns.max()}")
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels(ticks, fontsize=7, rotation=0)
    ax.axhline(0, color="grey", lw=0.5)
    y0, y1 = ax.get_ylim()
    for pos, est, w, color in small:
        if math.isnan(est):
            ax.text(pos, 0, "n/a", ha="center", va="bottom", fontsize=7, color="dimgrey",
                    rotation=90)
        elif abs(est) < 0.01 * (y1 - y0):  # a bar this short is invisible: mark its value
            ax.hlines(est, pos - w / 2, pos + w / 2, colors=color, lw=2.5, zorder=4)
    if ylabel:
        ax.set_ylabel(ylabel)


def paper_differences(table: pd.DataFrame, *, label: str, keys: Sequence[str],
                      paper: str = "paper") -> pd.DataFrame:
    """``table`` with each difference row's ``paper`` set to the paper's margin: a row of
    ``kind`` "difference" whose ``label`` reads ``"A - B"`` gets the paper value of the mean
    row ``A`` minus that of ``B`` (the same ``keys``), so a panel of our paired differences
    can mark the paper's beside them. Where either paper value is missing, or more than one
    mean row matches (filter the paper's judge first), the margin stays empty."""
    means = table[(table["kind"] == "mean") & table[paper].notna()]
    found: dict[tuple, list[float]] = {}
    for _, r in means.iterrows():
        found.setdefault((str(r[label]), *(str(r[k]) for k in keys)), []).append(float(r[paper]))

    def margin(r: pd.Series) -> float:
        if r["kind"] != "difference":
            return r[paper]
        sides = str(r[label]).split(" - ")
        if len(sides) != 2:
            return math.nan
        rest = tuple(str(r[k]) for k in keys)
        a, b = found.get((sides[0], *rest), []), found.get((sides[1], *rest), [])
        return a[0] - b[0] if len(a) == 1 and len(b) == 1 else math.nan

    out = table.copy()
    out[paper] = [margin(r) for _, r in table.iterrows()]
    return out


def interval_errors(centre: pd.Series, low: pd.Series, high: pd.Series) -> list[pd.Series]:
    """``yerr``/``xerr`` for ``ax.errorbar``: the lengths below and above ``centre``.

    An undefined interval (one question: NaN bounds) draws no bar.
    """
    return [(centre - low).fillna(0).clip(lower=0), (high - centre).fillna(0).clip(lower=0)]


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Distinct short labels for model names: the first dash-separated part, plus the parts
    that tell apart the names sharing it (``qwen2.5-coder-0.5b-instruct`` and
    ``qwen2.5-coder-1.5b-instruct`` -> ``qwen2.5 0.5b``, ``qwen2.5 1.5b``)."""
    names = list(dict.fromkeys(names))
    parts = {n: n.split("-") for n in names}
    out = {}
    for n in names:
        same = [m for m in names if parts[m][0] == parts[n][0]]
        own = [t for t in parts[n][1:] if not all(t in parts[m] for m in same)]
        out[n] = " ".join([parts[n][0], *own])
    return out
