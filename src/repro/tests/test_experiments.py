"""Two hops from a number to its code: every artefact's notebook names one experiment
function, ``nfeval.<paper>.experiments.<module>.run``, calls it with its own parameters,
and stays thin."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from nfeval_repro.artefacts import ARTEFACTS
from nfeval_repro.parameters import cell as parameter_cell, parameters

NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"

#: claims reads the committed tables only; its code is :mod:`nfeval_repro.claims`
#: the most parameters a function of the reproduction takes (a config counts as one)
MAX_PARAMETERS = 11
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
def test_the_notebook_names_one_run_that_takes_its_config(notebook):
    module = importlib.import_module(_run_module(notebook))
    assert module.__all__ == ["Config", "run"]
    assert dataclasses.is_dataclass(module.Config) and module.Config.__dataclass_params__.frozen
    params = inspect.signature(module.run).parameters
    assert [(n, p.kind) for n, p in params.items()] == [
        ("config", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ("progress", inspect.Parameter.KEYWORD_ONLY)]
    assert params["config"].default == module.Config() and params["progress"].default is True
    # the notebook's parameters are the config's fields with its defaults, written from the class
    (cell,) = [c for c in _cells(notebook) if "parameters" in c["metadata"].get("tags", [])]
    assert "".join(cell["source"]) == parameter_cell(module.Config), \
        f"{notebook}: run `python -m nfeval_repro.artefacts --parameters`"
    want = [(n, d) for n, d in _parameters(notebook) if n != "output_dir"]
    assert want == [(f.name, f.default) for f in dataclasses.fields(module.Config)]
    code = "".join("".join(c["source"]) for c in _cells(notebook) if c["cell_type"] == "code")
    short = module.__name__.rsplit(".", 1)[1]
    assert f"{short}.run(parameters({short}.Config, globals()))" in code
    assert "exp.write(output_dir, started)" in code


def test_every_function_of_the_reproduction_takes_at_most_11_parameters():
    """A run takes its config; no helper grows back a 20-keyword signature."""
    root = Path(__file__).resolve().parents[1] / "nfeval_repro"
    wide = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                n = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                     + (a.vararg is not None) + (a.kwarg is not None)
                     - (bool(a.args) and a.args[0].arg in ("self", "cls")))
                if n > MAX_PARAMETERS:
                    wide.append(f"{path.relative_to(root)}:{node.name} ({n})")
    assert not wide, wide


def test_a_catalogue_entry_is_its_experiments_config():
    for a in ARTEFACTS:
        if a.module is None:
            assert a.id == "claims"
            continue
        config = a.config
        assert type(config).__module__ == a.module
        assert all(getattr(config, k) == v for k, v in a.parameters)


def test_parameters_reads_a_notebooks_names_and_checks_their_types():
    from nfeval.errors import NfevalError
    from nfeval_repro.linkage import lk_x06

    names = {f.name: f.default for f in dataclasses.fields(lk_x06.Config)}
    assert parameters(lk_x06.Config, {**names, "limit": 7, "other": 1}).limit == 7
    with pytest.raises(NfevalError, match="limit='7'"):
        parameters(lk_x06.Config, {**names, "limit": "7"})
    with pytest.raises(NfevalError, match="no value for limit"):
        parameters(lk_x06.Config, {k: v for k, v in names.items() if k != "limit"})


@pytest.mark.parametrize("notebook", sorted({a.notebook for a in ARTEFACTS}))
def test_a_notebook_over_80_code_lines_says_why(notebook):
    cells = _cells(notebook)
    lines = [ln for c in cells if c["cell_type"] == "code" for ln in "".join(c["source"]).splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    assert len(lines) <= 80 or "code lines" in "".join(cells[0]["source"]), \
        f"{notebook}: {len(lines)} code lines"
