"""The project's own prompts, read from the ``prompts/`` folder.

Each file there opens with ``#`` lines saying which paper item it stands in
for (the release never published that prompt, or the paper's text does not
print it); those lines are dropped here. Release prompts are not in that
folder: they are read from the release files (:func:`nfeval.data.load_prompt`).
"""

from __future__ import annotations

from pathlib import Path

from nfeval.errors import NfevalError
from nfeval.paths import PROMPTS


def _path(name: str) -> Path:
    path = PROMPTS / (name if name.endswith(".txt") else f"{name}.txt")
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPTS.glob("*.txt")))
        raise NfevalError(f"No project prompt {name!r} in {PROMPTS}; known: {known}.")
    return path


def prompt_lines(name: str) -> list[str]:
    """Non-comment, non-blank lines of a prompt file."""
    lines = _path(name).read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def prompt_text(name: str) -> str:
    """A prompt file without its header comment (inner blank lines kept)."""
    lines = _path(name).read_text(encoding="utf-8").splitlines()
    while lines and (lines[0].lstrip().startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines).rstrip("\n")


def restate_prompts() -> list[str]:
    """The five P.D. restate instructions (DebateQA Figure 4); the first is the paper's default."""
    return prompt_lines("pd_restate_prompts")


def system_prompts() -> dict[str, str]:
    """``{"basic": ..., "comprehensive": ..., "detailed": ...}`` (DebateQA Table 5)."""
    out: dict[str, str] = {}
    for ln in prompt_lines("answer_system_prompts"):
        name, sep, text = ln.partition("\t")
        if not sep or not text.strip():
            raise NfevalError(f"answer_system_prompts.txt: expected NAME<TAB>PROMPT, got {ln!r}")
        out[name.strip()] = text.strip()
    return out


def length_instruction(n: int) -> str:
    """``"Answer in about {n} tokens."`` (DebateQA Figure 10)."""
    return prompt_text("answer_length_instruction").format(n=int(n))
