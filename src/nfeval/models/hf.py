"""transformers backend: :class:`HFModel`.

Scoring kernel (``continuation_logprobs``): the context is run through the
model once (logits kept only at its last position), its KV cache is copied and
expanded along the batch dimension for each batch of continuations, and the
continuations -- sorted by length, right-padded, with an explicit attention
mask and position ids -- are scored in one forward pass per batch. Log-softmax
is computed in float32 whatever the model dtype. Results come back in input
order.

Window: if context + continuation does not fit ``max_length``, the context is
truncated from the left (that continuation then gets its own, shorter shared
context); only a continuation that alone exceeds the window (more than
``max_length - 1`` tokens) loses its tail, and the number of unscored tokens
is reported in ``TokenLogprobs.truncated``.

Shared-prefix label kernel (``prefix_label_logprobs`` / ``score_labels_ids``):
many prompts with one long common beginning (a judge's instructions and
reference list, then one candidate each) are scored against a label set with
the beginning encoded once; each prompt's own tail and the label tokens go
through the model in one pass on the kept cache (see the method).

An empty context (a string that tokenizes to nothing) is replaced by the BOS
token (EOS if the model has none), so the first continuation token is scored.

Chat templates (``ModelInfo.chat_template``):

* ``"model"`` -- the tokenizer's own template.
* ``"legacy-eos"`` -- GPT-2-like models without one: each message's content
  followed by the EOS token, no roles and no generation prompt. This is what
  the transformers versions of 2024 rendered for GPT-2 (the class default
  template), so DebateQA's released P.D. is reproducible (x = answer +
  ``<|endoftext|>``).
* ``"none"`` -- any other model without a template (e.g. gemma3-270m base):
  the message contents joined by a blank line (``"\\n\\n"``), no role markers,
  nothing added for the generation prompt.

Why this file is long: the chat-template rules above and the one backend class
that applies them.
"""

from __future__ import annotations

import copy
import functools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from nfeval.errors import NfevalError
from nfeval.models import registry
from nfeval.models.base import (
    Generation,
    LanguageModel,
    Message,
    ModelInfo,
    fit_prompt,
)
from nfeval.models.ids import TokenIdScoring, common_prefix_length
from nfeval.models.templates import (  # noqa: F401 - the template rules' documented home was here
    LEGACY_EOS_MODEL_TYPES,
    TEMPLATE_MODES,
    render_legacy_eos,
    render_messages,
    render_plain,
    template_mode,
)

if TYPE_CHECKING:
    import torch
else:
    class _Torch:
        """torch, imported where a model first computes (or a dtype object is asked for): a
        model whose every output an item store holds loads its tokenizer and config only."""

        def __getattr__(self, name):
            import torch as module

            globals()["torch"] = module
            return getattr(module, name)

    torch = _Torch()


def _inference_mode(fn):
    """``torch.inference_mode()`` as a decorator, without importing torch at class creation."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with torch.inference_mode():
            return fn(*args, **kwargs)
    return run


#: dtype names (as ``--dtype`` takes them) -> torch's names
_DTYPES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "float32": "float32", "fp32": "float32",
           "float16": "float16", "fp16": "float16"}


def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX); Linux flags."""
    from nfeval.machine import native_bf16

    return native_bf16()


def default_dtype(device: str = "cpu") -> torch.dtype:
    """float32 on every CPU, bf16 on a GPU.

    A published number must not depend on which CPU ran it. bf16 is 2-4x
    faster than float32 on CPUs that compute it natively (AVX512-BF16/AMX)
    and ~5x slower where it is emulated (AVX2 only), and its rounding moves
    scores by a few hundredths of a nat per token and with the batch's
    composition (D.A. P("1") moved by 0.015 between batched and single
    prompts). So the CPU default is float32 everywhere; ``dtype="bfloat16"``
    (``--dtype``, a profile's ``dtype``) asks for bf16, and ``info.dtype``
    records it.
    """
    return _as_dtype(None, device)


def _default_dtype_name(device: str = "cpu") -> str:
    return "bfloat16" if str(device).startswith("cuda") else "float32"


def _dtype_name(dtype, device: str = "cpu") -> str:
    """torch's name of ``dtype`` (a name, "auto"/None: :func:`default_dtype`, or a torch
    dtype), without importing torch for a name."""
    if dtype is None or (isinstance(dtype, str) and dtype.lower() == "auto"):
        return _default_dtype_name(device)
    if not isinstance(dtype, str) and type(dtype).__module__ == "torch":
        return str(dtype).replace("torch.", "")
    try:
        return _DTYPES[str(dtype).lower()]
    except KeyError:
        raise NfevalError(
            f"Unknown dtype {dtype!r}; use one of {', '.join(_DTYPES)}."
        ) from None


