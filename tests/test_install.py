"""The package installs from a wheel and works outside the checkout.

The wheel is built from a copy of the files a source distribution holds,
installed into a new virtualenv (core dependencies only: pip's cache makes
this quick), and used from another folder: ``nfeval linkage --method
rougeL --summary``, the README's Python example, the shipped prompts and
DebateQA sample, a wheel without the reproduction, and the one-line error a model method gives
without the ``models`` extra.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nfeval.paths import PACKAGE_DATA

ROOT = Path(__file__).resolve().parents[1]  # the checkout the wheel is built from

pytestmark = pytest.mark.slow

#: what a source distribution of the project holds (MANIFEST.in and the package)
SDIST = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "src", *PACKAGE_DATA.values()]


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the new virtualenv's bin folder, a work folder outside the checkout, its env)."""
    # built without isolation, as `make env` has it: the build requirement of pyproject.toml
    pytest.importorskip("setuptools", minversion="77")
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src-copy"
    for name in SDIST:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, src / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.egg-info"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, src / name)
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "-q", "-w", str(tmp / "dist"), str(src)])
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp / "dist").glob("nfeval-*.whl"))
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr
    # nothing of the checkout may be visible to the new virtualenv, its pip included (a
    # PYTHONPATH into src/ would make pip take the checkout's nfeval as installed)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NFEVAL_MIRROR", "VIRTUAL_ENV")}
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                "--disable-pip-version-check", str(wheel)], env=env)
    assert pip.returncode == 0, pip.stderr[-3000:]
    work = tmp / "elsewhere"
    work.mkdir()
    shutil.copy2(ROOT / "examples" / "linkage_answers.jsonl", work / "answers.jsonl")
    env["NFEVAL_CACHE"] = str(tmp / "cache")
    env["NFEVAL_OFFLINE"] = "1"
    return venv / "bin", work, env


def test_wheel_carries_the_shipped_files_and_no_checkout_paths(installed):
    bin_, work, env = installed
    code = ("import nfeval.paths as p, nfeval.data.sample as s\n"
            "assert not p.IN_CHECKOUT, p.ROOT\n"
            "assert (p.PROMPTS / 'linkage_fewshot.txt').is_file(), p.PROMPTS\n"
            "print(len(s.load_sample().items))\n"
            "import nfeval_repro\n")
    out = _run([str(bin_ / "python"), "-c", code], cwd=work, env=env)
    assert "No module named 'nfeval_repro'" in out.stderr, out.stderr[-2000:]
    assert int(out.stdout.split()[0]) == 40


def test_the_wheel_is_the_library_alone(installed):
    """No experiment, claims, evidence or item-store module and no tokenizer pack: the
    reproduction (src/repro) is its own project; the wheel stays under 1 MB."""
    import zipfile

    wheel = next((installed[0].parent.parent / "dist").glob("nfeval-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n == "nfeval/linkage/judges.py" for n in names)  # the library is there
    bad = [n for n in names if n.startswith("nfeval_repro") or "/experiments/" in n
           or re.search(r"nfeval/(claims|evidence|evidence_cost|store|artefacts|readme|"
                        r"readings|profiles|plots|run_notebook)\.py$", n)
           or "tokenizers" in n or "paper_values" in n]
    assert bad == []
    assert wheel.stat().st_size < 1_000_000, wheel.stat().st_size


def test_cli_scores_and_writes_the_summary_outside_the_checkout(installed):
    bin_, work, env = installed
    out = _run([str(bin_ / "nfeval"), "linkage", "--answers", "answers.jsonl", "--method",
                "rougeL", "--summary", "s.json", "--no-progress"], cwd=work, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads((work / "s.json").read_text())
    assert summary["metric"] == "rougeL" and summary["items"]["scored"] == 15
    assert summary["score"]["n"] == 4 and summary["score"]["ci_low"] <= summary["score"]["mean"]
    assert {c["coefficient"] for c in summary["correlations_with_grades"]} == {
        "kendall", "spearman", "pearson"}
    assert (work / "answers.rougeL.csv").is_file()
    again = _run([str(bin_ / "nfeval"), "linkage", "--answers", "answers.jsonl", "--method",
                  "bleu", "--no-progress"], cwd=work, env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    cmp_ = _run([str(bin_ / "nfeval"), "compare", "answers.rougeL.csv", "answers.bleu.csv"],
                cwd=work, env=env)
    assert cmp_.returncode == 0 and "A - B" in cmp_.stdout and "95% CI" in cmp_.stdout, cmp_


def test_readme_python_example_runs_in_the_installed_package(installed):
    bin_, work, env = installed
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "the README has no python example"
    out = _run([str(bin_ / "python"), "-c", blocks[0]], cwd=work, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "95% CI" in out.stdout


def test_a_model_method_without_the_models_extra_names_the_install(installed):
    bin_, work, env = installed
    out = _run([str(bin_ / "nfeval"), "linkage", "--answers", "answers.jsonl", "--method",
                "linkage", "--no-progress"], cwd=work, env=env)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    # lines that work from a checkout (nfeval is not on the index), CPU torch first
    err = out.stderr
    assert "pip install 'nfeval[" not in err and "pip install '<checkout>[models]'" in err
    assert err.index("download.pytorch.org/whl/cpu") < err.index("<checkout>[models]")


def test_every_command_the_readmes_section_shows_scores_or_fails_in_one_line(installed):
    """Each `nfeval ...` line of the README's "Score your own answers", run as written in a
    folder holding the examples (as the README says), in the virtualenv of the core install:
    it scores (exit 0) or stops in one line saying what to do (exit 2), never a traceback."""
    bin_, work, env = installed
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Score your own answers")[1].split("\n## ")[0]
    commands = [line.split("  #")[0].strip().rstrip("\\").strip()
                for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)
                for line in block.splitlines() if line.startswith("nfeval ")]
    assert len(commands) >= 6
    folder = work / "readme"
    (folder / "examples").mkdir(parents=True, exist_ok=True)
    for name in ("linkage_answers.jsonl", "debateqa_answers.jsonl"):
        shutil.copy2(ROOT / "examples" / name, folder / "examples" / name)
    for command in commands:
        quiet = [] if command.startswith("nfeval compare") else ["--no-progress"]
        out = _run([str(bin_ / "nfeval"), *shlex.split(command)[1:], *quiet], cwd=folder,
                   env=env)
        said = out.stderr.strip().splitlines()
        assert out.returncode in (0, 2), (command, out.returncode, out.stderr[-1500:])
        assert "Traceback" not in out.stderr, (command, out.stderr[-1500:])
        if out.returncode == 2:
            errors = [s for s in said if s.startswith("nfeval: error:")]
            assert len(errors) == 1, (command, said)
