"""What the curation pipeline's runs report (DebateQA Figures 1, 12 and 13).

* :func:`profile_run` -- the pipeline as the artefacts run it (dq_f01, dq_f12_f13), with
  the settings of their ``Config`` (:class:`CurationConfig`): the LLM loaded through a run
  profile (:meth:`nfeval_repro.profiles.Profile.load`), the sentence embedder on the
  profile's device, and the run's :class:`Signature`;
* :func:`funnel_table` -- Figure 1's funnel in long form;
* :func:`distribution_table` -- documents and POVs per question (Figures 12-13), with
  :func:`partial_answer_counts` of a DebateQA split beside them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.curation.pipeline import (
    PipelineResult,
    PipelineSettings,
    run_pipeline,
)
from nfeval_repro.debateqa.curation.config import CurationConfig
from nfeval_repro.tables import Signature

__all__ = ["CurationConfig", "PipelineRun", "distribution_table", "funnel_table",
           "partial_answer_counts", "profile_run"]


class PipelineRun(NamedTuple):
    """A run of :func:`profile_run`: the pipeline's result, its signature and the LLM's
    ``ModelInfo``."""

    result: PipelineResult
    signature: Signature
    model: Any


def profile_run(config: CurationConfig, *, progress: bool = True) -> PipelineRun:
    """:func:`run_pipeline` as an experiment's ``config`` says (dq_f01, dq_f12_f13; see
    :class:`CurationConfig`); ``progress``: progress bars and the model's name."""
    from nfeval.hashing import sha256_text
    from nfeval_repro.profiles import get_profile
    from nfeval.prompts import prompt_text

    prof = get_profile(config.profile)
    lm = prof.load(config.model or prof.judge, backend=prof.generator_backend)
    settings = PipelineSettings(sources=tuple(config.sources.split(",")), search=config.search,
                                k=config.k, min_relative_score=config.min_relative_score,
                                dedup_threshold=config.dedup_threshold,
                                min_docs=config.min_docs, max_docs=config.max_docs,
                                limit=config.limit, min_povs=config.min_povs,
                                max_povs=config.max_povs, pov_tokens=config.pov_tokens,
                                explanation_tokens=config.explanation_tokens,
                                temperature=config.temperature, seed=config.seed)
    res = run_pipeline(lm, settings, progress=progress, device=prof.device)
    signature = Signature(metric="curation_pipeline", variant=settings.search,
                          model=lm.info.as_dict(),
                          prompt_sha256=sha256_text(prompt_text("pov_extraction") + "\n"
                                                    + prompt_text("pov_explanation")),
                          seed=settings.seed, n=int(res.funnel.questions.iloc[0]),
                          extra={"limit": settings.limit, "min_docs": settings.min_docs,
                                 "max_docs": settings.max_docs, "min_povs": settings.min_povs,
                                 "temperature": settings.temperature})
    if progress:
        print(f"{lm.info.name} ({lm.info.backend}); skipped sources: "
              f"{res.skipped_sources or 'none'}")
    return PipelineRun(res, signature, lm.info)


def partial_answer_counts(split: str = "test") -> tuple[str, pd.DataFrame]:
    """Partial answers per question of a DebateQA split, the closest real data to Figure 13.

    The release holds the partial answers that survived human annotation
    (A.4), not the POVs extracted before it, so its counts sit one step after
    Figure 13's. Where the split is not reachable, the project's sample
    (written in the release's format) stands in; the returned name says which.
    Returns (name, DataFrame with ``id`` and ``partial_answers``).
    """
    from nfeval.data import load_debateqa
    from nfeval.data.sample import SAMPLE_DIR

    try:
        items, name = load_debateqa(split), f"DebateQA {split} split"
    except NfevalError:
        items, name = load_debateqa(SAMPLE_DIR / "questions.jsonl"), \
            f"project sample (DebateQA {split} split not reachable)"
    return name, pd.DataFrame({"id": [it.id for it in items],
                               "partial_answers": [len(it.partial_answers) for it in items]})


