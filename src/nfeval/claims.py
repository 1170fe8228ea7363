"""The claims table: does each central claim of the two papers hold in our committed tables?

One row per claim and comparison, read from the committed result tables only
(nothing is computed from a model): the paper's margin where the paper
prints one, ours (a paired difference on the same questions, or a value
against a fixed line), its 95% interval, the n it rests on, the judge, and
a verdict:

* ``holds`` -- the interval lies wholly on the claim's side of its line
  (above 0 for "A beats B");
* ``contradicted`` -- the interval lies wholly on the other side;
* ``cannot tell at n`` -- the interval straddles the line.

The claims (:data:`CLAIMS`):

* **L1** LINKAGE beats the lexical baselines (LINKAGE Table 2);
* **L2** LINKAGE beats pointwise and pairwise judges (Table 2);
* **L3** it still does with generated references: 1GT, 0GT (Tables 3-4) and
  WebGLM (Table 5);
* **D1** P.D. aligns with human preference better than Direct-Score, G-Eval
  and Num-of-POVs (DebateQA Table 2);
* **D2** the D.A. judge agrees with the labels (DebateQA Table 3; the line is
  chance, AUROC 0.5);
* **D3** P.D. rankings are stable across backbones and restate prompts
  (DebateQA Figures 3-4; within-question Spearman of the model answers'
  scores, the line is 0);
* **X** beyond the papers: the judge's LINKAGE 3-shot row, and the mean of
  the per-question ranks of LINKAGE 0-shot and pointwise with references,
  each against the paper's best Table 2 row of the dataset.

The paper's margin of a LINKAGE comparison is the paper's Mistral-7B row
minus its other row (``paper_margin``; ChatGPT's beside it where printed):
Mistral is the open judge nearest to ours. DebateQA's Tables 2-3 print no
numbers in our copy of the paper, so its rows have none.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nfeval import NfevalError
from nfeval.paths import RESULTS

__all__ = ["CLAIMS", "COLUMNS", "SOURCES", "VERDICTS", "claims_table", "forest_plot", "markdown",
           "signatures", "source_dir", "verdict"]

VERDICTS = ("holds", "contradicted", "cannot tell at n")
COLUMNS = ["claim", "dataset", "comparison", "statistic", "judge", "paper_margin",
           "paper_margin_chatgpt", "line", "ours", "ci_low", "ci_high", "n", "unit", "verdict",
           "source"]

#: What each claim says, in a few words.
CLAIMS = {
    "L1": "LINKAGE beats the lexical baselines (LINKAGE Table 2)",
    "L2": "LINKAGE beats pointwise and pairwise judges (Table 2)",
    "L3": "LINKAGE still leads with generated references: 1GT, 0GT, WebGLM (Tables 3-5)",
    "D1": "P.D. aligns with human preference better than Direct-Score, G-Eval, Num-of-POVs "
          "(DebateQA Table 2)",
    "D2": "The D.A. judge agrees with the labels (DebateQA Table 3)",
    "D3": "P.D. rankings are stable across backbones and restate prompts (Figures 3-4)",
    "X": "Beyond the papers: stronger combinations against the paper's best Table 2 row",
}
_NAMES = {"linkage-0shot": "LINKAGE 0-shot", "linkage-fewshot": "LINKAGE 3-shot",
          "pointwise-noref": "pointwise", "pointwise-ref": "pointwise (refs)",
          "pairwise": "pairwise", "rouge1": "ROUGE-1", "rougeL": "ROUGE-L", "bleu": "BLEU",
          "bertscore": "BERTScore", "linkage": "LINKAGE", "pd": "P.D.",
          "direct_score": "Direct-Score", "g_eval": "G-Eval", "num_povs": "Num-of-POVs"}
DATASETS = ("antique", "trec-dl-nf")
#: The committed tables the claims are read from.
SOURCES = ("lk_t02", "lk_t03", "lk_t04", "lk_t05", "dq_t02", "dq_t03", "dq_f03", "dq_f04")


def source_dir(output_dir: str | Path | None = None) -> Path:
    """Where the source tables are: ``<output_dir>/results`` when it holds all of them (a run
    that wrote its own tables), else the repository's committed ``results/``."""
    if output_dir:
        mine = Path(output_dir) / "results"
        if all((mine / f"{a}.csv").is_file() for a in SOURCES):
            return mine
    return RESULTS


