"""Metric alignment with human judgement (DebateQA, EACL 2026, Section 5, Table 2 and Figure 2;
Appendix B.1), run on graded answers: the questions, the human ranking and Table 2's rows.

The paper collects three annotators' pairwise preferences between five model
answers per question (all 10 pairs), turns each annotator's preferences into
an Elo ranking, correlates every metric's ranking with it (Spearman's rho,
Kendall's tau; Table 2 averages the annotators' correlations) and reports the
annotators' agreement as pairwise Spearman (Figure 2, rho > 0.8). Those
preferences are not public. This module runs the same computation where real
human judgements exist: the graded answers of ANTIQUE and TREC-DL-NF (the
LINKAGE release, :func:`nfeval.data.load_linkage`).

* **Questions** (:func:`select_questions`): the answers to rank per question,
  drawn uniformly at random, and the question's top-grade answers (the pool
  of P.D. references, :func:`reference_pool`).
* **Preferences from grades** (:func:`grade_preferences`): within one
  question, every pair of answers once; the higher grade wins, equal grades
  tie.
* **Human ranking** (:func:`elo_ranking`): Elo ratings of those games
  (:func:`nfeval.metrics.elo.elo_ratings`), the game order shuffled (seeded)
  and replayed ``rounds`` times, averaged. Two project choices, stated:
  answers whose averaged ratings lie within ``tie_points`` of each other are
  one tie group (each gets the group's mean), because equal grades are equal
  in the human data and only the game order's residue separates them; an
  answer with no game keeps the initial rating.
* **Metric scores per answer** (P.D. with leave-one-out top-grade references,
  Direct-Score, G-Eval, Num-of-POVs, the Acknowledge rule):
  :mod:`nfeval_repro.debateqa.alignment_scores`.
* **Alignment** (:func:`alignment_rows`): per question, Spearman and Kendall
  between the Elo ratings and the metric's scores (lower P.D. is better, so
  P.D. enters negated), averaged over questions (the paper averages over
  annotators), with a 95% bootstrap interval over questions; questions where
  a coefficient is undefined are counted. :func:`alignment_differences`:
  P.D. minus each other metric on the same questions, with a paired
  interval (the paper's claim that P.D. aligns best).
* **Agreement** (Figure 2's analogue, pseudo-annotators):
  :mod:`nfeval_repro.debateqa.agreement`.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import derived_seed
from nfeval.metrics.correlation import correlation_rows, paired_rows, question_correlations
from nfeval.metrics.elo import Comparison, elo_ratings

__all__ = [
    "ALIGNMENT_METRICS",
    "HIGHER_IS_BETTER",
    "SCORE_COLUMNS",
    "AlignmentQuestion",
    "Selection",
    "alignment_differences",
    "alignment_frame",
    "alignment_rows",
    "alignment_table",
    "elo_ranking",
    "higher_is_better",
    "is_pd",
    "pd_metric",
    "grade_preferences",
    "human_rankings",
    "merge_ties",
    "parse_metrics",
    "reference_pool",
    "select_questions",
    "subseed",
]

ALIGNMENT_METRICS = ("pd", "direct_score", "g_eval", "num_povs", "acknowledge")
HIGHER_IS_BETTER = {"pd": False, "direct_score": True, "g_eval": True, "num_povs": True,
                    "acknowledge": True}
SCORE_COLUMNS = ["dataset", "qid", "doc_id", "grade", "metric", "score"]


def pd_metric(backbone: str) -> str:
    """The metric name of P.D. computed with ``backbone``: ``pd:<backbone>`` (a table that
    sets two backbones side by side tells their rows apart by it)."""
    return f"pd:{backbone}"


def is_pd(metric: str) -> bool:
    """Whether ``metric`` is P.D. (``pd``, or ``pd:<backbone>``)."""
    return metric == "pd" or metric.startswith("pd:")


def higher_is_better(metric: str) -> bool:
    """Whether a larger score of ``metric`` is a better answer (P.D. of any backbone: lower
    is better; :data:`HIGHER_IS_BETTER` for the others, True for unknown names)."""
    return False if is_pd(metric) else HIGHER_IS_BETTER.get(metric, True)


def parse_metrics(text: str) -> list[str]:
    """A notebook's comma-separated metric list, checked against :data:`ALIGNMENT_METRICS`."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in ALIGNMENT_METRICS]
    if unknown or not names:
        raise NfevalError(f"unknown or no metrics {unknown or text!r}; use a comma-separated "
                          f"list of {', '.join(ALIGNMENT_METRICS)}.")
    return list(dict.fromkeys(names))


