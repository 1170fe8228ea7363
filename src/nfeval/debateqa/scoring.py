"""Score a file of model answers with P.D. or D.A. (the ``nfeval pd|da`` commands).

Input: the DebateQA release's answer format, one JSON object a line
``{"generation": str, "id": int}``, and a question file in the release's
split format (``test``, ``dev``, ``sample`` for the project's own sample,
or a path; ``-`` reads the answers from standard input). Bad lines
(malformed JSON, duplicate id, empty answer) and ids that are not in the
question file are reported with their line numbers and left out; every
valid line is still scored. Per-answer results are cached on disk
(:mod:`nfeval.runcache`), so an interrupted run resumes where it stopped.

Two exceptions carry the command line's exit statuses: :class:`NothingScored`
(an :class:`~nfeval.NfevalError`: the input was read but nothing in it can be
scored, status 1) and :class:`Interrupted` (a :class:`KeyboardInterrupt`
whose message says how to resume, status 130). Ctrl-C is never turned into
an ordinary error.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from nfeval.errors import Interrupted, NfevalError, NothingScored  # noqa: F401  (re-exported)
from nfeval.data import DebateItem, load_answers, load_debateqa, resolve, sha256_file
from nfeval.data.sample import SAMPLE_DIR
from nfeval.runcache import RunCache


STDIN = "-"


@dataclass(frozen=True)
class PDSettings:
    """What decides a P.D. score besides the backbone and the answers, built once where a
    run starts (``nfeval pd``, :func:`nfeval.debateqa.perspective_diversity`): the variant
    ("paper" or "official"), the paper variant's restate instruction (None: the paper's)
    and the seed of the interval."""

    variant: str = "paper"
    restate: str | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        from nfeval.debateqa.pd import VARIANTS

        if self.variant not in VARIANTS:
            raise NfevalError(f"unknown P.D. variant {self.variant!r}; use one of {VARIANTS}")


@dataclass(frozen=True)
class DASettings:
    """What decides a D.A. score besides the judge and the answers, built once where a run
    starts (``nfeval da``, :func:`nfeval.debateqa.dispute_awareness`): the mode, D.A.-ZS,
    a prompt of one's own (checked here: its ``{question}`` and ``{answer}`` slots), the
    guard and the seed of the interval."""

    mode: str = "prob"
    zero_shot: bool = False
    prompt: str | None = field(default=None, repr=False)
    guard: str = "off"  # nfeval.guard.GUARD_MODES (True: quote)
    seed: int = 0
    #: ``prompt`` with its slots in nfeval's spelling (``#question``/``#answer``, the
    #: alias, turned into ``{question}``/``{answer}``); the signature hashes ``prompt`` as
    #: given, the hash ``sha256sum`` prints for its file
    template: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from nfeval.debateqa.da import DA_MODES, check_template
        from nfeval.guard import guard_mode

        object.__setattr__(self, "guard", guard_mode(self.guard))

        if self.mode not in DA_MODES:
            raise NfevalError(f"Unknown D.A. mode {self.mode!r}; use one of "
                              f"{', '.join(DA_MODES)}.")
        if self.prompt is not None:
            from nfeval.debateqa.da import braced_slots

            template, _ = braced_slots(self.prompt)
            check_template(template, zero_shot=self.zero_shot)
            object.__setattr__(self, "template", template)


def read_stdin_to_file(suffix: str = ".jsonl") -> Path:
    """Standard input copied into a temporary file (the caller deletes it)."""
    fd, name = tempfile.mkstemp(prefix="nfeval-stdin-", suffix=suffix)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(sys.stdin.read())
    return Path(name)


@dataclass
class ScoringInput:
    answers_path: Path
    answers: dict[int, str]
    items: dict[int, DebateItem]
    split_source: str
    split_sha256: str | None
    skipped: list[str] = field(default_factory=list)  # "line N: reason" / "id N: reason"


def question_file(split: str) -> Path:
    """The question file a ``--split`` value names (resolved, downloaded if need be)."""
    if split == "sample":
        return SAMPLE_DIR / "questions.jsonl"
    if split in ("test", "dev"):
        return resolve(f"debateqa/{split}")
    path = Path(split).expanduser()
    if not path.is_file():
        raise NfevalError(f"question file {split!r} does not exist; use test, dev, sample or a "
                          "path to a file in the release's split format")
    return path


def answers_input(answers: Mapping[int, str], items: Mapping[int, DebateItem], path: Path, *,
                  name: str | Path = "<answers>", skipped: Sequence[str] = (),
                  lines: Mapping[int, int] | None = None) -> ScoringInput:
    """Keep the answers that can be scored against ``items`` (read from ``path``);
    list the others (unknown id, empty answer) after ``skipped``, each with its line
    when ``lines`` (id -> line number) is given."""
    skipped = list(skipped)
    kept: dict[int, str] = {}
    lines = lines or {}
    for qid, text in answers.items():
        where = f"line {lines[qid]}: " if qid in lines else ""
        if qid not in items:
            skipped.append(f"{where}id {qid}: not in the question file {path.name}")
        elif not text.strip():
            skipped.append(f"{where}id {qid}: empty answer")
        else:
            kept[qid] = text
    return ScoringInput(Path(name), kept, dict(items), str(path), sha256_file(path), skipped)


def prepare_inputs(answers: str | Path, split: str, *, limit: int = 0) -> ScoringInput:
    """Read answers and questions; list (not raise on) the lines that cannot be scored.

    ``answers`` is a file or ``"-"`` (standard input). ``limit`` > 0 keeps the
    first ``limit`` scorable answers (file order). Raises :class:`NothingScored`
    when no answer can be scored.
    """
    if limit < 0:
        raise NfevalError(f"--limit must be >= 0, got {limit}")
    try:
        path = question_file(split)
    except NfevalError as exc:
        if split not in ("test", "dev"):
            raise
        raise NfevalError(f"the DebateQA {split} split is not on this machine: score against "
                          f"the project's sample with --split sample, or give a split file "
                          f"with --split PATH. ({exc})") from None
    items = {it.id: it for it in load_debateqa(path)}
    tmp = read_stdin_to_file() if str(answers) == STDIN else None
    try:
        answer_set = load_answers(tmp or answers)
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
    name = "<stdin>" if tmp is not None else answer_set.path
    inputs = answers_input(answer_set.answers, items, path, name=name,
                           skipped=[str(p) for p in answer_set.problems],
                           lines=answer_set.lines)
    if limit and len(inputs.answers) > limit:
        inputs.answers = dict(list(inputs.answers.items())[:limit])
    if not inputs.answers:
        skipped = inputs.skipped
        raise NothingScored(f"{name}: no answer can be scored against {path} "
                            f"({len(skipped)} line(s) skipped: {'; '.join(skipped[:3])})")
    return inputs



def _run(inputs: ScoringInput, cache: RunCache | None, score_one: Callable[[int, str], dict],
         desc: str, progress: bool,
         score_many: Callable[[list[tuple[int, str]]], list[dict]] | None = None,
         chunk: int = 8) -> pd.DataFrame:
    """Score every uncached answer (one at a time, or ``chunk`` at a time with
    ``score_many``), caching each result as soon as it exists."""
    from tqdm.auto import tqdm

    rows: list[dict] = []
    todo = []
    for qid, text in inputs.answers.items():
        hit = cache.get(qid, text) if cache is not None else None
        if hit is not None:
            rows.append({"id": qid, **hit})
        else:
            todo.append((qid, text))
    bar = tqdm(total=len(inputs.answers), initial=len(rows), desc=desc, unit="answer",
               disable=not progress)
    step = chunk if score_many is not None else 1
    try:
        for k in range(0, len(todo), step):
            part = todo[k:k + step]
            results = score_many(part) if score_many is not None else [score_one(*part[0])]
            for (qid, text), result in zip(part, results):
                if cache is not None:
                    cache.put(qid, text, result)
                rows.append({"id": qid, **result})
            bar.update(len(part))
    except KeyboardInterrupt:
        bar.close()
        done = (f"the {len(rows)} finished answers are cached: rerun the same command to "
                "resume" if cache is not None else "nothing was cached (caching is off)")
        raise Interrupted(f"interrupted after {len(rows)} of {len(inputs.answers)} answers; "
                          f"{done}") from None
    bar.close()
    from nfeval.guard import flags_text

    order = {qid: i for i, qid in enumerate(inputs.answers)}
    table = pd.DataFrame(rows).sort_values("id", key=lambda s: s.map(order)).reset_index(drop=True)
    # text addressed to an evaluator or in a judge's verdict format (nfeval.guard.flags)
    table["flags"] = [flags_text(inputs.answers.get(q, "")) for q in table["id"]]
    return table


def score_pd(inputs: ScoringInput, model, settings: PDSettings = PDSettings(), *,
             use_cache: bool = True, progress: bool = True) -> pd.DataFrame:
    """Per-answer P.D. (columns ``id, pd, n_partial, scored_tokens, truncated_tokens, ...``)."""
    from nfeval.debateqa.pd import DEFAULT_RESTATE, pd_score

    variant = settings.variant
    restate = DEFAULT_RESTATE if settings.restate is None else settings.restate
    cache = RunCache("pd", {"model": model.info.cache_fields(), "variant": variant,
                            "restate": restate if variant == "paper" else None,
                            "questions": inputs.split_sha256}, model=model) if use_cache else None

    def one(qid: int, text: str) -> dict:
        r = pd_score(model, text, inputs.items[qid].partial_answers, variant=variant,
                     restate=restate, id=qid)
        return {"pd": r.score, "n_partial": r.n_partial, "scored_tokens": r.scored_tokens,
                "truncated_tokens": r.truncated_tokens,
                "context_truncated_tokens": r.context_truncated_tokens,
                "perplexities": ";".join(f"{p:.6g}" for p in r.perplexities)}

    return _run(inputs, cache, one, f"P.D. ({variant})", progress)


def score_da(inputs: ScoringInput, judge, settings: DASettings = DASettings(), *,
             use_cache: bool = True, progress: bool = True) -> pd.DataFrame:
    """Per-answer D.A. (columns ``id, da, label, mode, raw, cut_tokens, flags``); da is NaN
    when unparsed; cut_tokens counts the answer's tokens cut to fit the judge's window.
    ``settings.prompt``: a prompt of one's own (default: the release's few-shot template);
    ``settings.guard``: how the judge sees each answer (:func:`nfeval.screen.guarded_text`)."""
    from nfeval.data import load_prompt
    from nfeval.hashing import sha256_text
    from nfeval.debateqa.da import PROB_CHUNK, da_prob_fitted, da_score

    mode, zero_shot, guard = settings.mode, settings.zero_shot, settings.guard
    template = settings.template
    if template is None:
        template = load_prompt("debateqa/dispute_awareness_fewshot")
    cache = RunCache("da", {"model": judge.info.cache_fields(), "mode": mode, "zero_shot": zero_shot,
                            "kernel": "shared-prefix-tokens" if mode == "prob" else "per-answer",
                            "prompt": sha256_text(template),
                            "questions": inputs.split_sha256,
                            **({"guard": guard} if guard != "off" else {})},
                     model=judge) if use_cache else None
    from nfeval.screen import guarded_text

    def shown(text: str, question: str) -> str:
        return guarded_text(text, guard, question=question)

    def one(qid: int, text: str) -> dict:
        question = inputs.items[qid].question
        r = da_score(judge, question, shown(text, question), mode=mode,
                     zero_shot=zero_shot, id=qid, template=template)
        return {"da": r.score, "label": r.label, "mode": r.mode, "raw": r.raw,
                "cut_tokens": r.cut_tokens}

    def many(part: list[tuple[int, str]]) -> list[dict]:  # prob mode: shared few-shot prefix
        p1s, cuts = da_prob_fitted(judge, [(inputs.items[q].question,
                                            shown(t, inputs.items[q].question))
                                           for q, t in part],
                                   zero_shot=zero_shot, template=template)
        return [{"da": p, "label": int(p >= 0.5), "mode": mode, "raw": None, "cut_tokens": c}
                for p, c in zip(p1s, cuts)]

    table = _run(inputs, cache, one, f"D.A. ({mode}{', zero-shot' if zero_shot else ''})",
                 progress, score_many=many if mode == "prob" else None, chunk=PROB_CHUNK)
    if "cut_tokens" not in table:  # results cached before the column existed
        table["cut_tokens"] = 0
    table["cut_tokens"] = table["cut_tokens"].fillna(0).astype(int)
    return table


def mean_score(values: pd.Series) -> tuple[float, int]:
    """Mean over parsed values and the count of NaN (unparsed) ones."""
    finite = values.dropna()
    return (float(finite.mean()) if len(finite) else math.nan), int(values.isna().sum())


def pd_signature(model, settings: PDSettings = PDSettings(), *, n: int | None = None):
    """The :class:`~nfeval.signature.Signature` of P.D. scores (prompt: the restate
    instruction of the paper variant; the official variant has none)."""
    from nfeval.hashing import sha256_text
    from nfeval.debateqa.pd import DEFAULT_RESTATE
    from nfeval.signature import Signature

    variant = settings.variant
    restate = DEFAULT_RESTATE if settings.restate is None else settings.restate
    info = model.info.as_dict()
    return Signature(metric="perspective_diversity", variant=variant, model=info,
                     dtype=info.get("dtype"),
                     prompt_sha256=sha256_text(restate) if variant == "paper" else None,
                     seed=settings.seed, n=n)


def da_signature(judge, settings: DASettings = DASettings(), *, n: int | None = None):
    """The :class:`~nfeval.signature.Signature` of D.A. scores (prompt: the release's
    few-shot template, or the settings' own)."""
    from nfeval.data import load_prompt
    from nfeval.hashing import sha256_text
    from nfeval.signature import Signature

    mode, zero_shot, seed, template = (settings.mode, settings.zero_shot, settings.seed,
                                       settings.prompt)
    guard = settings.guard
    info = judge.info.as_dict() if judge is not None else None
    return Signature(metric="dispute_awareness",
                     variant=f"{mode}{'-zero-shot' if zero_shot else ''}", model=info,
                     dtype=(info or {}).get("dtype"),
                     prompt_sha256=sha256_text(template if template is not None else
                                               load_prompt("debateqa/dispute_awareness_fewshot")),
                     seed=seed, n=n, extra={"guard": guard} if guard != "off" else {})
