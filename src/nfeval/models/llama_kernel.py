"""Scoring on llama.cpp's low-level batch API: shared prefix, logits only where needed.

:class:`LlamaScorer` runs a GGUF model as it ships (its quantized kernels,
no dequantization) and scores token ids given by the caller, so the
tokenization is the caller's (the transformers tokenizer of the model, the
same ids as :class:`nfeval.models.hf.HFModel` scores).

The prefix (a judge's instructions and references, a D.A. prompt's
demonstrations) is encoded once into sequence 0 of the KV cache; a new
prefix that shares its first tokens with the previous one encodes only the
rest. Each suffix then gets sequences of its own that share the prefix's
cells (``llama_memory_seq_cp`` copies no data in a unified cache), and many
suffixes go through the model in one ``llama_decode`` call:

* **labels** -- a suffix is followed by its labels' tokens laid out as a
  prefix tree (labels that start alike, such as ``1]]`` and ``10]]``, share
  their first tokens). One sequence per label: the suffix's tokens belong to
  all of them, a tree token to the labels that pass through it, so every
  token attends to the prefix, its suffix and its own ancestors. Logits are
  computed only at the suffix's last token and at the tree's inner tokens,
  the positions that predict a label token.
* **continuations** -- each continuation one sequence, logits at every
  position but its last.

Log-softmax is taken in float64 over the float32 logits llama.cpp returns.
The KV cache is kept in float32 (``kv_f32``; llama.cpp's default is float16),
so that the only rounding beyond the float32 path is the quantized matrix
arithmetic itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import weakref

import numpy as np

from nfeval.errors import NfevalError
from nfeval.models.ids import common_prefix_length

#: A prefix that shares at least this many tokens with the previous one reuses its cells.
REUSE_MIN_TOKENS = 32


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max()
    return x - (m + np.log(np.exp(x - m).sum()))


def _free(ll, batch, ctx, model) -> None:
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):  # llama.cpp reports its buffers as it frees them
        ll.llama_batch_free(batch)
        ll.llama_free(ctx)
        ll.llama_model_free(model)


def label_tree(labels: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    """The inner nodes of the labels' prefix tree: every label's leading tokens (all but its
    last), each once, in first-seen order; a node's ancestors come before it."""
    nodes: dict[tuple[int, ...], None] = {}
    for lb in labels:
        for k in range(1, len(lb)):
            nodes.setdefault(tuple(lb[:k]), None)
    return list(nodes)


