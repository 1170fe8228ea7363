"""Retrieval-augmented answers to debatable questions (DebateQA Section 7.3, Appendix D.1).

The paper tests two RAG strategies (its Table 6) and a trusted-source variant
(its Table 7), scoring the answers with P.D.:

* **Vanilla RAG** (Appendix D.1): Google search for the question, the top 10
  URLs loaded, split into chunks of roughly 2,000 characters (LangChain's
  ``RecursiveCharacterTextSplitter``), the 10 chunks most similar to the
  question by cosine similarity of gte-Qwen2-1.5B-instruct embeddings kept,
  and the question and chunks assembled with the prompt of its Table 16.
* **ReAct** (Yao et al., 2023): an agent (Claude 3.5 Sonnet in the paper)
  interleaves reasoning with searches and selects up to 9 chunks; the answer
  is then written from the question and those chunks with the same Table 16
  prompt.
* **Trusted documents** (Table 7, Appendix A.2): retrieval only over web
  pages under the trustworthy top-level domains of Table 10.

Here, offline, the web is replaced by the project's own small document
collection (``data/debateqa_docs/documents.jsonl``, see
:mod:`nfeval_repro.debateqa.curation.documents`), searched in two stages that mirror the
paper's (:mod:`nfeval_repro.debateqa.rag_index`: BM25 over whole documents, then the
profile's embedder over their chunks), and the answering model runs the ReAct loop itself
(:mod:`nfeval_repro.debateqa.rag_react`, which counts every step where a small model
did not follow the format).

Table 16's text is not printed in the paper's text: the answer prompt
(``prompts/rag_answer.txt``) and the ReAct prompt (``prompts/rag_react.txt``) are the
project's.

Answers are generated through :func:`nfeval_repro.debateqa.generation.generate_answers`
(cached per model, prompt and decoding; the no-retrieval answers are those of
dq_t04), ReAct's intermediate steps through
:class:`~nfeval_repro.debateqa.rag_react.StepGenerator` (cached the same way),
so reruns regenerate nothing; search results are stored too.

:func:`rag_table` assembles Tables 6-7 with their 95% intervals over
questions (:mod:`nfeval_repro.debateqa.system_stats`); :func:`rag_setup` and
:func:`rag_experiment` are what the two tables' experiments (dq_t06, dq_t07)
share around their answers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.rag_index import TOP_K, Chunk, ChunkIndex
from nfeval_repro.debateqa.rag_react import (REACT_K_PER_SEARCH, REACT_MAX_CHUNKS,
                                                   REACT_MAX_STEPS, REACT_STEP_TOKENS,
                                                   StepGenerator, react_gather,
                                                   react_step_prompt)
from nfeval_repro.profiles import Profile
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment

STRATEGIES = ("none", "vanilla", "react")
NO_DOCUMENTS = "(no documents were found)"


# --------------------------------------------------------------------------- prompts

def format_chunks(chunks: Sequence[Chunk]) -> str:
    """Numbered chunks ``[1] (title) text``, blank-line separated."""
    if not chunks:
        return NO_DOCUMENTS
    parts = []
    for i, c in enumerate(chunks, 1):
        head = f"[{i}] ({c.title}) " if c.title else f"[{i}] "
        parts.append(head + c.text.strip())
    return "\n\n".join(parts)


def rag_user_prompt(question: str, chunks: Sequence[Chunk]) -> str:
    """The user turn of a RAG answer: ``prompts/rag_answer.txt`` (the project's
    stand-in for Table 16) filled with the question and the chunks."""
    if not question.strip():
        raise NfevalError("rag_user_prompt: empty question.")
    return prompt_text("rag_answer").format(documents=format_chunks(chunks),
                                            question=question.strip())


# --------------------------------------------------------------------------- generation

def load_generator(name: str, backend: str, *, n_ctx: int = 8192,
                   load: Callable | None = None):
    """A generator with a context window long enough for ten 2,000-character chunks
    (``n_ctx`` is passed to the llama backend only; the others use their own).
    ``load(name, backend=..., **kwargs)``: an experiment passes its profile's
    :meth:`~nfeval_repro.profiles.Profile.load`; default :func:`nfeval.models.load_model`
    answered from the active item store."""
    from nfeval.models import load_model
    from nfeval_repro.store import stored

    load = load or (lambda *a, **k: stored(load_model(*a, **k)))
    return load(name, backend=backend, **({"n_ctx": n_ctx} if backend == "llama" else {}))


@dataclass(frozen=True)
class RagConfig:
    """What dq_t06's and dq_t07's configs share: the questions, the collection, the
    answering models, vanilla RAG's retrieval and the metrics' models (each experiment's
    ``Config`` extends it)."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed: the question draw and the bootstrap (decoding is greedy)
    seed: int = 0
    #: questions, drawn uniformly at random with seed (a smaller limit takes a subset), 0 for
    #: all (40: every question of the sample, the committed tables)
    limit: int = 40
    #: question set: the collection covers the sample's questions
    split: str = "sample"
    #: document collection (JSON lines); empty: the project's data/debateqa_docs
    documents: str = ""
    #: comma-separated answering models; empty: the profile's
    generators: str = "smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct"
    #: generation budget per answer (256 reuses the no-retrieval answers of dq_t04)
    max_tokens: int = 256
    #: chunks vanilla RAG retrieves (paper: 10)
    top_k: int = 10
    #: maximum chunk length in characters (paper: about 2000)
    chunk_chars: int = 2000
    #: documents the search stage keeps (paper: top 10 URLs); 0 ranks every chunk
    k_docs: int = 10
    #: P.D. backbone; empty: the profile's first
    backbone: str = ""
    #: D.A. judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, the stronger of the
    #: dq_t03 pilot, AUROC 0.865 vs 0.23); none: no D.A.
    judge: str = ""


