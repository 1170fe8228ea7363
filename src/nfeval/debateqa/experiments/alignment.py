"""Metric alignment with human judgement (DebateQA, EACL 2026, Section 5, Table 2 and Figure 2;
Appendix B.1), run on graded answers.

The paper collects three annotators' pairwise preferences between five model
answers per question (all 10 pairs), turns each annotator's preferences into
an Elo ranking, correlates every metric's ranking with it (Spearman's rho,
Kendall's tau; Table 2 averages the annotators' correlations) and reports the
annotators' agreement as pairwise Spearman (Figure 2, rho > 0.8). Those
preferences are not public. This module runs the same computation where real
human judgements exist: the graded answers of ANTIQUE and TREC-DL-NF (the
LINKAGE release, :func:`nfeval.data.load_linkage`).

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
* **Metric scores per answer**: P.D. (:func:`score_pd`, paper variant,
  Equation 1) with the question's top-grade answers as the partial answers;
  an answer is never among its own references (leave-one-out), and every
  answer of a question is scored against the same number ``k`` of
  references (Equation 1 sums perplexities, so unequal counts would favour
  the answers with fewer references): top-grade answers against ``k`` of the
  other top-grade answers, the rest against a seeded ``k`` of all of them.
  Direct-Score, G-Eval and Num-of-POVs (:func:`score_judge`) from the
  project's prompts ``prompts/dq_direct_score.txt``, ``dq_geval.txt``,
  ``dq_num_povs.txt`` (the paper's Table 12 text is not in our copy). The
  Acknowledge rule of :mod:`nfeval.debateqa.da` stands in for "DELPHI's
  metric" (:func:`score_acknowledge`).
* **Alignment** (:func:`alignment_rows`): per question, Spearman and Kendall
  between the Elo ratings and the metric's scores (lower P.D. is better, so
  P.D. enters negated), averaged over questions (the paper averages over
  annotators), with a 95% bootstrap interval over questions; questions where
  a coefficient is undefined are counted. :func:`alignment_differences`:
  P.D. minus each other metric on the same questions, with a paired
  interval (the paper's claim that P.D. aligns best).
* **Agreement** (:func:`pseudo_annotator_agreement`): each question's
  preferences dealt into ``n`` disjoint seeded parts ("pseudo-annotators"),
  an Elo ranking per part, pairwise Spearman between parts. This is the
  closest honest analogue of inter-annotator agreement the data allow, not
  the paper's quantity: every part comes from the same, consistent grades, so
  parts never disagree on a pair; their rankings differ only because each
  sees other pairs.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import derived_seed, sha256_text
from nfeval.metrics.correlation import (correlation, correlation_rows, paired_rows,
                                        question_correlations)
from nfeval.metrics.elo import Comparison, elo_ratings

__all__ = [
    "ALIGNMENT_METRICS",
    "HIGHER_IS_BETTER",
    "JUDGE_METRICS",
    "AgreementResult",
    "AlignmentQuestion",
    "JudgeMetric",
    "Selection",
    "agreement_rows",
    "alignment_differences",
    "alignment_frame",
    "alignment_rows",
    "alignment_table",
    "elo_ranking",
    "grade_preferences",
    "human_rankings",
    "judge_prompt",
    "judge_variant",
    "label_distributions",
    "leave_one_out_references",
    "merge_ties",
    "parse_count",
    "parse_metrics",
    "pseudo_annotator_agreement",
    "reduce_distribution",
    "reference_count",
    "score_acknowledge",
    "score_judge",
    "score_pd",
    "select_questions",
    "split_preferences",
]

ALIGNMENT_METRICS = ("pd", "direct_score", "g_eval", "num_povs", "acknowledge")
HIGHER_IS_BETTER = {"pd": False, "direct_score": True, "g_eval": True, "num_povs": True,
                    "acknowledge": True}
SCORE_COLUMNS = ["dataset", "qid", "doc_id", "grade", "metric", "score"]


def parse_metrics(text: str) -> list[str]:
    """A notebook's comma-separated metric list, checked against :data:`ALIGNMENT_METRICS`."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in ALIGNMENT_METRICS]
    if unknown or not names:
        raise NfevalError(f"unknown or no metrics {unknown or text!r}; use a comma-separated "
                          f"list of {', '.join(ALIGNMENT_METRICS)}.")
    return list(dict.fromkeys(names))


def _subseed(seed: int, *parts: object) -> int:
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


