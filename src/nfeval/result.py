"""What the Python API returns: a :class:`Result` (and how it takes a model argument).

Three functions, one per method family, each taking plain Python data::

    import nfeval

    res = nfeval.linkage.score(
        questions=["Why is the sky blue?"],
        candidates=[["Rayleigh scattering of sunlight.", "Because it reflects the sea."]],
        references=[["Sunlight scatters off air molecules; blue scatters most.",
                     "The air scatters blue light.", "It just is."]],
        grades=[[2, 0]], method="rougeL")
    res.score            # mean score with its 95% interval (Interval)
    res.to_frame()       # one row per candidate
    res.summary()        # a JSON-ready dict (what ``--summary PATH`` writes)

* ``nfeval.linkage.score`` (:func:`nfeval.linkage.api.linkage_score`): LINKAGE
  and its baselines;
* ``nfeval.debateqa.perspective_diversity`` and ``nfeval.debateqa.dispute_awareness``
  (:mod:`nfeval.debateqa.api`): P.D. and D.A.

The ``nfeval linkage|pd|da`` commands read files into the same calls and print
the same :class:`Result`. Input problems raise :class:`~nfeval.NfevalError`
naming every bad entry, before any model is loaded.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.version import __version__
from nfeval.metrics.intervals import Interval, small_n_warning

__all__ = ["Result", "json_number", "write_json"]


def json_number(x: Any) -> Any:
    """A JSON-safe number: NaN becomes None, numpy scalars plain Python."""
    if x is None:
        return None
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


@dataclass
class Result:
    """A scored run: per-item table, the mean score with its interval, the signature.

    ``score`` is an :class:`~nfeval.metrics.intervals.Interval` (mean, 95%
    bootstrap bounds, n and the resampled unit: questions for LINKAGE, whose
    candidates of one question are resampled together; answers for P.D. and
    D.A.). ``correlations`` holds, where the items carry human grades, the
    per-question correlation with them averaged over questions, with its
    interval (LINKAGE's protocol). ``skipped`` lists input left out, each
    with its line or position.
    """

    metric: str
    label: str
    table: pd.DataFrame
    column: str
    item_unit: str
    score: Interval
    signature: Any  # nfeval.signature.Signature
    correlations: pd.DataFrame | None = None
    skipped: list[str] = field(default_factory=list)
    n_questions: int = 0
    source: str = "<memory>"
    lower_is_better: bool = False

    # ------------------------------------------------------------------ counts
    @property
    def n_items(self) -> int:
        return len(self.table)

    @property
    def n_scored(self) -> int:
        return int(self.table[self.column].notna().sum())

    @property
    def n_unparsed(self) -> int:
        if "unparsed" in self.table:
            return int(self.table["unparsed"].astype(bool).sum())
        return self.n_items - self.n_scored

    @property
    def n_flagged(self) -> int:
        """Items whose text addresses an evaluator or imitates a verdict (:mod:`nfeval.guard`)."""
        if "flags" not in self.table:
            return 0
        return int(self.table["flags"].fillna("").astype(str).str.len().gt(0).sum())

    def flagged_line(self) -> str:
        """"2 candidates flagged as addressing the judge (column flags)", or ""."""
        n = self.n_flagged
        if not n:
            return ""
        return f"{count(n, self.item_unit)} flagged as addressing the judge (column flags)"

    @property
    def cut(self) -> tuple[int, int]:
        """(items cut to fit the judge's window, tokens cut in all)."""
        if "cut_tokens" not in self.table:
            return 0, 0
        c = self.table["cut_tokens"].fillna(0)
        return int((c > 0).sum()), int(c.sum())

    def to_frame(self) -> pd.DataFrame:
        """The per-item table (a copy): one row per candidate or answer."""
        return self.table.copy()

    # ------------------------------------------------------------------ reports
    def summary(self) -> dict[str, Any]:
        """The run summary as a JSON-ready dict (``--summary PATH`` writes it)."""
        iv = self.score
        corr = []
        if self.correlations is not None:
            for r in self.correlations.itertuples():
                corr.append({"coefficient": r.coefficient, "mean": json_number(r.ours),
                             "ci_low": json_number(r.ci_low), "ci_high": json_number(r.ci_high),
                             "n_questions": json_number(r.n_questions),
                             "n_undefined": json_number(r.n_skipped_undefined),
                             "n_candidates": json_number(r.n_candidates),
                             "warning": small_n_warning(int(r.n_questions)).strip(" ()")
                             or None})
        cut_items, cut_tokens = self.cut
        sig = self.signature
        return {
            "nfeval": __version__,
            "metric": self.metric,
            "label": self.label,
            "input": self.source,
            "score": {"mean": json_number(iv.estimate), "ci_low": json_number(iv.low),
                      "ci_high": json_number(iv.high), "confidence": 0.95, "n": iv.n,
                      "unit": iv.unit, "interval": iv.method,
                      "lower_is_better": self.lower_is_better,
                      "warning": small_n_warning(iv.n, iv.unit).strip(" ()") or None},
            "items": {"unit": self.item_unit, "total": self.n_items, "scored": self.n_scored,
                      "unparsed": self.n_unparsed, "cut": cut_items, "cut_tokens": cut_tokens,
                      "flagged": self.n_flagged},
            "questions": self.n_questions,
            "correlations_with_grades": corr,
            "skipped": {"count": len(self.skipped), "entries": list(self.skipped)},
            "signature": sig.as_string() if sig is not None else None,
            "signature_fields": sig.as_dict() if sig is not None else None,
        }

    def write_summary(self, path: str | Path, **extra: Any) -> Path:
        """Write :meth:`summary` (plus ``extra`` keys) as JSON; returns the path."""
        return write_json(path, {**self.summary(), **extra})

    def score_line(self) -> str:
        """``mean (95% CI low to high, n unit)`` with the small-n warning."""
        iv = self.score
        if iv.n == 0:
            return "no score"
        if math.isnan(iv.low):
            return (f"{iv.estimate:.6g} (no interval: {count(iv.n, iv.unit)}; an interval needs "
                    "at least 2, and fewer than 10 cannot be trusted)")
        return (f"{iv.estimate:.6g} (95% CI {iv.low:.6g} to {iv.high:.6g}, {iv.n} {iv.unit})"
                f"{small_n_warning(iv.n, iv.unit)}")

    def correlation_lines(self) -> list[str]:
        """One line per coefficient of the correlation with the human grades."""
        if self.correlations is None:
            return []
        out = []
        for r in self.correlations.itertuples():
            ci = ("no interval" if math.isnan(r.ci_low) else
                  f"95% CI {r.ci_low:.3f} to {r.ci_high:.3f}")
            out.append(f"{r.coefficient} with the human grades: {r.ours:.3f} ({ci}; "
                       f"{count(int(r.n_questions), 'questions')}, {r.n_skipped_undefined} "
                       f"undefined, {count(int(r.n_candidates), 'candidates')})"
                       f"{small_n_warning(int(r.n_questions)) if not math.isnan(r.ci_low) else ''}")
        return out

    def __repr__(self) -> str:
        return (f"Result({self.label}: {self.score_line()}; {self.n_scored} of "
                f"{self.n_items} {self.item_unit} scored)")


def count(n: int, unit: str) -> str:
    """``n unit`` with the unit singular for one ("1 question", "2 questions")."""
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def write_json(path: str | Path, data: Any) -> Path:
    """``data`` as indented JSON at ``path``; an unwritable path is an :class:`NfevalError`."""
    p = Path(path).expanduser()
    try:
        p.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as e:
        raise NfevalError(f"cannot write the summary {p}: {e.strerror or e}") from e
    return p
