"""dq_t02: DebateQA Table 2, metric alignment with human judgement, on graded answers.

The human side is the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release) turned
into pairwise preferences and Elo rankings (:mod:`nfeval_repro.debateqa.alignment`),
not the paper's annotations (not public); the metrics' scores per answer come from
:mod:`nfeval_repro.debateqa.alignment_scores`. Rows of ``kind`` "estimate": each
metric's mean per-question correlation with the Elo ranking; "paired difference": P.D.
minus each other metric on the same questions.
"""

from __future__ import annotations

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

__all__ = ["run"]

ID = "dq_t02"
ID_COLUMNS = ["kind", "dataset", "metric", "coefficient"]
NOTES = ("Human data: the graded answers of ANTIQUE and TREC-DL-NF (LINKAGE release), "
         "turned into pairwise preferences; NOT the paper's pairwise preferences, which "
         "are not public. Per-question correlation with the Elo ranking, mean over "
         "questions (the paper: mean over annotators), 95% percentile bootstrap interval "
         f"over questions ({N_RESAMPLES:,} resamples, seeded). 'paired difference' rows: P.D. minus "
         "the metric on the questions where both are defined, paired bootstrap. Table 2's "
         "values are not printed in the paper's text.")


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0,
        datasets: str = "antique,trec-dl-nf", max_answers: int = 4, max_references: int = 3,
        backbone: str = "", judge: str = "", judge_mode: str = "",
        metrics: str = "pd,direct_score,g_eval,num_povs,acknowledge", rounds: int = 200,
        tie_points: float = 1.0, judge_limit: int = 0, pd_judge_limit: int = 0,
        progress: bool = True) -> Experiment:
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
    prof = get_profile(profile)
    judge_name = judge or prof.judge
    backbones = _backbones(backbone, judge_name, prof.pd_backbones[0])
    mode = judge_mode or ("prob" if prof.judge_mode == "prob" else "generate")
    wanted = parse_metrics(metrics)
    for name, value in (("judge_limit", judge_limit), ("pd_judge_limit", pd_judge_limit)):
        if value < 0:
            raise NfevalError(f"{name} must be >= 0 (0: every selected question), got {value}.")
    selections = [select_questions(load_linkage(ds.strip()), ds.strip(), limit=limit,
                                   max_answers=max_answers, seed=seed)
                  for ds in datasets.split(",") if ds.strip()]
    questions = [q for s in selections for q in s.questions]
    n_answers = sum(len(q.candidates) for q in questions)
    judge_qs = [q for s in selections for q in s.questions[:judge_limit or None]]
    n_judged = sum(len(q.candidates) for q in judge_qs)
    pd_judge_qs = [q for s in selections for q in s.questions[:pd_judge_limit or None]]
    if progress:
        for s in selections:
            reasons = pd.Series(list(s.skipped.values()), dtype=str).value_counts().to_dict()
            print(f"{s.dataset}: {len(s.questions)} questions kept ({s.n_total} in the release), "
                  f"{sum(len(q.candidates) for q in s.questions)} answers; passed over: {reasons}")
        print(f"P.D. backbone(s) {', '.join(backbones)}; judge {judge_name} ({mode} mode); "
              f"metrics {wanted}")
        if judge_limit:
            print(f"judge metrics on the first {judge_limit} questions per dataset: "
                  f"{len(judge_qs)} questions, {n_judged} answers")
        if pd_judge_limit and judge_name in backbones:
            print(f"P.D. with {judge_name} on the first {pd_judge_limit} questions per "
                  f"dataset: {len(pd_judge_qs)} questions, "
                  f"{sum(len(q.candidates) for q in pd_judge_qs)} answers")
    human = human_rankings(questions, rounds=rounds, seed=seed, tie_points=tie_points)

    frames, signatures, timings = [], [], {}
    for backbone_name in backbones if "pd" in wanted else ():
        t = time.time()
        lm = prof.load(backbone_name)
        timings["load " + backbone_name] = time.time() - t
        t = time.time()
        mine = pd_judge_qs if backbone_name == judge_name else questions
        frames.append(score_pd(lm, mine, max_references=max_references, seed=seed,
                               progress=progress).assign(metric=pd_metric(backbone_name)))
        timings[pd_metric(backbone_name)] = time.time() - t
        signatures.append(Signature(metric="perspective_diversity", variant="paper",
                                    model=lm.info.as_dict(), seed=seed,
                                    n=sum(len(q.candidates) for q in mine),
                                    extra={"references": "top-grade-leave-one-out",
                                           "max_references": max_references}))
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
                seed=seed, n=n_judged,
                prompt_sha256=sha256_text(prompt_text(JUDGE_METRICS[name].prompt))))
        del lm
    if "acknowledge" in wanted:
        frames.append(score_acknowledge(questions))
        signatures.append(Signature(
            metric="acknowledge", variant="phrase-rule", seed=seed, n=n_answers,
            prompt_sha256=sha256_text((PROMPTS / "da_acknowledge_phrases.txt").read_text())))
    if progress:  # scoring times are 0 where every score came from the store
        for k, v in timings.items():
            n = n_judged if k in JUDGE_METRICS else n_answers
            print(f"{k}: {v:.1f} s"
                  + ("" if k.startswith("load") else f", {v / max(n, 1):.2f} s per answer"))

    scores = pd.concat(frames, ignore_index=True)
    order = [m for w in wanted for m in ([pd_metric(b) for b in backbones] if w == "pd" else [w])]
    return Experiment(
        id=ID, table=_table(scores, human, selections, seed), id_columns=ID_COLUMNS,
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
