"""What a result records about the machine that computed it (no paths, no host names).

The CPU flags that change numbers or speed: native bf16 (``avx512_bf16``,
``amx_bf16``), ``avx512f`` and ``avx2``. Scoring runs in float32 on every CPU
by default (:func:`nfeval.models.hf.default_dtype`), so these flags are a
record, not a switch, with one exception: ``nfeval linkage``'s judge scores in
bf16 where the CPU has AMX (:func:`judge_dtype`).
"""

from __future__ import annotations

import platform
from functools import lru_cache

RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


@lru_cache(maxsize=1)
def cpu_flags() -> tuple[str, ...]:
    """The relevant flags this CPU has (Linux ``/proc/cpuinfo``; empty elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            words = set(fh.read().split())
    except OSError:
        return ()
    return tuple(f for f in RELEVANT_FLAGS if f in words)


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``'s ``model name``; the platform's
    processor string elsewhere, or ``unknown``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or "unknown"


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX)."""
    return any(f in cpu_flags() for f in ("avx512_bf16", "amx_bf16"))


#: CPU flags on which ``nfeval linkage --method linkage`` scores (``prob`` mode) in bfloat16
#: when no dtype is asked for: there the 1.5B judge in bf16 ran at 3.3-4.1x float32's speed on
#: LINKAGE items in two runs, and lk_t02's LINKAGE rows (0- and 3-shot, and each minus
#: ROUGE-L) came out within 0.005 of float32's with no verdict moved on all 53 TREC-DL-NF
#: questions (0.009 for 0-shot on 30 questions per dataset; results/bench.csv, kernels
#: judge_path and judge_table). The pointwise judges stay float32: in bf16 the pointwise rows
#: and LINKAGE minus pointwise moved by up to 0.016, and two verdicts moved; so does the
#: pairwise judge, whose table no bf16 check has compared. D.A.
#: stays float32: bf16 was 3.1-3.3x as fast, but dq_t03's da_prob statistics moved by up to
#: 0.059. On a CPU with AVX512-BF16 but no AMX bf16 ran at 0.62x: float32 stays there, as on
#: every other CPU. The notebooks are float32 unless a parameter names another dtype (lk_t02's
#: every-candidate stages: ``judge_dtype`` bfloat16, in every judge row's signature; a store
#: key includes the dtype).
BF16_JUDGE_FLAGS = ("amx_bf16",)


def judge_dtype() -> str | None:
    """``"bfloat16"`` on CPUs with :data:`BF16_JUDGE_FLAGS`, else None (float32)."""
    return "bfloat16" if any(f in cpu_flags() for f in BF16_JUDGE_FLAGS) else None


def machine_tag() -> str:
    """A short class of this machine, e.g. ``x86_64/avx2`` or ``x86_64/avx2+avx512f+avx512_bf16``."""
    flags = cpu_flags()
    return f"{platform.machine() or 'unknown'}/{'+'.join(flags) or 'none'}"


def machine_record() -> dict:
    """The machine fields a result JSON records. ``torch_threads`` is None where the run
    never imported torch (every item read from the store): importing it to ask costs
    seconds."""
    import sys
    from importlib.metadata import PackageNotFoundError, version

    torch = sys.modules.get("torch")
    try:
        torch_version = torch.__version__ if torch is not None else version("torch")
    except PackageNotFoundError:
        torch_version = None
    return {"machine": machine_tag(), "cpu_flags": list(cpu_flags()),
            "python": platform.python_version(), "torch": torch_version,
            "torch_threads": torch.get_num_threads() if torch is not None else None}
