"""Old import paths of modules that moved, kept working for one release (0.1.x).

``import nfeval.scoring`` (and every other name in :data:`MOVED`, packages
with their submodules) gives the module at its new path, the same module
object, with a :class:`DeprecationWarning` naming the new path. Nothing in
the project imports the old paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old dotted path -> new dotted path (a package maps its submodules too)
MOVED: dict[str, str] = {
    "nfeval.metrics.pd": "nfeval.debateqa.pd",
    "nfeval.metrics.da": "nfeval.debateqa.da",
    "nfeval.scoring": "nfeval.debateqa.scoring",
    "nfeval.generation": "nfeval.debateqa.generation",
    "nfeval.systems": "nfeval.debateqa.systems",
    "nfeval.system_intervals": "nfeval.debateqa.system_intervals",
    "nfeval.alignment": "nfeval.debateqa.experiments.alignment",
    "nfeval.rag": "nfeval.debateqa.experiments.rag",
    "nfeval.debateqa_tables": "nfeval.debateqa.experiments.tables",
    "nfeval.curation": "nfeval.debateqa.experiments.curation",
    "nfeval.linkage.settings": "nfeval.linkage.experiments.settings",
}


def new_name(old: str) -> str | None:
    """The current dotted path of ``old``, or None where it did not move."""
    for before, after in MOVED.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before):]
    return None


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} moved to {new}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        pass  # the module at the new path is already executed


def install() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
