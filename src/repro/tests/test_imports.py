"""The packages' import structure: the library (``nfeval``) never imports the reproduction
(``nfeval_repro``), the layers point one way and nothing imports in a circle.

Every ``import`` of every module counts, those inside functions too (a local import is still
a dependency).
"""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]  # the checkout
SRC = ROOT / "src"
#: where each package's folder is
PACKAGES = {"nfeval": SRC / "nfeval", "nfeval_repro": SRC / "repro" / "nfeval_repro"}
#: The modules everything may use: the package root (it only re-exports), the errors and the
#: version, the optional extras' names, hashing, paths, the machine's record and
#: ``nfeval.runtime`` (the Runtime value; it holds no state: see the test below).
LEAVES = {"nfeval", "nfeval.errors", "nfeval.version", "nfeval.extras", "nfeval.hashing",
          "nfeval.paths", "nfeval.machine", "nfeval.runtime"}


def _modules() -> dict[str, Path]:
    out = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for n in names:
            if n.startswith("nfeval"):
                r = _resolve(n)
                if r and r != module:
                    out.add(r)
    return out


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("package", ["nfeval.models", "nfeval.data"])
def test_models_and_data_import_nothing_above_them(package):
    bad = sorted((m, d) for m, deps in GRAPH.items() if _under(m, package) for d in deps
                 if not (_under(d, package) or d in LEAVES or
                         (package == "nfeval.models" and _under(d, "nfeval.data"))))
    assert not bad, bad


def test_the_library_never_imports_the_reproduction():
    bad = sorted((m, d) for m, deps in GRAPH.items() if _under(m, "nfeval") for d in deps
                 if _under(d, "nfeval_repro"))
    assert not bad, bad
    assert any(_under(d, "nfeval") for d in GRAPH["nfeval_repro.store"])  # edges are seen


def test_no_import_time_hooks_or_module_global_substitutions_in_the_library():
    import re

    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in PACKAGES["nfeval"].rglob("*.py")
             for m in re.finditer(r"set_wrapper|_SUBSTITUTES|import_module", p.read_text())]
    assert found == []


def test_the_two_papers_packages_do_not_import_each_other():
    bad = sorted((m, d) for m, deps in GRAPH.items() for d in deps
                 if (_under(m, "nfeval.linkage") and _under(d, "nfeval.debateqa"))
                 or (_under(m, "nfeval.debateqa") and _under(d, "nfeval.linkage")))
    assert not bad, bad


def test_no_import_circle():
    # Tarjan's strongly connected components; a package and its own modules (``nfeval.data``
    # re-exporting ``nfeval.data.loaders``) are one unit, so edges into one's own package
    # root are left out.
    graph = {m: {d for d in deps if not _under(m, d)} for m, deps in GRAPH.items()}
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert not comps, comps


def test_the_graph_sees_real_edges():  # the test above cannot pass by seeing nothing
    assert "nfeval.models.base" in GRAPH["nfeval_repro.store"]
    assert "nfeval.data.loaders" in GRAPH["nfeval.data.draws"]
    counts = defaultdict(int)
    for deps in GRAPH.values():
        for d in deps:
            counts[d] += 1
    assert counts["nfeval.errors"] > 20


def test_the_device_travels_as_an_argument_not_a_global():
    """No module keeps a device or dtype that a profile or command sets for later loads."""
    import re

    offenders = [str(p.relative_to(SRC)) for folder in PACKAGES.values()
                 for p in folder.rglob("*.py")
                 if re.search(r"^\s*global\s+_?(CONFIGURED|RUNTIME|DEVICE|DTYPE)", p.read_text(),
                              re.MULTILINE)]
    assert offenders == []
    from nfeval import runtime

    assert not hasattr(runtime, "configure") and not hasattr(runtime, "current")


def test_a_module_over_500_lines_says_why():
    long = [str(p.relative_to(ROOT)) for p in [*(SRC / "nfeval").rglob("*.py"),
                                                *PACKAGES["nfeval_repro"].rglob("*.py"),
                                                *(ROOT / "benchmarks").glob("*.py"),
                                                *(ROOT / "scripts").glob("*.py")]
            if len(p.read_text().splitlines()) > 500
            and "Why this file is long:" not in p.read_text().split('"""')[1]]
    assert long == []


def test_the_claims_read_the_experiments_never_the_reverse():
    """No experiment (``nfeval_repro.linkage``, ``nfeval_repro.debateqa``) imports the claims;
    the verdict rule they share is :mod:`nfeval_repro.verdicts`, the figures' style
    :mod:`nfeval_repro.plots`."""
    bad = sorted(m for m, deps in GRAPH.items() if "nfeval_repro.claims" in deps
                 and (_under(m, "nfeval_repro.linkage") or _under(m, "nfeval_repro.debateqa")))
    assert bad == []
    assert "nfeval_repro.verdicts" in GRAPH["nfeval_repro.linkage.lk_x03"]  # edges are seen