def signatures(results: str | Path = RESULTS) -> list:
    """One signature per source table: which table, at which commit, built with which
    parameters (its judge where it has one)."""
    from nfeval.results import Signature

    out = []
    for a in SOURCES:
        path = Path(results) / f"{a}.json"
        rec = json.loads(path.read_text()) if path.is_file() else {}
        params = rec.get("parameters", {})
        judge = params.get("judge") or params.get("judges") or ""
        out.append(Signature(metric="claims/source", variant=a, n=len(rec.get("rows", [])),
                             extra={"source": a, "source_commit": str(rec.get("commit", ""))[:12],
                                    "judge": str(judge)}))
    return out


def verdict(ci_low: float, ci_high: float, line: float = 0.0) -> str:
    """``holds`` when the interval is wholly above ``line`` (the claim's side), ``contradicted``
    when wholly below it, else ``cannot tell at n``."""
    if any(not np.isfinite(x) for x in (ci_low, ci_high)):
        return "cannot tell at n"
    if ci_low > line:
        return "holds"
    if ci_high < line:
        return "contradicted"
    return "cannot tell at n"


@dataclass
class _Row:
    claim: str
    dataset: str
    comparison: str
    statistic: str
    judge: str
    ours: float
    ci_low: float
    ci_high: float
    n: int
    unit: str
    source: str
    line: float = 0.0
    paper_margin: float = math.nan
    paper_margin_chatgpt: float = math.nan

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["verdict"] = verdict(self.ci_low, self.ci_high, self.line)
        return d


def _read(results: Path, artefact: str) -> pd.DataFrame:
    path = Path(results) / f"{artefact}.csv"
    if not path.is_file():
        raise NfevalError(f"the claims table reads {path}, which is missing: run "
                          f"`make results/{artefact}.csv` first.")
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _paper(artefact: str) -> pd.DataFrame:
    from nfeval.results import paper_values

    return paper_values(artefact)


def _paper_value(paper: pd.DataFrame, **where) -> float:
    sel = paper
    for k, v in where.items():
        sel = sel[sel[k].fillna("") == v]
    return float(sel["paper"].iloc[0]) if len(sel) else math.nan


def _short(model: str) -> str:
    return str(model).replace("qwen2.5-coder-", "qwen-").replace("-instruct", "")


def _name(method: str) -> str:
    return _NAMES.get(method, method)


def _diff_rows(table: pd.DataFrame, *, claim: str, source: str, a: str, others, paper,
               where: dict, judge_col: str = "our_judge", statistic: str = "spearman",
               stat_col: str = "coefficient", paper_stat: str = "coefficient") -> list[_Row]:
    out = []
    for dataset in sorted(set(table["dataset"])):
        for b in others:
            sel = table[(table["dataset"] == dataset) & (table["method"] == f"{a} - {b}")
                        & (table[stat_col] == statistic)]
            for k, v in where.items():
                sel = sel[sel[k].fillna("") == v]
            if sel.empty:
                continue
            r = sel.iloc[0]
            margins = [_paper_value(paper, dataset=dataset, method=a, judge=j,
                                    **{paper_stat: statistic})
                       - _paper_value(paper, dataset=dataset, method=b,
                                      judge=j if b not in _LEXICAL else "",
                                      **{paper_stat: statistic})
                       for j in ("mistral", "chatgpt")]
            out.append(_Row(claim, dataset, f"{_name(a)} - {_name(b)}", statistic,
                            str(r.get(judge_col, "") or ""), float(r["ours"]),
                            float(r["ci_low"]), float(r["ci_high"]), int(r["n_questions"]),
                            "questions", source, 0.0, *margins))
    return out


_LEXICAL = ("rouge1", "rouge2", "rougeL", "bleu", "bertscore")


def _linkage_table2(results: Path) -> tuple[list[_Row], str]:
    t = _read(results, "lk_t02")
    paper = _paper("lk_t02")
    same = t[(t["sample"] == "same items") & (t["mode"] == "prob")]
    judge = next((j for j in same.loc[same["method"] == "linkage-0shot", "our_judge"]), "")
    same = same[same["our_judge"].fillna("") == judge]
    rows = _diff_rows(same, claim="L1", source="lk_t02", a="linkage-0shot",
                      others=("rougeL", "bleu", "bertscore"), paper=paper, where={})
    rows += _diff_rows(same, claim="L2", source="lk_t02", a="linkage-0shot",
                       others=("pointwise-noref", "pointwise-ref", "pairwise"), paper=paper,
                       where={})
    return rows, judge


