"""Which optional part of ``pip install nfeval[...]`` a missing module belongs to.

``pip install nfeval`` brings what the lexical methods, the file readers and
``nfeval compare`` need; the language models, llama.cpp, the HTTP backends, the
release's ROUGE and the plots are extras (``pyproject.toml``). A module missing
from one of them becomes one error that names the install command, instead of a
traceback.
"""

from __future__ import annotations

from nfeval.errors import NfevalError

#: top-level module -> the extra that installs it
EXTRA_OF = {
    "torch": "models", "transformers": "models", "accelerate": "models",
    "safetensors": "models", "tokenizers": "models", "gguf": "models",
    "bert_score": "models", "sentence_transformers": "models", "huggingface_hub": "models",
    "llama_cpp": "llama", "httpx": "http", "rouge": "release", "matplotlib": "plot",
}


def missing_extra(exc: ModuleNotFoundError) -> NfevalError | None:
    """The error to show for ``exc`` when its module belongs to an extra, else None."""
    name = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(name)
    if extra is None:
        return None
    lines = [f"pip install '<checkout>[{extra}]'"]
    if extra == "models":  # torch's CPU build first: the index's default pulls CUDA (~3 GB)
        lines.insert(0, "pip install torch --index-url https://download.pytorch.org/whl/cpu "
                        "(on a machine without a GPU)")
    return NfevalError(f"this needs the Python package {name!r}, which nfeval installs with "
                       f"its {extra!r} extra; from the nfeval checkout (its folder in place of "
                       f"<checkout>; nfeval is not on the package index): "
                       + ", then ".join(lines))
