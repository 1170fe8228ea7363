"""Find a release file locally or download it, always verified.

:func:`resolve` looks for a registry entry (:mod:`nfeval.data.registry`) in
this order and returns the first hit:

1. an explicit ``path`` given by the caller. It must exist. If the entry has a
   known SHA-256 and the file differs, a :class:`ChecksumWarning` is issued
   (naming the expected and actual sums) and the file is used anyway: an
   explicit path may be the user's own data in the release format, which the
   loaders accept. ``strict=True`` turns the mismatch into an
   :class:`~nfeval.NfevalError`.
2. the mirror folder ``$NFEVAL_MIRROR/<relpath>``: verified; a mismatch is an
   error naming the file, the expected and the actual sum.
3. the download cache ``cache_dir()/data/<relpath>``: verified the same way
   (for entries without a known sum: against the sum recorded at download
   time in ``<file>.sha256``, if present).
4. a download from the pinned URL (``$NFEVAL_BASE_URL`` or the ``base_url``
   argument replaces ``https://raw.githubusercontent.com``), streamed into a
   temporary file in the cache folder, verified, then moved into place with
   :func:`os.replace`; a failed or corrupted download leaves nothing behind.
   Downloads are off when ``NFEVAL_OFFLINE`` is set to ``1``/``true``/``yes``
   or ``download=False`` is passed.
5. otherwise an :class:`~nfeval.NfevalError` naming the file, its source
   (repository, commit, path) and the three ways to provide it.

Entries without a known sum (the DebateQA splits) are verified through a Git
LFS pointer when the release stores them in LFS, else by format only; the
computed sum is printed so it can be pinned (see :mod:`nfeval.data.registry`).

Hashes are memoized per process by ``(path, size, mtime)``, so resolving the
same large file repeatedly costs one hash.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nfeval import NfevalError, __version__
from nfeval.hashing import clear_hash_cache, sha256_file
from nfeval.paths import MIRROR_ENV, cache_dir, mirror_dir

from .registry import BASE_URL_ENV, REGISTRY, ReleaseFile, get

OFFLINE_ENV = "NFEVAL_OFFLINE"
#: Downloads at least this large show a progress bar (when tqdm is installed).
PROGRESS_MIN_BYTES = 1 << 20
_CHUNK = 1 << 16
_LFS_PREFIX = b"version https://git-lfs.github.com/spec/"

__all__ = [
    "ChecksumWarning",
    "FileStatus",
    "OFFLINE_ENV",
    "cache_path",
    "clear_hash_cache",
    "extract_python_string",
    "mirror_path",
    "offline",
    "resolve",
    "sha256_file",
    "status",
    "verify_all",
]


class ChecksumWarning(UserWarning):
    """An explicitly given file differs from the pinned release file."""


# --------------------------------------------------------------------------- hashing

# --------------------------------------------------------------------------- locations

def offline() -> bool:
    """True when ``$NFEVAL_OFFLINE`` disables downloads."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def cache_path(name: str | ReleaseFile) -> Path:
    """Where the download cache keeps an entry: ``cache_dir()/data/<relpath>``."""
    return cache_dir() / "data" / get(name).relpath


def mirror_path(name: str | ReleaseFile) -> Path | None:
    """Where the mirror would hold an entry (``None`` when no mirror is set)."""
    m = mirror_dir()
    return m / get(name).relpath if m is not None else None


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _how_to_provide(entry: ReleaseFile) -> str:
    mp = mirror_path(entry)
    looked = f" ({MIRROR_ENV} is set, but {mp} does not exist.)" if mp is not None else ""
    return (
        f"It comes from {entry.repo} at commit {entry.commit}, file {entry.path} "
        f"({entry.url}). To provide it: set {MIRROR_ENV} to a folder holding it as "
        f"<folder>/{entry.relpath}, or put it at {cache_path(entry)}, or pass an "
        f"explicit path to the loader.{looked}"
    )


def _mismatch(entry: ReleaseFile, path: Path, expected: str, actual: str, where: str) -> str:
    return (
        f"{where} {path} for {entry.name!r} has the wrong SHA-256: expected {expected}, "
        f"got {actual}. "
    )


# --------------------------------------------------------------------------- resolve

