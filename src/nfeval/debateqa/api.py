"""P.D. and D.A. on answers held in memory (each returns a :class:`~nfeval.result.Result`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.result import Result, load_model_arg

__all__ = ["debateqa_result", "dispute_awareness", "perspective_diversity", "score_answers"]


def debateqa_result(inputs, table: pd.DataFrame, column: str, label: str, signature, *,
                    seed: int = 0) -> Result:
    """A :class:`Result` from a per-answer table of ``nfeval pd|da``."""
    from nfeval.metrics.intervals import mean_interval

    iv = mean_interval(table[column].dropna().tolist(), seed=seed, key=column, unit="answers")
    return Result(metric=column, label=label, table=table, column=column, item_unit="answers",
                  score=iv, signature=signature, skipped=list(inputs.skipped),
                  n_questions=len(inputs.answers), source=str(inputs.answers_path),
                  lower_is_better=column == "pd")


def score_answers(inputs, settings, model, *, use_cache: bool = True,
                  progress: bool = True) -> Result:
    """P.D. (``settings``: a :class:`~nfeval.debateqa.scoring.PDSettings`; ``model``: the
    backbone) or D.A. (a :class:`~nfeval.debateqa.scoring.DASettings`; the judge) of read
    answers (:class:`~nfeval.debateqa.scoring.ScoringInput`): the per-answer table, its
    signature and the mean with its interval. ``nfeval pd|da`` and the API both call it."""
    from nfeval.debateqa.scoring import (PDSettings, da_signature, pd_signature, score_da,
                                         score_pd)

    if isinstance(settings, PDSettings):
        table = score_pd(inputs, model, settings, use_cache=use_cache, progress=progress)
        sig = pd_signature(model, settings, n=int(table["pd"].notna().sum()))
        return debateqa_result(inputs, table, "pd", "P.D.", sig, seed=settings.seed)
    table = score_da(inputs, model, settings, use_cache=use_cache, progress=progress)
    sig = da_signature(model, settings, n=int(table["da"].notna().sum()))
    return debateqa_result(inputs, table, "da", "D.A.", sig, seed=settings.seed)


def _memory_inputs(answers: Any, ids: Sequence[int] | None, split: str | None,
                   questions: Sequence[str] | None, partial_answers: Sequence | None):
    """:class:`~nfeval.debateqa.scoring.ScoringInput` from in-memory answers."""
    from nfeval.data import DebateItem, load_debateqa
    from nfeval.debateqa.scoring import ScoringInput, answers_input, question_file
    from nfeval.hashing import sha256_text

    if isinstance(answers, str):
        raise NfevalError("answers must be a list of texts or a dict {id: text}, not one text")
    if isinstance(answers, Mapping):
        if ids is not None:
            raise NfevalError("answers is a dict keyed by id: drop ids")
        amap = dict(answers)
    else:
        answers = list(answers)
        if ids is not None and len(ids) != len(answers):
            raise NfevalError(f"ids has {len(ids)} entries for {len(answers)} answers")
        amap = dict(zip(ids if ids is not None else range(len(answers)), answers))
    bad = [f"answers[{k!r}]: not a text" for k, v in amap.items() if not isinstance(v, str)]
    if bad:
        raise NfevalError("; ".join(bad))
    if split is not None:
        if questions is not None or partial_answers is not None:
            raise NfevalError("give either split (the questions of a DebateQA split) or the "
                              "questions / partial answers themselves, not both")
        path = question_file(split)
        items = {it.id: it for it in load_debateqa(path)}
        inputs = answers_input(amap, items, path, name="<memory>")
    else:
        keys = list(amap)
        need = partial_answers if partial_answers is not None else questions
        if need is None:
            raise NfevalError("give the questions' partial answers (P.D.) or questions (D.A.), "
                              "one per answer, or split='sample' (or test, dev, a path)")
        if len(need) != len(keys):
            raise NfevalError(f"{len(need)} entries for {len(keys)} answers; give one per "
                              "answer, in the same order")
        items = {}
        for k, key in enumerate(keys):
            q = questions[k] if questions is not None else ""
            parts = list(partial_answers[k]) if partial_answers is not None else []
            if partial_answers is not None and not parts:
                raise NfevalError(f"partial_answers[{k}] is empty")
            items[key] = DebateItem(key, q, parts)
        digest = sha256_text(json.dumps(
            [[str(k), it.question, [getattr(p, "text", p) for p in it.partial_answers]]
             for k, it in items.items()], default=str))
        inputs = ScoringInput(Path("<memory>"), {}, items, "<memory>", digest)
        for key, text in amap.items():
            if not text.strip():
                inputs.skipped.append(f"answers[{key!r}]: empty answer")
            else:
                inputs.answers[key] = text
    inputs.skipped = [re.sub(r"^id (\S+):", r"answers[\1]:", s) for s in inputs.skipped]
    if inputs.skipped:
        raise NfevalError(f"{len(inputs.skipped)} answer(s) cannot be scored: "
                          + "; ".join(inputs.skipped))
    return inputs


def perspective_diversity(answers: Sequence[str] | Mapping[Any, str], *,
                          partial_answers: Sequence[Sequence[Any]] | None = None,
                          ids: Sequence[Any] | None = None, split: str | None = None,
                          model: Any = None, variant: str = "paper",
                          restate: str | None = None, seed: int = 0, backend: str = "hf",
                          use_cache: bool = True, progress: bool = True) -> Result:
    """DebateQA's P.D. of each answer (lower is better).

    Either ``partial_answers`` (one list of reference texts per answer, the
    question's points of view) or ``split`` ("sample", "test", "dev" or a
    question file; ``answers`` then maps question ids to texts, or comes with
    ``ids``). ``model``: the backbone LM (default
    :data:`~nfeval.models.registry.DEFAULT_PD_BACKBONE`), a name or a loaded model.
    The settings are checked, as one :class:`~nfeval.debateqa.scoring.PDSettings`, first.
    """
    from nfeval.debateqa.scoring import PDSettings
    from nfeval.models.registry import DEFAULT_PD_BACKBONE

    settings = PDSettings(variant=variant, restate=restate, seed=seed)
    inputs = _memory_inputs(answers, ids, split, None, partial_answers)
    lm = load_model_arg(model, DEFAULT_PD_BACKBONE, backend=backend)
    return score_answers(inputs, settings, lm, use_cache=use_cache, progress=progress)


def dispute_awareness(answers: Sequence[str] | Mapping[Any, str], *,
                      questions: Sequence[str] | None = None, ids: Sequence[Any] | None = None,
                      split: str | None = None, model: Any = None, mode: str = "prob",
                      zero_shot: bool = False, prompt: str | None = None, seed: int = 0,
                      backend: str = "hf", use_cache: bool = True,
                      progress: bool = True, guard: bool | str = "off") -> Result:
    """DebateQA's D.A. of each answer: does it say the question is debated (1) or not (0).

    Either ``questions`` (one per answer) or ``split`` (as
    :func:`perspective_diversity`). ``model``: the judge (default
    :data:`~nfeval.models.registry.DEFAULT_JUDGE`); ``prompt``: a template of one's own
    with the ``{question}`` and ``{answer}`` slots (default: the release's few-shot
    template). ``guard``: ``"quote"``, the judge sees each answer as quoted data;
    ``"strip"``, quoted with its sentences addressed to the judge removed
    (:data:`nfeval.guard.GUARD_MODES`; ``True`` is ``"quote"``; default ``"off"``).
    The settings are checked, as one :class:`~nfeval.debateqa.scoring.DASettings`, first.
    """
    from nfeval.debateqa.scoring import DASettings
    from nfeval.models.registry import DEFAULT_JUDGE

    settings = DASettings(mode=mode, zero_shot=zero_shot, prompt=prompt, guard=guard,
                          seed=seed)
    inputs = _memory_inputs(answers, ids, split, questions, None)
    judge = load_model_arg(model, DEFAULT_JUDGE, backend=backend)
    return score_answers(inputs, settings, judge, use_cache=use_cache, progress=progress)
