"""Sentences of an answer that may be written for its judge, found without knowing the wording.

:mod:`nfeval.guard`'s flag is a set of English patterns: it finds the wordings it was written
for and no others. This module scores every sentence of an answer with signals that do not
depend on how a manipulation is worded:

* ``pattern``: :func:`nfeval.guard.flags` (the patterns), kept as one signal among the others;
* ``relevance``: how close the sentence comes to the question or to any reference answer
  (cosine of mean-pooled all-MiniLM-L6-v2 sentence embeddings, the embedder the project
  ships): a sentence about nothing the question or the references speak of is suspect;
* ``evaluator``: how close the sentence comes to the project's examples of text written for an
  evaluator (``prompts/screen_evaluator_examples.txt``: notes to the judge, requested ranks,
  verdicts and scores, evaluation metadata, self-praise), the same cosine.

:func:`screen` flags a sentence when any signal crosses its threshold (:class:`Thresholds`);
:func:`strip_flagged` replaces the flagged sentences by :data:`nfeval.guard.STRIPPED`.
:data:`THRESHOLDS` were chosen on families of manipulations and on real answers held apart
from those every reported number is measured on (the reproduction's guard analysis says
how, and what each signal catches and costs). Sentences end at ``.``, ``!``, ``?`` or a line break, as in
:func:`nfeval.guard.strip_addressed`.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator, Sequence

import numpy as np

from nfeval.guard import SENTENCE, STRIPPED, apply_guard, flags, guard_mode
from nfeval.runcache import StepCache

__all__ = ["EVALUATOR_EXAMPLES", "SIGNALS", "THRESHOLDS", "Sentence", "Thresholds",
           "embed_sentences", "evaluator_similarity", "guarded_text", "reasons", "relevance",
           "screen", "sentences", "signal_steps", "signal_values", "strip_flagged"]

#: The project's examples of text written for an evaluator (a prompt file of nfeval's own).
EVALUATOR_EXAMPLES = "screen_evaluator_examples"
SIGNALS = ("pattern", "relevance", "evaluator")
#: Decimal places a cosine is rounded to before it meets a threshold: kernels of other
#: CPUs move the last float32 digits, never the fourth decimal of a cosine.
DIGITS = 4
#: The name a step cache (:func:`signal_steps`) keeps the sentences' signals under.
SIGNAL_STEP = "screen-signals.minilm-l6"


@dataclass(frozen=True)
class Thresholds:
    """A sentence is flagged when its relevance is below ``relevance`` or its similarity to
    the evaluator examples is at least ``evaluator`` (or a pattern matches, when
    ``pattern``)."""

    relevance: float
    evaluator: float
    pattern: bool = True


#: Chosen on the real answers of its calibration questions: each signal flags at
#: most 0.15% of them (relevance then flags almost nothing: real answers hold sentences as
#: far from their question as any manipulation).
THRESHOLDS = Thresholds(relevance=-0.05, evaluator=0.56)


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: its span, text and signals; ``reasons`` names the signals
    that flag it (empty: not flagged)."""

    start: int
    end: int
    text: str
    pattern: tuple[str, ...]
    relevance: float
    evaluator: float
    reasons: tuple[str, ...] = ()


def sentences(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, text)`` of every non-blank sentence of ``text``."""
    return [(m.start(), m.end(), m.group(0)) for m in SENTENCE.finditer(str(text))
            if m.group(0).strip()]


@lru_cache(maxsize=1)
def _encoder():
    from nfeval.linkage.embedding import _encoder as encoder, resolve_embedder

    _, path = resolve_embedder(None)
    return encoder(path, "cpu")


def embed_sentences(texts: Sequence[str], *, batch_size: int = 64,
                    max_length: int = 256) -> np.ndarray:
    """Unit-length mean-pooled all-MiniLM-L6-v2 embeddings (the sentence-transformers recipe),
    one row per text, float64."""
    import torch

    tok, model = _encoder()
    texts = [str(t).strip() for t in texts]
    out = np.zeros((len(texts), model.config.hidden_size))
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        enc = tok([texts[i] for i in idx], padding=True, truncation=True,
                  max_length=max_length, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc).last_hidden_state.float()
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        pooled = torch.nn.functional.normalize(pooled, dim=1)
        out[idx] = pooled.double().numpy()
    return out


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ``a`` against rows of ``b``, each rounded to :data:`DIGITS`."""
    return np.round(a @ b.T, DIGITS)


def relevance(sentence_vectors: np.ndarray, context_vectors: np.ndarray) -> np.ndarray:
    """Per sentence, its largest cosine with any context text (the question, the references)."""
    if len(context_vectors) == 0:
        return np.ones(len(sentence_vectors))
    return _cosines(sentence_vectors, context_vectors).max(axis=1)


@lru_cache(maxsize=1)
def _example_vectors() -> np.ndarray:
    from nfeval.prompts import prompt_lines

    return embed_sentences(prompt_lines(EVALUATOR_EXAMPLES))


def evaluator_similarity(sentence_vectors: np.ndarray) -> np.ndarray:
    """Per sentence, its largest cosine with the evaluator examples."""
    return _cosines(sentence_vectors, _example_vectors()).max(axis=1)


