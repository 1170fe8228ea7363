"""HTTP transport of the OpenAI-compatible backends: ``httpx``, retries, bounded concurrency.

Both HTTP backends (:mod:`nfeval.models.openai_backend`, ``/v1/completions``,
and :mod:`nfeval.models.chat_backend`, ``/v1/chat/completions``) send every
request through one :class:`Transport`:

* **Client.** One ``httpx.Client`` (a maintained client with a thread-safe
  connection pool, shared by the worker threads). ``httpx.HTTPTransport(retries=n)``
  only retries failed *connects*, so the retry policy is implemented here.
* **Retry policy.** Connection errors, timeouts and the statuses in
  :data:`RETRY_STATUS` (408, 409, 429 and every 5xx) are retried up to
  ``max_retries`` times. The wait before retry ``n`` (1, 2, ...) is capped
  exponential backoff with jitter: ``c = min(max_backoff, backoff * 2**(n-1))``,
  wait uniform in ``[c/2, c]``, drawn from a ``random.Random(seed)`` (so a
  run's waits are reproducible when its requests are). A ``Retry-After``
  header (seconds or an HTTP date) is honoured: the wait is at least what the
  server asks; if it asks for more than ``max_retry_after`` seconds the call
  fails at once with an error that says so (a rate limit measured in minutes
  is better met by rerunning later: the per-item stores resume). Other 4xx
  statuses are not retried (:class:`HTTPStatusError`).
* **Several servers.** ``base_url`` may list several servers (a list, or one
  string with commas): each request goes to the one with the fewest requests
  in flight (ties: round robin). This is client-side data parallelism over
  independent replicas (several llama.cpp servers on one machine, vLLM servers
  on several machines); a server that does its own data parallelism (vLLM's
  ``--data-parallel-size``) is one URL.
* **API key.** Read from the environment variable ``api_key_env`` (default
  ``OPENAI_API_KEY``) unless given, and sent only as the
  ``Authorization: Bearer`` header of each request. It is kept in a private
  attribute, never put in :class:`~nfeval.models.base.ModelInfo`, a repr, a
  log line or an exception (server error bodies are scrubbed of it), and so
  never reaches a signature or a store file. No header is sent without a key
  (local servers need none).
* **Concurrency.** :func:`bounded_map` runs a function over items on at most
  ``n`` threads and returns the results in input order; ``on_result`` sees
  each result as it completes (in the calling thread), so a caller can store
  it at once and a crash loses only the requests in flight.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urlparse, urlunparse

import httpx

from nfeval.errors import NfevalError

log = logging.getLogger(__name__)

#: statuses retried with backoff (the others >= 400 raise HTTPStatusError at once)
RETRY_STATUS = frozenset({408, 409, 429})

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class HTTPStatusError(Exception):
    """A non-retryable HTTP error answer (4xx other than 408/409/429)."""

    def __init__(self, url: str, status: int, text: str) -> None:
        super().__init__(f"{url}: HTTP {status}")
        self.url = url
        self.status = status
        self.text = text


def normalize_base_url(base_url: str, who: str = "OpenAIModel") -> str:
    """``http(s)://host[:port][/path]/v1`` without a trailing slash (``/v1`` added if missing)."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise NfevalError(f"{who}: base_url must be a URL like http://127.0.0.1:8000/v1, "
                          f"got {base_url!r}.")
    url = base_url.strip().rstrip("/")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise NfevalError(
            f"{who}: base_url {base_url!r} is not an http(s) URL; pass the server's "
            "address, e.g. http://127.0.0.1:8000/v1."
        )
    if not parsed.path.endswith("/v1"):
        url = url + "/v1"
    return url


def display_url(url: str) -> str:
    """``url`` without user:password (safe to print, log or record)."""
    p = urlparse(url)
    if p.username is None and p.password is None:
        return url
    host = p.hostname or ""
    if p.port:
        host += f":{p.port}"
    return urlunparse(p._replace(netloc=host))


def split_base_urls(base_url: str | Sequence[str], who: str) -> list[str]:
    """One or several server roots (a list, or one string with commas), normalized, deduplicated."""
    if isinstance(base_url, str) and "," not in base_url:
        return [normalize_base_url(base_url, who)]
    raw = base_url.split(",") if isinstance(base_url, str) else list(base_url)
    urls = [normalize_base_url(u, who) for u in raw if not (isinstance(u, str) and not u.strip())]
    if not urls:
        raise NfevalError(f"{who}: base_url must name at least one server, got {base_url!r}.")
    return list(dict.fromkeys(urls))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds asked by a ``Retry-After`` header (delta-seconds or HTTP date); None if bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