def _generated_references(results: Path) -> list[_Row]:
    rows = []
    for artefact, label, others in (("lk_t03", "1GT", ("pointwise-ref", "pairwise")),
                                    ("lk_t04", "0GT", ("pointwise-noref",))):
        t = _read(results, artefact)
        paired = t[t["references"] == "paired"]
        part = _diff_rows(paired, claim="L3", source=artefact, a="linkage-0shot",
                          others=others, paper=_paper(artefact), where={})
        for r in part:
            r.comparison = f"{label}: {r.comparison}"
        rows += part
    t = _read(results, "lk_t05")
    paper = _paper("lk_t05")
    for b in ("pointwise-ref", "pairwise"):
        sel = t[(t["method"] == f"linkage - {b}") & (t["metric"] == "acc_best")]
        if sel.empty:
            continue
        r = sel.iloc[0]
        margin = (_paper_value(paper, method="linkage", judge="mistral", metric="acc_best")
                  - _paper_value(paper, method=b, judge="mistral", metric="acc_best"))
        rows.append(_Row("L3", "webglm", f"WebGLM: LINKAGE - {_name(b)}", "acc_best",
                         str(r["our_judge"] or ""), float(r["ours"]), float(r["ci_low"]),
                         float(r["ci_high"]), int(r["n_questions"]), "questions", "lk_t05",
                         0.0, margin))
    return rows


def _alignment(results: Path) -> list[_Row]:
    t = _read(results, "dq_t02")
    judge = str(json.loads((Path(results) / "dq_t02.json").read_text())["parameters"]["judge"])
    rows = []
    for dataset in DATASETS:
        for b in ("direct_score", "g_eval", "num_povs"):
            sel = t[(t["kind"] == "paired difference") & (t["dataset"] == dataset)
                    & (t["metric"] == f"pd - {b}") & (t["coefficient"] == "spearman")]
            if sel.empty:
                continue
            r = sel.iloc[0]
            rows.append(_Row("D1", dataset, f"P.D. - {_name(b)}", "spearman", judge,
                             float(r["ours"]), float(r["ci_low"]), float(r["ci_high"]),
                             int(r["n_questions"]), "questions", "dq_t02"))
    return rows


def _da_validity(results: Path, judge: str) -> list[_Row]:
    t = _read(results, "dq_t03")
    sel = t[(t["kind"] == "estimate") & (t["method"] == "da_prob") & (t["statistic"] == "auroc")]
    if judge in set(sel["judge"]):
        sel = sel[sel["judge"] == judge]
    rows = []
    for _, r in sel.iterrows():
        rows.append(_Row("D2", "debateqa sample", "D.A. AUROC vs chance",
                         "auroc", str(r["judge"]), float(r["ours"]), float(r["ci_low"]),
                         float(r["ci_high"]), int(r["n_questions"]), "questions", "dq_t03",
                         0.5))
    return rows


def _stability(results: Path) -> list[_Row]:
    rows = []
    for artefact, a_col, b_col, what in (("dq_f03", "backbone_a", "backbone_b", "backbones"),
                                         ("dq_f04", "prompt_a", "prompt_b", "restate prompts")):
        t = _read(results, artefact)
        sel = t[(t["scope"] == "models") & (t["quantity"] == "within_question_spearman")]
        if artefact == "dq_f04":
            sel = sel[sel[a_col] == "R1"]  # the default prompt against each other one
        for _, r in sel.iterrows():
            rows.append(_Row("D3", "debateqa sample",
                             f"{what}: {_short(r[a_col])} vs {_short(r[b_col])}",
                             "within-question spearman", "", float(r["ours"]),
                             float(r["ci_low"]), float(r["ci_high"]), int(r["n_questions"]),
                             "questions", artefact))
    return rows