@dataclass(frozen=True)
class RagSettings:
    """How the chunks an answer is written from are gathered (:func:`gather_chunks`): where
    vanilla RAG and ReAct search and how much they take. The defaults are the paper's where it
    gives them (Appendix D.1, Section 7.3), the project's choices otherwise."""

    #: search only the documents under the trusted top-level domains (Table 7)
    trusted_only: bool = False
    #: chunks vanilla RAG retrieves (paper: 10)
    k: int = TOP_K
    #: chunks the ReAct loop gathers at most (paper: up to 9)
    max_chunks: int = REACT_MAX_CHUNKS
    #: chunks one ReAct search returns at most
    k_per_search: int = REACT_K_PER_SEARCH
    #: ReAct steps at most
    max_steps: int = REACT_MAX_STEPS
    #: generation budget of one ReAct step (a thought and an action)
    step_tokens: int = REACT_STEP_TOKENS


def gather_chunks(items: Sequence, index: ChunkIndex, strategy: str, *, model=None,
                  settings: RagSettings = RagSettings(), system: str | None = None,
                  seed: int = 0, progress: bool = True) -> dict[int, dict]:
    """The chunks each question's answer is written from, per strategy.

    Returns ``{id: {"chunks": [...], "steps": n, "action_retries": n,
    "unparsed_steps": n, "fallback": bool, "stop": str}}``; "none" gathers
    nothing, "vanilla" the top ``settings.k``, "react" runs :func:`react_gather` with
    ``model`` (and adds its ``"trace"``), its steps generated greedily with ``seed`` and the
    ``system`` prompt.
    """
    from tqdm.auto import tqdm

    if strategy not in STRATEGIES:
        raise NfevalError(f"unknown RAG strategy {strategy!r}; use one of {STRATEGIES}")
    if strategy == "react" and model is None:
        raise NfevalError("the react strategy needs the generating model.")
    trusted_only = settings.trusted_only
    stepper = (StepGenerator(model, max_tokens=settings.step_tokens, seed=seed)
               if strategy == "react" else None)
    out: dict[int, dict] = {}
    for it in tqdm(items, desc=f"retrieval ({strategy})", unit="question", disable=not progress
                   or strategy == "none"):
        if strategy == "none":
            out[it.id] = {"chunks": [], "steps": 0, "action_retries": 0, "unparsed_steps": 0,
                          "fallback": False, "stop": ""}
        elif strategy == "vanilla":
            found = [r.chunk for r in index.search(it.question, settings.k,
                                                   trusted_only=trusted_only)]
            out[it.id] = {"chunks": found, "steps": 0, "action_retries": 0, "unparsed_steps": 0,
                          "fallback": False, "stop": ""}
        else:
            res = react_gather(
                it.question,
                lambda pad, it=it: stepper(it.id, react_step_prompt(model, it.question, pad,
                                                                    system=system)),
                lambda q, kk, ex: index.search(q, kk, trusted_only=trusted_only, exclude=ex),
                max_chunks=settings.max_chunks, k_per_search=settings.k_per_search,
                max_steps=settings.max_steps)
            out[it.id] = {"chunks": res.chunks, "steps": res.n_steps,
                          "action_retries": res.action_retries,
                          "unparsed_steps": res.unparsed_steps, "fallback": res.fallback,
                          "stop": res.stop, "trace": res.steps}
    return out


