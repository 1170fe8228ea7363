"""benchmarks/bench.py (``make bench``): its CSV and its quick mode on the smallest embedded
model (moved from tests/test_models_hf.py, whose model check it reuses)."""

from __future__ import annotations

import pytest
from test_models_hf import needs_model


def test_bench_csv_update_or_append(tmp_path):
    from bench import COLUMNS, write_row

    path = tmp_path / "bench.csv"
    row = dict(kernel="k", model="m", workload="w", tokens_per_s="1",
               ratio_to_limit="1", speedup_vs_naive="2")
    write_row(path, row)
    write_row(path, {**row, "workload": "other"})
    write_row(path, {**row, "tokens_per_s": "5"})  # replaces the first row
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert len(lines) == 3
    assert "k,m,other,1,1,2" in lines and "k,m,w,5,1,2" in lines


@pytest.mark.slow
@needs_model
def test_bench_quick_smoke(tmp_path, capsys):
    """The benchmark's quick mode end to end, on the kernels no other test runs (judge_path:
    test_bench_judge_paths.py; server_rps: test_bench_http.py)."""
    from bench import main

    out = tmp_path / "bench.csv"
    assert main(["--quick", "--kernels", "hf-shared-kv,pd,linkage_prob,peer_lm_eval",
                 "--judge", "smollm2-135m-instruct", "--csv", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ratio_to_limit" in text and "speedup_vs_naive" in text
    assert out.read_text().startswith("kernel,model,workload,tokens_per_s,")
