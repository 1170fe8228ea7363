"""lk_x05, beyond the paper: does a LINKAGE verdict depend on the judge's size?

LINKAGE judged with Mistral-7B and ChatGPT; every judge row of this project's claims rests on
Qwen2.5-Coder-1.5B. Here the L1 and L2 comparisons of the claims table (LINKAGE 0-shot and
3-shot minus each lexical baseline and each other judge) are computed with smaller judges
on the same every-candidate draw as lk_t02 (the first ``limit`` of its ANTIQUE questions and
``trec_limit`` of its TREC-DL-NF ones, every candidate), in the committed table's dtype
(bfloat16), beside lk_t02's own 1.5B judge on the same questions (read from its committed
per-candidate file, nothing rejudged). The lexical baselines are model-free and the same for
every judge.

Per comparison and judge: the paired difference (mean per-question Spearman, A minus B) with
its 95% interval; and per comparison, the largest judge minus each smaller one, paired over
the same questions (:func:`size_rows`): the reading says whether the difference moves
toward the paper's sign as the judge grows (the interval of that change wholly on the paper's
side), away from it, or that the data cannot tell. Nothing is extrapolated past the largest
judge run; the paper's margin (Mistral-7B) is marked at 7B, not joined to ours.

The notebook ``lk_x05_judge_size.ipynb`` calls :func:`run`; :func:`figure` draws one panel
per claim row (figures/lk_x05.png).
"""

from __future__ import annotations

from dataclasses import dataclass

import math
import time

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval.metrics.correlation import paired_rows, per_question
from nfeval.metrics.intervals import paired_difference
from nfeval_repro.paths import RESULTS
from nfeval_repro.linkage.same_items import PAPER_ROW_OF
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

# figure, reading, size_rows and comparisons: the notebook's and the tests' too
__all__ = ["Config", "run"]

ID = "lk_x05"
#: Parameters (billions) of the judges this analysis knows, for the figure's axis.
SIZES = {"smollm2-135m-instruct": 0.135, "gemma3-270m": 0.27,
         "qwen2.5-coder-0.5b-instruct": 0.5, "qwen2.5-coder-1.5b-instruct": 1.5}
#: The paper's judge whose margin is marked (LINKAGE Table 2's open judge) and its size.
PAPER_JUDGE, PAPER_SIZE = "mistral", 7.0
LINKAGE_ROWS = ("linkage-0shot", "linkage-fewshot")
#: L1's baselines as the claims table decides them (the release's BERTScore: its [CLS] cosine)
#: and L2's (pairwise as the release runs it, the candidate first).
L1_BASELINES = ("rouge1", "rouge2", "rougeL", "bleu", "bertscore-cls")
L2_BASELINES = ("pointwise-noref", "pointwise-ref", "pairwise-release")
#: The paper's row each of our baselines stands for (for its margin).
PAPER_ROW = PAPER_ROW_OF  # lk_t02's row -> the paper's row it computes
JUDGE_ROWS = (*LINKAGE_ROWS, *L2_BASELINES)
COLUMNS = ["claim", "dataset", "comparison", "judge", "size_b", "ours", "ci_low", "ci_high",
           "n_questions", "paper_margin"]
SIZE_COLUMNS = ["claim", "dataset", "comparison", "larger", "smaller", "change", "ci_low",
                "ci_high", "n_questions", "paper_margin", "reading"]


def comparisons() -> list[tuple[str, str, str]]:
    """``(claim, a, b)`` for every L1 and L2 row: each LINKAGE variant minus each baseline."""
    return ([("L1", a, b) for a in LINKAGE_ROWS for b in L1_BASELINES]
            + [("L2", a, b) for a in LINKAGE_ROWS for b in L2_BASELINES])


def _paper_margin(paper: pd.DataFrame, dataset: str, a: str, b: str) -> float:
    def value(method, judge):
        sel = paper[(paper["dataset"] == dataset) & (paper["method"] == method)
                    & (paper["coefficient"] == "spearman")
                    & (paper["judge"].fillna("") == judge)]
        return float(sel["paper"].iloc[0]) if len(sel) else math.nan

    pb = PAPER_ROW.get(b, b)
    lexical = b in L1_BASELINES
    return value(a, PAPER_JUDGE) - value(pb, "" if lexical else PAPER_JUDGE)


