"""The README's generated blocks, written from the committed results (``make readme``).

A block sits between ``<!-- BEGIN <name> -->`` and ``<!-- END <name> -->``;
everything else in the README is left as it is. Blocks:

* ``claims-summary`` -- :func:`nfeval.claims.summary`: one line per claim and dataset;
* ``claims`` -- :func:`nfeval.claims.markdown` of ``results/claims.csv``;
* ``artefacts`` -- :func:`nfeval.artefacts.readme_table`, the catalogue's rows.

    python -m nfeval.readme README.md           # rewrite the blocks in place
    python -m nfeval.readme README.md --check   # exit 1 if a block is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from nfeval import NfevalError
from nfeval.paths import RESULTS


def blocks(results: Path = RESULTS) -> dict[str, str]:
    """Each block's text, from the committed results."""
    import pandas as pd

    from nfeval.artefacts import readme_table
    from nfeval.claims import markdown, summary

    path = Path(results) / "claims.csv"
    if not path.is_file():
        raise NfevalError(f"{path} is missing: run `make results/claims.csv` first.")
    table = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return {"claims-summary": summary(table), "claims": markdown(table),
            "artefacts": readme_table()}


def render(text: str, new: dict[str, str]) -> str:
    """``text`` with every block of ``new`` replaced; a block the text lacks is an error."""
    for name, body in new.items():
        pat = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        if not pat.search(text):
            raise NfevalError(f"the README has no block {name!r} (<!-- BEGIN {name} --> ... "
                              f"<!-- END {name} -->)")
        text = pat.sub(lambda m: m.group(1) + body + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nfeval.readme", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("readme", type=Path)
    ap.add_argument("--check", action="store_true", help="only say whether a block is stale")
    args = ap.parse_args(argv)
    try:
        old = args.readme.read_text(encoding="utf-8")
        new = render(old, blocks())
    except (OSError, NfevalError) as exc:
        print(f"nfeval.readme: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            print(f"{args.readme}: generated blocks are out of date; run `make readme`")
            return 1
        return 0
    if new != old:
        args.readme.write_text(new, encoding="utf-8")
        print(f"{args.readme}: generated blocks rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
