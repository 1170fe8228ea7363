"""Ctrl-C during scoring: a real SIGINT to a real `nfeval` process exits with 130.

Before, ``nfeval.debateqa.scoring`` turned the KeyboardInterrupt into an ordinary
error, so the command exited with 2. Each test starts the command in a
subprocess through a small driver that slows the scoring kernel down (and,
for `linkage`, uses the fake judge of ``test_linkage_file``), waits until the
first item is cached, sends SIGINT, checks the exit status and the resume
line, then runs the same command again and checks that only the remaining
items are computed.

The child gets SIGINT's default disposition back before it starts: a shell
that runs a job in the background (``cmd &``) starts it with SIGINT ignored,
and Python then installs no KeyboardInterrupt handler.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

DRIVER = """
import sys, time
sys.path.insert(0, {tests!r})
calls = []
{patch}
import nfeval.cli as cli
try:
    status = cli.main(sys.argv[1:])
finally:
    print(f"CALLS {{len(calls)}}", file=sys.stderr, flush=True)
sys.exit(status)
"""

PATCH_LINKAGE = """
import nfeval.linkage.judges as J
from test_linkage_file import FakeJudge
real = J.judge_candidates
def slow(*a, **kw):
    calls.append(kw.get("qid"))
    time.sleep(0.4)
    return real(*a, **kw)
J.judge_candidates = slow
import nfeval.cli as cli
from nfeval.models.loader import ModelLoader
ModelLoader.load = lambda self, name, backend=None, **kw: FakeJudge()
"""

PATCH_PD = """
import nfeval.debateqa.pd as P
from nfeval.models.base import ModelInfo
class Tiny:
    info = ModelInfo(name="tiny", backend="test", source="test", dtype="float32")
def slow(model, answer, partials, *, variant="paper", restate="", id=None):
    calls.append(id)
    time.sleep(0.4)
    return P.PDResult(id=id, score=float(len(answer)), perplexities=[1.0], variant=variant)
P.pd_score = slow
import nfeval.cli as cli
from nfeval.models.loader import ModelLoader
ModelLoader.load = lambda self, name, backend=None, **kw: Tiny()
"""


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(driver: Path, argv: list[str], env: dict, runs: Path, n_done: int = 1,
         interrupt: bool = True) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, str(driver), *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint)
    if interrupt:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            lines = sum(len(p.read_text().splitlines()) for p in runs.glob("*.jsonl")) \
                if runs.is_dir() else 0
            if lines >= n_done:
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=240)
    return proc.returncode, err


def _calls(err: str) -> int:
    return int(next(l for l in err.splitlines() if l.startswith("CALLS ")).split()[1])


@pytest.fixture
def env(tmp_path, mirror):
    return {**os.environ, "NFEVAL_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}


def test_sigint_during_linkage_exits_130_and_resumes(models_extra, tmp_path, env):
    from test_linkage_file import line

    answers = tmp_path / "mine.jsonl"
    answers.write_text("\n".join(line(f"q{i}") for i in range(1, 9)) + "\n")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(tests=str(TESTS), patch=PATCH_LINKAGE))
    argv = ["linkage", "--answers", str(answers), "--out", str(tmp_path / "s.csv")]
    runs = tmp_path / "cache" / "runs"
    status, err = _run(driver, argv, env, runs)
    assert status == 130, err[-2000:]
    assert "nfeval: interrupted after" in err and "rerun the same command to resume" in err
    first = _calls(err)
    assert 1 <= first < 8
    status, err = _run(driver, argv, env, runs, interrupt=False)
    assert status == 0, err[-2000:]
    cached = len((next(runs.glob("linkage-file-judge-*.jsonl"))).read_text().splitlines())
    assert cached == 8 and _calls(err) <= 8 - first + 1  # at most one was cut short


def test_sigint_during_pd_exits_130_and_resumes(tmp_path, env):
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({
        "id": i, "question": f"Question {i}?",
        "partial_answers": [{"point_of_view": "A view", "explanation": "Its reason."}]}) + "\n"
        for i in range(1, 9)))
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"generation": f"Answer {i}.", "id": i}) + "\n"
                               for i in range(1, 9)))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(tests=str(TESTS), patch=PATCH_PD))
    argv = ["pd", "--answers", str(answers), "--split", str(questions), "--model", "tiny",
            "--out", str(tmp_path / "pd.csv")]
    runs = tmp_path / "cache" / "runs"
    status, err = _run(driver, argv, env, runs)
    assert status == 130, err[-2000:]
    assert "nfeval: interrupted after" in err and "rerun the same command to resume" in err
    first = _calls(err)
    status, err = _run(driver, argv, env, runs, interrupt=False)
    assert status == 0, err[-2000:]
    assert _calls(err) <= 8 - first + 1