def rag_answers(model, items: Sequence, index: ChunkIndex | None, strategy: str, *,
                settings: RagSettings = RagSettings(), system: str | None = None,
                decoding: Decoding = Decoding(), progress: bool = True) -> pd.DataFrame:
    """Answers of ``model`` under a strategy ("none", "vanilla" or "react").

    "none" is exactly :func:`nfeval_repro.debateqa.generation.generate_answers` on the
    question (dq_t04's answers, cached); the others answer the filled
    ``rag_answer`` prompt as the user turn, with the same system prompt (``None``: the
    project's p_basic) and ``decoding``, from the chunks gathered with ``settings``
    (:func:`gather_chunks`; ReAct's steps use the decoding's seed). One row per question:
    ``id, strategy, trusted_only, answer, n_tokens, finish_reason, n_chunks,
    n_trusted_chunks, chunk_ids, steps, action_retries, unparsed_steps, fallback, stop,
    trace`` (``trace``: the ReAct steps as JSON, each with the model's raw text, its reply
    when asked again for the action, the action taken, its query, whether it was the default
    action, and the new chunk ids).
    """
    from nfeval_repro.debateqa.generation import generate_answers
    from nfeval.prompts import system_prompts

    system = system_prompts()["basic"] if system is None else system
    if strategy != "none" and index is None:
        raise NfevalError(f"the {strategy} strategy needs a ChunkIndex.")
    got = gather_chunks(items, index, strategy, model=model, settings=settings, system=system,
                        seed=decoding.seed, progress=progress)
    if strategy == "none":
        questions: Mapping[int, str] = {it.id: it.question for it in items}
    else:
        questions = {it.id: rag_user_prompt(it.question, got[it.id]["chunks"]) for it in items}
    df = generate_answers(model, questions, system=system, decoding=decoding,
                          progress=progress, desc=f"answers ({model.info.name}, {strategy})")
    meta = pd.DataFrame([{
        "id": qid, "strategy": strategy, "trusted_only": bool(settings.trusted_only),
        "n_chunks": len(g["chunks"]), "n_trusted_chunks": sum(c.trusted for c in g["chunks"]),
        "chunk_ids": ";".join(c.id for c in g["chunks"]), "steps": g["steps"],
        "action_retries": g["action_retries"],
        "unparsed_steps": g["unparsed_steps"], "fallback": g["fallback"], "stop": g["stop"],
        "trace": json.dumps(g.get("trace", []), ensure_ascii=False) if strategy == "react" else "",
    } for qid, g in got.items()])
    return meta.merge(df.drop(columns=["raw"]), on="id", how="left")[
        ["id", "strategy", "trusted_only", "answer", "n_tokens", "finish_reason", "n_chunks",
         "n_trusted_chunks", "chunk_ids", "steps", "action_retries", "unparsed_steps",
         "fallback", "stop", "trace"]]


def react_trace(answers: pd.DataFrame, qid: int) -> pd.DataFrame:
    """The ReAct steps of one question, one row per generator and step: the action, its
    query, whether the controller took the default action, the new chunks, and the
    beginning of the model's raw text and of its reply when asked again for the action."""
    react = answers[(answers["strategy"] == "react") & (answers["id"] == qid)]
    return pd.DataFrame([{"generator": r.generator, "id": r.id, "step": k + 1,
                          "action": s["action"], "query": s["query"], "default": s["default"],
                          "new_chunks": len(s["new"]), "raw": s["raw"][:160],
                          "retry": (s["retry"] or "")[:80]}
                         for r in react.itertuples() for k, s in enumerate(json.loads(r.trace))])


# --------------------------------------------------------------------------- tables

RAG_MEAN_METRICS = ("length_words", "chunks_per_answer")
REACT_COUNTS = {"steps": "react_steps", "action_retries": "react_action_retries",
                "unparsed_steps": "react_unparsed_steps", "fallback": "react_fallback_answers"}


