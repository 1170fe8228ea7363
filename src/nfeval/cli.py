"""The ``nfeval`` command line.

    nfeval data status              where every release file resolves from
    nfeval data fetch NAME [...]    resolve (mirror, cache or download) and verify
    nfeval models list              known model names (embedded and paper)
    nfeval models prepare NAME      assemble/convert an embedded model into the cache
    nfeval pd --answers F --split S --model M      DebateQA Perspective Diversity
    nfeval da --answers F --split S --model M      DebateQA Dispute Awareness
    nfeval linkage --answers F [--method M]        LINKAGE and its baselines
    nfeval meta A.csv B.csv ...                    which evaluator agrees best with your grades

Every error meant for a user exits with status 2 and one line saying what
is wrong and how to fix it. The scoring commands exit with 0 when something
was scored, 1 when nothing could be, and 130 on Ctrl-C (with a line saying
how to resume from the per-item cache).

Why this file is long: every command's arguments and help text are here, so
``nfeval --help`` and the code that reads each flag sit side by side.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from nfeval.errors import NfevalError
from nfeval.version import __version__
# names only (no scoring code loads for --help): the methods and the default models
from nfeval.guard import DEFAULT_GUARD, GUARD_MODES
from nfeval.linkage.methods import METHODS as LINKAGE_METHODS
from nfeval.linkage.methods import MODE_ALIASES, MODES, POSITIONS, REFERENCE_SOURCES, ROUGE_IMPLEMENTATIONS
from nfeval.models.registry import (DEFAULT_EMBEDDER, DEFAULT_JUDGE, DEFAULT_PD_BACKBONE,
                                    DEFAULT_REFPPL_LM)

EPILOG = """\
Environment:
  NFEVAL_MIRROR   folder with the release files in the registry's layout
                  (linkage/, debateqa/, prompts/: `nfeval data status` lists
                  each file's path there)
  NFEVAL_CACHE    user cache (default ~/.cache/nfeval): downloads, converted models
  NFEVAL_OFFLINE  set to 1 to never download
"""


def _data_status(args: argparse.Namespace) -> int:
    from nfeval.data import status

    rows = status(names=args.names or None)
    width = max(len(r.name) for r in rows)
    for r in rows:
        ok = {True: "verified", False: "CHECKSUM MISMATCH", None: "unverified"}[r.verified]
        where = str(r.path) if r.path else r.detail
        print(f"{r.name:<{width}}  {r.source:<8}  {ok if r.path else '':<17}  {where}")
    missing = [r.name for r in rows if r.source == "missing"]
    bad = [r for r in rows if r.source == "bad"]
    if missing:
        import os

        mirror = os.environ.get("NFEVAL_MIRROR")
        where = (f"NFEVAL_MIRROR is {mirror}, which does not hold them: point it at the folder "
                 "that does" if mirror else "Set NFEVAL_MIRROR to a folder that holds them")
        print(f"\n{len(missing)} file(s) not available locally: {', '.join(missing)}. "
              f"{where}, or run `nfeval data fetch NAME` where the internet is reachable.")
    if bad:
        print(f"\n{len(bad)} file(s) fail their checksum: "
              + "; ".join(f"{r.name} ({r.detail})" for r in bad)
              + ". Replace them with the release files (or delete a cached copy to download "
              "it again).")
    return 1 if missing or bad else 0


def _data_fetch(args: argparse.Namespace) -> int:
    from nfeval.data import names, resolve

    targets = names() if args.all else args.names
    if not targets:
        raise NfevalError("name at least one file (see `nfeval data status`) or pass --all")
    for name in targets:
        print(f"{name}: {resolve(name)}")
    return 0


def _models_list(args: argparse.Namespace) -> int:
    from nfeval.models.registry import converted_dir, list_models, other_model_dirs

    for spec in list_models():
        line = f"{spec.name:<40} {spec.kind:<20} {spec.source}"
        if spec.kind == "embedded-gguf":
            folder = converted_dir(spec.name)
            line += f"  converted: {folder}" if folder else "  (not converted here)"
        print(line)
    for folder, what in other_model_dirs():
        why = ("a conversion of an older nfeval (unkeyed), read by none; delete it to free the "
               "space" if what == "unkeyed" else "another environment's conversion (other "
               "versions); delete it once no environment uses it")
        print(f"{folder}: {why}")
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


def judge_dtype_note(kind: str, dtype: str, reason: str) -> str:
    """The stderr line saying that the listwise LINKAGE judge scores in ``dtype`` on CPU kind
    ``kind``, why (``reason``, from :data:`nfeval.machine.LISTWISE_JUDGE_DTYPES`), and how to
    keep float32."""
    return (f"nfeval: the LINKAGE judge scores in {dtype} on this CPU kind ({kind}: {reason}); "
            "--dtype float32 for float32")


def _dtype_help() -> str:
    """--dtype's help, the listwise judge's CPU kinds generated from
    :data:`nfeval.machine.LISTWISE_JUDGE_DTYPES` (argparse's % escaped)."""
    from nfeval.machine import LISTWISE_JUDGE_DTYPES

    kinds = "; ".join(f"{kind}: {dtype}" for kind, (dtype, _) in LISTWISE_JUDGE_DTYPES.items())
    text = ("hf backend dtype (default: float32 on CPU, so that scores do not depend on the CPU, "
            "except nfeval linkage --method linkage's prob scores (the listwise judge) on the CPU "
            "kinds where bf16 ran faster than float32 in at least two benchmark runs and LINKAGE "
            "Table 2's LINKAGE rows, recomputed on that kind, agreed with float32's (within 0.01, "
            "no verdict moved): "
            f"{kinds or 'none yet'} (the pointwise and pairwise judges and nfeval meta stay "
            "float32); bfloat16 on a GPU; env NFEVAL_DTYPE); recorded in the signature")
    return text.replace("%", "%%")


def _loader(args: argparse.Namespace, *, listwise: bool = False):
    """The command's :class:`~nfeval.models.loader.ModelLoader`, built once: its
    :class:`~nfeval.runtime.Runtime` (``--device``, ``--dtype``, ``--batch-tokens``,
    ``--threads`` over the environment), the backend and the backend's options.

    ``listwise``: the command scores with the listwise LINKAGE judge in prob mode, which
    runs in the dtype its CPU kind has in :data:`nfeval.machine.LISTWISE_JUDGE_DTYPES` unless
    a dtype is asked for (bf16 only on the kinds whose judge_path runs were faster and whose
    LINKAGE Table 2's LINKAGE rows agreed with float32's; said on stderr, recorded in the signature
    through the model's ``info.dtype``). The pointwise judges stay float32 (in bf16 their
    rows of LINKAGE Table 2 moved by up to 0.016 and two verdicts moved: results/bench.csv,
    ``judge_table``), and so does the pairwise judge, whose table no bf16 check has
    compared."""
    import os

    from nfeval.models.loader import ModelLoader
    from nfeval.runtime import DTYPE_ENV, Runtime, from_env, resolve_device

    runtime = from_env(Runtime()).with_(device=args.device, dtype=args.dtype,
                                        batch_tokens=args.batch_tokens,
                                        threads=getattr(args, "threads", None))
    backend = args.backend
    judge_dtype, note = None, ""
    if (listwise and backend == "hf" and args.dtype is None and not os.environ.get(DTYPE_ENV)
            and resolve_device(runtime.device) == "cpu"):
        from nfeval.machine import listwise_judge_default

        chosen = listwise_judge_default()
        if chosen is not None:
            kind, judge_dtype, reason = chosen
            note = judge_dtype_note(kind, judge_dtype, reason)  # said when the judge loads
    # (main has already refused a server backend without --base-url)
    urls = [u.strip() for u in (args.base_url or "").split(",") if u.strip()]
    if backend == "openai" and len(urls) > 1:
        raise NfevalError("--backend openai takes one --base-url; several servers work "
                          "with --backend openai-chat")
    options: dict = {}  # each server backend's, for the model and any BACKEND:NAME generator
    if urls:
        options["openai-chat"] = {"base_url": urls if len(urls) > 1 else urls[0],
                                  "api_key_env": args.api_key_env,
                                  "concurrency": args.concurrency,
                                  "assistant_prefill": args.assistant_prefill}
        if len(urls) == 1:
            options["openai"] = {"base_url": urls[0], "chat_template": args.chat_template}
    return ModelLoader(runtime, backend, options, judge_dtype, note)


def _say(args: argparse.Namespace):
    """Where summary lines go: stdout, or stderr when the CSV itself goes to stdout."""
    return sys.stderr if args.out == "-" else sys.stdout


def _write_csv(table, out: str) -> str:
    if out == "-":
        table.to_csv(sys.stdout, index=False, lineterminator="\n")
        sys.stdout.flush()
        return "standard output"
    table.to_csv(out, index=False, lineterminator="\n")
    return out


def _default_out(name, metric: str, settings: Sequence[tuple[str, object, object]] = ()
                 ) -> str:
    """``<answers stem>.<metric>[.<setting>...].csv`` in the current folder: every setting
    ``(label, value, default)`` whose value differs from its default is in the name, so a run
    with another model, prompt, seed or mode never overwrites the first one's file."""
    stem = "stdin" if str(name) == "<stdin>" else Path(str(name)).stem
    parts = []
    for label, value, default in settings:
        if value in (None, "", False) or value == default:
            continue
        text = Path(str(value)).name if label == "model" else str(value)
        text = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)
        parts.append(label if value is True else
                     text if label in ("model", "") else f"{label}-{text}")
    return ".".join([stem, metric, *parts, "csv"])  # in the current folder


def _check_outputs(*paths: str | None) -> None:
    """Refuse, before anything loads or scores, an output path whose folder does not exist or
    that names a folder."""
    for p in paths:
        if not p or p == "-":
            continue
        path = Path(p).expanduser()
        if path.is_dir():
            raise NfevalError(f"cannot write {p}: it is a folder; give a file name")
        if not path.resolve().parent.is_dir():
            raise NfevalError(f"cannot write {p}: its folder {path.parent} does not exist "
                              "(create it, or choose another path); nothing was scored")


class _AliasNote(argparse.Action):
    """An option with an alias spelling: the alias works and says, once, which is the one."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string and option_string != self.option_strings[0]:
            print(f"nfeval: note: {option_string} is an alias of {self.option_strings[0]}, the "
                  "one spelling across the commands", file=sys.stderr)
        setattr(namespace, self.dest, values)


class _ModeAlias(argparse.Action):
    """``--mode`` in the one vocabulary of the commands: an older spelling
    (:data:`~nfeval.linkage.methods.MODE_ALIASES`) works and says which word is the one."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values in MODE_ALIASES:
            print(f"nfeval: note: --mode {values} is read as --mode {MODE_ALIASES[values]}, "
                  "the one spelling across the commands", file=sys.stderr)
        setattr(namespace, self.dest, MODE_ALIASES.get(values, values))


def _require_backend(args: argparse.Namespace) -> None:
    """Import the model backend's packages first: a missing extra is the first thing to say
    (``main`` names the extra to install), before any release file is looked for."""
    if getattr(args, "backend", "hf") == "hf":
        import torch  # noqa: F401
        import transformers  # noqa: F401


def _slot_alias_note(alias: str, spelling: str) -> None:
    print(f"nfeval: note: the prompt writes its slots {alias}, an alias that works; nfeval's "
          f"one spelling is {spelling}", file=sys.stderr)


def _prompt_tag(args: argparse.Namespace) -> str | None:
    """``--prompt FILE``'s hash for output names (None without one): the first 12 hex digits
    of the file's sha256, the ones the signature prints as ``prompt:`` and ``sha256sum``
    begins with."""
    text = _prompt_file(args)
    if text is None:
        return None
    from nfeval.hashing import sha256_text

    return f"prompt-{sha256_text(text)[:12]}"


def _report(args: argparse.Namespace, result, where: str) -> int:
    """Print a run's summary lines (and write ``--summary``); the exit status."""
    from nfeval.errors import NothingScored

    from nfeval.result import count

    say = _say(args)
    extra = f" ({result.n_unparsed} unparsed)" if result.n_unparsed else ""
    cut_items, cut_tokens = result.cut
    if cut_items:
        extra += (f" ({cut_items} cut to fit the model's window: {cut_tokens} tokens, "
                  "column cut_tokens)")
    if result.flagged_line():
        extra += f" ({result.flagged_line()})"
    if result.item_unit == "answers":
        print(f"File: {result.source}, Average {result.label} score: "
              f"{result.score_line()}{extra} | {result.signature.as_string()}", file=say)
    else:
        print(f"File: {result.source}, {result.label}: {count(result.n_items, 'candidates')} "
              f"of {count(result.n_questions, 'questions')} scored{extra}, mean score "
              f"{result.score_line()} | {result.signature.as_string()}", file=say)
    for line in result.correlation_lines():
        print(line, file=say)
    print(f"per-{result.item_unit[:-1]} scores: {where} ({count(result.n_items, result.item_unit)}, "
          f"{len(result.skipped)} line(s) or question(s) left out)", file=sys.stderr)
    if args.summary:
        path = result.write_summary(args.summary, per_item=where)
        print(f"run summary (JSON): {path}", file=sys.stderr)
    if result.n_scored == 0:
        raise NothingScored(f"no {result.item_unit[:-1]} got a {result.label} score "
                            f"({result.n_unparsed} unparsed)")
    if getattr(args, "strict", False) and (result.skipped or result.n_unparsed):
        print(f"nfeval: --strict: {len(result.skipped)} line(s) or question(s) left out and "
              f"{result.n_unparsed} unparsed; the outputs are written (exit status 3)",
              file=sys.stderr)
        return 3
    return 0


def _prompt_file(args: argparse.Namespace) -> str | None:
    """The text of ``--prompt FILE`` (None without it)."""
    if not getattr(args, "prompt", None):
        return None
    p = Path(args.prompt).expanduser()
    try:  # the bytes as written (no newline translation): its sha256 is the file's
        return p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise NfevalError(f"the prompt file {p} is not UTF-8 text ({e.reason} at byte "
                          f"{e.start})") from None
    except OSError as e:
        raise NfevalError(f"cannot read the prompt file {p}: {e.strerror or e}") from None


def _debateqa_inputs(args: argparse.Namespace):
    """Read answers and questions, and report every line left out, before any model loads."""
    from nfeval.debateqa.scoring import prepare_inputs

    inputs = prepare_inputs(args.answers, args.split, limit=args.limit)
    for line in inputs.skipped:
        print(f"nfeval: skipped {line}", file=sys.stderr)
    return inputs


def _pd(args: argparse.Namespace) -> int:
    from nfeval.debateqa.api import PD
    from nfeval.debateqa.scoring import PDSettings

    settings = PDSettings(variant=args.variant, restate=args.restate, seed=args.seed)
    inputs = _debateqa_inputs(args)
    out = args.out or _default_out(inputs.answers_path, "pd", (
        ("model", args.model, DEFAULT_PD_BACKBONE), ("variant", args.variant, "paper"),
        ("restate", args.restate and _short_hash(args.restate), None),
        ("seed", args.seed, 0)))
    _check_outputs(out, args.summary)
    result = PD(settings, args.model, loader=_loader(args)).score_inputs(
        inputs, use_cache=not args.no_cache, progress=not args.no_progress)
    where = _write_csv(result.table, out)
    return _report(args, result, where)


def _da(args: argparse.Namespace) -> int:
    from nfeval.debateqa.api import DA
    from nfeval.debateqa.scoring import DASettings

    prompt = _prompt_file(args)
    if prompt is not None:
        from nfeval.debateqa.da import braced_slots

        if braced_slots(prompt)[1]:
            _slot_alias_note("#question/#answer", "{question}/{answer}")
    settings = DASettings(mode=args.mode, zero_shot=args.zero_shot, prompt=prompt,
                          guard=args.guard, seed=args.seed)
    inputs = _debateqa_inputs(args)
    out = args.out or _default_out(inputs.answers_path, "da", (
        ("model", args.judge, DEFAULT_JUDGE), ("mode", args.mode, "prob"),
        ("zero-shot", args.zero_shot, False), ("", _prompt_tag(args), None),
        ("guard", args.guard, "off"),
        ("seed", args.seed, 0)))
    _check_outputs(out, args.summary)
    _require_backend(args)
    metric = DA(settings, args.judge, loader=_loader(args))  # the release template is read
    result = metric.score_inputs(inputs, use_cache=not args.no_cache,
                                 progress=not args.no_progress)
    where = _write_csv(result.table, out)
    return _report(args, result, where)


def _short_hash(text: str) -> str:
    from nfeval.hashing import sha256_text

    return sha256_text(text)[:8]


def _linkage(args: argparse.Namespace) -> int:
    from nfeval.linkage import score_file as SF
    from nfeval.linkage.memory import linkage_result
    from nfeval.linkage.settings import GenerationSettings, LinkageSettings

    method = args.method
    prompt = _prompt_file(args)
    if prompt is not None:
        from nfeval.linkage.prompts import braced_slots

        if braced_slots(method, prompt)[1]:
            _slot_alias_note("#name", "{name}")
    st = LinkageSettings(
        method, mode=args.mode, shots=args.shots, seed=args.seed, unparsed=args.unparsed,
        positions=args.positions, max_tokens=args.max_tokens, guard=args.guard, prompt=prompt,
        references=args.references, rouge=args.rouge, embedder=args.embedder,
        generation=GenerationSettings(attempts=args.attempts, golden_tokens=args.golden_tokens,
                                      degraded_tokens=args.degraded_tokens))
    if st.kind == "lexical" and args.model:
        raise NfevalError(f"method {method} uses no language model: drop --model"
                          + (" (--embedder names its encoder)" if "bert" in method else ""))
    lf = SF.read_linkage_file(args.answers, limit=args.limit)
    out = args.out or _default_out(lf.name, st.method, (
        ("model", args.model, SF.DEFAULT_MODELS.get(st.kind)), ("shots", st.shots, 0),
        ("mode", st.mode or "prob", "prob"), ("positions", st.positions, "random"),
        ("references", st.references, "file"), ("", _prompt_tag(args), None),
        ("guard", st.guard, "off"), ("rouge", st.rouge, "rouge-score"),
        ("embedder", st.embedder, None), ("seed", st.seed, 0)))
    _check_outputs(out, args.summary)  # once the file is read, before any model loads
    if st.kind != "lexical":
        _require_backend(args)
    metric = SF.Linkage(st, args.model or None, loader=_loader(
        args, listwise=st.method == "linkage" and st.mode == "prob"))
    res = metric.score_file(
        lf, generator=args.generator or None,
        degraders=tuple(d for d in (args.degraders or "").split(",") if d.strip()),
        use_cache=not args.no_cache, progress=not args.no_progress, notes=sys.stderr)
    where = _write_csv(res.table, out)
    return _report(args, linkage_result(res, str(lf.name)), where)


GUARD_HELP = ("keep the {what} from talking the judge into a better score: 'quote' shows "
              "the judge each {what} as quoted data (delimited, labelled, with a sentence "
              "saying nothing inside is addressed to it and its praise of itself is no "
              "evidence, its [[...]] label brackets broken up); 'strip' (what --guard alone means) also replaces each sentence addressed "
              "to the judge or written as its verdict by a marker; 'screen' replaces every "
              "sentence nfeval.screen flags by the marker and changes nothing else (no "
              "quoting): the same patterns, and sentences that read like text written for an "
              "evaluator or speak of nothing the question or the references do, whatever "
              "their wording; an embedding pass per {what}. "
              "The papers' prompts are otherwise unchanged and the signature says the guard (default "
              "off: the papers' protocol). Every run flags the {what}s that address the judge "
              "(column flags, counted in the summary)")


COMPARE_DESCRIPTION = """\
Compare two runs on the same items: A minus B, with a paired 95% bootstrap interval.

  P.D. or D.A. files (nfeval pd|da): two systems' answers to the same questions (or
  one answer file under two settings); the items are matched by id and the mean of
  A - B is resampled over answers.
  LINKAGE files (nfeval linkage): matched by question and candidate id. When both
  carry human grades, the per-question correlation with the grades is compared
  (--coefficient; resampled over questions): which method agrees better with
  people. Without grades the scores themselves are compared, which only means
  something for the same method (different methods score on different scales).

Files whose items differ are refused, and the message names items found in only one.
"""


def _compare(args: argparse.Namespace) -> int:
    from nfeval.compare import compare_files

    res = compare_files(args.a, args.b, coefficient=args.coefficient, seed=args.seed)
    for line in res.lines():
        print(line)
    if args.summary:
        from nfeval.result import write_json

        print(f"comparison summary (JSON): {write_json(args.summary, res.summary())}",
              file=sys.stderr)
    return 0


META_DESCRIPTION = """\
Which evaluator should you trust on your answers? For each evaluator, its agreement with
your human grades: per question, the correlation of its scores with the grades (Kendall's
tau-b by default), averaged over questions, with a 95% bootstrap interval over questions
and n. Then the paired difference of every pair (A - B on the same questions, with its
interval), which evaluators the data cannot tell apart from the best, a combination of
the methods chosen on training folds of questions and scored on held-out ones (reported as
better only where it beats the best single method out of sample), and, for pairwise
judges scored in prob mode, their preference for the first answer slot.

Input, either:
  per-item CSVs of nfeval linkage runs on the same graded file (any number; a CSV may hold
  several methods, and columns dataset/sample split the questions into groups), or
  --answers FILE.jsonl --methods rougeL,bertscore,...: the methods are run here, each on
  the same items, through the same cache as nfeval linkage (judge methods load --model).
Every candidate needs a human grade.
"""

META_EPILOG = """\
Examples:
  nfeval meta --answers examples/linkage_answers.jsonl --methods rouge1,rougeL,bleu
  nfeval linkage --answers mine.jsonl --method linkage --out mine.linkage.csv
  nfeval linkage --answers mine.jsonl --method bertscore --out mine.bertscore.csv
  nfeval meta mine.linkage.csv mine.bertscore.csv --plot meta.png --summary meta.json

Exit status: 0 compared; 2 usage or input error (the message says what to fix);
130 interrupted (finished items are cached).
"""


def _meta(args: argparse.Namespace) -> int:
    import nfeval.meta_evaluation as M

    M.check_outputs(args.summary, args.plot, args.per_question)
    if bool(args.csv) == bool(args.answers):
        raise NfevalError("give per-item CSVs, or --answers FILE with --methods, not both")
    coefficients = [c.strip() for c in args.coefficient.split(",") if c.strip()]
    if args.answers:
        if not args.methods:
            raise NfevalError("--answers needs --methods (e.g. --methods rouge1,rougeL,bleu)")
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]

        frame = M.score_methods(args.answers, methods, model=args.model, seed=args.seed,
                                limit=args.limit, use_cache=not args.no_cache,
                                progress=not args.no_progress,
                                loader=_loader(args),  # float32: methods compared, not dtypes
                                prompt=_prompt_file(args), guard=args.guard)
        for line in frame.attrs.get("left_out", []):
            print(f"nfeval: skipped {line}", file=sys.stderr)
    else:
        if args.methods or args.model or args.prompt or args.guard != "off":
            raise NfevalError("--methods, --model, --prompt and --guard go with --answers (the "
                              "CSVs are already scored)")
        frame = M.read_scores(args.csv)
    res = M.meta(frame, coefficients=coefficients, seed=args.seed, folds=args.folds,
                 repeats=args.repeats, combine=not args.no_combination)
    for line in res.lines():
        print(line)
    if args.summary:
        from nfeval.result import write_json

        print(f"meta summary (JSON): {write_json(args.summary, res.summary())}", file=sys.stderr)
    if args.plot:
        print(f"forest plot: {res.plot(args.plot)}", file=sys.stderr)
    if args.per_question:
        print(f"per-question coefficients: {res.per_question_csv(args.per_question)}",
              file=sys.stderr)
    return 0


