"""The kernel check (``make check-kernels``): its settings and report, without running make."""

from __future__ import annotations

import pytest

from nfeval_repro import kernel_check as K


def test_the_settings_imitate_other_cpus():
    by = {s.name: s for s in K.settings()}
    assert list(by)[0] == "default" and by["default"].env == {}
    assert {"openblas-haswell", "openblas-zen", "openblas-skylakex", "avx2-only",
            "one-thread"} <= set(by)
    avx2 = by["avx2-only"].env
    assert avx2["OPENBLAS_CORETYPE"] == "Haswell" and avx2["ATEN_CPU_CAPABILITY"] == "avx2"
    assert avx2["ONEDNN_MAX_CPU_ISA"] == "AVX2" and avx2["MKL_ENABLE_INSTRUCTIONS"] == "AVX2"
    assert by["openblas-skylakex"].needs == ("avx512f",)
    # NumPy is asked to drop only dispatch targets this CPU has (it refuses others)
    from numpy._core._multiarray_umath import __cpu_features__

    for target in avx2.get("NPY_DISABLE_CPU_FEATURES", "").split():
        assert __cpu_features__[target]


def test_it_refuses_a_checkout_whose_outputs_differ(monkeypatch, capsys):
    monkeypatch.setattr(K, "_dirty", lambda: [" M results/lk_x01.csv"])
    monkeypatch.setattr(K, "run_setting", lambda *a: pytest.fail("must not run make"))
    assert K.main(["--settings", "default"]) == 2
    assert "results/lk_x01.csv" in capsys.readouterr().err


def test_an_unknown_setting_is_an_error(capsys):
    with pytest.raises(SystemExit):
        K.main(["--settings", "avx9000"])
    assert "avx9000" in capsys.readouterr().err


def test_the_report_lists_what_changed_and_the_exit_status_says_so(monkeypatch, capsys):
    setting = K.settings()[0]
    runs = {"default": {"setting": setting, "rc": 0, "wall": 300.0, "others": [],
                        "changed": [{"path": "results/lk_x01.csv", "cells": 25,
                                     "largest": 1.9e-05}], "tail": ""}}
    monkeypatch.setattr(K, "_dirty", lambda: [])
    monkeypatch.setattr(K, "run_setting", lambda s, jobs: runs[s.name])
    assert K.main(["--settings", "default"]) == 1
    out = capsys.readouterr().out
    assert "results/lk_x01.csv (25 cells, up to 1.9e-05)" in out
    runs["default"] = {**runs["default"], "changed": []}
    assert K.main(["--settings", "default"]) == 0
    assert "| default |" in capsys.readouterr().out
