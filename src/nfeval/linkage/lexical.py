"""LINKAGE's reference-based baselines: ROUGE-1/2/L, BLEU and BERTScore (Table 2).

What it computes, where it departs from the release and why:
``docs/linkage.md`` (Lexical and embedding baselines).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage import methods as M
from nfeval.linkage.embedding import (_embedder_source, bertscore_f1, cls_cosine,
                                      resolve_name)
from nfeval.linkage.references import ReferenceSplit, sample_all
from nfeval.metrics.correlation import COEFFICIENTS, question_correlations
from nfeval.runcache import StepCache
from nfeval.signature import Signature

__all__ = [
    "LEXICAL_METHODS",
    "METHODS",
    "bertscore_f1",
    "bleu",
    "bleu_smoothed",
    "cls_cosine",
    "correlation_table",
    "lexical_ground_truth",
    "lcs_length",
    "lexical_scores",
    "method_signature",
    "rouge_f1",
    "rouge_release",
    "split_scores",
]

#: The paper's four; ``METHODS`` adds ``bleu-smoothed``, for users' own answers (NLTK's
#: smoothing ``method1``), where an unsmoothed sentence BLEU of a short answer is often a tiny
#: positive number like 1e-155 (the papers' tables use ``bleu``, unsmoothed, as the release
#: does), and the embedding methods. Both lists live in :mod:`nfeval.linkage.methods`.
LEXICAL_METHODS = M.PAPER_LEXICAL_METHODS
METHODS = M.LEXICAL_METHODS
Candidates = Literal["all-but-ground", "rest"]
RougeImpl = Literal["rouge-score", "release"]


# --------------------------------------------------------------------------- ground truth

def lexical_ground_truth(references: Sequence[GradedAnswer]) -> GradedAnswer:
    """The one reference the lexical baselines compare against, chosen as the release does.

    Among the references of the highest grade present: the second if there are
    two or more, else the first (with ``"33221100"``: the second grade-3
    reference; with ``"3210"``: the only one). Order is the list's order.
    """
    if not references:
        raise NfevalError("no references to choose a ground truth from.")
    top = max(a.grade for a in references)
    best = [a for a in references if a.grade == top]
    return best[1] if len(best) > 1 else best[0]


# --------------------------------------------------------------------------- ROUGE, BLEU

@lru_cache(maxsize=1)
def _rouge_tokenizer():
    from rouge_score.tokenizers import DefaultTokenizer

    return DefaultTokenizer(use_stemmer=False)


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(zip(*(tokens[i:] for i in range(n)))) if len(tokens) >= n else Counter()


@lru_cache(maxsize=50_000)
def _rouge_grams(text: str) -> tuple[tuple[str, ...], Counter, Counter]:
    """A text's ROUGE tokens and their 1- and 2-gram counts, once per text (a reference is
    compared with every candidate of its question). Read only."""
    tokens = tuple(_rouge_tokenizer().tokenize(text))
    return tokens, _ngrams(tokens, 1), _ngrams(tokens, 2)


def _overlap(a: Counter, b: Counter) -> int:
    """The clipped n-gram matches of two counts (symmetric: the smaller is walked)."""
    if len(b) < len(a):
        a, b = b, a
    return sum(min(c, b[g]) for g, c in a.items() if g in b)


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Hyyro, 2004): one bit per token of the shorter sequence, one
    big-integer step per token of the longer, instead of the quadratic table.
    """
    if len(a) < len(b):
        a, b = b, a
    where: dict = {}
    for i, tok in enumerate(b):
        where[tok] = where.get(tok, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for tok in a:
        m = where.get(tok)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


@lru_cache(maxsize=200_000)
def _rouge_f1(candidate: str, reference: str) -> tuple[float, float, float]:
    target, *t_grams = _rouge_grams(reference)
    pred, *p_grams = _rouge_grams(candidate)
    out = []
    for t, p in zip(t_grams, p_grams):
        overlap = _overlap(t, p)
        out.append(_f1(overlap / max(sum(p.values()), 1), overlap / max(sum(t.values()), 1)))
    if not target or not pred:
        out.append(0.0)
    else:
        lcs = lcs_length(target, pred)
        out.append(_f1(lcs / len(pred), lcs / len(target)))
    return tuple(out)


def rouge_f1(candidate: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L F1 of one candidate against one reference, as ``rouge_score``'s
    ``RougeScorer(["rouge1", "rouge2", "rougeL"]).score(reference, candidate)`` computes
    them (its tokenizer, no stemmer; the same values to the last bit, tested), with the
    LCS found bit-parallel and each pair computed once per process."""
    return dict(zip(("rouge1", "rouge2", "rougeL"), _rouge_f1(candidate, reference)))


@lru_cache(maxsize=1)
def _release_rouge():
    from rouge import Rouge

    return Rouge()


def rouge_release(candidate: str, reference: str) -> dict[str, float]:
    """ROUGE-1/2/L F1 from the ``rouge`` package (pltrdy, 1.0.1) the release called.

    Where the package raises on a text without words we return 0. Its LCS
    back-tracking recurses once per word of a sentence; a sentence too long for
    Python's recursion limit is scored again under a raised limit.
    """
    def scores() -> dict:
        return _release_rouge().get_scores(candidate, reference)[0]

    try:
        try:
            s = scores()
        except RecursionError:
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, 100_000))
            try:
                s = scores()
            finally:
                sys.setrecursionlimit(limit)
    except ValueError:  # "Collections must contain at least 1 sentence."
        return {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    return {"rouge1": float(s["rouge-1"]["f"]), "rouge2": float(s["rouge-2"]["f"]),
            "rougeL": float(s["rouge-l"]["f"])}


def _sentence_bleu(candidate: str, reference: str, epsilon: float | None) -> float:
    """Sentence BLEU, whitespace tokens, 4-gram weights; an order without a match enters as
    the smallest positive float (``epsilon`` None: NLTK's ``method0``) or as ``epsilon``
    matches (NLTK's ``method1``). 0 when no unigram matches (as NLTK)."""
    hyp, ref = candidate.split(), reference.split()
    if not hyp:
        return 0.0
    logs = []
    for n in (1, 2, 3, 4):
        counts, ref_counts = _ngrams(hyp, n), _ngrams(ref, n)
        matched = sum(min(c, ref_counts[g]) for g, c in counts.items())
        if n == 1 and matched == 0:
            return 0.0
        total = max(1, sum(counts.values()))
        # NLTK: math.log(Fraction(matched, total)) takes the correctly rounded matched / total
        logs.append(0.25 * math.log(matched / total if matched else
                                    sys.float_info.min if epsilon is None else epsilon / total))
    bp = 1 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return float(bp * math.exp(math.fsum(logs)))


@lru_cache(maxsize=200_000)
def bleu(candidate: str, reference: str) -> float:
    """NLTK's sentence BLEU, whitespace tokens, default 4-gram weights, no smoothing (each
    pair computed once per process).

    ``nltk.translate.bleu_score.sentence_bleu([reference.split()], candidate.split())``
    computed without NLTK's per-call overhead, the same operations in the same order (the
    same values to the last bit, tested): clipped n-gram precisions, 0 when no unigram
    matches; an order with no match enters the geometric mean as the smallest positive float
    (NLTK's ``method0``), so such a score is tiny but not 0 and keeps its order; the brevity
    penalty from the reference's length."""
    return _sentence_bleu(candidate, reference, None)


@lru_cache(maxsize=200_000)
def bleu_smoothed(candidate: str, reference: str, epsilon: float = 0.1) -> float:
    """Sentence BLEU as :func:`bleu`, with NLTK's smoothing ``method1``: an n-gram order
    without a match counts ``epsilon`` matches instead of 0 (``sentence_bleu(...,
    smoothing_function=SmoothingFunction().method1)``, the same values, tested). Still 0
    when no unigram matches (as NLTK)."""
    return _sentence_bleu(candidate, reference, epsilon)


# --------------------------------------------------------------------------- whole runs

@dataclass(frozen=True)
class _Pair:
    qid: str
    answer: GradedAnswer
    ground: str


def _pairs(splits: Iterable[ReferenceSplit], questions: dict[str, GradedQuestion],
           candidates: Candidates) -> list[_Pair]:
    if candidates not in ("all-but-ground", "rest"):
        raise NfevalError(f"candidates must be 'all-but-ground' or 'rest', not {candidates!r}")
    pairs = []
    for s in splits:
        if not s.references:
            continue
        gt = lexical_ground_truth(s.references)
        if candidates == "rest":
            pool = s.candidates
        else:  # the release drops every answer whose text is the ground truth's
            pool = tuple(a for a in questions[s.qid].answers if a.text != gt.text)
        pairs += [_Pair(s.qid, a, gt.text) for a in pool]
    return pairs


def lexical_scores(questions: Sequence[GradedQuestion], pattern: str = "33221100",
                   seed: int = 0, *, allow_short: bool = True,
                   candidates: Candidates = "all-but-ground", **scoring) -> pd.DataFrame:
    """Score the candidates of every question against its ground truth.

    Returns one row per (candidate, method): ``qid, doc_id, grade, method,
    score``. References are drawn with :func:`~nfeval.linkage.references.sample_all`
    (``allow_short=True`` by default, as the release: a question short of the
    pattern keeps what it has), then scored by :func:`split_scores`, which takes
    ``scoring`` (``methods``, ``rouge``, ``embedder``, ``num_layers``, ``batch_size``,
    ``device``, ``steps``); ``candidates`` defaults here to the release's ``"all-but-ground"``.
    Questions that were skipped, or kept no reference at all, are listed in
    ``df.attrs["skipped"]``; the run's settings are in ``df.attrs`` too.
    """
    draw = sample_all(questions, pattern, seed, allow_short=allow_short)
    df = split_scores(draw.splits, questions, candidates=candidates, **scoring)
    df.attrs.update(
        skipped=draw.skipped + [s.qid for s in draw.splits if not s.references],
        n_short=draw.n_short, pattern=pattern, seed=seed, allow_short=allow_short)
    return df


#: the BERTScore encoder's options of :func:`split_scores` and their defaults
ENCODER_OPTIONS = {"embedder": None, "num_layers": 6, "batch_size": 64, "device": None}


def split_scores(splits: Sequence[ReferenceSplit], questions: Sequence[GradedQuestion], *,
                 methods: Sequence[str] = METHODS, candidates: Candidates = "rest",
                 rouge: RougeImpl = "rouge-score", steps: StepCache | None = None,
                 **encoder: Any) -> pd.DataFrame:
    """:func:`lexical_scores` on given reference splits (rows ``qid, doc_id, grade, method, score``).

    ``encoder``: the BERTScore methods' encoder (:data:`ENCODER_OPTIONS`: ``embedder``,
    ``num_layers``, ``batch_size``, ``device``).

    With ``candidates="rest"`` (the default here) exactly the splits'
    candidates are scored: the same items an LLM judge saw, so a lexical row
    and a judge row differ only by the method. ``steps(name, inputs, compute)``, when
    given, keeps the embedding scores per pair (the reproduction passes its item store's
    :func:`~nfeval_repro.store.cached_steps`, so a rerun on another CPU ranks the same
    floats); without it they are computed.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise NfevalError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    if bad := sorted(set(encoder) - set(ENCODER_OPTIONS)):
        raise NfevalError(f"unknown encoder option(s) {bad}; use {', '.join(ENCODER_OPTIONS)}")
    embedder, num_layers, batch_size, device = (encoder.get(k, d)
                                                for k, d in ENCODER_OPTIONS.items())
    M.check_rouge(rouge)
    pairs = _pairs(splits, {q.qid: q for q in questions}, candidates)
    cands = [p.answer.text for p in pairs]
    grounds = [p.ground for p in pairs]

    columns: dict[str, list[float]] = {}
    if any(m.startswith("rouge") for m in methods):
        rouge_fn = rouge_f1 if rouge == "rouge-score" else rouge_release
        rouge_rows = [rouge_fn(c, g) for c, g in zip(cands, grounds)]
        for m in ("rouge1", "rouge2", "rougeL"):
            columns[m] = [r[m] for r in rouge_rows]
    if "bleu" in methods:
        columns["bleu"] = [bleu(c, g) for c, g in zip(cands, grounds)]
    if "bleu-smoothed" in methods:
        columns["bleu-smoothed"] = [bleu_smoothed(c, g) for c, g in zip(cands, grounds)]
    cached_steps = steps or (lambda _name, inputs, compute: list(compute(list(inputs))))
    name = resolve_name(embedder)
    pair_inputs = [[c, g] for c, g in zip(cands, grounds)]
    if "bertscore" in methods:
        columns["bertscore"] = cached_steps(
            f"bertscore-f1.{name}.l{num_layers}", pair_inputs,
            lambda xs: bertscore_f1([x[0] for x in xs], [x[1] for x in xs], embedder=embedder,
                                    num_layers=num_layers, batch_size=batch_size,
                                    device=device))
    if "bertscore-cls" in methods:
        columns["bertscore-cls"] = cached_steps(
            f"bertscore-cls.{name}", pair_inputs,
            lambda xs: cls_cosine([x[0] for x in xs], [x[1] for x in xs], embedder=embedder,
                                  batch_size=min(batch_size, 32), device=device))

    ids = {"qid": [p.qid for p in pairs], "doc_id": [p.answer.doc_id for p in pairs],
           "grade": [p.answer.grade for p in pairs]}
    frames = [pd.DataFrame({**ids, "method": m, "score": columns[m]}) for m in methods]
    df = (pd.concat(frames, ignore_index=True) if frames
          else pd.DataFrame(columns=["qid", "doc_id", "grade", "method", "score"]))
    df.attrs.update(candidates=candidates, rouge=rouge, embedder=name, num_layers=num_layers)
    return df


def correlation_table(scores: pd.DataFrame,
                      coefficients: Sequence[str] = COEFFICIENTS) -> pd.DataFrame:
    """Per-question correlation with the grades, averaged over questions, per method.

    ``scores`` has the columns of :func:`lexical_scores` (any other per-candidate
    scores in that shape work too). Returns ``method, coefficient, ours,
    n_questions, n_skipped_undefined`` (the column names of
    :func:`nfeval.metrics.correlation.correlation_rows`, without its interval);
    undefined per-question coefficients are skipped and counted, as
    :func:`~nfeval.metrics.correlation.question_correlations` does.
    """
    rows = []
    for method, df in scores.groupby("method", sort=False):
        grades = {q: g["grade"].tolist() for q, g in df.groupby("qid", sort=False)}
        values = {q: g["score"].tolist() for q, g in df.groupby("qid", sort=False)}
        for coef, summary in question_correlations(grades, values, coefficients).items():
            rows.append({"method": method, "coefficient": coef, "ours": summary.mean,
                         "n_questions": summary.n_used,
                         "n_skipped_undefined": summary.n_skipped})
    return pd.DataFrame(rows, columns=["method", "coefficient", "ours", "n_questions",
                                       "n_skipped_undefined"])


def method_signature(method: str, *, pattern: str, seed: int, n: int,
                     candidates: Candidates = "all-but-ground", rouge: RougeImpl = "rouge-score",
                     embedder: str | None = None, num_layers: int | None = 6) -> Signature:
    """The :class:`~nfeval.signature.Signature` of one method's scores."""
    extra: dict[str, object] = {"pattern": pattern, "candidates": candidates,
                                "ground": "2nd-top-grade-reference"}
    model = None
    if method.startswith("rouge"):
        variant = f"{rouge}-f1"
        if rouge == "rouge-score":
            extra.update(tok="rouge-score-default", pkg=f"rouge-score=={_version('rouge-score')}")
        else:
            extra.update(tok="period-then-space", ngrams="sets")
    elif method in ("bleu", "bleu-smoothed"):
        variant = "nltk-sentence-bleu"
        extra.update(tok="whitespace", weights="0.25x4",
                     smooth="method1-eps0.1" if method == "bleu-smoothed" else "none",
                     pkg=f"nltk=={_version('nltk')}")
    else:
        name = resolve_name(embedder)
        model = {"name": name, "source": _embedder_source(name)}
        if method == "bertscore":
            variant = "f1-no-idf-no-rescale"
            extra.update(layer=num_layers, pkg=f"bert-score=={_version('bert-score')}")
        else:
            variant = "release-cls-cosine"
            extra.update(layer="last", max_len=512)
    return Signature(metric=method, variant=variant, model=model, seed=seed, n=n, extra=extra)


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"