def _pool(top_answers: Sequence[GradedAnswer], answer: GradedAnswer) -> list[GradedAnswer]:
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
        if need_references and any(not _pool(top_answers, a) for a in cands):
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
                          seed=_subseed(seed, q.dataset, q.qid, "elo"), tie_points=tie_points)
        rows += [{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id, "grade": a.grade,
                  "elo": elo[a.doc_id]} for a in q.candidates]
    return pd.DataFrame(rows, columns=["dataset", "qid", "doc_id", "grade", "elo"])


# --------------------------------------------------------------------------- agreement (Fig. 2)

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
                                  _subseed(seed, q.dataset, q.qid, "split"))
        elos = [elo_ranking(part, players, rounds=rounds, tie_points=tie_points,
                            seed=_subseed(seed, q.dataset, q.qid, "elo", i))
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


# --------------------------------------------------------------------------- P.D.

def reference_count(question: AlignmentQuestion, max_references: int) -> int:
    """k: the references every candidate of the question gets (same for all of them).

    The smallest leave-one-out pool among the candidates, capped at
    ``max_references`` (0: no cap).
    """
    if max_references < 0:
        raise NfevalError(f"max_references must be >= 0, got {max_references}.")
    k = min(len(_pool(question.top_answers, a)) for a in question.candidates)
    if k < 1:
        raise NfevalError(f"{question.dataset} question {question.qid}: a candidate has no "
                          "leave-one-out reference (select with need_references=True).")
    return min(k, max_references) if max_references else k


def leave_one_out_references(question: AlignmentQuestion, answer: GradedAnswer, k: int,
                             seed: int = 0) -> tuple[GradedAnswer, ...]:
    """``k`` of the question's top-grade answers, never ``answer`` itself (nor a copy of its text).

    Chosen by a generator seeded from (seed, dataset, qid, answer id) and kept
    in the pool's order; when ``k`` is the whole pool, no choice is made.
    """
    pool = _pool(question.top_answers, answer)
    if not 1 <= k <= len(pool):
        raise NfevalError(f"{question.dataset} question {question.qid}, answer {answer.doc_id}: "
                          f"cannot take {k} reference(s) from a pool of {len(pool)}.")
    if k == len(pool):
        return tuple(pool)
    rng = random.Random(f"{seed}/{question.dataset}/{question.qid}/{answer.doc_id}/references")
    return tuple(pool[i] for i in sorted(rng.sample(range(len(pool)), k)))



def _item_id(q: AlignmentQuestion, a: GradedAnswer) -> str:
    return f"{q.dataset}/{q.qid}/{a.doc_id}"


def score_pd(model, questions: Sequence[AlignmentQuestion], *, max_references: int = 3,
             seed: int = 0, variant: str = "paper", restate: str | None = None,
             use_cache: bool = True, progress: bool = True) -> pd.DataFrame:
    """P.D. of every candidate against its leave-one-out top-grade references.

    Columns: ``dataset, qid, doc_id, grade, metric ("pd"), score`` (lower is
    better), ``n_references``, ``references`` (their ids, ``;``-joined),
    ``scored_tokens``, ``context_truncated_tokens``. Each result is cached on
    disk (:class:`nfeval.runcache.RunCache`) under the model, variant and
    restate instruction, keyed by the answer and its references' texts.
    """
    from tqdm.auto import tqdm

    from nfeval.debateqa.pd import DEFAULT_RESTATE, pd_score
    from nfeval.runcache import RunCache

    restate = DEFAULT_RESTATE if restate is None else restate
    cache = RunCache("dq-align-pd", {"model": model.info.cache_fields(), "variant": variant,
                                     "restate": restate if variant == "paper" else None}
                     ) if use_cache else None
    rows = []
    total = sum(len(q.candidates) for q in questions)
    with tqdm(total=total, desc=f"P.D. ({variant})", unit="answer", disable=not progress) as bar:
        for q in questions:
            k = reference_count(q, max_references)
            for a in q.candidates:
                refs = leave_one_out_references(q, a, k, seed)
                key = "\x1e".join([a.text] + [f"{r.doc_id}\x1f{r.text}" for r in refs])
                hit = cache.get(_item_id(q, a), key) if cache is not None else None
                if hit is None:
                    r = pd_score(model, a.text, [x.text for x in refs], variant=variant,
                                 restate=restate, id=_item_id(q, a))
                    hit = {"score": r.score, "scored_tokens": r.scored_tokens,
                           "context_truncated_tokens": r.context_truncated_tokens,
                           "perplexities": [float(p) for p in r.perplexities]}
                    if cache is not None:
                        cache.put(_item_id(q, a), key, hit)
                rows.append({"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id,
                             "grade": a.grade, "metric": "pd", "score": float(hit["score"]),
                             "n_references": len(refs),
                             "references": ";".join(r.doc_id for r in refs),
                             "scored_tokens": hit["scored_tokens"],
                             "context_truncated_tokens": hit["context_truncated_tokens"]})
                bar.update()
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- LLM judges

@dataclass(frozen=True)
class JudgeMetric:
    """A prompt-based baseline of Table 2.

    ``prompt``: file under ``prompts/``. ``labels``: the integer labels read
    at the first position of the reply. ``reduce``: how ``prob`` mode turns
    the label distribution into a score: ``"argmax"`` (the single label the
    judge would most likely write: Direct-Score's one Likert number) or
    ``"expected"`` (probability-weighted mean: G-Eval's score, Num-of-POVs'
    expected count). ``prob_only``: scored from the distribution in every
    mode (G-Eval is defined by its probability weighting).
    """

    name: str
    prompt: str
    labels: tuple[str, ...]
    reduce: str
    prob_only: bool = False

    @property
    def low(self) -> int:
        return int(self.labels[0])

    @property
    def high(self) -> int:
        return int(self.labels[-1])


_LIKERT = tuple(str(i) for i in range(1, 6))
JUDGE_METRICS = {
    "direct_score": JudgeMetric("direct_score", "dq_direct_score", _LIKERT, "argmax"),
    "g_eval": JudgeMetric("g_eval", "dq_geval", _LIKERT, "expected", prob_only=True),
    "num_povs": JudgeMetric("num_povs", "dq_num_povs", tuple(str(i) for i in range(10)),
                            "expected"),
}
JUDGE_MODES = ("prob", "generate")


def judge_variant(metric: str | JudgeMetric, mode: str) -> str:
    """The variant a signature records: ``prob-argmax``, ``prob-expected`` or ``generate``."""
    m = _judge_metric(metric)
    return f"prob-{m.reduce}" if mode == "prob" or m.prob_only else "generate"


def _judge_metric(metric: str | JudgeMetric) -> JudgeMetric:
    if isinstance(metric, JudgeMetric):
        return metric
    try:
        return JUDGE_METRICS[metric]
    except KeyError:
        raise NfevalError(f"unknown judge metric {metric!r}; use one of "
                          f"{', '.join(JUDGE_METRICS)}.") from None


def judge_prompt(metric: str | JudgeMetric, question: str, answer: str,
                 template: str | None = None) -> str:
    """The metric's prompt with ``{question}`` and ``{answer}`` filled.

    Filled with ``str.replace``, the question first and the answer last, so
    braces or slot names inside an answer are kept literally.
    """
    from nfeval.prompts import prompt_text

    m = _judge_metric(metric)
    t = prompt_text(m.prompt) if template is None else template
    if "{question}" not in t or "{answer}" not in t:
        raise NfevalError(f"the {m.name} prompt must contain the {{question}} and "
                          "{answer} slots.")
    head, _, tail = t.partition("{answer}")
    return head.replace("{question}", question) + answer + tail.replace("{question}", question)


def reduce_distribution(dist: Mapping[str, float], how: str) -> float:
    """``"expected"``: sum of int(label) * p; ``"argmax"``: the most probable label
    (the lowest one on an exact tie)."""
    if not dist:
        return math.nan
    if how == "expected":
        return float(sum(int(lab) * p for lab, p in dist.items()))
    if how == "argmax":
        best = max(dist.values())
        return float(min(int(lab) for lab, p in dist.items() if p == best))
    raise NfevalError(f"unknown reduction {how!r}; use 'expected' or 'argmax'.")


_INT = re.compile(r"\d+")


def parse_count(text: str | None, low: int, high: int) -> float:
    """The first integer of ``text`` if it lies in ``low..high``, else NaN (unparsed)."""
    m = _INT.search(text or "")
    if not m:
        return math.nan
    v = int(m.group())
    return float(v) if low <= v <= high else math.nan


def label_distributions(judge, prompts: Sequence[str], labels: Sequence[str]
                        ) -> list[tuple[dict[str, float], float]]:
    """(distribution over ``labels``, raw label mass) after each full prompt, in order.

    The raw mass is the probability the judge gives to the labels at all
    (before renormalising): a low value says the judge does not answer with
    one. :meth:`~nfeval.models.base.LanguageModel.batch_label_logprobs`: on
    the transformers backend the token ids the prompts share run through the
    model once, which gives the per-prompt values exactly; other backends
    score each prompt on its own.
    """
    from nfeval.models.base import normalize

    logps = judge.batch_label_logprobs(list(prompts), list(labels))
    return [(normalize(lp), float(sum(math.exp(v) for v in lp.values()))) for lp in logps]


def score_judge(judge, questions: Sequence[AlignmentQuestion], metric: str | JudgeMetric, *,
                mode: str = "prob", max_tokens: int = 8, use_cache: bool = True,
                progress: bool = True) -> pd.DataFrame:
    """A prompt-based baseline's score for every candidate (higher is better).

    ``prob`` mode: the label distribution at the first position of the
    judge's reply (the prompt as the user turn of its chat template), reduced
    as the metric says (:class:`JudgeMetric`); the prompts of one question are
    scored together on their shared prefix. ``generate`` mode: greedy reply of
    up to ``max_tokens`` tokens, first integer in the label range
    (:func:`parse_count`), NaN when there is none; G-Eval stays ``prob``.
    Columns: ``dataset, qid, doc_id, grade, metric, score, label_mass, raw``
    (``label_mass``: prob mode's raw mass on the labels; ``raw``: the reply in
    generate mode, else the distribution as JSON). Cached on disk per judge,
    metric, mode and prompt text.
    """
    from tqdm.auto import tqdm

    from nfeval.prompts import prompt_text
    from nfeval.runcache import RunCache

    m = _judge_metric(metric)
    if mode not in JUDGE_MODES:
        raise NfevalError(f"unknown judge mode {mode!r}; use one of {', '.join(JUDGE_MODES)}.")
    mode = "prob" if m.prob_only else mode
    template = prompt_text(m.prompt)
    cache = RunCache("dq-align-judge", {"model": judge.info.cache_fields(), "metric": m.name,
                                        "labels": list(m.labels), "mode": mode,
                                        "max_tokens": max_tokens if mode == "generate" else None,
                                        "prompt": sha256_text(template)}) if use_cache else None
    rows = []
    total = sum(len(q.candidates) for q in questions)
    with tqdm(total=total, desc=f"{m.name} ({mode})", unit="answer", disable=not progress) as bar:
        for q in questions:
            chats = {a.doc_id: judge.chat_prompt(judge_prompt(m, q.question, a.text, template))
                     for a in q.candidates}
            results = {}
            todo = []
            for a in q.candidates:
                hit = cache.get(_item_id(q, a), chats[a.doc_id]) if cache is not None else None
                if hit is not None:
                    results[a.doc_id] = hit
                    bar.update()
                else:
                    todo.append(a)
            if todo and mode == "prob":
                dists = label_distributions(judge, [chats[a.doc_id] for a in todo], m.labels)
                fresh = [{"dist": d, "label_mass": mass} for d, mass in dists]
            else:
                fresh = [{"raw": judge.generate(chats[a.doc_id], temperature=0.0,
                                                max_tokens=max_tokens).text} for a in todo]
            for a, res in zip(todo, fresh):
                if cache is not None:
                    cache.put(_item_id(q, a), chats[a.doc_id], res)
                results[a.doc_id] = res
                bar.update()
            for a in q.candidates:
                res = results[a.doc_id]
                if "dist" in res:
                    score = reduce_distribution(res["dist"], m.reduce)
                    raw, mass = json.dumps(res["dist"], sort_keys=True), res["label_mass"]
                else:
                    score, raw, mass = parse_count(res["raw"], m.low, m.high), res["raw"], math.nan
                rows.append({"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id,
                             "grade": a.grade, "metric": m.name, "score": score,
                             "label_mass": mass, "raw": raw})
    return pd.DataFrame(rows)


def score_acknowledge(questions: Sequence[AlignmentQuestion]) -> pd.DataFrame:
    """The Acknowledge phrase rule (:func:`nfeval.debateqa.da.acknowledge_baseline`), 1/0.

    The project's stand-in for "DELPHI's metric" of Table 2 (a phrase rule,
    not DELPHI's code); model-free.
    """
    from nfeval.debateqa.da import acknowledge_baseline

    rows = [{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id, "grade": a.grade,
             "metric": "acknowledge", "score": acknowledge_baseline(a.text).score}
            for q in questions for a in q.candidates]
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


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
    sign = merged["metric"].map(lambda m: 1.0 if HIGHER_IS_BETTER.get(m, True) else -1.0)
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
    that P.D. aligns best).

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
    pairs = [(reference, m) for m in metrics if m != reference]
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
