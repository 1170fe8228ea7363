"""The generated blocks of README.md and the pages under docs/, written from the committed
results (``make readme``).

A block sits between ``<!-- BEGIN <name> -->`` and ``<!-- END <name> -->``;
everything else in a page is left as it is. Blocks (:data:`PAGES` says which page has which):

* ``claims-summary`` (README) -- :func:`nfeval_repro.claims.summary`: one line per claim and dataset;
* ``artefacts`` (docs/artefacts.md) -- :func:`nfeval_repro.artefacts.readme_table`, the catalogue's
  rows;
* ``claims`` (docs/claims.md) -- :func:`nfeval_repro.claims.markdown` of ``results/claims.csv``;
* ``stages`` (docs/results/evidence_stages.md) -- :func:`nfeval_repro.evidence.cost_table` of
  ``results/evidence/stages.csv``: what each finished stage of ``make evidence`` cost.

    python -m nfeval_repro.readme README.md           # rewrite the blocks in place
    python -m nfeval_repro.readme README.md --check   # exit 1 if a block is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nfeval.errors import NfevalError
from nfeval_repro.paths import RESULTS
from nfeval_repro.pageblocks import render


#: The pages with generated blocks (relative to the README's folder) and their blocks.
PAGES = {"README.md": ("claims-summary",), "docs/artefacts.md": ("artefacts",),
         "docs/claims.md": ("claims",), "docs/results/evidence_stages.md": ("stages",)}


def blocks(results: Path = RESULTS) -> dict[str, str]:
    """Each block's text, from the committed results."""
    import pandas as pd

    from nfeval_repro.artefacts import readme_table
    from nfeval_repro.claims import markdown, summary
    from nfeval_repro.evidence import LOG, cost_table, read_log

    path = Path(results) / "claims.csv"
    if not path.is_file():
        raise NfevalError(f"{path} is missing: run `make results/claims.csv` first.")
    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return {"claims-summary": summary(table), "claims": markdown(table),
            "artefacts": readme_table(), "stages": cost_table(read_log(Path(results) / LOG))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nfeval_repro.readme", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("readme", type=Path)
    ap.add_argument("--check", action="store_true", help="only say whether a block is stale")
    args = ap.parse_args(argv)
    try:
        every = blocks()
        pages = []
        for name, names in PAGES.items():
            path = args.readme if name == "README.md" else args.readme.parent / name
            old = path.read_text(encoding="utf-8")
            pages.append((path, old, render(old, {k: every[k] for k in names})))
    except (OSError, NfevalError) as exc:
        print(f"nfeval_repro.readme: {exc}", file=sys.stderr)
        return 2
    stale = [path for path, old, new in pages if new != old]
    if args.check:
        for path in stale:
            print(f"{path}: generated blocks are out of date; run `make readme`")
        return 1 if stale else 0
    for path, old, new in pages:
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(f"{path}: generated blocks rewritten")
    return 0

if __name__ == "__main__":
    sys.exit(main())