def _model_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model backend and hardware")
    g.add_argument("--backend", choices=["hf", "openai", "openai-chat", "llama"], default="hf",
                   help="hf: transformers in this process (every method; default); openai: an "
                        "OpenAI-compatible /v1/completions server with logprobs (vLLM, "
                        "llama-cpp-python); openai-chat: a /v1/chat/completions server or hosted "
                        "API (judges: generate mode, prob mode from top logprobs); llama: llama.cpp "
                        "on a GGUF file in this process (generation, generate-mode judges)")
    g.add_argument("--base-url", help="server URL for the openai backends, e.g. "
                                      "http://127.0.0.1:8000/v1; openai-chat takes a "
                                      "comma-separated list of servers (requests are spread)")
    g.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="openai-chat: environment variable holding the API key (the key is never "
                        "written anywhere; default OPENAI_API_KEY, unset: no key)")
    g.add_argument("--concurrency", type=int, default=4, metavar="N",
                   help="openai-chat: requests in flight per server (default 4)")
    g.add_argument("--assistant-prefill", choices=["none", "continue_final_message"],
                   default="none",
                   help="openai-chat: how a prompt that ends inside the assistant turn is sent; "
                        "none refuses it (hosted APIs), continue_final_message for vLLM")
    g.add_argument("--chat-template", help="for --backend openai: tokenizer folder or model name "
                                          "whose chat template renders prompts, or 'none'")
    g.add_argument("--device", help="hf backend and encoders: cpu, cuda, cuda:1, or auto (cuda when "
                                    "torch sees a GPU); default cpu, env NFEVAL_DEVICE")
    g.add_argument("--dtype", choices=["float32", "bfloat16", "float16", "auto"],
                   help=_dtype_help())
    g.add_argument("--batch-tokens", type=int, metavar="N",
                   help="hf backend: padded tokens per forward batch (default 2048; raise it "
                        "on a GPU; env NFEVAL_BATCH_TOKENS)")
    g.add_argument("--threads", type=int, metavar="N",
                   help="llama backend: CPU threads (default: env NFEVAL_LLAMA_THREADS, else all "
                        "cores but one: llama.cpp's threads spin)")