def _beyond(results: Path, judge: str, seed: int = 0) -> list[_Row]:
    """The judge's 3-shot row and the rank combination, against the paper's best row."""
    from nfeval.metrics.correlation import correlation_rows

    t = _read(results, "lk_t02")
    paper = _paper("lk_t02")
    frame = pd.read_csv(Path(results) / "lk_t02" / "per_candidate.csv",
                        dtype={"mode": str, "our_judge": str, "qid": str, "doc_id": str})
    same = frame[(frame["sample"] == "same items") & (frame["mode"] == "prob")
                 & (frame["our_judge"].fillna("") == judge)]
    rows = []
    for dataset in DATASETS:
        best = paper[(paper["dataset"] == dataset) & (paper["coefficient"] == "spearman")
                     & paper["judge"].isin(["mistral", "chatgpt"])]
        if best.empty:
            continue
        top = best.loc[best["paper"].idxmax()]
        line = float(top["paper"])
        label = f"{line:.3f}"
        sel = t[(t["dataset"] == dataset) & (t["sample"] == "same items") & (t["mode"] == "prob")
                & (t["method"] == "linkage-fewshot") & (t["coefficient"] == "spearman")
                & (t["our_judge"].fillna("") == judge)]
        if len(sel):
            r = sel.iloc[0]
            rows.append(_Row("X", dataset, f"LINKAGE 3-shot vs the paper's best ({label})",
                             "spearman", judge, float(r["ours"]), float(r["ci_low"]),
                             float(r["ci_high"]), int(r["n_questions"]), "questions", "lk_t02",
                             line, line))
        part = same[(same["dataset"] == dataset)
                    & same["method"].isin(["linkage-0shot", "pointwise-ref"])]
        if part["method"].nunique() < 2:
            continue
        wide = part.pivot_table(index=["qid", "doc_id", "grade"], columns="method",
                                values="score").dropna().reset_index()
        ranks = wide.groupby("qid")[["linkage-0shot", "pointwise-ref"]].rank()
        combo = wide[["qid", "doc_id", "grade"]].assign(
            method="combination", score=ranks.mean(axis=1))
        r = correlation_rows(combo, by=["method"], seed=seed)
        r = r[r["coefficient"] == "spearman"].iloc[0]
        rows.append(_Row("X", dataset, "mean rank of LINKAGE and pointwise (refs) vs the "
                         f"paper's best ({label})", "spearman", judge,
                         float(r["ours"]), float(r["ci_low"]), float(r["ci_high"]),
                         int(r["n_questions"]), "questions", "lk_t02", line, line))
    return rows


def claims_table(results: str | Path = RESULTS, *, seed: int = 0) -> pd.DataFrame:
    """Every claim's rows from the committed tables under ``results`` (module doc)."""
    results = Path(results)
    rows, judge = _linkage_table2(results)
    rows += _generated_references(results)
    rows += _alignment(results)
    rows += _da_validity(results, judge)
    rows += _stability(results)
    rows += _beyond(results, judge, seed=seed)
    df = pd.DataFrame([r.as_dict() for r in rows])
    order = {c: i for i, c in enumerate(CLAIMS)}
    df = df.sort_values("claim", key=lambda c: c.map(order), kind="stable")
    return df.reset_index(drop=True)[COLUMNS]


_COLOURS = {"holds": "#2a7d2a", "contradicted": "#b22222", "cannot tell at n": "#555555"}


def forest_plot(table: pd.DataFrame):
    """Every comparison as a point with its 95% interval, grouped by claim; the row's line
    (0, chance, or the paper's best row) as a black tick, the paper's margin as a red diamond."""
    import matplotlib.pyplot as plt

    n = len(table)
    fig, ax = plt.subplots(figsize=(11, 0.32 * n + 1.6))
    y = list(range(n))[::-1]
    for yi, (_, r) in zip(y, table.iterrows()):
        c = _COLOURS[r["verdict"]]
        ax.plot([r["ci_low"], r["ci_high"]], [yi, yi], color=c, lw=1.6)
        ax.plot(r["ours"], yi, "o", color=c, ms=4)
        ax.plot([r["line"]] * 2, [yi - 0.35, yi + 0.35], color="black", lw=1)
        if np.isfinite(r["paper_margin"]):
            ax.plot(r["paper_margin"], yi, "D", color="#d62728", ms=4, mfc="none")
    labels = [f"{r.claim} {r.dataset}: {r.comparison} (n={r.n})" for r in table.itertuples()]
    ax.set_yticks(y, labels, fontsize=7)
    for k, (yi, claim) in enumerate(zip(y, table["claim"])):
        if k and claim != table["claim"].iloc[k - 1]:
            ax.axhline(yi + 0.5, color="#cccccc", lw=0.8)
    ax.set_xlabel("ours with its 95% interval (green: holds, red: contradicted, grey: cannot "
                  "tell); black tick: the line; red diamond: the paper's margin", fontsize=8)
    ax.set_title("The papers' central claims in our committed tables", fontsize=10)
    fig.tight_layout()
    return fig


def _fmt(x, digits: int = 3) -> str:
    return "" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{digits}f}"


def markdown(table: pd.DataFrame) -> str:
    """The claims table as the README shows it (one line per row)."""
    lines = ["| claim | data | comparison | judge | paper | ours (95% CI) | n | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        judge = _short(r.judge).replace("qwen-", "") if isinstance(r.judge, str) else ""
        judge = judge or "-"
        data = str(r.dataset).replace("debateqa sample", "sample")
        lines.append(f"| {r.claim} | {data} | {r.comparison} | {judge} | "
                     f"{_fmt(r.paper_margin)} | {_fmt(r.ours)} ({_fmt(r.ci_low)} to "
                     f"{_fmt(r.ci_high)}) | {r.n} | {r.verdict} |")
    return "\n".join(lines) + "\n"
