"""P.D. and D.A. on answers held in memory (each returns a :class:`~nfeval.result.Result`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.result import Result

__all__ = ["DA", "PD", "debateqa_result", "dispute_awareness", "perspective_diversity",
           "score_answers"]


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


class _DebateMetric:
    """P.D. or D.A. as a metric, built once from its settings and a model (the backbone or the
    judge: loaded, or a name loaded with ``loader``, a
    :class:`~nfeval.models.loader.ModelLoader`, or where ``runtime`` says; None: the
    default), then called on answers: :meth:`score` on answers in memory,
    :meth:`score_inputs` on read files; :attr:`signature` before anything is scored."""

    settings_type: type
    default_model: str

    def __init__(self, settings=None, model: Any = None, *, runtime=None, loader=None,
                 **options: Any):
        from nfeval.models.loader import metric_loader

        if settings is None:
            settings = self.settings_type(**options)
        elif options or not isinstance(settings, self.settings_type):
            raise NfevalError(f"give the settings as a {self.settings_type.__name__} or as "
                              "keywords, not both")
        self.settings = settings
        self.loader = metric_loader(runtime, loader)
        self._model, self._loaded = model, None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings!r})"

    @property
    def model(self):
        """The loaded model (loaded on first use)."""
        if self._loaded is None:
            self._loaded = self.loader.model(self._model, self.default_model)
        return self._loaded

    def score_inputs(self, inputs, *, use_cache: bool = True, progress: bool = True) -> Result:
        """The scores of read answers (:class:`~nfeval.debateqa.scoring.ScoringInput`,
        :func:`~nfeval.debateqa.scoring.prepare_inputs`)."""
        return score_answers(inputs, self.settings, self.model, use_cache=use_cache,
                             progress=progress)


class PD(_DebateMetric):
    """DebateQA's Perspective Diversity (lower is better), built once:
    ``PD(PDSettings(...), model)`` or ``PD(model=..., variant=..., restate=..., seed=...)``
    (:class:`~nfeval.debateqa.scoring.PDSettings`); ``model``: the backbone LM (default
    :data:`~nfeval.models.registry.DEFAULT_PD_BACKBONE`).

    Usage::

        from nfeval.debateqa import PD

        pd = PD(model="smollm2-135m-instruct")
        pd.score(["Some say yes, others no..."], partial_answers=[["Yes. Because...",
                                                                  "No. Because..."]])
    """

    def __init__(self, settings=None, model: Any = None, **options: Any):
        from nfeval.debateqa.scoring import PDSettings
        from nfeval.models.registry import DEFAULT_PD_BACKBONE

        self.settings_type, self.default_model = PDSettings, DEFAULT_PD_BACKBONE
        super().__init__(settings, model, **options)

    @property
    def signature(self):
        """What decides the scores (:class:`~nfeval.signature.Signature`)."""
        from nfeval.debateqa.scoring import pd_signature

        return pd_signature(self.model, self.settings)

    def score(self, answers, *, partial_answers=None, ids=None, split: str | None = None,
              use_cache: bool = True, progress: bool = True) -> Result:
        """P.D. of each answer: either ``partial_answers`` (one list of reference texts per
        answer, the question's points of view) or ``split`` ("sample", "test", "dev" or a
        question file; ``answers`` then maps question ids to texts, or comes with ``ids``)."""
        inputs = _memory_inputs(answers, ids, split, None, partial_answers)
        return self.score_inputs(inputs, use_cache=use_cache, progress=progress)


class DA(_DebateMetric):
    """DebateQA's Dispute Awareness (does the answer say the question is debated: 1 or 0),
    built once: ``DA(DASettings(...), model)`` or ``DA(model=..., mode=..., zero_shot=...,
    prompt=..., guard=..., seed=...)`` (:class:`~nfeval.debateqa.scoring.DASettings`);
    ``model``: the judge (default :data:`~nfeval.models.registry.DEFAULT_JUDGE`). ``prompt``:
    a template of one's own with the ``{question}`` and ``{answer}`` slots (default: the
    release's few-shot template); ``guard``: ``"quote"`` or ``"strip"``
    (:data:`nfeval.guard.GUARD_MODES`; default ``"off"``)."""

    def __init__(self, settings=None, model: Any = None, **options: Any):
        from nfeval.debateqa.scoring import DASettings
        from nfeval.models.registry import DEFAULT_JUDGE

        self.settings_type, self.default_model = DASettings, DEFAULT_JUDGE
        super().__init__(settings, model, **options)
        if self.settings.prompt is None:  # the release template, before the judge loads
            from nfeval.data import load_prompt
            from nfeval.debateqa.da import DA_PROMPT

            load_prompt(DA_PROMPT)

    @property
    def signature(self):
        """What decides the scores (:class:`~nfeval.signature.Signature`)."""
        from nfeval.debateqa.scoring import da_signature

        return da_signature(self.model, self.settings)

    def score(self, answers, *, questions=None, ids=None, split: str | None = None,
              use_cache: bool = True, progress: bool = True) -> Result:
        """D.A. of each answer: either ``questions`` (one per answer) or ``split`` (as
        :meth:`PD.score`)."""
        inputs = _memory_inputs(answers, ids, split, questions, None)
        return self.score_inputs(inputs, use_cache=use_cache, progress=progress)


#: the metric objects' ``score`` keywords (the rest of a call's keywords are the settings')
_CALL = ("ids", "split", "use_cache", "progress")


def _metric_options(options: dict) -> dict:
    """``backend`` (the old functions' keyword) as the metric's loader, the rest unchanged."""
    from nfeval.models.loader import metric_loader

    backend = options.pop("backend", None)
    if backend is not None and backend != "hf":
        options["loader"] = metric_loader(options.pop("runtime", None), backend=backend)
    return options


def perspective_diversity(answers: Sequence[str] | Mapping[Any, str], *,
                          partial_answers: Sequence[Sequence[Any]] | None = None,
                          model: Any = None, **options: Any) -> Result:
    """DebateQA's P.D. of each answer (lower is better): ``PD(model=model, ...).score(answers,
    partial_answers=..., ...)`` (:class:`PD`). ``options``: the settings (``variant``,
    ``restate``, ``seed``), ``ids``, ``split``, ``runtime``, ``backend``, ``use_cache``,
    ``progress``; the settings are checked first."""
    call = {k: options.pop(k) for k in _CALL if k in options}
    return PD(model=model, **_metric_options(options)).score(
        answers, partial_answers=partial_answers, **call)


def dispute_awareness(answers: Sequence[str] | Mapping[Any, str], *,
                      questions: Sequence[str] | None = None, model: Any = None,
                      **options: Any) -> Result:
    """DebateQA's D.A. of each answer: ``DA(model=model, ...).score(answers,
    questions=..., ...)`` (:class:`DA`). ``options``: the settings (``mode``, ``zero_shot``,
    ``prompt``, ``guard``, ``seed``), ``ids``, ``split``, ``runtime``, ``backend``,
    ``use_cache``, ``progress``; the settings are checked first."""
    call = {k: options.pop(k) for k in _CALL if k in options}
    return DA(model=model, **_metric_options(options)).score(answers, questions=questions,
                                                             **call)
