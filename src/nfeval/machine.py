"""What a result records about the machine that computed it (no paths, no host names).

The CPU flags that change numbers or speed: native bf16 (``avx512_bf16``,
``amx_bf16``), ``avx512f`` and ``avx2``. A CPU kind is :func:`machine_tag`'s
class of them (``x86_64/avx2+avx512f+avx512_bf16+amx_bf16``). Scoring runs in
float32 on every CPU by default (:func:`nfeval.models.hf.default_dtype`), so
these flags are a record, not a switch, with one exception: ``nfeval linkage``'s
listwise judge (``--method linkage``, ``prob`` mode) scores in the dtype that
:data:`LISTWISE_JUDGE_DTYPES` gives this CPU kind (:func:`judge_dtype`).

The rule for that table: a kind gets bf16 for the listwise judge only where
results/bench.csv shows bf16 faster than float32 in at least two ``judge_path``
runs on that kind *and* a ``judge_table`` check on that kind agrees (LINKAGE Table
2's LINKAGE rows recomputed in bf16: every coefficient within 0.01 of float32's and
no verdict moved) -- ``benchmarks/judge_paths.py``'s ``choose``. The recomputed
rows decide, not the items: ``judge_path``'s item-level gap (an expected rank
moved by a few hundredths) is not what a reader sees, and a kind whose Table 2
rows were never recomputed in bf16 stays float32 however fast bf16 runs there. A
test holds :data:`LISTWISE_JUDGE_DTYPES` to the committed rows, so it cannot
drift from the evidence.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

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


#: Per CPU kind (:func:`machine_tag`): the dtype ``nfeval linkage --method linkage`` scores
#: in (``prob`` mode, transformers backend, on the CPU) when no dtype is asked for, and the
#: evidence in one line: bf16's speed-up over float32 on LINKAGE items in its ``judge_path``
#: runs and its ``judge_table`` check (results/bench.csv). A key is a kind, or a kind on one
#: CPU model (``"<kind> on <model>"``, as :func:`cpu_model` names it; looked up first), for a
#: kind whose CPU models disagree. A class not listed is float32. A class enters with one
#: line here once results/bench.csv holds its two faster ``judge_path`` runs and an agreeing
#: ``judge_table`` row (a test checks each entry against ``choose`` on the committed rows,
#: and every measured class left out against it too).
#:
#: Only the listwise judge has entries: the pointwise and pairwise judges and D.A. stay
#: float32 on every kind (their bf16 checks moved verdicts, or none was run). The rows behind
#: each entry, and behind each measured kind left out, are in results/bench.csv.
LISTWISE_JUDGE_DTYPES: Mapping[str, tuple[str, str]] = MappingProxyType({
    "x86_64/avx2+avx512f+avx512_bf16+amx_bf16": ("bfloat16", "bf16 3.3-4.1x float32 in 2 runs; LINKAGE Table 2's LINKAGE rows within 0.009, no verdict moved"),
})


def listwise_judge_default() -> tuple[str, str, str] | None:
    """(key, dtype, reason) of this machine's entry in :data:`LISTWISE_JUDGE_DTYPES`: its kind
    and CPU model's (``"<kind> on <model>"``) where the table has one, else its kind's; None
    where neither is listed (float32)."""
    kind = machine_tag()
    for key in (f"{kind} on {cpu_model()}", kind):
        entry = LISTWISE_JUDGE_DTYPES.get(key)
        if entry is not None:
            return (key, *entry)
    return None


def judge_dtype() -> str | None:
    """The listwise LINKAGE judge's default dtype on this CPU kind
    (:data:`LISTWISE_JUDGE_DTYPES`), None (float32) for a kind not listed."""
    entry = listwise_judge_default()
    return None if entry is None else entry[1]


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
