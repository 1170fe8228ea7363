"""The reproduction's tests (``nfeval_repro``, the checkout's notebooks, results, figures,
docs and benchmarks). The library's tests are in the checkout's tests/; what both use
(the fixtures, the tiny GPT-2, ``stubs``) is imported from there, not copied.

Checkout files are found from each test file's own place
(``Path(__file__).resolve().parents[3]`` is the checkout), not through ``nfeval.paths``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
# tests/ (testkit, stubs and the library's test modules some tests here reuse) and
# benchmarks/ (not part of any package: its tests import it as the top-level module `bench`)
for folder in (CHECKOUT / "benchmarks", CHECKOUT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
# every figure a test renders is checked for overlapping text and a height over 2:1 of its
# width (nfeval_repro.figure_layout): a notebook whose figure a reader cannot read fails its test
os.environ.setdefault("NFEVAL_FIGURE_CHECK", "1")

from testkit import (  # noqa: E402,F401 -- the library tests' fixtures, shared
    mirror,
    models_extra,
    plot_extra,
    tiny_gpt2,
    tiny_gpt2_dir,
    tiny_gpt2_wide,
    tiny_gpt2_wide_dir,
)

#: where only the library is installed (``pip install nfeval`` plus pytest), every module
#: here is skipped with this reason instead of failing to import nfeval_repro
_NO_REPRODUCTION = (None if importlib.util.find_spec("nfeval_repro") is not None else
                    "needs nfeval_repro, the reproduction (make env, or "
                    "pip install --no-deps -e src/repro)")


class _NeedsTheReproduction(pytest.Module):
    def collect(self):
        pytest.skip(_NO_REPRODUCTION)


def pytest_pycollect_makemodule(module_path, parent):
    if _NO_REPRODUCTION is not None:
        return _NeedsTheReproduction.from_parent(parent, path=module_path)
    return None
