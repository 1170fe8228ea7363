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
:mod:`nfeval.debateqa.experiments.curation.documents`), searched in two stages that mirror the
paper's: a BM25 search over whole documents stands in for the search engine
(its top ``k_docs`` documents play the top 10 URLs), then those documents'
~2,000-character chunks (:func:`nfeval.debateqa.experiments.curation.chunking.chunk_chars`,
LangChain's ``RecursiveCharacterTextSplitter`` as in the paper, without overlap)
are ranked by cosine similarity of the profile's embedder (the
embedded MiniLM, not gte-Qwen2; MiniLM reads only the first 256 word pieces
of a chunk). ``trusted_only`` drops documents whose URL fails
:func:`nfeval.debateqa.experiments.curation.tld.is_trusted` before the search, as the paper keeps
only trusted pages from the search results.

Table 16's text is not in our copy of the paper: the answer prompt
(``prompts/rag_answer.txt``) and the ReAct prompt (``prompts/rag_react.txt``,
``Thought:`` / ``Action: Search[query]`` or ``Finish`` steps after Yao et al.) are the
project's. Small embedded models often do not follow the ReAct format: a
step without a valid action is asked once more for the action alone (as Yao
et al.'s code re-prompts a missing action); if that fails too, the controller
takes a default action (search with the question itself if nothing was
gathered yet, else stop). Every such step is counted (:class:`ReactResult`),
so the notebooks can say how often it happened.

Answers are generated through :func:`nfeval.debateqa.generation.generate_answers`
(cached per model, prompt and decoding; the no-retrieval answers are those of
dq_t04), ReAct's intermediate steps through :class:`StepGenerator` (cached
the same way), so reruns regenerate nothing. While a notebook's item store is
active (:mod:`nfeval.store`) every search result of the default embedder is
stored too (``step.rag-search-<embedder>.jsonl``): the chunks an answer is
written from, and so its prompt, do not depend on the float rounding of the
embedder on another CPU.