@dataclass(frozen=True)
class HTTPOptions:
    """How the requests of an HTTP backend travel (:class:`Transport`): the key, timeouts,
    retries, the client. None of it changes a model's numbers, so none of it is in a
    signature.

    api_key: bearer token; default: the environment variable ``api_key_env``
        (never shown: it is left out of the repr).
    api_key_env: where the key is read from (``None``: never from the environment).
    timeout: seconds per request (connect, read, write, pool).
    max_retries: retries after the first attempt (0: none).
    backoff, max_backoff: seconds; see the module docstring.
    max_retry_after: the longest ``Retry-After`` honoured by waiting.
    seed: seeds the jitter.
    transport: an ``httpx`` transport (tests pass ``httpx.MockTransport``).
    sleep: the wait function (tests pass a recorder).
    max_connections: the client's connection pool.
    """

    api_key: str | None = field(default=None, repr=False)
    api_key_env: str | None = DEFAULT_KEY_ENV
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 120.0
    seed: int = 0
    transport: httpx.BaseTransport | None = field(default=None, repr=False, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    max_connections: int = 64


def http_options(kwargs: dict[str, Any], **defaults: Any) -> HTTPOptions:
    """The :class:`HTTPOptions` among keyword arguments (taken out of ``kwargs``), as one
    object: how :func:`nfeval.models.load_model` passes the keywords it is given on to an
    HTTP backend. ``defaults``: the backend's own (a ``None`` given is no value)."""
    names = {f.name for f in fields(HTTPOptions)}
    given = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
    return HTTPOptions(**{**defaults, **{k: v for k, v in given.items()
                                         if v is not None or k == "api_key_env"}})


class Transport:
    """JSON requests to one or several OpenAI-compatible servers (module docstring).

    Parameters
    ----------
    base_url: server root(s) ending in ``/v1`` (added if missing); a list or
        a comma-separated string for several replicas.
    options: the key, timeouts, retries, client (:class:`HTTPOptions`).
    who: the name used in error messages.
    unreachable_hint: appended to the error when no server answers at all.
    """

    def __init__(self, base_url: str | Sequence[str], options: HTTPOptions | None = None, *,
                 who: str = "OpenAIModel", unreachable_hint: str = "") -> None:
        o = options if options is not None else HTTPOptions()
        self.who = who
        self.base_urls = split_base_urls(base_url, who)
        api_key, api_key_env = o.api_key, o.api_key_env
        if api_key is None and api_key_env:
            api_key = os.environ.get(api_key_env)
        key = api_key
        self.__key = key.strip() if isinstance(key, str) and key.strip() else None
        self.api_key_env = api_key_env
        self.timeout = float(o.timeout)
        self.max_retries = max(0, int(o.max_retries))
        self.backoff = float(o.backoff)
        self.max_backoff = float(o.max_backoff)
        self.max_retry_after = float(o.max_retry_after)
        self.unreachable_hint = unreachable_hint
        self._sleep = o.sleep
        self._rng = random.Random(o.seed)
        self._lock = threading.Lock()
        self._inflight = [0] * len(self.base_urls)
        self._next = 0
        #: attempts that were retried, by reason ("HTTP 429", "ConnectError", ...)
        self.retries: dict[str, int] = {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            transport=o.transport,
            limits=httpx.Limits(max_connections=o.max_connections,
                                max_keepalive_connections=o.max_connections),
            follow_redirects=False,
        )

    # -- the key never leaves this object except as a request header --------------
    @property
    def has_key(self) -> bool:
        return self.__key is not None

    def scrub(self, text: str) -> str:
        """``text`` with the API key (if any) replaced by ``***``."""
        if self.__key and text:
            return text.replace(self.__key, "***")
        return text

    def __repr__(self) -> str:
        return (f"Transport({[display_url(u) for u in self.base_urls]!r}, "
                f"key={'set' if self.has_key else 'none'})")

    def close(self) -> None:
        self._client.close()

    # -- server choice ------------------------------------------------------------
    def _acquire(self, server: int | None) -> int:
        with self._lock:
            if server is None:
                n = len(self.base_urls)
                order = [(self._next + j) % n for j in range(n)]
                server = min(order, key=lambda i: self._inflight[i])
                self._next = (server + 1) % n
            self._inflight[server] += 1
            return server

    def _release(self, server: int) -> None:
        with self._lock:
            self._inflight[server] -= 1

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        cap = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        with self._lock:
            w = cap / 2 + self._rng.random() * cap / 2
        if retry_after is not None:
            w = max(w, retry_after)
        return w

    def _count(self, reason: str) -> None:
        with self._lock:
            self.retries[reason] = self.retries.get(reason, 0) + 1

    # -- requests -----------------------------------------------------------------
    def request(self, method: str, path: str, payload: dict | None = None, *,
                server: int | None = None) -> dict:
        """The JSON answer of ``method base_url+path``; retries as the module docstring says.

        ``server`` pins the request to one of the base URLs (index); by default
        the least busy one is used.
        """
        idx = self._acquire(server)
        try:
            return self._request(self.base_urls[idx], method, path, payload)
        finally:
            self._release(idx)

    def _request(self, base: str, method: str, path: str, payload: dict | None) -> dict:
        url = base + path
        shown = display_url(url)
        headers = {"Authorization": f"Bearer {self.__key}"} if self.__key else {}
        last = ""
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                r = self._client.request(method, url, json=payload, headers=headers)
            except httpx.TransportError as e:  # connect/read/write errors and timeouts
                if isinstance(e, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
                    raise NfevalError(f"{self.who}: request to {shown} failed "
                                      f"({self.scrub(str(e))}).") from None
                last = f"{type(e).__name__}: {self.scrub(str(e))}"
                reason = type(e).__name__
            else:
                if r.status_code < 400:
                    try:
                        return r.json()
                    except ValueError:
                        raise NfevalError(
                            f"{self.who}: {shown} answered with non-JSON "
                            f"({self.scrub(r.text[:200])!r}); is base_url an OpenAI-compatible "
                            "server (ending in /v1)?") from None
                text = self.scrub(r.text)
                if r.status_code not in RETRY_STATUS and r.status_code < 500:
                    raise HTTPStatusError(shown, r.status_code, text)
                last = f"HTTP {r.status_code}: {text[:300]}"
                reason = f"HTTP {r.status_code}"
                retry_after = parse_retry_after(r.headers.get("retry-after"))
                if retry_after is not None and retry_after > self.max_retry_after:
                    raise NfevalError(
                        f"{self.who}: {shown} asks to wait {retry_after:.0f} s before retrying "
                        f"({last}); that is more than max_retry_after="
                        f"{self.max_retry_after:.0f} s. "
                        "Rerun later: the items already computed are stored and are not "
                        "requested again.")
            if attempt == self.max_retries:
                break
            self._count(reason)
            w = self._wait(attempt + 1, retry_after)
            log.info("%s: %s on %s; retry %d/%d in %.2f s", self.who, reason, shown,
                     attempt + 1, self.max_retries, w)
            self._sleep(w)
        if last.startswith("HTTP"):
            raise NfevalError(
                f"{self.who}: {shown} kept failing after {self.max_retries + 1} attempts ({last}).")
        raise NfevalError(
            f"{self.who}: cannot reach the server at {display_url(base)} "
            f"({self.max_retries + 1} attempts; last error {last}). "
            f"{self.unreachable_hint}".rstrip())


def bounded_map(fn: Callable[[Any], Any], items: Iterable[Any], concurrency: int, *,
                on_result: Callable[[int, Any], None] | None = None) -> list:
    """``[fn(x) for x in items]`` on at most ``concurrency`` threads, results in input order.

    ``on_result(i, result)`` is called in the calling thread as each item
    completes (in completion order). The first exception stops new items
    from starting, waits for those in flight (their results still reach
    ``on_result``) and is raised.
    """
    items = list(items)
    n = max(1, int(concurrency))
    out: list = [None] * len(items)
    if n == 1 or len(items) <= 1:
        for i, x in enumerate(items):
            out[i] = fn(x)
            if on_result is not None:
                on_result(i, out[i])
        return out
    error: BaseException | None = None
    ex = ThreadPoolExecutor(max_workers=min(n, len(items)), thread_name_prefix="nfeval-http")
    pending: dict = {}
    it = iter(enumerate(items))
    exhausted = False

    def submit_next() -> None:
        nonlocal exhausted
        try:
            i, x = next(it)
        except StopIteration:
            exhausted = True
            return
        pending[ex.submit(fn, x)] = i

    try:
        for _ in range(min(n, len(items))):
            submit_next()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in done:
                i = pending.pop(f)
                try:
                    out[i] = f.result()
                except BaseException as e:  # noqa: BLE001 - re-raised below
                    if error is None:
                        error = e
                    continue
                if on_result is not None:
                    on_result(i, out[i])
                if error is None and not exhausted:
                    submit_next()
    except BaseException:
        # Ctrl-C or a failing on_result: return at once (requests in flight are abandoned)
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    if error is not None:
        raise error
    return out


__all__ = ["DEFAULT_KEY_ENV", "HTTPStatusError", "RETRY_STATUS", "Transport", "bounded_map",
           "display_url", "normalize_base_url", "parse_retry_after", "split_base_urls"]
