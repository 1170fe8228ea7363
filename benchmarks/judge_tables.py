"""Whether a way of computing the 1.5B judge changes the tables a user reads.

Kernel ``judge_table`` of ``python benchmarks/bench.py``. The item-level comparison of
``judge_path`` (an expected rank that moves by a few hundredths) says how far two ways of
computing are apart, not whether a reader would see it; this kernel recomputes two of the
project's real tables with the candidate path and compares them row by row with the same rows
computed from the committed float32 items (read from the store: no float32 computation):

* ``lk_t02`` -- LINKAGE Table 2's ``linkage-0shot`` row of the judge (``prob``) on the first
  ``--table-questions`` judged questions of each dataset (8 candidates each, lk_t02's draw):
  per dataset the mean Kendall, Spearman and Pearson over questions with their intervals, and
  that row minus ROUGE-L on the same items (the comparison the L1 claim reads);
* ``dq_t03`` -- DebateQA Table 3's ``da_prob`` row of the judge on the sample's labelled
  answers (``--table-answers``, 0 for all 160): accuracy, F1, AUROC and MCC with intervals.

A table agrees (``agrees`` yes) when every row's estimate is within ``MEAN_TOL`` of float32's
and no row's verdict moves: the interval's place against the row's line (0 for a correlation
or a difference, 0.5 for AUROC and accuracy; none for F1) is the same (above, below, across).
Each row: the largest difference of an estimate (``max_row_mean_diff``), the verdicts that
moved (``verdict_changes``), the rows compared, the path's items/s, run and CPU. Only a path
whose tables agree on a CPU class can become that class's default
(:func:`judge_paths.choose`).
"""

from __future__ import annotations

import math
import time

import pandas as pd

MEAN_TOL = 0.01
#: The ways of computing whose tables this kernel can recompute (the model API of the
#: notebooks' code: the transformers backend).
TABLE_PATHS = ("hf-float32", "hf-bfloat16")
LINES = {"kendall": 0.0, "spearman": 0.0, "pearson": 0.0, "accuracy": 0.5, "auroc": 0.5,
         "mcc": 0.0}


def _side(row, line: float | None) -> str:
    if line is None or math.isnan(row["ci_low"]) or math.isnan(row["ci_high"]):
        return ""
    return "above" if row["ci_low"] > line else "below" if row["ci_high"] < line else "across"


def _path_model(path: str, judge: str):
    """The judge computed by ``path`` (a transformers path of :func:`judge_paths._load`),
    outside the store (every item computed)."""
    from judge_paths import _load

    if path not in TABLE_PATHS:
        raise SystemExit(f"judge_table: no table path {path!r}; use {' or '.join(TABLE_PATHS)}")
    return _load(path, 0, judge)  # threads: llama.cpp's only


def _stored_model(artefact: str, judge: str):
    """(the store, the judge answered from it): the committed float32 items of ``artefact``
    (weights load only if an item is missing, which the caller refuses)."""
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.store import use_store

    import tempfile

    # reads every committed folder; a missing item would be written to a scratch folder
    store = use_store(artefact, tempfile.mkdtemp(prefix="nfeval-judge-table-"))
    return store, get_profile("embedded").load(judge)


