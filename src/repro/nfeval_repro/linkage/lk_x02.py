"""lk_x02, beyond the paper: why the pairwise judge sits at chance (its position bias).

LINKAGE's pairwise baseline puts the candidate and a reference in the two
answer slots of one prompt, in a seeded random order (the paper's protocol,
lk_t02), and reads the judge's probabilities of ``[[A]]`` (first answer
better), ``[[B]]`` (second) and ``[[C]]`` (tie). A judge that prefers a slot
whatever it holds turns that coin into the score. Three diagnostics, on
lk_t02's judged items and the same judge (no new item for the first):

* **position preference** -- on every pair lk_t02 judged: the share of pairs
  whose first answer gets the higher probability (P(A) > P(B)), and the mean
  of P(A) - P(B). A judge without a position preference, shown each pair in a
  random order, prefers the first answer in half of them (line 0.5).
* **swap consistency** -- on the first ``swap_limit`` judged questions per
  dataset, every pair judged in both orders (candidate first: the release
  scripts' fixed positions; candidate second): the share of pairs where the
  judge prefers the same answer in both orders. Always the same slot gives 0,
  a coin 0.5, a judge of content alone 1.
* **fixed positions** -- on the same questions, the pairwise score's
  per-question Kendall correlation with the human grades under each protocol
  (random as in lk_t02, candidate always first as in the release, candidate
  always second, and both orders averaged), with paired differences.

Every interval resamples questions (a question's pairs together).
"""

from __future__ import annotations

from dataclasses import dataclass

import math
import numpy as np
import pandas as pd

from nfeval.data import load_linkage
from nfeval_repro.linkage.same_items import judged_items
from nfeval.linkage.judges import JudgeConfig, judge_questions
from nfeval.metrics.correlation import per_question
from nfeval.metrics.intervals import cluster_mean_interval, mean_interval, paired_difference
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "lk_x02"
DATASETS = ("antique", "trec-dl-nf")
#: protocol -> JudgeConfig.positions (``both`` averages the two fixed orders)
PROTOCOLS = {"random": "random", "candidate first": "release",
             "candidate second": "reference-first"}

NOTES = """\
lk_x02: why LINKAGE's pairwise baseline sits at chance with the 1.5B judge (a diagnostic
beyond the paper). Rows: position preference on every pair lk_t02 judged (share of pairs
whose first answer gets the higher probability; line 0.5), swap consistency on the pairs of
the first swap_limit questions judged in both orders (share preferring the same answer both
times; a coin gives 0.5), and the pairwise score's Kendall correlation with the human grades
under each position protocol on those questions, with paired differences. Intervals: 95%
percentile bootstrap over questions (10,000 resamples; a question's pairs resampled
together).
"""


def pair_frame(results, splits, *, dataset: str, protocol: str) -> pd.DataFrame:
    """One row per judged pair: who sat first, the label probabilities, the preferences."""
    by_qid = {s.qid: s for s in splits}
    rows = []
    for r in results:
        s = by_qid[r.qid]
        for j in r.judgments:
            c, ref = s.candidates[j.candidate], s.references[j.reference]
            p_a, p_b = j.dist["A"], j.dist["B"]
            p_cand, p_ref = (p_a, p_b) if j.candidate_first else (p_b, p_a)
            rows.append({"dataset": dataset, "protocol": protocol, "qid": r.qid,
                         "candidate": c.doc_id, "reference": ref.doc_id,
                         "candidate_grade": c.grade, "reference_grade": ref.grade,
                         "candidate_first": bool(j.candidate_first), "p_first": p_a,
                         "p_second": p_b, "p_tie": j.dist.get("C", math.nan),
                         "p_candidate": p_cand, "p_reference": p_ref,
                         "value": j.value})
    return pd.DataFrame(rows)


def _score_frame(results, splits, *, dataset: str, protocol: str) -> pd.DataFrame:
    by_qid = {s.qid: s for s in splits}
    return pd.DataFrame([
        {"dataset": dataset, "method": protocol, "qid": r.qid, "doc_id": c.doc_id,
         "grade": float(c.grade), "score": score}
        for r in results for c, score in zip(by_qid[r.qid].candidates, r.scores)])