class LlamaScorer:
    """One llama.cpp model and context for scoring (module doc).

    ``n_ctx``: the KV cache's size in tokens (prefix plus one pass of suffixes).
    ``n_batch``: tokens per ``llama_decode`` call (a pass); ``n_ubatch``: tokens per
    compute step inside it. ``n_threads``: CPU threads. ``flash_attn``: llama.cpp's
    fused attention (off by default: its order of summation differs).
    """

    def __init__(self, gguf: str, *, n_ctx: int = 16384, n_threads: int = 2,
                 n_batch: int = 2048, n_ubatch: int = 512, n_seq_max: int = 64,
                 kv_f32: bool = True, flash_attn: bool = False):
        import llama_cpp
        from llama_cpp._utils import suppress_stdout_stderr

        self._ll = llama_cpp
        llama_cpp.llama_backend_init()
        mp = llama_cpp.llama_model_default_params()
        with suppress_stdout_stderr(disable=False):
            model = llama_cpp.llama_model_load_from_file(str(gguf).encode("utf-8"), mp)
        if not model:
            raise NfevalError(f"llama.cpp could not load {gguf}.")
        self.model = model
        vocab = llama_cpp.llama_model_get_vocab(model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(vocab))
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = int(n_ctx)
        cp.n_batch = int(n_batch)
        cp.n_ubatch = int(min(n_ubatch, n_batch))
        self.n_seq_max = int(min(n_seq_max, llama_cpp.llama_max_parallel_sequences()))
        cp.n_seq_max = self.n_seq_max
        cp.n_threads = cp.n_threads_batch = int(n_threads)
        cp.kv_unified = True
        cp.no_perf = True
        cp.n_outputs_max = int(n_batch)
        cp.n_outputs_max_per_seq = int(n_batch)
        cp.flash_attn_type = (llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                              else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        if kv_f32:
            cp.type_k = cp.type_v = 0  # GGML_TYPE_F32
        with suppress_stdout_stderr(disable=False):
            ctx = llama_cpp.llama_init_from_model(model, cp)
        if not ctx:
            llama_cpp.llama_model_free(model)
            raise NfevalError(f"llama.cpp could not create a context for {gguf} "
                              f"(n_ctx={n_ctx}, n_seq_max={self.n_seq_max}).")
        self.ctx = ctx
        self.mem = llama_cpp.llama_get_memory(ctx)
        self.n_ctx = int(llama_cpp.llama_n_ctx(ctx))
        self.n_batch = int(n_batch)
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, self.n_seq_max)
        self.prefix: list[int] = []
        self.prefix_last: np.ndarray | None = None
        self._finalizer = weakref.finalize(self, _free, llama_cpp, self.batch, ctx, model)

    def close(self) -> None:
        """Free the context and the model (also done when the scorer is garbage-collected)."""
        self._finalizer()

    # -- one llama_decode call ------------------------------------------------------
    def _decode(self, tokens: Sequence[int], pos: Sequence[int],
                seqs: Sequence[Sequence[int]], outputs: Sequence[bool]) -> list[np.ndarray]:
        """Decode one batch; the log-softmax rows of the tokens marked in ``outputs``."""
        n = len(tokens)
        if n > self.n_batch:
            raise NfevalError(f"internal: a pass of {n} tokens exceeds n_batch={self.n_batch}.")
        b = self.batch
        for i in range(n):
            b.token[i] = int(tokens[i])
            b.pos[i] = int(pos[i])
            s = seqs[i]
            b.n_seq_id[i] = len(s)
            for j, sid in enumerate(s):
                b.seq_id[i][j] = int(sid)
            b.logits[i] = 1 if outputs[i] else 0
        b.n_tokens = n
        rc = self._ll.llama_decode(self.ctx, b)
        if rc != 0:
            raise NfevalError(f"llama_decode failed with status {rc} (a batch of {n} tokens; "
                              f"KV cache of {self.n_ctx}).")
        out = []
        for i in range(n):
            if outputs[i]:
                ptr = self._ll.llama_get_logits_ith(self.ctx, i)
                out.append(_log_softmax(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))))
        return out

    def _clear_seqs(self, first: int, last: int) -> None:
        for sid in range(first, last + 1):
            self._ll.llama_memory_seq_rm(self.mem, sid, -1, -1)

    # -- the shared prefix (sequence 0) ---------------------------------------------
    def set_prefix(self, ids: Sequence[int]) -> np.ndarray:
        """Encode ``ids`` into sequence 0 (reusing what it shares with the last prefix); the
        log-softmax after its last token."""
        ids = [int(t) for t in ids]
        if not ids:
            raise NfevalError("the prefix needs at least one token.")
        if len(ids) >= self.n_ctx:
            raise NfevalError(f"a prefix of {len(ids)} tokens does not fit the KV cache "
                              f"({self.n_ctx}).")
        if ids == self.prefix and self.prefix_last is not None:
            return self.prefix_last
        reuse = min(common_prefix_length([self.prefix, ids]), len(ids) - 1)
        if reuse < REUSE_MIN_TOKENS:
            self._ll.llama_memory_clear(self.mem, True)
            reuse = 0
        else:
            self._ll.llama_memory_seq_rm(self.mem, 0, reuse, -1)
        self.prefix, self.prefix_last = [], None
        last = None
        for a in range(reuse, len(ids), self.n_batch):
            part = ids[a:a + self.n_batch]
            end = a + len(part) == len(ids)
            got = self._decode(part, range(a, a + len(part)), [(0,)] * len(part),
                               [end and k == len(part) - 1 for k in range(len(part))])
            if end:
                last = got[0]
        self.prefix, self.prefix_last = ids, last
        return last

    def reset(self) -> None:
        self._ll.llama_memory_clear(self.mem, True)
        self.prefix, self.prefix_last = [], None

    # -- labels after prefix + suffix ---------------------------------------------
    def score_labels(self, prefix: Sequence[int], suffixes: Sequence[Sequence[int]],
                     labels: Sequence[Sequence[int]]) -> list[list[float]]:
        """Summed log-prob of every label after ``prefix + suffix``, for every suffix.

        Every ``prefix + suffix + label`` must fit ``n_ctx`` (the caller applies its
        window rules first)."""
        lab = [[int(t) for t in lb] for lb in labels]
        if not lab or any(not lb for lb in lab):
            raise NfevalError("score_labels needs non-empty labels.")
        first = self.set_prefix(prefix)
        L = len(self.prefix)
        tree = label_tree(lab)
        index = {p: i for i, p in enumerate(tree)}
        K = len(lab) if tree else 1  # sequences per suffix
        through = [[j for j, lb in enumerate(lab) if tuple(lb[:len(p)]) == p] for p in tree]
        out: list[list[float] | None] = [None] * len(suffixes)
        sfx = [[int(t) for t in s] for s in suffixes]
        for chunk in self._passes([len(s) + len(tree) for s in sfx], K, L):
            tokens, pos, seqs, outs = [], [], [], []
            for c, i in enumerate(chunk):
                base = 1 + c * K
                s, S = sfx[i], len(sfx[i])
                mine = tuple(range(base, base + K))
                tokens += s
                pos += range(L, L + S)
                seqs += [mine] * S
                outs += [k == S - 1 for k in range(S)]
                for p, js in zip(tree, through):
                    tokens.append(p[-1])
                    pos.append(L + S + len(p) - 1)
                    seqs.append(tuple(base + j for j in js))
                    outs.append(True)
            used = len(chunk) * K
            for sid in range(1, used + 1):
                self._ll.llama_memory_seq_cp(self.mem, 0, sid, -1, -1)
            try:
                rows = self._decode(tokens, pos, seqs, outs) if tokens else []
            finally:
                self._clear_seqs(1, used)
            r = 0
            for i in chunk:
                head = first
                if sfx[i]:
                    head, r = rows[r], r + 1
                node = rows[r:r + len(tree)]
                r += len(tree)
                vals = []
                for lb in lab:
                    v = float(head[lb[0]])
                    for k in range(1, len(lb)):
                        v += float(node[index[tuple(lb[:k])]][lb[k]])
                    vals.append(v)
                out[i] = vals
        return out  # type: ignore[return-value]

    # -- continuations after a shared context ------------------------------------------
    def score_continuations(self, context: Sequence[int], continuations: Sequence[Sequence[int]]
                            ) -> list[list[float]]:
        """Per-token log-probs of each (non-empty) continuation after ``context``; every
        ``context + continuation`` must fit ``n_ctx``."""
        first = self.set_prefix(context)
        L = len(self.prefix)
        conts = [[int(t) for t in c] for c in continuations]
        if any(not c for c in conts):
            raise NfevalError("score_continuations needs non-empty continuations.")
        out: list[list[float] | None] = [None] * len(conts)
        for chunk in self._passes([len(c) for c in conts], 1, L):
            tokens, pos, seqs, outs = [], [], [], []
            for c, i in enumerate(chunk):
                n = len(conts[i])
                tokens += conts[i]
                pos += range(L, L + n)
                seqs += [(1 + c,)] * n
                outs += [k < n - 1 for k in range(n)]
            for sid in range(1, len(chunk) + 1):
                self._ll.llama_memory_seq_cp(self.mem, 0, sid, -1, -1)
            try:
                rows = self._decode(tokens, pos, seqs, outs) if any(outs) else []
            finally:
                self._clear_seqs(1, len(chunk))
            r = 0
            for i in chunk:
                c = conts[i]
                lps = [float(first[c[0]])]
                for k in range(1, len(c)):
                    lps.append(float(rows[r][c[k]]))
                    r += 1
                out[i] = lps
        return out  # type: ignore[return-value]

    def _passes(self, sizes: Sequence[int], seqs_each: int, L: int) -> list[list[int]]:
        """Items grouped into passes: at most ``n_batch`` tokens, the sequences there are, and
        room in the KV cache after the prefix's ``L`` cells."""
        room = min(self.n_batch, self.n_ctx - L)
        per_pass = max(1, (self.n_seq_max - 1) // seqs_each)
        if seqs_each > self.n_seq_max - 1:
            raise NfevalError(f"{seqs_each} labels need more sequences than the context has "
                              f"({self.n_seq_max - 1}); raise n_seq_max.")
        chunks: list[list[int]] = []
        size = 0
        for i, n in enumerate(sizes):
            if n > room:
                raise NfevalError(f"internal: an item of {n} tokens does not fit after a prefix "
                                  f"of {L} (KV cache {self.n_ctx}, batch {self.n_batch}).")
            if not chunks or size + n > room or len(chunks[-1]) >= per_pass:
                chunks.append([])
                size = 0
            chunks[-1].append(i)
            size += n
        return chunks

