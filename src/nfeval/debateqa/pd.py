"""Perspective Diversity (DebateQA, EACL 2026): the kernel.

What a P.D. change means per token (Equation 7): :mod:`nfeval_repro.debateqa.eq7`.

What it computes, where it departs from the release and why:
``docs/debateqa.md`` (Perspective Diversity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from nfeval.errors import NfevalError
from nfeval.models.base import TokenLogprobs


# --------------------------------------------------------------------------- kernel

DEFAULT_RESTATE = "Please restate."
VARIANTS = ("paper", "official")


@dataclass
class PDResult:
    """P.D. of one answer, with what went into it."""

    id: object
    score: float
    perplexities: list[float]
    variant: str
    scored_tokens: int = 0
    truncated_tokens: int = 0  # partial-answer tokens that were not scored
    context_truncated_tokens: int = 0  # answer tokens cut from the left (paper variant)

    @property
    def n_partial(self) -> int:
        return len(self.perplexities)


def _texts(partial_answers: Sequence) -> list[str]:
    return [p if isinstance(p, str) else p.text for p in partial_answers]


def pd_context(model, answer: str, *, variant: str = "paper",
               restate: str = DEFAULT_RESTATE) -> str:
    """The conditioning text x of a variant (see the module docstring)."""
    _check_variant(variant)
    if variant == "paper":
        user = f"{answer}\n{restate}" if restate else answer
        return model.chat_prompt(user, add_generation_prompt=True)
    return model.chat_prompt(answer, add_generation_prompt=False)


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise NfevalError(f"unknown P.D. variant {variant!r}; use one of {VARIANTS}")


def _paper(model, rid, context: str, scored: Sequence[TokenLogprobs]) -> PDResult:
    ppl = [s.perplexity for s in scored]
    truncated_ctx = 0
    if getattr(model, "token_level", False) and scored:  # the hf backend's window rule
        n_ctx, window = len(model.encode_context(context)), model.max_length
        longest = max(s.n + s.truncated for s in scored)
        kept = 1 if longest > window - 1 else min(n_ctx, window - longest)
        truncated_ctx = n_ctx - kept
    return PDResult(id=rid, score=float(sum(ppl)), perplexities=ppl, variant="paper",
                    scored_tokens=sum(s.n for s in scored),
                    truncated_tokens=sum(s.truncated for s in scored),
                    context_truncated_tokens=truncated_ctx)


def _official(model, rid, context: str, partial_texts: Sequence[str]) -> PDResult:
    if not getattr(model, "token_level", False):
        raise NfevalError("the 'official' P.D. variant needs token-level access to the model "
                          "(the hf backend); use variant='paper' with an HTTP backend")
    x = model.encode_context(context)
    window = model.max_length
    ppl, scored_n, cut = [], 0, 0
    plans = []
    for text in partial_texts:
        y = model.encode_continuation(text)
        total = min(len(x) + len(y), window)  # right truncation of x + y, as the release
        keep = max(0, total - len(x))
        plans.append((y[:keep], total))
        cut += len(y) - keep
    x_in = x[:window]
    scorable = [i for i, (y, _) in enumerate(plans) if y]
    scored = model.score_ids(x_in, [plans[i][0] for i in scorable]) if scorable else []
    by_index = dict(zip(scorable, scored))
    for i, (y, total) in enumerate(plans):
        nll = -by_index[i].total if i in by_index else 0.0
        scored_n += len(y)
        ppl.append(math.exp(nll / max(total - 1, 1)))  # diluted normaliser of the release
    return PDResult(id=rid, score=float(np.mean(ppl)) if ppl else math.nan, perplexities=ppl,
                    variant="official", scored_tokens=scored_n, truncated_tokens=cut)


def pd_score(model, answer: str, partial_answers: Sequence, *, variant: str = "paper",
             restate: str = DEFAULT_RESTATE, id=None) -> PDResult:
    """P.D. of one answer against its question's partial answers (lower is better)."""
    return pd_scores(model, {id: answer}, {id: partial_answers}, variant=variant,
                     restate=restate, progress=False)[0]


def pd_scores(model, answers: Mapping, partial_answers: Mapping, *, variant: str = "paper",
              restate: str = DEFAULT_RESTATE, progress: bool = True) -> list[PDResult]:
    """P.D. of many answers; ``partial_answers[id]`` is a DebateItem's list or texts.

    Results follow the order of ``answers``. Every answer id must have
    partial answers (callers report and drop unknown ids first).
    """
    from tqdm.auto import tqdm

    _check_variant(variant)
    if not answers:
        return []
    missing = [k for k in answers if k not in partial_answers]
    if missing:
        raise NfevalError(f"no partial answers for answer id(s) {missing[:5]}")
    for k, a in answers.items():
        if not isinstance(a, str) or not a.strip():
            raise NfevalError(f"answer {k!r} is empty")
    out = []
    for rid, answer in tqdm(answers.items(), total=len(answers), desc=f"P.D. ({variant})",
                            disable=not progress, unit="answer"):
        texts = _texts(partial_answers[rid])
        if not texts:
            raise NfevalError(f"question {rid!r} has no partial answers")
        context = pd_context(model, answer, variant=variant, restate=restate)
        if variant == "paper":
            out.append(_paper(model, rid, context, model.continuation_logprobs(context, texts)))
        else:
            out.append(_official(model, rid, context, texts))
    return out