def reasons(pattern: Sequence[str], rel: float, ev: float,
            thresholds: Thresholds = THRESHOLDS) -> tuple[str, ...]:
    """The signals that flag a sentence with these values."""
    out = []
    if thresholds.pattern and pattern:
        out.append("pattern")
    if rel < thresholds.relevance:
        out.append("relevance")
    if ev >= thresholds.evaluator:
        out.append("evaluator")
    return tuple(out)


def screen(text: str, question: str, references: Sequence[str] = (), *,
           thresholds: Thresholds = THRESHOLDS) -> list[Sentence]:
    """Every sentence of ``text`` with its signals and the reasons it is flagged. The last
    :data:`SCREEN_CACHE` answers screened are remembered (a judge with several methods or
    references screens each answer once)."""
    return list(_screen(str(text), str(question), tuple(str(r) for r in references),
                        thresholds, _STEPS.get()))


#: How many screened answers :func:`screen` remembers.
SCREEN_CACHE = 4096


@lru_cache(maxsize=SCREEN_CACHE)
def _screen(text: str, question: str, references: tuple[str, ...],
            thresholds: Thresholds, steps: Callable | None = None) -> tuple[Sentence, ...]:
    parts = sentences(text)
    if not parts:
        return ()
    if steps is None:
        vecs = embed_sentences([p[2] for p in parts])
        rel, ev = relevance(vecs, _context_vectors(question, references)), \
            evaluator_similarity(vecs)
    else:
        context = [question, *[r for r in references if r.strip()]]
        values = steps(SIGNAL_STEP, [[p[2].strip(), *context] for p in parts], signal_values)
        rel, ev = [v[0] for v in values], [v[1] for v in values]
    out = []
    for (s, e, t), r, v in zip(parts, rel, ev):
        pat = flags(t)
        out.append(Sentence(s, e, t, pat, float(r), float(v),
                            reasons(pat, float(r), float(v), thresholds)))
    return tuple(out)


@lru_cache(maxsize=256)
def _context_vectors(question: str, references: tuple[str, ...]) -> np.ndarray:
    """The question's and the references' embeddings (every answer to a question shares them)."""
    vecs = embed_sentences([question, *[r for r in references if r.strip()]])
    vecs.flags.writeable = False
    return vecs


_STEPS: ContextVar[StepCache | None] = ContextVar("nfeval_screen_steps", default=None)
_TEXT_VECTORS: dict[str, np.ndarray] = {}  # a question's context recurs in every call


def signal_values(items: Sequence[Sequence[str]]) -> list[list[float]]:
    """``[relevance, evaluator]`` of each ``[sentence, question, *references]``: what
    :func:`signal_steps`' cache keeps per sentence (the question's and references' embeddings
    are kept for the process: they recur in every call)."""
    sents = sorted({it[0] for it in items})
    sv = dict(zip(sents, embed_sentences(sents)))
    todo = sorted({c for it in items for c in it[1:] if c not in _TEXT_VECTORS})
    if todo:
        _TEXT_VECTORS.update(zip(todo, embed_sentences(todo)))
    ev = dict(zip(sents, evaluator_similarity(np.array([sv[s] for s in sents]))))
    out = []
    for it in items:
        rel = relevance(sv[it[0]][None, :], np.array([_TEXT_VECTORS[c] for c in it[1:]]))[0]
        out.append([float(rel), float(ev[it[0]])])
    return out


@contextmanager
def signal_steps(steps: StepCache) -> Iterator[None]:
    """Within the block, :func:`screen` (and so ``--guard screen``) takes each sentence's
    relevance and evaluator similarity from ``steps(SIGNAL_STEP, inputs, signal_values)``:
    for example a store of values computed once, so a rerun on another CPU flags the same
    sentences without embedding anything. Outside it they are computed."""
    token = _STEPS.set(steps)
    try:
        yield
    finally:
        _STEPS.reset(token)


def strip_flagged(text: str, checked: Sequence[Sentence]) -> str:
    """``text`` with every flagged sentence of ``checked`` (:func:`screen`) replaced by
    :data:`~nfeval.guard.STRIPPED`; unchanged when none is flagged."""
    out, pos = [], 0
    for s in checked:
        if not s.reasons:
            continue
        part = text[s.start:s.end]
        lead = part[:len(part) - len(part.lstrip())]
        out.append(text[pos:s.start] + lead + STRIPPED + ("\n" if part.endswith("\n") else ""))
        pos = s.end
    return "".join(out) + text[pos:]


def guarded_text(text: str, mode: str, *, question: str = "",
                 references: Sequence[str] = ()) -> str:
    """What a judge prompt's answer slot holds for ``text`` under guard ``mode``
    (:data:`nfeval.guard.GUARD_MODES`): ``screen`` replaces every sentence :func:`screen`
    flags (against ``question`` and ``references``) by the marker and changes nothing else
    (an answer with nothing flagged comes back as it was); the other modes are
    :func:`nfeval.guard.apply_guard`'s."""
    if guard_mode(mode) != "screen":
        return apply_guard(text, mode)
    return strip_flagged(text, screen(text, question, references))