def _committed_frame(results) -> tuple[pd.DataFrame, str, dict]:
    """lk_t02's committed per-candidate scores (same items, prob) and its judge."""
    import json

    path = results / "lk_t02" / "per_candidate.csv"
    if not path.is_file():
        raise NfevalError(f"lk_x05 reads lk_t02's committed per-candidate file {path}: run "
                          f"`make results/lk_t02.csv` first")
    params = json.loads((results / "lk_t02.json").read_text())["parameters"]
    frame = pd.read_csv(path, dtype={"qid": str, "doc_id": str, "mode": str, "our_judge": str},
                        keep_default_na=False,
                        na_values=[""])
    frame = frame[frame["sample"] == "same items"].fillna({"mode": "", "our_judge": ""})
    return frame, str(params["judge"]), params


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x05_judge_size.ipynb`` is written from them."""

    #: run profile (the judges load as the profile loads them)
    profile: str = "embedded"
    #: lk_t02's draw and the bootstrap
    seed: int = 0
    #: comma-separated smaller judges (lk_t02's own judge is read from its committed file)
    judges: str = "smollm2-135m-instruct,gemma3-270m,qwen2.5-coder-0.5b-instruct"
    #: the first ANTIQUE questions of lk_t02's every-candidate draw (0: none)
    limit: int = 20
    #: the first TREC-DL-NF questions of the same draw (about 100 candidates each: the 0.5B
    #: judge's items of questions 6-10, 2,677, took 585 s in bfloat16 on a CPU with AMX; 0: none)
    trec_limit: int = 10
    #: the smaller judges' dtype: lk_t02's every-candidate table's
    judge_dtype: str = "bfloat16"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The L1/L2 rows with each judge of ``judges`` (comma-separated) and lk_t02's own, on
    the first ``limit`` ANTIQUE and ``trec_limit`` TREC-DL-NF questions of lk_t02's
    every-candidate draw (0: none of that dataset). ``extra``: ``sizes`` (the size rows)."""
    from nfeval_repro.linkage.same_items import JudgeCall, judge_frame, judged_items

    results = RESULTS
    committed, big, params = _committed_frame(results)
    if int(params.get("max_candidates", -1)) != 0:
        raise NfevalError("lk_x05 compares judges on lk_t02's every-candidate draw; the "
                          "committed lk_t02 table is not one (max_candidates != 0)")
    small = [j for j in config.judges.split(",") if j]
    if not small:
        raise NfevalError("lk_x05 needs at least one judge besides lk_t02's (judges=...)")
    if big in small:
        raise NfevalError(f"{big} is lk_t02's own judge: its rows are read, not rejudged")
    unknown = [j for j in [*small, big] if j not in SIZES]
    if unknown:
        raise NfevalError(f"no size known for {unknown}; lk_x05 knows {list(SIZES)}")
    prof = get_profile(config.profile)
    limits = {"antique": config.limit, "trec-dl-nf": config.trec_limit}
    datasets = [d for d, n in limits.items() if n > 0]
    if not datasets:
        raise NfevalError("limit and trec_limit are both 0: no questions to judge")
    shots = int(params.get("shots", 3))
    call = JudgeCall(mode="prob", seed=config.seed, shots=shots)
    frames, signatures = [], []
    for name in small:
        model = prof.load(name, dtype=config.judge_dtype)
        for dataset in datasets:
            questions = load_linkage(dataset)
            items = judged_items(questions, dataset, seed=config.seed, limit=limits[dataset],
                                 max_candidates=0)
            t = time.time()
            part, sigs = judge_frame(model, questions, items, dataset=dataset,
                                     rows=JUDGE_ROWS, call=call, progress=progress)
            signatures += sigs
            if progress:
                print(f"{name} on {dataset}: {len(items.judged)} questions, "
                      f"{len(part)} scores in {time.time() - t:.0f} s", flush=True)
            frames.append(part)
        del model
    judged = pd.concat(frames, ignore_index=True)
    qids = {d: set(judged.loc[judged["dataset"] == d, "qid"]) for d in datasets}
    lexical = committed[committed["method"].isin(L1_BASELINES)]
    own = committed[committed["method"].isin(JUDGE_ROWS) & (committed["our_judge"] == big)
                    & (committed["mode"] == "prob")]
    paper = paper_values("lk_t02")
    rows, per_judge = [], {}
    for judge, part in [*((j, judged[judged["our_judge"] == j]) for j in small), (big, own)]:
        frame = pd.concat([part, lexical], ignore_index=True)
        frame = frame[[q in qids.get(d, ()) for d, q in zip(frame["dataset"], frame["qid"])]]
        missing = {d: len(qids[d] - set(frame.loc[(frame["dataset"] == d)
                                                   & (frame["method"] == JUDGE_ROWS[0]), "qid"]))
                   for d in datasets}
        if any(missing.values()):
            raise NfevalError(f"{judge}'s rows miss questions of the draw: {missing}")
        per_judge[judge] = frame
        pairs = [(a, b) for _, a, b in comparisons()]
        got = paired_rows(frame, pairs, by=["dataset"], seed=config.seed, coefficients=["spearman"])
        for claim, a, b in comparisons():
            for r in got[got["method"] == f"{a} - {b}"].itertuples():
                rows.append({"claim": claim, "dataset": r.dataset,
                             "comparison": f"{a} - {b}", "judge": judge,
                             "size_b": SIZES[judge], "ours": r.ours, "ci_low": r.ci_low,
                             "ci_high": r.ci_high, "n_questions": int(r.n_questions),
                             "paper_margin": _paper_margin(paper, r.dataset, a, b)})
    table = pd.DataFrame(rows, columns=COLUMNS)
    sizes = size_rows(per_judge, big, small, paper, seed=config.seed)
    return Experiment(ID, table, id_columns=["claim", "dataset", "comparison", "judge"],
                      interval="questions", signatures=signatures,
                      parameters=dict(judges=small, reference_judge=big, limit=config.limit,
                                      trec_limit=config.trec_limit,
                                      judge_dtype=config.judge_dtype, shots=shots),
                      notes="ours: mean per-question Spearman of A minus B with the human grades, "
                            "paired bootstrap over the questions of lk_t02's every-candidate draw "
                            "that every judge scored; paper_margin: the paper's Mistral-7B row "
                            "minus its other row (Table 2). Frame 'size': the largest judge's "
                            "difference minus each smaller judge's, paired over the same "
                            "questions, and its reading.",
                      frames={"size": sizes, "per_candidate": judged},
                      extra={"sizes": sizes})


