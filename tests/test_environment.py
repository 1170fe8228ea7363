"""The install files agree: environment.yml carries requirements.txt's pins."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout


def _pins(text: str) -> set[str]:
    return {m.group(1).lower() for m in re.finditer(r"^\s*(?:-\s*)?([A-Za-z0-9_.\-\[\]]+==[^\s#]+)", text, re.M)}


def test_environment_yml_mirrors_requirements():
    req = _pins((ROOT / "requirements.txt").read_text())
    env = _pins((ROOT / "environment.yml").read_text())
    assert req and req == env


def test_everything_is_pinned():
    for name in ("requirements.txt", "requirements-models.txt", "requirements-embed.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                assert "==" in line, f"{name}: unpinned requirement {line!r}"


def test_torch_pin_matches_the_cpu_wheel():
    assert "torch==2.13.0" in (ROOT / "requirements.txt").read_text().splitlines()


def test_every_pin_meets_the_bounds_both_pyprojects_declare():
    """`make env` installs requirements.txt with --no-deps beside the two projects: each
    requirement the library (its core and every extra) and the reproduction declare is
    pinned there, at a version its bound admits, with the extras it names."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[canonicalize_name(Requirement(name).name)] = version.strip()
    declared = []
    for path in ("pyproject.toml", "src/repro/pyproject.toml"):
        project = tomllib.loads((ROOT / path).read_text())["project"]
        groups = {"": project.get("dependencies", []),
                  **project.get("optional-dependencies", {})}
        declared += [(path, group, Requirement(r)) for group, reqs in groups.items()
                     for r in reqs]
    assert len(declared) > 20
    bad = []
    for path, group, req in declared:
        name = canonicalize_name(req.name)
        if name in ("nfeval", "nfeval-repro"):  # the projects themselves (editable installs)
            continue
        if name not in pins or not req.specifier.contains(pins[name], prereleases=True):
            bad.append(f"{path} [{group}] {req}: requirements.txt has {pins.get(name)}")
    assert bad == []


def test_the_library_declares_none_of_the_reproductions_packages():
    """The notebooks', the curation pipeline's and the benchmark's packages belong to the
    reproduction's pyproject (src/repro), not to an extra of the library's."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert set(extras) == {"models", "llama", "http", "release", "plot", "dev"}
    named = " ".join(project["dependencies"] + sum(extras.values(), [])).lower()
    for package in ("jupyterlab", "papermill", "seaborn", "scikit-learn", "bertopic",
                    "tldextract", "bm25s", "lm_eval", "psutil"):
        assert package not in named, package
