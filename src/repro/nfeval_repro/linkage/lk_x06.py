"""lk_x06, beyond both papers: what ``--guard screen`` costs in agreement with human grades.

``--guard screen`` (:func:`nfeval.screen.guarded_text`) replaces every sentence that
:mod:`nfeval.screen` flags by a marker and changes nothing else, so an answer with nothing
flagged reaches the judge as written and keeps its score. Its cost on real answers is then
measured exactly, with no other answer rejudged: every candidate of lk_t02's committed
every-candidate draw is screened against the question and the references its judge sees
(the sentences' signals through the item store, :func:`nfeval_repro.linkage.lk_x04.signals`),
the changed candidates are rejudged under the guard by lk_t02's judge in its dtype (every
claim row: LINKAGE 0-shot and 3-shot, pointwise with and without references, pairwise as the
release runs it), and each row's per-question Spearman with the human grades is compared,
guard minus off, paired over every question of the draw (a question with no changed answer
contributes 0).

The table: per dataset and row, the paired difference with its 95% interval and n; how many
answers the guard changed (and which signals flagged them). What the screen adds per answer
in time is `make bench`'s (kernel ``guard_screen``): a timing belongs to a machine, not to a
committed table.
The notebook ``lk_x06_guard_cost.ipynb`` calls :func:`run`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval.metrics.correlation import paired_rows
from nfeval_repro.paths import RESULTS
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]  # cost_table and figure: the notebook's and the tests' too

ID = "lk_x06"
#: The judge rows whose cost is measured: the claims' rows of lk_t02.
ROWS = ("linkage-0shot", "linkage-fewshot", "pointwise-noref", "pointwise-ref",
        "pairwise-release")
COLUMNS = ["dataset", "method", "guard", "ours", "ci_low", "ci_high", "n_questions",
           "n_questions_changed", "n_answers", "n_changed", "share_changed", "by_pattern",
           "by_relevance", "by_evaluator"]


def _screen(items: dict, questions: dict) -> pd.DataFrame:
    """Every judged candidate's screen verdict (module doc)."""
    from nfeval_repro.linkage import lk_x04

    texts, contexts, rows = [], [], []
    for dataset, sample in items.items():
        qtext = {q.qid: q.question for q in questions[dataset]}
        for split in sample.judged:
            ctx = [qtext[split.qid], *[r.text for r in split.references if r.text.strip()]]
            for c in split.candidates:
                texts.append(c.text)
                contexts.append(ctx)
                rows.append({"dataset": dataset, "qid": split.qid, "doc_id": c.doc_id})
    sents = lk_x04.signals(texts, contexts)
    for row, ss in zip(rows, sents):
        why = set()
        for x in ss:
            why |= set(lk_x04.reasons_of(x))
        row["reasons"] = ";".join(sorted(why))
        row["changed"] = bool(why)
    return pd.DataFrame(rows)


def first_questions(table: dict[str, int], limit: int) -> dict[str, int]:
    """Per dataset, the questions of lk_t02's draw to measure: its table's limit (0: every
    judgeable question), cut to ``limit`` when ``limit`` > 0."""
    return {d: (int(n) if limit <= 0 else limit if int(n) <= 0 else min(int(n), limit))
            for d, n in table.items()}


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x06_guard_cost.ipynb`` is written from them."""

    #: run profile (lk_t02's judge loads as the profile loads it)
    profile: str = "embedded"
    #: lk_t02's draw and the bootstrap
    seed: int = 0
    #: the guard measured (the one that changes only what it flags)
    guard: str = "screen"
    #: lk_t02's first questions per dataset only (0: every question of its committed table, 345
    #: ANTIQUE and 53 TREC-DL-NF)
    limit: int = 0


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The guard's cost on lk_t02's committed every-candidate draw (module doc); ``limit``:
    its first questions per dataset only (0: all of the committed table's). The judge's
    screen reads the sentences' signals through the item store, as :func:`_screen` does
    (:func:`nfeval.screen.signal_steps`)."""
    from nfeval.screen import signal_steps
    from nfeval_repro.store import cached_steps

    with signal_steps(cached_steps):
        return _run(config, progress)


