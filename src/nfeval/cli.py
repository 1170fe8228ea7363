"""The ``nfeval`` command line.

    nfeval data status              where every release file resolves from
    nfeval data fetch NAME [...]    resolve (mirror, cache or download) and verify
    nfeval models list              known model names (embedded and paper)
    nfeval models prepare NAME      assemble/convert an embedded model into the cache
    nfeval artefacts                the paper artefacts this checkout reproduces
    nfeval pd --answers F --split S --model M      DebateQA Perspective Diversity
    nfeval da --answers F --split S --judge M      DebateQA Dispute Awareness

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


def _load(name: str, args: argparse.Namespace):
    from nfeval.models import load_model

    kwargs = {}
    if args.backend == "openai":
        if not args.base_url:
            raise NfevalError("--backend openai needs --base-url (e.g. http://127.0.0.1:8000/v1)")
        kwargs = {"base_url": args.base_url, "chat_template": args.chat_template}
    elif args.dtype:
        kwargs = {"dtype": args.dtype}
    return load_model(name, backend=args.backend, **kwargs)


def _report(inputs, table, column: str, label: str, out: str | None) -> int:
    from nfeval.scoring import mean_score

    for line in inputs.skipped:
        print(f"nfeval: skipped {line}", file=sys.stderr)
    out_path = out or f"{inputs.answers_path.stem}.{column}.csv"  # in the current folder
    table.to_csv(out_path, index=False, float_format="%.6g", lineterminator="\n")
    mean, unparsed = mean_score(table[column])
    extra = f" ({unparsed} unparsed)" if unparsed else ""
    print(f"File: {inputs.answers_path}, Average {label} score: {mean}{extra}")
    print(f"per-answer scores: {out_path} ({len(table)} answers, {len(inputs.skipped)} skipped)",
          file=sys.stderr)
    return 0


def _pd(args: argparse.Namespace) -> int:
    from nfeval.scoring import prepare_inputs, score_pd

    inputs = prepare_inputs(args.answers, args.split)
    model = _load(args.model, args)
    table = score_pd(inputs, model, variant=args.variant, restate=args.restate,
                     use_cache=not args.no_cache)
    return _report(inputs, table, "pd", "P.D.", args.out)


def _da(args: argparse.Namespace) -> int:
    from nfeval.scoring import prepare_inputs, score_da

    inputs = prepare_inputs(args.answers, args.split)
    judge = _load(args.judge, args)
    table = score_da(inputs, judge, mode=args.mode, zero_shot=args.zero_shot,
                     use_cache=not args.no_cache)
    return _report(inputs, table, "da", "D.A.", args.out)


def _scoring_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--answers", required=True, metavar="FILE.jsonl",
                   help='model answers, one JSON object a line: {"generation": str, "id": int}')
    p.add_argument("--split", default="test", metavar="test|dev|sample|PATH",
                   help="questions with partial answers: the DebateQA test or dev split, the "
                        "project's sample, or a file in the release's split format (default: test)")
    p.add_argument("--backend", choices=["hf", "openai"], default="hf",
                   help="hf: transformers in this process; openai: an OpenAI-compatible server")
    p.add_argument("--base-url", help="server URL for --backend openai")
    p.add_argument("--chat-template", help="for --backend openai: tokenizer folder or model name "
                                          "whose chat template renders prompts, or 'none'")
    p.add_argument("--dtype", help="hf backend dtype: auto (default), float32, bfloat16")
    p.add_argument("--out", metavar="FILE.csv",
                   help="per-answer CSV (default: <answers name>.<metric>.csv in the "
                        "current folder)")
    p.add_argument("--no-cache", action="store_true",
                   help="do not reuse or store per-answer results (by default an interrupted "
                        "run resumes where it stopped)")


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

    pd_ = sub.add_parser(
        "pd", help="DebateQA Perspective Diversity of answers (lower is better)",
        description="Perspective Diversity (DebateQA Eq. 1): perplexity of each question's "
                    "partial answers conditioned on the model answer. variant 'paper' sums "
                    "true perplexities with a restate instruction; 'official' reproduces the "
                    "released script (mean, diluted normaliser, no restate, right truncation).")
    _scoring_arguments(pd_)
    pd_.add_argument("--model", required=True,
                     help="backbone: registry name (nfeval models list), hub id or folder")
    pd_.add_argument("--variant", choices=["paper", "official"], default="paper")
    pd_.add_argument("--restate", help='restate instruction for the paper variant '
                                       '(default: "Please restate.")')
    pd_.set_defaults(func=_pd)

    da_ = sub.add_parser(
        "da", help="DebateQA Dispute Awareness of answers (1 = says the question is debatable)",
        description="Dispute Awareness: the release's few-shot prompt judged by an LLM. mode "
                    "'prob' scores P(\"1\"); 'generate' parses the first digit of the generated "
                    "text; 'official' reproduces the released script (which returns 1 always).")
    _scoring_arguments(da_)
    da_.add_argument("--judge", required=True, help="judge model: registry name, hub id or folder")
    da_.add_argument("--mode", choices=["prob", "generate", "official"], default="prob")
    da_.add_argument("--zero-shot", action="store_true", help="D.A.-ZS: the prompt without "
                                                              "its demonstrations")
    da_.set_defaults(func=_da)
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
