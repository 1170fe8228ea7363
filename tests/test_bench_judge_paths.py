"""The judge_path kernel of ``python benchmarks/bench.py`` (the 1.5B judge's ways of computing)."""

import csv

import pytest

import bench


@pytest.mark.slow
def test_judge_path_quick_writes_speed_and_agreement_rows(tmp_path, mirror):
    out = tmp_path / "bench.csv"
    assert bench.main(["--quick", "--kernels", "judge_path", "--paths", "llama-q4km",
                       "--path-judge", "qwen2.5-coder-0.5b-instruct", "--threads", "2",
                       "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    paths = {(r["model"].split("/")[-1], r["workload"].split("-")[0]) for r in rows}
    assert paths == {(p, w) for p in ("hf-float32", "llama-q4km", "limit")
                     for w in ("linkage", "da")}
    for r in rows:
        if r["model"].endswith("/hf-float32"):  # the reference agrees with itself exactly
            assert float(r["speedup_vs_float32"]) == 1.0 and r["agrees"] == "yes"
            assert float(r["max_expected_label_diff"]) == 0.0
        if r["model"].endswith("/llama-q4km"):  # near float32, measured, not assumed equal
            assert 0 < float(r["max_label_prob_diff"]) < 0.1
            assert float(r["items_per_s"]) > 0
        assert "@" in r["workload"]  # the CPU class that measured it is named


def test_unknown_paths_are_refused():
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--kernels", "judge_path", "--paths", "gpu-magic", "--csv", "/dev/null"])
