"""The commands' cache: per-item results on disk, so an interrupted run loses nothing.

It is the item store's record file (:mod:`nfeval.itemfile`: same records, same reader,
same appends), kept in the user's cache folder instead of an artefact's
``results/<id>/items/``. A run (for example P.D. of one answers file with
one model and variant) is one file, ``<cache>/runs/<kind>-<key>.jsonl``,
whose key hashes everything that determines its numbers: model name,
source, checksum and dtype, metric variant, prompt checksum, the question
file's checksum. Each finished item is appended (flushed and fsynced) under
the hash of its id and input text, so a rerun reuses an item only where
that text is unchanged; a line cut short by a crash is ignored.

A RunCache for a model that keeps its own items (``model.keeps_items``: a
model answered from a committed item store) neither reads nor writes: the
store already keeps every model output, and a user cache from another run
must not stand in for items the store should hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from nfeval.hashing import sha256_text
from nfeval.paths import cache_dir
from nfeval.itemfile import RecordFile, record_key

#: ``steps(name, inputs, compute) -> values``: where a deterministic step's values are kept
#: (the reproduction passes its item store's ``cached_steps``; :mod:`nfeval.linkage.lexical`'s
#: embedding scores and :func:`nfeval.screen.signal_steps` take one).
StepCache = Callable[[str, Sequence[Any], Callable[[list[Any]], list[Any]]], list[Any]]


def run_key(fields: Mapping[str, Any]) -> str:
    return sha256_text(json.dumps(fields, sort_keys=True, default=str))[:20]


class RunCache:
    def __init__(self, kind: str, fields: Mapping[str, Any], directory: Path | None = None, *,
                 model: Any = None):
        self.fields = dict(fields)
        self.disabled = directory is None and bool(getattr(model, "keeps_items", False))
        folder = Path(directory) if directory else cache_dir() / "runs"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{kind}-{run_key(self.fields)}.jsonl"
        self._file = RecordFile(self.path.name, [] if self.disabled else [folder],
                                None if self.disabled else folder)

    @staticmethod
    def _item(item_id, text: str) -> str:
        # several texts may share an id (answers of different systems to one question)
        return record_key(str(item_id), sha256_text(text))

    def get(self, item_id, text: str) -> dict | None:
        """The cached result of an item, if it was computed on the same text."""
        return self._file.get(self._item(item_id, text))

    def put(self, item_id, text: str, result: Mapping[str, Any]) -> None:
        self._file.put_many([(self._item(item_id, text), json.loads(json.dumps(
            dict(result), default=str)))])

    def __len__(self) -> int:
        return len(self._file)
