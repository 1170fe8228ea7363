"""The brute force behind the claims table's labels: every row under many resampling seeds.

Every interval of the claims table is a percentile bootstrap at resampling seed 0; another
seed moves its bounds a little, and a row whose bound lies near its line can change verdict.
This command counts it instead of estimating it: it recomputes every source table from its
committed per-unit file (no model runs) under seeds 1 to 2N and writes
``results/claims/seed_check.csv``, one row per claims row with seed 0's interval and two
blocks of N seeds: how many seeds of each give another verdict than seed 0's, and which.

The claims table's labels read the first block (a row is *borderline* by resampling where at
least 5% of its seeds turn it, "other resampling seeds turn it in k of N"); the second block is
never read by a label and checks them: a label whose 95% Clopper-Pearson interval of the
check block's flip rate lies wholly on the other side of 5% disagrees, listed here (exit 1).

    python -m nfeval_repro.claim_seeds              # 2 x 100 seeds, about 8 s a seed per core
    make results/claims.csv                         # then relabel the claims table from it

Rerun it whenever a source table of the claims changes: a claims row that no longer matches
the file (its interval moved) is labelled from an estimate, and the claims notebook warns.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from nfeval_repro.paths import RESULTS


def main(argv: Sequence[str] | None = None) -> int:
    from nfeval_repro.claims import (FLIP_LABEL, SEED_CHECK_FILE, brute_force, claims_table,
                                     disagreements)

    p = argparse.ArgumentParser(prog="python -m nfeval_repro.claim_seeds",
                                description=__doc__.split("\n\n")[0],
                                epilog="Writes RESULTS/claims/seed_check.csv; exit 1 where a "
                                       "label disagrees with the check block's seeds.")
    p.add_argument("--seeds", type=int, default=100, metavar="N",
                   help="seeds per block (default 100: labels from seeds 1..100, checked on "
                        "101..200; the labels' test needs at least 100)")
    p.add_argument("--results", default=str(RESULTS), metavar="DIR",
                   help="the results folder whose tables are read (default: the checkout's)")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error(f"--seeds must be at least 1, not {args.seeds}")
    results = Path(args.results)
    if not (results / "claims.csv").is_file():
        p.error(f"{results / 'claims.csv'}: no claims table; run `make results/claims.csv`")
    print(f"recomputing every claims row under 2 x {args.seeds} resampling seeds from the "
          f"committed per-unit files (no model runs)", flush=True)
    brute = brute_force(results, seeds=args.seeds)
    out = results / SEED_CHECK_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    brute.to_csv(out, index=False, float_format="%.12g")
    table = claims_table(results, seed_check=brute)
    moved = brute[(brute["flips_label"] > 0) | (brute["flips_check"] > 0)]
    print(f"wrote {out}: {len(brute)} rows, {len(moved)} turned by at least one seed")
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        if len(moved):
            print(moved[["claim", "dataset", "comparison", "flips_label", "flips_check"]]
                  .to_string(index=False))
        bad = disagreements(table, brute)
        if len(bad):
            print(f"\n{len(bad)} label(s) the check block contradicts (threshold "
                  f"{FLIP_LABEL:g}):")
            print(bad.to_string(index=False))
            return 1
    print(f"every label agrees with the check block's {args.seeds} seeds; run `make "
          f"results/claims.csv` to relabel the committed table from the label block")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
