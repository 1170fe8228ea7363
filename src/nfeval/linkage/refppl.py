"""Reference-recovery perplexity: a LINKAGE table row beyond the paper.

DebateQA's P.D. idea applied to LINKAGE's graded reference lists: an answer
is good if a small base language model, having read it, finds the
question's best references likely. For a candidate ``c`` of question ``q``
and the references of the list's highest grade ``r_1..r_k``:

    refppl(c) = -(1/k) * sum_i meanNLL(r_i | context(q, c))

where ``meanNLL`` is the mean per-token negative log-likelihood (nats) of the
reference's tokens and ``context`` is the project's plain-text prompt
(``prompts/linkage_refppl.txt``: question, candidate, then "Another
answer ..."). The sign makes higher better, like every other row, so the
correlation with the grades is positive when the metric works. The context
is encoded once per candidate and shared by its references
(:meth:`~nfeval.models.base.LanguageModel.continuation_logprobs`).

Only the top grade's references are used: they are what an ideal candidate
should make predictable; lower-grade references would reward candidates
that resemble poor answers. Reference tokens beyond the model's window are
not scored and are counted (``truncated_tokens``); a candidate too long for
the window is cut from the left by the backend's rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from nfeval.errors import NfevalError
from nfeval.prompts import prompt_text

__all__ = ["PROMPT", "RefPPL", "refppl_context", "refppl_correlations", "refppl_question",
           "top_references"]

PROMPT = "linkage_refppl"


@dataclass(frozen=True)
class RefPPL:
    """One candidate's score and what went into it."""

    score: float  # minus the mean over references of their mean per-token NLL (nats)
    nll: tuple[float, ...]  # mean per-token NLL of each top-grade reference
    scored_tokens: int
    truncated_tokens: int


def _text(a) -> str:
    return a if isinstance(a, str) else a.text


def top_references(references: Sequence) -> list:
    """The references of the highest grade in the list (graded answers), in list order."""
    if not references:
        raise NfevalError("reference-recovery perplexity needs at least one reference.")
    grades = [getattr(r, "grade", None) for r in references]
    if any(g is None for g in grades):
        raise NfevalError("reference-recovery perplexity needs graded references.")
    top = max(grades)
    return [r for r, g in zip(references, grades) if g == top]


def refppl_context(question: str, candidate: str, template: str | None = None) -> str:
    """The text the references are scored after (the project's prompt, slots filled)."""
    t = prompt_text(PROMPT) if template is None else template
    return t.replace("{question}", question.strip()).replace("{candidate}", candidate.strip())


def refppl_question(model, question: str, references: Sequence, candidates: Sequence, *,
                    template: str | None = None) -> list[RefPPL]:
    """Scores of one question's candidates (order kept) against its top-grade references.

    A reference is scored as the continuation of the context after one space,
    so its first word is a normal mid-text token for the model.
    """
    refs = [" " + _text(r).strip() for r in top_references(references)]
    if any(r == " " for r in refs):
        raise NfevalError("a top-grade reference is empty.")
    t = prompt_text(PROMPT) if template is None else template
    out = []
    for c in candidates:
        text = _text(c)
        if not text.strip():
            raise NfevalError("a candidate answer is empty.")
        scored = model.continuation_logprobs(refppl_context(question, text, t), refs)
        nll = tuple(s.mean_nll for s in scored)
        ok = [x for x in nll if not math.isnan(x)]
        out.append(RefPPL(score=-sum(ok) / len(ok) if ok else math.nan, nll=nll,
                          scored_tokens=sum(s.n for s in scored),
                          truncated_tokens=sum(s.truncated for s in scored)))
    return out


def refppl_correlations(model, questions: Sequence, splits: Sequence, *,
                        template: str | None = None, progress: bool = True):
    """Per-question correlation of the row's scores with the grades, averaged over questions.

    ``questions``: the dataset's :class:`~nfeval.data.loaders.GradedQuestion` list;
    ``splits``: the scored questions' reference splits (references best first,
    graded candidates). Returns the rows of
    :func:`nfeval_repro.linkage.evaluation.judge_correlations` (``n_unparsed`` is 0:
    nothing is parsed), with ``truncated_tokens`` and ``scored_tokens`` in
    ``df.attrs``.
    """
    from tqdm.auto import tqdm

    from nfeval.metrics.correlation import correlation_frame

    text = {q.qid: q.question for q in questions}
    template = prompt_text(PROMPT) if template is None else template
    grades, values = {}, {}
    scored = truncated = 0
    for s in tqdm(splits, desc="reference-recovery perplexity", unit="question",
                  disable=not progress):
        if s.qid not in text:
            raise NfevalError(f"split {s.qid!r} has no question among the questions given.")
        res = refppl_question(model, text[s.qid], s.references, s.candidates, template=template)
        grades[s.qid] = [c.grade for c in s.candidates]
        values[s.qid] = [r.score for r in res]
        scored += sum(r.scored_tokens for r in res)
        truncated += sum(r.truncated_tokens for r in res)
    df = correlation_frame(grades, values)
    df.attrs.update(scored_tokens=scored, truncated_tokens=truncated)
    return df