:func:`rag_table` assembles Tables 6-7 with their 95% intervals over
questions (:mod:`nfeval.debateqa.experiments.intervals`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nfeval import NfevalError
from nfeval.prompts import prompt_text

STRATEGIES = ("none", "vanilla", "react")
CHUNK_CHARS = 2000  # paper D.1: "chunking to roughly 2000-character"
TOP_K = 10  # paper D.1: "the top-10 most relevant chunks"
K_DOCS = 10  # paper D.1: "The top 10 URLs from the search are saved"
REACT_MAX_CHUNKS = 9  # paper Section 7.3: ReAct selects "up to 9 document chunks"
REACT_K_PER_SEARCH = 3  # project's choice: 3 searches of 3 chunks reach the limit
REACT_MAX_STEPS = 4  # project's choice
REACT_STEP_TOKENS = 48  # project's choice: one thought and one action
OBSERVATION_CHARS = 200  # project's choice: what the agent sees of each found chunk
THOUGHT_CHARS = 200  # project's choice: a thought longer than this is cut in the trace
NO_DOCUMENTS = "(no documents were found)"

Embed = Callable[[Sequence[str]], np.ndarray]


# --------------------------------------------------------------------------- chunks

@dataclass(frozen=True)
class Chunk:
    """A piece of one document. ``id`` is ``"<doc_id>#<k>"`` (k from 0)."""

    id: str
    doc_id: str
    url: str
    title: str
    text: str
    trusted: bool


@dataclass(frozen=True)
class Retrieved:
    chunk: Chunk
    score: float  # cosine similarity to the query


def chunk_documents(documents: Sequence, max_chars: int = CHUNK_CHARS) -> list[Chunk]:
    """Split every document (``nfeval.debateqa.experiments.curation.documents.Document``) into chunks,
    marking each as trusted or not by its document's URL (Table 10's TLDs)."""
    from nfeval.debateqa.experiments.curation.chunking import chunk_chars
    from nfeval.debateqa.experiments.curation.tld import is_trusted

    seen: set[str] = set()
    out: list[Chunk] = []
    for doc in documents:
        if doc.doc_id in seen:
            raise NfevalError(f"document id {doc.doc_id!r} occurs twice in the collection")
        seen.add(doc.doc_id)
        trusted = is_trusted(doc.url)
        pieces = [p for p in chunk_chars(doc.text, max_chars=max_chars) if p.strip()]
        out += [Chunk(f"{doc.doc_id}#{k}", doc.doc_id, doc.url, doc.title, p.strip(), trusted)
                for k, p in enumerate(pieces)]
    return out


class ChunkIndex:
    """Two-stage retrieval over a document collection (see the module docstring).

    ``embed`` maps texts to L2-normalised rows (default: the profile's embedder
    through :func:`nfeval.debateqa.experiments.curation.documents.embed_texts`); tests pass a fake.
    ``k_docs=0`` skips the document stage and ranks every chunk. Chunk
    embeddings are computed on first use and kept, so a query embeds only the
    chunks it has not met before.
    """

    def __init__(self, documents: Sequence, *, embedder: str = "minilm-l6",
                 embed: Embed | None = None, max_chars: int = CHUNK_CHARS, k_docs: int = K_DOCS,
                 store_name: str | None = None):
        if not documents:
            raise NfevalError("ChunkIndex: the document collection is empty.")
        if k_docs < 0:
            raise NfevalError(f"k_docs must be >= 0, got {k_docs}.")
        self.documents = list(documents)
        self.chunks = chunk_documents(self.documents, max_chars=max_chars)
        self.embedder = embedder
        self.k_docs = int(k_docs)
        self.max_chars = int(max_chars)
        self._embed = embed or self._default_embed
        self._by_doc: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            self._by_doc.setdefault(c.doc_id, []).append(i)
        self._vectors: dict[int, np.ndarray] = {}
        self._bm25 = None
        self._by_id = {c.id: c for c in self.chunks}
        # Search results are stored (under an active item store) for the default embedder,
        # or under ``store_name`` for another one; never for an unnamed custom embed.
        self.store_name = store_name or (f"rag-search-{embedder}" if embed is None else None)
        from nfeval.hashing import sha256_text

        self.fingerprint = sha256_text(json.dumps(
            [self.k_docs, self.max_chars, [[c.id, c.url, c.text] for c in self.chunks]],
            ensure_ascii=False))

    def _default_embed(self, texts: Sequence[str]) -> np.ndarray:
        from nfeval.debateqa.experiments.curation.documents import embed_texts

        return embed_texts(texts, model=self.embedder)

    def _vectors_of(self, idx: Sequence[int]) -> np.ndarray:
        todo = [i for i in idx if i not in self._vectors]
        if todo:
            vecs = np.asarray(self._embed([self.chunks[i].text for i in todo]), dtype=np.float32)
            self._vectors.update(zip(todo, vecs))
        return np.stack([self._vectors[i] for i in idx])

    def candidate_documents(self, query: str, *, trusted_only: bool = False) -> list[int]:
        """Indices into ``documents`` that the search stage returns, best first."""
        from nfeval.debateqa.experiments.curation.tld import is_trusted

        allowed = [i for i, d in enumerate(self.documents)
                   if not trusted_only or is_trusted(d.url)]
        if not self.k_docs:
            return allowed
        if self._bm25 is None:
            from nfeval.debateqa.experiments.curation.documents import BM25Index

            self._bm25 = BM25Index([d.text for d in self.documents])
        ok = set(allowed)
        ranked = [i for i, _ in self._bm25.search(query, len(self.documents)) if i in ok]
        return ranked[:self.k_docs]

    def search(self, query: str, k: int = TOP_K, *, trusted_only: bool = False,
               exclude: Sequence[str] = ()) -> list[Retrieved]:
        """The ``k`` chunks most similar to ``query`` (cosine, best first; ties by
        collection order), from the documents the search stage returns, leaving out
        chunk ids in ``exclude``."""
        if not query or not query.strip():
            raise NfevalError("ChunkIndex.search: empty query.")
        if k < 0:
            raise NfevalError(f"k must be >= 0, got {k}.")
        from nfeval.store import active_store, cached_steps

        if self.store_name is None or active_store() is None:
            return self._search(query, k, trusted_only, exclude)
        request = {"index": self.fingerprint, "query": query, "k": int(k),
                   "trusted_only": bool(trusted_only), "exclude": sorted(set(exclude))}
        found = cached_steps(self.store_name, [request], lambda reqs: [
            [[r.chunk.id, r.score] for r in self._search(x["query"], x["k"], x["trusted_only"],
                                                         x["exclude"])] for x in reqs])[0]
        return [Retrieved(self._by_id[cid], float(score)) for cid, score in found]

    def _search(self, query: str, k: int, trusted_only: bool,
                exclude: Sequence[str]) -> list[Retrieved]:
        skip = set(exclude)
        docs = self.candidate_documents(query, trusted_only=trusted_only)
        idx = sorted(i for d in docs for i in self._by_doc.get(self.documents[d].doc_id, ())
                     if self.chunks[i].id not in skip)
        if not idx or k == 0:
            return []
        q = np.asarray(self._embed([query]), dtype=np.float32)[0]
        sims = self._vectors_of(idx) @ q
        order = sorted(range(len(idx)), key=lambda j: (-float(sims[j]), idx[j]))[:k]
        return [Retrieved(self.chunks[idx[j]], float(sims[j])) for j in order]


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


def react_user_prompt(question: str) -> str:
    """The user turn of every ReAct step (``prompts/rag_react.txt``)."""
    if not question.strip():
        raise NfevalError("react_user_prompt: empty question.")
    return prompt_text("rag_react").format(question=question.strip())


# --------------------------------------------------------------------------- ReAct

_SEARCH = re.compile(r"\bsearch\s*(?:\[\s*(?P<b>[^\]\n]*?)\s*(?:\]|$)|[:(]\s*(?P<c>[^\n)]*))",
                     re.IGNORECASE | re.MULTILINE)
_FINISH = re.compile(r"^[\s*]*(?:action\s*\d*\s*:\s*)?finish\b|\bfinish\s*\[",
                     re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^\s*(?:thought\s*\d*\s*:\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class ReactStep:
    """One parsed model step: ``action`` is "search", "finish" or None (unparsed)."""

    thought: str
    action: str | None
    query: str = ""


def parse_react_step(text: str) -> ReactStep:
    """Read a model's step: the first ``Search[query]`` (also ``Search: query``,
    ``Search(query)``, an unclosed ``Search[query``) or ``Finish``, whichever
    comes first; the text before it is the thought. A search with an empty
    query, or no action at all, is unparsed (``action=None``)."""
    text = text or ""
    s, f = _SEARCH.search(text), _FINISH.search(text)
    cut = None
    if s and (not f or s.start() < f.start()):
        query = (s.group("b") if s.group("b") is not None else s.group("c") or "").strip()
        query = query.strip(" \"'`*.")
        cut, step = s.start(), ReactStep("", "search" if query else None, query)
    elif f:
        cut, step = f.start(), ReactStep("", "finish")
    else:
        step = ReactStep("", None)
    head = text[:cut] if cut is not None else text
    head = re.sub(r"\b(?:action\s*\d*\s*:)\s*$", "", head.strip(), flags=re.IGNORECASE)
    thought = " ".join(_THOUGHT.sub("", ln).strip() for ln in head.splitlines() if ln.strip())
    return ReactStep(thought, step.action, step.query)


@dataclass
class ReactResult:
    """What the ReAct loop gathered for one question, and how it went."""

    chunks: list[Chunk]
    steps: list[dict] = field(default_factory=list)  # raw text, action, query, new chunks
    unparsed_steps: int = 0  # steps with no valid action, even when asked again
    action_retries: int = 0  # steps whose first output held no valid action
    fallback: bool = False  # the controller took a default action at least once
    stop: str = ""  # "finish" | "max_chunks" | "max_steps" | "fallback" | "exhausted"

    @property
    def n_steps(self) -> int:
        return len(self.steps)


def observation(found: Sequence[Chunk], chars: int = OBSERVATION_CHARS) -> str:
    """What the agent reads after a search: each new chunk's first ``chars`` characters."""
    if not found:
        return "nothing new was found"
    out = []
    for i, c in enumerate(found, 1):
        t = " ".join(c.text.split())
        out.append(f"[{i}] " + (t if len(t) <= chars else t[:chars].rstrip() + " ..."))
    return " ".join(out)


def _first_line(text: str, chars: int = THOUGHT_CHARS) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    line = _THOUGHT.sub("", line).strip()
    return line if len(line) <= chars else line[:chars].rstrip() + " ..."


def react_gather(question: str, step: Callable[[str], str],
                 search: Callable[[str, int, Sequence[str]], Sequence[Retrieved]], *,
                 max_chunks: int = REACT_MAX_CHUNKS, k_per_search: int = REACT_K_PER_SEARCH,
                 max_steps: int = REACT_MAX_STEPS, retry_action: bool = True) -> ReactResult:
    """Run the ReAct loop for one question and return the chunks it gathered.

    ``step(scratchpad)`` returns the model's continuation of the trace so far
    (the caller renders the prompt, which ends in ``Thought:`` + scratchpad);
    ``search(query, k, exclude_ids)`` returns chunks. The loop ends at
    ``Finish``, after ``max_steps`` steps, or when ``max_chunks`` chunks are
    gathered; a search never adds more than the room left (chunks already
    gathered are dropped), so at most ``max_chunks`` chunks come back.

    A step without a valid action is asked once more for its action alone
    (its first line as the thought, then ``Action:``), as Yao et al.'s ReAct
    code re-prompts a missing action (``retry_action``; counted in
    ``action_retries``). If that fails too, the step counts in
    ``unparsed_steps`` and the controller takes a default action: a search
    with the question itself when nothing has been gathered yet, else the end
    of the loop (the answer is then written from what was gathered).
    """
    if max_chunks < 1 or k_per_search < 1 or max_steps < 1:
        raise NfevalError("react_gather: max_chunks, k_per_search and max_steps must be >= 1.")
    res = ReactResult(chunks=[])
    pad = ""
    for _ in range(max_steps):
        if len(res.chunks) >= max_chunks:
            res.stop = "max_chunks"
            break
        raw = step(pad)
        parsed = parse_react_step(raw)
        record = {"raw": raw, "retry": None, "action": parsed.action, "query": parsed.query,
                  "default": False}
        if parsed.action is None and retry_action:
            res.action_retries += 1
            thought = _first_line(raw) or "I should search the documents."
            record["retry"] = step(f"{pad} {thought}\nAction:")
            retried = parse_react_step(record["retry"])
            parsed = ReactStep(thought, retried.action, retried.query)
            record.update(action=parsed.action, query=parsed.query)
        if parsed.action is None:
            res.unparsed_steps += 1
            res.fallback = True
            record["default"] = True
            if res.chunks:
                record["action"] = "finish"
                res.steps.append({**record, "new": []})
                res.stop = "fallback"
                break
            parsed = ReactStep(parsed.thought, "search", question.strip())
            record.update(action="search", query=parsed.query)
        if parsed.action == "finish":
            res.steps.append({**record, "new": []})
            res.stop = "finish"
            break
        room = min(k_per_search, max_chunks - len(res.chunks))
        have = {c.id for c in res.chunks}
        found = [r.chunk for r in search(parsed.query, room, sorted(have))
                 if r.chunk.id not in have][:room]
        res.chunks += found
        res.steps.append({**record, "new": [c.id for c in found]})
        thought = _first_line(parsed.thought) or "I should search the documents."
        pad += (f" {thought}\nAction: Search[{parsed.query}]\n"
                f"Observation: {observation(found)}\nThought:")
    else:
        res.stop = "max_chunks" if len(res.chunks) >= max_chunks else "max_steps"
    return res


# --------------------------------------------------------------------------- generation

def load_generator(name: str, backend: str, *, n_ctx: int = 8192):
    """A generator with a context window long enough for ten 2,000-character chunks
    (``n_ctx`` is passed to the llama backend only; the others use their own)."""
    from nfeval.models import load_model

    return load_model(name, backend=backend, **({"n_ctx": n_ctx} if backend == "llama" else {}))


class StepGenerator:
    """ReAct step generation, cached on disk per model, decoding and prompt.

    Stops where the model starts writing an observation itself (or a new question)."""

    STOP = ("Observation:", "\nQuestion:")

    def __init__(self, model, *, max_tokens: int = REACT_STEP_TOKENS, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int = 0, use_cache: bool = True):
        from nfeval.runcache import RunCache

        self.model, self.max_tokens = model, int(max_tokens)
        self.temperature, self.top_p, self.seed = float(temperature), float(top_p), int(seed)
        self.cache = RunCache("react", {
            "model": model.info.cache_fields(),
            "temperature": self.temperature, "top_p": self.top_p,
            "max_tokens": self.max_tokens, "seed": self.seed, "stop": list(self.STOP),
        }) if use_cache else None

    def __call__(self, item_id, prompt: str) -> str:
        from nfeval.debateqa.generation import question_seed

        hit = self.cache.get(item_id, prompt) if self.cache is not None else None
        if hit is None:
            seed = question_seed(self.seed, int(item_id)) if str(item_id).isdigit() else self.seed
            g = self.model.generate(prompt, temperature=self.temperature, top_p=self.top_p,
                                    max_tokens=self.max_tokens, seed=seed, stop=list(self.STOP))
            hit = {"text": g.text, "n_tokens": g.n_tokens}
            if self.cache is not None:
                self.cache.put(item_id, prompt, hit)
        return hit["text"]


def react_step_prompt(model, question: str, scratchpad: str, *, system: str | None = None) -> str:
    """The prompt of one ReAct step: the model's answer prompt for the ReAct
    instructions, then the trace so far, ending at ``Thought:``."""
    from nfeval.debateqa.generation import answer_prompt

    base = answer_prompt(model, react_user_prompt(question), system=system)
    sep = "\n" if getattr(model, "template", "model") == "none" else ""
    return base + sep + "Thought:" + scratchpad


def gather_chunks(items: Sequence, index: ChunkIndex, strategy: str, *, model=None,
                  trusted_only: bool = False, k: int = TOP_K, system: str | None = None,
                  max_chunks: int = REACT_MAX_CHUNKS, k_per_search: int = REACT_K_PER_SEARCH,
                  max_steps: int = REACT_MAX_STEPS, step_tokens: int = REACT_STEP_TOKENS,
                  seed: int = 0, progress: bool = True) -> dict[int, dict]:
    """The chunks each question's answer is written from, per strategy.

    Returns ``{id: {"chunks": [...], "steps": n, "action_retries": n,
    "unparsed_steps": n, "fallback": bool, "stop": str}}``; "none" gathers
    nothing, "vanilla" the top ``k``, "react" runs :func:`react_gather` with
    ``model`` (and adds its ``"trace"``).
    """
    from tqdm.auto import tqdm

    if strategy not in STRATEGIES:
        raise NfevalError(f"unknown RAG strategy {strategy!r}; use one of {STRATEGIES}")
    if strategy == "react" and model is None:
        raise NfevalError("the react strategy needs the generating model.")
    stepper = (StepGenerator(model, max_tokens=step_tokens, seed=seed)
               if strategy == "react" else None)
    out: dict[int, dict] = {}
    for it in tqdm(items, desc=f"retrieval ({strategy})", unit="question", disable=not progress
                   or strategy == "none"):
        if strategy == "none":
            out[it.id] = {"chunks": [], "steps": 0, "action_retries": 0, "unparsed_steps": 0,
                          "fallback": False, "stop": ""}
        elif strategy == "vanilla":
            found = [r.chunk for r in index.search(it.question, k, trusted_only=trusted_only)]
            out[it.id] = {"chunks": found, "steps": 0, "action_retries": 0, "unparsed_steps": 0,
                          "fallback": False, "stop": ""}
        else:
            res = react_gather(
                it.question,
                lambda pad, it=it: stepper(it.id, react_step_prompt(model, it.question, pad,
                                                                    system=system)),
                lambda q, kk, ex: index.search(q, kk, trusted_only=trusted_only, exclude=ex),
                max_chunks=max_chunks, k_per_search=k_per_search, max_steps=max_steps)
            out[it.id] = {"chunks": res.chunks, "steps": res.n_steps,
                          "action_retries": res.action_retries,
                          "unparsed_steps": res.unparsed_steps, "fallback": res.fallback,
                          "stop": res.stop, "trace": res.steps}
    return out


def rag_answers(model, items: Sequence, index: ChunkIndex | None, strategy: str, *,
                trusted_only: bool = False, k: int = TOP_K, system: str | None = None,
                max_tokens: int = 256, temperature: float = 0.0, top_p: float = 1.0,
                seed: int = 0, max_chunks: int = REACT_MAX_CHUNKS,
                k_per_search: int = REACT_K_PER_SEARCH, max_steps: int = REACT_MAX_STEPS,
                step_tokens: int = REACT_STEP_TOKENS, progress: bool = True) -> pd.DataFrame:
    """Answers of ``model`` under a strategy ("none", "vanilla" or "react").

    "none" is exactly :func:`nfeval.debateqa.generation.generate_answers` on the
    question (dq_t04's answers, cached); the others answer the filled
    ``rag_answer`` prompt as the user turn, with the same system prompt and
    decoding. One row per question: ``id, strategy, trusted_only, answer,
    n_tokens, finish_reason, n_chunks, n_trusted_chunks, chunk_ids, steps,
    action_retries, unparsed_steps, fallback, stop, trace`` (``trace``: the
    ReAct steps as JSON, each with the model's raw text, its reply when asked
    again for the action, the action taken, its query, whether it was the
    default action, and the new chunk ids).
    """
    from nfeval.debateqa.generation import generate_answers
    from nfeval.prompts import system_prompts

    system = system_prompts()["basic"] if system is None else system
    if strategy != "none" and index is None:
        raise NfevalError(f"the {strategy} strategy needs a ChunkIndex.")
    got = gather_chunks(items, index, strategy, model=model, trusted_only=trusted_only, k=k,
                        system=system, max_chunks=max_chunks, k_per_search=k_per_search,
                        max_steps=max_steps, step_tokens=step_tokens, seed=seed,
                        progress=progress)
    if strategy == "none":
        questions: Mapping[int, str] = {it.id: it.question for it in items}
    else:
        questions = {it.id: rag_user_prompt(it.question, got[it.id]["chunks"]) for it in items}
    df = generate_answers(model, questions, system=system, temperature=temperature, top_p=top_p,
                          max_tokens=max_tokens, seed=seed, progress=progress,
                          desc=f"answers ({model.info.name}, {strategy})")
    meta = pd.DataFrame([{
        "id": qid, "strategy": strategy, "trusted_only": bool(trusted_only),
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
    ``scores``: :func:`nfeval.debateqa.experiments.systems.score_systems` rows with the same two
    columns added. Rows, by ``quantity``:

    * ``mean`` -- P.D. and D.A. per evaluator, ``length_words`` and
      ``chunks_per_answer``: the mean over questions, percentile bootstrap over
      questions (:func:`nfeval.debateqa.experiments.intervals.mean_rows`);
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
    from nfeval.debateqa.experiments.intervals import difference_rows, mean_rows, ratio_rows
    from nfeval.debateqa.experiments.systems import word_count

    keys = ["generator", arm, "id"]
    per_answer = answers.assign(length_words=answers["answer"].map(word_count),
                                chunks_per_answer=answers["n_chunks"])
    extra = per_answer.melt(id_vars=keys, value_vars=list(RAG_MEAN_METRICS), var_name="metric",
                            value_name="score").assign(evaluator="-")
    long = pd.concat([scores[keys + ["metric", "evaluator", "score"]], extra], ignore_index=True)
    long["score"] = long["score"].astype(float)
    by = ["generator", arm, "metric", "evaluator"]
    parts = [mean_rows(long, by, seed=seed).assign(quantity="mean")]
    if pairs:
        parts.append(difference_rows(long, by, column=arm, pairs=list(pairs), seed=seed)
                     .assign(quantity="difference"))
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