def _run_arguments(p: argparse.ArgumentParser, unit: str, item: str | None = None) -> None:
    """The run options; ``unit``: what --limit counts and the cache keeps; ``item``: a row of
    the output CSV (default: the unit)."""
    p.add_argument("--out", metavar="FILE.csv",
                   help=f"per-{item or unit} CSV; '-' writes it to standard output (the summary then "
                        "goes to standard error). Default: <answers name>.<method>.csv in the "
                        "current folder (stdin.<method>.csv for standard input), with every "
                        "setting that differs from its default added to the name (the model, "
                        "shots, mode, seed, a prompt's hash: e.g. answers.linkage.smollm2-135m-"
                        "instruct.shots-3.csv), so runs with other settings keep their files. "
                        "Checked before anything is scored")
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help=f"score only the first N valid {unit}s of the file (0: all)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of everything drawn at random (sampling, positions, "
                        "demonstrations, the bootstrap interval); recorded in the signature")
    p.add_argument("--no-cache", action="store_true",
                   help=f"do not reuse or store per-{unit} results (by default an interrupted "
                        "run resumes where it stopped)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 3 when any line or question was left out or any "
                        "judge reply did not parse (the outputs are still written); without "
                        "it, those are named on stderr and counted in the summary, and the "
                        "status is 0")
    p.add_argument("--summary", metavar="PATH.json",
                   help="also write the run summary as JSON: the mean score with its 95%% "
                        "interval and n, the correlations with the human grades (linkage), "
                        "counts of scored, unparsed, cut and skipped items, the signature")


