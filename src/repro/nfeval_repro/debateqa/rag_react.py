"""The ReAct loop of the RAG answers (DebateQA Section 7.3; Yao et al., 2023).

In the paper an agent (Claude 3.5 Sonnet) interleaves reasoning with
searches and selects up to 9 chunks; the answer is then written from the
question and those chunks (:func:`nfeval_repro.debateqa.rag.rag_answers`).
Here the answering model runs the loop itself with the project's prompt
(``prompts/rag_react.txt``: ``Thought:`` / ``Action: Search[query]`` or
``Finish`` steps after Yao et al.; the paper's is not printed in the paper's text), searching
a :class:`~nfeval_repro.debateqa.rag_index.ChunkIndex`.

Small embedded models often do not follow the ReAct format: a step without a
valid action is asked once more for the action alone (as Yao et al.'s code
re-prompts a missing action); if that fails too, the controller takes a
default action (search with the question itself if nothing was gathered
yet, else stop). Every such step is counted (:class:`ReactResult`). The
steps are generated through :class:`StepGenerator`, cached per model,
decoding and prompt, so reruns regenerate nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.rag_index import Chunk, Retrieved
from nfeval.prompts import prompt_text

REACT_MAX_CHUNKS = 9  # paper Section 7.3: ReAct selects "up to 9 document chunks"
REACT_K_PER_SEARCH = 3  # project's choice: 3 searches of 3 chunks reach the limit
REACT_MAX_STEPS = 4  # project's choice
REACT_STEP_TOKENS = 48  # project's choice: one thought and one action
OBSERVATION_CHARS = 200  # project's choice: what the agent sees of each found chunk
THOUGHT_CHARS = 200  # project's choice: a thought longer than this is cut in the trace


def react_user_prompt(question: str) -> str:
    """The user turn of every ReAct step (``prompts/rag_react.txt``)."""
    if not question.strip():
        raise NfevalError("react_user_prompt: empty question.")
    return prompt_text("rag_react").format(question=question.strip())


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
        }, model=model) if use_cache else None

    def __call__(self, item_id, prompt: str) -> str:
        from nfeval_repro.debateqa.generation import question_seed

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
    from nfeval_repro.debateqa.generation import answer_prompt

    base = answer_prompt(model, react_user_prompt(question), system=system)
    sep = "\n" if getattr(model, "template", "model") == "none" else ""
    return base + sep + "Thought:" + scratchpad
