"""Collect model answers to debatable questions, cached per answer on disk.

:func:`generate_answers` renders each question with a system prompt (the
project's ``p_basic`` by default) and an optional user-turn suffix (e.g. a
length instruction), generates with the given decoding, and stores every
finished answer in a :class:`nfeval.runcache.RunCache` keyed by model,
prompts and decoding, so reruns and interrupted runs regenerate nothing.
Sampling uses a per-question seed derived from ``seed`` and the question id,
so one question's answer does not depend on which others are in the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.hashing import derived_seed
from nfeval.models.base import LanguageModel
from nfeval.prompts import prompt_text, system_prompts
from nfeval.runcache import RunCache

_NEXT_QUESTION = re.compile(r"\n\s*Question:")


def answer_prompt(model: LanguageModel, question: str, *, system: str | None = None,
                  suffix: str = "") -> str:
    """The prompt a model answers: its chat template, or the project's completion
    format (``prompts/answer_completion_base.txt``) for base models without one."""
    user = question.strip() + (f" {suffix.strip()}" if suffix.strip() else "")
    if model.info.chat_template == "none":
        return prompt_text("answer_completion_base").format(system=system or "", user=user).lstrip()
    return model.chat_prompt(user, system=system)


def clean_answer(model: LanguageModel, text: str) -> str:
    """Base-model completions run on into the next "Question:"; cut them there."""
    if model.info.chat_template == "none":
        text = _NEXT_QUESTION.split(text, maxsplit=1)[0]
    return text.strip()


def stop_strings(model: LanguageModel) -> list[str]:
    """Base models (no chat template) stop where they start a new question."""
    return ["\nQuestion:"] if model.info.chat_template == "none" else []


def question_seed(seed: int, qid: int) -> int:
    return derived_seed(f"{seed}:{qid}")


@dataclass(frozen=True)
class Decoding:
    """How answers are sampled: temperature, top-p, the token budget, and the run's seed
    (each question's own is derived from it, :func:`question_seed`). The default is greedy,
    256 tokens."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    seed: int = 0


def generate_answers(model: LanguageModel, questions: Mapping[int, str] | Iterable, *,
                     system: str | None = None, suffix: str = "",
                     decoding: Decoding = Decoding(), use_cache: bool = True,
                     progress: bool = True, desc: str | None = None) -> pd.DataFrame:
    """Answers of ``model`` to ``questions`` ({id: question} or DebateItems).

    ``system=None`` uses the project's p_basic prompt; ``decoding``: how answers are
    sampled (:class:`Decoding`). Returns one row per question: ``id, answer, n_tokens,
    finish_reason, raw`` (``raw`` is the generated text before cleaning).
    """
    from tqdm.auto import tqdm

    if not isinstance(questions, Mapping):
        questions = {it.id: it.question for it in questions}
    if not questions:
        raise NfevalError("generate_answers: no questions given.")
    system = system_prompts()["basic"] if system is None else system
    temperature, top_p = decoding.temperature, decoding.top_p
    max_tokens, seed = decoding.max_tokens, decoding.seed
    info = model.info
    cache = RunCache("gen", {
        "model": info.cache_fields(),
        "system": system, "suffix": suffix, "temperature": float(temperature),
        "top_p": float(top_p), "max_tokens": int(max_tokens), "seed": int(seed),
    }, model=model) if use_cache else None
    rows = []
    bar = tqdm(questions.items(), desc=desc or f"answers ({info.name})", unit="answer",
               disable=not progress)
    for qid, question in bar:
        prompt = answer_prompt(model, question, system=system, suffix=suffix)
        hit = cache.get(qid, prompt) if cache is not None else None
        if hit is None:
            g = model.generate(prompt, temperature=temperature, top_p=top_p,
                               max_tokens=max_tokens, seed=question_seed(seed, qid),
                               stop=stop_strings(model))
            hit = {"answer": clean_answer(model, g.text), "n_tokens": g.n_tokens,
                   "finish_reason": g.finish_reason, "raw": g.text}
            if cache is not None:
                cache.put(qid, prompt, hit)
        rows.append({"id": qid, **hit})
    return pd.DataFrame(rows)
