"""Every artefact notebook at its smallest parameters.

The notebooks' code runs cell by cell in this process (:func:`run_cells`), so the 34 runs
share one Python, its imports and its loaded tokenizers instead of starting a kernel each;
papermill's headless path (a kernel, injected parameters, the executed copy) is tested on
dq_eq7 here and on five artefacts by ``test_committed_results.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pandas as pd
import papermill as pm
import pytest

from nfeval_repro.artefacts import ARTEFACTS, by_id

ROOT = Path(__file__).resolve().parents[3]  # the checkout
NOTEBOOKS = ROOT / "notebooks"

#: The smallest parameters of each notebook (the rest: the notebook's defaults).
_SMOL = "smollm2-135m-instruct"  # the fastest embedded model, the notebook tests use it
_JUDGE = "qwen2.5-coder-1.5b-instruct"  # the evidence judge (FROM_STORE: its committed items)
_SMALL_PAIR = {"limit": 1, "max_tokens": 16, "generators": _SMOL, "backbone": _SMOL,
               "judge": _SMOL}

# LINKAGE 1GT / 0GT: one question, a few candidates, tiny generation budgets
_SMALL_GT = {"limit": 1, "max_candidates": 3, "datasets": "antique", "shots": 1,
             "golden_tokens": 24, "degraded_tokens": 48, "attempts": 1, "judge": _SMOL,
             "generator": f"llama:{_SMOL}", "degraders": f"llama:{_SMOL}"}

# DebateQA curation pipeline: one question, SmolLM2, tiny generation budgets
_SMALL_CURATION = {"limit": 1, "model": _SMOL, "pov_tokens": 64, "explanation_tokens": 32}

#: Notebooks tested on the committed items of their evidence runs (the 1.5B judge's, the
#: DebateQA sample's models'), at their first question(s): every model call is answered by the
#: store (the test fails if one is computed), so the prompts these notebooks build are checked
#: against the committed ones' keys; the code that computes items is tested by the notebooks
#: that run the small models (lk_t03, dq_t02, dq_t03, dq_t05, dq_f06, ...) and by
#: the models' and judges' own tests.
FROM_STORE = {"lk_t02", "lk_t04", "lk_t05", "lk_t06", "lk_t07_t08", "lk_t09_t10_f02", "lk_f03",
              "lk_x02", "lk_x03", "lk_x04", "lk_x05", "lk_x06", "lk_x07", "dq_t04", "dq_f03", "dq_f04", "dq_f05", "dq_t06", "dq_t07",
              "dq_f08_f09", "dq_f10"}

SMALLEST: dict[str, dict] = {
    "lk_t01": {"limit": 5},
    "lk_t02": {"limit": 1, "lexical_limit": 3},
    "lk_t05": {"limit": 1, "lexical_limit": 3, "judge": _JUDGE, "subset_size": 2},
    "lk_t09_t10_f02": {"limit": 2, "datasets": "antique", "seeds": "0,1",
                       "judge": _JUDGE},
    "lk_f03": {"judge": _JUDGE},
    "dq_t03": {"limit": 1, "judges": "smollm2-135m-instruct"},
    "dq_t04": {"limit": 1},
    "dq_f03": {"limit": 1},
    "dq_f04": {"limit": 1},
    "dq_f05": {"limit": 1},
    "dq_f06": _SMALL_PAIR,
    "dq_f07": _SMALL_PAIR,
    "dq_t05": {**_SMALL_PAIR, "generators": _SMOL},
    "dq_f08_f09": {"limit": 1},
    "dq_f10": {"limit": 1},
    # the committed table's bfloat16 and its float32 check on 8 candidates: lk_t04's test reads
    # them from the store; this one computes its items, in the profile's float32
    "lk_t03": {**_SMALL_GT, "judge_dtype": "float32"},
    "lk_t04": {"limit": 1, "datasets": "antique", "judge": _JUDGE, "max_candidates": -1,
               "generator": f"llama:{_JUDGE}", "degraders": f"llama:{_JUDGE}"},
    "lk_t06": {"limit": 2, "datasets": "antique", "patterns": "3210,33221100", "shots": "0,3",
               "judge": _JUDGE},
    "lk_t07_t08": {"limit": 2, "datasets": "antique", "shots": "0,1", "judge": _JUDGE},
    "dq_t02": {"limit": 1, "max_answers": 3, "backbone": _SMOL, "judge": _SMOL},
    "dq_f02": {"limit": 2, "max_answers": 4},
    "dq_t08_t09": {"limit": 5, "sweep": "0.85"},
    "dq_t10": {"limit": 5},
    "dq_f11": {"limit": 5},
    "dq_f01": _SMALL_CURATION,
    "dq_f12_f13": _SMALL_CURATION,
    "dq_t01": {"limit": 1},
    "dq_t06": {"limit": 1},
    "dq_t07": {"limit": 1},
    "lk_x01": {"limit": 12, "repeats": 1},
    "lk_x02": {"limit": 1, "swap_limit": 1, "judge": _JUDGE},
    # the few-shot row's 3 demonstrations are the other judged questions: 4 of them
    "lk_x03": {"limit": 4, "dq_limit": 1},
    "lk_x04": {"limit": 4},
    "lk_x05": {"limit": 1, "trec_limit": 0},
    "lk_x06": {"limit": 2},
    "lk_x07": {"limit": 1, "datasets": "antique", "rows": "linkage-0shot", "dq_limit": 1},
    "claims": {},
}


def execute(artefact, out_dir, **overrides):
    params = {"profile": "embedded", "seed": 0, "limit": 0, "output_dir": str(out_dir)}
    params |= dict(artefact.parameters) | SMALLEST.get(artefact.id, {}) | overrides
    out_dir.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(
        str(artefact.path), str(out_dir / artefact.executed), parameters=params,
        cwd=str(NOTEBOOKS), kernel_name="python3", progress_bar=False,
    )
    return out_dir / "results" / f"{artefact.id}.csv", out_dir / "results" / f"{artefact.id}.json"


def execute_as_make(artefact, out_dir, **overrides):
    """:func:`execute` by the command ``make`` runs (``python -m nfeval_repro.run_notebook``),
    parameters given with ``-p`` as the Makefile gives them."""
    import subprocess
    import sys

    params = {"profile": "embedded", "seed": 0, "limit": 0, "output_dir": str(out_dir)}
    params |= dict(artefact.parameters) | SMALLEST.get(artefact.id, {}) | overrides
    out_dir.mkdir(parents=True, exist_ok=True)
    args = [a for k, v in params.items() for a in ("-p", k, str(v))]
    subprocess.run([sys.executable, "-m", "nfeval_repro.run_notebook", "--cwd", str(NOTEBOOKS),
                    "--no-progress-bar", str(artefact.path), str(out_dir / artefact.executed),
                    *args], check=True, capture_output=True)
    return out_dir / "results" / f"{artefact.id}.csv", out_dir / "results" / f"{artefact.id}.json"


def run_cells(artefact, out_dir, **overrides):
    """:func:`execute` without a kernel: the notebook's code cells, in order, in one fresh
    namespace of this process, its parameters cell followed by the parameters (as papermill
    injects them), in ``notebooks/`` (papermill's ``--cwd``). A failing cell is named."""
    import os

    import matplotlib.pyplot as plt

    from nfeval_repro.store import close_store

    params = {"profile": "embedded", "seed": 0, "limit": 0, "output_dir": str(out_dir)}
    params |= dict(artefact.parameters) | SMALLEST.get(artefact.id, {}) | overrides
    out_dir.mkdir(parents=True, exist_ok=True)
    # what an IPython namespace holds that the notebooks use: display(), and get_ipython,
    # by which nfeval_repro.tables knows it runs in a notebook (and records its parameters)
    namespace = {"__name__": "__main__", "display": lambda *args, **kwargs: None,
                 "get_ipython": lambda: None}
    cwd = os.getcwd()
    os.chdir(NOTEBOOKS)
    try:
        for i, cell in enumerate(nbformat.read(artefact.path, as_version=4).cells):
            if cell.cell_type != "code":
                continue
            exec(compile(cell.source, f"<{artefact.notebook} cell {i}>", "exec"), namespace)
            if "parameters" in cell.metadata.get("tags", []):
                namespace.update(params)
    finally:
        os.chdir(cwd)
        plt.close("all")
        close_store()
    return out_dir / "results" / f"{artefact.id}.csv", out_dir / "results" / f"{artefact.id}.json"


def test_smallest_parameters_name_catalogued_notebooks():
    assert set(SMALLEST) <= {a.id for a in ARTEFACTS}


def test_catalogue_matches_notebooks_folder():
    on_disk = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert on_disk == sorted({a.notebook for a in ARTEFACTS})
    shared = {}
    for a in ARTEFACTS:
        shared.setdefault(a.notebook, []).append(a)
    for nb, arts in shared.items():  # one notebook, several artefacts: each names its own
        if len(arts) > 1:
            assert all(a.parameters for a in arts) and len({a.parameters for a in arts}) == \
                len(arts), nb


@pytest.mark.parametrize("artefact", ARTEFACTS, ids=lambda a: a.id)
def test_notebook_conventions(artefact):
    nb = nbformat.read(artefact.path, as_version=4)
    nbformat.validate(nb)  # e.g. a code cell saved as markdown (its code never runs)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    for name in ("profile", "seed", "limit", "output_dir"):
        assert f"\n{name}:" in "\n" + tagged[0].source, f"parameter {name} missing"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not any(line.lstrip().startswith("def ") for line in cell.source.splitlines())


def test_no_notebook_parameter_types_the_judges_name():
    """The judge's name is typed once (nfeval.models.registry.DEFAULT_JUDGE, read through the
    profile): a notebook whose parameter names it would keep it after the profile moves on."""
    from nfeval.models.registry import DEFAULT_JUDGE

    typed = [a.notebook for a in ARTEFACTS
             if any(DEFAULT_JUDGE in str(p["default"])
                    for p in pm.inspect_notebook(str(a.path)).values())]
    assert not typed, typed


@pytest.mark.parametrize("artefact", ARTEFACTS, ids=lambda a: a.id)
def test_notebook_runs_and_writes_results(artefact, tmp_path, mirror):
    csv_path, json_path = run_cells(artefact, tmp_path)
    table = pd.read_csv(csv_path)
    if artefact.id in FROM_STORE:
        computed = tmp_path / "results" / artefact.id / "items"
        assert not computed.exists() or not any(computed.iterdir()), "items were computed"
    assert "ours" in table.columns and len(table) > 0
    assert table["ours"].notna().any()
    record = json.loads(json_path.read_text())
    assert record["id"] == artefact.id
    assert record["signatures"] and all("string" in s for s in record["signatures"])
    assert record["parameters"]["seed"] == 0
    # write_table records every parameter of the notebook itself, with the value it ran at
    nb = nbformat.read(artefact.path, as_version=4)
    declared = [line.split(":", 1)[0] for line in
                next(c for c in nb.cells if "parameters" in c.metadata.get("tags", [])).source.splitlines()
                if ":" in line and line.split(":", 1)[0].isidentifier()]
    assert set(declared) - {"output_dir"} <= set(record["parameters"])
    if artefact.figure:
        assert (tmp_path / "figures" / f"{artefact.id}.png").stat().st_size > 1000


def test_dq_eq7_values_and_byte_identical_rerun(tmp_path):
    """Headless by papermill (a kernel of its own, parameters injected), by its Python API
    and by the command ``make`` runs, and once in this process: the same bytes."""
    art = by_id("dq_eq7")
    first, _ = execute(art, tmp_path / "a")
    second, _ = execute_as_make(art, tmp_path / "b")
    third, _ = run_cells(art, tmp_path / "c")
    assert first.read_bytes() == second.read_bytes() == third.read_bytes()
    for copy in ("a", "b"):  # papermill's executed copy
        assert (tmp_path / copy / art.executed).is_file()
    table = pd.read_csv(first)
    row = table[(table["n"] == 3) & (table["delta_pd"] == -2)].iloc[0]
    assert round(row["ours"], 2) == row["paper"] == 1.95
    checked = table.dropna(subset=["simulated"])
    assert len(checked) >= 16 and (checked["abs_diff_simulated"] < 1e-9).all()


def test_lk_t01_equals_the_paper_exactly(tmp_path, mirror):
    csv_path, _ = run_cells(by_id("lk_t01"), tmp_path, limit=0)
    table = pd.read_csv(csv_path)
    assert len(table) == 12 and table["paper"].notna().all()
    assert table["match"].all(), table[~table["match"]]
    assert not any(math.isnan(v) for v in table["ours"])


def test_the_artefact_page_lists_every_artefact_and_the_readme_links_it():
    page = (ROOT / "docs" / "artefacts.md").read_text()
    for a in ARTEFACTS:
        assert f"`{a.id}`" in page and a.notebook in page, a.id
    assert "(docs/artefacts.md)" in (ROOT / "README.md").read_text()