def subseed(seed: int, *parts: object) -> int:
    """A 32-bit seed derived from ``seed`` and a path of names (stable across runs)."""
    return derived_seed("/".join(map(str, (seed, *parts))))


# --------------------------------------------------------------------------- questions

@dataclass(frozen=True)
class AlignmentQuestion:
    """One question: the answers to rank and the pool of P.D. references.

    ``candidates``: the ranked answers (at most ``max_answers``, drawn
    uniformly at random per question). ``top_answers``: every answer of the question's best grade,
    candidates included (the partial answers of P.D.).
    """

    dataset: str
    qid: str
    question: str
    candidates: tuple[GradedAnswer, ...]
    top_answers: tuple[GradedAnswer, ...]

    @property
    def top_grade(self) -> int:
        return self.top_answers[0].grade

    @property
    def grades(self) -> dict[str, int]:
        """``doc_id -> grade`` of the candidates, in order."""
        return {a.doc_id: a.grade for a in self.candidates}


@dataclass(frozen=True)
class Selection:
    """The questions kept, and why the others before the last kept one were passed over."""

    dataset: str
    questions: list[AlignmentQuestion]
    skipped: dict[str, str] = field(default_factory=dict)  # qid -> reason
    n_total: int = 0


def reference_pool(top_answers: Sequence[GradedAnswer], answer: GradedAnswer
                   ) -> list[GradedAnswer]:
    """Top-grade answers that may serve as ``answer``'s references: never the answer
    itself (same id), nor another copy of its text."""
    text = answer.text.strip()
    return [r for r in top_answers if r.doc_id != answer.doc_id and r.text.strip() != text]


def select_questions(questions: Sequence[GradedQuestion], dataset: str, *, limit: int = 0,
                     max_answers: int = 0, seed: int = 0,
                     need_references: bool = True) -> Selection:
    """The first ``limit`` usable questions (0: all), candidates capped at ``max_answers``.

    Candidates: :func:`nfeval.data.draws.sample_candidates` (uniform,
    seeded by ``seed`` and the question, never by grade). A question is passed
    over (reason recorded) when its drawn candidates have a single grade (the
    human ranking is then one tie, no coefficient exists) or, with
    ``need_references``, when some candidate would have no leave-one-out
    reference (fewer than two distinct top-grade answers).
    """
    from nfeval.data.draws import sample_candidates

    if limit < 0 or max_answers < 0:
        raise NfevalError(f"limit and max_answers must be >= 0, got {limit} and {max_answers}.")
    if max_answers == 1:
        raise NfevalError("max_answers must be 0 (all) or at least 2: a ranking needs two answers.")
    kept: list[AlignmentQuestion] = []
    skipped: dict[str, str] = {}
    for q in questions:
        if limit and len(kept) >= limit:
            break
        answers = [a for a in q.answers if a.text.strip()]
        if not answers:
            skipped[q.qid] = "no answer with text"
            continue
        top = max(a.grade for a in answers)
        top_answers = tuple(a for a in answers if a.grade == top)
        cands = sample_candidates(answers, max_answers, seed, q.qid)
        if len({a.grade for a in cands}) < 2:
            skipped[q.qid] = "candidates of a single grade (no human ranking)"
            continue
        if need_references and any(not reference_pool(top_answers, a) for a in cands):
            skipped[q.qid] = ("fewer than two distinct top-grade answers "
                              "(no leave-one-out reference)")
            continue
        kept.append(AlignmentQuestion(dataset, q.qid, q.question, tuple(cands), top_answers))
    return Selection(dataset, kept, skipped, len(questions))


# --------------------------------------------------------------------------- human ranking

def grade_preferences(grades: Mapping[Hashable, float]) -> list[Comparison]:
    """Every pair of answers once, in the mapping's order: higher grade wins, equal ties.

    ``{"a": 3, "b": 1, "c": 3}`` gives ``(a, b, 1)``, ``(a, c, 0.5)``, ``(b, c, 0)``.
    """
    keys = list(grades)
    out = []
    for a, b in itertools.combinations(keys, 2):
        ga, gb = grades[a], grades[b]
        out.append(Comparison(a, b, 1.0 if ga > gb else 0.0 if ga < gb else 0.5))
    return out


