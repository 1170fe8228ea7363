"""Compare a rerun's results tables with another checkout's (the cross-machine check).

    python scripts/compare_results.py RERUN COMMITTED [--tolerance 1e-4]

RERUN and COMMITTED are checkouts (or output folders) holding ``results/<id>.csv``.
Every table of COMMITTED must exist in RERUN with the same columns and rows; numeric
cells may differ by at most the tolerance (NaN only where NaN), other cells not at all.
Prints one line per table and exits 1 when any table differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def compare(rerun: Path, committed: Path, tolerance: float = 1e-4) -> list[str]:
    """One line per committed table; lines of differing tables start with 'DIFFERS'."""
    lines = []
    for path in sorted((committed / "results").glob("*.csv")):
        other = rerun / "results" / path.name
        if not other.exists():
            lines.append(f"DIFFERS {path.name}: missing in the rerun")
            continue
        a, b = pd.read_csv(other), pd.read_csv(path)
        if list(a.columns) != list(b.columns) or len(a) != len(b):
            lines.append(f"DIFFERS {path.name}: shape {a.shape} against {b.shape}")
            continue
        cells, worst = 0, 0.0
        for col in b.columns:
            if pd.api.types.is_numeric_dtype(a[col]) and pd.api.types.is_numeric_dtype(b[col]):
                x, y = a[col].to_numpy(float), b[col].to_numpy(float)
                nan_x, nan_y = np.isnan(x), np.isnan(y)
                gap = np.abs(x - y)[~nan_x & ~nan_y]
                cells += int((nan_x != nan_y).sum()) + int((gap > tolerance).sum())
                worst = max(worst, float(gap.max()) if gap.size else 0.0)
            else:
                cells += int((a[col].fillna("").astype(str) != b[col].fillna("").astype(str)).sum())
        lines.append(f"{'DIFFERS ' if cells else ''}{path.name}: "
                     f"{f'{cells} cells differ' if cells else 'same'} (largest numeric gap {worst:.2g})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rerun", type=Path)
    parser.add_argument("committed", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args(argv)
    lines = compare(args.rerun, args.committed, args.tolerance)
    print("\n".join(lines))
    bad = sum(line.startswith("DIFFERS") for line in lines)
    print(f"{len(lines)} tables, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
