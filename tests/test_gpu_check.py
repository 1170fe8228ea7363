"""``make gpu-check`` (scripts/gpu_check.py): it skips without a GPU and its comparison runs on the
CPU alone."""

import subprocess
import sys
from pathlib import Path

import pytest
from testkit import needs

ROOT = Path(__file__).resolve().parents[1]  # the checkout

SCRIPT = ROOT / "scripts" / "gpu_check.py"
torch = needs("torch")  # the script's tiny models


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_without_a_gpu_it_says_so_and_exits_0():
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the check runs for real")
    r = _run()
    assert r.returncode == 0 and "skipped: torch sees no GPU" in r.stdout


def test_on_the_cpu_every_kernel_matches_itself_in_float32_and_bf16_is_reported(models_extra):
    r = _run("--devices", "cpu")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line for line in r.stdout.splitlines() if line.startswith("| qwen2") or
            line.startswith("| llama")]
    assert len(rows) == 2 * 2 * 4  # two models, two dtypes, four kernels
    f32 = [x for x in rows if "float32" in x]
    assert all(x.rstrip(" |").endswith("pass") and "0.00e+00" in x for x in f32)
    bf16 = [x for x in rows if "bfloat16" in x]
    assert all(x.rstrip(" |").endswith("reported") for x in bf16)
    assert "every float32 row within the tolerance" in r.stdout


def test_a_tolerance_the_check_cannot_meet_fails_it(models_extra):
    r = _run("--devices", "cpu", "--dtypes", "bfloat16,float32", "--tol", "-1")
    assert r.returncode == 1 and "outside the tolerance" in r.stdout
