"""Token-id scoring shared by the backends that run a model locally (transformers, llama.cpp).

:class:`TokenIdScoring` holds what does not depend on how the forward pass
is computed: tokenization (the model's transformers tokenizer, so every
local backend scores the same ids), the window rules, labels and the
shared-prefix bookkeeping. A backend provides three kernels:

* ``_shared(ctx, conts)`` -- per-token log-probs of each non-empty
  continuation under one context that fits the window with each of them;
* ``_labels_shared(ctx, suffixes, labels)`` -- summed label log-probs after
  ``ctx + suffix`` for suffixes that fit the window with their labels;
* ``_next_logprobs(ctx)`` -- the log-softmax (a 1-D array) after ``ctx``;

and ``max_length``, ``tokenizer``, ``bos_id``, ``eos_id`` and
``_full_attention_only()`` (False: every label prompt is scored whole).

Window: if context + continuation does not fit ``max_length``, the context
is truncated from the left (that continuation then gets its own, shorter
shared context); only a continuation that alone exceeds the window (more
than ``max_length - 1`` tokens) loses its tail, and the number of unscored
tokens is reported in ``TokenLogprobs.truncated``.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from nfeval.errors import NfevalError
from nfeval.models.base import TokenLogprobs, normalize


def common_prefix_length(seqs: Sequence[Sequence[int]]) -> int:
    """How many leading ids all the sequences share."""
    first = seqs[0]
    n = min(len(x) for x in seqs)
    i = 0
    while i < n and all(x[i] == first[i] for x in seqs):
        i += 1
    return i


class TokenIdScoring:
    """The token-id kernels' common layer (module doc). Sets ``token_level``."""

    token_level = True
    max_length: int

    # -- tokenization ------------------------------------------------------
    #: Texts whose ids a model keeps (a judge tokenizes the same candidates and reference
    #: lists once per judge row and question otherwise); a full memo is emptied, not grown.
    IDS_MEMO = 4096

    def _memo_ids(self, kind: str, text: str, encode) -> list[int]:
        memo = self.__dict__.setdefault("_ids_memo", {})
        hit = memo.get((kind, text))
        if hit is None:
            if len(memo) >= self.IDS_MEMO:
                memo.clear()
            hit = memo[(kind, text)] = array("q", encode(text))
        return hit.tolist()

    def encode_context(self, text: str) -> list[int]:
        """Context ids: the model's usual leading special tokens, never doubled."""
        return self._memo_ids("context", text, self._encode_context)

    def encode_continuation(self, text: str) -> list[int]:
        """Continuation ids: tokenized alone, no special tokens."""
        return self._memo_ids("continuation", text, self._encode_continuation)

    def _encode_context(self, text: str) -> list[int]:
        tok = self.tokenizer
        ids = list(tok(text, add_special_tokens=True)["input_ids"])
        bos = tok.bos_token
        if (bos and self.bos_id is not None and len(ids) >= 2
                and ids[0] == ids[1] == self.bos_id and text.startswith(bos)):
            ids = ids[1:]  # the text already carried its BOS (e.g. a chat template)
        if not ids:
            fill = self.bos_id if self.bos_id is not None else self.eos_id
            if fill is None:
                raise NfevalError("Empty context and the model has no BOS/EOS token.")
            ids = [fill]
        return ids

    def _encode_continuation(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # -- continuations -------------------------------------------------------
    def _score_ids(self, ctx: list[int], conts: list[list[int]]
                   ) -> list[tuple[list[float], list[int], int]]:
        """(logprobs, scored ids, truncated) per continuation, applying the window rules."""
        W = self.max_length
        out: list[tuple[list[float], list[int], int] | None] = [None] * len(conts)
        groups: dict[int, list[int]] = {}  # kept context length -> continuation idx
        plans: dict[int, tuple[list[int], int]] = {}
        for i, c in enumerate(conts):
            if not c:
                out[i] = ([], [], 0)
                continue
            if len(c) > W - 1:
                keep_ctx, c2, trunc = 1, c[: W - 1], len(c) - (W - 1)
            else:
                keep_ctx, c2, trunc = min(len(ctx), W - len(c)), c, 0
            plans[i] = (c2, trunc)
            groups.setdefault(keep_ctx, []).append(i)
        for keep, idx in groups.items():
            sub_ctx = ctx[-keep:]
            lps = self._shared(sub_ctx, [plans[i][0] for i in idx])
            for i, lp in zip(idx, lps):
                out[i] = (lp, plans[i][0], plans[i][1])
        return out  # type: ignore[return-value]

    def _to_result(self, lp, ids, trunc) -> TokenLogprobs:
        return TokenLogprobs(token_ids=list(ids),
                             tokens=self.tokenizer.convert_ids_to_tokens(list(ids)),
                             logprobs=lp, truncated=trunc)

    def score_ids(self, context_ids: Sequence[int], continuation_ids: Sequence[Sequence[int]]
                  ) -> list[TokenLogprobs]:
        """:meth:`continuation_logprobs` on token ids (same window rules, same kernel).

        For kernels that must reproduce another tokenization or truncation
        exactly (DebateQA's released P.D. script truncates on the right).
        """
        ctx = list(context_ids)
        if not ctx:
            raise NfevalError("score_ids needs at least one context token.")
        conts = [list(c) for c in continuation_ids]
        return [self._to_result(*r) for r in self._score_ids(ctx, conts)]

    def continuation_logprobs(self, context: str, continuations: Sequence[str]
                              ) -> list[TokenLogprobs]:
        if isinstance(continuations, str):
            raise NfevalError("continuations must be a list of strings, not one string.")
        ctx = self.encode_context(context)
        conts = [self.encode_continuation(c) for c in continuations]
        return [self._to_result(*r) for r in self._score_ids(ctx, conts)]

    def batch_continuation_logprobs(self, requests: Sequence[tuple[str, Sequence[str]]]
                                    ) -> list[list[TokenLogprobs]]:
        """All requests, contexts processed longest first (steady memory use); each context
        encoded once, its continuations batched as in :meth:`continuation_logprobs`."""
        enc = [(self.encode_context(c), [self.encode_continuation(x) for x in conts])
               for c, conts in requests]
        order = sorted(range(len(enc)), key=lambda i: -len(enc[i][0]))
        results: list[list[TokenLogprobs] | None] = [None] * len(enc)
        for i in order:
            ctx, conts = enc[i]
            results[i] = [self._to_result(*r) for r in self._score_ids(ctx, conts)]
        return results  # type: ignore[return-value]

    # -- labels --------------------------------------------------------------
    def _label_ids(self, labels: Sequence[str]) -> list[list[int]]:
        if isinstance(labels, str):
            raise NfevalError("labels must be a list of strings, not one string.")
        if not labels:
            raise NfevalError("label_distribution needs at least one label.")
        if len(set(labels)) != len(labels):
            raise NfevalError(f"Labels must be distinct, got {list(labels)!r}.")
        ids = [self.encode_continuation(lab) for lab in labels]
        empty = [lab for lab, i in zip(labels, ids) if not i]
        if empty:
            raise NfevalError(f"Labels {empty!r} tokenize to nothing; use non-empty labels.")
        return ids

    def label_logprobs(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        ids = self._label_ids(labels)
        if all(len(i) == 1 for i in ids):
            lp = self._next_logprobs(self.encode_context(prompt)[-(self.max_length - 1):])
            return {lab: float(lp[i[0]]) for lab, i in zip(labels, ids)}
        ctx = self.encode_context(prompt)
        scored = self._score_ids(ctx, ids)
        for lab, (_, _, trunc) in zip(labels, scored):
            if trunc:
                raise NfevalError(f"Label {lab!r} is longer than the model's window.")
        return {lab: float(sum(lp)) for lab, (lp, _, _) in zip(labels, scored)}

    def label_distribution(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        return normalize(self.label_logprobs(prompt, labels))

    def prefix_label_logprobs(self, prefix: str, suffixes: Sequence[str],
                              labels: Sequence[str]) -> list[dict[str, float]]:
        """Label log-probs after ``prefix + suffix`` for every suffix; prefix encoded once.

        Tokenization: the prefix as a context, each suffix and each label as a
        continuation (module doc of :mod:`nfeval.models.base`), concatenated.
        See :meth:`score_labels_ids` for the kernel.
        """
        if isinstance(suffixes, str):
            raise NfevalError("suffixes must be a list of strings, not one string.")
        lab = self._label_ids(labels)
        ctx = self.encode_context(prefix)
        rows = self.score_labels_ids(ctx, [self.encode_continuation(s) for s in suffixes], lab)
        return [dict(zip(labels, row)) for row in rows]

    def batch_label_logprobs(self, prompts: Sequence[str], labels: Sequence[str], *,
                             share_with: str | None = None) -> list[dict[str, float]]:
        """:meth:`label_logprobs` of every prompt, each tokenized whole.

        The token ids all prompts share (and share with ``share_with``, if
        given) run through the model once, then :meth:`score_labels_ids` scores
        the rest of each prompt and the labels on that cache: the values are
        the per-prompt ones. Prompts that share nothing, or that leave no room
        for the labels in the window, are scored one by one.
        """
        if isinstance(prompts, str):
            raise NfevalError("prompts must be a list of strings, not one string.")
        prompts, labels = list(prompts), list(labels)
        if not prompts:
            return []
        lab = self._label_ids(labels)
        ids = [self.encode_context(p) for p in prompts]
        seqs = ids + ([self.encode_context(share_with)] if share_with is not None else [])
        cut = min(common_prefix_length(seqs), min(len(i) for i in ids) - 1)
        longest = max(len(i) for i in lab)
        if cut < 1 or any(len(i) + longest > self.max_length for i in ids):
            return [self.label_logprobs(p, labels) for p in prompts]
        rows = self.score_labels_ids(ids[0][:cut], [i[cut:] for i in ids], lab)
        return [dict(zip(labels, r)) for r in rows]

    def score_labels_ids(self, prefix_ids: Sequence[int], suffix_ids: Sequence[Sequence[int]],
                         label_ids: Sequence[Sequence[int]], **kernel) -> list[list[float]]:
        """Summed log-prob of every label after ``prefix + suffix``, for every suffix.

        The prefix is encoded once and each suffix with its labels scored on it
        (the backend's ``_labels_shared``); the numbers are those of scoring
        ``prefix + suffix + label`` one at a time. A suffix whose prompt +
        longest label does not fit ``max_length``, and every suffix on a model
        with sliding-window layers, is scored as a full prompt instead
        (:meth:`score_ids`: context truncated on the left). ``kernel``: the
        backend's options (the transformers backend's ``pack_tokens``).
        """
        ctx = [int(t) for t in prefix_ids]
        sfx = [[int(t) for t in s] for s in suffix_ids]
        lab = [[int(t) for t in lb] for lb in label_ids]
        if not ctx:
            raise NfevalError("score_labels_ids needs at least one prefix token.")
        if not lab or any(not lb for lb in lab):
            raise NfevalError("score_labels_ids needs non-empty labels.")
        L, W = len(ctx), self.max_length
        need = max(len(lb) for lb in lab)
        shared = ([i for i, s in enumerate(sfx) if L + len(s) + need <= W]
                  if self._full_attention_only() else [])
        out: list[list[float] | None] = [None] * len(sfx)
        for i in sorted(set(range(len(sfx))) - set(shared)):
            scored = self._score_ids(ctx + sfx[i], lab)
            if any(trunc for _, _, trunc in scored):
                raise NfevalError("A label is longer than the model's window.")
            out[i] = [float(sum(lp)) for lp, _, _ in scored]
        if shared:
            rows = self._labels_shared(ctx, [sfx[i] for i in shared], lab, **kernel)
            for i, row in zip(shared, rows):
                out[i] = [float(x) for x in row]
        return out  # type: ignore[return-value]
