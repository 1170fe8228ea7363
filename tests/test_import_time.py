"""Importing a module changes nothing outside it, and nothing imports up to the package root.

A module that registers itself into another at import (``X.TABLE[k] = f``, ``X.register(f)``,
a bare call that does either) makes the other module work only once it was imported first;
the package root (``nfeval/__init__.py``) only re-exports, so no module of the library needs
it (the errors are :mod:`nfeval.errors`, the version :mod:`nfeval.version`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
PACKAGES = {"nfeval": CHECKOUT / "src" / "nfeval",
            "nfeval_repro": CHECKOUT / "src" / "repro" / "nfeval_repro"}
#: methods that change the object they are called on
MUTATING = {"append", "extend", "insert", "update", "setdefault", "add", "register", "pop",
            "popitem", "clear", "remove", "discard", "__setitem__", "__setattr__"}


def _module_level(nodes):
    """The statements that run at import: inside module-level ``if``/``try``/``with`` too,
    but not ``if __name__ == "__main__":`` (it runs as a script, not at import)."""
    for n in nodes:
        if isinstance(n, ast.If):
            if "__main__" in ast.unparse(n.test):
                continue
            yield from _module_level(n.body)
            yield from _module_level(n.orelse)
        elif isinstance(n, ast.Try):
            for block in (n.body, n.orelse, n.finalbody, *(h.body for h in n.handlers)):
                yield from _module_level(block)
        elif isinstance(n, ast.With):
            yield from _module_level(n.body)
        else:
            yield n


def _root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes_outside(nodes, imported: set[str], local_functions: dict, seen: set[str]
                    ) -> list[str]:
    """What ``nodes`` do at import to objects the module did not create."""
    found = []
    for n in nodes:
        for sub in ast.walk(n):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                ast.Lambda)) and sub is not n:
                continue
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = (sub.targets if isinstance(sub, (ast.Assign, ast.Delete))
                           else [sub.target])
                found += [f"line {sub.lineno}: {ast.unparse(t)} =" for t in targets
                          if isinstance(t, (ast.Attribute, ast.Subscript))
                          and _root(t) in imported]
            elif isinstance(sub, ast.Global):
                found.append(f"line {sub.lineno}: global {', '.join(sub.names)}")
            elif isinstance(sub, ast.Call):
                f = sub.func
                if isinstance(f, ast.Attribute) and f.attr in MUTATING and _root(f) in imported:
                    found.append(f"line {sub.lineno}: {ast.unparse(sub)[:80]}")
                elif isinstance(f, ast.Name) and f.id in ("setattr", "delattr"):
                    found.append(f"line {sub.lineno}: {ast.unparse(sub)[:80]}")
                elif isinstance(f, ast.Name) and f.id in local_functions and f.id not in seen:
                    seen.add(f.id)  # a function of this module called at import: its body
                    found += [f"{f.id}(), {w}" for w in _writes_outside(
                        local_functions[f.id].body, imported, local_functions, seen)]
    return found


def import_time_writes(source: str) -> list[str]:
    """Every place where importing ``source`` changes an object of another module, or runs
    a bare call of another module's function (a statement that is only a call is there for
    what it changes)."""
    tree = ast.parse(source)
    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    functions = {n.name: n for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    top = [n for n in _module_level(tree.body)
           if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    bare = [f"line {n.lineno}: bare call {ast.unparse(n)[:80]}" for n in top
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
            and _root(n.value.func) in imported
            and getattr(n.value.func, "attr", None) not in MUTATING]  # (counted as writes)
    return bare + _writes_outside(top, imported, functions, set())


def _files(package: str):
    return [p for p in sorted(PACKAGES[package].rglob("*.py")) if p.name != "__main__.py"]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_changes_another_at_import(package):
    if not PACKAGES[package].is_dir():
        pytest.skip(f"{package} is not in this checkout")
    found = {str(p.relative_to(CHECKOUT)): w for p in _files(package)
             if (w := import_time_writes(p.read_text(encoding="utf-8")))}
    assert found == {}


@pytest.mark.parametrize("source, expected", [
    ("from x import TABLE\nTABLE['a'] = 1\n", 1),
    ("import x\nx.TABLE.update(a=1)\n", 1),
    ("import x\ndef _reg():\n    x.CHECKS['f'] = len\n_reg()\n", 1),
    ("import x\ndef _reg():\n    x.CHECKS['f'] = len\n    return 1\nN = _reg()\n", 1),
    ("import os\nos.environ['A'] = '1'\n", 1),
    ("import warnings\nwarnings.filterwarnings('ignore')\n", 1),
    ("X = {}\nX['a'] = 1\nY = [1]\nY.append(2)\n", 0),  # its own objects
    ("import sys\nif __name__ == '__main__':\n    sys.exit(0)\n", 0),
    ("import x\ndef f():\n    x.T['a'] = 1\n", 0),  # at call time, not at import
])
def test_the_check_sees_writes_and_passes_own_objects(source, expected):
    assert len(import_time_writes(source)) == expected, import_time_writes(source)


def test_nothing_in_the_library_imports_its_package_root():
    """``from nfeval import X`` (or ``import nfeval``) inside the library: the root only
    re-exports. Every import counts, those inside functions too."""
    up = []
    for p in _files("nfeval"):
        if p.parent == PACKAGES["nfeval"] and p.name == "__init__.py":
            continue
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, ast.ImportFrom) and n.module == "nfeval" and not n.level:
                up.append(f"{p.relative_to(CHECKOUT)}:{n.lineno}: from nfeval import "
                          + ", ".join(a.name for a in n.names))
            elif isinstance(n, ast.Import) and any(a.name == "nfeval" for a in n.names):
                up.append(f"{p.relative_to(CHECKOUT)}:{n.lineno}: import nfeval")
    assert up == []


def test_the_root_defines_nothing_of_its_own():
    tree = ast.parse((PACKAGES["nfeval"] / "__init__.py").read_text(encoding="utf-8"))
    defined = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    defined += [n.name for n in tree.body
                if isinstance(n, ast.FunctionDef) and n.name != "__getattr__"]
    assert defined == []
    import nfeval
    from nfeval.errors import NfevalError
    from nfeval.meta_evaluation import evaluate

    assert nfeval.NfevalError is NfevalError and nfeval.meta is evaluate


def test_nothing_below_the_command_line_calls_back_into_it():
    """A model's settings go one way, from ``nfeval.cli`` (which builds the runtime and the
    loader once) down to the model: no module of the library imports the command line (its
    hooks, its loaders), so nothing calls back into it."""
    back = []
    for p in _files("nfeval"):
        if p.name == "cli.py" and p.parent == PACKAGES["nfeval"]:
            continue
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = ([n.module or ""] + [f"{n.module}.{a.name}" for a in n.names]
                     if isinstance(n, ast.ImportFrom) else
                     [a.name for a in n.names] if isinstance(n, ast.Import) else [])
            if any(x == "nfeval.cli" for x in names):
                back.append(f"{p.relative_to(CHECKOUT)}:{n.lineno}")
    assert back == []
