"""Named question sources for the curation pipeline (DebateQA Section 3.1, Tables 8-9).

DebateQA pools 2,281 DELPHI questions, the 434 of ConflictingQA and 1,758
sourced from nine websites, then deduplicates them. Those pools are not in
the public release, so the project runs the same step on every question set
it holds, each a named source:

========================  ==============================================
``antique``               LINKAGE's ANTIQUE questions (:func:`load_linkage`)
``trec-dl-nf``            LINKAGE's TREC-DL-NF questions
``webglm``                LINKAGE's WebGLM questions (:func:`load_webglm`)
``debateqa-sample``       the project's 40 sample questions (``data/debateqa_sample``)
``debateqa-test``         the DebateQA test split, where reachable
``debateqa-dev``          the DebateQA dev split, where reachable
========================  ==============================================

A source that is not available (the DebateQA splits on a machine without
the files) is skipped with its reason recorded, never silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from nfeval.errors import NfevalError

__all__ = ["SOURCES", "SourcedQuestion", "load_source", "load_sources"]

SOURCES: tuple[str, ...] = ("antique", "trec-dl-nf", "webglm", "debateqa-sample",
                            "debateqa-test", "debateqa-dev")


class SourcedQuestion(NamedTuple):
    """One question of a named source; unpacks as ``(source, question_id, text)``."""

    source: str
    question_id: str
    text: str


def _linkage(name: str, download: bool) -> list[SourcedQuestion]:
    from nfeval.data import load_linkage, resolve

    qs = load_linkage(name, resolve(name, download=download))
    return [SourcedQuestion(name, q.qid, q.question) for q in qs]


def _webglm(download: bool) -> list[SourcedQuestion]:
    from nfeval.data import load_webglm, resolve

    return [SourcedQuestion("webglm", q.qid, q.question)
            for q in load_webglm(resolve("webglm", download=download))]


def _sample(download: bool) -> list[SourcedQuestion]:
    from nfeval.data import load_debateqa
    from nfeval.data.sample import SAMPLE_DIR

    return [SourcedQuestion("debateqa-sample", str(it.id), it.question)
            for it in load_debateqa(SAMPLE_DIR / "questions.jsonl")]


def _split(split: str, download: bool) -> list[SourcedQuestion]:
    from nfeval.data import load_debateqa, resolve

    items = load_debateqa(split, resolve(f"debateqa/{split}", download=download))
    return [SourcedQuestion(f"debateqa-{split}", str(it.id), it.question) for it in items]


_LOADERS: dict[str, Callable[[bool], list[SourcedQuestion]]] = {
    "antique": lambda d: _linkage("antique", d),
    "trec-dl-nf": lambda d: _linkage("trec-dl-nf", d),
    "webglm": _webglm,
    "debateqa-sample": _sample,
    "debateqa-test": lambda d: _split("test", d),
    "debateqa-dev": lambda d: _split("dev", d),
}


def load_source(name: str, *, download: bool = False) -> list[SourcedQuestion]:
    """Questions of one named source, in file order.

    ``download=False`` (the default) uses only local files (mirror or cache),
    so an offline machine fails fast with an :class:`~nfeval.NfevalError`.
    """
    loader = _LOADERS.get(name)
    if loader is None:
        raise NfevalError(f"unknown question source {name!r}; known: {', '.join(SOURCES)}")
    return loader(download)


def load_sources(names: Sequence[str] = SOURCES, *, limit: int = 0,
                 download: bool = False) -> tuple[list[SourcedQuestion], dict[str, str]]:
    """(questions of every available source, {skipped source: reason}).

    ``limit`` > 0 keeps the first ``limit`` questions of each source. Unknown
    names are errors; unavailable sources are skipped with the reason.
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    names = [n.strip() for n in names]
    unknown = [n for n in names if n not in _LOADERS]
    if unknown:
        raise NfevalError(f"unknown question sources {unknown}; known: {', '.join(SOURCES)}")
    out: list[SourcedQuestion] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            qs = load_source(name, download=download)
        except NfevalError as e:
            skipped[name] = str(e).split("\n")[0]
            continue
        out.extend(qs[:limit] if limit > 0 else qs)
    return out, skipped
