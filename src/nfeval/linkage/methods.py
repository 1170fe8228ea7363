"""The names ``nfeval linkage`` knows: methods, judge modes, pairwise positions, reference
sources. Defined here once, importing nothing but the package root, so that the command
line's ``--help`` lists them without loading any scoring code
(:mod:`nfeval.linkage.score_file` says what each method does)."""

from __future__ import annotations

from nfeval.errors import NfevalError

#: The LLM judges (:mod:`nfeval.linkage.judges`).
JUDGE_METHODS = ("linkage", "pointwise", "pointwise-ref", "pointwise-ref-graded", "pairwise")
#: The paper's lexical baselines (:mod:`nfeval.linkage.lexical`).
PAPER_LEXICAL_METHODS = ("rouge1", "rouge2", "rougeL", "bleu")
#: Every lexical and embedding method: the paper's, ``bleu-smoothed`` for users' own answers
#: (NLTK's smoothing ``method1``), BERTScore and the release's [CLS] cosine.
LEXICAL_METHODS = PAPER_LEXICAL_METHODS + ("bleu-smoothed", "bertscore", "bertscore-cls")
#: Every method of ``nfeval linkage --method``.
METHODS = (*JUDGE_METHODS, "refppl", *LEXICAL_METHODS)
#: Judge modes: the expected value of the label distribution, or a generated reply parsed
#: (sampled at the release's temperature and top-p). The one vocabulary of every command:
#: ``nfeval da --mode`` says prob and generate too.
MODES = ("prob", "generate")
#: Older spellings that still work, each with the one it stands for.
MODE_ALIASES = {"sample": "generate"}


def judge_mode(mode: str | None) -> str | None:
    """``mode`` in the one vocabulary (:data:`MODES`): an alias of :data:`MODE_ALIASES` is
    read as the mode it stands for; None stays None; anything else is returned unchanged
    (the caller refuses it with its own message)."""
    return MODE_ALIASES.get(mode, mode) if mode is not None else None
#: Pairwise positions: a seeded coin per pair (the paper), the candidate always first (the
#: release's scripts), or always second (with "release", each pair judged in both orders).
POSITIONS = ("random", "release", "reference-first")
#: Where reference lists come from: the file, LINKAGE-1GT or LINKAGE-0GT (generated).
REFERENCE_SOURCES = ("file", "1gt", "0gt")
#: The ROUGE implementations: the rouge-score package, or the release's pltrdy arithmetic.
ROUGE_IMPLEMENTATIONS = ("rouge-score", "release")


def method_kind(method: str) -> str:
    """``"judge"``, ``"refppl"`` or ``"lexical"``; an unknown method is an error."""
    if method in JUDGE_METHODS:
        return "judge"
    if method == "refppl":
        return "refppl"
    if method in LEXICAL_METHODS:
        return "lexical"
    raise NfevalError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")


def check_references(references: str) -> str:
    """``references`` when it is a reference source (:data:`REFERENCE_SOURCES`)."""
    if references not in REFERENCE_SOURCES:
        raise NfevalError(f"references must be one of {', '.join(REFERENCE_SOURCES)}, "
                          f"got {references!r}")
    return references


def check_rouge(rouge: str) -> str:
    """``rouge`` when it is a ROUGE implementation (:data:`ROUGE_IMPLEMENTATIONS`)."""
    if rouge not in ROUGE_IMPLEMENTATIONS:
        raise NfevalError(f"rouge must be {' or '.join(map(repr, ROUGE_IMPLEMENTATIONS))}, "
                          f"not {rouge!r}")
    return rouge