def _scoring_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--answers", required=True, metavar="FILE.jsonl",
                   help='model answers, one JSON object a line: {"generation": str, "id": int}; '
                        "'-' reads standard input")
    p.add_argument("--split", default="test", metavar="test|dev|sample|PATH",
                   help="questions with partial answers: the DebateQA test or dev split, the "
                        "project's sample, or a file in the release's split format (default: test)")
    _model_arguments(p)
    _run_arguments(p, "answer")


EXIT_STATUSES = """\
Exit status: 0 scored (lines left out are named on stderr and counted in the summary);
1 nothing scored (every line left out, or no score parsed); 2 usage or input error
(nothing scored); 3 with --strict, something left out or unparsed (the outputs are
written); 130 interrupted (finished items are cached: run the same command again to
resume); 141 the reader of the output closed it (`--out - | head`).
"""

LINKAGE_DESCRIPTION = """\
Score your own candidate answers with LINKAGE (EMNLP 2024: an LLM judge ranks each
candidate inside a graded reference list, score = -rank, higher is better) or one of
its baselines, and, where the candidates carry human grades, report the per-question
correlation with them (Kendall, Spearman, Pearson; mean over questions, 95% interval).

Input: JSON Lines, one question a line:
  {"id": "q1", "question": "How do I ...?",
   "candidates": [{"id": "c1", "text": "...", "grade": 2}, {"id": "c2", "text": "..."}],
   "references": [{"text": "...", "grade": 3}, {"text": "...", "grade": 1}]}
  id          string or integer, unique in the file
  candidates  at least one; "id" optional (c1, c2, ...), "grade" optional (human grade,
              any number, higher is better: only used for the correlation and, with
              --shots, for the demonstrations)
  references  optional; every one with an integer "grade" >= 0 (3 best; sorted best
              first) or none with a grade (the list order is the ranking, best first).
              Without references (or with --references 1gt/0gt) a LINKAGE-1GT/0GT list
              (a better golden answer, then three degraded ones) is written by
              --generator and cached.
A line that breaks a rule is reported with its line number and left out.

Methods:
  linkage               listwise rank among the references (--shots N: n-shot)
  pointwise             0-10 score without references
  pointwise-ref         0-10 score with the reference list
  pointwise-ref-graded  0-10 score with the reference list and its grades
  pairwise              candidate against each reference, weighted by its grade
  refppl                reference-recovery perplexity (a base LM, default """ + DEFAULT_REFPPL_LM + """)
  rouge1 rouge2 rougeL bleu bertscore bertscore-cls
                        against the release's one ground truth from the list
The judge methods run in --mode prob (expected value of the label distribution, no
generation) or --mode generate (the paper's decoding; the reply is parsed).

Output: a per-candidate CSV (qid, candidate_id, method, score, rank in its question,
grade, unparsed, n_outputs, references, dist: label distribution as JSON in prob
mode, raw: the reply in generate mode, detail), a one-line summary with the score's
signature, and one line per correlation coefficient.
"""

