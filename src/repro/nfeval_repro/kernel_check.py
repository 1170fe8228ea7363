"""Does ``make reproduce`` write the same bytes whatever kernels the CPU's libraries pick?

NumPy, SciPy and scikit-learn call OpenBLAS, torch calls MKL, oneDNN and its own vectorized
kernels, and each picks its code for the CPU it finds: AVX2 on one machine, AVX-512 on
another, another number of threads. A sum in another order moves a float's last bits, and a
committed number must not depend on which machine reran it. No one machine has every CPU, but
each library can be told to use the kernels of a smaller one. This module reruns
``make reproduce`` under each such setting (:data:`SETTINGS`) and lists every committed file
under ``results/`` whose bytes changed, with the cells that moved and by how much; the
checkout is restored after each setting.

    python -m nfeval_repro.kernel_check                 # every setting this CPU can run
    python -m nfeval_repro.kernel_check --settings default,avx2-only
    make check-kernels                                  # the same, from the Makefile

Each setting reruns every notebook (about five minutes on 2 cores). It refuses to start while
``results/``, ``figures/``, ``README.md`` or ``docs/`` differ from the commit, since it
restores them from git after each run: leave them, and the sources the notebooks import
(``src/``, ``notebooks/``), untouched until it ends, or an edit is lost or changes the runs
it compares. Exit status 1 when any setting changed a file.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from nfeval_repro.paths import ROOT

#: What ``make reproduce`` may rewrite, restored from git after each setting.
WRITTEN = ("results", "figures", "README.md", "docs")


@dataclass(frozen=True)
class Setting:
    name: str
    env: dict
    what: str
    #: the CPU flags (``/proc/cpuinfo``) the setting needs, else it is skipped
    needs: tuple[str, ...] = ()


def _numpy_avx512_targets() -> str:
    """The NumPy dispatch targets above AVX2 (X86_V3) that this CPU has, for
    ``NPY_DISABLE_CPU_FEATURES`` (NumPy refuses to disable a target the CPU lacks)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    above = [t for t in __cpu_dispatch__ if t.startswith(("X86_V4", "AVX512"))]
    return " ".join(t for t in above if __cpu_features__.get(t))


