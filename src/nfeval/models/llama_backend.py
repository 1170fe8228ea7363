"""llama.cpp (``llama-cpp-python``) on the GGUF files as they ship: generation and scoring.

The embedded models ship as GGUF files; llama.cpp runs them directly with
their quantized kernels, which on these 2-core CPUs generates 5-8x faster
than transformers on the dequantized weights (SmolLM2: about 90 vs 12
tokens/s). Prompts are rendered with the same chat template as
:class:`nfeval.models.hf.HFModel` (the converted model's tokenizer).

Scoring (label distributions, continuation log-probs) goes through
:class:`nfeval.models.llama_kernel.LlamaScorer` on the ids of that same
tokenizer, with the window rules of the transformers backend
(:class:`nfeval.models.ids.TokenIdScoring`). Its arithmetic is not float32:
llama.cpp multiplies 8-bit-quantized activations by the 4-bit weights, so
its label probabilities differ from the ``hf`` backend's by up to about 0.01
(measured by ``make bench``, kernel ``judge_path``); its items are stored
under their own key (``backend`` ``llama``), never mixed with float32 ones.

Decoding follows the vLLM/OpenAI semantics the papers used: temperature 0 is
greedy; otherwise plain temperature + top-p sampling (llama.cpp's own top-k,
min-p and repetition penalty are switched off).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from nfeval.errors import NfevalError
from nfeval.models import registry
from nfeval.models.base import (
    Generation,
    LanguageModel,
    Message,
    ModelInfo,
    fit_prompt,
)
from nfeval.models.templates import render_messages, template_mode
from nfeval.models.ids import TokenIdScoring


def _cores() -> int:
    return (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1))


def _threads() -> int:
    """``NFEVAL_LLAMA_THREADS``, else all cores but one. llama.cpp's threads spin at
    each step: when another process holds a core, asking for every core made
    generation 10x slower here (2 threads on 2 busy cores: 125 s vs 13 s for
    60 tokens), while leaving one free costs little when the machine is idle."""
    env = os.environ.get("NFEVAL_LLAMA_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise NfevalError(f"NFEVAL_LLAMA_THREADS must be an integer, got {env!r}.") from None
    return max(1, _cores() - 1)


class LlamaCppModel(TokenIdScoring, LanguageModel):
    """A GGUF model run by llama.cpp. ``name_or_path``: an embedded registry name
    (``smollm2-135m-instruct``...) or a ``.gguf`` path (then pass ``tokenizer``, a
    transformers folder whose chat template and ids to use, or get the plain template
    and no scoring).

    ``n_ctx``: the window of generation and scoring (tokens). ``score_threads``: threads
    of the scoring kernel (default ``NFEVAL_LLAMA_THREADS``, else every core: scoring is
    one long batch, not a token loop).
    """

    def __init__(self, name_or_path: str, *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_template: str = "auto", tokenizer: str | Path | None = None,
                 reuse_prefix: bool = False, score_threads: int | None = None):
        try:
            import llama_cpp  # noqa: F401  (checked now; the model loads on first use)
        except ImportError as exc:  # pragma: no cover - pinned in requirements-models.txt
            raise NfevalError(
                f"The llama backend needs llama-cpp-python ({exc}). Fix: `make env`, or use "
                "backend='hf'.") from exc
        path = Path(name_or_path).expanduser()
        if path.suffix == ".gguf" and path.is_file():
            gguf, name, spec = path, path.stem, None
            checksum, source = None, f"local:{path.resolve()}"
        else:
            spec = registry.get_spec(name_or_path)
            if spec.kind != "embedded-gguf":
                raise NfevalError(
                    f"The llama backend runs GGUF files; {name_or_path!r} is not one. Use "
                    "backend='hf' for hub models, or pass a .gguf path.")
            # assembled and checked on first use: a run whose items are all stored
            # needs neither the weights' packages nor their sha256
            gguf, name = None, spec.name
            checksum, source = spec.sha256, spec.source
        self._gguf_arg: dict = {}
        if tokenizer is not None:
            from transformers import AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))
        elif spec is not None:  # the same tokenizer (and chat template) as the hf backend's
            res = registry.resolve(spec.name, weights=False)
            self._gguf_arg = {"gguf_file": res.gguf_file} if res.gguf_file else {}
            self.tokenizer = registry.pretrained("tokenizer", res.path, **self._gguf_arg)
        else:
            self.tokenizer = None
        self.template = (template_mode(self.tokenizer, None, chat_template) if self.tokenizer
                         else ("none" if chat_template == "auto" else chat_template))
        tok = self.tokenizer
        self.bos_id = tok.bos_token_id if tok is not None else None
        self.eos_id = tok.eos_token_id if tok is not None else None
        self._gguf_path = gguf
        self._spec = spec
        self._score_threads = score_threads
        self._scorer = None
        self._sliding = None
        threads = n_threads or _threads()
        # Prompt processing uses every core by default (fast on an idle machine); an explicit
        # thread count (argument or NFEVAL_LLAMA_THREADS) applies to it too, so a shared
        # machine can really be limited.
        batch = {"n_threads_batch": threads} if (n_threads or os.environ.get(
            "NFEVAL_LLAMA_THREADS", "").strip()) else {}
        # llama.cpp loads the weights on first use, so a run whose generations are all
        # stored (nfeval_repro.store) never loads them
        self._llama_args = dict(n_ctx=int(n_ctx), n_threads=threads, seed=0, verbose=False,
                                **batch)
        self._llm = None
        # llama.cpp keeps the previous prompt's KV cache and re-encodes only what a new
        # prompt does not share with it. That changes how the prompt is split into
        # batches, and so its float rounding: greedy answers are generated from a clean
        # cache (the default) so that they do not depend on the call before; a sampling
        # judge, whose prompts share long instructions, reuses it.
        self.reuse_prefix = bool(reuse_prefix)
        self.max_length = int(n_ctx)
        self.info = ModelInfo(name=name, backend="llama", source=source, checksum=checksum,
                              dtype=f"gguf:{gguf.name if gguf else spec.gguf_name}",
                              chat_template=self.template,
                              max_length=self.max_length)

    def __repr__(self) -> str:
        return f"LlamaCppModel({self.info.name!r})"

    @property
    def _gguf(self) -> Path:
        """The GGUF file (an embedded model's is assembled and checked here, on first use)."""
        if self._gguf_path is None:
            self._gguf_path = registry.gguf_file(self._spec.name)
        return self._gguf_path

    @property
    def llm(self):
        """The llama.cpp model, loaded on first use."""
        if self._llm is None:
            from llama_cpp import Llama

            self._llm = Llama(model_path=str(self._gguf), **self._llama_args)
        return self._llm

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    # -- scoring (nfeval.models.ids.TokenIdScoring on llama_kernel.LlamaScorer) ---------
    @property
    def scorer(self):
        """The scoring kernel, loaded on first use."""
        if self._scorer is None:
            if self.tokenizer is None:
                raise NfevalError("Scoring with the llama backend needs the model's tokenizer: "
                                  "pass tokenizer=<transformers folder> with a .gguf path.")
            from nfeval.models.llama_kernel import LlamaScorer

            threads = self._score_threads or (_threads() if os.environ.get(
                "NFEVAL_LLAMA_THREADS", "").strip() else _cores())
            self._scorer = LlamaScorer(str(self._gguf), n_ctx=self.max_length, n_threads=threads)
        return self._scorer

    def _full_attention_only(self) -> bool:
        """Whether every layer attends to the whole window (read from the model's config)."""
        if self._sliding is None:
            from transformers import AutoConfig

            path = getattr(self.tokenizer, "name_or_path", None)
            try:
                cfg = AutoConfig.from_pretrained(path, **self._gguf_arg) if path else None
            except (OSError, ValueError):
                cfg = None
            cfg = getattr(cfg, "text_config", None) or cfg
            types = getattr(cfg, "layer_types", None)
            if types is not None:
                self._sliding = not all(t == "full_attention" for t in types)
            else:
                self._sliding = bool(getattr(cfg, "sliding_window", None)
                                     and getattr(cfg, "use_sliding_window", True))
        return not self._sliding

    def _next_logprobs(self, ctx: list[int]):
        self.scorer.reset()
        return self.scorer.set_prefix(ctx)

    def _shared(self, ctx: list[int], conts: list[list[int]]) -> list[list[float]]:
        return self.scorer.score_continuations(ctx, conts)

    def _labels_shared(self, ctx: list[int], sfx: list[list[int]], lab: list[list[int]]
                       ) -> list[list[float]]:
        return self.scorer.score_labels(ctx, sfx, lab)

    # -- generation ----------------------------------------------------------
    def generate(self, prompt: str, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 256, seed: int = 0, stop: Sequence[str] = ()) -> Generation:
        ids = self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        bos = self.llm.token_bos()
        if len(ids) > 1 and ids[0] == ids[1] == bos:  # the template wrote BOS itself
            ids = ids[1:]
        ids, truncated = fit_prompt(ids, temperature=temperature, top_p=top_p,
                                    max_tokens=max_tokens, max_length=self.max_length)
        t0 = time.time()
        if not self.reuse_prefix:
            self.llm.reset()
        out = self.llm.create_completion(
            ids, max_tokens=int(max_tokens), temperature=float(temperature),
            top_p=float(top_p) if temperature > 0 else 1.0, top_k=0, min_p=0.0,
            repeat_penalty=1.0, seed=int(seed), stop=list(stop) or None)
        choice = out["choices"][0]
        return Generation(text=choice["text"], finish_reason=choice.get("finish_reason") or "stop",
                          n_tokens=int(out["usage"]["completion_tokens"]),
                          extra={"seconds": round(time.time() - t0, 3), "prompt_tokens": len(ids),
                                 "prompt_truncated": truncated, "seed": seed})

    # -- templates -----------------------------------------------------------
    def apply_chat_template(self, messages: Sequence[Message], *,
                            add_generation_prompt: bool = True) -> str:
        return render_messages(self.tokenizer, self.template, messages,
                               add_generation_prompt=add_generation_prompt)
