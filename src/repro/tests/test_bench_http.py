"""The HTTP and peer kernels of ``python benchmarks/bench.py`` (server_rps, peer_lm_eval)."""

from __future__ import annotations

import csv
import importlib.util

import pytest

import bench


def test_saturation_level():
    assert bench.saturation_level([1, 2, 4, 8], [1.0, 1.9, 2.0, 2.05]) == 2
    assert bench.saturation_level([1, 2, 4, 8], [1.0, 1.05, 1.1, 1.1]) == 1
    assert bench.saturation_level([1, 2, 4, 8], [1.0, 2.0, 3.5, 6.0]) == 8


def test_judge_requests_are_seeded_and_short():
    a, b = bench.judge_requests(5, 0), bench.judge_requests(5, 0)
    assert a == b and len(set(a)) == 5 and bench.judge_requests(5, 1) != a
    assert all(len(x.split()) < 80 and "Reply with 1 for yes or 0 for no." in x for x in a)


def test_kernel_names_are_checked():
    with pytest.raises(SystemExit):
        bench.main(["--kernels", "server_rps,nope"])
    with pytest.raises(SystemExit):
        bench.main(["--kernels", "server_rps", "--server-concurrency", "0,2"])
    assert "server_rps" in bench.BENCH_ALL and "peer_lm_eval" in bench.BENCH_ALL


@pytest.mark.slow
def test_server_rps_quick(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    out = tmp_path / "bench.csv"
    assert bench.main(["--quick", "--kernels", "server_rps", "--server-modes", "replicas",
                       "--server-concurrency", "1,2", "--server-requests", "2",
                       "--server-max-tokens", "1", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["concurrency"] for r in rows] == ["1", "2"]
    assert all(r["kernel"] == "server_rps" and float(r["requests_per_s"]) > 0 for r in rows)
    assert rows[0]["ratio_to_c1"] == "1.000"
    assert "-c1-1x" in rows[0]["workload"] and "-c2-2x" in rows[1]["workload"]  # c one-slot servers
