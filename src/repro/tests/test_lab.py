"""`make lab`'s JupyterLab server, headless: every notebook opens with the project's kernel.

Starts ``.venv/bin/jupyter lab`` on a free loopback port with a random token
(no browser), then through its REST API checks that the ``python3`` kernel
spec exists and that every notebook in ``notebooks/`` opens (its contents
come back as a notebook whose kernelspec is one the server has), and stops
the server. As root (containers) the server needs ``--allow-root``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"


def _jupyter() -> str:
    local = ROOT / ".venv" / "bin" / "jupyter"
    if local.exists():
        return str(local)
    found = shutil.which("jupyter", path=str(Path(sys.executable).parent))
    if not found:
        pytest.skip("jupyter is not installed in this environment (make env installs it)")
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(base: str, path: str, token: str, timeout: float = 30):
    req = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, json.loads(resp.read().decode("utf-8"))


@pytest.fixture
def lab(tmp_path):
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "HOME": os.environ.get("HOME", "")}
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [_jupyter(), "lab", "--no-browser", "--ip", "127.0.0.1", "--port", str(port),
         f"--ServerApp.token={token}", "--ServerApp.port_retries=0",
         "--notebook-dir", str(NOTEBOOKS),
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None:
                log.flush()
                pytest.fail("jupyter lab exited early:\n"
                            + (tmp_path / "lab.log").read_text()[-3000:])
            try:
                status, _ = _get(base, "/api/status", token, timeout=5)
                if status == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.time() > deadline:
                pytest.fail("jupyter lab did not answer within 180 s:\n"
                            + (tmp_path / "lab.log").read_text()[-3000:])
            time.sleep(0.5)
        yield base, token
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and any kernel it started
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


@pytest.mark.slow
def test_every_notebook_opens_with_the_project_kernel(lab):
    base, token = lab
    status, specs = _get(base, "/api/kernelspecs", token)
    assert status == 200 and "python3" in specs["kernelspecs"], specs
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names, "no notebooks found"
    _, listing = _get(base, "/api/contents?content=1", token)
    assert set(names) <= {c["name"] for c in listing["content"] if c["type"] == "notebook"}
    for name in names:
        status, model = _get(base, "/api/contents/" + urllib.parse.quote(name) + "?content=1",
                             token)
        assert status == 200 and model["type"] == "notebook", name
        kernel = model["content"]["metadata"].get("kernelspec", {}).get("name")
        assert kernel == "python3" and kernel in specs["kernelspecs"], (name, kernel)
        assert model["content"]["cells"], name
    with pytest.raises(urllib.error.HTTPError) as e:  # and nothing without the token
        urllib.request.urlopen(base + "/api/contents", timeout=10)
    assert e.value.code in (401, 403)