def rag_table(answers: pd.DataFrame, scores: pd.DataFrame, *, arm: str,
              pairs: Sequence[tuple[str, str]] = (), order: Sequence[str] | None = None,
              seed: int = 0) -> pd.DataFrame:
    """Tables 6-7 in long form, every estimate with its 95% interval over questions.

    ``answers``: :func:`rag_answers` rows with a ``generator`` column and the
    ``arm`` column (``strategy`` in dq_t06, ``documents`` in dq_t07);
    ``scores``: :func:`nfeval_repro.debateqa.systems.score_systems` rows with the same two
    columns added. Rows, by ``quantity``:

    * ``mean`` -- P.D. and D.A. per evaluator, ``length_words`` and
      ``chunks_per_answer``: the mean over questions, percentile bootstrap over
      questions (:func:`nfeval_repro.debateqa.system_stats.mean_rows`);
    * ``difference`` -- for each ``(a, b)`` in ``pairs``, arm ``a`` minus arm
      ``b`` for the same generator, metric and questions, paired bootstrap
      (``arm`` holds ``"a - b"``);
    * ``share`` -- ``trusted_chunk_share``: trusted chunks / chunks over the
      arm's answers (a ratio of sums), cluster bootstrap over questions; arms
      that retrieve nothing have no row;
    * ``count`` -- the ReAct loop's bookkeeping (``react_steps``,
      ``react_action_retries``, ``react_unparsed_steps``,
      ``react_fallback_answers``): exact counts, NaN bounds.

    Columns ``generator, <arm>, metric, evaluator, quantity, ours, ci_low,
    ci_high, n_questions``, sorted by generator, metric, quantity and ``order``
    (the arms' order).
    """
    from nfeval_repro.debateqa.system_stats import mean_and_difference_rows, ratio_rows
    from nfeval_repro.debateqa.systems import word_count

    keys = ["generator", arm, "id"]
    per_answer = answers.assign(length_words=answers["answer"].map(word_count),
                                chunks_per_answer=answers["n_chunks"])
    extra = per_answer.melt(id_vars=keys, value_vars=list(RAG_MEAN_METRICS), var_name="metric",
                            value_name="score").assign(evaluator="-")
    long = pd.concat([scores[keys + ["metric", "evaluator", "score"]], extra], ignore_index=True)
    long["score"] = long["score"].astype(float)
    by = ["generator", arm, "metric", "evaluator"]
    parts = [mean_and_difference_rows(long, by, column=arm, pairs=pairs, seed=seed)]
    retrieved = answers[answers.groupby(["generator", arm])["n_chunks"].transform("sum") > 0]
    if len(retrieved):
        parts.append(ratio_rows(retrieved, ["generator", arm], numerator="n_trusted_chunks",
                                denominator="n_chunks", seed=seed)
                     .assign(metric="trusted_chunk_share", evaluator="-", quantity="share"))
    react = answers[answers[arm] == "react"] if arm == "strategy" else answers.iloc[:0]
    if len(react):
        g = react.groupby(["generator", arm], sort=False)
        for col, name in REACT_COUNTS.items():
            c = g[col].sum().astype(float).rename("ours").reset_index()
            parts.append(c.assign(metric=name, evaluator="-", quantity="count",
                                  ci_low=math.nan, ci_high=math.nan,
                                  n_questions=g.size().to_numpy()))
    table = pd.concat(parts, ignore_index=True)
    cols = ["generator", arm, "metric", "evaluator", "quantity", "ours", "ci_low", "ci_high",
            "n_questions"]
    rank = {v: i for i, v in enumerate(order or [])}
    table["_arm"] = table[arm].map(lambda v: rank.get(v, len(rank)))
    quantities = {"mean": 0, "difference": 1, "share": 2, "count": 3}
    table["_q"] = table["quantity"].map(quantities)
    table = table.sort_values(["generator", "metric", "_q", "_arm"], kind="stable")
    return table[cols].reset_index(drop=True)


# --------------------------------------------------------------------------- experiments

@dataclass
class RagSetup:
    """What the RAG experiments (dq_t06, dq_t07) resolve from their shared parameters."""

    profile: Profile
    split: str
    items: list
    generators: tuple[str, ...]
    backbone: str  # P.D. backbone
    judge: str  # D.A. judge; "" for none
    documents: str | Path  # the document collection's file
    index: ChunkIndex


