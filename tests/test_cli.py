"""The command line: help, status, and one clear error line for bad input."""

import subprocess
import sys

import pytest

from nfeval.cli import main


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NFEVAL_OFFLINE", "1")
    monkeypatch.delenv("NFEVAL_MIRROR", raising=False)
    return tmp_path


def test_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "nfeval.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for word in ("data", "models", "artefacts", "NFEVAL_MIRROR"):
        assert word in out.stdout


def test_data_status_without_mirror_says_what_is_missing(isolated, capsys):
    assert main(["data", "status"]) == 0
    out = capsys.readouterr().out
    assert "antique" in out and "missing" in out and "NFEVAL_MIRROR" in out


def test_data_status_with_mirror(mirror, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    assert main(["data", "status"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("antique "))
    assert "mirror" in line and "verified" in line


@pytest.mark.parametrize("argv,msg", [
    (["data", "fetch"], "name at least one file"),
    (["data", "fetch", "no-such-file"], "no-such-file"),
    (["data", "fetch", "antique"], "NFEVAL_MIRROR"),
    (["models", "prepare", "no-such-model"], "no-such-model"),
])
def test_errors_are_one_clear_line(isolated, capsys, argv, msg):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("nfeval: error: ") and msg in err


def test_artefacts_lists_catalogue(capsys):
    assert main(["artefacts"]) == 0
    out = capsys.readouterr().out
    assert "lk_t01" in out and "dq_eq7" in out