def lk_t02_rows(model, n_questions: int, progress: bool) -> tuple[pd.DataFrame, int]:
    """The linkage-0shot rows, and linkage-0shot minus ROUGE-L on the same items (paired per
    question), per dataset and coefficient."""
    from nfeval.data import load_linkage
    from nfeval_repro.linkage.table2 import judge_frame, judged_items
    from nfeval.linkage.lexical import split_scores
    from nfeval.metrics.correlation import correlation_rows, per_question
    from nfeval.metrics.intervals import mean_interval

    rows, items = [], 0
    for dataset in ("antique", "trec-dl-nf"):
        questions = load_linkage(dataset)
        sample = judged_items(questions, dataset, seed=0, limit=n_questions, max_candidates=8)
        judged, _ = judge_frame(model, questions, sample, dataset=dataset,
                                rows=["linkage-0shot"], mode="prob", seed=0, shots=3,
                                progress=progress)
        items += len(judged)
        rouge = split_scores(sample.judged, questions, methods=["rougeL"])
        frame = pd.concat([judged[["method", "qid", "doc_id", "grade", "score"]],
                           rouge[["method", "qid", "doc_id", "grade", "score"]]])
        own = correlation_rows(judged, by=("method",), seed=0)
        rows += [{"dataset": dataset, "coefficient": r["coefficient"], "row": "linkage-0shot",
                  "ours": r["ours"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                  "n_questions": r["n_questions"]} for _, r in own.iterrows()]
        pq = per_question(frame)
        for coef, g in pq.groupby("coefficient", sort=False):
            w = g.pivot(index="qid", columns="method", values="value").dropna()
            d = (w["linkage-0shot"] - w["rougeL"]).to_numpy()
            iv = mean_interval(d, seed=0)
            rows.append({"dataset": dataset, "coefficient": coef,
                         "row": "linkage-0shot - rougeL", "ours": iv.estimate,
                         "ci_low": iv.low, "ci_high": iv.high, "n_questions": len(d)})
    return pd.DataFrame(rows), items


def dq_t03_rows(model, n_answers: int, progress: bool) -> tuple[pd.DataFrame, int]:
    """The judge's da_prob statistics on the labelled sample."""
    from nfeval.data.sample import load_sample
    from nfeval.debateqa.da import da_scores
    from nfeval_repro.debateqa.tables import DA_JUDGE_RUNS, da_frame, da_rows

    sample = load_sample()
    labels = sample.labels.rename(columns={"id": "qid"})
    labels["key"] = labels["answer_set"] + ":" + labels["qid"].astype(str)
    if n_answers:
        labels = labels.head(n_answers)
    questions = {k: sample.items[q].question for k, q in zip(labels["key"], labels["qid"])}
    answers = {k: sample.answers[s][q]
               for k, s, q in zip(labels["key"], labels["answer_set"], labels["qid"])}
    res = da_scores(model, questions, answers, progress=progress, **DA_JUDGE_RUNS["da_prob"])
    per_answer = labels[["qid", "key", "label"]].merge(da_frame(res, method="da_prob"),
                                                       on="key")
    rows = da_rows(per_answer, by=["method"], seed=0)
    rows = rows.rename(columns={"statistic": "coefficient", "method": "row"})
    return rows.assign(dataset="sample")[["dataset", "coefficient", "row", "ours", "ci_low",
                                          "ci_high", "n_questions"]], len(res)


WORKLOADS = {"lk_t02": lk_t02_rows, "dq_t03": dq_t03_rows}
#: The judge_path workload each table stands for (a path agrees per kind of work).
KIND = {"lk_t02": "linkage", "dq_t03": "da"}


def _paired(ref: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The two tables' rows side by side (suffixes ``_ref``, ``_new``); the same rows or an
    error."""
    both = ref.merge(new, on=["dataset", "coefficient", "row"], suffixes=("_ref", "_new"))
    if len(both) != len(ref) or len(both) != len(new):
        raise RuntimeError("the two tables have different rows")
    return both


def compare(ref: pd.DataFrame, new: pd.DataFrame) -> tuple[float, list[str]]:
    """The largest estimate difference and the rows whose verdict moved (:func:`largest`
    names the row of the largest difference)."""
    gap, moved = 0.0, []
    for _, r in _paired(ref, new).iterrows():
        gap = max(gap, abs(r["ours_ref"] - r["ours_new"]))
        line = 0.0 if " - " in r["row"] else LINES.get(r["coefficient"])
        a = _side({"ci_low": r["ci_low_ref"], "ci_high": r["ci_high_ref"]}, line)
        b = _side({"ci_low": r["ci_low_new"], "ci_high": r["ci_high_new"]}, line)
        if a != b:
            moved.append(f"{r['dataset']} {r['row']} {r['coefficient']}: {a} -> {b}")
    return gap, moved


def largest(ref: pd.DataFrame, new: pd.DataFrame) -> str:
    """The row whose estimate moved most, as ``dataset row coefficient: a -> b``."""
    both = _paired(ref, new)
    r = both.loc[(both["ours_ref"] - both["ours_new"]).abs().idxmax()]
    return (f"{r['dataset']} {r['row']} {r['coefficient']}: {r['ours_ref']:.4f} -> "
            f"{r['ours_new']:.4f}")


def bench_judge_tables(args, csv_path, write_row) -> list[dict]:
    """Recompute each workload's table with each ``--table-paths`` path; one row per pair."""
    from pathlib import Path

    from nfeval.machine import cpu_model, machine_tag
    from nfeval_repro.store import close_store

    from judge_paths import run_stamp

    run = run_stamp()
    paths = [p.strip() for p in args.table_paths.split(",") if p.strip()]
    sizes = {"lk_t02": 1 if args.quick else args.table_questions,
             "dq_t03": 4 if args.quick else args.table_answers}
    out = []
    for name, fn in WORKLOADS.items():
        store, stored = _stored_model(name, args.path_judge)
        ref, _ = fn(stored, sizes[name], False)
        missing = store.misses
        close_store()
        if missing:
            raise SystemExit(f"judge_table: {missing} float32 items of {name} are not in the "
                             "committed store; the reference must be the committed table")
        del stored
        for path in paths:
            model = _path_model(path, args.path_judge)
            t = time.perf_counter()
            new, n_items = fn(model, sizes[name], not args.quick)
            secs = time.perf_counter() - t
            gap, moved = compare(ref, new)
            agrees = gap <= MEAN_TOL and not moved
            row = {"kernel": "judge_table", "model": f"{args.path_judge}/{path}",
                   "workload": f"{name}-{sizes[name]}@{machine_tag()}",
                   "seconds": f"{secs:.1f}", "items_per_s": f"{n_items / secs:.4f}",
                   "max_row_mean_diff": f"{gap:.4f}", "verdict_changes": str(len(moved)),
                   "rows_compared": str(len(ref)), "agrees": "yes" if agrees else "no",
                   "run": run, "cpu": cpu_model()}
            out.append(row)
            print(f"[judge_table] {name} ({sizes[name]}) {path}: {len(ref)} rows, largest "
                  f"estimate difference {gap:.4f} ({largest(ref, new)}), verdicts moved: "
                  f"{len(moved)}"
                  + "".join(f"\n    {m}" for m in moved) + f"; agrees: {row['agrees']}",
                  flush=True)
            del model
    if csv_path is not None:
        for r in out:
            write_row(Path(csv_path), r)
        print(f"wrote {csv_path}")
    return out