def rag_setup(*, profile: str, seed: int, limit: int, split: str, documents: str,
              generators: str, chunk_chars: int, k_docs: int, backbone: str,
              judge: str) -> RagSetup:
    """The profile, the models it names (``judge="none"``: no D.A.), ``limit`` questions
    drawn with ``seed``, and the chunk index over ``documents`` (empty: the project's
    collection), from the RAG notebooks' parameters of the same names."""
    from nfeval_repro.debateqa.curation.documents import DOCS_FILE, load_documents
    from nfeval_repro.debateqa.systems import load_questions
    from nfeval_repro.profiles import get_profile, model_list

    prof = get_profile(profile)
    path = documents or DOCS_FILE
    index = ChunkIndex(load_documents(path), embedder=prof.embedder, max_chars=chunk_chars,
                       k_docs=k_docs, device=prof.device)
    return RagSetup(profile=prof, split=split, items=load_questions(split, limit, seed=seed),
                    generators=model_list(generators, prof.generators),
                    backbone=model_list(backbone, prof.pd_backbones)[0],
                    judge="" if judge == "none" else model_list(judge, (prof.da_judge,))[0],
                    documents=path, index=index)


@dataclass(frozen=True)
class RagArms:
    """The arms a RAG experiment compares (the strategies of dq_t06, the document sets of
    dq_t07) and how its table and ``answers`` frame show them (:func:`rag_experiment`)."""

    #: the answers' column naming the arm (``strategy`` in dq_t06, ``documents`` in dq_t07)
    column: str
    #: the arms' order in the table
    order: tuple[str, ...]
    #: the paired differences: for each ``(a, b)``, arm ``a`` minus arm ``b``
    pairs: tuple[tuple[str, str], ...]
    #: the ``answers`` frame's columns after ``generator, <column>, id``
    answer_columns: tuple[str, ...]


def rag_experiment(artefact: str, setup: RagSetup, answers: pd.DataFrame, arms: RagArms, *,
                   prompt_sha256: object, notes: str, seed: int, top_k: int,
                   progress: bool = True) -> Experiment:
    """Score RAG answers and assemble their table: what dq_t06 and dq_t07 share.

    ``answers``: :func:`rag_answers` rows with ``generator`` and the arm's column
    (``arms.column``). Each (generator, arm) is a system scored with P.D. (the backbone) and
    D.A. (the judge, unless none); :func:`rag_table` gives the table (the paired differences
    and the arms' order of ``arms``). Frames: ``answers`` (``generator, <arm>, id``, then
    ``arms.answer_columns``) and ``scores``; ``extra``: ``answers`` with every column,
    ``scores`` and the ``items``. ``seed``: the bootstrap's; ``top_k``: the chunks vanilla
    RAG retrieved, recorded in the P.D. signatures.
    """
    from nfeval_repro.debateqa.systems import (metric_signatures, score_systems,
                                                     split_systems)
    from nfeval.hashing import sha256_file

    prof, items, index = setup.profile, setup.items, setup.index
    arm = arms.column
    systems = {f"{g}|{a}": dict(zip(df["id"], df["answer"]))
               for (g, a), df in answers.groupby(["generator", arm], sort=False)}
    pd_models = {setup.backbone: prof.load(setup.backbone)}
    judges = {setup.judge: prof.load(setup.judge)} if setup.judge else {}
    scores = split_systems(score_systems(systems, items, setup.split, pd_models=pd_models,
                                         judges=judges, progress=progress), ["generator", arm])
    table = rag_table(answers, scores, arm=arm, order=arms.order, pairs=arms.pairs, seed=seed)
    retrieval = {"retrieval": f"bm25-top{index.k_docs}+dense-{prof.embedder}",
                 "chunk_chars": index.max_chars, "top_k": top_k}
    keys = ["generator", arm, "id"]
    return Experiment(
        artefact, table, id_columns=["generator", arm, "metric", "evaluator", "quantity"],
        interval="questions",
        signatures=metric_signatures(pd_models, judges, seed=seed, n=len(items),
                                     pd_extra=retrieval),
        parameters=dict(documents=str(setup.documents),
                        documents_sha256=sha256_file(setup.documents),
                        generators=list(setup.generators), backbone=setup.backbone,
                        judge=setup.judge or "none", embedder=prof.embedder,
                        prompt_sha256=prompt_sha256),
        notes=notes,
        frames={"answers": answers[keys + list(arms.answer_columns)],
                "scores": scores[keys + ["metric", "evaluator", "score"]]},
        extra={"answers": answers, "scores": scores, "items": items})
