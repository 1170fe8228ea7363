"""Whether a way of computing the 1.5B judge changes the tables a user reads.

Kernel ``judge_table`` of ``python benchmarks/bench.py``. The item-level comparison of
``judge_path`` (an expected rank that moves by a few hundredths) says how far two ways of
computing are apart, not whether a reader would see it; this kernel recomputes two of the
project's real tables with the candidate path and compares them row by row with the same rows
computed from the committed float32 items (read from the store: no float32 computation):

* ``lk_t02`` -- LINKAGE Table 2's judge rows that the L1 and L2 claims read (``prob``:
  LINKAGE 0-shot and 3-shot, pointwise with and without references) on the first
  ``--table-questions`` judged questions of each dataset (8 candidates each, lk_t02's draw;
  ``--table-datasets`` narrows): per dataset the mean Kendall, Spearman and Pearson over
  questions with their intervals, each LINKAGE row minus ROUGE-L on the same items (L1) and
  minus each pointwise row (L2). Its rows come in two kinds, each its own bench row:
  ``linkage`` (the LINKAGE rows and LINKAGE minus ROUGE-L) and ``pointwise`` (the pointwise
  rows and every difference with one), so a path can agree for the listwise judge and not
  for the pointwise one;
* ``dq_t03`` -- DebateQA Table 3's ``da_prob`` row of the judge on the sample's labelled
  answers (``--table-answers``, 0 for all 160): accuracy, F1, AUROC and MCC with intervals.

``--table-from-store`` reads the path's items from the committed store too (those that
``make evidence``'s bfloat16 stages stored), so the comparison needs no weights and takes
seconds; an item missing there is an error, not a computation.

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


#: The dtype of each path whose items the store can hold (``--table-from-store``).
STORE_DTYPES = {"hf-float32": None, "hf-bfloat16": "bfloat16"}


def _stored_model(artefact: str, judge: str, path: str = "hf-float32"):
    """(the store, the judge answered from it): the committed items of ``artefact`` computed
    by ``path`` (float32: the committed tables' own; weights load only if an item is missing,
    which the caller refuses)."""
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.store import use_store

    import tempfile

    if path not in STORE_DTYPES:
        raise SystemExit(f"judge_table: the store holds no items of path {path!r}; use "
                         f"{' or '.join(STORE_DTYPES)}")
    dtype = STORE_DTYPES[path]
    # reads every committed folder; a missing item would be written to a scratch folder
    store = use_store(artefact, tempfile.mkdtemp(prefix="nfeval-judge-table-"))
    return store, get_profile("embedded").load(judge, **({"dtype": dtype} if dtype else {}))


#: The judge rows of lk_t02 that the L1 and L2 claims read.
LK_T02_ROWS = ("linkage-0shot", "linkage-fewshot", "pointwise-ref", "pointwise-noref")
DATASETS = ("antique", "trec-dl-nf")


def row_kind(row: str) -> str:
    """``pointwise`` for a row that is or involves a pointwise row, else ``linkage``."""
    return "pointwise" if "pointwise" in row else "linkage"


def lk_t02_rows(model, n_questions: int, progress: bool,
                datasets: tuple[str, ...] = DATASETS) -> tuple[pd.DataFrame, int]:
    """:data:`LK_T02_ROWS`, each LINKAGE row minus ROUGE-L and minus each pointwise row on the
    same items (paired per question), per dataset and coefficient; column ``kind``
    (:func:`row_kind`)."""
    from nfeval.data import load_linkage
    from nfeval_repro.linkage.same_items import JudgeCall, judge_frame, judged_items
    from nfeval.linkage.lexical import split_scores
    from nfeval.metrics.correlation import correlation_rows, per_question
    from nfeval.metrics.intervals import mean_interval

    cols = ["method", "qid", "doc_id", "grade", "score"]
    linkage = [r for r in LK_T02_ROWS if r.startswith("linkage")]
    pairs = [(a, b) for a in linkage for b in ("rougeL", *[r for r in LK_T02_ROWS
                                                          if r.startswith("pointwise")])]
    rows, items = [], 0
    for dataset in datasets:
        questions = load_linkage(dataset)
        sample = judged_items(questions, dataset, seed=0, limit=n_questions, max_candidates=8)
        judged, _ = judge_frame(model, questions, sample, dataset=dataset,
                                rows=list(LK_T02_ROWS),
                                call=JudgeCall(mode="prob", seed=0, shots=3), progress=progress)
        items += len(judged)
        rouge = split_scores(sample.judged, questions, methods=["rougeL"])
        frame = pd.concat([judged[cols], rouge[cols]])
        own = correlation_rows(judged, by=("method",), seed=0)
        rows += [{"dataset": dataset, "coefficient": r["coefficient"], "row": r["method"],
                  "ours": r["ours"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
                  "n_questions": r["n_questions"]} for _, r in own.iterrows()]
        pq = per_question(frame)
        for coef, g in pq.groupby("coefficient", sort=False):
            w = g.pivot(index="qid", columns="method", values="value")
            for a, b in pairs:
                d = (w[a] - w[b]).dropna().to_numpy()
                iv = mean_interval(d, seed=0)
                rows.append({"dataset": dataset, "coefficient": coef, "row": f"{a} - {b}",
                             "ours": iv.estimate, "ci_low": iv.low, "ci_high": iv.high,
                             "n_questions": len(d)})
    out = pd.DataFrame(rows)
    return out.assign(kind=out["row"].map(row_kind)), items


def dq_t03_rows(model, n_answers: int, progress: bool) -> tuple[pd.DataFrame, int]:
    """The judge's da_prob statistics on the labelled sample."""
    from nfeval.data.sample import load_sample
    from nfeval.debateqa.da import da_scores
    from nfeval_repro.debateqa.da_labels import DA_JUDGE_RUNS, da_frame, da_rows

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
    return rows.assign(dataset="sample", kind="da")[["dataset", "coefficient", "row", "ours",
                                                     "ci_low", "ci_high", "n_questions",
                                                     "kind"]], len(res)


