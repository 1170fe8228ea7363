"""Chat models as judges over ``POST /v1/chat/completions`` (OpenAI, vLLM, llama-cpp-python...).

A hosted chat model (the papers' ChatGPT rows) is reached only through the
chat endpoint: the server applies the model's chat template, and there is
no prompt to echo, so what it can give is generated text and the top-k
log-probabilities of the generated tokens. :class:`ChatModel` implements the
project's :class:`~nfeval.models.base.LanguageModel` interface on that.

Prompts are serialized messages
-------------------------------
The judges build a prompt with ``judge.chat_prompt(user)`` and then treat it
as a string: LINKAGE and pointwise cut it at the candidate's place and put
each candidate in (``prefix + candidate + suffix``), ``prob`` mode appends
the forced ``[[`` to it, a sampled reply that stopped at ``]]`` is continued
from ``prompt + reply_so_far``. A chat backend needs messages, not a
rendered string, so :meth:`ChatModel.apply_chat_template` returns the
messages *serialized* in a form that survives those string operations and
that :meth:`~ChatModel.generate` and :meth:`~ChatModel.label_logprobs` parse
back (:func:`parse_chat_prompt`)::

    <|nfeval-chat:system|>...<|nfeval-chat:user|>...<|nfeval-chat:reply|>PREFILL

Each message's content follows its role marker verbatim (no escaping, so a
candidate spliced into the user text stays the user text). With
``add_generation_prompt=True`` the string ends with the ``reply`` marker;
anything appended after it is the beginning of the assistant's reply (an
**assistant prefill**: ``[[`` in ``prob`` mode, the reply so far when a
sampled reply is continued). A content holding a marker is refused. A plain
string that is not a serialized chat prompt is refused too, with a message
naming what to pass, so a base-model prompt (e.g. D.A.'s ``official`` mode
on a custom template without a digit) is never silently sent as a user turn.
``ModelInfo.chat_template`` is ``"server"``: the template is the server's.

What each judge path can do over a chat API
-------------------------------------------
* ``sample`` mode (every judge; D.A. ``generate``): messages in, text out,
  ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``. Works on any
  server. A sampled LINKAGE/pointwise reply whose first ``[[...]]`` holds no
  label is continued from the reply so far, which is an assistant prefill
  (below); without prefill support that rare case raises.
* ``prob`` mode reads the top-``k`` log-probabilities of the **first
  generated token** (``logprobs: true, top_logprobs: k``; OpenAI and vLLM
  cap ``k`` at 20 by default). A label whose text is one of those tokens
  gets that log-prob (the largest, if several top-k tokens share the text).
  **D.A.** (labels ``"0"``/``"1"`` after the chat prompt, no prefill) works.
  A label outside the top-k gets no number: by default
  (``missing_label="error"``) the call raises; with ``missing_label="-inf"``
  it gets ``-inf`` (it is then 0 after renormalizing; if every label is
  outside the top-k the call raises anyway). A value is never made up.
* **LINKAGE / pointwise / pairwise** in ``prob`` mode pre-fill the reply with
  ``[[`` and score labels such as ``"3]]"`` (two tokens). That needs the
  server to continue an assistant message: ``assistant_prefill=
  "continue_final_message"`` (vLLM: the last message is the assistant's
  partial reply, sent with ``continue_final_message: true,
  add_generation_prompt: false``) or ``"trailing-assistant"`` (a server that
  continues a final assistant message by itself). With the default
  ``"none"`` (OpenAI's API; llama-cpp-python, whose chat handler always
  opens a new assistant turn) a prompt with a prefill raises
  :class:`~nfeval.NfevalError`: nothing can be checked over HTTP, so the
  server's support is declared, not detected. With prefill support a
  multi-token label is scored by continuing: its first token's log-prob
  from the first request's top-k, then the next token's from a request
  whose prefill ends with the first token's text, and so on (at each step
  the longest top-k token that the rest of the label starts with: one
  tokenization path, as the in-process backends score one tokenization).
* ``continuation_logprobs`` (P.D., reference perplexity) needs log-probs of
  *given* text, which no chat API returns: it raises and points to the
  completions backend (:mod:`nfeval.models.openai_backend`).

Concurrency, retries, caching
-----------------------------
Requests go through :class:`nfeval.models.transport.Transport` (``httpx``,
retries with capped exponential backoff and seeded jitter on connection
errors, timeouts, 408/409/429 and 5xx, ``Retry-After`` honoured; several
``base_url`` replicas, least busy first; the API key read from
``$OPENAI_API_KEY`` or the variable named by ``api_key_env`` and sent only
as a bearer header, never recorded). :meth:`ChatModel.generate_many` and
the batch label methods run ``concurrency`` requests at a time and return
results in input order. :meth:`~ChatModel.generate_many` keeps each item
as it completes (in a :class:`nfeval.runcache.RunCache`, or through its
``on_result`` callback); a crash loses only the requests in flight.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Sequence

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
)
# the chat prompt format (nfeval.models.chat_prompt): used here, and importable from here
from nfeval.models.chat_prompt import (
    ChatPrompt,
    first_token_top,
    is_chat_prompt,
    parse_chat_prompt,
    serialize_messages,
)

log = logging.getLogger(__name__)

PREFILL_MODES = ("none", "continue_final_message", "trailing-assistant")
MISSING_LABEL = ("error", "-inf")
_START_HINT = (
    "Start an OpenAI-compatible server, e.g. `vllm serve MODEL --port 8000` or "
    "`python -m llama_cpp.server --model FILE.gguf --port 8000`, or give a hosted API's "
    "base_url (with its key in $OPENAI_API_KEY)."
)


@dataclass(frozen=True)
class ChatRequest:
    """The shape of every request of a :class:`ChatModel`: ``max_tokens_param``, the field of
    the token budget (``"max_tokens"``; newer OpenAI models want ``"max_completion_tokens"``),
    and ``extra_body``, fields added to every request (e.g. vLLM's
    ``{"chat_template_kwargs": {...}}``)."""

    max_tokens_param: str = "max_tokens"
    extra_body: Mapping[str, Any] | None = None


#: :meth:`ChatModel.generate_many`'s decoding options and their defaults (:meth:`generate`'s)
DECODING_DEFAULTS = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 256, "stop": ()}


# ----------------------------------------------------------------------------- model
class ChatModel(LanguageModel):
    """A chat model behind ``/v1/chat/completions`` (see the module docstring).

    Parameters
    ----------
    base_url: server root (``.../v1`` added if missing); several replicas as
        a list or a comma-separated string.
    model: served model name; None asks ``/v1/models`` (it must list exactly one).
    api_key: bearer token; default: the environment variable ``api_key_env``.
    api_key_env: the variable the key is read from (default ``OPENAI_API_KEY``).
    concurrency: requests in flight in the batch methods.
    top_logprobs: ``k`` for ``prob`` mode (OpenAI and vLLM allow at most 20 by default).
    assistant_prefill: ``"none"`` | ``"continue_final_message"`` (vLLM) |
        ``"trailing-assistant"``; whether and how the server continues a
        partial assistant reply.
    missing_label: ``"error"`` or ``"-inf"`` for a label outside the top-k.
    request: the shape of every request (:class:`ChatRequest`): ``max_tokens_param``, the
        request field for the token budget
        (``"max_tokens"``; newer OpenAI models want ``"max_completion_tokens"``).
        ``extra_body``, fields added to every request (e.g. vLLM's
        ``{"chat_template_kwargs": {...}}``).
    http: the key (``api_key``, ``api_key_env``: default ``OPENAI_API_KEY``), timeouts,
        retries and client (:class:`nfeval.models.transport.HTTPOptions`; tests pass an
        ``httpx.MockTransport``). :func:`nfeval.models.load_model` builds it from the
        keywords it is given (``load_model(None, "openai-chat", base_url=..., timeout=...)``).
    """

    def __init__(self, base_url: str | Sequence[str], model: str | None = None, *,
                 http: HTTPOptions | None = None, concurrency: int = 4,
                 top_logprobs: int = 20, assistant_prefill: str = "none",
                 missing_label: str = "error", request: "ChatRequest | None" = None) -> None:
        if assistant_prefill not in PREFILL_MODES:
            raise NfevalError(f"ChatModel: assistant_prefill={assistant_prefill!r} is not one of "
                              f"{PREFILL_MODES}.")
        if missing_label not in MISSING_LABEL:
            raise NfevalError(f"ChatModel: missing_label={missing_label!r} is not one of "
                              f"{MISSING_LABEL}.")
        if int(top_logprobs) < 1:
            raise NfevalError("ChatModel: top_logprobs must be >= 1.")
        self._http = Transport(base_url, http, who="ChatModel", unreachable_hint=_START_HINT)
        self.base_urls = [display_url(u) for u in self._http.base_urls]
        self.concurrency = max(1, int(concurrency))
        self.top_logprobs = int(top_logprobs)
        self.assistant_prefill = assistant_prefill
        self.missing_label = missing_label
        request = request or ChatRequest()
        self.max_tokens_param = str(request.max_tokens_param)
        self.extra_body = dict(request.extra_body or {})
        self.model = model or self._discover_model()
        self.info = ModelInfo(name=self.model, backend="openai-chat",
                              source=",".join(self.base_urls), checksum=None, dtype=None,
                              chat_template="server", max_length=None)

    def __repr__(self) -> str:
        return f"ChatModel({','.join(self.base_urls)!r}, model={getattr(self, 'model', None)!r})"

    @property
    def retries(self) -> dict[str, int]:
        """Retried attempts so far, by reason (``"HTTP 429"``, ``"ConnectError"``...)."""
        return dict(self._http.retries)

    # ---------------------------------------------------------------- HTTP
    def _discover_model(self) -> str:
        try:
            data = self._http.request("GET", "/models")
        except HTTPStatusError as e:
            raise NfevalError(
                f"ChatModel: GET {e.url} answered HTTP {e.status}; is base_url the server's /v1 "
                "root? Or pass model= explicitly.") from None
        models = data.get("data") if isinstance(data, dict) else None
        if not models:
            raise NfevalError("ChatModel: the server lists no model; pass model= explicitly.")
        if len(models) > 1:
            names = [str(m.get("id")) for m in models[:8]]
            raise NfevalError(f"ChatModel: the server lists {len(models)} models ({names}...); "
                              "pass model= to say which one judges.")
        return str(models[0]["id"])

    def _check_prefill(self, cp: ChatPrompt) -> None:
        pre = cp.prefill or ""
        if pre and self.assistant_prefill == "none":
            raise NfevalError(
                    "ChatModel: this prompt pre-fills the start of the assistant's reply "
                    f"({pre[:40]!r}: LINKAGE/pointwise/pairwise prob mode forces '[[', and a "
                    "sampled reply is continued from the reply so far), which the chat API "
                    "cannot do unless the server continues a partial assistant message. Use "
                    "generate mode, or, on a server that supports it, assistant_prefill="
                    "'continue_final_message' (vLLM) or 'trailing-assistant'. OpenAI's API and "
                "llama-cpp-python's chat endpoint do not.")

    def _chat(self, cp: ChatPrompt, body: dict) -> dict:
        self._check_prefill(cp)
        msgs = cp.payload_messages()
        pre = cp.prefill or ""
        extra: dict[str, Any] = {}
        if pre:
            msgs = msgs + [{"role": "assistant", "content": pre}]
            if self.assistant_prefill == "continue_final_message":
                extra = {"continue_final_message": True, "add_generation_prompt": False}
        payload = {"model": self.model, "messages": msgs, **body, **self.extra_body, **extra}
        try:
            out = self._http.request("POST", "/chat/completions", payload)
        except HTTPStatusError as e:
            raise NfevalError(
                f"ChatModel: {e.url} refused the request (HTTP {e.status}: {e.text[:300]})."
            ) from None
        if not isinstance(out, dict) or not out.get("choices"):
            raise NfevalError("ChatModel: the chat completion has no choices.")
        return out

    # ---------------------------------------------------------- generation
    def generate(self, prompt: str, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 256, seed: int = 0, stop: Sequence[str] = ()) -> Generation:
        """The assistant's reply to a chat prompt (its prefill, if any, is continued).

        ``text`` is the newly generated text only (without the prefill).
        """
        if max_tokens < 1:
            raise NfevalError(f"ChatModel.generate: max_tokens must be >= 1, got {max_tokens}.")
        if temperature < 0 or not (0 < top_p <= 1):
            raise NfevalError(f"ChatModel.generate: need temperature >= 0 and 0 < top_p <= 1, "
                              f"got {temperature}, {top_p}.")
        if isinstance(stop, str):
            stop = [stop]
        cp = parse_chat_prompt(prompt)
        body = {"temperature": float(temperature), "top_p": float(top_p),
                self.max_tokens_param: int(max_tokens), "seed": int(seed)}
        if stop:
            body["stop"] = list(stop)
        out = self._chat(cp, body)
        ch = out["choices"][0]
        msg = ch.get("message") or {}
        usage = out.get("usage") or {}
        return Generation(text=msg.get("content") or "", finish_reason=ch.get("finish_reason"),
                          n_tokens=usage.get("completion_tokens"),
                          extra={"usage": usage, "model": out.get("model")})

    def generate_many(self, prompts: Sequence[str], *, concurrency: int | None = None,
                      seed: int | Sequence[int] = 0, cache=None,
                      on_result: Callable[[int, Generation], None] | None = None,
                      **decoding: Any) -> list[Generation]:
        """:meth:`generate` of every prompt, ``concurrency`` requests at a time, in input order.

        ``decoding``: :meth:`generate`'s ``temperature`` (0), ``top_p`` (1), ``max_tokens``
        (256) and ``stop`` (none). ``seed``: one seed for all, or one per prompt. Each item is
        kept as
        soon as it completes, so a crash loses only the requests in flight:

        * ``cache`` (a :class:`nfeval.runcache.RunCache` for command-line
          runs) is read first and each new item is put in it;
        * ``on_result(i, generation)`` sees each item as it completes.
        """
        if isinstance(prompts, str):
            raise NfevalError("prompts must be a list of strings, not one string.")
        prompts = list(prompts)
        seeds = [int(seed)] * len(prompts) if isinstance(seed, int) else [int(s) for s in seed]
        if len(seeds) != len(prompts):
            raise NfevalError(f"generate_many: {len(seeds)} seeds for {len(prompts)} prompts.")
        n = self.concurrency if concurrency is None else max(1, int(concurrency))
        if bad := sorted(set(decoding) - set(DECODING_DEFAULTS)):
            raise NfevalError(f"generate_many: unknown decoding option(s) {bad}; use "
                              f"{', '.join(DECODING_DEFAULTS)}")
        dec = {**DECODING_DEFAULTS, **decoding}
        dec["stop"] = [dec["stop"]] if isinstance(dec["stop"], str) else list(dec["stop"])
        for p in prompts:  # fail before any request on a prompt that cannot be sent
            self._check_prefill(parse_chat_prompt(p))
        out: list[Generation | None] = [None] * len(prompts)
        todo = list(range(len(prompts)))
        if cache is not None:
            todo = []
            for i, p in enumerate(prompts):
                rec = cache.get(_cache_id(dec, seeds[i]), p)
                if rec is None:
                    todo.append(i)
                else:
                    out[i] = Generation(text=rec["text"], finish_reason=rec.get("finish_reason"),
                                        n_tokens=rec.get("n_tokens"), extra={"cached": True})


        def gen_one(p: str, s: int) -> Generation:
            return self.generate(p, seed=s, **dec)

        def done(j: int, g: Generation) -> None:
            i = todo[j]
            out[i] = g
            if cache is not None:
                cache.put(_cache_id(dec, seeds[i]), prompts[i],
                          {"text": g.text, "finish_reason": g.finish_reason,
                           "n_tokens": g.n_tokens})
            if on_result is not None:
                on_result(i, g)

        bounded_map(lambda i: gen_one(prompts[i], seeds[i]), todo, n, on_result=done)
        return out  # type: ignore[return-value]

    # --------------------------------------------------------------- labels
    def _top(self, cp: ChatPrompt, cache: dict) -> dict[str, float]:
        key = cp.prefill or ""
        if key not in cache:
            out = self._chat(cp, {self.max_tokens_param: 1, "temperature": 0.0, "logprobs": True,
                                  "top_logprobs": self.top_logprobs, "seed": 0})
            top = first_token_top(out)
            if top is None:
                raise NfevalError(
                    "ChatModel: the server returned no log-probabilities on the chat endpoint "
                    "(it ignores `logprobs`/`top_logprobs`), so prob mode cannot be used with "
                    "it; use generate mode.")
            cache[key] = top
        return cache[key]

    def _label_logprob(self, cp: ChatPrompt, label: str, cache: dict) -> float | None:
        """log P(label) along one tokenization path; None when a step is outside the top-k."""
        total, done = 0.0, ""
        base = cp.prefill or ""
        while done != label:
            step = ChatPrompt(cp.messages, base + done)
            top = self._top(step, cache)
            rest = label[len(done):]
            if rest in top:
                return total + top[rest]
            heads = [t for t in top if t and rest.startswith(t)]
            if not heads:
                return None
            if self.assistant_prefill == "none":
                raise NfevalError(
                    f"ChatModel: label {label!r} is not one token among the server's top "
                    f"{self.top_logprobs} (its first token would be {max(heads, key=len)!r}); "
                    "scoring a multi-token label means continuing the reply after its first "
                    "token, which needs assistant prefill (assistant_prefill="
                    "'continue_final_message' on vLLM). Use single-token labels or generate mode.")
            t = max(heads, key=len)
            total += top[t]
            done += t
        return total  # pragma: no cover - the loop returns

    def label_logprobs(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """log P(label) from the first generated token's top-k (module docstring).

        Labels outside the top-k: an error (``missing_label="error"``) or
        ``-inf`` (``"-inf"``; still an error when every label is outside).
        """
        labels = list(labels)
        if any(not isinstance(lab, str) or lab == "" for lab in labels):
            raise NfevalError("ChatModel.label_logprobs: labels must be non-empty strings.")
        cp = parse_chat_prompt(prompt)
        cache: dict = {}
        got = {lab: self._label_logprob(cp, lab, cache) for lab in labels}
        missing = [lab for lab, v in got.items() if v is None]
        if missing and (self.missing_label == "error" or len(missing) == len(labels)):
            seen = sorted(cache.get(cp.prefill or "", {}).items(), key=lambda kv: -kv[1])[:10]
            raise NfevalError(
                f"ChatModel: labels {missing!r} are not among the top {self.top_logprobs} "
                f"first tokens of the reply (most likely: {[t for t, _ in seen]!r}); their "
                "probability is unknown over a chat API"
                + (" (missing_label='-inf' gives -inf where at least one label is seen)."
                   if self.missing_label == "error" else ".")
                + " Use generate mode, or a prompt whose reply starts with a label.")
        return {lab: (-math.inf if v is None else float(v)) for lab, v in got.items()}

    def label_distribution(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        if not labels:
            return {}
        return normalize(self.label_logprobs(prompt, labels))

    def batch_label_logprobs(self, prompts: Sequence[str], labels: Sequence[str], *,
                             share_with: str | None = None) -> list[dict[str, float]]:
        """:meth:`label_logprobs` of every prompt, ``concurrency`` at a time, in order."""
        if isinstance(prompts, str):
            raise NfevalError("prompts must be a list of strings, not one string.")
        labels = list(labels)
        return bounded_map(lambda p: self.label_logprobs(p, labels), list(prompts),
                           self.concurrency)

    def prefix_label_logprobs(self, prefix: str, suffixes: Sequence[str],
                              labels: Sequence[str]) -> list[dict[str, float]]:
        if isinstance(suffixes, str):
            raise NfevalError("suffixes must be a list of strings, not one string.")
        return self.batch_label_logprobs([prefix + s for s in suffixes], labels)

    # -------------------------------------------------------------- scoring
    def continuation_logprobs(self, context: str, continuations: Sequence[str]
                              ) -> list[TokenLogprobs]:
        raise NfevalError(
            "ChatModel: a chat API returns log-probs of generated tokens only, never of given "
            "text, so continuation scores (P.D., reference perplexity) cannot be computed over "
            "it. Use the completions backend (backend='openai') on a server that echoes prompt "
            "log-probs (vLLM, llama-cpp-python), or an in-process backend.")

    # ------------------------------------------------------------ templates
    def apply_chat_template(self, messages: Sequence[Message], *,
                            add_generation_prompt: bool = True) -> str:
        """The messages serialized for this backend (module docstring), not rendered text."""
        return serialize_messages(messages, add_generation_prompt=add_generation_prompt)


def _cache_id(dec: dict, seed: int) -> str:
    return "gen:" + json.dumps({**dec, "seed": int(seed)}, sort_keys=True)


__all__ = ["ChatModel", "ChatPrompt", "ChatRequest", "DECODING_DEFAULTS", "PREFILL_MODES", "first_token_top", "is_chat_prompt",
           "parse_chat_prompt", "serialize_messages"]
