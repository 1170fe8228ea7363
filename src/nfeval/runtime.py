"""Where models run: the device, dtype and batch size every model load uses by default.

A profile (:func:`nfeval.profiles.get_profile`) or a command's ``--device``
/ ``--dtype`` / ``--batch-tokens`` sets them once (:func:`configure`); every
load then uses them unless it is given its own: the transformers backend
(:class:`nfeval.models.hf.HFModel`), BERTScore and the [CLS] encoder
(:mod:`nfeval.linkage.lexical`), the sentence embedders of retrieval, dedup
and BERTopic (:mod:`nfeval.debateqa.experiments.curation`). The environment variables
``NFEVAL_DEVICE``, ``NFEVAL_DTYPE`` and ``NFEVAL_BATCH_TOKENS`` override the
profile (and are what ``make PROFILE=paper`` on a GPU machine relies on).

``"auto"`` device means CUDA when torch sees a GPU, else the CPU. The dtype
``"auto"`` means float32 on a CPU (numbers must not depend on which CPU ran
them) and bfloat16 on a GPU (:func:`nfeval.models.hf.default_dtype`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from nfeval import NfevalError

DEVICE_ENV, DTYPE_ENV, BATCH_ENV = "NFEVAL_DEVICE", "NFEVAL_DTYPE", "NFEVAL_BATCH_TOKENS"

__all__ = ["Runtime", "configure", "current", "resolve_device"]


@dataclass(frozen=True)
class Runtime:
    device: str = "cpu"  # "cpu", "cuda", "cuda:1", "auto"
    dtype: str = "auto"  # "auto", "float32", "bfloat16", "float16"
    batch_tokens: int = 2048  # padded tokens per forward batch of the scoring kernels


_CONFIGURED = Runtime()


def configure(*, device: str | None = None, dtype: str | None = None,
              batch_tokens: int | None = None) -> Runtime:
    """Set the defaults every later model load uses (None keeps a field as it is)."""
    global _CONFIGURED
    if batch_tokens is not None and int(batch_tokens) < 1:
        raise NfevalError(f"batch_tokens must be >= 1, got {batch_tokens}.")
    _CONFIGURED = replace(_CONFIGURED, **{k: v for k, v in
                                          {"device": device, "dtype": dtype,
                                           "batch_tokens": None if batch_tokens is None
                                           else int(batch_tokens)}.items() if v is not None})
    return current()


def current() -> Runtime:
    """The defaults in force: the environment variables over what :func:`configure` set."""
    rt = _CONFIGURED
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
    """A concrete torch device string: ``device``, else the configured one; "auto" -> cuda/cpu."""
    d = (device or current().device or "cpu").strip()
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