def _as_dtype(dtype, device: str = "cpu") -> torch.dtype:
    return getattr(torch, _dtype_name(dtype, device))


def _pack_config(folder) -> SimpleNamespace | None:
    """The ``config.json`` of a tokenizer pack (:func:`nfeval.models.registry.tokenizer_dir`)
    as attributes, read without transformers (whose config classes import torch); None for
    any other folder. What :class:`HFModel` reads of it (``model_type``, the window) equals
    what ``AutoConfig`` gives for every pack (``tests/test_models_without_torch.py``)."""
    folder = Path(folder)
    if not (folder / registry.PACK_MANIFEST).is_file() or not (folder / "config.json").is_file():
        return None

    def attrs(value):
        return SimpleNamespace(**{k: attrs(v) for k, v in value.items()}) \
            if isinstance(value, dict) else value

    return attrs(json.loads((folder / "config.json").read_text(encoding="utf-8")))


def _max_length_of(config, tokenizer) -> int:
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length",
                 "seq_length"):
        v = getattr(config, attr, None)
        if isinstance(v, int) and v > 0:
            return v
    text_cfg = getattr(config, "text_config", None)
    if text_cfg is not None and text_cfg is not config:
        return _max_length_of(text_cfg, tokenizer)
    v = getattr(tokenizer, "model_max_length", None)
    if isinstance(v, int) and 0 < v < 1_000_000:
        return v
    return 2048


