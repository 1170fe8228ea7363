"""Loading a model by name: :func:`load_model` and :class:`ModelLoader`.

A :class:`ModelLoader` is a value: where models run (a :class:`~nfeval.runtime.Runtime`),
the backend of a model named without one, and each backend's options (a server's URL...).
The command line builds one from its options and the environment, once; a metric object
(:class:`nfeval.linkage.metric.Linkage`, :class:`nfeval.debateqa.metric.PD`, ``DA``) loads
the models it is given by name with it. Nothing here reads the command line or the
environment (the runtime was built at the edge).

Usage::

    from nfeval.models.loader import ModelLoader, load_model
    from nfeval.runtime import Runtime

    lm = load_model("smollm2-135m-instruct", runtime=Runtime(dtype="bfloat16"))
    loader = ModelLoader(Runtime(), backend="openai-chat",
                         options={"openai-chat": {"base_url": "http://127.0.0.1:8000/v1"}})
    judge = loader.load("my-judge")
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nfeval.errors import NfevalError
from nfeval.models.base import LanguageModel
from nfeval.runtime import Runtime

__all__ = ["BACKENDS", "ModelLoader", "load_model", "metric_loader"]

BACKENDS = ("hf", "openai", "openai-chat", "llama")


def load_model(name_or_path: str, backend: str = "hf", runtime: Runtime | None = None,
               **options: Any) -> LanguageModel:
    """Load a language model.

    backend="hf": ``name_or_path`` is a registry name (``nfeval.models.registry.
    list_models()``), a hub id, a local transformers folder or a ``.gguf`` file; it runs
    where ``runtime`` says (None: the CPU, dtype auto: float32); ``options`` go to
    :class:`nfeval.models.hf.HFModel` (``max_length``, ``chat_template``).

    backend="openai": ``name_or_path`` is the server's model name; ``options`` go to
    ``nfeval.models.openai_backend.OpenAIModel`` (``base_url`` ...; the transport's
    ``timeout``, ``max_retries``, ``api_key``... are gathered into its
    :class:`~nfeval.models.transport.HTTPOptions`).

    backend="openai-chat": a chat model behind ``/v1/chat/completions`` (a hosted API, vLLM,
    llama-cpp-python), e.g. an LLM judge in ``sample`` mode; ``name_or_path`` is the model
    name (``None``: the server's only model); ``options`` go to
    ``nfeval.models.chat_backend.ChatModel`` (``base_url``, ``concurrency``,
    ``assistant_prefill`` ..., and the transport's ``api_key_env``, ``timeout``... gathered
    into its :class:`~nfeval.models.transport.HTTPOptions`).

    backend="llama": generation only, through llama.cpp on the GGUF file (an embedded name or
    a ``.gguf`` path), with the runtime's ``threads``; ``options`` go to
    ``nfeval.models.llama_backend.LlamaCppModel``. 5-8x faster than ``hf`` for answer
    collection on CPU.
    """
    if backend == "hf":
        from nfeval.models.hf import HFModel
        from nfeval.runtime import from_env

        # a caller's load with no runtime is an edge: the environment decides there
        return HFModel(name_or_path, runtime if runtime is not None else from_env(), **options)
    if backend == "openai":
        try:
            from nfeval.models.openai_backend import OpenAIModel
        except ImportError as exc:
            raise NfevalError(
                f"The openai backend is not available ({exc}). Fix: use backend='hf' "
                "or install the project with its HTTP backend."
            ) from exc
        from nfeval.models.openai_backend import HTTP
        from nfeval.models.transport import http_options

        http = http_options(options, max_retries=HTTP.max_retries)
        return OpenAIModel(model=name_or_path, http=http, **options)
    if backend == "openai-chat":
        from nfeval.models.chat_backend import ChatModel
        from nfeval.models.transport import http_options

        return ChatModel(model=name_or_path, http=http_options(options), **options)
    if backend == "llama":
        from nfeval.models.llama_backend import LlamaCppModel

        if runtime is not None and runtime.threads and "n_threads" not in options:
            options = {**options, "n_threads": runtime.threads}
        return LlamaCppModel(name_or_path, **options)
    raise NfevalError(f"Unknown backend {backend!r}; use 'hf', 'openai', 'openai-chat' or "
                      "'llama'.")


@dataclass(frozen=True)
class ModelLoader:
    """How the models given by name load (module docstring): ``runtime``; ``backend``, the
    backend of a name given without one; ``options``, each backend's keyword options;
    ``judge_dtype``, the dtype of the listwise LINKAGE judge where the caller chose one for
    it (the command line on the CPU kinds of :data:`nfeval.machine.LISTWISE_JUDGE_DTYPES`),
    None: the runtime's; ``judge_note``, a line written to stderr when the judge loads in
    that dtype (so that a command refused before any model loads says only why)."""

    runtime: Runtime = field(default_factory=Runtime)
    backend: str = "hf"
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    judge_dtype: str | None = None
    judge_note: str = ""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise NfevalError(f"Unknown backend {self.backend!r}; use one of "
                              f"{', '.join(BACKENDS)}.")

    def load(self, name: str, backend: str | None = None, *,
             judge: bool = False) -> LanguageModel:
        """The model ``name`` on ``backend`` (None: :attr:`backend`); ``judge``: the listwise
        LINKAGE judge scoring label probabilities (it takes :attr:`judge_dtype`). A missing
        optional package is an error that names the extra to install."""
        backend = backend or self.backend
        runtime = self.runtime
        if backend in ("openai", "openai-chat") and "base_url" not in self.options.get(backend,
                                                                                      {}):
            raise NfevalError(f"the {backend} backend needs a server's base_url (the command "
                              "line's --base-url; the openai backend takes one server)")
        if judge and self.judge_dtype and backend == "hf":
            runtime = runtime.with_(dtype=self.judge_dtype)
            if self.judge_note:
                print(self.judge_note, file=sys.stderr)
        try:
            return load_model(name, backend, runtime, **dict(self.options.get(backend, {})))
        except ModuleNotFoundError as exc:
            from nfeval.extras import missing_extra

            err = missing_extra(exc)
            if err is None:
                raise
            raise err from None

    def model(self, model: Any, default: str, *, judge: bool = False) -> LanguageModel:
        """``model`` itself when it is a loaded model, else loaded by name (None:
        ``default``)."""
        if model is not None and not isinstance(model, str) and not hasattr(model,
                                                                             "__fspath__"):
            return model
        return self.load(str(model or default), judge=judge)


def metric_loader(runtime: Runtime | None = None, loader: ModelLoader | None = None, *,
                  backend: str | None = None, device: str | None = None) -> ModelLoader:
    """The loader of a metric object (``Linkage``, ``PD``, ``DA``): ``loader`` itself, else
    one on ``runtime`` (None: :func:`nfeval.runtime.from_env`, the caller's edge) with
    ``backend`` (None: hf) and ``device`` over it. A runtime and a loader together are
    refused (the loader has one)."""
    if loader is not None:
        if runtime is not None or backend is not None or device is not None:
            raise NfevalError("give a runtime (and backend) or a loader (which has them), "
                              "not both")
        return loader
    from nfeval.runtime import from_env

    runtime = (runtime if runtime is not None else from_env()).with_(device=device)
    return ModelLoader(runtime, backend or "hf")
