"""Perspective Diversity (DebateQA, EACL 2026): the kernel and what it means.

P.D. (paper Equation 1) scores an answer A to a debatable question by how
well a backbone language model can recover the question's reference partial
answers PA_i = POV_i + explanation_i from it:

    P.D.(A) = sum_i PPL(PA_i | chatTemplate(A + "Please restate."))

Lower is better. Two named variants:

* ``paper`` -- as Equation 1 states: the sum over partial answers of the
  perplexity of ``f"{point_of_view}. {explanation}"`` over its own tokens,
  conditioned on the backbone's chat template applied to one user turn
  holding the answer, a newline and a restate instruction ("Please
  restate." by default; the stability study's prompts are a parameter),
  followed by the template's generation prompt (the model is about to
  answer the restate request). The answer's tokens are shared by all its
  partial answers (encoded once).
* ``official`` -- what the authors' released script computes (FACTS.md):
  the chat template applied to the answer alone (no restate instruction, no
  generation prompt; GPT-2 uses the legacy "content + EOS" template),
  context and partial answer joined and **right-truncated** at the model's
  maximum length, the summed NLL of the partial answer's tokens divided by
  the number of all positions minus one (context + continuation - 1, the
  "diluted normaliser"), exponentiated, then the **mean** over partial
  answers. Here context and partial answer are tokenized separately and
  concatenated; with the legacy EOS template (and with chat templates that
  end in a special token and a newline) this is the same token sequence as
  the release's joint tokenization.

Truncation policy (``paper``): scored tokens are never dropped silently. If
answer + partial answer exceed the window, the *answer* is cut from the left
(its most recent tokens are kept) and ``context_truncated_tokens`` says by
how much; only a partial answer longer than the window on its own loses its
tail, counted in ``truncated_tokens``. The ``official`` variant cuts the
scored text on the right as the release does, and counts what it cut in
``truncated_tokens`` instead of hiding it.

Equation 7 of the paper reads a change of P.D. as a change in the
probability of recovering a partial answer. With n partial answers and the
(log-)perplexity of each written as its per-token negative log-likelihood
(the paper's simplification, stated in its footnote), P.D. is the sum of the
n per-token NLLs, so a change of ``delta`` in P.D. spread evenly over the n
partial answers changes each one's per-token log-probability by
``-delta / n``. The ratio of per-token probabilities between the two answers
is therefore

    P1(A2) / P1(A1) = exp(-delta / n)

For n = 3 and delta = -2 this gives exp(2/3) = 1.948, the paper's "1.95
times". If P.D. is instead summed over true perplexities (what the metric
computes), the same ratio depends on the starting perplexity:
``ppl / (ppl + delta / n)``; :func:`exact_perplexity_ratio` gives it so the
approximation can be judged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from nfeval import NfevalError
from nfeval.models.base import TokenLogprobs


def probability_ratio(n: float, delta_pd: float) -> float:
    """Equation 7: per-token probability ratio implied by a P.D. change."""
    if n <= 0:
        raise NfevalError(f"n (partial answers) must be positive, got {n}")
    return math.exp(-delta_pd / n)


def simulated_probability_ratio(n: int, delta_pd: float, *, n_tokens: int = 150,
                                seed: int = 0) -> float:
    """Equation 7 checked numerically on simulated token log-probabilities.

    Draws per-token NLLs for n partial answers under answer A1, subtracts
    ``delta_pd / n`` from every token of every partial answer (so the sum of
    per-answer mean NLLs moves by exactly ``delta_pd``), recomputes both
    P.D. values from the tokens, and returns the ratio of the geometric-mean
    per-token probabilities of one partial answer under A2 and A1.
    """
    rng = np.random.default_rng(seed)
    nll_a1 = rng.gamma(shape=2.0, scale=1.5, size=(n, n_tokens)) + abs(delta_pd)
    nll_a2 = nll_a1 + delta_pd / n
    pd_a1 = nll_a1.mean(axis=1).sum()
    pd_a2 = nll_a2.mean(axis=1).sum()
    if not math.isclose(pd_a2 - pd_a1, delta_pd, rel_tol=0, abs_tol=1e-9):
        raise AssertionError("simulation did not produce the requested P.D. change")
    p_a1 = np.exp(-nll_a1[0].mean())
    p_a2 = np.exp(-nll_a2[0].mean())
    return float(p_a2 / p_a1)


def exact_perplexity_ratio(n: float, delta_pd: float, start_perplexity: float) -> float:
    """Ratio when P.D. sums true perplexities starting at ``start_perplexity`` each."""
    end = start_perplexity + delta_pd / n
    if end <= 0:
        return math.nan
    return start_perplexity / end


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
