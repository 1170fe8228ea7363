"""``make evidence``: the judge artefacts at the sizes that decide the papers' claims.

Runs the evidence notebooks at the evidence sizes, one after another, each in
stages of growing size (a stage is a notebook run whose parameters are given
below; its questions are a seeded random sample that grows by extension, so a
later stage reuses every item of the earlier ones). Each stage writes the
artefact's table, so an interrupted run leaves the tables of its last
finished stage. A notebook's own defaults are the size of its committed
tables, which ``make reproduce`` rebuilds from the store in minutes. Every model output goes to the committed
item store as it is computed (:mod:`nfeval.store`), so the run is resumable
item by item: kill it, start it again, and nothing stored is recomputed.
Each notebook streams its progress bars (with their ETA) to the terminal;
before each one the driver prints what the store already holds.

    python -m nfeval.evidence                 # every evidence artefact, in order
    python -m nfeval.evidence lk_t02 dq_t03   # some of them
    python -m nfeval.evidence --list          # the plan

``NFEVAL_STORE=<folder>`` with ``NFEVAL_STORE_READ=own`` recomputes every
item into that folder instead of reading the committed ones (a full rerun
on another machine, to compare).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from nfeval.paths import NOTEBOOKS, RESULTS, ROOT

#: Parameter stages of each artefact (default: one run at the notebook's defaults).
STAGES: dict[str, tuple[dict, ...]] = {
    "lk_t02": ({"limit": 6},
               *({"limit": n, "sample_limit": 10, "pilot_limit": 10} for n in (20, 40, 60)),
               {"limit": 120, "sample_limit": 10, "pilot_limit": 53}),
    "lk_t05": ({"limit": 40}, {"limit": 70}, {"limit": 0}),
    "dq_t02": ({"limit": 40}, {"limit": 0}),
    "dq_t04": ({"limit": 16},),
    "dq_f03": ({"limit": 16},),
    "dq_f04": ({"limit": 16},),
    "dq_f05": ({"limit": 16},),
}

#: (artefact, what its evidence run computes), in the order they run.
PLAN: tuple[tuple[str, str], ...] = (
    ("lk_t02", "LINKAGE Table 2: 5 judge rows + refppl on all 53 TREC-DL-NF and 120 ANTIQUE "
               "questions x 8 candidates, in stages of 6/20/40/60/120 questions per dataset; both "
               "decodings on 10+10 questions; the 1.5B judge's LINKAGE 0-shot and both Pointwise "
               "rows on all 53 TREC-DL-NF"),
    ("dq_t03", "DebateQA Table 3: D.A. on all 160 labelled answers, both embedded judges"),
    ("lk_t05", "LINKAGE Table 5: every judge row on all 100 WebGLM questions, in stages of "
               "40/70/100 questions"),
    ("dq_t02", "DebateQA Table 2: every usable ANTIQUE and TREC-DL-NF question"),
    ("dq_t04", "DebateQA Table 4: answers and scores (P.D. two backbones, D.A. two judges) of "
               "16 sample questions"),
    ("dq_f03", "DebateQA Figure 3: P.D. with three backbones"),
    ("dq_f04", "DebateQA Figure 4: P.D. with five restate prompts"),
    ("dq_f05", "DebateQA Figure 5: D.A. with four judges"),
)


def _stored_items(artefact: str) -> int:
    folder = RESULTS / artefact / "items"
    return sum(sum(1 for _ in p.open(encoding="utf-8")) for p in folder.glob("*.jsonl"))


def run(ids: Sequence[str]) -> int:
    import papermill as pm

    from nfeval.artefacts import by_id

    out_dir = RESULTS / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    for i, artefact in enumerate(ids, 1):
        art = by_id(artefact)
        print(f"\n== [{i}/{len(ids)}] {artefact}: {dict(PLAN).get(artefact, art.item)}\n"
              f"   {_stored_items(artefact)} items stored; {time.time() - started:.0f} s elapsed",
              flush=True)
        for stage in STAGES.get(artefact, ({},)):
            t = time.time()
            print(f"-- {artefact} {stage or 'at its defaults'}", flush=True)
            pm.execute_notebook(str(art.path), str(out_dir / art.notebook),
                                parameters={"output_dir": str(ROOT), **stage}, cwd=str(NOTEBOOKS),
                                kernel_name="python3", log_output=True, progress_bar=False,
                                stdout_file=sys.stdout, stderr_file=sys.stderr)
            print(f"== {artefact} {stage}: {time.time() - t:.0f} s, "
                  f"{_stored_items(artefact)} items stored", flush=True)
    print(f"\nevidence run: {time.time() - started:.0f} s", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nfeval.evidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*", help="artefact ids (default: the whole plan)")
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    args = parser.parse_args(argv)
    known = [a for a, _ in PLAN]
    if args.list:
        for a, what in PLAN:
            print(f"{a:<8} {_stored_items(a):>7} items stored  {what}; stages "
                  f"{list(STAGES.get(a, ({},)))}")
        return 0
    unknown = [a for a in args.ids if a not in known]
    if unknown:
        print(f"nfeval.evidence: unknown artefact(s) {unknown}; the plan has {known}",
              file=sys.stderr)
        return 2
    try:
        return run(args.ids or known)
    except KeyboardInterrupt:
        print("\ninterrupted: every finished item is stored; run the same command again to "
              "resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
