"""The append-only record file under the item store and the commands' run cache.

One JSON object per line, ``{"k": <hash of the inputs>, "v": <value>, "m": <machine class>,
"s": <seconds>}``; each append is flushed and fsynced, and a line cut short by a kill is
ignored when read back, so an interrupted run loses at most the items in flight.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from nfeval.hashing import sha256_text
from nfeval.machine import machine_tag

__all__ = ["RecordFile", "read_records", "record_key"]


def record_key(*parts: Any) -> str:
    return sha256_text(json.dumps(parts, ensure_ascii=False, separators=(",", ":")))[:32]


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one store file, in order (``{"k", "v", "m", "s"}``); a line cut short
    by an interruption is skipped."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "k" in rec and "v" in rec:
            yield rec


_PREFIX = '{"k":"'


def _keyed_lines(path: Path) -> Iterator[tuple[str, str]]:
    """``(key, line)`` of each record line of a store file, the value left unparsed: a line
    as this module writes it (key first) is keyed without parsing it; any other line is
    parsed whole, and one that does not parse (cut short by a kill) is skipped."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith(_PREFIX) and line.endswith("}"):
            end = line.find('"', len(_PREFIX))
            if end > len(_PREFIX) and line.startswith(',"v":', end + 1):
                yield line[len(_PREFIX):end], line
                continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "k" in rec and "v" in rec:
            yield str(rec["k"]), line


class RecordFile:
    """One record file: the entries of every folder that has it (the first wins); appends
    go to the write folder (none: nothing is written). A stored value is parsed when it is
    first asked for (a run reads a few of a file's many lines); a line that then proves cut
    short counts as missing."""

    def __init__(self, name: str, read_dirs: Sequence[Path], write_dir: Path | None):
        self.name = name
        self.write_path = write_dir / name if write_dir is not None else None
        self.entries: dict[str, Any] = {}  # parsed values, and values appended here
        self._lines: dict[str, str] = {}  # key -> its line, until first asked for
        for folder in read_dirs:
            path = folder / name
            if not path.is_file():
                continue
            for key, line in _keyed_lines(path):
                self._lines.setdefault(key, line)
        self.n_read = len(self._lines)

    def __contains__(self, key: str) -> bool:
        return key in self.entries or key in self._lines

    def __len__(self) -> int:
        return len(self.entries) + len(self._lines)

    def get(self, key: str) -> Any:
        if key in self.entries:
            return self.entries[key]
        line = self._lines.pop(key, None)
        if line is None:
            return None
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(rec, dict) or "v" not in rec:
            return None
        self.entries[key] = rec["v"]
        return rec["v"]

    def put_many(self, items: Iterable[tuple[str, Any]], seconds: float = 0.0) -> None:
        items = [(k, v) for k, v in items if k not in self]
        if not items:
            return
        per = round(seconds / len(items), 4)
        if self.write_path is not None:
            self.write_path.parent.mkdir(parents=True, exist_ok=True)
            tag = machine_tag()
            lines = "".join(json.dumps({"k": k, "v": v, "m": tag, "s": per},
                                       ensure_ascii=False, separators=(",", ":")) + "\n"
                            for k, v in items)
            with open(self.write_path, "a", encoding="utf-8") as fh:
                fh.write(lines)
                fh.flush()
                os.fsync(fh.fileno())
        for k, v in items:
            self.entries[k] = v
