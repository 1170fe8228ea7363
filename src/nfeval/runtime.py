"""Where models run: the device, dtype and batch size of a model load, resolved explicitly.

Nothing here is set globally. A profile carries the three
(:class:`nfeval_repro.profiles.Profile`: ``device``, ``dtype``, ``batch_tokens``)
and loads models with them (:meth:`~nfeval_repro.profiles.Profile.load`); the
commands pass ``--device`` / ``--dtype`` / ``--batch-tokens`` to every load
and encoder. The environment variables ``NFEVAL_DEVICE``, ``NFEVAL_DTYPE``
and ``NFEVAL_BATCH_TOKENS`` override a profile when it is selected (what
``make PROFILE=paper`` on a GPU machine relies on) and are the default of a
load given none (:func:`from_env`).

``"auto"`` device means CUDA when torch sees a GPU, else the CPU. The dtype
``"auto"`` means float32 on a CPU (numbers must not depend on which CPU ran
them) and bfloat16 on a GPU (:func:`nfeval.models.hf.default_dtype`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from nfeval.errors import NfevalError

DEVICE_ENV, DTYPE_ENV, BATCH_ENV = "NFEVAL_DEVICE", "NFEVAL_DTYPE", "NFEVAL_BATCH_TOKENS"

__all__ = ["Runtime", "from_env", "resolve_device"]


@dataclass(frozen=True)
class Runtime:
    device: str = "cpu"  # "cpu", "cuda", "cuda:1", "auto"
    dtype: str = "auto"  # "auto", "float32", "bfloat16", "float16"
    batch_tokens: int = 2048  # padded tokens per forward batch of the scoring kernels


def from_env(base: Runtime | None = None) -> Runtime:
    """``base`` (default: the CPU, dtype auto, 2048 tokens) with the environment variables
    over it."""
    rt = base or Runtime()
    if rt.batch_tokens < 1:
        raise NfevalError(f"batch_tokens must be >= 1, got {rt.batch_tokens}.")
    env = {k: os.environ.get(v, "").strip() for k, v in
           (("device", DEVICE_ENV), ("dtype", DTYPE_ENV), ("batch_tokens", BATCH_ENV))}
    if env["device"]:
        rt = replace(rt, device=env["device"])
    if env["dtype"]:
        rt = replace(rt, dtype=env["dtype"])
    if env["batch_tokens"]:
        try:
            rt = replace(rt, batch_tokens=int(env["batch_tokens"]))
        except ValueError:
            raise NfevalError(f"{BATCH_ENV} must be an integer, got {env['batch_tokens']!r}.") \
                from None
    return rt


def resolve_device(device: str | None = None) -> str:
    """A concrete torch device string: ``device``, else ``NFEVAL_DEVICE``, else the CPU;
    "auto" -> cuda/cpu."""
    d = (device or from_env().device or "cpu").strip()
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
