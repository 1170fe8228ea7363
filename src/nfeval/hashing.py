"""SHA-256 of files and text (the data and model registries), and derived seeds.

File digests are memoized per process by (path, size, mtime_ns, inode), so a
large file is hashed once however often it is resolved.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_HASHES: dict[tuple[str, int, int, int], str] = {}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def derived_seed(name: str, digits: int = 8) -> int:
    """A seed derived from a name that spells the run seed and what it is for.

    The first ``digits`` hex digits of the name's SHA-256 (8: a 32-bit seed, as
    samplers take; 16: 64 bits for numpy generators). Every derived seed in the
    project comes from here; the names (``"refgen/0/q1/golden/1"``) keep the
    draws of different purposes independent.
    """
    return int(sha256_text(name)[:digits], 16)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file, memoized by (path, size, mtime_ns, inode)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns, st.st_ino)
    digest = _HASHES.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()
        _HASHES[key] = digest
    return digest


def clear_hash_cache() -> None:
    """Forget memoized digests (tests that rewrite files in place)."""
    _HASHES.clear()
