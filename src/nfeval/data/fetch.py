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
   argument replaces ``https://raw.githubusercontent.com``) by
   :func:`pooch.retrieve` into a private folder in the cache folder, verified
   (pooch checks a pinned SHA-256), then moved into place with
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

Why this file is long: mirror, cache, download and their checks are one path
(each step falls back to the next), kept together so its order is read in one place.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nfeval.errors import NfevalError
from nfeval.version import __version__
from nfeval.hashing import clear_hash_cache, sha256_file
from nfeval.paths import MIRROR_ENV, cache_dir, mirror_dir

from .formats import check_jsonl_format
from .registry import BASE_URL_ENV, REGISTRY, ReleaseFile, get

OFFLINE_ENV = "NFEVAL_OFFLINE"
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
    prompt = (" or give the command a prompt of your own with --prompt FILE (nfeval linkage, "
              "nfeval da),") if entry.relpath.startswith("prompts/") else ""
    return (
        f"It comes from {entry.repo} at commit {entry.commit}, file {entry.path} "
        f"({entry.url}). To provide it: run `nfeval data fetch {entry.name}` where a network "
        f"is reachable, or set {MIRROR_ENV} to a folder holding it as "
        f"<folder>/{entry.relpath}, or put it at {cache_path(entry)},{prompt} or pass its "
        f"path to the Python loader.{looked}"
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
    ``progress`` forces pooch's progress bar on or off (default: on when stderr
    is a terminal).
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
#
# pooch does the transfer: HTTP, streaming, the progress bar, and the SHA-256
# check of a pinned file (a download that fails it is deleted). The registry's
# logic stays here: which sum a file is checked against, the Git LFS pointer of
# the unpinned splits, the extracted D.A. prompt, the format check, and errors
# that say what is missing and how to provide it.

def _download(entry: ReleaseFile, dest: Path, *, base_url: str | None, timeout: float,
              progress: bool | None) -> None:
    """Fetch ``entry`` into a private folder next to ``dest``, check it, move it into place."""
    url = entry.url_for(base_url)
    kind, _, variable = (entry.extract or "").partition(":")
    if entry.extract and (kind != "python-string" or not variable):
        raise NfevalError(f"registry entry {entry.name!r} has an unknown extract rule "
                          f"{entry.extract!r}.")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".part",
                                        dir=dest.parent))
    except OSError as e:
        raise NfevalError(f"cannot write the download of {url} into {dest.parent}: "
                          f"{e.strerror or e}. Set NFEVAL_CACHE to a writable folder.") from e
    get = functools.partial(_retrieve, folder=staging, timeout=timeout, progress=progress)
    record = None
    try:
        if entry.extract:
            # The .py itself is not pinned; the text taken out of it is.
            got = get(url, processor=functools.partial(_extract_string, variable, url))
            actual = sha256_file(got)
            if entry.sha256 is not None and actual != entry.sha256:
                raise NfevalError(
                    f"the {variable!r} string extracted from {url} for {entry.name!r} has the "
                    f"wrong SHA-256: expected {entry.sha256}, got {actual}; nothing was saved.")
        elif entry.sha256 is not None:
            got = get(url, sha256=entry.sha256)
        else:
            got = get(url, processor=functools.partial(_follow_lfs_pointer, entry, base_url, get))
            record = sha256_file(got)
            if got.parent == staging:  # not in LFS: check the format, record and print the sum
                _check_format(entry, got, url)
                print(f"nfeval: downloaded {entry.name} ({entry.source}); no SHA-256 is pinned "
                      f"for it, only its format was checked. Its SHA-256 is {record}: pin it in "
                      f"nfeval/data/registry.py to verify future downloads.", file=sys.stderr)
        if record is not None:
            # Record the sum of an entry without a pinned one (see _verify_cached).
            # Written first, so a cached file never lacks it.
            _sidecar(dest).write_text(f"{record}  {dest.name}\n", encoding="ascii")
        os.replace(got, dest)
    except BaseException:
        if record is not None and not dest.exists():
            _sidecar(dest).unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _retrieve(url: str, *, folder: Path, timeout: float, progress: bool | None,
              sha256: str | None = None, pinned_by: str = "the SHA-256 pinned in the registry",
              processor=None) -> Path:
    """:func:`pooch.retrieve` into ``folder``, its errors turned into :class:`NfevalError`."""
    import pooch
    import requests

    downloader = pooch.HTTPDownloader(
        progressbar=sys.stderr.isatty() if progress is None else progress,
        chunk_size=1 << 16, timeout=timeout, headers={"User-Agent": f"nfeval/{__version__}"})
    # pooch logs every download, and for an unpinned file advice about its own
    # API; the messages here say where to pin a sum instead.
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")
    try:
        return Path(pooch.retrieve(url, known_hash=f"sha256:{sha256}" if sha256 else None,
                                   fname=url.rsplit("/", 1)[-1], path=folder,
                                   processor=processor, downloader=downloader))
    except requests.HTTPError as e:
        raise NfevalError(f"download of {url} failed: HTTP {e.response.status_code} "
                          f"{e.response.reason}.") from e
    except requests.ConnectionError as e:  # no network, name not resolved, refused
        text = str(e)
        why = ("the connection was refused" if "refused" in text.lower() else
               "the host name could not be resolved (no network?)"
               if "resolution" in text.lower() or "resolve" in text.lower() else
               "the network could not be reached")
        raise NfevalError(f"download of {url} failed: {why} ({type(e).__name__}).") from e
    except requests.RequestException as e:  # timed out, cut short
        raise NfevalError(f"download of {url} failed: {e}.") from e
    except ValueError as e:  # pooch's sum check failed; it deleted the download
        got = re.search(r"but got (\w+)", str(e))
        if sha256 is None or got is None:
            raise
        raise NfevalError(f"download of {url} does not match {pinned_by}: expected {sha256}, "
                          f"got {got[1]}; nothing was saved.") from e
    finally:
        logger.setLevel(level)