def funnel_table(funnel: pd.DataFrame) -> pd.DataFrame:
    """The funnel in long form (step, stage, measure, ours, note), steps in pipeline order
    and measures as questions, documents, povs; counts that do not apply are left out."""
    rows = [{"step": r.step, "stage": r.stage, "measure": m, "ours": float(getattr(r, m)),
             "note": r.note}
            for r in funnel.itertuples() for m in ("questions", "documents", "povs")
            if pd.notna(getattr(r, m))]
    return pd.DataFrame(rows, columns=["step", "stage", "measure", "ours", "note"])


def _histogram(values: pd.Series, lo: int, hi: int) -> list[tuple[int, int]]:
    counts = values.astype(int).value_counts()
    return [(n, int(counts.get(n, 0))) for n in range(lo, hi + 1)]


def distribution_table(result: PipelineResult, reference: tuple[str, pd.DataFrame] | None = None,
                       *, seed: int | None = None) -> pd.DataFrame:
    """Figures 12-13 in long form: figure, metric, n, ours, ci_low, ci_high, n_questions, data.

    f12: trusted documents per searched question (before the ">= min_docs"
    filter) and documents used per kept question; f13: POVs per question
    that went through extraction (before the ">= min_povs" filter) and
    partial answers per produced item; ``reference`` (from
    :func:`partial_answer_counts`) adds the release's partial answers per
    question as ``f13 reference``. ``n`` is the bar (a count of documents or
    POVs), empty for summary rows.

    The means over questions carry a 95% bootstrap interval over questions
    (:func:`nfeval.metrics.intervals.mean_interval`, seeded by ``seed``, by
    default the run's, and the row's name); counts are exact and have none.
    ``n_questions`` is the number of questions a row counts or averages over.
    """
    from nfeval.metrics.intervals import mean_interval

    q = result.questions
    min_docs = int(result.parameters.get("min_docs", 3))
    seed = int(result.parameters.get("seed", 0)) if seed is None else int(seed)
    searched = q[q.dropped_at != "deduplicated"]
    kept = q[q.used > 0]
    ran = q[q.povs.notna()]
    rows: list[dict] = []

    def add(figure, metric, ours, over, n="", data="ours"):
        rows.append({"figure": figure, "metric": metric, "n": n, "ours": ours,
                     "ci_low": np.nan, "ci_high": np.nan, "n_questions": int(over),
                     "data": data})

    def add_mean(figure, metric, values, data="ours"):
        ci = mean_interval(list(values), seed=seed, key=f"{figure}/{metric}/{data}")
        rows.append({"figure": figure, "metric": metric, "n": "", "ours": ci.estimate,
                     "ci_low": ci.low, "ci_high": ci.high, "n_questions": ci.n, "data": data})

    add("f12", "questions searched", len(searched), len(searched))
    add("f12", "questions kept", len(kept), len(searched))
    if len(kept):
        add("f12", "min documents per question", int(kept.used.min()), len(kept))
        add("f12", "max documents per question", int(kept.used.max()), len(kept))
        add_mean("f12", "mean documents per question", kept.used)
    if len(searched):
        for n, c in _histogram(searched.trusted, 0, int(searched.trusted.max())):
            add("f12", "questions with n trusted documents", c, len(searched), n)
    if len(kept):
        for n, c in _histogram(kept.used, min_docs, int(kept.used.max())):
            add("f12", "questions with n documents used", c, len(kept), n)
    add("f13", "questions extracted", len(ran), len(ran))
    add("f13", "questions kept", int((ran.dropped_at == "").sum()), len(ran))
    if len(ran):
        add_mean("f13", "mean POVs per question", ran.povs)
        for n, c in _histogram(ran.povs, 0, int(ran.povs.max())):
            add("f13", "questions with n POVs", c, len(ran), n)
    pas = [len(it["partial_answers"]) for it in result.items]
    add_mean("f13", "mean partial answers per item", pas)
    if reference is not None:
        name, ref = reference
        add_mean("f13 reference", "mean partial answers per item", ref.partial_answers,
                 data=name)
        for n, c in _histogram(ref.partial_answers, int(ref.partial_answers.min()),
                               int(ref.partial_answers.max())):
            add("f13 reference", "questions with n partial answers", c, len(ref), n, data=name)
    return pd.DataFrame(rows, columns=["figure", "metric", "n", "ours", "ci_low", "ci_high",
                                       "n_questions", "data"])