def resolve(
    name: str | ReleaseFile,
    path: str | os.PathLike[str] | None = None,
    *,
    download: bool | None = None,
    base_url: str | None = None,
    strict: bool = False,
    timeout: float = 60.0,
    progress: bool | None = None,
) -> Path:
    """Local path of a verified release file; see the module docstring for the order.

    ``download=None`` downloads unless ``$NFEVAL_OFFLINE`` is set; ``base_url``
    overrides the download host (else ``$NFEVAL_BASE_URL``, else raw GitHub);
    ``strict`` makes an explicit file with a different sum an error;
    ``progress`` forces the progress bar on or off (default: files >= 1 MiB).
    """
    entry = get(name)

    # 1. explicit path
    if path is not None:
        p = Path(path).expanduser()
        if not p.is_file():
            what = "is a folder, not a file" if p.is_dir() else "does not exist"
            raise NfevalError(
                f"the file given for {entry.name!r}, {p}, {what}. Pass the path of an "
                f"existing file, or none to use the mirror, the cache or a download."
            )
        if entry.sha256 is not None:
            actual = sha256_file(p)
            if actual != entry.sha256:
                msg = _mismatch(entry, p, entry.sha256, actual, "the file")
                if strict:
                    raise NfevalError(
                        msg + f"It is not the pinned release file ({entry.source}); "
                        "pass the release file, or strict=False to use your own data."
                    )
                warnings.warn(
                    msg + "Using it as your own data; results are not comparable with "
                    "the release's.", ChecksumWarning, stacklevel=2)
        return p

    # 2. mirror
    mp = mirror_path(entry)
    if mp is not None and mp.is_file():
        if entry.sha256 is not None:
            actual = sha256_file(mp)
            if actual != entry.sha256:
                raise NfevalError(
                    _mismatch(entry, mp, entry.sha256, actual, "the mirror file")
                    + f"Replace it with the release file ({entry.source}) or unset {MIRROR_ENV}."
                )
        return mp

    # 3. cache
    cp = cache_path(entry)
    if cp.is_file():
        _verify_cached(entry, cp)
        return cp

    # 4. download
    if download is None:
        download = not offline()
    if not download:
        why = (f"downloads are disabled ({OFFLINE_ENV}={os.environ.get(OFFLINE_ENV)})"
               if offline() else "downloads are disabled (download=False)")
        raise NfevalError(f"release file {entry.name!r} was not found locally and {why}. "
                          + _how_to_provide(entry))
    try:
        _download(entry, cp, base_url=base_url, timeout=timeout, progress=progress)
    except NfevalError as e:
        raise NfevalError(f"{e} {_how_to_provide(entry)}") from e.__cause__
    return cp


def _recorded_sum(cp: Path) -> str | None:
    """The sum recorded next to a cached file at download time, if any."""
    side = _sidecar(cp)
    if not side.is_file():
        return None
    words = side.read_text(encoding="ascii", errors="replace").split()
    return words[0].lower() if words else None


def _verify_cached(entry: ReleaseFile, cp: Path) -> None:
    expected = entry.sha256 if entry.sha256 is not None else _recorded_sum(cp)
    if expected is None:
        return
    actual = sha256_file(cp)
    if actual != expected:
        raise NfevalError(
            _mismatch(entry, cp, expected, actual, "the cached file")
            + "The cached copy is damaged or was edited: delete it and run again to "
            "download it anew."
        )


# --------------------------------------------------------------------------- download

def _open(url: str, timeout: float):
    req = urllib.request.Request(url, headers={"User-Agent": f"nfeval/{__version__}"})
    try:
        return urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise NfevalError(f"download of {url} failed: HTTP {e.code} {e.reason}.") from e
    except urllib.error.URLError as e:
        raise NfevalError(f"download of {url} failed: {e.reason}.") from e
    except OSError as e:  # timeouts and other socket errors
        raise NfevalError(f"download of {url} failed: {e}.") from e


def _stream(url: str, out, timeout: float, progress: bool | None, label: str) -> tuple[str, int]:
    """Copy ``url`` into the open binary file ``out``; return (sha256, size)."""
    h = hashlib.sha256()
    size = 0
    with _open(url, timeout) as resp:
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        show = progress if progress is not None else (total or 0) >= PROGRESS_MIN_BYTES
        bar = _progress_bar(total, label) if show else None
        try:
            while True:
                try:
                    chunk = resp.read(_CHUNK)
                except OSError as e:
                    raise NfevalError(f"download of {url} failed after {size} bytes: {e}.") from e
                if not chunk:
                    break
                out.write(chunk)
                h.update(chunk)
                size += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    if total is not None and size != total:
        raise NfevalError(f"download of {url} was cut short: got {size} of {total} bytes.")
    return h.hexdigest(), size


def _progress_bar(total: int | None, label: str):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the bar is a nicety, not a requirement
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=label,
                leave=False, file=sys.stderr)