def _groups(frame: pd.DataFrame, values: pd.Series) -> dict[str, list[float]]:
    return {q: v.tolist() for q, v in values.groupby(frame["qid"], sort=False)}


def _row(dataset: str, kind: str, statistic: str, iv, *, line: float | None, n_pairs: int,
         protocol: str = "") -> dict:
    return {"kind": kind, "dataset": dataset, "statistic": statistic, "protocol": protocol,
            "ours": iv.estimate, "ci_low": iv.low, "ci_high": iv.high,
            "n_questions": iv.n, "n_pairs": n_pairs, "line": line}


def summary_rows(pairs: pd.DataFrame, scores: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """The table (module docstring) from the pair and score frames of every dataset."""
    rows = []
    for ds in DATASETS:
        p = pairs[(pairs["dataset"] == ds) & (pairs["protocol"] == "random")]
        if len(p):
            first = (p["p_first"] > p["p_second"]).astype(float)
            rows.append(_row(ds, "position", "prefers the first answer (share of pairs)",
                             cluster_mean_interval(_groups(p, first), seed=seed,
                                                   key=f"{ID}/{ds}/first"),
                             line=0.5, n_pairs=len(p), protocol="random"))
            rows.append(_row(ds, "position", "mean P(first) - P(second)",
                             cluster_mean_interval(_groups(p, p["p_first"] - p["p_second"]),
                                                   seed=seed, key=f"{ID}/{ds}/gap"),
                             line=0.0, n_pairs=len(p), protocol="random"))
        a = pairs[(pairs["dataset"] == ds) & (pairs["protocol"] == "candidate first")]
        b = pairs[(pairs["dataset"] == ds) & (pairs["protocol"] == "candidate second")]
        if len(a) and len(b):
            key = ["qid", "candidate", "reference"]
            both = a.merge(b, on=key, suffixes=("_a", "_b"))
            pref_a = both["p_candidate_a"] > both["p_reference_a"]
            pref_b = both["p_candidate_b"] > both["p_reference_b"]
            same = (pref_a == pref_b).astype(float)
            rows.append(_row(ds, "swap", "same answer preferred in both orders (share of pairs)",
                             cluster_mean_interval(_groups(both, same), seed=seed,
                                                   key=f"{ID}/{ds}/same"),
                             line=0.5, n_pairs=len(both), protocol="both orders"))
            first_both = ((both["p_first_a"] > both["p_second_a"])
                          & (both["p_first_b"] > both["p_second_b"])).astype(float)
            rows.append(_row(ds, "swap", "first answer preferred in both orders (share of pairs)",
                             cluster_mean_interval(_groups(both, first_both), seed=seed,
                                                   key=f"{ID}/{ds}/firstboth"),
                             line=0.0, n_pairs=len(both), protocol="both orders"))
        s = scores[scores["dataset"] == ds]
        if s.empty:
            continue
        pq = per_question(s, by=["method"], coefficients=["kendall"])
        wide = pq.pivot(index="qid", columns="method", values="value")
        n_pairs = len(a) if len(a) else 0
        for proto in ("random", "candidate first", "candidate second", "both orders averaged"):
            if proto not in wide:
                continue
            rows.append(_row(ds, "kendall", "pairwise kendall with the human grades",
                             mean_interval(wide[proto].dropna().tolist(), seed=seed,
                                           key=f"{ID}/{ds}/{proto}"),
                             line=0.0, n_pairs=n_pairs, protocol=proto))
        for proto in ("candidate first", "both orders averaged"):
            if proto in wide and "random" in wide:
                w = wide[[proto, "random"]].dropna()
                iv = paired_difference(dict(w[proto]), dict(w["random"]), seed=seed,
                                       key=f"{ID}/{ds}/{proto}-random")
                rows.append(_row(ds, "kendall", "pairwise kendall with the human grades",
                                 iv, line=0.0, n_pairs=n_pairs, protocol=f"{proto} - random"))
    return pd.DataFrame(rows)


def _averaged(first, second, splits) -> list:
    """Per question, each candidate's pairwise score with both orders averaged (the
    weighted share of wins, each pair's outcome the mean of its two orders)."""
    out = []
    for ra, rb in zip(first, second):
        assert ra.qid == rb.qid
        n = len(ra.scores)
        num, den = np.zeros(n), np.zeros(n)
        for ja, jb in zip(ra.judgments, rb.judgments):
            assert (ja.candidate, ja.reference) == (jb.candidate, jb.reference)
            num[ja.candidate] += ja.weight * (ja.value + jb.value) / 2
            den[ja.candidate] += ja.weight
        out.append(type(ra)(qid=ra.qid, config=ra.config, scores=list(num / den),
                            judgments=[]))
    return out


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x02_pairwise_position_bias.ipynb`` is written from them."""

    #: run profile (embedded: the 1.5B judge of lk_t02)
    profile: str = "embedded"
    #: lk_t02's seed: its questions, candidates, reference draw and random positions; the bootstrap
    seed: int = 0
    #: lk_t02's judged questions per dataset (the size of its 8-candidate draw)
    limit: int = 120
    #: candidates per question; -1: 8 on the embedded profile (the 8-candidate draw of lk_t02's
    #: dtype check), all on paper; 0: all
    max_candidates: int = -1
    #: questions per dataset judged in both orders (new items), 0: none
    swap_limit: int = 6
    #: the judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The diagnostics on lk_t02's judged items (its ``limit`` and ``max_candidates``), with
    both orders judged on the first ``swap_limit`` questions per dataset."""
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    model = prof.load(judge_name)
    pairs, scores, counts = [], [], {}
    for ds in DATASETS:
        questions = load_linkage(ds)
        items = judged_items(questions, ds, seed=config.seed, limit=config.limit, max_candidates=k)
        counts[ds] = {"questions": len(items.judged), "swap_questions": 0}
        cfg = JudgeConfig(method="pairwise", mode="prob", seed=config.seed)
        res = judge_questions(model, questions, items.judged, cfg,
                              progress=progress and f"{ds}: pairwise, random positions")
        pairs.append(pair_frame(res, items.judged, dataset=ds, protocol="random"))
        subset = items.judged[:config.swap_limit] if config.swap_limit else []
        counts[ds]["swap_questions"] = len(subset)
        if not subset:
            continue
        sub_q = {s.qid for s in subset}
        scores.append(_score_frame([r for r in res if r.qid in sub_q], subset, dataset=ds,
                                   protocol="random"))
        fixed = {}
        for proto in ("candidate first", "candidate second"):
            fixed[proto] = judge_questions(
                model, questions, subset,
                JudgeConfig(method="pairwise", mode="prob", seed=config.seed,
                            positions=PROTOCOLS[proto]),
                progress=progress and f"{ds}: pairwise, {proto}")
            pairs.append(pair_frame(fixed[proto], subset, dataset=ds, protocol=proto))
            scores.append(_score_frame(fixed[proto], subset, dataset=ds, protocol=proto))
        scores.append(_score_frame(_averaged(fixed["candidate first"],
                                             fixed["candidate second"], subset),
                                   subset, dataset=ds, protocol="both orders averaged"))
    pair_df = pd.concat(pairs, ignore_index=True)
    score_df = pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(
        columns=["dataset", "method", "qid", "doc_id", "grade", "score"])
    table = summary_rows(pair_df, score_df, seed=config.seed)
    info = model.info.as_dict()
    return Experiment(id=ID, table=table, id_columns=["kind", "dataset", "statistic", "protocol"],
                      interval="questions",
                      signatures=[Signature(metric="pairwise-position-bias", variant="prob",
                                            model=info, dtype=info.get("dtype"),
                                            seed=config.seed, n=len(pair_df),
                                            extra={"limit": config.limit, "max_candidates": k,
                                                   "swap_limit": config.swap_limit,
                                                   "source": "lk_t02 items"})],
                      parameters=dict(judge=judge_name, limit=config.limit, max_candidates=k,
                                      swap_limit=config.swap_limit), notes=NOTES,
                      frames={"pairs": pair_df, "scores": score_df}, extra={"counts": counts})
