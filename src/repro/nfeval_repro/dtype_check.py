"""The dtype check of a table whose LLM judge ran in another dtype than float32.

``make evidence``'s every-candidate stages run the judge in bfloat16 (the fast path on CPUs with
AMX). Where the committed float32 items lie (the first stages' draw of 8 candidates per
question) the same table can be computed in both dtypes from the store; the difference of each
row's estimate is what the dtype moved it by. An artefact writes it as its ``dtype_check``
frame, and the claims table reads a row *borderline* where its bound lies closer to the line
than that (:func:`nfeval_repro.claims.row_verdict`). Measured on lk_t02 (all 53 TREC-DL-NF
questions): LINKAGE rows within 0.005, pointwise rows and LINKAGE minus pointwise up to 0.016
(``python benchmarks/bench.py --kernels judge_table --table-from-store``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from nfeval import NfevalError

__all__ = ["DRAW", "UNCHECKED_ROWS", "check", "checked_rows", "compare", "wanted"]

#: Candidates per question of the draw whose float32 items are committed.
DRAW = 8
#: Judge rows with no float32 items on that draw (pairwise with the candidate first: only
#: lk_x02's first questions hold them): such a row is not checked.
UNCHECKED_ROWS = ("pairwise-release",)


def wanted(judge_dtype: str, enabled: bool) -> bool:
    """Whether a run with ``judge_dtype`` (empty: the profile's float32) writes a dtype check."""
    return bool(enabled and judge_dtype and judge_dtype != "float32")


def checked_rows(rows: Sequence[str]) -> list[str]:
    """The judge rows of ``rows`` a dtype check compares (not :data:`UNCHECKED_ROWS`)."""
    return [r for r in rows if r not in UNCHECKED_ROWS]


def compare(float32: pd.DataFrame, other: pd.DataFrame, *, keys: Sequence[str],
            dtype: str) -> pd.DataFrame:
    """The two tables' rows side by side on ``keys`` (the paper judges' duplicate rows once):
    ``n_questions``, ``ours``, ``ci_low``, ``ci_high`` with suffixes ``_float32`` and
    ``_table``, ``dtype`` and ``shift`` (the table's estimate minus float32's). The same rows
    in both, or an error."""
    keys = list(keys)
    cols = [*keys, "n_questions", "ours", "ci_low", "ci_high"]
    a, b = float32[cols].drop_duplicates(keys), other[cols].drop_duplicates(keys)
    out = a.merge(b, on=keys, suffixes=("_float32", "_table"))
    if len(out) != len(a) or len(out) != len(b):
        raise NfevalError("the dtype check's two tables have different rows")
    return out.assign(dtype=dtype, shift=out["ours_table"] - out["ours_float32"])


def check(table_in: Callable[[str], pd.DataFrame], dtype: str, *,
          keys: Sequence[str]) -> pd.DataFrame:
    """:func:`compare` of ``table_in("float32")`` and ``table_in(dtype)``: an artefact's table
    on the :data:`DRAW`-candidate draw, computed in each dtype."""
    return compare(table_in("float32"), table_in(dtype), keys=keys, dtype=dtype)