def merge_ties(ratings: Mapping[Hashable, float], tie_points: float) -> dict:
    """Ratings closer than ``tie_points`` (chained, after sorting) share their group's mean.

    ``tie_points`` 0 keeps the ratings as they are.
    """
    if tie_points < 0:
        raise NfevalError(f"tie_points must be >= 0, got {tie_points}.")
    if tie_points == 0 or len(ratings) < 2:
        return dict(ratings)
    order = sorted(ratings, key=lambda p: ratings[p])
    groups: list[list[Hashable]] = [[order[0]]]
    for prev, p in itertools.pairwise(order):
        if ratings[p] - ratings[prev] < tie_points:
            groups[-1].append(p)
        else:
            groups.append([p])
    out = {}
    for g in groups:
        mean = float(np.mean([ratings[p] for p in g]))
        out.update({p: mean for p in g})
    return {p: out[p] for p in ratings}


def elo_ranking(comparisons: Sequence[Comparison], players: Sequence[Hashable], *,
                rounds: int = 200, seed: int = 0, tie_points: float = 1.0,
                initial: float = 1000.0, k: float = 32.0) -> dict:
    """Elo rating of every player in ``players`` (module docstring: order, ties, no games).

    The games are shuffled with ``seed`` before the first round, so no round
    follows the input order (the release files list answers best grade
    first); :func:`nfeval.metrics.elo.elo_ratings` then replays them in
    ``rounds`` seeded orders and averages.
    """
    games = list(comparisons)
    unknown = {p for g in games for p in (g.a, g.b)} - set(players)
    if unknown:
        names = sorted(map(str, unknown))[:5]
        raise NfevalError(f"comparisons name players not in the list: {names}")
    ratings = {p: float(initial) for p in players}
    if games:
        rng = np.random.default_rng(seed)
        games = [games[i] for i in rng.permutation(len(games))]
        ratings.update(elo_ratings(games, k=k, initial=initial, rounds=rounds, seed=seed))
    return merge_ties(ratings, tie_points)


def human_rankings(questions: Sequence[AlignmentQuestion], *, rounds: int = 200, seed: int = 0,
                   tie_points: float = 1.0) -> pd.DataFrame:
    """Elo rating of every candidate from its question's grade preferences.

    Columns ``dataset, qid, doc_id, grade, elo``.
    """
    rows = []
    for q in questions:
        elo = elo_ranking(grade_preferences(q.grades), list(q.grades), rounds=rounds,
                          seed=subseed(seed, q.dataset, q.qid, "elo"), tie_points=tie_points)
        rows += [{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id, "grade": a.grade,
                  "elo": elo[a.doc_id]} for a in q.candidates]
    return pd.DataFrame(rows, columns=["dataset", "qid", "doc_id", "grade", "elo"])


# --------------------------------------------------------------------------- Table 2

