"""Agreement between rankings of the same answers (DebateQA, EACL 2026, Figures 2-7).

* **Pseudo-annotators** (Figure 2's analogue, :func:`pseudo_annotator_agreement`):
  the paper's three annotators agree on their Elo rankings with Spearman's
  rho > 0.8. On the graded answers of ANTIQUE and TREC-DL-NF
  (:mod:`nfeval_repro.debateqa.alignment`) each question's preferences
  are dealt into ``n`` disjoint seeded parts ("pseudo-annotators"), an Elo
  ranking per part, pairwise Spearman between parts
  (:func:`agreement_rows`). This is the closest honest analogue of
  inter-annotator agreement the data allow, not the paper's quantity: every
  part comes from the same, consistent grades, so parts never disagree on a
  pair; their rankings differ only because each sees other pairs.
* **Several models score the same answers** (Figures 3 and 5: P.D.
  backbones, D.A. judges): :func:`answer_systems` collects the answering
  systems of dq_t04 (the same questions and stored answers that Figures 3-7
  score) and :func:`score_each` scores them with every model in turn; the
  agreement between the models is
  :func:`nfeval_repro.debateqa.system_stats.stability_rows` (rankings,
  per-answer scores) or
  :func:`~nfeval_repro.debateqa.system_stats.decision_agreement_rows`
  (0/1 decisions). :func:`pd_and_da` scores them with one backbone and one
  judge, the two metrics Figures 6 (their correlation over systems) and 7
  (their combination) set against each other.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.alignment import (AlignmentQuestion, elo_ranking,
                                                   grade_preferences, subseed)
from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.systems import (collect_systems, load_questions,
                                                 metric_signatures, score_systems)
from nfeval.metrics.correlation import correlation
from nfeval.metrics.elo import Comparison
from nfeval_repro.profiles import Profile, model_list
from nfeval_repro.tables import Signature

__all__ = [
    "AgreementResult",
    "agreement_rows",
    "answer_systems",
    "pd_and_da",
    "pseudo_annotator_agreement",
    "score_each",
    "split_preferences",
]


# --------------------------------------------------------------------------- pseudo-annotators (Fig. 2)

def split_preferences(comparisons: Sequence[Comparison], n_parts: int, seed: int
                      ) -> list[list[Comparison]]:
    """Deal the comparisons into ``n_parts`` disjoint parts of near-equal size.

    A seeded permutation dealt round-robin: part sizes differ by at most one,
    every comparison lands in exactly one part, and the same seed gives the
    same parts. Each part keeps the comparisons' given relative order.
    """
    if n_parts < 1:
        raise NfevalError(f"n_parts must be >= 1, got {n_parts}.")
    perm = random.Random(f"split/{seed}").sample(range(len(comparisons)), len(comparisons))
    owner = {idx: pos % n_parts for pos, idx in enumerate(perm)}
    parts: list[list[Comparison]] = [[] for _ in range(n_parts)]
    for i, c in enumerate(comparisons):
        parts[owner[i]].append(c)
    return parts


@dataclass
class AgreementResult:
    """Pairwise Spearman between pseudo-annotators' Elo rankings, over questions.

    ``matrix``: mean over questions (diagonal 1); ``n_used`` / ``n_skipped``:
    questions where the coefficient was defined / undefined (a part whose
    games left every rating equal); ``per_question``: one row per question
    and pair.
    """

    dataset: str
    annotators: list[str]
    matrix: pd.DataFrame
    n_used: pd.DataFrame
    n_skipped: pd.DataFrame
    per_question: pd.DataFrame


def pseudo_annotator_agreement(questions: Sequence[AlignmentQuestion], *, n_annotators: int = 3,
                               rounds: int = 200, seed: int = 0, tie_points: float = 1.0
                               ) -> AgreementResult:
    """Figure 2's analogue on graded answers (module docstring: what it does and does not show).

    Every question's grade preferences are dealt into ``n_annotators``
    disjoint parts (:func:`split_preferences`, seeded per question); each part
    gives an Elo ranking of all the question's candidates
    (:func:`elo_ranking`; a candidate with no game in a part keeps the
    initial rating); each pair of parts is compared by Spearman's rho.
    """
    if n_annotators < 2:
        raise NfevalError(f"n_annotators must be >= 2 to compare rankings, got {n_annotators}.")
    if not questions:
        raise NfevalError("pseudo_annotator_agreement needs at least one question.")
    datasets = sorted({q.dataset for q in questions})
    if len(datasets) > 1:
        raise NfevalError(f"one dataset at a time, got {datasets}.")
    names = [f"P{i + 1}" for i in range(n_annotators)]
    rows = []
    for q in questions:
        players = list(q.grades)
        parts = split_preferences(grade_preferences(q.grades), n_annotators,
                                  subseed(seed, q.dataset, q.qid, "split"))
        elos = [elo_ranking(part, players, rounds=rounds, tie_points=tie_points,
                            seed=subseed(seed, q.dataset, q.qid, "elo", i))
                for i, part in enumerate(parts)]
        for i, j in itertools.combinations(range(n_annotators), 2):
            rho = correlation([elos[i][p] for p in players], [elos[j][p] for p in players],
                              "spearman")
            rows.append({"dataset": q.dataset, "qid": q.qid, "annotator_a": names[i],
                         "annotator_b": names[j], "spearman": rho,
                         "n_games_a": len(parts[i]), "n_games_b": len(parts[j])})
    per_q = pd.DataFrame(rows)
    matrix = pd.DataFrame(np.eye(n_annotators), index=names, columns=names)
    used = pd.DataFrame(0, index=names, columns=names)
    skipped = pd.DataFrame(0, index=names, columns=names)
    for (a, b), g in per_q.groupby(["annotator_a", "annotator_b"]):
        vals = g["spearman"].dropna()
        matrix.loc[a, b] = matrix.loc[b, a] = float(vals.mean()) if len(vals) else math.nan
        used.loc[a, b] = used.loc[b, a] = len(vals)
        skipped.loc[a, b] = skipped.loc[b, a] = len(g) - len(vals)
    return AgreementResult(datasets[0], names, matrix, used, skipped, per_q)


def agreement_rows(result: AgreementResult, *, seed: int = 0) -> pd.DataFrame:
    """Long-form rows of an :class:`AgreementResult`, each mean with its 95% interval.

    One row per pair of pseudo-annotators (``pair`` "P1-P2", ...): the mean
    over questions of their Spearman's rho, with a percentile bootstrap
    interval over the questions where it is defined
    (:func:`nfeval.metrics.intervals.mean_interval`); and a ``min_pair`` row
    repeating the pair with the smallest mean (the paper's "rho > 0.8 among
    three annotators" bounds every pair).

    Columns: ``dataset, pair, ours, ci_low, ci_high, n_questions, n_skipped_undefined,
    games_per_part, min_of`` (the pair a ``min_pair`` row repeats; empty
    otherwise).
    """
    from nfeval.metrics.intervals import mean_interval

    rows = []
    per_q = result.per_question
    games = per_q[["n_games_a", "n_games_b"]].to_numpy().mean()
    for i, a in enumerate(result.annotators):
        for b in result.annotators[i + 1:]:
            vals = per_q.loc[(per_q["annotator_a"] == a) & (per_q["annotator_b"] == b),
                             "spearman"].to_numpy(dtype=float)
            ok = vals[~np.isnan(vals)]
            iv = mean_interval(ok, seed=seed, key=f"dq_f02/{result.dataset}/{a}-{b}")
            rows.append({"dataset": result.dataset, "pair": f"{a}-{b}", **iv.columns(),
                         "n_skipped_undefined": int(vals.size - ok.size),
                         "games_per_part": float(games), "min_of": ""})
    low = min(rows, key=lambda r: r["ours"] if not math.isnan(r["ours"]) else math.inf)
    rows.append({**low, "pair": "min_pair", "min_of": low["pair"]})
    return pd.DataFrame(rows, columns=["dataset", "pair", "ours", "ci_low", "ci_high",
                                       "n_questions", "n_skipped_undefined", "games_per_part", "min_of"])


# --------------------------------------------------------------------------- models (Figs. 3-7)

def answer_systems(prof: Profile, *, split: str, limit: int, seed: int, generators: str,
                   max_tokens: int, progress: bool = True, stability: bool = False):
    """The answering systems of dq_t04: ``(generator names, questions, systems)``.

    ``prof``: a :class:`nfeval_repro.profiles.Profile`; ``generators``: a notebook's
    comma-separated list (empty: the profile's generators, or with ``stability`` its
    :attr:`~nfeval_repro.profiles.Profile.stability_systems`, the stability studies' five). The questions are
    :func:`~nfeval_repro.debateqa.systems.load_questions` (drawn with
    ``seed``), the systems
    :func:`~nfeval_repro.debateqa.systems.collect_systems` (each
    generator's stored answers and, on the sample, its written answer sets), the
    generators loaded with the profile's :meth:`~nfeval_repro.profiles.Profile.load`.
    """
    names = model_list(generators, (prof.stability_systems if stability else ())
                       or prof.generators)
    items = load_questions(split, limit, seed=seed)
    systems = collect_systems(items, names, backend=prof.generator_backend, split=split,
                              decoding=Decoding(max_tokens=max_tokens, seed=seed),
                              progress=progress, load=prof.load)
    return names, items, systems


SCORED_BY = ("pd", "da")


def score_each(prof: Profile, systems, items, split: str, names: Sequence[str], metric: str, *,
               progress: bool = True) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Every answer of ``systems`` scored by each model of ``names``, one model in memory
    at a time: as P.D. backbone (``metric`` "pd") or as D.A. judge ("da").

    Returns the scores (:func:`~nfeval_repro.debateqa.systems.score_systems`'s
    long table, ``evaluator`` = the model's name) and ``{name: model info}`` for the
    signatures. Models load with the profile's device and dtype
    (:meth:`nfeval_repro.profiles.Profile.load`).
    """
    if metric not in SCORED_BY:
        raise NfevalError(f"unknown metric {metric!r}; use one of {', '.join(SCORED_BY)}.")
    role = "pd_models" if metric == "pd" else "judges"
    models, frames = {}, []
    for name in names:
        started = time.time()
        lm = prof.load(name)
        frames.append(score_systems(systems, items, split, progress=progress,
                                    **{role: {name: lm}}))
        models[name] = lm.info.as_dict()
        del lm
        if progress:
            print(f"{name}: {time.time() - started:.0f} s")
    return pd.concat(frames, ignore_index=True), models


def pd_and_da(prof: Profile, systems, items, split: str, backbone: str, judge: str, *,
              seed: int = 0, progress: bool = True) -> tuple[pd.DataFrame, list[Signature]]:
    """Every answer of ``systems`` scored by one P.D. backbone (paper variant) and one
    D.A. judge (``prob`` mode), and the two signatures (``n``: the questions).

    The scores are :func:`~nfeval_repro.debateqa.systems.score_systems`'s long
    table, ``evaluator`` = the model's name.
    """
    pd_models, judges = {backbone: prof.load(backbone)}, {judge: prof.load(judge)}
    scores = score_systems(systems, items, split, pd_models=pd_models, judges=judges,
                           progress=progress)
    return scores, metric_signatures(pd_models, judges, seed=seed, n=len(items))
