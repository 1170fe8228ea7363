"""Modules that moved keep their old import path for one release, as the same module."""

from __future__ import annotations

import importlib
import sys

import pytest

from nfeval._moved import MOVED, new_name


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_path_is_the_new_module_with_a_warning(old, monkeypatch):
    new = importlib.import_module(MOVED[old])
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        module = importlib.import_module(old)
    assert module is new


def test_submodules_of_a_moved_package_follow_it(monkeypatch):
    new = importlib.import_module("nfeval.debateqa.experiments.curation.dedup")
    monkeypatch.delitem(sys.modules, "nfeval.curation.dedup", raising=False)
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("nfeval.curation.dedup")
    assert old is new
    assert new_name("nfeval.curationx") is None and new_name("nfeval.models") is None


def test_nothing_in_the_project_imports_an_old_path():
    from nfeval.paths import ROOT

    olds = tuple(MOVED)
    for folder in ("src", "tests", "notebooks"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".ipynb") or path.name in ("_moved.py", "test_moved.py"):
                continue
            text = path.read_text(encoding="utf-8")
            for old in olds:
                for stmt in (f"from {old} import", f"import {old}\n", f"import {old} "):
                    assert stmt not in text, f"{path.relative_to(ROOT)} imports {old}"


def test_docs_pages_named_in_docstrings_exist():
    import re

    from nfeval.paths import ROOT

    named = set()
    for path in (ROOT / "src").rglob("*.py"):
        named |= set(re.findall(r"docs/([\w-]+\.md)", path.read_text(encoding="utf-8")))
    assert named, "no module points to docs/"
    assert all((ROOT / "docs" / page).is_file() for page in named), sorted(named)