def _run(config: Config, progress: bool) -> Experiment:
    import dataclasses

    from nfeval.screen import guarded_text
    from nfeval_repro.linkage.lk_x05 import _committed_frame
    from nfeval_repro.linkage.same_items import JudgeCall, judge_frame, judged_items

    if config.guard != "screen":
        raise NfevalError(f"lk_x06 measures --guard screen (it changes only the answers it "
                          f"flags, so nothing else needs rejudging), not {config.guard!r}")
    committed, judge, params = _committed_frame(RESULTS)
    if int(params.get("max_candidates", -1)) != 0:
        raise NfevalError("lk_x06 measures the guard on lk_t02's every-candidate draw; the "
                          "committed lk_t02 table is not one (max_candidates != 0)")
    limits = first_questions(dict(params["limits"]), config.limit)
    datasets = [d for d in ("antique", "trec-dl-nf") if d in limits]
    questions = {d: load_linkage(d) for d in datasets}
    items = {d: judged_items(questions[d], d, seed=config.seed, limit=int(limits[d]),
                             max_candidates=0) for d in datasets}
    screened = _screen(items, questions)
    if progress:
        for d in datasets:
            part = screened[screened["dataset"] == d]
            print(f"{d}: {int(part['changed'].sum())} of {len(part)} answers changed by the "
                  f"screen", flush=True)
    # the library's guard must change every answer the screen flags here
    qtexts = {d: {q.qid: q.question for q in questions[d]} for d in datasets}
    where = {(d, split.qid, c.doc_id): (split, c) for d in datasets
             for split in items[d].judged for c in split.candidates}
    changed = screened[screened["changed"]]
    for r in changed.itertuples():
        split, c = where[(r.dataset, r.qid, r.doc_id)]
        shown = guarded_text(c.text, config.guard, question=qtexts[r.dataset][split.qid],
                             references=[x.text for x in split.references])
        if shown == c.text:
            raise NfevalError(f"the screen flagged {r.dataset}/{r.qid}/{r.doc_id} but the "
                              f"guard left it unchanged: the two disagree")
    judged = set(zip(screened["dataset"], screened["qid"]))
    own = committed[committed["method"].isin(ROWS) & (committed["our_judge"] == judge)
                    & (committed["mode"] == "prob")]
    own = own[[k in judged for k in zip(own["dataset"], own["qid"])]]
    from nfeval.screen import THRESHOLDS
    from nfeval_repro.tables import Signature

    frames = []
    signatures = [Signature(metric="guard-cost", variant=config.guard, seed=config.seed,
                            n=len(screened),
                            extra={"embedder": "all-minilm-l6-v2",
                                   "thresholds": {"relevance": THRESHOLDS.relevance,
                                                  "evaluator": THRESHOLDS.evaluator}})]
    if len(changed):
        prof = get_profile(config.profile)
        model = prof.load(judge, dtype=str(params.get("judge_dtype") or "bfloat16"))
        for d in datasets:
            keep = set(zip(changed.loc[changed["dataset"] == d, "qid"],
                           changed.loc[changed["dataset"] == d, "doc_id"]))
            subs = []
            for split in items[d].judged:
                cands = tuple(c for c in split.candidates if (split.qid, c.doc_id) in keep)
                if cands:
                    subs.append(dataclasses.replace(split, candidates=cands))
            if not subs:
                continue
            part, sigs = judge_frame(model, questions[d], items[d], dataset=d, rows=ROWS,
                                     call=JudgeCall(mode="prob", seed=config.seed,
                                                    shots=int(params.get("shots", 3))),
                                     splits=subs, guard=config.guard, progress=progress)
            frames.append(part)
            signatures += sigs
    rejudged = (pd.concat(frames, ignore_index=True) if frames
                else own.iloc[0:0])
    table = cost_table(own, rejudged, screened, guard=config.guard, seed=config.seed)
    return Experiment(
        ID, table, id_columns=["dataset", "method", "guard"], interval="questions",
        signatures=signatures,
        parameters=dict(guard=config.guard, judge=judge, limits=limits,
                        judge_dtype=str(params.get("judge_dtype") or "")),
        notes="ours: the row's mean per-question Spearman with the human grades under the "
              "guard minus without it, paired bootstrap over every question of lk_t02's "
              "every-candidate draw (unchanged answers keep their committed scores, so a "
              "question with no changed answer contributes 0); n_changed: answers with a "
              "sentence the screen flags (by_*: which signal flagged them).",
        frames={"screened": screened, "rejudged": rejudged})