LINKAGE_EPILOG = """\
Examples:
  nfeval linkage --answers examples/linkage_answers.jsonl --model smollm2-135m-instruct
  nfeval linkage --answers examples/linkage_answers.jsonl --method linkage --shots 2 \\
      --model smollm2-135m-instruct
  nfeval linkage --answers examples/linkage_answers.jsonl --method pairwise --mode generate \\
      --model smollm2-135m-instruct
  nfeval linkage --answers examples/linkage_answers.jsonl --method rougeL
  nfeval linkage --answers examples/linkage_answers.jsonl --references 0gt \\
      --generator llama:smollm2-135m-instruct --model smollm2-135m-instruct
  cat answers.jsonl | nfeval linkage --answers - --method bleu --out - > scores.csv

""" + EXIT_STATUSES


class _Parser(argparse.ArgumentParser):
    """argparse with short errors: one line naming the problem (and, for a mistyped choice,
    the nearest valid one), then where the options are listed, instead of the whole usage."""

    def error(self, message: str):  # type: ignore[override]
        import difflib
        import re

        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = [c.strip(" '") for c in m.group(2).split(",")]
            near = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.5)
            message = (f"{message.split(':')[0]}: unknown choice {m.group(1)!r}"
                       + (f"; did you mean {near[0]!r}?" if near else
                          f"; choose from {', '.join(choices)}"))
        print(f"{self.prog}: error: {message}\nrun `{self.prog} --help` for the options",
              file=sys.stderr)
        raise SystemExit(2)

    def unknown_options(self, extra: Sequence[str]):
        """The error for options this (sub)command does not take, with the nearest one it
        does (``--judgee``: did you mean ``--judge``?) and a pointer to its own help."""
        import difflib

        known = [o for a in self._actions for o in a.option_strings]
        hints = []
        for opt in extra:
            if opt.startswith("-"):
                near = difflib.get_close_matches(opt.split("=")[0], known, n=1, cutoff=0.6)
                if near:
                    hints.append(f"{opt}: did you mean {near[0]}?")
        self.error(f"unrecognized arguments: {' '.join(extra)}"
                   + (f" ({'; '.join(hints)})" if hints else ""))