def _download(entry: ReleaseFile, dest: Path, *, base_url: str | None, timeout: float,
              progress: bool | None) -> None:
    url = entry.url_for(base_url)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    except OSError as e:
        raise NfevalError(f"cannot write the download of {url} into {dest.parent}: "
                          f"{e.strerror or e}. Set NFEVAL_CACHE to a writable folder.") from e
    tmp = Path(tmp_name)
    record = None
    try:
        with os.fdopen(fd, "wb") as out:
            if entry.extract:
                _download_extract(entry, url, out, timeout)
            else:
                record = _download_plain(entry, url, out, timeout, progress, base_url, tmp)
        if record is not None:
            # Record the sum of an entry without a pinned one (see _verify_cached).
            # Written first, so a cached file never lacks it.
            _sidecar(dest).write_text(f"{record}  {dest.name}\n", encoding="ascii")
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        if record is not None and not dest.exists():
            _sidecar(dest).unlink(missing_ok=True)
        raise


def _download_extract(entry: ReleaseFile, url: str, out, timeout: float) -> None:
    kind, _, variable = (entry.extract or "").partition(":")
    if kind != "python-string" or not variable:
        raise NfevalError(f"registry entry {entry.name!r} has an unknown extract rule "
                          f"{entry.extract!r}.")
    with _open(url, timeout) as resp:
        try:
            source = resp.read()
        except OSError as e:
            raise NfevalError(f"download of {url} failed: {e}.") from e
    text = extract_python_string(source, variable, origin=url)
    data = text.encode("utf-8")
    actual = hashlib.sha256(data).hexdigest()
    if entry.sha256 is not None and actual != entry.sha256:
        raise NfevalError(
            f"the {variable!r} string extracted from {url} for {entry.name!r} has the wrong "
            f"SHA-256: expected {entry.sha256}, got {actual}; nothing was saved."
        )
    out.write(data)


def _download_plain(entry: ReleaseFile, url: str, out, timeout: float,
                    progress: bool | None, base_url: str | None, tmp: Path) -> str | None:
    """Download into ``out`` and verify; return the sum to record, if none is pinned."""
    actual, size = _stream(url, out, timeout, progress, entry.relpath)
    lfs = None
    if size < 1024:
        out.flush()
        head = tmp.read_bytes()
        if head.startswith(_LFS_PREFIX):
            lfs = _parse_lfs_pointer(head, url)
    if lfs is not None:
        oid, lfs_size = lfs
        out.seek(0)
        out.truncate()
        lfs_url = entry.lfs_url_for(_lfs_base(base_url))
        actual, size = _stream(lfs_url, out, timeout, progress, entry.relpath)
        if actual != oid or size != lfs_size:
            raise NfevalError(
                f"download of {lfs_url} for {entry.name!r} does not match its Git LFS "
                f"pointer at {entry.commit}: expected SHA-256 {oid} ({lfs_size} bytes), "
                f"got {actual} ({size} bytes); nothing was saved."
            )
        url = lfs_url
    if entry.sha256 is not None:
        if actual != entry.sha256:
            raise NfevalError(
                f"download of {url} for {entry.name!r} has the wrong SHA-256: expected "
                f"{entry.sha256}, got {actual}; nothing was saved."
            )
        return None
    out.flush()
    if lfs is None:
        # No sum is known: check the format, record and print the sum.
        _check_format(entry, tmp, url)
        print(f"nfeval: downloaded {entry.name} ({entry.source}); no SHA-256 is pinned for "
              f"it, only its format was checked. Its SHA-256 is {actual}: pin it in "
              f"nfeval/data/registry.py to verify future downloads.", file=sys.stderr)
    return actual


def _lfs_base(base_url: str | None) -> str | None:
    # A test or private mirror that overrides the raw host serves LFS content
    # under <base>/media unless $NFEVAL_LFS_BASE_URL says otherwise.
    base = base_url or os.environ.get(BASE_URL_ENV)
    return f"{base.rstrip('/')}/media" if base else None


def _parse_lfs_pointer(data: bytes, url: str) -> tuple[str, int]:
    fields = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value.strip()
    oid = fields.get("oid", "")
    size = fields.get("size", "")
    if not oid.startswith("sha256:") or not size.isdigit():
        raise NfevalError(f"{url} looks like a Git LFS pointer but has no sha256 oid and size.")
    return oid.removeprefix("sha256:"), int(size)


def _check_format(entry: ReleaseFile, path: Path, url: str) -> None:
    """Format check for files without a pinned sum (JSON-lines formats only)."""
    if not entry.format.endswith("-jsonl"):
        return
    from .loaders import _check_jsonl_format  # local: loaders import this module

    n = _check_jsonl_format(path, entry.format, origin=url)
    if entry.expected_records is not None and n != entry.expected_records:
        warnings.warn(
            f"downloaded {entry.name!r} has {n} records; the release documents "
            f"{entry.expected_records}.", stacklevel=4)


