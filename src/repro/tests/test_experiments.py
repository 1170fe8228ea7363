"""Two hops from a number to its code: every artefact's notebook names one experiment
function, ``nfeval.<paper>.experiments.<module>.run``, calls it with its own parameters,
and stays thin."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from nfeval_repro.artefacts import ARTEFACTS

NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"

#: claims reads the committed tables only; its code is :mod:`nfeval_repro.claims`
NOTEBOOKS_WITH_RUN = sorted({a.notebook for a in ARTEFACTS if a.id != "claims"})


def _cells(notebook: str) -> list[dict]:
    return json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]


def _run_module(notebook: str) -> str:
    names = re.findall(r"`(nfeval_repro\.(?:linkage|debateqa)\.\w+)\.run`",
                       "".join(_cells(notebook)[0]["source"]))
    assert len(names) == 1, f"{notebook}: its first cell names no experiment function"
    return names[0]


def _parameters(notebook: str) -> list[tuple[str, object]]:
    """(name, default) of every annotated literal of the notebook's parameters cell."""
    (cell,) = [c for c in _cells(notebook) if "parameters" in c["metadata"].get("tags", [])]
    return [(n.target.id, ast.literal_eval(n.value)) for n in ast.parse("".join(cell["source"])).body
            if isinstance(n, ast.AnnAssign)]


@pytest.mark.parametrize("notebook", NOTEBOOKS_WITH_RUN)
def test_the_notebook_names_one_run_that_takes_its_parameters(notebook):
    module = importlib.import_module(_run_module(notebook))
    assert module.__all__ == ["run"]
    params = inspect.signature(module.run).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    want = [(n, d) for n, d in _parameters(notebook) if n != "output_dir"]
    assert [(n, p.default) for n, p in params.items()] == [*want, ("progress", True)]
    code = "".join("".join(c["source"]) for c in _cells(notebook) if c["cell_type"] == "code")
    short = module.__name__.rsplit(".", 1)[1]
    assert f"{short}.run(" in code and "exp.write(output_dir, started)" in code


@pytest.mark.parametrize("notebook", sorted({a.notebook for a in ARTEFACTS}))
def test_a_notebook_over_80_code_lines_says_why(notebook):
    cells = _cells(notebook)
    lines = [ln for c in cells if c["cell_type"] == "code" for ln in "".join(c["source"]).splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert len(lines) <= 80 or "code lines" in "".join(cells[0]["source"]), \
        f"{notebook}: {len(lines)} code lines"
