"""The ``nfeval`` command line.

    nfeval data status              where every release file resolves from
    nfeval data fetch NAME [...]    resolve (mirror, cache or download) and verify
    nfeval models list              known model names (embedded and paper)
    nfeval models prepare NAME      assemble/convert an embedded model into the cache
    nfeval artefacts                the paper artefacts this checkout reproduces

Every error meant for a user exits with status 2 and one line saying what
is wrong and how to fix it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from nfeval import NfevalError, __version__

EPILOG = """\
Environment:
  NFEVAL_MIRROR   folder with the release files in the same layout as the
                  project's shared/data (linkage/, debateqa/, prompts/)
  NFEVAL_CACHE    user cache (default ~/.cache/nfeval): downloads, converted models
  NFEVAL_OFFLINE  set to 1 to never download
"""


def _data_status(args: argparse.Namespace) -> int:
    from nfeval.data import status

    rows = status()
    width = max(len(r.name) for r in rows)
    for r in rows:
        ok = {True: "verified", False: "CHECKSUM MISMATCH", None: "unverified"}[r.verified]
        where = str(r.path) if r.path else r.detail
        print(f"{r.name:<{width}}  {r.source:<8}  {ok if r.path else '':<17}  {where}")
    missing = [r.name for r in rows if r.source in ("missing", "bad")]
    if missing:
        print(f"\n{len(missing)} file(s) not available locally: {', '.join(missing)}. "
              "Set NFEVAL_MIRROR, or run `nfeval data fetch NAME` where the internet is reachable.")
    return 0


def _data_fetch(args: argparse.Namespace) -> int:
    from nfeval.data import names, resolve

    targets = names() if args.all else args.names
    if not targets:
        raise NfevalError("name at least one file (see `nfeval data status`) or pass --all")
    for name in targets:
        print(f"{name}: {resolve(name)}")
    return 0


def _models_list(args: argparse.Namespace) -> int:
    from nfeval.models.registry import list_models

    for spec in list_models():
        print(f"{spec.name:<40} {spec.kind:<20} {spec.source}")
    return 0


def _models_prepare(args: argparse.Namespace) -> int:
    from nfeval.models.registry import list_models, minilm_path, prepare

    names = [s.name for s in list_models() if s.kind.startswith("embedded")] if args.all else args.names
    if not names:
        raise NfevalError("name a model (see `nfeval models list`) or pass --all")
    for name in names:
        path = minilm_path() if name == "minilm-l6" else prepare(name)
        print(f"{name}: {path}")
    return 0


def _artefacts(args: argparse.Namespace) -> int:
    from nfeval.artefacts import ARTEFACTS

    for a in ARTEFACTS:
        print(f"{a.id:<16} {a.paper:<9} {a.target:<28} notebooks/{a.notebook}  ({a.item})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nfeval",
        description="Evaluate long-form answers with DebateQA (P.D., D.A.) and LINKAGE, "
                    "and reproduce both papers' tables.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nfeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    data = sub.add_parser("data", help="release files: where they are, fetch and verify")
    dsub = data.add_subparsers(dest="action", metavar="ACTION", required=True)
    dsub.add_parser("status", help="where every release file resolves from (nothing is downloaded)"
                    ).set_defaults(func=_data_status)
    fetch = dsub.add_parser("fetch", help="resolve files (mirror, cache, else download) and verify sums")
    fetch.add_argument("names", nargs="*", help="registry names, e.g. antique trec-dl-nf")
    fetch.add_argument("--all", action="store_true", help="every registry entry")
    fetch.set_defaults(func=_data_fetch)

    models = sub.add_parser("models", help="model registry: list, prepare embedded models")
    msub = models.add_subparsers(dest="action", metavar="ACTION", required=True)
    msub.add_parser("list", help="known model names and where they come from"
                    ).set_defaults(func=_models_list)
    prep = msub.add_parser("prepare", help="assemble and convert embedded models into the cache (once)")
    prep.add_argument("names", nargs="*", help="e.g. smollm2-135m-instruct")
    prep.add_argument("--all", action="store_true", help="every embedded model")
    prep.set_defaults(func=_models_prepare)

    sub.add_parser("artefacts", help="paper artefacts, notebooks and make targets"
                   ).set_defaults(func=_artefacts)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except NfevalError as err:
        print(f"nfeval: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nfeval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
