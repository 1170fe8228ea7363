"""Language models behind one interface (see :mod:`nfeval.models.base`).

``load_model("smollm2-135m-instruct")`` gives an embedded model that runs
offline; hub ids (``"gpt2"``), local folders and ``.gguf`` paths work too.
``backend="openai"`` talks to an OpenAI-compatible server instead.
"""

from __future__ import annotations

from nfeval.models.base import (
    Generation,
    LanguageModel,
    Message,
    ModelInfo,
    TokenLogprobs,
    normalize,
)

__all__ = [
    "Generation",
    "LanguageModel",
    "Message",
    "ModelInfo",
    "TokenLogprobs",
    "normalize",
    "load_model",
]

def load_model(name_or_path: str, backend: str = "hf", **kwargs) -> LanguageModel:
    """Load a language model.

    backend="hf": ``name_or_path`` is a registry name (``nfeval.models.registry.
    list_models()``), a hub id, a local transformers folder or a ``.gguf`` file;
    kwargs go to :class:`nfeval.models.hf.HFModel` (``dtype``, ``max_length``,
    ``batch_tokens``...).

    backend="openai": ``name_or_path`` is the server's model name; kwargs go to
    ``nfeval.models.openai_backend.OpenAIModel`` (``base_url`` ...; the transport's
    ``timeout``, ``max_retries``, ``api_key``... are gathered into its
    :class:`~nfeval.models.transport.HTTPOptions`).

    backend="openai-chat": a chat model behind ``/v1/chat/completions`` (a
    hosted API, vLLM, llama-cpp-python), e.g. an LLM judge in ``sample`` mode;
    ``name_or_path`` is the model name (``None``: the server's only model);
    kwargs go to ``nfeval.models.chat_backend.ChatModel`` (``base_url``,
    ``concurrency``, ``assistant_prefill`` ..., and the transport's ``api_key_env``,
    ``timeout``... gathered into its :class:`~nfeval.models.transport.HTTPOptions`).

    backend="llama": generation only, through llama.cpp on the GGUF file (an
    embedded name or a ``.gguf`` path); kwargs go to ``nfeval.models.
    llama_backend.LlamaCppModel``. 5-8x faster than ``hf`` for answer
    collection on CPU.

    """
    from nfeval.errors import NfevalError

    if backend == "hf":
        from nfeval.models.hf import HFModel

        return HFModel(name_or_path, **kwargs)
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

        http = http_options(kwargs, max_retries=HTTP.max_retries)
        return OpenAIModel(model=name_or_path, http=http, **kwargs)
    if backend == "openai-chat":
        from nfeval.models.chat_backend import ChatModel
        from nfeval.models.transport import http_options

        return ChatModel(model=name_or_path, http=http_options(kwargs), **kwargs)
    if backend == "llama":
        from nfeval.models.llama_backend import LlamaCppModel

        return LlamaCppModel(name_or_path, **kwargs)
    raise NfevalError(f"Unknown backend {backend!r}; use 'hf', 'openai', 'openai-chat' or 'llama'.")
