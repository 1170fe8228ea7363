"""What produced a number: a :class:`Signature` (after sacrebleu's) is the string that lets it
be regenerated exactly: metric, variant, model with its source and checksum, dtype, prompt
checksum, seed, n, package version and, in a git checkout, the commit of the library's
sources (``-dirty`` when a source file differs; ``unknown`` in an installed wheel).
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from nfeval.version import __version__
from nfeval.paths import ROOT

__all__ = ["SOURCE_PATHS", "Signature", "git_commit"]


#: What decides the library's numbers, relative to the checkout: a change here (uncommitted)
#: makes the commit ``-dirty``. A project that computes with the library names its own
#: sources (``git_commit(root, paths)``).
SOURCE_PATHS = ("src/nfeval", "prompts", "data/debateqa_sample", "data/tokenizers",
                "pyproject.toml", "requirements.txt", "requirements-models.txt",
                "requirements-embed.txt")


def git_commit(root: Path = ROOT, paths: Sequence[str] = SOURCE_PATHS) -> str:
    """The last commit that changed a source file (one of ``paths``), with ``-dirty``
    when a source file differs from it; 'unknown' outside git.

    Not ``HEAD``: a commit that changes only docs or tests changes no number, so two
    checkouts whose sources are equal name the same commit."""
    try:
        head = subprocess.run(["git", "log", "-1", "--format=%H", "--", *paths],
                              cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        if not head:  # no commit touches the sources (a shallow clone cut above them)
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                  text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                *paths], cwd=root, capture_output=True, text=True,
                               check=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


@dataclass
class Signature:
    """What produced a number. ``model`` is a ``ModelInfo.as_dict()`` or None."""

    metric: str
    variant: str = "default"
    model: Mapping[str, Any] | None = None
    dtype: str | None = None
    prompt_sha256: str | None = None
    seed: int | None = None
    n: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    version: str = __version__
    commit: str = field(default_factory=git_commit)

    def as_string(self) -> str:
        """Compact one-line form, e.g. ``metric:kendall|variant:default|model:none|...``."""
        model = self.model or {}
        parts = [
            f"metric:{self.metric}",
            f"variant:{self.variant}",
            f"model:{model.get('name', 'none')}",
            f"src:{model.get('source', 'none')}",
            f"sha:{(model.get('checksum') or 'none')[:12]}",
            f"dtype:{self.dtype or model.get('dtype') or 'none'}",
            f"prompt:{(self.prompt_sha256 or 'none')[:12]}",
            f"seed:{self.seed if self.seed is not None else 'none'}",
            f"n:{self.n if self.n is not None else 'none'}",
        ]
        parts += [f"{k}:{v}" for k, v in sorted(self.extra.items())]
        parts += [f"nfeval:{self.version}", f"commit:{self.commit[:12]}"]
        return "|".join(parts)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["string"] = self.as_string()
        return d