def cost_table(own: pd.DataFrame, rejudged: pd.DataFrame, screened: pd.DataFrame, *,
               guard: str, seed: int = 0) -> pd.DataFrame:
    """Per dataset and row: guard minus off (module doc), with the screen's counts."""
    key = ["dataset", "method", "qid", "doc_id"]
    guarded = own.merge(rejudged[key + ["score"]].rename(columns={"score": "guarded"}),
                        on=key, how="left")
    if guarded["guarded"].notna().sum() != len(rejudged):
        raise NfevalError("rejudged answers missing from lk_t02's committed rows")
    guarded["score"] = guarded["guarded"].where(guarded["guarded"].notna(), guarded["score"])
    both = pd.concat([own.assign(method=own["method"] + "@off"),
                      guarded.drop(columns="guarded").assign(
                          method=guarded["method"] + f"@{guard}")], ignore_index=True)
    pairs = [(f"{r}@{guard}", f"{r}@off") for r in ROWS]
    got = paired_rows(both, pairs, by=["dataset"], seed=seed, coefficients=["spearman"])
    out = []
    for r in got.itertuples():
        row = r.method.split("@")[0]
        d = r.dataset
        sc = screened[screened["dataset"] == d]
        ch = sc[sc["changed"]]
        out.append({"dataset": d, "method": row, "guard": guard, "ours": r.ours,
                    "ci_low": r.ci_low, "ci_high": r.ci_high,
                    "n_questions": int(r.n_questions),
                    "n_questions_changed": int(ch["qid"].nunique()),
                    "n_answers": len(sc), "n_changed": len(ch),
                    "share_changed": len(ch) / max(len(sc), 1),
                    **{f"by_{s}": int(ch["reasons"].str.contains(s).sum())
                       for s in ("pattern", "relevance", "evaluator")}})
    return pd.DataFrame(out, columns=COLUMNS)


def figure(table: pd.DataFrame):
    """Each row's cost (guard minus off, 95% interval) per dataset, 0 marked."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from nfeval_repro.plots import DATASET_NAMES, FIGURE_WIDTH, FONT

    fig, axes = plt.subplots(1, 2, figsize=(FIGURE_WIDTH, 3.2), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, d in zip(axes[0], ("antique", "trec-dl-nf")):
        part = table[table["dataset"] == d].reset_index(drop=True)
        y = np.arange(len(part))[::-1]
        ax.errorbar(part["ours"], y, xerr=[part["ours"] - part["ci_low"],
                                           part["ci_high"] - part["ours"]],
                    fmt="o", color="#1f5fa8", ms=4, capsize=3)
        ax.axvline(0, color="black", lw=0.8, ls="--")
        ax.xaxis.set_major_locator(MaxNLocator(4))  # four-decimal ticks: few, or they touch
        ax.set_yticks(y, part["method"], fontsize=FONT["tick"])
        n = int(part["n_questions"].max()) if len(part) else 0
        k = int(part["n_changed"].max()) if len(part) else 0
        total = int(part["n_answers"].max()) if len(part) else 0
        ax.set_title(f"{DATASET_NAMES[d]}: n = {n} questions, "
                     f"{k} of {total} answers changed", fontsize=FONT["tick"])
        ax.tick_params(labelsize=FONT["tick"])
        ax.set_xlabel("Spearman, guard minus off", fontsize=FONT["label"])
    fig.suptitle("What --guard screen costs in agreement with human grades (95% CI)",
                 fontsize=FONT["suptitle"])
    return fig