def judge_pairs(big: str, small: list[str]) -> list[tuple[str, str]]:
    """``(larger, smaller)`` for every two judges of ``small`` and ``big`` of different
    :data:`SIZES`: ``big`` against each smaller judge first (in ``small``'s order), then each
    of the others against every judge below it, so that a difference that does not grow
    steadily with the judge shows where it does not."""
    pairs = [(big, s) for s in small]
    for larger in sorted(small, key=SIZES.__getitem__, reverse=True):
        pairs += [(larger, s) for s in small if SIZES[s] < SIZES[larger]]
    return pairs


def size_rows(per_judge: dict[str, pd.DataFrame], big: str, small: list[str],
              paper: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """Per comparison and pair of judges (:func:`judge_pairs`): the larger judge's
    per-question difference (A minus B, Spearman) minus the smaller one's, paired bootstrap
    over the questions both define, and :func:`reading`."""
    values = {}
    for judge, frame in per_judge.items():
        pq = per_question(frame, by=["dataset", "method"], coefficients=["spearman"])
        values[judge] = {(d, m): g.set_index("qid")["value"].dropna()
                         for (d, m), g in pq.groupby(["dataset", "method"])}
    out = []
    datasets = sorted({d for d, _ in values[big]})
    for claim, a, b in comparisons():
        for d in datasets:
            margin = _paper_margin(paper, d, a, b)

            def diff(judge):
                va, vb = values[judge].get((d, a)), values[judge].get((d, b))
                if va is None or vb is None:
                    return {}
                common = va.index.intersection(vb.index)
                return (va[common] - vb[common]).to_dict()

            for larger, s in judge_pairs(big, small):
                iv = paired_difference(diff(larger), diff(s), seed=seed,
                                       key=f"{d}/{a} - {b}/{larger} - {s}")
                out.append({"claim": claim, "dataset": d, "comparison": f"{a} - {b}",
                            "larger": larger, "smaller": s, "change": iv.estimate,
                            "ci_low": iv.low, "ci_high": iv.high, "n_questions": iv.n,
                            "paper_margin": margin,
                            "reading": reading(iv.low, iv.high, margin, iv.n)})
    return pd.DataFrame(out, columns=SIZE_COLUMNS)


def reading(low: float, high: float, paper_margin: float, n: int) -> str:
    """What the change from the smaller to the larger judge says about the paper's sign (the
    paper's margin's; positive where the paper prints none, the claims' direction): the
    interval wholly on that side reads ``moves toward the paper's sign``, wholly on the other
    ``moves away from the paper's sign``, else ``cannot tell at n``; under 10 questions
    ``too few questions``."""
    if n < 10:
        return "too few questions"
    if not (np.isfinite(low) and np.isfinite(high)):
        return "cannot tell at n"
    sign = 1.0 if not np.isfinite(paper_margin) or paper_margin >= 0 else -1.0
    if (low > 0 and sign > 0) or (high < 0 and sign < 0):
        return "moves toward the paper's sign"
    if (high < 0 and sign > 0) or (low > 0 and sign < 0):
        return "moves away from the paper's sign"
    return "cannot tell at n"


_NAMES = {"linkage-0shot": "LINKAGE 0-shot", "linkage-fewshot": "LINKAGE 3-shot",
          "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "bleu": "BLEU",
          "bertscore-cls": "BERTScore ([CLS])", "pointwise-noref": "pointwise",
          "pointwise-ref": "pointwise (refs)", "pairwise-release": "pairwise (cand. first)"}


def size_label(billions: float) -> str:
    """A judge size as the model names write it: millions under 0.5B (``135M``), else
    billions (``0.5B``)."""
    return f"{billions * 1000:g}M" if billions < 0.5 else f"{billions:g}B"


def _label(comparison: str) -> str:
    a, b = comparison.split(" - ", 1)
    return f"{_NAMES.get(a, a)} - {_NAMES.get(b, b)}"


def figure(table: pd.DataFrame, sizes: pd.DataFrame, claim: str | None = None):
    """One panel per comparison of ``claim`` (None: every L1 and L2 comparison), each dataset a
    series: the paired difference with its 95% interval at each judge's size (log axis), 0
    dashed, the paper's Mistral-7B margin as a star at 7B (not joined to ours), and each
    dataset's n and the reading of each step up in judge size in the panel's title."""
    import matplotlib.pyplot as plt

    from nfeval_repro.plots import DATASET_NAMES, FIGURE_WIDTH, FONT

    part = table if claim is None else table[table["claim"] == claim]
    if part.empty:
        raise NfevalError(f"no rows of claim {claim!r}")
    keys = list(dict.fromkeys(zip(part["claim"], part["comparison"])))
    datasets = [d for d in ("antique", "trec-dl-nf") if (part["dataset"] == d).any()]
    style = {"antique": ("o", "#1f5fa8", 0.93), "trec-dl-nf": ("s", "#d9822b", 1.07)}
    # each step up in size, read as one mark: the panel titles stay one line per dataset
    mark = {"moves toward the paper's sign": "+", "moves away from the paper's sign": "\u2212",
            "cannot tell at n": "?", "too few questions": "few"}
    judges = sorted(set(part["judge"]), key=SIZES.__getitem__)
    steps = list(zip(judges[1:], judges[:-1]))  # (larger, smaller)
    ticks = sorted({*part["size_b"], PAPER_SIZE})
    cols = 3  # four columns of three-line titles touch at this width
    nrows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(FIGURE_WIDTH, 2.3 * nrows + 0.8),
                             squeeze=False, sharex=True, layout="constrained")
    for ax, (cl, c) in zip(axes.flat, keys):
        said = []
        for d in datasets:
            rows = part[(part["dataset"] == d) & (part["comparison"] == c)].sort_values("size_b")
            if rows.empty:
                continue
            marker, color, shift = style[d]
            x = rows["size_b"].to_numpy() * shift  # side by side on the log axis
            ax.errorbar(x, rows["ours"], yerr=[rows["ours"] - rows["ci_low"],
                                               rows["ci_high"] - rows["ours"]],
                        fmt=f"{marker}-", color=color, ms=4, lw=1.2, capsize=3,
                        label=DATASET_NAMES[d])
            margin = rows["paper_margin"].iloc[0]
            if np.isfinite(margin):
                ax.plot([PAPER_SIZE * shift], [margin], "*", color=color, mec="#b22222", ms=9)
            read = sizes[(sizes["dataset"] == d) & (sizes["comparison"] == c)]
            read = dict(zip(zip(read["larger"], read["smaller"]), read["reading"]))
            said.append(f"{DATASET_NAMES[d]} n = {int(rows['n_questions'].max())}: "
                        + " ".join(mark.get(read.get(st, ""), "none") for st in steps))
        ax.axhline(0, color="black", lw=0.8, ls="--")
        ax.set_xscale("log")
        # vertical: four judges under 1.5B sit closer on the log axis than a label is wide
        ax.set_xticks(ticks, [size_label(v) for v in ticks])
        ax.tick_params(axis="x", labelrotation=90)
        ax.minorticks_off()
        ax.set_title(f"{cl}: {_label(c)}\n" + "\n".join(said), fontsize=FONT["tick"])
        ax.tick_params(labelsize=FONT["tick"])
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower right", ncols=len(labels),
               fontsize=FONT["tick"])
    step_names = ", ".join(f"{size_label(SIZES[lo])} to {size_label(SIZES[hi])}"
                           for hi, lo in steps)
    fig.suptitle(f"{claim or 'L1, L2'}: paired difference (Spearman, A - B, 95% CI) by judge size; "
                 f"star: the paper's Mistral-7B margin\nin each title, per step up in size "
                 f"({step_names}): + moves toward the paper's sign, \u2212 away, ? cannot tell",
                 fontsize=FONT["suptitle"])
    fig.supxlabel("judge parameters (log scale)", fontsize=FONT["label"])
    fig.supylabel("A minus B", fontsize=FONT["label"])
    return fig
