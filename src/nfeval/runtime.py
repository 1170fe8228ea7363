"""Where models run: one :class:`Runtime` value (device, dtype, batch size, threads), built once.

A runtime is built at the edge, from what the caller or the command line asks for with the
environment under it (:func:`from_env`, the only place that reads ``NFEVAL_DEVICE``,
``NFEVAL_DTYPE``, ``NFEVAL_BATCH_TOKENS`` and ``NFEVAL_THREADS``), and passed down as a value:
``load_model(name, runtime=rt)``, ``Linkage(settings, model, runtime=rt)``. Nothing below the
edge reads the environment or changes a runtime; a profile of the reproduction carries one
(``make PROFILE=paper`` on a GPU machine).

``"auto"`` device means CUDA when torch sees a GPU, else the CPU. The dtype ``"auto"``
means float32 on a CPU (numbers must not depend on which CPU ran them) and bfloat16 on a
GPU (:func:`nfeval.models.hf.default_dtype`).

Usage::

    from nfeval.runtime import Runtime, from_env

    rt = from_env(Runtime(dtype="bfloat16"))   # the environment over the caller's defaults
    rt.with_(device="cuda")                     # another value; rt is unchanged
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from nfeval.errors import NfevalError

DEVICE_ENV, DTYPE_ENV, BATCH_ENV = "NFEVAL_DEVICE", "NFEVAL_DTYPE", "NFEVAL_BATCH_TOKENS"
THREADS_ENV = "NFEVAL_THREADS"
#: the dtypes a runtime may name ("auto": float32 on a CPU, bfloat16 on a GPU)
DTYPES = ("auto", "float32", "fp32", "bfloat16", "bf16", "float16", "fp16")

__all__ = ["DTYPES", "Runtime", "from_env", "resolve_device"]


@dataclass(frozen=True)
class Runtime:
    """Where and how a model runs (module docstring); checked when built."""

    device: str = "cpu"  # "cpu", "cuda", "cuda:1", "auto"
    dtype: str = "auto"  # "auto", "float32", "bfloat16", "float16"
    batch_tokens: int = 2048  # padded tokens per forward batch of the scoring kernels
    threads: int | None = None  # CPU threads of the llama backend (None: all cores but one)

    def __post_init__(self) -> None:
        if str(self.dtype).lower() not in DTYPES:
            raise NfevalError(f"unknown dtype {self.dtype!r}; use one of {', '.join(DTYPES)}.")
        if not isinstance(self.batch_tokens, int) or self.batch_tokens < 1:
            raise NfevalError(f"batch_tokens must be an integer >= 1, got {self.batch_tokens!r}.")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise NfevalError(f"threads must be an integer >= 1, got {self.threads!r}.")

    def with_(self, **changes) -> "Runtime":
        """This runtime with ``changes`` (None values are left out: "not asked for")."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def from_env(base: Runtime | None = None) -> Runtime:
    """``base`` (default: the CPU, dtype auto, 2048 tokens) with the environment variables
    over it."""
    rt = base or Runtime()
    env = {k: os.environ.get(v, "").strip() for k, v in
           (("device", DEVICE_ENV), ("dtype", DTYPE_ENV), ("batch_tokens", BATCH_ENV),
            ("threads", THREADS_ENV))}
    for name in ("batch_tokens", "threads"):
        if env[name]:
            try:
                env[name] = int(env[name])
            except ValueError:
                var = BATCH_ENV if name == "batch_tokens" else THREADS_ENV
                raise NfevalError(f"{var} must be an integer, got {env[name]!r}.") from None
    return rt.with_(**{k: v for k, v in env.items() if v != ""})


def resolve_device(device: str | None = None) -> str:
    """A concrete torch device string: ``device`` (None: the CPU); "auto" -> cuda/cpu."""
    d = (device or "cpu").strip()
    if d == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    if d.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise NfevalError(f"device {d!r} was asked for but torch sees no GPU here. Fix: "
                              "--device cpu (or NFEVAL_DEVICE=cpu), or run on a GPU machine.")
    elif d not in ("cpu", "mps") and not d.startswith("cpu"):
        raise NfevalError(f"unknown device {d!r}; use cpu, cuda, cuda:N or auto.")
    return d
