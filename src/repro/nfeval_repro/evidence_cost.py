"""What ``make evidence`` costs and how far its items travel between machines.

``python -m nfeval_repro.evidence_cost --measure DIR`` (``make evidence-cost``) answers "how long would
``make evidence`` take here from an empty store", without spending those hours: it
recomputes a small probe of every artefact (:data:`nfeval_repro.evidence.PROBE`: one to three
questions, every kind of item the plan computes) into ``DIR``, with nothing read from the
committed store. Probe items are the plan's first items (same key: same inputs, same
model), so each committed store file's item count times the mean seconds per item of its
probe items projects the item time of the whole plan on this machine (the seconds the store
recorded are shown beside it, not scaled: they were measured on several machines, some
busy); the plan's stages rerun from the committed store (every item read, nothing computed)
give the rest (loading data, lexical metrics, bootstraps, figures). Run it with nothing else
on the machine.

It ends by comparing the probe's items with the committed ones, which were recorded on
other machines (``--agree DIR`` does only that, for any folder of recomputed items): per
store file and recording CPU class, the largest difference of a number and how many
generated texts came out the same.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nfeval_repro.evidence import (BUDGET_S, PLAN, PROBE, read_items, run, stop_on_interrupt,
                             split_ids, unknown_ids)
from nfeval_repro.paths import RESULTS, ROOT


def project(committed: dict, probe: dict) -> list[dict]:
    """Per committed store file of the plan: its items, the seconds recorded when they were
    computed, and what computing them would take here.

    ``committed`` and ``probe`` are :func:`read_items` of the committed results and of the
    probe's recomputation. A file's projection is its item count times the mean seconds per
    item of the probe's items that the file holds (``matched``; none: NaN). The recorded
    seconds are not scaled: they were measured on several machines, some busy with two runs,
    so one ratio does not carry from the probe's items to the rest of a file.
    """
    rows = []
    for a, _ in PLAN:
        for f, ent in sorted(committed.get(a, {}).items()):
            mine = probe.get(a, {}).get(f, {})
            secs = [s for k, (_, s) in mine.items() if k in ent]
            per = sum(secs) / len(secs) if secs else float("nan")
            rows.append({"artefact": a, "file": f, "items": len(ent),
                         "recorded_s": round(sum(s for _, s in ent.values()), 1),
                         "recorded_on": " ".join(sorted({m for m, _ in ent.values()})),
                         "matched": len(secs), "probe_s_per_item": round(per, 4),
                         "projected_s": round(per * len(ent), 1)})
    return rows


def _numbers(v) -> list[float]:
    """The numbers of a stored value, in a fixed order (texts and None left out)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return []
    if isinstance(v, (int, float)):
        return [float(v)]
    if isinstance(v, list):
        return [x for e in v for x in _numbers(e)]
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _numbers(v[k])]
    return []


