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

from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from nfeval.errors import NfevalError

__all__ = ["DRAW", "UNCHECKED_ROWS", "check", "checked_rows", "compare", "item_shift", "wanted"]

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


def item_shift(float32_items: str | Path, other_items: str | Path) -> dict:
    """Item-level agreement of two item files of the same judge in two dtypes (the store's
    ``<model>@<signature>.labels.jsonl``: one JSON object per item, ``k`` its key, ``v`` the
    log-probabilities of the judge's labels): on the keys both hold, each label distribution
    (softmax of ``v``) compared. Returns ``shared`` (items in both), ``mean_shift``,
    ``p95_shift`` and ``max_shift`` (per item the largest absolute change of a label's
    probability), ``flips`` (share of items whose most probable label changes) and
    ``first_vs_second_flips`` (share whose first-minus-second label difference changes sign:
    for the pairwise judge, which answer it prefers). This is how rows the table-level check
    cannot cover (:data:`UNCHECKED_ROWS`) are compared where both dtypes judged the same
    prompts, for instance lk_x02's candidate-first pairs (float32) against lk_t02's
    every-candidate store (bfloat16)."""
    import numpy as np

    from nfeval.itemfile import read_records

    def read(path) -> dict[str, list[float]]:
        p = Path(path)
        if not p.name.endswith(".labels.jsonl"):
            raise NfevalError(f"{p}: not a judge item file (<model>@<signature>.labels.jsonl)")
        out: dict[str, list[float]] = {}
        for rec in read_records(p):  # the store's reader: a line cut short by a kill skipped
            try:
                out.setdefault(rec["k"], [float(x) for x in rec["v"]])  # the first wins
            except (ValueError, TypeError) as e:
                raise NfevalError(f"{p}: item {rec['k']}: not label log-probabilities ({e})"
                                  ) from None
        return out

    a, b = read(float32_items), read(other_items)
    keys = sorted(k for k in set(a) & set(b) if len(a[k]) == len(b[k]) and len(a[k]) >= 2)
    if not keys:
        raise NfevalError(f"{float32_items} and {other_items} share no item")

    def softmax(v):
        v = np.asarray(v)
        e = np.exp(v - v.max())
        return e / e.sum()

    shift, flips, order = [], 0, 0
    for k in keys:
        pa, pb = softmax(a[k]), softmax(b[k])
        shift.append(float(np.abs(pa - pb).max()))
        flips += int(pa.argmax() != pb.argmax())
        order += int(np.sign(pa[0] - pa[1]) != np.sign(pb[0] - pb[1]))
    s = np.asarray(shift)
    return {"shared": len(keys), "mean_shift": float(s.mean()),
            "p95_shift": float(np.percentile(s, 95)), "max_shift": float(s.max()),
            "flips": flips / len(keys), "first_vs_second_flips": order / len(keys)}


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m nfeval_repro.dtype_check",
        description="Compare one judge's item files in two dtypes on the items both hold "
                    "(no model needed): how far the other dtype moves each item's label "
                    "probabilities, and how often it changes the preferred label.")
    ap.add_argument("float32_items", help="item file judged in float32 (results/<id>/items/...)")
    ap.add_argument("other_items", help="item file of the same judge in the other dtype")
    args = ap.parse_args(argv)
    try:
        r = item_shift(args.float32_items, args.other_items)
    except NfevalError as e:
        ap.error(str(e))
    print(f"{r['shared']} shared items: label probabilities move by {r['mean_shift']:.4f} on "
          f"average (95th percentile {r['p95_shift']:.4f}, max {r['max_shift']:.4f}); the most "
          f"probable label changes in {r['flips']:.3f} of items, the order of the first two "
          f"labels in {r['first_vs_second_flips']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
