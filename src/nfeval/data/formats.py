"""The JSON-lines formats of the release and answer files: their records, line readers and
checks, with nothing that finds a file (:mod:`nfeval.data.fetch` checks a downloaded file with
:func:`check_jsonl_format`; :mod:`nfeval.data.loaders` reads the files it finds).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nfeval.errors import NfevalError

__all__ = ["AnswerProblem", "DebateItem", "PartialAnswer", "answer_lines", "check_jsonl_format",
           "debate_item", "decode_lines", "iter_jsonl"]


@dataclass(frozen=True)
class PartialAnswer:
    """One perspective on a debatable question."""

    point_of_view: str
    explanation: str

    @property
    def text(self) -> str:
        """The text the release scores: ``f"{point_of_view}. {explanation}"``."""
        return f"{self.point_of_view}. {self.explanation}"


@dataclass(frozen=True)
class DebateItem:
    """A DebateQA question with its partial answers."""

    id: int
    question: str
    partial_answers: list[PartialAnswer]


@dataclass(frozen=True)
class AnswerProblem:
    """A line of an answers file that was not taken (``line`` counts from 1)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def decode_lines(data: bytes) -> tuple[str, dict[int, str]]:
    """Text of UTF-8 ``data`` line by line: a line in another encoding becomes an empty line,
    named in the returned ``{line number: what is wrong}`` (the other lines stay usable)."""
    try:
        return data.decode("utf-8"), {}
    except UnicodeDecodeError:
        pass
    out, bad = [], {}
    for i, raw in enumerate(data.split(b"\n"), 1):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            bad[i] = (f"not UTF-8 text (byte {e.start + 1} of the line: {e.reason}); save the "
                      "file as UTF-8")
            out.append("")
    return "\n".join(out), bad


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any | None, str | None]]:
    """(line number, parsed value or None, error or None) for every non-final line; a line
    that is not UTF-8 is named like any other bad line."""
    try:
        text, bad = decode_lines(path.read_bytes())
    except OSError as e:
        raise NfevalError(f"cannot read {path}: {e.strerror or e}.") from e
    lines = text.split("\n")
    if lines and lines[-1].strip() == "" and len(lines) not in bad:
        lines.pop()
    for i, line in enumerate(lines, 1):
        if i in bad:
            yield i, None, bad[i]
            continue
        if not line.strip():
            yield i, None, "blank line"
            continue
        try:
            yield i, json.loads(line), None
        except json.JSONDecodeError as e:
            yield i, None, f"invalid JSON: {e.msg} at column {e.colno}"


def debate_item(obj: Any) -> DebateItem:
    """Parse one split line; raise ValueError with the reason."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with id, question and partial_answers")
    qid = obj.get("id")
    if isinstance(qid, bool) or not isinstance(qid, int):
        raise ValueError(f"id {qid!r} is not an integer")
    question = obj.get("question")
    if not isinstance(question, str):
        raise ValueError("question is missing or not a string")
    pas = obj.get("partial_answers")
    if not isinstance(pas, list):
        raise ValueError("partial_answers is missing or not a list")
    parts = []
    for j, pa in enumerate(pas):
        if not isinstance(pa, dict) or not isinstance(pa.get("point_of_view"), str) \
                or not isinstance(pa.get("explanation"), str):
            raise ValueError(f"partial answer {j} needs string point_of_view and explanation")
        parts.append(PartialAnswer(pa["point_of_view"], pa["explanation"]))
    return DebateItem(qid, question, parts)


def answer_lines(p: Path, *, strict: bool = False
                 ) -> tuple[dict[int, str], dict[int, int], list[AnswerProblem]]:
    """The answers of an answers file ``{"generation": str, "id": int}`` a line: (id ->
    generation, id -> its line, the lines left out and why); ``strict``: raise on the first
    problem instead (:func:`nfeval.data.loaders.load_answers` says what is left out)."""
    answers: dict[int, str] = {}
    first_line: dict[int, int] = {}
    problems: list[AnswerProblem] = []

    def problem(line: int, reason: str) -> None:
        if strict:
            raise NfevalError(f"{p}, line {line}: {reason}.")
        problems.append(AnswerProblem(line, reason))

    for line, obj, err in iter_jsonl(p):
        if err is not None:
            problem(line, err)
            continue
        if not isinstance(obj, dict):
            problem(line, "expected a JSON object with generation and id")
            continue
        qid = obj.get("id")
        gen = obj.get("generation")
        if "id" not in obj:
            problem(line, "no id")
        elif isinstance(qid, bool) or not isinstance(qid, int):
            problem(line, f"id {qid!r} is not an integer")
        elif "generation" not in obj:
            problem(line, f"no generation for id {qid}")
        elif not isinstance(gen, str):
            problem(line, f"generation for id {qid} is not a string")
        elif not gen.strip():
            problem(line, f"empty generation for id {qid}")
        elif qid in answers:
            problem(line, f"duplicate id {qid} (first on line {first_line[qid]}, kept)")
        else:
            answers[qid] = gen
            first_line[qid] = line
    return answers, first_line, problems


def check_jsonl_format(path: Path, fmt: str, origin: str | None = None) -> int:
    """Check a JSON-lines file of a registry format; return its record count."""
    where = origin or str(path)
    if fmt == "debateqa-jsonl":
        n = 0
        for line, obj, err in iter_jsonl(path):
            if err is None:
                try:
                    debate_item(obj)
                except ValueError as e:
                    err = str(e)
            if err is not None:
                raise NfevalError(f"{where}, line {line}: {err}; it is not a DebateQA split "
                                  "file, nothing was saved.")
            n += 1
        return n
    if fmt == "answers-jsonl":
        return len(answer_lines(path, strict=True)[0])
    raise NfevalError(f"no format check for {fmt!r}.")