WORKLOADS = {"lk_t02": lk_t02_rows, "dq_t03": dq_t03_rows}
#: The kind of work each bench row's table stands for (a path agrees per kind of work), by
#: the workload's name before its size: ``lk_t02:linkage-30`` is the LINKAGE rows of lk_t02's
#: table; ``lk_t02-30`` (rows of earlier runs) held its linkage-0shot rows only.
KIND = {"lk_t02": "linkage", "lk_t02:linkage": "linkage", "lk_t02:pointwise": "pointwise",
        "dq_t03": "da", "dq_t03:da": "da"}


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
    """Recompute each workload's table (``--tables``) with each ``--table-paths`` path (or read
    the path's items from the store: ``--table-from-store``); one bench row per workload, kind
    of rows and path."""
    from pathlib import Path

    from nfeval.machine import cpu_model, machine_tag
    from nfeval_repro.store import close_store

    from judge_paths import run_stamp

    run = run_stamp()
    paths = [p.strip() for p in args.table_paths.split(",") if p.strip()]
    names = [w.strip() for w in args.tables.split(",") if w.strip()]
    if unknown := [w for w in names if w not in WORKLOADS]:
        raise SystemExit(f"judge_table: no table {unknown[0]!r}; use {', '.join(WORKLOADS)}")
    datasets = tuple(d.strip() for d in args.table_datasets.split(",") if d.strip()) or DATASETS
    if unknown := [d for d in datasets if d not in DATASETS]:
        raise SystemExit(f"judge_table: no dataset {unknown[0]!r}; use {', '.join(DATASETS)}")
    from_store = args.table_from_store
    sizes = {"lk_t02": 1 if args.quick else args.table_questions,
             "dq_t03": 4 if args.quick else args.table_answers}
    extra = {"lk_t02": {"datasets": datasets}, "dq_t03": {}}

    def table(name, model, progress):
        return WORKLOADS[name](model, sizes[name], progress, **extra[name])

    def stored_table(name, path):
        store, stored = _stored_model(name, args.path_judge, path)
        got, n_items = table(name, stored, False)
        missing = store.misses
        close_store()
        if missing:
            raise SystemExit(f"judge_table: {missing} {path} items of {name} are not in the "
                             "committed store; "
                             + ("the reference must be the committed table" if path == "hf-float32"
                                else "drop --table-from-store to compute them"))
        return got, n_items

    out = []
    for name in names:
        ref, _ = stored_table(name, "hf-float32")
        size = f"{sizes[name]}" + ("" if name != "lk_t02" or datasets == DATASETS
                                   else "-" + "+".join(datasets))
        for path in paths:
            t = time.perf_counter()
            if from_store:
                new, n_items = stored_table(name, path)
            else:
                model = _path_model(path, args.path_judge)
                new, n_items = table(name, model, not args.quick)
                del model
            secs = time.perf_counter() - t
            for kind in dict.fromkeys(ref["kind"]):
                r_ref, r_new = ref[ref["kind"] == kind], new[new["kind"] == kind]
                gap, moved = compare(r_ref, r_new)
                agrees = gap <= MEAN_TOL and not moved
                row = {"kernel": "judge_table", "model": f"{args.path_judge}/{path}",
                       "workload": f"{name}:{kind}-{size}@{machine_tag()}",
                       "seconds": f"{secs:.1f}",
                       "items_per_s": "" if from_store else f"{n_items / secs:.4f}",
                       "max_row_mean_diff": f"{gap:.4f}", "verdict_changes": str(len(moved)),
                       "rows_compared": str(len(r_ref)), "agrees": "yes" if agrees else "no",
                       "run": run, "cpu": cpu_model()}
                out.append(row)
                print(f"[judge_table] {name} ({size}, {kind} rows) {path}"
                      f"{' (from the store)' if from_store else ''}: {len(r_ref)} rows, "
                      f"largest estimate difference {gap:.4f} ({largest(r_ref, r_new)}), "
                      f"verdicts moved: {len(moved)}"
                      + "".join(f"\n    {m}" for m in moved) + f"; agrees: {row['agrees']}",
                      flush=True)
    if csv_path is not None:
        for r in out:
            write_row(Path(csv_path), r)
        print(f"wrote {csv_path}")
    return out