def _chosen_parser(parser: argparse.ArgumentParser,
                   args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser that ``args`` were parsed by (``nfeval data status``:
    the parser of ``status``)."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name not in (subs[0].choices if subs else {}):
            return parser
        parser = subs[0].choices[name]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nfeval",
        description="Evaluate long-form answers with DebateQA (P.D., D.A.) and LINKAGE, "
                    "and compare evaluators on your own graded answers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nfeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    data = sub.add_parser("data", help="release files: where they are, fetch and verify")
    dsub = data.add_subparsers(dest="action", metavar="ACTION", required=True)
    st = dsub.add_parser("status", help="where every release file resolves from (nothing is "
                                        "downloaded); exits 1 if one is missing or damaged",
                         description="Where every release file (or each NAME) resolves from, "
                                     "and whether its checksum matches. Nothing is downloaded. "
                                     "Exit status 1 when a file is missing or fails its "
                                     "checksum, else 0.")
    st.add_argument("names", nargs="*", help="only these registry names (default: all)")
    st.set_defaults(func=_data_status)
    fetch = dsub.add_parser("fetch", help="resolve files (mirror, cache, else download) and verify sums")
    fetch.add_argument("names", nargs="*", help="registry names, e.g. antique trec-dl-nf")
    fetch.add_argument("--all", action="store_true", help="every registry entry")
    fetch.set_defaults(func=_data_fetch)

    models = sub.add_parser("models", help="model registry: list, prepare embedded models")
    msub = models.add_subparsers(dest="action", metavar="ACTION", required=True)
    msub.add_parser("list", help="known model names, where they come from and this "
                    "environment's converted folders"
                    ).set_defaults(func=_models_list)
    prep = msub.add_parser("prepare", help="assemble and convert embedded models into the cache (once)")
    prep.add_argument("names", nargs="*", help="e.g. smollm2-135m-instruct")
    prep.add_argument("--all", action="store_true", help="every embedded model")
    prep.set_defaults(func=_models_prepare)


    raw = argparse.RawDescriptionHelpFormatter
    pd_ = sub.add_parser(
        "pd", help="DebateQA Perspective Diversity of answers (lower is better)",
        formatter_class=raw,
        description="Perspective Diversity (DebateQA Eq. 1): perplexity of each question's "
                    "partial answers conditioned on the model answer. variant 'paper' sums\n"
                    "true perplexities with a restate instruction; 'official' reproduces the "
                    "released script (mean, diluted normaliser, no restate, right truncation).\n"
                    "Prints 'File: ..., Average P.D. score: ...' with its 95% interval and "
                    "signature, and writes the per-answer CSV.",
        epilog="Example:\n  nfeval pd --answers examples/debateqa_answers.jsonl --split sample "
               "--model smollm2-135m-instruct\n\n" + EXIT_STATUSES)
    _scoring_arguments(pd_)
    pd_.add_argument("--model", "--judge", dest="model", default=DEFAULT_PD_BACKBONE,
                     help="backbone: registry name (nfeval models list), hub id or folder "
                          f"(default {DEFAULT_PD_BACKBONE}, the small embedded P.D. backbone)")
    pd_.add_argument("--variant", choices=["paper", "official"], default="paper")
    pd_.add_argument("--restate", help='restate instruction for the paper variant '
                                       '(default: "Please restate.")')
    pd_.set_defaults(func=_pd)

    da_ = sub.add_parser(
        "da", help="DebateQA Dispute Awareness of answers (1 = says the question is debatable)",
        formatter_class=raw,
        description="Dispute Awareness: the release's few-shot prompt judged by an LLM. mode "
                    "'prob' scores P(\"1\"); 'generate' parses the first digit of the generated\n"
                    "text; 'official' reproduces the released script (which returns 1 always).\n"
                    "Prints 'File: ..., Average D.A. score: ...' with its 95% interval and "
                    "signature, and writes the per-answer CSV.",
        epilog="Example:\n  nfeval da --answers examples/debateqa_answers.jsonl --split sample "
               "--model smollm2-135m-instruct\n\n" + EXIT_STATUSES)
    _scoring_arguments(da_)
    da_.add_argument("--model", "--judge", dest="judge", default=DEFAULT_JUDGE,
                     action=_AliasNote,
                     help="the judge model: registry name, hub id or folder (default "
                          f"{DEFAULT_JUDGE}, the strongest embedded judge); "
                          "--judge is an alias")
    da_.add_argument("--mode", choices=["prob", "generate", "official"], default="prob",
                     help="prob (default): P(\"1\"); generate: the first 0/1 of a greedy reply; "
                          "official: the released script's way (see above). nfeval linkage "
                          "uses the same words")
    da_.add_argument("--zero-shot", action="store_true", help="D.A.-ZS: the prompt without "
                                                              "its demonstrations")
    da_.add_argument("--guard", nargs="?", const=DEFAULT_GUARD, default="off",
                     choices=GUARD_MODES, metavar="quote|strip|screen",
                     help=GUARD_HELP.format(what="answer"))
    da_.add_argument("--prompt", metavar="FILE",
                     help="a judge prompt of your own instead of the release's few-shot "
                          "template; it must hold the slots {question} and {answer}")
    da_.set_defaults(func=_da)

    lk = sub.add_parser(
        "linkage", help="LINKAGE and its baselines on your own candidate answers (higher is "
                        "better)",
        formatter_class=raw, description=LINKAGE_DESCRIPTION, epilog=LINKAGE_EPILOG)
    lk.add_argument("--answers", required=True, metavar="FILE.jsonl",
                    help="questions with candidates (and references), one JSON object a line "
                         "(format above); '-' reads standard input")
    lk.add_argument("--method", default="linkage",
                    choices=LINKAGE_METHODS,
                    help="scoring method (default: linkage)")
    lk.add_argument("--mode", choices=(*MODES, *MODE_ALIASES), metavar="prob|generate",
                    action=_ModeAlias,
                    help="judge methods: prob (default: the expected label of the judge's "
                         "label distribution) or generate (a reply sampled at the release's "
                         "temperature 0.8 and top-p 0.95, then parsed); nfeval da uses the "
                         "same two words. sample is an older spelling of generate")
    lk.add_argument("--shots", type=int, default=0, metavar="N",
                    help="linkage: N demonstrations from the file's other questions (default 0)")
    lk.add_argument("--model", "--judge", dest="model",
                    help=f"judge model (default {DEFAULT_JUDGE}) or, for refppl, a "
                         f"base LM (default {DEFAULT_REFPPL_LM}): registry name, hub id or folder")
    lk.add_argument("--references", choices=REFERENCE_SOURCES, default="file",
                    help="reference lists: the file's (default; a line without any gets a 0GT "
                         "list when --generator is given), 1gt (generated from each line's "
                         "best reference) or 0gt (generated from the question alone)")
    lk.add_argument("--generator", metavar="BACKEND:NAME",
                    help="model that writes missing reference lists, e.g. "
                         f"llama:{DEFAULT_JUDGE} (hf:, llama: or openai:)")
    lk.add_argument("--degraders", metavar="BACKEND:NAME,...",
                    help="models that write the degraded answers (default: the generator)")
    lk.add_argument("--golden-tokens", type=int, default=256,
                    help="generation budget of a golden answer (default 256)")
    lk.add_argument("--degraded-tokens", type=int, default=512,
                    help="generation budget of the three degraded answers (default 512)")
    lk.add_argument("--attempts", type=int, default=2,
                    help="generation attempts per output (default 2)")
    lk.add_argument("--unparsed", default="drop", metavar="drop|release|NUMBER",
                    help="judge replies that do not parse (generate mode): drop (NaN score, "
                         "default), release (linkage: rank 2, as the release), or a value")
    lk.add_argument("--max-tokens", type=int, default=512, metavar="N",
                    help="generate mode: at most N generated tokens a reply (default 512, the "
                         "paper's; generation stops anyway at the ]] of the first label)")
    lk.add_argument("--positions", choices=POSITIONS,
                    default="random",
                    help="pairwise: candidate first or second by a seeded coin (default), "
                         "always first (release), or always second (reference-first)")
    lk.add_argument("--prompt", metavar="FILE",
                    help="judge methods: a prompt of your own instead of the release's; slots "
                         "(written {name}, as for nfeval da; the release's #name works too): "
                         "linkage, pointwise-ref(-graded): {question} {ground} {candidate}; "
                         "pointwise: {question} {candidate}; pairwise: {question} {answer_a} "
                         "{answer_b}")
    lk.add_argument("--guard", nargs="?", const=DEFAULT_GUARD, default="off",
                    choices=GUARD_MODES, metavar="quote|strip|screen",
                    help="judge methods: " + GUARD_HELP.format(what="candidate"))
    lk.add_argument("--embedder", help=f"bertscore methods: encoder (default {DEFAULT_EMBEDDER})")
    lk.add_argument("--rouge", choices=ROUGE_IMPLEMENTATIONS, default="rouge-score",
                    help="ROUGE implementation (default rouge-score; release: the pltrdy "
                         "arithmetic)")
    _model_arguments(lk)
    _run_arguments(lk, "question", item="candidate")
    lk.set_defaults(func=_linkage)

    cmp_ = sub.add_parser(
        "compare", help="paired difference of two per-item outputs of the same items, with "
                        "its 95%% interval",
        formatter_class=raw, description=COMPARE_DESCRIPTION,
        epilog="Examples:\n"
               "  nfeval linkage --answers examples/linkage_answers.jsonl --method rougeL\n"
               "  nfeval linkage --answers examples/linkage_answers.jsonl --method bleu\n"
               "  nfeval compare linkage_answers.rougeL.csv linkage_answers.bleu.csv\n\n"
               "Exit status: 0 compared; 2 the files cannot be compared (the message says why).")
    cmp_.add_argument("a", metavar="A.csv", help="per-item CSV written by nfeval linkage|pd|da")
    cmp_.add_argument("b", metavar="B.csv", help="the other run, on the same items")
    cmp_.add_argument("--coefficient", choices=["kendall", "spearman", "pearson"],
                      default="kendall",
                      help="linkage files with human grades: the correlation compared "
                           "(default kendall)")
    cmp_.add_argument("--seed", type=int, default=0, help="seed of the bootstrap interval")
    cmp_.add_argument("--summary", metavar="PATH.json", help="also write the result as JSON")
    cmp_.set_defaults(func=_compare)

    mt = sub.add_parser(
        "meta", help="which evaluator agrees best with your human grades (every evaluator's "
                     "correlation, paired differences, combinations out of sample)",
        formatter_class=raw, description=META_DESCRIPTION, epilog=META_EPILOG)
    mt.add_argument("csv", nargs="*", metavar="SCORES.csv",
                    help="per-item CSVs of nfeval linkage runs on the same graded file")
    mt.add_argument("--answers", metavar="FILE.jsonl",
                    help="a graded LINKAGE answers file to score with --methods")
    mt.add_argument("--methods", metavar="M1,M2,...",
                    help="with --answers: methods of nfeval linkage --method to run "
                         "(linkage-Nshot: LINKAGE with N demonstrations)")
    mt.add_argument("--model", "--judge", dest="model",
                    help="with --answers: the judge of the judge methods (default "
                                    f"{DEFAULT_JUDGE})")
    mt.add_argument("--prompt", metavar="FILE",
                    help="with --answers: the judge methods' prompt of your own (the slots of "
                         "nfeval linkage --prompt)")
    mt.add_argument("--guard", nargs="?", const=DEFAULT_GUARD, default="off",
                    choices=GUARD_MODES, metavar="quote|strip|screen",
                    help="with --answers: the judge methods' " + GUARD_HELP.format(
                        what="candidate"))
    mt.add_argument("--coefficient", default="kendall", metavar="NAME[,NAME]",
                    help="kendall (default), spearman, pearson, or several comma-separated")
    mt.add_argument("--folds", type=int, default=5,
                    help="folds of questions for the combination (default 5)")
    mt.add_argument("--repeats", type=int, default=5,
                    help="repeats of the fold split (default 5)")
    mt.add_argument("--no-combination", action="store_true",
                    help="skip the out-of-sample combination")
    mt.add_argument("--plot", metavar="PATH.png", help="write a forest plot")
    mt.add_argument("--per-question", metavar="PATH.csv",
                    help="write every question's coefficient per evaluator")
    mt.add_argument("--summary", metavar="PATH.json", help="write everything as JSON")
    mt.add_argument("--limit", type=int, default=0,
                    help="with --answers: the first N questions (0: all)")
    mt.add_argument("--seed", type=int, default=0,
                    help="seed of the bootstrap intervals and the folds")
    mt.add_argument("--no-cache", action="store_true", help="with --answers: recompute every "
                                                              "item")
    mt.add_argument("--no-progress", action="store_true", help="no progress bars")
    _model_arguments(mt)
    mt.set_defaults(func=_meta)
    return parser


def _quiet_model_bars() -> None:
    """``--no-progress`` for the model libraries too: transformers' weight-loading, GGUF
    conversion and shard-writing bars and huggingface_hub's (before or after their import).
    transformers converts a GGUF under a plain ``tqdm.auto`` bar that no transformers
    setting reaches: ``TQDM_DISABLE`` (read when tqdm is first imported, which the commands
    do after this) silences it."""
    import os

    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["TQDM_DISABLE"] = "1"
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # the base install: no model library, no bar
        return
    disable_progress_bars()
    if "transformers" in sys.modules:
        sys.modules["transformers"].utils.logging.disable_progress_bar()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the subcommand's own parser, which lists the options it takes
        _chosen_parser(parser, args).unknown_options(extra)
    if getattr(args, "no_progress", False):
        _quiet_model_bars()
    try:
        if getattr(args, "batch_tokens", None) is not None and args.batch_tokens < 1:
            raise NfevalError(f"batch_tokens must be >= 1, got {args.batch_tokens}.")
        if getattr(args, "backend", None) in ("openai", "openai-chat") and not args.base_url:
            # a usage error, said before any input or release file is read
            raise NfevalError(f"--backend {args.backend} needs --base-url (e.g. "
                              "http://127.0.0.1:8000/v1; several servers: a comma-separated list)")
        if getattr(args, "device", None):
            from nfeval.runtime import resolve_device

            resolve_device(args.device)  # a GPU asked for where there is none: one clear error
        return args.func(args)
    except KeyboardInterrupt as err:
        # nfeval.debateqa.scoring.Interrupted says what is cached; a bare Ctrl-C (loading,
        # reading) has no message.
        print(f"nfeval: {err}" if str(err) else
              "nfeval: interrupted; finished items are cached: run the same command again "
              "to resume", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        from nfeval.extras import missing_extra

        err = missing_extra(exc)
        if err is None:
            raise
        print(f"nfeval: error: {err}", file=sys.stderr)
        return 2
    except NfevalError as err:
        status = getattr(err, "exit_status", 2)
        print(f"nfeval: {'nothing scored' if status == 1 else 'error'}: {err}", file=sys.stderr)
        return status
    except BrokenPipeError:
        # the reader of stdout closed it (`--out - | head`): stop writing, no traceback; the
        # interpreter's own flush of stdout at exit would raise again, so point it at devnull
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
