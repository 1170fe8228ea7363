"""Backend for any OpenAI-compatible HTTP server (vLLM, llama-cpp-python, OpenAI).

How it reads scores and label distributions over HTTP (echo semantics,
verification, boundary policy): ``docs/servers.md``.

Why this file is long: it is one class speaking one protocol (completions with
echo, its probes and its fallbacks); split, each part would need the others' state.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from nfeval.errors import NfevalError
from nfeval.models.base import (
    Generation,
    LanguageModel,
    Message,
    ModelInfo,
    TokenLogprobs,
    normalize,
)
from nfeval.models.transport import (
    HTTPOptions,
    HTTPStatusError,
    Transport,
    bounded_map,
    display_url,
    normalize_base_url,
)

log = logging.getLogger(__name__)

ECHO_MODES = ("auto", "openai", "shifted", "none")
_MISSING = 5.0  # nats charged for a reference top-k token absent from the echo
_VERIFY_POSITIONS = 2
#: The completions backend's HTTP options: 3 retries (the transport's default is 5).
HTTP = HTTPOptions(max_retries=3)

_START_HINT = (
    "Start an OpenAI-compatible server first, e.g. `vllm serve MODEL --port 8000` "
    "(base_url http://127.0.0.1:8000/v1) or `python -m llama_cpp.server --model "
    "FILE.gguf --logits_all true --port 8000` (pip install 'llama-cpp-python[server]')."
)


class _EchoUnsupported(Exception):
    pass


@dataclass
class _Echo:
    """One echoed completion choice, normalized."""

    prompt: str
    tokens: list[str]
    token_logprobs: list[float | None]
    top: list[dict[str, float] | None]
    generated_text: str
    n_generated: int  # completion tokens (usage) or 1 if unknown


@dataclass
class _Parse:
    semantics: str  # "openai" | "shifted"
    first: int  # index of the continuation's first echoed token
    last: int  # index of its last echoed token
    straddle: bool


def _normalize_base_url(base_url: str) -> str:
    return normalize_base_url(base_url, "OpenAIModel")


@dataclass(frozen=True)
class EchoOptions:
    """How :class:`OpenAIModel` reads log-probabilities from echoed prompts: ``mode``
    (:data:`ECHO_MODES`: "auto" verifies each server's echo semantics against generation
    requests), the top-k asked for and its ceiling, and the verification's tolerance and
    margin (nats)."""

    mode: str = "auto"
    top_logprobs: int = 20
    max_top_logprobs: int = 1000
    verify_tol: float = 0.5
    verify_margin: float = 1.0


class OpenAIModel(LanguageModel):
    """A model served over the OpenAI completions API (see the module docstring).

    Parameters
    ----------
    base_url: server address, with or without the trailing ``/v1``.
    model: served model name; ``None`` asks ``/v1/models`` (first entry).
    http: how requests travel (:class:`nfeval.models.transport.HTTPOptions`; default
        :data:`HTTP`, 3 retries): ``api_key`` (default: the environment variable
        ``api_key_env``, ``OPENAI_API_KEY``; none is sent when neither is set; never
        stored outside the transport, never logged or recorded), ``timeout`` (seconds
        per HTTP request), ``max_retries`` (capped exponential backoff from ``backoff``
        seconds, seeded jitter, ``Retry-After`` honoured, on connection errors, timeouts
        and HTTP 408/409/429/5xx). :func:`nfeval.models.load_model` builds it from the
        keywords it is given.
    echo_logprobs: ``"auto" | "openai" | "shifted" | "none"``.
    chat_template: ``None | "none" | tokenizer folder | .gguf file | registry name``.
    top_logprobs: ``k`` asked for (servers cap it: OpenAI 5, vLLM 20 by default).
    max_top_logprobs: largest ``k`` tried when a shifted-echo correction needs
        a token outside the top-k.
    max_workers: concurrent requests (results keep their order).
    verify_tol, verify_margin: nats; see :meth:`_verify`.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        http: HTTPOptions | None = None,
        echo: "EchoOptions | None" = None,
        chat_template: str | os.PathLike | None = None,
        max_workers: int = 4,
    ) -> None:
        echo = echo or EchoOptions()
        echo_logprobs = echo.mode
        if echo_logprobs not in ECHO_MODES:
            raise NfevalError(
                f"OpenAIModel: echo_logprobs={echo_logprobs!r} is not one of {ECHO_MODES}."
            )
        if isinstance(base_url, str) and "," in base_url or not isinstance(base_url, str):
            raise NfevalError(
                "OpenAIModel: base_url must be one server (its echo log-probs are verified "
                "against generation requests on the same server); the chat backend "
                "(nfeval.models.chat_backend.ChatModel) can spread requests over several."
            )
        url = _normalize_base_url(base_url)
        self.base_url = display_url(url)  # shown in messages: no user:password
        http = http if http is not None else HTTP
        self.timeout = float(http.timeout)
        self.max_retries = int(http.max_retries)
        self.backoff = float(http.backoff)
        self._http = Transport(url, http, who="OpenAIModel", unreachable_hint=_START_HINT)
        self.echo_logprobs = echo_logprobs
        self.top_logprobs = int(echo.top_logprobs)
        self.max_top_logprobs = max(int(echo.max_top_logprobs), self.top_logprobs)
        self.max_workers = max(1, int(max_workers))
        self.verify_tol = float(echo.verify_tol)
        self.verify_margin = float(echo.verify_margin)
        self.last_verification: list = []
        self._lock = threading.Lock()
        self._tokenizer = None
        self._chat_template = None if chat_template is None else str(chat_template)
        #: semantics observed per verified response ("openai"/"shifted") -> count
        self.echo_semantics_seen: dict[str, int] = {}
        self.model = model or self._discover_model()
        self.info = ModelInfo(
            name=self.model,
            backend="openai",
            source=self.base_url,
            checksum=None,
            dtype=None,
            chat_template=(
                "none" if self._chat_template in (None, "none") else "model"
            ),
            max_length=None,
        )

    # ------------------------------------------------------------------ HTTP
    def __repr__(self) -> str:
        return f"OpenAIModel({self.base_url!r}, model={getattr(self, 'model', None)!r})"

    def _post(self, path: str, payload: dict) -> dict:
        return self._request("POST", path, payload)

    def _request(self, method: str, path: str, payload: dict | None = None) -> dict:
        return self._http.request(method, path, payload)

    def _discover_model(self) -> str:
        try:
            data = self._request("GET", "/models")
        except HTTPStatusError as e:
            raise NfevalError(
                f"OpenAIModel: GET {self.base_url}/models answered HTTP {e.status}; "
                f"{self.base_url} does not look like an OpenAI-compatible server. "
                "Check base_url (it must be the server's /v1 root), or pass model= explicitly."
            ) from None
        models = data.get("data") if isinstance(data, dict) else None
        if not models:
            raise NfevalError(
                f"OpenAIModel: {self.base_url}/models lists no model; pass model= explicitly."
            )
        return str(models[0]["id"])

    def _completion(self, payload: dict) -> dict:
        body = {"model": self.model, **payload}
        try:
            out = self._post("/completions", body)
        except HTTPStatusError as e:
            raise NfevalError(
                f"OpenAIModel: {self.base_url}/completions refused the request "
                f"(HTTP {e.status}: {e.text[:300]}). If the prompt is longer than the "
                "server's context window, start the server with a larger one."
            ) from None
        if not out.get("choices"):
            raise NfevalError(f"OpenAIModel: {self.base_url}/completions returned no choices.")
        return out

    def _map(self, fn, items: Sequence) -> list:
        return bounded_map(fn, items, self.max_workers)

    # ------------------------------------------------------------ generation
    def generate(
        self,
        prompt: str,
        *,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 256,
        seed: int = 0,
        stop: Sequence[str] = (),
    ) -> Generation:
        if max_tokens < 1:
            raise NfevalError("OpenAIModel.generate: max_tokens must be >= 1.")
        out = self._completion(
            {
                "prompt": prompt,
                "temperature": float(temperature),
                "top_p": float(top_p),
                "max_tokens": int(max_tokens),
                "seed": int(seed),
                **({"stop": list(stop)} if stop else {}),
            }
        )
        ch = out["choices"][0]
        usage = out.get("usage") or {}
        return Generation(
            text=ch.get("text", ""),
            finish_reason=ch.get("finish_reason"),
            n_tokens=usage.get("completion_tokens"),
            extra={"usage": usage, "model": out.get("model")},
        )

    def _next_token_top(self, prompt: str, k: int) -> dict[str, float] | None:
        """Top-k log-probs of the next token after ``prompt`` (generation path).

        ``None`` when the server returned no entry (llama-cpp-python omits it
        when the greedy token is an end-of-generation or BOS token).
        """
        out = self._completion(
            {
                "prompt": prompt,
                "max_tokens": 1,
                "temperature": 0.0,
                "logprobs": int(k),
                "echo": False,
                "seed": 0,
            }
        )
        lp = out["choices"][0].get("logprobs") or {}
        tops = lp.get("top_logprobs") or []
        if not tops or not tops[0]:
            return None
        return {str(t): float(v) for t, v in tops[0].items()}

    # --------------------------------------------------------------- echo
    def _echo(self, prompt: str, k: int) -> _Echo:
        out = self._completion(
            {
                "prompt": prompt,
                "max_tokens": 1,
                "temperature": 0.0,
                "logprobs": int(k),
                "echo": True,
                "seed": 0,
            }
        )
        ch = out["choices"][0]
        lp = ch.get("logprobs") or {}
        tokens = [str(t) for t in (lp.get("tokens") or [])]
        text = ch.get("text") or ""
        gen = text[len(prompt):] if text.startswith(prompt) else ""
        usage = out.get("usage") or {}
        n_gen = usage.get("completion_tokens")
        if not tokens:
            raise _EchoUnsupported("no log-probs in the echoed response")
        tlp = list(lp.get("token_logprobs") or [None] * len(tokens))
        top = list(lp.get("top_logprobs") or [None] * len(tokens))
        if len(tlp) != len(tokens) or len(top) != len(tokens):
            raise _EchoUnsupported("tokens/token_logprobs/top_logprobs lengths differ")
        return _Echo(
            prompt=prompt,
            tokens=tokens,
            token_logprobs=[None if v is None else float(v) for v in tlp],
            top=[None if t is None else {str(a): float(b) for a, b in t.items()} for t in top],
            generated_text=gen,
            n_generated=int(n_gen) if isinstance(n_gen, int) else 1,
        )

    @staticmethod
    def _locate(e: _Echo, continuation: str, n_tail: int) -> tuple[int, int, bool] | None:
        """(first, last, straddle) echoed-token indices covering ``continuation``.

        ``n_tail`` trailing entries (generated tokens) are skipped first. None
        when the echoed text does not end with the continuation there.
        """
        last = len(e.tokens) - 1 - n_tail
        if last < 0:
            return None
        acc = ""
        i = last
        while i >= 0 and len(acc) < len(continuation):
            acc = e.tokens[i] + acc
            i -= 1
        first = i + 1
        if len(acc) < len(continuation) or not acc.endswith(continuation):
            return None
        return first, last, len(acc) > len(continuation)

    def _candidates(self, e: _Echo, continuation: str, modes: Sequence[str]) -> list[_Parse]:
        """Possible readings of an echoed response, one per semantics.

        OpenAI semantics echo the completion tokens too (``n_generated`` of
        them, from ``usage``); llama-cpp-python's shifted echo never does.
        """
        out = []
        for sem in modes:
            for n_tail in ([0] if sem == "shifted" else [e.n_generated]):
                loc = self._locate(e, continuation, n_tail)
                if loc is not None:
                    out.append(_Parse(sem, loc[0], loc[1], loc[2]))
        return out

    @staticmethod
    def _distance(ref: dict[str, float], cand: dict[str, float] | None,
                  skip: str | None) -> float | None:
        """Mean |log-prob difference| over ref's top-k (a key absent from cand
        counts ``_MISSING`` nats); None when nothing can be compared."""
        keys = [k for k in ref if k != skip]
        if not keys or not cand:
            return None if not keys else _MISSING
        return sum(min(abs(cand[k] - ref[k]), _MISSING) if k in cand else _MISSING
                   for k in keys) / len(keys)

    def _verify(self, e: _Echo, parses: list[_Parse], cache: dict, k: int) -> _Parse:
        """Pick the reading of ``e`` that agrees with independent generation requests.

        For each candidate reading and up to ``_VERIFY_POSITIONS`` positions of
        the continuation (starting at its first token), the true next-token
        distribution D of the prompt text before that token is fetched through
        the generation path and compared with the echoed distribution the
        reading says is D (``top[idx]`` for OpenAI, ``top[idx-1]`` for shifted).
        The winner needs a mean distance <= ``verify_tol`` and must beat every
        other reading by ``verify_margin`` nats. llama.cpp's numbers depend on
        the batch layout (prefix-cache reuse re-evaluates single tokens), so
        the same distribution can differ by ~0.1 nats between requests, while
        two adjacent positions' distributions differ by several nats.
        """
        # text of the prompt up to each echoed index, counted from the end
        # (special tokens earlier in the context may render as "")
        def prefix_before(idx: int, p: _Parse) -> str:
            tail_chars = len("".join(e.tokens[idx : p.last + 1]))
            return e.prompt[: len(e.prompt) - tail_chars]

        scores: list[tuple[float, _Parse]] = []
        for p in parses:
            dists: list[float] = []
            for idx in range(max(p.first, 1), p.last + 1):
                if len(dists) >= _VERIFY_POSITIONS:
                    break
                q = prefix_before(idx, p)
                if not q:
                    continue
                if q not in cache:
                    cache[q] = self._next_token_top(q, k)
                ref = cache[q]
                if ref is None:  # greedy token was EOS/BOS: no entry; look deeper
                    continue
                if p.semantics == "openai":
                    d = self._distance(ref, e.top[idx], None)
                else:
                    d = self._distance(ref, e.top[idx - 1], e.tokens[idx - 1])
                if d is not None:
                    dists.append(d)
            if dists:
                scores.append((sum(dists) / len(dists), p))
        scores.sort(key=lambda t: t[0])
        self.last_verification = [(p.semantics, round(d, 4)) for d, p in scores]
        if scores and scores[0][0] <= self.verify_tol and (
            len(scores) == 1 or scores[1][0] - scores[0][0] >= self.verify_margin
        ):
            return scores[0][1]
        if len(scores) > 1 and scores[1][0] <= self.verify_tol:
            raise NfevalError(
                f"OpenAIModel: cannot tell the echo log-prob semantics of {self.base_url} "
                f"apart on this prompt (readings/distances {self.last_verification}); pass "
                "echo_logprobs='openai' or 'shifted' explicitly if you know the server."
            )
        raise NfevalError(
            f"OpenAIModel: the prompt log-probs echoed by {self.base_url} match neither the "
            "OpenAI semantics nor llama-cpp-python's shifted ones when checked against "
            f"generation log-probs (readings/distances {self.last_verification}), so they are "
            "not used. Use a server with OpenAI echo semantics (e.g. vLLM), or pass "
            "echo_logprobs='openai'/'shifted' if you are sure."
        )

    def _echo_checked(self, prompt: str, k: int) -> _Echo:
        try:
            return self._echo(prompt, k)
        except _EchoUnsupported as err:
            raise self._no_echo_error(str(err)) from None

    def _score_one(self, context: str, continuation: str, cache: dict,
                   first_echo: _Echo | None = None) -> TokenLogprobs:
        if continuation == "":
            return TokenLogprobs(token_ids=[], tokens=[], logprobs=[])
        prompt = context + continuation
        k = self.top_logprobs
        while True:
            if first_echo is not None:
                e, first_echo = first_echo, None
            else:
                e = self._echo_checked(prompt, k)
            modes = ("openai", "shifted") if self.echo_logprobs == "auto" else (self.echo_logprobs,)
            parses = self._candidates(e, continuation, modes)
            if not parses:
                if len(e.tokens) <= e.n_generated:
                    raise self._no_echo_error("only the generated token has log-probs")
                raise NfevalError(
                    f"OpenAIModel: the tokens echoed by {self.base_url} do not end with the "
                    f"continuation {continuation[:60]!r}; cannot locate it "
                    f"(echo_logprobs={self.echo_logprobs!r})."
                )
            if self.echo_logprobs == "auto":
                p = self._verify(e, parses, cache, self.top_logprobs)
            else:
                p = parses[0]
            if p.first == 0:
                raise NfevalError(
                    "OpenAIModel.continuation_logprobs: the context is empty (or fully merged "
                    "into the continuation's first token); the first token has no conditional "
                    "log-prob over this API. Give a non-empty context."
                )
            vals: list[float] = []
            missing = None
            for j in range(p.first, p.last + 1):
                if p.semantics == "openai":
                    v = e.token_logprobs[j]
                else:
                    prev = e.top[j - 1] or {}
                    tok = e.tokens[j]
                    if tok == "" or "\ufffd" in tok:
                        raise NfevalError(
                            f"OpenAIModel: token {tok!r} of continuation {continuation[:60]!r} "
                            f"cannot be identified by its text in the shifted echo of "
                            f"{self.base_url} (llama-cpp-python), so its log-prob cannot be "
                            "recovered. Use a server with correct echo log-probs (e.g. vLLM)."
                        )
                    v = prev.get(tok)
                if v is None:
                    missing = j
                    break
                vals.append(float(v))
            if missing is None:
                break
            if p.semantics == "shifted" and k < self.max_top_logprobs:
                k = min(self.max_top_logprobs, k * 5)
                continue
            raise NfevalError(
                f"OpenAIModel: the log-prob of token {e.tokens[missing]!r} of continuation "
                f"{continuation[:60]!r} cannot be recovered from {self.base_url}: its echo is "
                f"shifted (llama-cpp-python) and the token is outside the top {k} of its "
                "distribution. Raise max_top_logprobs, or use a server with correct echo "
                "log-probs (e.g. vLLM)."
            )
        with self._lock:
            self.echo_semantics_seen[p.semantics] = self.echo_semantics_seen.get(p.semantics, 0) + 1
        if p.straddle:
            log.warning(
                "OpenAIModel: token %r straddles the context/continuation boundary; it is "
                "included in the continuation's scores.", e.tokens[p.first]
            )
        toks = e.tokens[p.first : p.last + 1]
        return TokenLogprobs(token_ids=[-1] * len(toks), tokens=toks, logprobs=vals)

    def _no_echo_error(self, why: str) -> NfevalError:
        return NfevalError(
            f"OpenAIModel: {self.base_url} returns no usable log-probs for prompt tokens "
            f"({why}); continuation_logprobs needs `echo` with `logprobs` on /v1/completions. "
            "llama.cpp's own llama-server does not support this; use vLLM or "
            "`python -m llama_cpp.server --model FILE.gguf --logits_all true`."
        )

    def continuation_logprobs(
        self, context: str, continuations: Sequence[str]
    ) -> list[TokenLogprobs]:
        """Per-token log-probs of each continuation after ``context``.

        One echo request per continuation (concurrent, order kept); see the
        module docstring for the boundary policy (a straddling token is
        included) and for how shifted echo servers are verified/corrected.
        ``token_ids`` are ``-1`` (ids are not returned over this API).
        """
        if self.echo_logprobs == "none":
            raise self._no_echo_error("echo_logprobs='none'")
        return self.batch_continuation_logprobs([(context, continuations)])[0]

    def batch_continuation_logprobs(self, requests_: Sequence[tuple[str, Sequence[str]]]):
        """Many (context, continuations) requests, concurrently, results in order.

        All echo requests are sent before the verification requests, so that
        on llama-cpp-python the echoes see the server's prefix cache in the
        state a plain scoring run leaves it (verification requests re-evaluate
        single tokens, which moves llama.cpp's numbers by up to ~0.2 nats).
        """
        if self.echo_logprobs == "none":
            raise self._no_echo_error("echo_logprobs='none'")
        flat = [(i, ctx, c) for i, (ctx, conts) in enumerate(requests_) for c in conts]
        caches: dict[int, dict] = {i: {} for i in range(len(requests_))}
        echoes = self._map(
            lambda t: self._echo_checked(t[1] + t[2], self.top_logprobs) if t[2] else None, flat
        )
        by_req: dict[int, list] = {i: [] for i in range(len(requests_))}
        for (i, ctx, c), e in zip(flat, echoes):
            by_req[i].append((ctx, c, e))

        def finish(i: int) -> list[TokenLogprobs]:
            # one context at a time: its verification request is cached
            return [self._score_one(ctx, c, caches[i], e) for ctx, c, e in by_req[i]]

        return self._map(finish, list(range(len(requests_))))

    # ------------------------------------------------------------- labels
    def label_logprobs(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """Unnormalized log P(label | prompt): next-token top-k if it holds every
        label, else the exact echo path for all labels (module docstring)."""
        labels = list(labels)
        top = self._next_token_top(prompt, self.top_logprobs) or {}
        if labels and all(lab in top for lab in labels):
            return {lab: top[lab] for lab in labels}
        rest = [lab for lab in labels if lab not in top]
        try:
            scored = self.continuation_logprobs(prompt, labels)
        except NfevalError as e:
            raise NfevalError(
                f"OpenAIModel.label_distribution: labels {rest!r} are not among the top "
                f"{self.top_logprobs} next tokens and cannot be scored exactly on "
                f"{self.base_url} ({e}). Raise top_logprobs or use a server with echo "
                "log-probs."
            ) from None
        return {lab: s.total for lab, s in zip(labels, scored)}

    def label_distribution(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """P(label | prompt) renormalized over ``labels`` (see module docstring)."""
        if not labels:
            return {}
        return normalize(self.label_logprobs(prompt, labels))

    # ------------------------------------------------------------ templates
    def _load_tokenizer(self):
        if self._tokenizer is not None:
            return self._tokenizer
        spec = self._chat_template
        try:
            from transformers import AutoTokenizer
        except ImportError as e:  # pragma: no cover
            raise NfevalError(
                "OpenAIModel: chat_template needs `transformers` to render the template."
            ) from e
        p = Path(spec).expanduser()
        if p.is_dir():
            tok = AutoTokenizer.from_pretrained(str(p))
        elif p.is_file() and p.suffix == ".gguf":
            tok = AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name)
        else:
            try:
                from nfeval.models import registry
            except ImportError:
                registry = None
            if registry is None:
                raise NfevalError(
                    f"OpenAIModel: chat_template={spec!r} is neither a tokenizer folder, a "
                    ".gguf file, nor a registry name; pass one of those or 'none'."
                )
            # this environment's converted folder (nfeval's model cache) loads fastest
            cached = None
            try:
                d = registry.converted_dir(spec)
                if d is not None and (d / "tokenizer_config.json").is_file():
                    cached = d
            except Exception:
                cached = None
            if cached is not None:
                tok = AutoTokenizer.from_pretrained(str(cached))
            else:
                try:
                    g = Path(registry.gguf_file(spec))
                except NfevalError:
                    raise
                except Exception as e:
                    raise NfevalError(
                        f"OpenAIModel: chat_template={spec!r} is not a tokenizer folder, .gguf "
                        f"file or known registry name ({e})."
                    ) from e
                tok = AutoTokenizer.from_pretrained(str(g.parent), gguf_file=g.name)
        if not getattr(tok, "chat_template", None):
            raise NfevalError(
                f"OpenAIModel: the tokenizer from chat_template={spec!r} has no chat template; "
                "pass chat_template='none' for plain prompts."
            )
        self._tokenizer = tok
        return tok

    def apply_chat_template(
        self, messages: Sequence[Message], *, add_generation_prompt: bool = True
    ) -> str:
        if self._chat_template is None:
            raise NfevalError(
                "OpenAIModel: no chat template is known for the served model. Pass "
                "chat_template=<tokenizer folder | .gguf file | registry name> (the template "
                "of the model the server runs), or chat_template='none' for plain prompts."
            )
        if self._chat_template == "none":
            return "\n\n".join(m.content for m in messages)
        tok = self._load_tokenizer()
        with self._lock:
            return tok.apply_chat_template(
                [{"role": m.role, "content": m.content} for m in messages],
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
            )


_HTTPError = HTTPStatusError  # the name this module used before the shared transport


__all__ = ["ECHO_MODES", "EchoOptions", "OpenAIModel"]