def _extract_string(variable: str, origin: str, fname: str, action: str, pup: object) -> str:
    """pooch processor: keep only the string literal assigned to ``variable``."""
    text = extract_python_string(Path(fname).read_bytes(), variable, origin=origin)
    out = Path(fname).with_name(f"{variable}.txt")
    out.write_bytes(text.encode("utf-8"))
    return str(out)


def _follow_lfs_pointer(entry: ReleaseFile, base_url: str | None, get, fname: str,
                        action: str, pup: object) -> str:
    """pooch processor: if the raw file is a Git LFS pointer, fetch the content it pins.

    The pointer, pinned by the release commit, names the content's SHA-256,
    which pooch checks. The content lands in a subfolder ``lfs/``.
    """
    raw = Path(fname)
    head = raw.read_bytes() if raw.stat().st_size < 1024 else b""
    if not head.startswith(_LFS_PREFIX):
        return fname
    oid = _lfs_oid(head, entry.url_for(base_url))
    return str(get(entry.lfs_url_for(_lfs_base(base_url)), folder=raw.parent / "lfs",
                   sha256=oid, pinned_by=f"its Git LFS pointer's SHA-256 (commit {entry.commit})"))


def _lfs_base(base_url: str | None) -> str | None:
    # A test or private mirror that overrides the raw host serves LFS content
    # under <base>/media unless $NFEVAL_LFS_BASE_URL says otherwise.
    base = base_url or os.environ.get(BASE_URL_ENV)
    return f"{base.rstrip('/')}/media" if base else None


def _lfs_oid(data: bytes, url: str) -> str:
    fields = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value.strip()
    oid = fields.get("oid", "")
    size = fields.get("size", "")
    if not oid.startswith("sha256:") or not size.isdigit():
        raise NfevalError(f"{url} looks like a Git LFS pointer but has no sha256 oid and size.")
    return oid.removeprefix("sha256:")


def _check_format(entry: ReleaseFile, path: Path, url: str) -> None:
    """Format check for files without a pinned sum (JSON-lines formats only)."""
    if not entry.format.endswith("-jsonl"):
        return
    n = check_jsonl_format(path, entry.format, origin=url)
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

