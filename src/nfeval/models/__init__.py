"""Language models behind one interface (see :mod:`nfeval.models.base`).

``load_model("smollm2-135m-instruct")`` gives an embedded model that runs
offline; hub ids (``"gpt2"``), local folders and ``.gguf`` paths work too.
``backend="openai"`` talks to an OpenAI-compatible server instead; a
:class:`~nfeval.models.loader.ModelLoader` carries where models run (a
:class:`~nfeval.runtime.Runtime`) and each backend's options.
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

from nfeval.models.loader import ModelLoader, load_model

__all__ = [
    "ModelLoader",
    "Generation",
    "LanguageModel",
    "Message",
    "ModelInfo",
    "TokenLogprobs",
    "normalize",
    "load_model",
]
