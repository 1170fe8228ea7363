"""Per-item results cached on disk, so an interrupted run loses nothing.

A run (for example P.D. of one answers file with one model and variant) is
identified by a key built from everything that determines its numbers:
model name, source, checksum and dtype, metric variant, prompt checksum and
the question file's checksum. Each finished item is appended as one JSON
line (flushed and fsynced) to ``<cache>/runs/<kind>-<key>.jsonl`` together
with the SHA-256 of its input text; a rerun reuses an item only if that text
is unchanged. A line cut short by a crash is ignored.

While a notebook's committed item store is active (:mod:`nfeval.store`), a
RunCache neither reads nor writes: the store already keeps every model
output, and a user cache from another run must not stand in for items the
store should hold.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from nfeval.hashing import sha256_text
from nfeval.paths import cache_dir


def run_key(fields: Mapping[str, Any]) -> str:
    return sha256_text(json.dumps(fields, sort_keys=True, default=str))[:20]


class RunCache:
    def __init__(self, kind: str, fields: Mapping[str, Any], directory: Path | None = None):
        from nfeval.store import active_store

        self.fields = dict(fields)
        self.disabled = directory is None and active_store() is not None
        folder = Path(directory) if directory else cache_dir() / "runs"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{kind}-{run_key(self.fields)}.jsonl"
        self._done: dict[str, dict] = {}
        if self.path.exists() and not self.disabled:
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interruption
                self._done[(str(rec["id"]), rec.get("input_sha256"))] = rec

    def get(self, item_id, text: str) -> dict | None:
        """The cached result of an item, if it was computed on the same text.

        Several texts may share an id (answers of different systems to one
        question); each (id, text) pair is its own entry."""
        rec = self._done.get((str(item_id), sha256_text(text)))
        return rec["result"] if rec else None

    def put(self, item_id, text: str, result: Mapping[str, Any]) -> None:
        rec = {"id": item_id, "input_sha256": sha256_text(text), "result": dict(result)}
        if self.disabled:
            self._done[(str(item_id), rec["input_sha256"])] = rec
            return
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._done[(str(item_id), rec["input_sha256"])] = rec

    def __len__(self) -> int:
        return len(self._done)
