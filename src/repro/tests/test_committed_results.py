"""The committed results: intervals where they estimate, no machine paths, and no drift.

* Every ``results/<id>.json`` says what its intervals resample (or why it has
  none), and its CSV carries ``ci_low``, ``ci_high`` and ``n_<unit>``.
* Nothing committed names the machine that ran it (absolute paths) or a
  commit with uncommitted source changes (``-dirty``).
* Every committed table was run at its notebook's numeric defaults, the sizes
  ``make reproduce`` reruns it at.
* Drift: the artefacts below are rerun at their defaults from the committed
  item store (``results/<id>/items/``) and must give the committed tables
  within 1e-4, computing no model output: a change of code that moves a
  number, or an item missing from the store, fails here.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from nfeval_repro.artefacts import ARTEFACTS, by_id
from testkit import NO_WEIGHTS

ROOT = Path(__file__).resolve().parents[3]  # the checkout
RESULTS = ROOT / "results"

COMMITTED = sorted(RESULTS.glob("*.json"))
TOLERANCE = 1e-4
#: Rebuilt from the committed store in CI (each a minute or two).
DRIFT = ("lk_t01", "dq_eq7", "lk_t02", "lk_t05", "dq_t04")
#: Artefacts whose committed results predate the interval protocol because the session that
#: introduced it ran out of CPU time before rerunning them (the README marks them stale).
#: Strict: once one is rerun its tests pass, the xfail turns into a failure, and it must
#: leave this set.
PENDING: frozenset[str] = frozenset()


def _committed(test: str):
    reason = f"committed before the interval protocol; rerun pending ({test})"
    return [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=reason))
            if p.stem in PENDING else p for p in COMMITTED]


@pytest.mark.parametrize("path", _committed("intervals"), ids=lambda p: p.stem)
def test_committed_tables_carry_their_intervals(path):
    record = json.loads(path.read_text())
    interval = record.get("interval")
    assert interval, f"{path.name}: no 'interval' (a unit, or 'none: <why>')"
    table = pd.read_csv(path.with_suffix(".csv"))
    if interval.startswith("none: "):
        return
    for col in ("ci_low", "ci_high", f"n_{interval}"):
        assert col in table.columns, f"{path.stem}.csv lacks {col}"
    cols = list(table.columns)
    assert cols.index("ci_low") == cols.index("ours") + 1


_ABSOLUTE = re.compile(r'(?<![\w:/.])/(work|tmp|root|home|Users|usr|opt|mnt|var)/')


@pytest.mark.parametrize("path", _committed("paths, commit"), ids=lambda p: p.stem)
def test_committed_results_name_no_machine_path_and_a_clean_commit(path):
    text = path.read_text()
    assert not _ABSOLUTE.search(text), f"{path.name}: an absolute path"
    record = json.loads(text)
    assert not str(record.get("commit", "")).endswith("-dirty"), f"{path.name}: dirty commit"


def test_no_committed_result_file_holds_an_absolute_path():
    hits = [p.relative_to(RESULTS).as_posix() for p in sorted(RESULTS.rglob("*"))
            if p.is_file() and p.suffix in (".csv", ".json", ".md", ".txt")
            and "items" not in p.parts and _ABSOLUTE.search(p.read_text(errors="replace"))]
    assert not hits, hits


def test_every_result_names_a_commit_of_the_history():
    import subprocess

    if not (RESULTS.parent / ".git").exists():
        pytest.skip("not a git checkout")
    missing = []
    for path in COMMITTED:
        commit = str(json.loads(path.read_text()).get("commit", "")).removesuffix("-dirty")
        if commit and subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"],
                                     cwd=RESULTS.parent, capture_output=True).returncode:
            missing.append(f"{path.stem} {commit[:12]}")
    assert not missing, missing


def test_every_artefact_that_loads_a_model_uses_the_store():
    import nbformat

    for art in ARTEFACTS:
        nb = nbformat.read(art.path, as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        if "load_model(" in code or "collect_systems(" in code:
            assert f'use_store("{art.id}"' in code, f"{art.id} loads a model without its store"


def _numeric_defaults(art) -> dict[str, float]:
    """The notebook's numeric parameter defaults (negative ones mean "the profile decides")."""
    import ast

    import papermill as pm

    out = {}
    for name, spec in pm.inspect_notebook(str(art.path)).items():
        try:
            value = ast.literal_eval(spec["default"])
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            out[name] = value
    return out


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_committed_tables_were_run_at_the_notebook_defaults(path):
    """A table committed at other sizes than the notebook's defaults (or the catalogue's
    parameters, which ``make reproduce`` passes) cannot be rebuilt by ``make reproduce``: the
    rerun would compute the missing items (hours) and differ."""
    record = json.loads(path.read_text())
    ran = record.get("parameters") or {}
    art = by_id(path.stem)
    expected = _numeric_defaults(art)
    for name, value in art.parameters:  # the catalogue's: a negative one lets the profile decide
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            expected.pop(name, None)
            if value >= 0:
                expected[name] = value
    for name, default in expected.items():
        if name in ran:
            assert ran[name] == default, (
                f"{path.stem}: committed at {name}={ran[name]}, the notebook default is {default}")
    # the catalogue's text parameters too (``make reproduce`` passes them on papermill's
    # command line, where a comma once split ``judge_rows`` and dropped all but its first row)
    for name, value in art.parameters:
        if isinstance(value, str) and name in ran:
            got = ran[name]
            got = ",".join(map(str, got)) if isinstance(got, (list, tuple)) else str(got)
            assert got == value, (f"{path.stem}: committed at {name}={got!r}, the catalogue "
                                  f"passes {value!r}")


