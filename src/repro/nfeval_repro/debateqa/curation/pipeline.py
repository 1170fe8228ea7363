"""DebateQA's curation pipeline end to end (Figure 1, Section 3, Appendix A, Algorithm 1).

One function per stage, each taking the previous stage's output:

1. :func:`source_questions` -- questions from named sources (Section 3.1,
   :mod:`nfeval_repro.debateqa.curation.sources`);
2. :func:`dedup_stage` -- similarity graph and greedy vertex cover (A.1,
   :mod:`nfeval_repro.debateqa.curation.dedup`);
3. :func:`search_documents` -- document search over the local collection
   (:mod:`nfeval_repro.debateqa.curation.documents`). The paper turned each question into
   search queries with GPT-4, searched Google, and reranked with
   Bge-Reranker-v2-Gemma (A.2). Offline, ``method="linked"`` (the default)
   takes the pages the collection holds for the question (its "search
   results": ``question_id``) ranked by BM25; ``"bm25"`` and ``"dense"``
   search the whole collection, where other questions' pages and distractors
   compete, and keep hits scoring at least ``min_relative_score`` times the
   question's best hit;
4. :func:`filter_trusted` -- keep URLs under the trusted TLDs of Table 10
   (:mod:`nfeval_repro.debateqa.curation.tld`);
5. :func:`select_documents` -- "We discard questions that have fewer than
   three documents ... each supported by 3-5 of the most relevant
   documents" (Section 3.2): at least ``min_docs``, the best ``max_docs``;
6. :func:`extract_stage` -- POV extraction with an LLM (p_POV,
   :mod:`nfeval_repro.debateqa.curation.povs`), on the first ``limit`` questions kept;
7. :func:`min_povs_stage` -- drop questions with fewer than three POVs (A.2);
8. :func:`explanation_stage` -- one explanation per POV (p_Explan) from that
   POV's documents; the items come out in the DebateQA release format
   ``{"id", "question", "partial_answers": [{"point_of_view", "explanation"}]}``.

:func:`run_pipeline` chains them, with every stage's setting in a :class:`PipelineSettings`,
and returns the funnel (counts after each stage) with every intermediate table;
:mod:`.report` turns a run into the tables of Figures 1 and 12-13. The paper's last step,
human annotation of the partial answers (A.4), has no counterpart here.

The sentence embedder (deduplication, dense search) runs on the ``device``
given to :func:`run_pipeline`.

Why this file is long: the eight stages of one pipeline, the settings they share and the
result they fill; each stage is a short function, and splitting them would scatter Algorithm 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.curation.documents import (
    DOCS_FILE,
    BM25Index,
    DenseIndex,
    Document,
    load_documents,
)
from nfeval_repro.debateqa.curation.povs import (
    MIN_POVS,
    ExtractionSettings,
    Pov,
    PovExtraction,
    expand_explanation,
    explanation_cache,
    extract_povs,
    extraction_cache,
    filter_min_povs,
)
from nfeval_repro.debateqa.curation.sources import SourcedQuestion, load_sources
from nfeval_repro.debateqa.curation.tld import TRUSTED_TLDS, is_trusted
from nfeval.prompts import prompt_text

__all__ = [
    "LINKED_SOURCES",
    "SEARCH_METHODS",
    "STEPS",
    "PipelineResult",
    "PipelineSettings",
    "dedup_stage",
    "explanation_stage",
    "extract_stage",
    "filter_trusted",
    "item_id",
    "min_povs_stage",
    "run_pipeline",
    "search_documents",
    "select_documents",
    "source_questions",
    "write_items",
]

#: Sources whose question ids are the ids the document collection's ``question_id`` uses.
LINKED_SOURCES: tuple[str, ...] = ("debateqa-sample", "debateqa-test", "debateqa-dev")
#: Search methods and their default ``min_relative_score``: BM25 over the whole
#: collection keeps hits within 0.4 of the best one (on the project's collection
#: this keeps most of a question's own pages and few of other questions').
SEARCH_METHODS: dict[str, float] = {"linked": 0.0, "bm25": 0.4, "dense": 0.0}

Key = tuple[str, str]  # (source, question_id)


def item_id(source: str, question_id: str) -> int | str:
    """The release-format id: the integer id for DebateQA sources, else ``source:id``."""
    if source in LINKED_SOURCES and str(question_id).lstrip("-").isdigit():
        return int(question_id)
    return f"{source}:{question_id}"


# --------------------------------------------------------------------------- 1-2

def source_questions(sources: Sequence[str] | str = ("debateqa-sample",), *,
                     limit_per_source: int = 0) -> tuple[list[SourcedQuestion], dict[str, str]]:
    """Stage 1: questions of the named sources and {skipped source: reason}."""
    return load_sources(sources, limit=limit_per_source)


def dedup_stage(questions: Sequence[SourcedQuestion], *, threshold: float | None = None,
                seed: int = 0, model: str = "minilm-l6", embeddings: np.ndarray | None = None,
                device: str | None = None):
    """Stage 2: the questions kept by deduplication (input order) and the ``DedupResult``.

    ``embeddings`` (one L2-normalised row per question) skips the encoder, which
    otherwise runs on ``device``.
    """
    from nfeval_repro.debateqa.curation.dedup import DEFAULT_THRESHOLD, dedup_questions

    res = dedup_questions(questions, threshold=DEFAULT_THRESHOLD if threshold is None
                          else threshold, seed=seed, model=model, embeddings=embeddings,
                          device=device)
    kept = set(res.kept)
    return [q for q in questions if (q.source, q.question_id) in kept], res


# --------------------------------------------------------------------------- 3-5

def _doc_text(d: Document) -> str:
    return f"{d.title}\n{d.text}" if d.title else d.text


def search_documents(questions: Sequence[SourcedQuestion], docs: Sequence[Document], *,
                     method: str = "linked", k: int = 10,
                     min_relative_score: float | None = None,
                     model: str = "minilm-l6", device: str | None = None) -> pd.DataFrame:
    """Stage 3: up to ``k`` documents per question, one row per hit.

    Columns: source, question_id, rank (from 1), doc_id, url, score, linked
    (the page was written for this question). Hits with score <= 0 (no shared
    word) are never kept; see the module docstring for ``method``. ``device``: where
    the dense search's embedder runs.
    """
    if method not in SEARCH_METHODS:
        raise NfevalError(f"unknown search method {method!r}; use one of {sorted(SEARCH_METHODS)}")
    if k < 1:
        raise NfevalError(f"k must be >= 1, got {k}")
    ratio = SEARCH_METHODS[method] if min_relative_score is None or min_relative_score < 0 \
        else float(min_relative_score)
    cols = ["source", "question_id", "rank", "doc_id", "url", "score", "linked"]
    if not questions or not docs:
        return pd.DataFrame(columns=cols)
    texts = [_doc_text(d) for d in docs]
    index = (DenseIndex(texts, model, stored=True, device=device) if method == "dense"
             else BM25Index(texts))
    rows = []
    for q in questions:
        scores = index.scores(q.text)
        linkable = q.source in LINKED_SOURCES
        own = [i for i, d in enumerate(docs)
               if linkable and d.question_id is not None and str(d.question_id) == q.question_id]
        pool = own if method == "linked" else range(len(docs))
        hits = sorted(((i, float(scores[i])) for i in pool), key=lambda h: (-h[1], h[0]))
        hits = [h for h in hits if h[1] > 0][:k] if method != "dense" else hits[:k]
        if hits and ratio > 0:
            best = hits[0][1]
            hits = [h for h in hits if h[1] >= ratio * best]
        for rank, (i, score) in enumerate(hits, 1):
            rows.append({"source": q.source, "question_id": q.question_id, "rank": rank,
                         "doc_id": docs[i].doc_id, "url": docs[i].url, "score": score,
                         "linked": i in own})
    return pd.DataFrame(rows, columns=cols)


def filter_trusted(hits: pd.DataFrame, tlds: Sequence[str] = TRUSTED_TLDS) -> pd.DataFrame:
    """Stage 4: the hits whose URL lies under a trusted TLD (Table 10), ranks unchanged."""
    if hits.empty:
        return hits.copy()
    keep = hits["url"].map(lambda u: is_trusted(u, tlds))
    return hits[keep.astype(bool)].reset_index(drop=True)


def select_documents(trusted: pd.DataFrame, *, min_docs: int = 3, max_docs: int = 5
                     ) -> dict[Key, list[str]]:
    """Stage 5: per question with at least ``min_docs`` trusted hits, the best ``max_docs``
    document ids (search order); questions with fewer are dropped (Section 3.2)."""
    if min_docs < 1 or max_docs < min_docs:
        raise NfevalError(f"need 1 <= min_docs <= max_docs, got {min_docs}, {max_docs}")
    out: dict[Key, list[str]] = {}
    if trusted.empty:
        return out
    for (source, qid), g in trusted.groupby(["source", "question_id"], sort=False):
        ids = list(g.sort_values("rank")["doc_id"])
        if len(ids) >= min_docs:
            out[(source, qid)] = ids[:max_docs]
    return out


# --------------------------------------------------------------------------- 6-8

def extract_stage(model, questions: Mapping[Key, str], selected: Mapping[Key, Sequence[str]],
                  docs_by_id: Mapping[str, Document], *, seed: int = 0, max_tokens: int = 256,
                  temperature: float = 0.0, max_chars: int = 0, max_povs: int = 6,
                  use_cache: bool = True, progress: bool = True) -> dict[Key, PovExtraction]:
    """Stage 6: p_POV on every selected question (cached per question and prompt)."""
    from tqdm.auto import tqdm

    settings = ExtractionSettings(max_tokens=max_tokens, temperature=temperature, seed=seed,
                                  max_chars=max_chars, max_povs=max_povs)
    cache = extraction_cache(model, max_tokens=max_tokens, temperature=temperature, seed=seed,
                             template=prompt_text("pov_extraction"), max_povs=max_povs) \
        if use_cache else None
    out: dict[Key, PovExtraction] = {}
    for key in tqdm(list(selected), desc=f"POVs ({model.info.name})", unit="question",
                    disable=not progress):
        texts = [docs_by_id[d].text for d in selected[key]]
        out[key] = extract_povs(model, questions[key], texts, settings,
                                key=f"{key[0]}/{key[1]}", cache=cache, use_cache=use_cache)
    return out


def min_povs_stage(extracted: Mapping[Key, PovExtraction], min_povs: int = MIN_POVS
                   ) -> dict[Key, list[Pov]]:
    """Stage 7: the questions with at least ``min_povs`` POVs (Appendix A.2)."""
    return filter_min_povs({k: v.povs for k, v in extracted.items()}, min_povs)


def explanation_stage(model, questions: Mapping[Key, str], povs: Mapping[Key, Sequence[Pov]],
                      selected: Mapping[Key, Sequence[str]], docs_by_id: Mapping[str, Document],
                      *, seed: int = 0, max_tokens: int = 200, temperature: float = 0.0,
                      max_chars: int = 0, use_cache: bool = True, progress: bool = True
                      ) -> tuple[list[dict], pd.DataFrame]:
    """Stage 8: one explanation per POV; (release-format items, one row per partial answer).

    A POV whose explanation comes back empty is left out of its item (and
    counted in the table's ``empty`` column); an item keeps its place even if
    fewer than ``MIN_POVS`` partial answers remain.
    """
    from tqdm.auto import tqdm

    cache = explanation_cache(model, max_tokens=max_tokens, temperature=temperature, seed=seed,
                              template=prompt_text("pov_explanation")) if use_cache else None
    jobs = [(key, n, p) for key in povs for n, p in enumerate(povs[key], 1)]
    by_key: dict[Key, list[dict]] = {key: [] for key in povs}
    rows = []
    for key, n, pov in tqdm(jobs, desc=f"explanations ({model.info.name})", unit="POV",
                            disable=not progress):
        doc_ids = list(selected[key])
        texts = [docs_by_id[d].text for d in doc_ids]
        res = expand_explanation(model, questions[key], pov, texts, key=f"{key[0]}/{key[1]}/{n}",
                                 max_tokens=max_tokens, temperature=temperature, seed=seed,
                                 max_chars=max_chars, cache=cache, use_cache=use_cache)
        rows.append({"source": key[0], "question_id": key[1], "pov_index": n,
                     "point_of_view": pov.text,
                     "doc_ids": ",".join(doc_ids[i - 1] for i in pov.doc_indexes),
                     "explanation_doc_ids": ",".join(doc_ids[i - 1] for i in res["doc_indexes"]),
                     "explanation": res["explanation"], "n_tokens": res["n_tokens"],
                     "empty": not res["explanation"]})
        if res["explanation"]:
            by_key[key].append({"point_of_view": pov.text, "explanation": res["explanation"]})
    items = [{"id": item_id(*key), "question": questions[key], "partial_answers": pas}
             for key, pas in by_key.items()]
    cols = ["source", "question_id", "pov_index", "point_of_view", "doc_ids",
            "explanation_doc_ids", "explanation", "n_tokens", "empty"]
    return items, pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- end to end

@dataclass
class PipelineResult:
    """Everything a run produced. ``funnel``: one row per stage with the questions,
    documents and POVs left after it (NaN where a count does not apply)."""

    funnel: pd.DataFrame
    questions: pd.DataFrame  # one row per sourced question: counts and the stage that dropped it
    hits: pd.DataFrame  # every search hit, with trusted and used flags
    povs: pd.DataFrame  # one row per POV of the questions that reached stage 6
    partial_answers: pd.DataFrame  # one row per explained POV
    items: list[dict]  # release format
    raw: dict[Key, str]  # raw p_POV outputs
    skipped_sources: dict[str, str] = field(default_factory=dict)
    dedup: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)


#: Stable ids of the funnel's steps (the ``step`` column), in order.
STEPS = ("sourced", "dedup", "search", "tld", "min_docs", "limit", "povs", "min_povs",
         "explanations")


def _n_questions(hits: pd.DataFrame) -> int:
    return hits.groupby(["source", "question_id"]).ngroups if len(hits) else 0


def _funnel_row(step: str, stage: str, questions: int, documents: float = np.nan,
                povs: float = np.nan, note: str = "") -> dict:
    return {"step": step, "stage": stage, "questions": questions, "documents": documents,
            "povs": povs, "note": note}


@dataclass(frozen=True)
class PipelineSettings:
    """What decides a run of :func:`run_pipeline` besides the LLM and the inputs: every
    stage's setting, with the paper's values where it gives them. A run records them in
    :attr:`PipelineResult.parameters`."""

    #: question sources of stage 1 (:mod:`nfeval_repro.debateqa.curation.sources`);
    #: ignored when :func:`run_pipeline` is given ``questions``
    sources: Sequence[str] | str = ("debateqa-sample",)
    #: deduplicate the questions (stage 2); False keeps them all
    dedup: bool = True
    #: cosine threshold of the dedup graph; None or negative: the dedup module's default
    dedup_threshold: float | None = None
    #: document search of stage 3: linked, bm25 or dense (see the module docstring)
    search: str = "linked"
    #: search hits per question before the TLD filter
    k: int = 10
    #: keep hits scoring at least this share of the question's best hit; None or negative:
    #: the default of the search method (:data:`SEARCH_METHODS`)
    min_relative_score: float | None = None
    #: trusted TLDs of stage 4 (Table 10)
    tlds: Sequence[str] = TRUSTED_TLDS
    #: questions need at least this many trusted documents (stage 5; paper: 3)
    min_docs: int = 3
    #: most relevant documents kept per question (stage 5; paper: 5)
    max_docs: int = 5
    #: > 0: only the first ``limit`` questions kept by the document stages (in source
    #: order) go through the LLM stages, whose funnel counts are then out of ``limit``;
    #: 0: all of them
    limit: int = 0
    #: questions need at least this many POVs (stage 7; paper: 3)
    min_povs: int = MIN_POVS
    #: random seed (dedup tie-breaks; LLM sampling when ``temperature`` is above 0)
    seed: int = 0
    #: generation budget of one POV extraction
    pov_tokens: int = 256
    #: generation budget of one explanation
    explanation_tokens: int = 200
    #: POV extraction stops after this many list items (0: no stop)
    max_povs: int = 6
    #: decoding temperature of the LLM stages, 0 for greedy
    temperature: float = 0.0
    #: > 0: each document is cut to this many characters in the LLM prompts; 0: whole
    max_chars: int = 0


def run_pipeline(model=None, settings: PipelineSettings = PipelineSettings(), *,
                 questions: Sequence[SourcedQuestion] | None = None,
                 docs: Sequence[Document] | None = None, docs_path: str | Path = DOCS_FILE,
                 dedup_embeddings: np.ndarray | None = None, use_cache: bool = True,
                 progress: bool = True, device: str | None = None) -> PipelineResult:
    """Run every stage as ``settings`` say; ``model=None`` stops after the document stages
    (no LLM).

    ``questions`` (``SourcedQuestion`` triples) replaces stage 1's ``settings.sources``;
    ``docs`` replaces the collection file ``docs_path``. ``dedup_embeddings`` (one
    L2-normalised row per question) skips the dedup encoder. ``use_cache``: keep the LLM
    calls in the run cache; ``progress``: progress bars. ``device``: where the sentence
    embedder runs (the LLM ``model`` comes loaded).
    """
    params = {**asdict(settings), "tlds": list(settings.tlds),
              "sources": settings.sources if isinstance(settings.sources, str)
              else list(settings.sources)}  # the fields in order, sequences as lists
    limit, min_docs, max_docs = settings.limit, settings.min_docs, settings.max_docs
    skipped: dict[str, str] = {}
    if questions is None:
        questions, skipped = source_questions(settings.sources)
    questions = [SourcedQuestion(*q) for q in questions]
    if not questions:
        raise NfevalError("the pipeline got no questions: every source was skipped "
                          f"({skipped}) or empty.")
    docs = load_documents(docs_path) if docs is None else list(docs)
    docs_by_id = {d.doc_id: d for d in docs}
    funnel = [_funnel_row("sourced", "sourced", len(questions))]

    dres = None
    dedup_threshold = settings.dedup_threshold
    if dedup_threshold is not None and dedup_threshold < 0:
        dedup_threshold = None  # the dedup module's default
    if settings.dedup and len(questions) > 1:
        kept, dres = dedup_stage(questions, threshold=dedup_threshold, seed=settings.seed,
                                 embeddings=dedup_embeddings, device=device)
    else:
        kept = list(questions)
    funnel.append(_funnel_row("dedup", "deduplicated", len(kept),
                              note="" if settings.dedup else "deduplication switched off"))

    hits = search_documents(kept, docs, method=settings.search, k=settings.k,
                            min_relative_score=settings.min_relative_score, device=device)
    trusted = filter_trusted(hits, settings.tlds)
    selected = select_documents(trusted, min_docs=min_docs, max_docs=max_docs)
    funnel.append(_funnel_row("search", "document search", _n_questions(hits), len(hits),
                              note=f"{settings.search}, top {settings.k}"))
    funnel.append(_funnel_row("tld", "trusted TLDs", _n_questions(trusted), len(trusted),
                              note="Table 10: " + ", ".join(settings.tlds)))
    funnel.append(_funnel_row("min_docs", f">= {min_docs} documents", len(selected),
                              sum(len(v) for v in selected.values()),
                              note=f"top {min_docs}-{max_docs} per question"))

    texts = {(q.source, q.question_id): q.text for q in kept}
    chosen = dict(list(selected.items())[:limit] if limit > 0 else selected.items())
    extracted: dict[Key, PovExtraction] = {}
    enough: dict[Key, list[Pov]] = {}
    items: list[dict] = []
    pas = pd.DataFrame(columns=["source", "question_id", "pov_index", "point_of_view",
                                "doc_ids", "explanation_doc_ids", "explanation", "n_tokens",
                                "empty"])
    if model is not None and chosen:
        if limit > 0:
            funnel.append(_funnel_row("limit", "LLM stages run on", len(chosen),
                                      sum(len(v) for v in chosen.values()),
                                      note=f"the first {limit} (limit)"))
        extracted = extract_stage(model, texts, chosen, docs_by_id, seed=settings.seed,
                                  max_tokens=settings.pov_tokens,
                                  temperature=settings.temperature,
                                  max_chars=settings.max_chars, max_povs=settings.max_povs,
                                  use_cache=use_cache, progress=progress)
        funnel.append(_funnel_row("povs", "POV extraction",
                                  sum(1 for e in extracted.values() if e.povs),
                                  povs=sum(len(e.povs) for e in extracted.values()),
                                  note="questions with at least one POV"))
        enough = min_povs_stage(extracted, settings.min_povs)
        funnel.append(_funnel_row("min_povs", f">= {settings.min_povs} POVs", len(enough),
                                  povs=sum(len(v) for v in enough.values())))
        items, pas = explanation_stage(model, texts, enough, chosen, docs_by_id,
                                       seed=settings.seed,
                                       max_tokens=settings.explanation_tokens,
                                       temperature=settings.temperature,
                                       max_chars=settings.max_chars, use_cache=use_cache,
                                       progress=progress)
        funnel.append(_funnel_row("explanations", "explanation expansion", len(items),
                                  povs=sum(len(it["partial_answers"]) for it in items),
                                  note="partial answers with a non-empty explanation"))

    # per-question view
    used_ids = {(key, d) for key, ids in selected.items() for d in ids}
    if len(hits):
        trust = hits["url"].map(lambda u: is_trusted(u, settings.tlds)).astype(bool)
        hits = hits.assign(trusted=trust)
        hits["used"] = [((s, q), d) in used_ids for s, q, d in
                        zip(hits.source, hits.question_id, hits.doc_id)]
    else:
        hits = hits.assign(trusted=pd.Series(dtype=bool), used=pd.Series(dtype=bool))
    kept_keys = {(q.source, q.question_id) for q in kept}
    rows = []
    for q in questions:
        key = (q.source, q.question_id)
        h = hits[(hits.source == q.source) & (hits.question_id == q.question_id)] \
            if len(hits) else hits
        ex = extracted.get(key)
        if key not in kept_keys:
            dropped = "deduplicated"
        elif key not in selected:
            dropped = "documents"
        elif model is None or key not in chosen:
            dropped = "" if model is None else "limit"
        elif key not in enough:
            dropped = "povs"
        else:
            dropped = ""
        rows.append({"source": q.source, "question_id": q.question_id, "question": q.text,
                     "retrieved": len(h), "retrieved_linked": int(h["linked"].sum()),
                     "trusted": int(h["trusted"].sum()) if len(h) else 0,
                     "used": len(selected.get(key, ())),
                     "povs_parsed": ex.parsed if ex else np.nan,
                     "povs": len(ex.povs) if ex else np.nan,
                     "partial_answers": next((len(it["partial_answers"]) for it in items
                                              if it["id"] == item_id(*key)), np.nan),
                     "dropped_at": dropped})
    qtable = pd.DataFrame(rows)
    pov_rows = [{"source": key[0], "question_id": key[1], "pov_index": n,
                 "point_of_view": p.text,
                 "doc_indexes": ",".join(map(str, p.doc_indexes)),
                 "doc_ids": ",".join(chosen[key][i - 1] for i in p.doc_indexes),
                 "kept": key in enough}
                for key, ex in extracted.items() for n, p in enumerate(ex.povs, 1)]
    povs_table = pd.DataFrame(pov_rows, columns=["source", "question_id", "pov_index",
                                                 "point_of_view", "doc_indexes", "doc_ids",
                                                 "kept"])
    return PipelineResult(funnel=pd.DataFrame(funnel), questions=qtable, hits=hits,
                          povs=povs_table, partial_answers=pas, items=items,
                          raw={k: e.raw for k, e in extracted.items()},
                          skipped_sources=skipped, dedup=dres, parameters=params)


def write_items(items: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write items as JSON lines in the release format (one ``{"id", "question",
    "partial_answers"}`` object per line); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps({"id": it["id"], "question": it["question"],
                               "partial_answers": [{"point_of_view": pa["point_of_view"],
                                                    "explanation": pa["explanation"]}
                                                   for pa in it["partial_answers"]]},
                              ensure_ascii=False) + "\n" for it in items)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
    return p
