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