def test_make_passes_every_catalogue_parameter_whole():
    """``make reproduce``'s command line for each artefact carries every catalogue parameter
    whole: make splits ``$(call ...)`` arguments at commas, so a list-valued parameter must
    reach papermill intact (`make -n` prints the commands without running them)."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    notebooks = sorted({a.notebook for a in ARTEFACTS})
    what_if = [f"-Wnotebooks/{n}" for n in notebooks]
    out = subprocess.run(["make", "-n", *what_if, *(a.target for a in ARTEFACTS)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for a in ARTEFACTS:
        line = next((ln for ln in out.splitlines() if f"results/executed/{a.executed}" in ln),
                    None)
        assert line is not None, f"make -n printed no command for {a.id}"
        for name, value in a.parameters:
            assert f"-p {name} {value}" in line, (a.id, name, value, line)


def _close(a: float, b: float) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return abs(float(a) - float(b)) <= TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("artefact_id", DRIFT)
def test_rerun_from_the_committed_store_gives_the_committed_table(artefact_id, tmp_path, mirror,
                                                                  monkeypatch):
    """Rerun as ``make reproduce`` runs on a fresh machine: an empty cache, no weight packages
    importable and no network (tests/no_weights), so nothing can load or fetch weights."""
    import os

    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(NO_WEIGHTS)] + [p for p in [os.environ.get("PYTHONPATH", "")] if p]))
    art = by_id(artefact_id)
    committed = pd.read_csv(RESULTS / f"{artefact_id}.csv")
    record = json.loads((RESULTS / f"{artefact_id}.json").read_text())
    csv_path, json_path = _run_defaults(art, tmp_path)
    ours = pd.read_csv(csv_path)
    assert list(ours.columns) == list(committed.columns)
    assert len(ours) == len(committed)
    from nfeval_repro.tables import run_record_path

    rerun = json.loads(run_record_path(artefact_id, tmp_path).read_text())
    if rerun.get("store"):
        computed = rerun["store"]["items_computed"]
        assert computed == 0, f"{artefact_id}: the committed store is missing {computed} items"
    ids = record["id_columns"]
    for col in ("ours", "ci_low", "ci_high"):
        if col not in committed.columns:
            continue
        keys = ["|".join(str(v) for v in row) for row in committed[ids].itertuples(index=False)]
        for a, b, key in zip(ours[col], committed[col], keys):
            assert _close(a, b), f"{artefact_id} {key} {col}: {a} vs committed {b}"


def _run_defaults(art, out_dir):
    """Execute a notebook at its default parameters (the committed sizes) into out_dir."""
    import papermill as pm

    NOTEBOOKS = ROOT / "notebooks"

    out_dir.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(str(art.path), str(out_dir / art.executed),
                        parameters={"output_dir": str(out_dir), **dict(art.parameters)},
                        cwd=str(NOTEBOOKS),
                        kernel_name="python3", progress_bar=False)
    return out_dir / "results" / f"{art.id}.csv", out_dir / "results" / f"{art.id}.json"


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.stem)
def test_the_identifier_columns_name_each_row_once(path):
    ids = json.loads(path.read_text())["id_columns"]
    table = pd.read_csv(path.with_suffix(".csv"), keep_default_na=False)
    twice = table[table.duplicated(subset=ids, keep=False)]
    assert twice.empty, f"{path.stem}: rows share {ids}: {twice[ids].head(4).to_dict('records')}"
