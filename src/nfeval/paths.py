"""Every path the project uses, derived from one root.

``ROOT`` is the repository checkout; user-level caches live outside it so a
fresh clone never carries model weights or downloads.

What scoring reads (the project's prompts, the DebateQA sample) is found in the checkout when there is one, else inside the
installed package (``nfeval/_data``, copied there when the wheel is built:
``setup.py``), so ``pip install`` gives a package that finds its own files.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: True when this module runs from a repository checkout (``pip install -e`` or PYTHONPATH).
IN_CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "prompts").is_dir()
#: Folders of the checkout that ship inside the wheel, by their name under ``nfeval/_data``.
PACKAGE_DATA = {"prompts": "prompts", "debateqa_sample": "data/debateqa_sample"}
#: The embedded models' tokenizer packs (the reproduction's: a checkout has them, a wheel not)
TOKENIZER_PACKS = ROOT / "data" / "tokenizers"


def package_data(name: str) -> Path:
    """A shipped folder (:data:`PACKAGE_DATA`): the checkout's copy, else the installed one."""
    if IN_CHECKOUT:
        return ROOT / PACKAGE_DATA[name]
    return Path(str(resources.files("nfeval") / "_data" / name))


PROMPTS = package_data("prompts")
SAMPLE = package_data("debateqa_sample")

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
