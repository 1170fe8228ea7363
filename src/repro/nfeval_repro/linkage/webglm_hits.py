"""LINKAGE Table 5 (WebGLM): Acc(best) and Acc(best+worst), their intervals, the lexical gap.

The experiment :mod:`nfeval_repro.linkage.lk_t05` calls these
functions. Each WebGLM question has three candidate answers graded 3/2/1 by
a person (94 of the released file's 100 questions have three distinct
grades; five have 3,2,2 and one 3,3,2) and four generated references
``ground3`` (best) .. ``ground0``
(:func:`nfeval_repro.linkage.evaluation.webglm_split`). Every row of
the table is computed from one long per-candidate frame
(:data:`nfeval_repro.linkage.same_items.FRAME_COLUMNS`, ``dataset`` =
``webglm``; its items and scores come from
:mod:`nfeval_repro.linkage.webglm_scores`), by :func:`table_rows`:

* per question, :func:`nfeval_repro.linkage.evaluation.best_worst_hits` says
  whether the top-scored answer has the question's highest grade (Acc(best))
  and, in addition, the bottom-scored one its lowest (Acc(best+worst));
  :func:`hit_frame` collects them per method;
* :func:`accuracy_rows` turns them into the table's rows, each with a 95%
  Wilson interval over questions (a hit is 0 or 1; with ``ties="expected"``
  a tied question contributes a fraction, and the interval is then a
  percentile bootstrap over questions);
* :func:`difference_rows` compares LINKAGE with every baseline on the same
  questions: the mean of the per-question hit differences with a paired
  bootstrap interval (:func:`nfeval.metrics.intervals.paired_difference`);
* :func:`paper_columns` puts the paper's figure beside our rows.

Diagnosis of the lexical rows (``rougeL``, ``bleu``), which sit well below
the paper's (section 5, Table 5; the paper labelled 50 questions, the file
holds 100, and the release has no WebGLM baseline script):
:func:`lexical_variants` scores every answer against each single reference
``ground0..ground3`` and against their mean and maximum, with both ROUGE
implementations (``rouge-score`` and the release's ``rouge`` package,
:func:`nfeval.linkage.lexical.rouge_release`) and several NLTK BLEU
smoothings (:func:`bleu_score`), beside answer length (a row beyond the
paper); :func:`question_subsets` names the natural 50-question subsets;
:func:`diagnostic_table` gives each variant's accuracies on each subset and,
for a uniformly random 50-question subset of the 100, the exact
(hypergeometric) range of the accuracy, the most any 50-subset can reach and
the chance of reaching the paper's value (:func:`subset_reach`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedQuestion
from nfeval_repro.linkage.evaluation import TIE_RULES, best_worst_hits
from nfeval.metrics.intervals import mean_interval, paired_difference, proportion_interval

__all__ = [
    "AUTOMATIC_ROWS",
    "BLEU_SMOOTHING",
    "DATASET",
    "GROUNDS",
    "DEFAULT_JUDGE_ROWS",
    "JUDGE_ROWS",
    "METRICS",
    "PAPER_ALIASES",
    "ROUGE_IMPLEMENTATIONS",
    "accuracy_rows",
    "bleu_score",
    "chance_hits",
    "comparisons",
    "diagnostic_table",
    "difference_rows",
    "hit_frame",
    "lexical_variants",
    "paper_columns",
    "question_subsets",
    "subset_reach",
    "table_rows",
]

DATASET = "webglm"
#: Table 5's columns: our metric name -> column of :func:`best_worst_hits`.
METRICS: dict[str, str] = {"acc_best": "best", "acc_best_worst": "best_worst"}
#: The LLM rows: row name -> judge method (LINKAGE's demonstrations are the run's ``shots``).
JUDGE_ROWS: dict[str, str] = {"pointwise-ref": "pointwise-ref", "pairwise": "pairwise",
                              "pairwise-release": "pairwise", "linkage": "linkage"}
#: Pairwise positions of a judge row: ``pairwise`` a seeded coin per pair (the paper's text),
#: ``pairwise-release`` the candidate always first, as the release's scripts run it.
ROW_POSITIONS: dict[str, str] = {"pairwise-release": "release"}
#: The rows of the committed table (``lk_t05.run``'s default ``judge_rows``): pairwise with the
#: paper's random positions and as the release runs it (every WebGLM answer first, in a prompt
#: of its own with no prefix shared between candidates: about 3 s an item in float32 on 2
#: cores, half an hour for the 100 questions; the claims read it as the paper's row).
DEFAULT_JUDGE_ROWS = ("pointwise-ref", "pairwise", "pairwise-release", "linkage")
#: The automatic rows: ROUGE-L F1 of ``rouge-score`` and of the release's ``rouge`` package
#: (``rougeL-release``), BLEU, BERTScore F1 and the release's [CLS] cosine (``bertscore-cls``).
AUTOMATIC_ROWS = ("rougeL", "rougeL-release", "bleu", "bertscore", "bertscore-cls")
#: Our rows that are printed beside the paper's figure of another row (one figure, two variants).
PAPER_ALIASES = {"rougeL-release": "rougeL", "bertscore-cls": "bertscore",
                 "pairwise-release": "pairwise"}
#: The references the lexical diagnosis compares against: each single one, their mean and max.
GROUNDS: tuple[int | str, ...] = (3, 2, 1, 0, "mean", "max")
ROUGE_IMPLEMENTATIONS = ("rouge-score", "release")
#: NLTK smoothings (``SmoothingFunction().method<k>``); "none" is the release's method0.
BLEU_SMOOTHING = ("none", "method1", "method2", "method4", "method7")


# --------------------------------------------------------------------------- hits and rows

def hit_frame(frame: pd.DataFrame, *, by: Sequence[str] = ("method",),
              ties: str = "miss") -> pd.DataFrame:
    """Per-question hits of every group of a per-candidate frame.

    ``frame`` has ``by`` columns, ``qid``, ``grade`` and ``score``. Returns
    one row per group and question: ``by``..., ``qid``, ``best``,
    ``best_worst``, ``top_tie``, ``bottom_tie``, ``nan``
    (:func:`nfeval_repro.linkage.evaluation.best_worst_hits` with ``ties``).
    """
    by = list(by)
    cols = [*by, "qid", "best", "best_worst", "top_tie", "bottom_tie", "nan"]
    parts = []
    for key, group in frame.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        grades = {q: g["grade"].tolist() for q, g in group.groupby("qid", sort=False)}
        scores = {q: g["score"].tolist() for q, g in group.groupby("qid", sort=False)}
        hits = best_worst_hits(grades, scores, ties=ties).reset_index()
        for name, value in zip(by, key):
            hits[name] = value
        parts.append(hits[cols])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def _is_binary(values: np.ndarray) -> bool:
    return bool(np.isin(values, (0.0, 1.0)).all())


def accuracy_rows(hits: pd.DataFrame, *, by: Sequence[str] = ("method",),
                  ties: str = "miss", seed: int = 0) -> pd.DataFrame:
    """Acc(best) and Acc(best+worst) per group of :func:`hit_frame`, with 95% intervals.

    Columns: ``by``..., ``metric``, ``ties``, ``ours``, ``ci_low``,
    ``ci_high``, ``n_questions``, ``hits`` (the sum of the hit values),
    ``n_top_ties``, ``n_bottom_ties``, ``n_nan`` (questions), ``interval``
    (``wilson`` for 0/1 hits; ``bootstrap`` when tied questions contribute
    fractions, seeded by ``seed`` and the row's name).
    """
    by = list(by)
    rows = []
    for key, group in hits.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        ident = dict(zip(by, key))
        for metric, column in METRICS.items():
            values = group[column].to_numpy(dtype=float)
            n = len(values)
            if _is_binary(values):
                iv = proportion_interval(int(values.sum()), n)
                how = "wilson"
            else:
                name = "/".join(str(v) for v in key)
                iv = mean_interval(values, seed=seed, key=f"lk_t05/{name}/{metric}/{ties}")
                how = "bootstrap"
            rows.append({**ident, "metric": metric, "ties": ties, **iv.columns(),
                         "hits": float(values.sum()),
                         "n_top_ties": int((group["top_tie"] > 0).sum()),
                         "n_bottom_ties": int((group["bottom_tie"] > 0).sum()),
                         "n_nan": int(group["nan"].sum()), "interval": how})
    return pd.DataFrame(rows)


def comparisons(methods: Sequence[str], target: str = "linkage") -> list[tuple[str, str]]:
    """(target, baseline) for every other method present: LINKAGE minus each baseline."""
    return [(target, m) for m in methods if m != target] if target in methods else []


def difference_rows(hits: pd.DataFrame, pairs: Sequence[tuple[str, str]], *,
                    seed: int = 0, ties: str = "miss") -> pd.DataFrame:
    """Paired differences ``a - b`` of the per-question hits, on the questions both scored.

    Columns: ``method`` (``"a - b"``), ``metric``, ``ties``, ``ours`` (the
    mean per-question difference), ``ci_low``, ``ci_high`` (paired bootstrap
    over questions), ``n_questions``, ``a_mean``, ``b_mean`` (each method's
    accuracy on those questions), ``interval`` (``paired-bootstrap``).
    """
    rows = []
    for a, b in pairs:
        ha = hits[hits["method"] == a].set_index("qid")
        hb = hits[hits["method"] == b].set_index("qid")
        common = [q for q in ha.index if q in hb.index]
        for metric, column in METRICS.items():
            va: Mapping[Hashable, float] = ha.loc[common, column].to_dict()
            vb: Mapping[Hashable, float] = hb.loc[common, column].to_dict()
            iv = paired_difference(va, vb, seed=seed, key=f"lk_t05/{a} - {b}/{metric}/{ties}")
            rows.append({"method": f"{a} - {b}", "metric": metric, "ties": ties,
                         **iv.columns(),
                         "a_mean": float(np.mean(list(va.values()))) if common else math.nan,
                         "b_mean": float(np.mean(list(vb.values()))) if common else math.nan,
                         "interval": "paired-bootstrap"})
    return pd.DataFrame(rows)


def chance_hits(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`hit_frame` of a method that gives every answer the same score, ties broken at
    random: the accuracy of chance (method ``chance``; 1/3 and 1/6 for grades 3,2,1)."""
    items = frame.drop_duplicates(["qid", "doc_id"]).assign(method="chance", score=0.0)
    return hit_frame(items, by=["method"], ties="expected")


def table_rows(frame: pd.DataFrame, *, seed: int = 0, target: str = "linkage"
               ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Every row of the table from the per-candidate frame, and the per-question hits.

    Rows: each method's Acc(best) and Acc(best+worst) with ties counted as
    misses (``ties="miss"``); for the methods that tie at least once, the
    same with ties broken at random in expectation (``ties="expected"``);
    ``target`` minus every other method as paired differences (under both
    rules where a tie is involved). ``our_judge`` and ``n_unparsed`` (judge
    outputs that did not parse) are carried per method. The hits are
    returned by tie rule (:func:`hit_frame`).
    """
    hits = {rule: hit_frame(frame, ties=rule) for rule in TIE_RULES}
    miss = accuracy_rows(hits["miss"], seed=seed)
    tied = set(miss.loc[(miss["n_top_ties"] > 0) | (miss["n_bottom_ties"] > 0), "method"])
    pairs = comparisons(list(dict.fromkeys(frame["method"])), target)
    parts = [miss]
    if tied:
        expected = hits["expected"]
        parts.append(accuracy_rows(expected[expected["method"].isin(tied)], ties="expected",
                                   seed=seed))
    parts.append(difference_rows(hits["miss"], pairs, seed=seed))
    tied_pairs = [p for p in pairs if tied & set(p)]
    if tied_pairs:
        parts.append(difference_rows(hits["expected"], tied_pairs, seed=seed, ties="expected"))
    rows = pd.concat(parts, ignore_index=True)
    per_method = frame.groupby("method", sort=False).agg(our_judge=("our_judge", "first"),
                                                         n_unparsed=("unparsed", "sum"))
    first = rows["method"].str.split(" - ").str[0]
    rows["our_judge"] = first.map(per_method["our_judge"]).fillna("")
    rows["n_unparsed"] = rows["method"].map(per_method["n_unparsed"])
    rows.insert(0, "dataset", DATASET)
    return rows, hits


def paper_columns(rows: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """``judge``, ``paper``, ``gap`` and ``paper_in_ci`` beside our rows.

    The paper's value goes beside our main rows only (ties counted as misses,
    not the differences); a figure of the paper's also beside our rows that
    are another variant of it (:data:`PAPER_ALIASES`: its ROUGE-L beside both
    ROUGE implementations, its BERTScore -- the release's [CLS] cosine --
    beside both BERTScore rows). Every paper row must find its row of ours.
    """
    present = set(rows["method"])
    paper = pd.concat([paper, *(paper[paper["method"] == of].assign(method=ours)
                                for ours, of in PAPER_ALIASES.items() if ours in present)],
                      ignore_index=True)
    on = ["dataset", "method", "metric"]
    main = rows[(rows["ties"] == "miss") & ~rows["method"].str.contains(" - ")]
    check = paper[on].merge(main[on], on=on, how="left", indicator=True)
    orphans = check.loc[check["_merge"] == "left_only", on]
    if len(orphans):
        raise NfevalError("paper values without a row of ours: "
                          + orphans.to_string(index=False))
    out = rows.merge(paper[[*on, "judge", "paper"]].assign(ties="miss"),
                     on=[*on, "ties"], how="left")
    out["judge"] = out["judge"].astype(object).fillna("")
    out["gap"] = out["ours"] - out["paper"]
    inside = (out["paper"] >= out["ci_low"]) & (out["paper"] <= out["ci_high"])
    out["paper_in_ci"] = np.where(out["paper"].isna(), "", np.where(inside, "yes", "no"))
    return out


# --------------------------------------------------------------------------- the diagnosis

def bleu_score(candidate: str, reference: str, smoothing: str = "none") -> float:
    """NLTK sentence BLEU on whitespace tokens, one reference, 4-gram weights.

    ``smoothing="none"`` is :func:`nfeval.linkage.lexical.bleu` (the
    release's call); ``"method1"``.. ``"method7"`` are NLTK's
    ``SmoothingFunction`` methods (Chen and Cherry, 2014).
    """
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if smoothing not in BLEU_SMOOTHING and not (
            smoothing.startswith("method") and smoothing[6:].isdigit()):
        raise NfevalError(f"unknown BLEU smoothing {smoothing!r}; use one of {BLEU_SMOOTHING}.")
    hyp = candidate.split()
    if not hyp:
        return 0.0
    fn = None if smoothing == "none" else getattr(SmoothingFunction(), smoothing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns on every zero n-gram count
        return float(sentence_bleu([reference.split()], hyp, smoothing_function=fn))


def lexical_variants(questions: Sequence[GradedQuestion], *,
                     grounds: Sequence[int | str] = GROUNDS,
                     rouge: Sequence[str] = ROUGE_IMPLEMENTATIONS,
                     smoothing: Sequence[str] = BLEU_SMOOTHING) -> pd.DataFrame:
    """Every answer's ROUGE-L F1 and BLEU under each reference choice and implementation.

    One row per (metric, variant, ground, answer): ``metric`` (``rougeL``,
    ``bleu``, ``length``), ``variant`` (the ROUGE implementation, the BLEU
    smoothing; ``words`` for length), ``ground`` (``"ground<k>"``, ``"mean"``
    or ``"max"`` over ``ground0..ground3``; ``""`` for length, which needs no
    reference), ``qid``, ``doc_id``, ``grade``, ``model``, ``score``. The
    ``ground4`` of 13 questions (a near-copy of their ``ground3``) is not used.
    """
    from nfeval.linkage.lexical import rouge_f1, rouge_release

    singles = [g for g in grounds if not isinstance(g, str)]
    pooled = [g for g in grounds if isinstance(g, str)]
    if any(g not in ("mean", "max") for g in pooled):
        raise NfevalError(f"grounds are reference numbers, 'mean' or 'max', not {pooled}.")
    per_ref = list(dict.fromkeys([*singles, *((3, 2, 1, 0) if pooled else ())]))
    rouge_fn = {"rouge-score": rouge_f1, "release": rouge_release}
    rows = []
    for q in questions:
        for a in q.answers:
            base = {"qid": q.qid, "doc_id": a.doc_id, "grade": a.grade, "model": a.model}
            rows.append({**base, "metric": "length", "variant": "words", "ground": "",
                         "score": float(len(a.text.split()))})
            for k in per_ref:
                if k not in q.references:
                    raise NfevalError(f"WebGLM question {q.qid} has no ground{k}.")
                ref = q.references[k]
                for impl in rouge:
                    rows.append({**base, "metric": "rougeL", "variant": impl,
                                 "ground": f"ground{k}",
                                 "score": rouge_fn[impl](a.text, ref)["rougeL"]})
                for sm in smoothing:
                    rows.append({**base, "metric": "bleu", "variant": sm,
                                 "ground": f"ground{k}", "score": bleu_score(a.text, ref, sm)})
    frame = pd.DataFrame(rows, columns=["metric", "variant", "ground", "qid", "doc_id", "grade",
                                        "model", "score"])
    refs = frame[frame["ground"] != ""]
    keys = ["metric", "variant", "qid", "doc_id", "grade", "model"]
    pools = [refs[refs["ground"].isin([f"ground{k}" for k in (0, 1, 2, 3)])]
             .groupby(keys, sort=False, dropna=False)["score"].agg(how).reset_index()
             .assign(ground=how) for how in pooled]
    keep = frame[(frame["ground"] == "") | frame["ground"].isin([f"ground{k}" for k in singles])]
    out = pd.concat([keep, *pools], ignore_index=True)[frame.columns]
    order = {name: i for i, name in enumerate(["", *(f"ground{k}" for k in singles), *pooled])}
    return out.sort_values("ground", key=lambda c: c.map(order), kind="stable",
                           ignore_index=True)


def question_subsets(questions: Sequence[GradedQuestion], size: int = 50) -> dict[str, list[str]]:
    """Natural candidates for the paper's labelled ``size`` questions (question ids).

    ``all``; the ``first 50`` and ``last 50`` of the file; ``three grades``
    (the questions whose answers have three distinct grades); ``best by
    <model>`` (those whose grade-3 answer -- one of them, if two -- was
    written by that model).
    """
    out = {"all": [q.qid for q in questions],
           f"first {size}": [q.qid for q in questions[:size]],
           f"last {size}": [q.qid for q in questions[-size:]],
           "three grades": [q.qid for q in questions if len(set(q.grades)) == len(q.grades)]}
    models = sorted({a.model for q in questions for a in q.answers if a.model})
    for m in models:
        out[f"best by {m}"] = [q.qid for q in questions
                               if any(a.model == m and a.grade == max(q.grades)
                                      for a in q.answers)]
    return out


def subset_reach(hits: Sequence[float], size: int = 50, paper: float = math.nan
                 ) -> dict[str, float]:
    """What an accuracy on a uniformly random ``size``-question subset of ``hits`` can be.

    ``hits`` are 0/1 per question (H of N are 1). The number of hits in a
    random subset is hypergeometric (N, H, size), so everything is exact:
    ``low``/``high`` the 2.5% and 97.5% quantiles of the subset accuracy,
    ``most`` the largest accuracy any subset reaches (min(H, size) / size),
    ``p_at_least`` the share of subsets whose accuracy reaches ``paper``
    (NaN without a paper value). With ``size`` >= N the only subset is all.
    """
    arr = np.asarray(hits, dtype=float)
    if not _is_binary(arr):
        raise NfevalError("subset_reach needs hits of 0 or 1 (use ties='miss').")
    n_all, h = int(arr.size), int(arr.sum())
    if n_all == 0:
        return {"size": 0, "low": math.nan, "high": math.nan, "most": math.nan,
                "p_at_least": math.nan}
    size = min(int(size), n_all)
    dist = stats.hypergeom(n_all, h, size)
    low, high = dist.ppf([0.025, 0.975]) / size
    need = math.ceil(round(paper * size, 9)) if not math.isnan(paper) else None
    return {"size": size, "low": float(low), "high": float(high),
            "most": min(h, size) / size,
            "p_at_least": float(dist.sf(need - 1)) if need is not None else math.nan}


def _length_tau(part: pd.DataFrame, lengths: Mapping[tuple[str, str], float]) -> float:
    """Mean over questions of Kendall's tau between a score and the answers' lengths."""
    taus = []
    for _, g in part.groupby("qid", sort=False):
        ln = [lengths[(q, d)] for q, d in zip(g["qid"], g["doc_id"])]
        tau = stats.kendalltau(g["score"].to_numpy(), ln).statistic
        if not math.isnan(tau):
            taus.append(tau)
    return float(np.mean(taus)) if taus else math.nan


def diagnostic_table(variants: pd.DataFrame, subsets: Mapping[str, Sequence[str]],
                     paper: Mapping[tuple[str, str], float], *, size: int = 50) -> pd.DataFrame:
    """Each lexical variant's accuracies on each subset, and its reach on random subsets.

    ``variants`` is :func:`lexical_variants`' frame, ``subsets``
    :func:`question_subsets`', ``paper`` maps (metric row, Table 5 metric) to
    the paper's value, e.g. ``("rougeL", "acc_best")``. One row per
    (``metric``, ``variant``, ``ground``, ``subset``, ``acc``): ``ours`` (the
    accuracy on the subset, ties counted as misses), ``n_questions``,
    ``paper``, ``gap``, ``n_top_ties``, ``length_tau`` (mean per-question
    Kendall tau between the scores and the answers' lengths: how much of the
    ranking is length), and, on the subset ``all`` only, the random
    ``size``-subset columns of :func:`subset_reach` (``random_low``,
    ``random_high``, ``random_most``, ``p_random_at_least_paper``). A
    ``chance`` row (every answer tied, ties broken at random) is added per
    subset.
    """
    lengths = {(q, d): s for q, d, s in variants.loc[variants["metric"] == "length",
                                                     ["qid", "doc_id", "score"]].itertuples(
                                                         index=False)}
    keys = ["metric", "variant", "ground"]
    hits = hit_frame(variants, by=keys, ties="miss")
    chance = chance_hits(variants.assign(method="chance")).assign(
        metric="chance", variant="random order", ground="")
    hits = pd.concat([hits, chance.drop(columns=["method"])], ignore_index=True)
    taus = {k: _length_tau(g, lengths) for k, g in variants.groupby(keys, sort=False)}
    rows = []
    for key, group in hits.groupby(keys, sort=False):
        group = group.set_index("qid")
        for subset, qids in subsets.items():
            part = group.loc[[q for q in qids if q in group.index]]
            for acc, column in METRICS.items():
                p = paper.get((key[0], acc), math.nan)
                row = {**dict(zip(keys, key)), "subset": subset, "acc": acc,
                       "ours": float(part[column].mean()) if len(part) else math.nan,
                       "n_questions": len(part), "paper": p,
                       "gap": float(part[column].mean()) - p if len(part) else math.nan,
                       "n_top_ties": int((part["top_tie"] > 0).sum()),
                       "length_tau": taus.get(key, math.nan)}
                if subset == "all" and key[0] != "chance":
                    reach = subset_reach(part[column].to_numpy(), size, p)
                    row.update(random_size=reach["size"], random_low=reach["low"],
                               random_high=reach["high"], random_most=reach["most"],
                               p_random_at_least_paper=reach["p_at_least"])
                rows.append(row)
    cols = [*keys, "subset", "acc", "ours", "n_questions", "paper", "gap", "n_top_ties",
            "length_tau", "random_size", "random_low", "random_high", "random_most",
            "p_random_at_least_paper"]
    return pd.DataFrame(rows).reindex(columns=cols)