def _cache_of(out):
    """The key-value cache a forward pass returned: ``cache`` from transformers 5.25 on,
    ``past_key_values`` before (asking the newer output for the old name warns)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


class HFModel(TokenIdScoring, LanguageModel):
    """A causal LM on transformers (CPU and float32 by default).

    The tokenizer and config load at once; the weights load on first use
    (:attr:`model`), so a run whose outputs are all stored
    (:mod:`nfeval_repro.store`) never loads or converts them.

    Parameters
    ----------
    name_or_path: registry name (see ``registry.list_models()``), hub id,
        local transformers folder, or ``.gguf`` file.
    dtype: "auto" (default: float32 on a CPU, bfloat16 on a GPU; see
        :func:`default_dtype`), "bfloat16" or "float32". ``info.dtype``
        records what was used.
    max_length: context window in tokens; default from the model config.
    batch_tokens: padded continuation tokens per batch (memory/speed knob;
        the logits of a batch take batch_tokens x vocab floats).
    chat_template: "auto" | "model" | "legacy-eos" | "none" (module doc).
    device: "cpu", "cuda", "cuda:1", "auto"...; where the weights go.

    ``runtime`` (:class:`nfeval.runtime.Runtime`) says where the model runs: its device,
    dtype and batch size (None: the CPU, dtype auto, 2048 tokens); ``dtype``, ``device`` and
    ``batch_tokens`` given here override it. Nothing here reads the environment: the
    caller's runtime was built at the edge (:func:`nfeval.runtime.from_env`).
    """

    def __init__(self, name_or_path: str, runtime=None, *, max_length: int | None = None,
                 chat_template: str = "auto", dtype=None, device: str | None = None,
                 batch_tokens: int | None = None):
        from nfeval.runtime import Runtime, resolve_device

        rt = runtime if runtime is not None else Runtime()
        device = resolve_device(device or rt.device)
        res = registry.resolve(name_or_path, weights=False)
        self._resolved = res
        self._model = None
        self._dtype = _dtype_name(rt.dtype if dtype is None else dtype, device)
        self._device = device
        batch_tokens = rt.batch_tokens if batch_tokens is None else batch_tokens
        extra = {"gguf_file": res.gguf_file} if res.gguf_file else {}
        try:
            self.tokenizer = registry.pretrained("tokenizer", res.path, **extra)
            cfg = (None if extra else _pack_config(res.path)) or registry.pretrained(
                "config", res.path, **extra)
        except OSError as exc:
            raise NfevalError(
                f"Could not load model {res.name!r} from {res.path}: {exc}. Fix: check "
                "the name, or pass a local model folder."
            ) from exc
        self.max_length = int(max_length or _max_length_of(cfg, self.tokenizer))
        if self.max_length < 2:
            raise NfevalError(f"max_length must be at least 2, got {self.max_length}.")
        self.batch_tokens = max(1, int(batch_tokens))
        self.template = template_mode(self.tokenizer, getattr(cfg, "model_type", None),
                                      chat_template)
        tok = self.tokenizer
        self.bos_id = tok.bos_token_id
        self.eos_id = tok.eos_token_id
        self.pad_id = (tok.pad_token_id if tok.pad_token_id is not None
                       else self.eos_id if self.eos_id is not None else 0)
        self.info = ModelInfo(
            name=res.name,
            backend="hf",
            source=res.source,
            checksum=res.checksum,
            dtype=self._dtype,
            chat_template=self.template,
            max_length=self.max_length,
        )

    def __repr__(self) -> str:
        return f"HFModel({self.info.name!r}, dtype={self.info.dtype})"

    @property
    def dtype(self) -> torch.dtype:
        """The weights' torch dtype (``info.dtype`` names it)."""
        return _as_dtype(self._dtype)

    @property
    def device(self) -> torch.device:
        """The torch device the weights go to."""
        return torch.device(self._device)

    @property
    def model(self):
        """The transformers model, loaded (and, for an embedded model, converted) on first use."""
        if self._model is None:
            from transformers import AutoModelForCausalLM

            res = self._resolved
            path, gguf = registry.weights_path(res)
            extra = {"gguf_file": gguf} if gguf else {}
            try:
                model = AutoModelForCausalLM.from_pretrained(path, dtype=self.dtype, **extra)
            except OSError as exc:
                raise NfevalError(
                    f"Could not load the weights of {res.name!r} from {path}: {exc}. Fix: "
                    "check the name, or pass a local model folder.") from exc
            self._model = model.to(self.device).eval()
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory."""
        return self._model is not None

    # -- scoring -------------------------------------------------------------
    #: A prefix that shares at least this many leading tokens with the previous one
    #: reuses its KV cache (cropped) instead of encoding them again.
    REUSE_MIN_TOKENS = 32

    @_inference_mode
    def _encode_prefix(self, ctx: list[int]):
        """(log-probs after ``ctx``, KV cache of ``ctx``) for the caller to consume.

        Calls that follow one another often start alike (a judge's
        instructions and demonstrations before each question's references; a
        D.A. prompt's demonstrations before each chunk of answers), so the
        cache of the last prefix is kept and the tokens a new prefix shares
        with it are not encoded again: its copy is cropped to the shared
        length and only the rest runs. On models with sliding-window layers
        (whose caches do not crop) every prefix is encoded whole. The values
        are those of encoding the prefix whole, up to float rounding.
        """
        dev = self.device
        memo = getattr(self, "_prefix_memo", None)
        reuse = 0
        if memo is not None and self._full_attention_only():
            reuse = common_prefix_length([memo[0], ctx])
            if reuse == len(ctx) == len(memo[0]):
                return memo[2].clone(), copy.deepcopy(memo[1])
            reuse = min(reuse, len(ctx) - 1)
        if reuse >= self.REUSE_MIN_TOKENS:
            cache = copy.deepcopy(memo[1])
            cache.crop(reuse - len(memo[0]))  # a negative count: the tokens to drop
            out = self.model(input_ids=torch.tensor([ctx[reuse:]], device=dev),
                             **self._with_cache(cache), use_cache=True, logits_to_keep=1)
        else:
            out = self.model(input_ids=torch.tensor([ctx], device=dev), use_cache=True,
                             logits_to_keep=1)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        cache = _cache_of(out)
        del out
        if self._full_attention_only():
            self._prefix_memo = (list(ctx), copy.deepcopy(cache), first.clone())
        return first, cache

    @_inference_mode
    def _shared(self, ctx: list[int], conts: list[list[int]]) -> list[list[float]]:
        """Log-probs of each (non-empty) continuation under one shared context.

        Caller guarantees len(ctx) + len(c) <= max_length for every c.
        """
        dev = self.device
        L = len(ctx)
        first, cache = self._encode_prefix(ctx)
        result: list[list[float] | None] = [None] * len(conts)
        order = sorted(range(len(conts)), key=lambda i: len(conts[i]))
        batches: list[list[int]] = []
        cur: list[int] = []
        for i in order:  # ascending length: the padded size is the last one's
            if cur and (len(cur) + 1) * len(conts[i]) > self.batch_tokens:
                batches.append(cur)
                cur = []
            cur.append(i)
        if cur:
            batches.append(cur)
        for bi, batch in enumerate(batches):
            B = len(batch)
            T = len(conts[batch[-1]])
            ids = torch.full((B, T), self.pad_id, dtype=torch.long)
            mask = torch.zeros((B, L + T), dtype=torch.long)
            mask[:, :L] = 1
            for r, i in enumerate(batch):
                c = conts[i]
                ids[r, : len(c)] = torch.tensor(c)
                mask[r, L: L + len(c)] = 1
            pos = torch.arange(L, L + T).unsqueeze(0).expand(B, T)
            past = cache if bi == len(batches) - 1 else copy.deepcopy(cache)
            if B > 1:
                past.batch_repeat_interleave(B)
            logits = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev),
                                position_ids=pos.to(dev), **self._with_cache(past),
                                use_cache=True).logits
            del past
            for r, i in enumerate(batch):
                c = conts[i]
                n = len(c)
                lps = [float(first[c[0]])]
                if n > 1:
                    lp = torch.log_softmax(logits[r, : n - 1].float(), dim=-1)
                    tgt = torch.tensor(c[1:], device=dev).unsqueeze(1)
                    lps.extend(lp.gather(1, tgt).squeeze(1).tolist())
                result[i] = lps
            del logits
        return result  # type: ignore[return-value]

    def _with_cache(self, cache) -> dict:
        """The keyword that hands ``cache`` to the model's forward: ``cache`` where the
        installed transformers names it so (5.25 on), ``past_key_values`` before."""
        import inspect

        name = getattr(self, "_cache_keyword", None)
        if name is None:
            params = inspect.signature(self.model.forward).parameters
            name = self._cache_keyword = "cache" if "cache" in params else "past_key_values"
        return {name: cache}

    def _full_attention_only(self) -> bool:
        """Whether every layer attends to the whole window (no sliding-window layers)."""
        cfg = self.model.config
        cfg = getattr(cfg, "text_config", None) or cfg
        types = getattr(cfg, "layer_types", None)
        if types is not None:
            return all(t == "full_attention" for t in types)
        return not (getattr(cfg, "sliding_window", None)
                    and getattr(cfg, "use_sliding_window", True))

    @_inference_mode
    def _next_logprobs(self, ctx: list[int]) -> torch.Tensor:
        """The float32 log-softmax after ``ctx`` (logits at its last position only)."""
        logits = self.model(input_ids=torch.tensor([ctx], device=self.device),
                            logits_to_keep=1).logits
        return torch.log_softmax(logits[0, -1].float(), dim=-1)

    @_inference_mode
    def _labels_shared(self, ctx: list[int], sfx: list[list[int]], lab: list[list[int]], *,
                       pack_tokens: int | None = None) -> list[list[float]]:
        """The label kernel of :meth:`score_labels_ids` (suffixes that fit the window).

        The prefix runs through the model once and its KV cache is kept. Each
        suffix is followed by the labels' tokens laid out as a prefix tree
        (labels with the same leading tokens, such as "1]]" and "10]]", share
        them), and several such blocks (up to ``pack_tokens`` tokens, default
        ``batch_tokens``; a longer block goes alone) are packed side by side
        into one forward pass on that cache, with a 4-D attention mask under
        which a suffix token sees the prefix and its own suffix so far, and a
        tree token the prefix, its suffix and its own ancestors, each at the
        position it would have in its own prompt. No cache is copied per
        suffix, and logits are computed only where a label token is predicted.
        """
        L = len(ctx)
        pack_tokens = self.batch_tokens if pack_tokens is None else max(1, int(pack_tokens))
        out: list[list[float] | None] = [None] * len(sfx)
        shared = range(len(sfx))
        # prefix tree of the labels' leading tokens (all but each label's last token)
        nodes: dict[tuple[int, ...], int] = {}
        for lb in lab:
            for k in range(1, len(lb)):
                nodes.setdefault(tuple(lb[:k]), len(nodes))
        tree = list(nodes)
        T = len(tree)
        anc = torch.zeros((T, T), dtype=torch.bool)
        for r, p in enumerate(tree):
            for k in range(1, len(p) + 1):
                anc[r, nodes[p[:k]]] = True
        dev, dt = self.device, self.model.dtype
        first_prefix, cache = self._encode_prefix(ctx)
        chunks: list[list[int]] = []
        size = 0
        for i in shared:  # candidates packed side by side, about pack_tokens per pass
            n = len(sfx[i]) + T
            if not chunks or (size + n > pack_tokens and chunks[-1]):
                chunks.append([])
                size = 0
            chunks[-1].append(i)
            size += n
        for ci, chunk in enumerate(chunks):
            Q = sum(len(sfx[i]) + T for i in chunk)
            lp = None
            if Q:
                allow = torch.zeros((Q, L + Q), dtype=torch.bool)
                allow[:, :L] = True
                ids: list[int] = []
                pos: list[int] = []
                keep: list[int] = []
                o = 0
                for i in chunk:
                    s, S = sfx[i], len(sfx[i])
                    ids += s + [p[-1] for p in tree]
                    pos += list(range(L, L + S)) + [L + S + len(p) - 1 for p in tree]
                    a, b = L + o, L + o + S  # this suffix's key columns
                    allow[o:o + S, a:b] = torch.tril(torch.ones((S, S), dtype=torch.bool))
                    allow[o + S:o + S + T, a:b] = True
                    allow[o + S:o + S + T, b:b + T] = anc
                    keep += ([o + S - 1] if S else []) + list(range(o + S, o + S + T))
                    o += S + T
                mask = torch.zeros((1, 1, Q, L + Q), dtype=dt)
                mask.masked_fill_(~allow, torch.finfo(dt).min)
                past = cache if ci == len(chunks) - 1 else copy.deepcopy(cache)
                logits = self.model(
                    input_ids=torch.tensor([ids], device=dev),
                    position_ids=torch.tensor([pos], device=dev),
                    attention_mask=mask.to(dev), **self._with_cache(past), use_cache=True,
                    logits_to_keep=torch.tensor(keep, device=dev)).logits[0]
                del past
                lp = torch.log_softmax(logits.float(), dim=-1)
                del logits
            r = 0
            for i in chunk:
                first = first_prefix
                if sfx[i]:
                    first = lp[r]
                    r += 1
                node_lp = lp[r:r + T] if T else None
                r += T
                row = []
                for lb in lab:
                    v = float(first[lb[0]])
                    for k in range(1, len(lb)):
                        v += float(node_lp[nodes[tuple(lb[:k])], lb[k]])
                    row.append(v)
                out[i] = row
        return out  # type: ignore[return-value]

    # -- generation ----------------------------------------------------------
    def _eos_ids(self) -> list[int]:
        ids = set()
        gc = getattr(self.model, "generation_config", None)
        e = getattr(gc, "eos_token_id", None) if gc is not None else None
        if isinstance(e, int):
            ids.add(e)
        elif isinstance(e, (list, tuple)):
            ids.update(int(x) for x in e)
        if self.eos_id is not None:
            ids.add(int(self.eos_id))
        return sorted(ids)

    @_inference_mode
    def generate(self, prompt: str, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 256, seed: int = 0, stop: Sequence[str] = ()) -> Generation:
        from transformers import GenerationConfig

        ids, prompt_truncated = fit_prompt(self.encode_context(prompt), temperature=temperature,
                                           top_p=top_p, max_tokens=max_tokens,
                                           max_length=self.max_length)
        eos = self._eos_ids()
        sample = temperature > 0
        gc = GenerationConfig(
            max_new_tokens=max_tokens,
            do_sample=sample,
            temperature=float(temperature) if sample else None,
            top_p=float(top_p) if sample else None,
            top_k=0 if sample else None,  # vLLM/OpenAI semantics: top_p only
            eos_token_id=eos or None,
            pad_token_id=self.pad_id,
            stop_strings=list(stop) or None,
        )
        inp = torch.tensor([ids], device=self.device)
        t0 = time.time()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            out = self.model.generate(input_ids=inp, attention_mask=torch.ones_like(inp),
                                      generation_config=gc,
                                      **({"tokenizer": self.tokenizer} if stop else {}))
        new = out[0, len(ids):].tolist()
        finish = "length"
        if new and new[-1] in eos:
            finish = "stop"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        cut = [text.index(s) for s in stop if s in text]
        if cut:  # transformers stops after the stop string; drop it, as the other backends do
            text, finish = text[: min(cut)], "stop"
        return Generation(text=text, finish_reason=finish, n_tokens=len(new),
                          extra={"seconds": round(time.time() - t0, 3),
                                 "prompt_tokens": len(ids),
                                 "prompt_truncated": prompt_truncated,
                                 "seed": seed})

    # -- templates -----------------------------------------------------------
    def apply_chat_template(self, messages: Sequence[Message], *,
                            add_generation_prompt: bool = True) -> str:
        return render_messages(self.tokenizer, self.template, messages,
                               add_generation_prompt=add_generation_prompt)