def settings() -> list[Setting]:
    """The kernel choices checked, in order; ``default`` is the machine as it is."""
    npy = _numpy_avx512_targets()
    avx2 = {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2",
            "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
    if npy:
        avx2["NPY_DISABLE_CPU_FEATURES"] = npy
    return [
        Setting("default", {}, "the libraries' own choice for this CPU"),
        Setting("openblas-haswell", {"OPENBLAS_CORETYPE": "Haswell"},
                "OpenBLAS's AVX2 kernels (Intel Haswell)", ("avx2",)),
        Setting("openblas-zen", {"OPENBLAS_CORETYPE": "Zen"},
                "OpenBLAS's AMD Zen kernels", ("avx2",)),
        Setting("openblas-skylakex", {"OPENBLAS_CORETYPE": "SkylakeX"},
                "OpenBLAS's AVX-512 kernels (Intel Skylake-X)", ("avx512f",)),
        Setting("avx2-only", avx2,
                "an AVX2-only CPU: OpenBLAS Haswell, NumPy without its AVX-512 loops, torch's "
                "AVX2 kernels, oneDNN and MKL capped at AVX2", ("avx2",)),
        Setting("one-thread", {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                               "MKL_NUM_THREADS": "1"},
                "one thread in every library (another split of each sum)"),
    ]


def _cpu_words() -> set[str]:
    try:
        return set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return set()


def _git(*args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=check).stdout


def _dirty() -> list[str]:
    return [line for line in _git("status", "--porcelain", "--", *WRITTEN).splitlines()
            if line.strip()]


def _restore() -> None:
    _git("checkout", "--", *WRITTEN)
    _git("clean", "-fdq", "--", *WRITTEN)  # files a run added (ignored ones stay)


def _cells(path: str) -> tuple[int, float | None]:
    """(cells that differ from the committed file, the largest numeric difference) of a CSV."""
    import pandas as pd

    try:
        old = pd.read_csv(io.StringIO(_git("show", f"HEAD:{path}")), keep_default_na=False,
                          dtype=str)
        new = pd.read_csv(ROOT / path, keep_default_na=False, dtype=str)
    except Exception:  # noqa: BLE001 - a file added, removed or unreadable: whole-file change
        return -1, None
    if old.shape != new.shape or list(old.columns) != list(new.columns):
        return -1, None
    diff = old.ne(new)
    largest = None
    for col in old.columns:
        rows = diff[col]
        if not rows.any():
            continue
        a = pd.to_numeric(old.loc[rows, col], errors="coerce")
        b = pd.to_numeric(new.loc[rows, col], errors="coerce")
        gap = (a - b).abs().max()
        if gap == gap:
            largest = max(largest or 0.0, float(gap))
    return int(diff.to_numpy().sum()), largest


def run_setting(setting: Setting, jobs: str | None) -> dict:
    """``make reproduce`` under ``setting``; the files under results/ it changed; restored."""
    for nb in (ROOT / "notebooks").glob("*.ipynb"):  # every artefact out of date, no content
        nb.touch()
    env = {**os.environ, **setting.env}
    cmd = ["make", "--no-print-directory", "reproduce"] + ([f"JOBS={jobs}"] if jobs else [])
    t0 = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    changed = []
    for line in _dirty():
        path = line[3:].strip()
        if not path.startswith("results/"):
            continue
        cells, largest = _cells(path) if path.endswith(".csv") else (-1, None)
        changed.append({"path": path, "cells": cells, "largest": largest})
    others = [line[3:].strip() for line in _dirty() if not line[3:].startswith("results/")]
    _restore()
    return {"setting": setting, "rc": proc.returncode, "wall": wall, "changed": changed,
            "others": others, "tail": (proc.stdout + proc.stderr)[-3000:]}


def report(runs: list[dict]) -> str:
    lines = ["| setting | what it imitates | make rc | wall s | committed files under "
             "results/ changed |", "|---|---|---|---|---|"]
    for r in runs:
        s = r["setting"]
        env = " ".join(f"{k}={v}" for k, v in s.env.items()) or "(none)"
        files = "; ".join(
            f"{c['path']} ({'whole file' if c['cells'] < 0 else str(c['cells']) + ' cells'}"
            + (f", up to {c['largest']:.2g}" if c["largest"] is not None else "") + ")"
            for c in r["changed"]) or "none"
        lines.append(f"| {s.name} | {s.what}: `{env}` | {r['rc']} | {r['wall']:.0f} | {files} |")
    for r in runs:
        if r["others"]:
            lines.append(f"\n{r['setting'].name}: also changed (not results/): "
                         + ", ".join(r["others"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    all_settings = settings()
    names = [s.name for s in all_settings]
    ap = argparse.ArgumentParser(
        prog="python -m nfeval_repro.kernel_check",
        description=__doc__.split("\n\n")[0] + " Reruns `make reproduce` under kernel "
        "settings that imitate other CPUs and lists every committed file under results/ "
        "whose bytes changed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="settings:\n" + "\n".join(
            f"  {s.name:<18} {s.what}\n  {'':<18} {' '.join(f'{k}={v}' for k, v in s.env.items()) or '(no variable)'}"
            for s in all_settings))
    ap.add_argument("--settings", default="",
                    help=f"comma-separated, from {', '.join(names)} (default: every one this "
                         "CPU can run)")
    ap.add_argument("--jobs", default=None, help="notebooks side by side (make's JOBS)")
    ap.add_argument("--out", type=Path, default=None,
                    help="also write the report (markdown) to this file")
    ap.add_argument("--list", action="store_true", help="list the settings and exit")
    args = ap.parse_args(argv)
    if args.list:
        print(ap.epilog)
        return 0
    chosen = [n.strip() for n in args.settings.split(",") if n.strip()] or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        ap.error(f"unknown setting(s) {unknown}; choose from {', '.join(names)}")
    dirty = _dirty()
    if dirty:
        print("kernel_check: these files differ from the commit and would be overwritten; "
              "commit or stash them first:\n  " + "\n  ".join(dirty), file=sys.stderr)
        return 2
    words = _cpu_words()
    runs = []
    for s in (s for s in all_settings if s.name in chosen):
        lacking = [f for f in s.needs if words and f not in words]
        if lacking:
            print(f"kernel_check: {s.name} skipped: this CPU lacks {', '.join(lacking)}",
                  file=sys.stderr)
            continue
        print(f"kernel_check: {s.name} ({s.what}) ...", file=sys.stderr, flush=True)
        r = run_setting(s, args.jobs)
        print(f"kernel_check: {s.name}: make rc {r['rc']}, {r['wall']:.0f} s, "
              f"{len(r['changed'])} file(s) under results/ changed", file=sys.stderr, flush=True)
        if r["rc"]:
            print(r["tail"], file=sys.stderr)
        runs.append(r)
    text = report(runs)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 1 if any(r["changed"] or r["rc"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