# --------------------------------------------------------------------------- extraction

def _literal_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_str(node.left), _literal_str(node.right)
        if left is not None and right is not None:
            return left + right
    if isinstance(node, ast.JoinedStr):  # an f-string without placeholders
        parts = [_literal_str(v) for v in node.values]
        if all(p is not None for p in parts):
            return "".join(parts)  # type: ignore[arg-type]
    return None


def extract_python_string(source: bytes | str, variable: str, *, origin: str = "<source>") -> str:
    """The string literal assigned to ``variable`` in Python ``source``, without running it.

    Accepts a plain or implicitly concatenated literal, ``"a" + "b"`` chains
    and f-strings without placeholders, at any depth (module, function, class).
    Raises :class:`~nfeval.NfevalError` when the source does not parse, has no
    such assignment, assigns something else, or assigns different strings.
    """
    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as e:
        raise NfevalError(f"{origin} is not valid Python (line {e.lineno}): {e.msg}; "
                          f"cannot extract {variable!r}.") from e
    found: list[str] = []
    non_literal = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            text = _literal_str(value)
            if text is None:
                non_literal = True
            else:
                found.append(text)
    if not found:
        why = "is assigned something other than a string literal" if non_literal else \
            "is never assigned"
        raise NfevalError(f"{variable!r} {why} in {origin}; cannot extract it.")
    if len(set(found)) > 1:
        raise NfevalError(f"{origin} assigns {len(set(found))} different strings to "
                          f"{variable!r}; cannot tell which one to extract.")
    return found[0]


# --------------------------------------------------------------------------- status

@dataclass(frozen=True)
class FileStatus:
    """Where one registry entry resolves from, without downloading anything.

    ``source`` is ``"explicit"``, ``"mirror"``, ``"cache"``, ``"missing"`` or
    ``"bad"`` (a local copy whose sum is wrong, or an explicit path that does
    not exist). ``verified`` is True when a pinned or recorded sum matched,
    False on a mismatch, None when there was nothing to check against.
    """

    name: str
    source: str
    path: Path | None
    verified: bool | None
    detail: str = ""


def status(paths: Mapping[str, str | os.PathLike[str]] | None = None,
           names: Iterable[str] | None = None) -> list[FileStatus]:
    """For every registry entry (or ``names``): where :func:`resolve` would find it.

    ``paths`` maps entry names to explicit files. Nothing is downloaded.
    """
    paths = dict(paths or {})
    out = []
    for name in (list(names) if names is not None else list(REGISTRY)):
        entry = get(name)
        if name in paths:
            p = Path(paths[name]).expanduser()
            if not p.is_file():
                out.append(FileStatus(name, "bad", p, None, "explicit path does not exist"))
                continue
            out.append(_check(entry, "explicit", p, entry.sha256))
            continue
        mp = mirror_path(entry)
        if mp is not None and mp.is_file():
            out.append(_check(entry, "mirror", mp, entry.sha256))
            continue
        cp = cache_path(entry)
        if cp.is_file():
            expected = entry.sha256 if entry.sha256 is not None else _recorded_sum(cp)
            out.append(_check(entry, "cache", cp, expected))
            continue
        out.append(FileStatus(name, "missing", None, None, entry.url))
    return out


def _check(entry: ReleaseFile, source: str, p: Path, expected: str | None) -> FileStatus:
    if expected is None:
        return FileStatus(entry.name, source, p, None, "no SHA-256 pinned")
    actual = sha256_file(p)
    if actual == expected:
        return FileStatus(entry.name, source, p, True, "")
    # An explicit file with other content is allowed (the user's own data).
    src = source if source == "explicit" else "bad"
    return FileStatus(entry.name, src, p, False,
                      f"{source} copy: expected SHA-256 {expected}, got {actual}")


def verify_all(paths: Mapping[str, str | os.PathLike[str]] | None = None,
               *, require: bool = False) -> list[FileStatus]:
    """:func:`status` for all entries; raise on a damaged local copy.

    With ``require=True`` a missing file is an error too.
    """
    st = status(paths)
    bad = [s for s in st if s.source == "bad" or (require and s.source == "missing")]
    if bad:
        lines = "; ".join(f"{s.name}: {s.source} ({s.detail or s.path})" for s in bad)
        raise NfevalError(f"{len(bad)} release file(s) are not usable: {lines}. Replace "
                          f"damaged copies with the release files, or delete cached ones "
                          f"to download them again.")
    return st

