"""The judge_path kernel of ``python benchmarks/bench.py`` (the 1.5B judge's ways of computing)."""

import csv

import pytest

import bench


@pytest.mark.slow
def test_judge_path_quick_writes_speed_and_agreement_rows(tmp_path, mirror):
    out = tmp_path / "bench.csv"
    assert bench.main(["--quick", "--kernels", "judge_path", "--paths", "llama-q4km",
                       "--path-judge", "smollm2-135m-instruct", "--threads", "2",
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
        assert r["run"] and r["cpu"]  # which run, on which CPU model


def test_unknown_paths_are_refused():
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--kernels", "judge_path", "--paths", "gpu-magic", "--csv", "/dev/null"])


def _row(machine, work, path, run, speed, agrees="yes", kernel="judge_path"):
    return {"kernel": kernel, "model": f"judge/{path}", "workload": f"{work}@{machine}",
            "run": run, "cpu": "Some CPU", "items_per_s": "1.0", "speedup_vs_float32": speed,
            "agrees": agrees}


def test_the_default_path_needs_two_faster_runs_and_an_agreeing_table(tmp_path):
    from judge_paths import choose, summarize

    out = tmp_path / "bench.csv"
    rows = [_row("x86/amx", "linkage", "hf-float32", r, "1.0") for r in ("r1", "r2")]
    rows += [_row("x86/amx", "linkage", "hf-bfloat16", "r1", "2.1", agrees="no"),
             _row("x86/amx", "linkage", "llama-q4km", "r1", "3.0")]
    for r in rows:
        bench.write_row(out, r)
    summary, tables = summarize(out)
    # one run of each path: float32 stays, whatever the speed
    assert choose(summary, tables, "x86/amx", "linkage") == "hf-float32"
    bench.write_row(out, _row("x86/amx", "linkage", "hf-bfloat16", "r2", "1.9", agrees="no"))
    summary, tables = summarize(out)
    bf16 = next(s for s in summary if s["path"] == "hf-bfloat16")
    assert (bf16["runs"], bf16["speedup_min"], bf16["speedup_max"]) == (2, 1.9, 2.1)
    # two faster runs, but no table checked: still float32
    assert choose(summary, tables, "x86/amx", "linkage") == "hf-float32"
    bench.write_row(out, _row("x86/amx", "lk_t02-30", "hf-bfloat16", "r3", "", "yes",
                              kernel="judge_table"))
    bench.write_row(out, _row("x86/amx", "da", "hf-float32", "r1", "1.0"))
    bench.write_row(out, _row("x86/amx", "da", "hf-bfloat16", "r1", "3.1"))
    bench.write_row(out, _row("x86/amx", "da", "hf-bfloat16", "r2", "3.2"))
    bench.write_row(out, _row("x86/amx", "dq_t03-0", "hf-bfloat16", "r3", "", "no",
                              kernel="judge_table"))
    summary, tables = summarize(out)
    assert choose(summary, tables, "x86/amx", "linkage") == "hf-bfloat16"
    assert choose(summary, tables, "x86/amx", "da") == "hf-float32"  # its table differed
    assert choose(summary, tables, "x86/avx2", "linkage") == "hf-float32"  # another CPU class
    # a later table run that differs takes the agreement back
    bench.write_row(out, _row("x86/amx", "lk_t02-30", "hf-bfloat16", "r4", "", "no",
                              kernel="judge_table"))
    assert choose(*summarize(out), "x86/amx", "linkage") == "hf-float32"


def test_a_table_agrees_when_estimates_are_close_and_no_verdict_moves():
    import pandas as pd

    from judge_tables import MEAN_TOL, compare

    def table(*rows):
        return pd.DataFrame(rows, columns=["dataset", "coefficient", "row", "ours", "ci_low",
                                           "ci_high", "n_questions"])

    ref = table(("antique", "spearman", "linkage-0shot", 0.30, 0.20, 0.40, 30),
                ("antique", "spearman", "linkage-0shot - rougeL", 0.10, 0.01, 0.20, 30),
                ("sample", "auroc", "da_prob", 0.70, 0.60, 0.80, 40))
    close = ref.assign(ours=ref["ours"] + MEAN_TOL / 2)
    assert compare(ref, close) == (pytest.approx(MEAN_TOL / 2), [])
    # the difference's interval now reaches 0: its verdict moved, though its estimate did not
    moved = ref.copy()
    moved.loc[1, "ci_low"] = -0.01
    gap, changes = compare(ref, moved)
    assert gap == 0 and changes == ["antique linkage-0shot - rougeL spearman: above -> across"]
    # AUROC is read against 0.5
    low = ref.copy()
    low.loc[2, ["ci_low", "ci_high"]] = [0.45, 0.80]
    assert compare(ref, low)[1] == ["sample da_prob auroc: above -> across"]
    with pytest.raises(RuntimeError):
        compare(ref, ref.iloc[:2])


def test_judge_table_from_the_store_checks_the_listwise_and_pointwise_rows_apart(tmp_path,
                                                                                 mirror):
    """The bf16 items the every-candidate stages stored, read against the committed float32
    ones on lk_t02's 8-candidate draw: no weights, no computation; one bench row per kind."""
    out = tmp_path / "bench.csv"
    assert bench.main(["--kernels", "judge_table", "--tables", "lk_t02", "--table-paths",
                       "hf-bfloat16", "--table-from-store", "--table-questions", "2",
                       "--table-datasets", "trec-dl-nf", "--csv", str(out)]) == 0
    rows = {r["workload"].split("@")[0]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"lk_t02:linkage-2-trec-dl-nf", "lk_t02:pointwise-2-trec-dl-nf"}
    # LINKAGE 0- and 3-shot and each minus ROUGE-L; the pointwise rows and LINKAGE minus them
    assert rows["lk_t02:linkage-2-trec-dl-nf"]["rows_compared"] == "12"
    assert rows["lk_t02:pointwise-2-trec-dl-nf"]["rows_compared"] == "18"
    for r in rows.values():
        assert not r.get("items_per_s") and r["agrees"] in ("yes", "no")
        assert 0 < float(r["max_row_mean_diff"]) < 0.2  # two dtypes: close, not equal


def test_judge_table_refuses_a_path_the_store_cannot_hold(tmp_path, mirror):
    with pytest.raises(SystemExit):
        bench.main(["--kernels", "judge_table", "--tables", "lk_t02", "--table-paths",
                    "llama-q4km", "--table-from-store", "--table-questions", "1",
                    "--csv", str(tmp_path / "b.csv")])