def alignment_frame(scores: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    """The long per-answer frame of the correlation protocol: the Elo rating as ``grade``.

    ``scores``: rows ``dataset, qid, doc_id, metric, score`` (as the
    ``score_*`` functions give); ``human``: :func:`human_rankings`. Returns
    ``dataset, metric, qid, doc_id, grade`` (the answer's Elo rating, the
    human side), ``score`` (the metric's score, negated where lower is
    better, :data:`HIGHER_IS_BETTER`, so a metric that orders answers as the
    humans do correlates +1) and ``raw_score`` (as the metric gave it), the
    frame :func:`nfeval.metrics.correlation.correlation_rows` and
    :func:`~nfeval.metrics.correlation.paired_rows` read.
    """
    need = {"dataset", "qid", "doc_id", "metric", "score"}
    if need - set(scores.columns):
        raise NfevalError(f"scores lack columns {sorted(need - set(scores.columns))}.")
    keys = ["dataset", "qid", "doc_id"]
    merged = scores[["dataset", "metric", "qid", "doc_id", "score"]].merge(
        human[keys + ["elo"]], on=keys, how="left", validate="many_to_one")
    if merged["elo"].isna().any():
        bad = merged.loc[merged["elo"].isna(), keys].head(3).to_dict("records")
        raise NfevalError(f"scores for answers without a human ranking, e.g. {bad}.")
    sign = merged["metric"].map(lambda m: 1.0 if higher_is_better(m) else -1.0)
    raw = merged["score"].astype(float)
    return pd.DataFrame({"dataset": merged["dataset"], "metric": merged["metric"],
                         "qid": merged["qid"], "doc_id": merged["doc_id"],
                         "grade": merged["elo"].astype(float), "score": sign * raw,
                         "raw_score": raw})


def alignment_rows(scores: pd.DataFrame, human: pd.DataFrame, *, seed: int = 0,
                   coefficients: Sequence[str] = ("spearman", "kendall")) -> pd.DataFrame:
    """Table 2's rows with 95% intervals: per dataset, metric and coefficient, the mean
    over questions of the per-question correlation with the Elo ratings.

    :func:`nfeval.metrics.correlation.correlation_rows` on :func:`alignment_frame`:
    ``dataset, metric, coefficient, ours, ci_low, ci_high, n_questions``
    (questions with a defined coefficient; the interval is a percentile
    bootstrap over them), ``n_skipped_undefined`` (the metric gave a
    question's answers one score), ``n_candidates`` (answers scored), ``sd``,
    and ``n_unscored`` (answers with a NaN score, left out of their question).
    """
    frame = alignment_frame(scores, human)
    rows = correlation_rows(frame, by=["dataset", "metric"], seed=seed,
                            coefficients=coefficients)
    unscored = (frame.assign(nan=frame["score"].isna())
                .groupby(["dataset", "metric"], sort=False)["nan"].sum()
                .rename("n_unscored").reset_index())
    return rows.merge(unscored, on=["dataset", "metric"], how="left")


def alignment_differences(scores: pd.DataFrame, human: pd.DataFrame, *, reference: str = "pd",
                          seed: int = 0, coefficients: Sequence[str] = ("spearman", "kendall")
                          ) -> pd.DataFrame:
    """``reference`` minus every other metric, paired over questions (the paper's claim
    that P.D. aligns best); a P.D. reference is not set against P.D. of another backbone.

    :func:`nfeval.metrics.correlation.paired_rows` on :func:`alignment_frame`,
    per dataset: ``dataset, metric`` ("pd - g_eval"), ``coefficient, ours,
    ci_low, ci_high, n_questions`` (questions where both coefficients are
    defined), ``a_mean, b_mean`` (the two means on those questions). No rows
    when ``reference`` was not scored.
    """
    frame = alignment_frame(scores, human)
    metrics = list(dict.fromkeys(frame["metric"]))
    if reference not in metrics:
        return pd.DataFrame(columns=["dataset", "metric", "coefficient", "ours", "ci_low",
                                     "ci_high", "n_questions", "a_mean", "b_mean"])
    pairs = [(reference, m) for m in metrics
             if m != reference and not (is_pd(reference) and is_pd(m))]
    return paired_rows(frame, pairs, by=["dataset"], method="metric", seed=seed,
                       coefficients=coefficients)


def alignment_table(scores: pd.DataFrame, human: pd.DataFrame,
                    coefficients: Sequence[str] = ("spearman", "kendall")) -> pd.DataFrame:
    """Per-question correlation of each metric with the Elo ratings, averaged over questions
    (no intervals; :func:`alignment_rows` gives them).

    ``scores``: rows ``dataset, qid, doc_id, metric, score`` (as the
    ``score_*`` functions give); ``human``: :func:`human_rankings`. Metrics
    where lower is better (:data:`HIGHER_IS_BETTER`) are negated first, so a
    metric that orders answers as the humans do gets +1. Rows: ``dataset,
    metric, coefficient, ours`` (mean over questions), ``std``,
    ``n_questions`` (questions with a defined coefficient), ``n_skipped_undefined``
    (undefined: the metric gave a question's candidates one score),
    ``n_unscored`` (answers with a NaN score, left out of their question).
    """
    frame = alignment_frame(scores, human)
    rows = []
    for (ds, metric), g in frame.groupby(["dataset", "metric"], sort=False):
        per_q = list(g.groupby("qid", sort=False))
        elo = {q: gg["grade"].tolist() for q, gg in per_q}
        sc = {q: gg["score"].tolist() for q, gg in per_q}
        for coef, s in question_correlations(elo, sc, coefficients).items():
            rows.append({"dataset": ds, "metric": metric, "coefficient": coef, "ours": s.mean,
                         "std": s.std, "n_questions": s.n_used, "n_skipped_undefined": s.n_skipped,
                         "n_unscored": s.n_dropped_items})
    return pd.DataFrame(rows)
