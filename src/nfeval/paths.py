"""Every path the project uses, derived from one root.

``ROOT`` is the repository checkout; user-level caches live outside it so a
fresh clone never carries model weights or downloads.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "results"
FIGURES = ROOT / "figures"
EXECUTED = RESULTS / "executed"
PAPER_VALUES = ROOT / "data" / "paper_values"
PROMPTS = ROOT / "prompts"

MIRROR_ENV = "NFEVAL_MIRROR"
CACHE_ENV = "NFEVAL_CACHE"


def cache_dir() -> Path:
    """User cache for downloads, converted models and generated text.

    ``$NFEVAL_CACHE`` if set, else ``$XDG_CACHE_HOME/nfeval``, else
    ``~/.cache/nfeval``.
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "nfeval"


def mirror_dir() -> Path | None:
    """The local mirror of the release files named by ``$NFEVAL_MIRROR``, if any."""
    env = os.environ.get(MIRROR_ENV)
    return Path(env).expanduser() if env else None
