"""What produced a number: a :class:`Signature` (after sacrebleu's) is the string that lets it
be regenerated exactly: metric, variant, model with its source and checksum, dtype, prompt
checksum, seed, n, package version and the git commit of the sources (``-dirty`` when a
source file differs).
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from nfeval.version import __version__
from nfeval.paths import ROOT

__all__ = ["SOURCE_PATHS", "Signature", "git_commit"]


#: What decides the numbers: a change here (uncommitted) makes the commit ``-dirty``.
#: Results, figures and the item store are outputs, so writing them does not.
SOURCE_PATHS = ("src", "notebooks", "prompts", "data", "Makefile", "pyproject.toml",
                "requirements.txt", "requirements-models.txt", "requirements-embed.txt")


def git_commit(root: Path = ROOT) -> str:
    """The last commit that changed a source file (:data:`SOURCE_PATHS`), with ``-dirty``
    when a source file differs from it; 'unknown' outside git.

    Not ``HEAD``: a commit that changes only results, docs or tests changes no number, and a
    rerun at it must write the same bytes as the run it repeats (``make reproduce`` leaves a
    clean tree). Two checkouts whose sources are equal name the same commit."""
    try:
        head = subprocess.run(["git", "log", "-1", "--format=%H", "--", *SOURCE_PATHS],
                              cwd=root, capture_output=True, text=True, check=True).stdout.strip()
        if not head:  # no commit touches the sources (a shallow clone cut above them)
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                                  text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                *SOURCE_PATHS], cwd=root, capture_output=True, text=True,
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