def _texts(v) -> list[str]:
    """The texts of a stored value (generated answers, judge replies), in a fixed order."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [x for e in v for x in _texts(e)]
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _texts(v[k])]
    return []


def agreement(committed: Path, recomputed: Path) -> list[dict]:
    """How far items recomputed here are from the committed ones, per store file and per
    machine class that recorded the committed item.

    ``committed`` and ``recomputed`` are results folders (``<folder>/<artefact>/items/``);
    only keys both hold are compared. Per group: ``items``; ``max_abs_diff``, the largest
    absolute difference of their numbers; ``max_rel_diff``, the same relative to the
    committed number (at least 1: a continuation's total log-probability sums hundreds of
    tokens, so its absolute difference is larger); ``texts`` and ``texts_equal``, the items
    holding text and how many of them came out the same (greedy decoding of a quantized
    model may not).
    """
    from nfeval_repro.store import read_records

    rows = []
    for path in sorted(Path(recomputed).glob("*/items/*.jsonl")):
        artefact = path.parent.parent.name
        mine = Path(committed) / artefact / "items" / path.name
        if not mine.is_file():
            continue
        ref: dict[str, dict] = {}
        for rec in read_records(mine):
            ref.setdefault(rec["k"], rec)
        groups: dict[str, dict] = {}
        for rec in read_records(path):
            old = ref.pop(rec["k"], None)  # a key recomputed twice counts once
            if old is None:
                continue
            g = groups.setdefault(str(old.get("m", "?")), {
                "artefact": artefact, "file": path.name, "recorded_on": str(old.get("m", "?")),
                "items": 0, "max_abs_diff": 0.0, "max_rel_diff": 0.0, "shape_differs": 0,
                "texts": 0, "texts_equal": 0})
            g["items"] += 1
            a, b = _numbers(rec["v"]), _numbers(old["v"])
            if len(a) != len(b):
                g["shape_differs"] += 1
            for x, y in zip(a, b):
                if math.isnan(x) and math.isnan(y):
                    continue
                d = abs(x - y)
                g["max_abs_diff"] = max(g["max_abs_diff"], d)
                g["max_rel_diff"] = max(g["max_rel_diff"], d / max(abs(y), 1.0))
            ta, tb = _texts(rec["v"]), _texts(old["v"])
            if ta or tb:
                g["texts"] += 1
                g["texts_equal"] += ta == tb
        rows += [groups[m] for m in sorted(groups)]
    return rows


def print_agreement(rows: list[dict], path: Path) -> None:
    fields = ["artefact", "file", "recorded_on", "items", "max_abs_diff", "max_rel_diff",
              "shape_differs", "texts", "texts_equal"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=fields)
        out.writeheader()
        out.writerows(rows)
    print("\nitems recomputed here against the committed ones (per machine class that recorded "
          "them):")
    for r in rows:
        text = f"  texts equal {r['texts_equal']}/{r['texts']}" if r["texts"] else ""
        print(f"  {r['artefact']:<8} {r['file'][:48]:<48} {r['recorded_on']:<32} "
              f"n={r['items']:<4} max|diff| {r['max_abs_diff']:.1e} (relative "
              f"{r['max_rel_diff']:.1e}){text}")
    numeric = [r["max_rel_diff"] for r in rows if r["items"] > r["texts"]]
    if numeric:
        print(f"largest relative difference of a number: {max(numeric):.1e} (the committed "
              f"tables are compared at 1e-4); table: {path}")


def measure(folder: Path, ids: Sequence[str]) -> int:
    """``--measure``: probe, rerun of the stages from the store, projection (module doc)."""
    import os

    from nfeval.machine import machine_tag

    folder = Path(folder).resolve()
    if folder == ROOT.resolve() or ROOT.resolve() in folder.parents:
        print(f"nfeval_repro.evidence_cost: --measure needs a scratch folder outside the repository, not "
              f"{folder}", file=sys.stderr)
        return 2
    store = folder / "probe-items"
    os.environ["NFEVAL_STORE"], os.environ["NFEVAL_STORE_READ"] = str(store), "own"
    t = time.time()
    try:
        probe_wall = run(ids, folder / "probe", {a: (PROBE[a],) for a in ids})
    finally:
        del os.environ["NFEVAL_STORE"], os.environ["NFEVAL_STORE_READ"]
    print(f"probe: {time.time() - t:.0f} s", flush=True)
    t = time.time()
    overhead = run(ids, folder / "rebuild")
    print(f"stages from the committed store: {time.time() - t:.0f} s", flush=True)
    computed = read_items(folder / "rebuild" / RESULTS.relative_to(ROOT))
    rows = project({a: v for a, v in read_items(RESULTS).items() if a in ids}, read_items(store))
    fields = ["artefact", "file", "items", "recorded_s", "recorded_on", "matched",
              "probe_s_per_item", "projected_s"]
    with open(folder / "evidence_cost.csv", "w", newline="", encoding="utf-8") as fh:
        out = csv.DictWriter(fh, fieldnames=fields)
        out.writeheader()
        out.writerows(rows)
        out.writerows({"artefact": a, "file": "stages from the store", "recorded_on": machine_tag(),
                       "projected_s": round(overhead[a], 1)} for a in ids)
    items_s = sum(r["projected_s"] for r in rows if r["projected_s"] == r["projected_s"])
    recorded = sum(r["recorded_s"] for r in rows)
    total = items_s + sum(overhead.values())
    print(f"\nmachine {machine_tag()}; probe wall {sum(probe_wall.values()):.0f} s")
    for a in ids:
        part = [r for r in rows if r["artefact"] == a]
        print(f"{a:<8} recorded {sum(r['recorded_s'] for r in part):>8.0f} s  projected items "
              f"{sum(r['projected_s'] for r in part):>8.0f} s  stages from the store "
              f"{overhead[a]:>6.0f} s")
    unmatched = [f"{r['artefact']}/{r['file']}" for r in rows if not r["matched"]]
    if unmatched:
        print(f"no probe item matched (left out of the projection): {unmatched}")
    if any(computed.values()):
        print(f"warning: the committed store lacks items the stages needed: {list(computed)}")
    print(f"the plan from an empty store: recorded {recorded:.0f} s; projected here {total:.0f} s "
          f"= {total / 3600:.2f} h = {total / BUDGET_S:.2f} x the {BUDGET_S // 3600} h target; "
          f"table: {folder / 'evidence_cost.csv'}")
    print_agreement(agreement(RESULTS, store), folder / "evidence_agreement.csv")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nfeval_repro.evidence_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*", help="artefact ids of the plan, space- or comma-"
                        "separated (default: all of them)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--measure", metavar="DIR", type=Path,
                      help="project the plan's cost on this machine from a small probe "
                           "recomputed into the scratch folder DIR (outside the repository); "
                           "takes about 30 min on 2 cores; run it alone")
    what.add_argument("--agree", metavar="DIR", type=Path,
                      help="compare the items of a results folder recomputed on this machine "
                           "(DIR/<artefact>/items/, e.g. a --measure probe's DIR/probe-items or "
                           "a NFEVAL_STORE=DIR NFEVAL_STORE_READ=own rerun) with the committed "
                           "ones; writes DIR/evidence_agreement.csv")
    args = parser.parse_args(argv)
    args.ids = split_ids(args.ids)
    if unknown_ids(args.ids, "nfeval_repro.evidence_cost"):
        return 2
    if args.agree is not None:
        if not args.agree.is_dir():
            print(f"nfeval_repro.evidence_cost: --agree needs a results folder, {args.agree} is not "
                  "one", file=sys.stderr)
            return 2
        rows = agreement(RESULTS, args.agree)
        if not rows:
            print(f"nfeval_repro.evidence_cost: {args.agree} holds no item the committed store has "
                  "(expected <artefact>/items/*.jsonl)", file=sys.stderr)
            return 2
        print_agreement(rows, args.agree / "evidence_agreement.csv")
        return 0
    stop_on_interrupt("evidence-cost", "nfeval_repro.evidence_cost")
    return measure(args.measure, args.ids or [a for a, _ in PLAN])


if __name__ == "__main__":
    sys.exit(main())
