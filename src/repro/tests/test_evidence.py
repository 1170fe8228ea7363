"""The evidence driver's plan and its cost projection (``python -m nfeval_repro.evidence``)."""

import json
import math
from pathlib import Path

import pytest

from nfeval_repro import evidence, evidence_cost

ROOT = Path(__file__).resolve().parents[3]  # the checkout
RESULTS = ROOT / "results"


def _write(folder, artefact, name, records):
    path = folder / artefact / "items" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"k": k, "v": 0, "m": m, "s": s}) for k, m, s in records]
    path.write_text("\n".join(lines) + "\n{\"k\": \"cut", encoding="utf-8")  # a killed last line


def test_every_planned_artefact_has_a_probe_and_stages_that_are_notebook_parameters():
    import papermill as pm

    from nfeval_repro.artefacts import by_id

    assert set(evidence.PROBE) == {a for a, _ in evidence.PLAN}
    for artefact, _ in evidence.PLAN:
        known = set(pm.inspect_notebook(str(by_id(artefact).path)))
        for stage in (evidence.PROBE[artefact], *evidence.STAGES.get(artefact, ())):
            assert set(stage) <= known, (artefact, set(stage) - known)


def test_lk_t02s_defaults_are_its_committed_table_and_its_first_stages_name_the_8_candidate_draw():
    """The notebook's defaults are the last every-candidate stage, both datasets at every
    judgeable question (what ``make reproduce`` rebuilds: the committed table); the first stages name every parameter of the
    8-candidate draw they ran, and their rows are same_items's."""
    import papermill as pm

    from nfeval_repro.artefacts import by_id
    from nfeval_repro.linkage.same_items import CLAIM_ROWS, DEFAULT_JUDGE_ROWS

    defaults = {k: v["default"] for k, v in pm.inspect_notebook(str(by_id("lk_t02").path)).items()}
    for key, value in evidence.STAGES["lk_t02"][-1].items():  # every judgeable question
        if key != "judge_rows":  # empty: same_items.CLAIM_ROWS
            assert defaults[key] == repr(value).replace("'", '"'), key
    assert defaults["judge_rows"] == '""' and evidence.EVERY_ROWS == ",".join(CLAIM_ROWS)
    assert evidence._EIGHT["judge_rows"] == ",".join(DEFAULT_JUDGE_ROWS)
    first = evidence.STAGES["lk_t02"][:3]
    assert [s["limit"] for s in first] == [30, 60, 120]
    assert all(s["max_candidates"] == 8 and s["judge_dtype"] == "float32" for s in first)
    assert all(defaults[k] != repr(v).replace("'", '"') for k, v in evidence._EIGHT.items()
               if k != "judge_rows")


def test_lk_t03_and_lk_t04s_registry_parameters_are_their_last_stage_and_their_first_name_float32():
    """lk_t03 / lk_t04's committed tables are their every-candidate stage on both datasets
    (what ``make reproduce`` rebuilds from the store); their 8-candidate stages name the float32
    they ran in (and lk_t03's the rows of 1GT it judged, pairwise with a seeded coin)."""
    from nfeval_repro.artefacts import by_id
    from nfeval_repro.linkage.generated_lists import GENERATED_ROWS

    for artefact in ("lk_t03", "lk_t04"):
        registry = {k: v for k, v in by_id(artefact).parameters if k != "artefact"}
        *eight, trec, antique, both = evidence.STAGES[artefact]
        assert both == registry, artefact
        assert trec == {**both, "datasets": "trec-dl-nf"}
        assert antique == {**both, "datasets": "antique"}
        assert both["max_candidates"] == 0 and both["judge_dtype"] == "bfloat16"
        assert [s["limit"] for s in eight] == [20, 40]
        assert all(s["max_candidates"] == -1 and s["judge_dtype"] == "float32" for s in eight)
    assert "pairwise-release" in dict(by_id("lk_t03").parameters)["judge_rows"].split(",")
    eight = evidence.STAGES["lk_t03"][:2]
    assert all(s["judge_rows"].split(",") == list(GENERATED_ROWS["1gt"]) for s in eight)


def test_projection_is_each_files_items_times_its_probe_seconds_per_item(tmp_path):
    committed, probe = tmp_path / "committed", tmp_path / "probe"
    _write(committed, "lk_t02", "judge.labels.jsonl",
           [("a", "busy", 2.0), ("b", "busy", 4.0), ("c", "idle", 1.0), ("d", "idle", 3.0)])
    _write(committed, "lk_t02", "lm.cont.jsonl", [("e", "idle", 10.0), ("f", "idle", 30.0)])
    _write(committed, "dq_t03", "judge.labels.jsonl", [("g", "busy", 5.0)])
    _write(committed, "lk_t01", "judge.labels.jsonl", [("h", "busy", 5.0)])  # not in the plan
    # the probe recomputed a and c (1 s and 3 s) and e (5 s); x is not a committed item
    _write(probe, "lk_t02", "judge.labels.jsonl", [("a", "here", 1.0), ("c", "here", 3.0),
                                                   ("x", "here", 99.0)])
    _write(probe, "lk_t02", "lm.cont.jsonl", [("e", "here", 5.0)])
    rows = evidence_cost.project(evidence.read_items(committed), evidence.read_items(probe))
    got = {(r["artefact"], r["file"]): r for r in rows}
    assert set(got) == {("lk_t02", "judge.labels.jsonl"), ("lk_t02", "lm.cont.jsonl"),
                        ("dq_t03", "judge.labels.jsonl")}
    judge = got["lk_t02", "judge.labels.jsonl"]
    assert (judge["items"], judge["recorded_s"], judge["recorded_on"], judge["matched"],
            judge["probe_s_per_item"], judge["projected_s"]) == (4, 10.0, "busy idle", 2, 2.0, 8.0)
    lm = got["lk_t02", "lm.cont.jsonl"]
    assert (lm["matched"], lm["projected_s"]) == (1, 10.0)
    # no probe item of dq_t03: no projection, said so
    other = got["dq_t03", "judge.labels.jsonl"]
    assert other["matched"] == 0 and math.isnan(other["projected_s"])


def test_measure_refuses_the_repository_as_its_scratch_folder(capsys):
    assert evidence_cost.main(["--measure", str(ROOT / "results")]) == 2
    assert "scratch folder" in capsys.readouterr().err


@pytest.mark.parametrize("module,argv", [(evidence, ["no_such_artefact"]),
                                         (evidence_cost, ["--measure", "/tmp/x", "lk_t01"])])
def test_an_artefact_outside_the_plan_is_a_clear_error(module, argv, capsys):
    assert module.main(argv) == 2
    assert "unknown artefact" in capsys.readouterr().err


def test_ids_may_be_given_with_commas(capsys):
    """``make evidence IDS=dq_f03,dq_f04`` as well as ``IDS="dq_f03 dq_f04"``."""
    assert evidence.split_ids(["dq_f03,dq_f04", "lk_t05", "lk_t02,"]) == [
        "dq_f03", "dq_f04", "lk_t05", "lk_t02"]
    assert evidence.main(["dq_f03,no_such_artefact"]) == 2
    assert "['no_such_artefact']" in capsys.readouterr().err


def test_the_cost_command_needs_one_of_measure_or_agree(capsys):
    with pytest.raises(SystemExit) as exc:
        evidence_cost.main([])
    assert exc.value.code == 2
    assert "--measure" in capsys.readouterr().err


def _store(folder, artefact, name, records):
    path = folder / artefact / "items" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"k": k, "v": v, "m": m, "s": 1.0}) + "\n"
                            for k, v, m in records), encoding="utf-8")


def test_agreement_reports_the_largest_difference_per_recording_cpu_and_equal_texts(tmp_path):
    committed, here = tmp_path / "committed", tmp_path / "here"
    _store(committed, "lk_t02", "judge.labels.jsonl",
           [("a", [-1.0, -2.0], "avx2"), ("b", [-0.5, -3.0], "avx2"), ("c", [-1.0, -1.0], "bf16"),
            ("only-committed", [0.0, 0.0], "avx2")])
    _store(committed, "dq_t04", "lm.cont.jsonl", [("t", [-500.0, 100, 0], "avx2")])
    _store(committed, "dq_t04", "lm.gen.jsonl", [("g1", {"text": "same"}, "avx2"),
                                                  ("g2", {"text": "one way"}, "avx2")])
    _store(here, "lk_t02", "judge.labels.jsonl",
           [("a", [-1.0, -2.00003], "x"), ("b", [-0.5, -3.0], "x"), ("c", [-1.0, -1.0], "x"),
            ("a", [-9.0, -9.0], "x"), ("new", [1.0, 1.0], "x")])  # a again: the first one counts
    _store(here, "dq_t04", "lm.cont.jsonl", [("t", [-500.005, 100, 0], "x")])
    _store(here, "dq_t04", "lm.gen.jsonl", [("g1", {"text": "same"}, "x"),
                                             ("g2", {"text": "another"}, "x")])
    rows = {(r["file"], r["recorded_on"]): r for r in evidence_cost.agreement(committed, here)}
    avx2 = rows["judge.labels.jsonl", "avx2"]
    assert avx2["items"] == 2 and avx2["max_abs_diff"] == pytest.approx(3e-5)
    assert avx2["max_rel_diff"] == pytest.approx(1.5e-5)  # relative to the committed -2.0
    assert rows["judge.labels.jsonl", "bf16"]["max_abs_diff"] == 0.0
    cont = rows["lm.cont.jsonl", "avx2"]  # a summed log-probability: large absolute, tiny relative
    assert cont["max_abs_diff"] == pytest.approx(5e-3) and cont["max_rel_diff"] == pytest.approx(1e-5)
    gen = rows["lm.gen.jsonl", "avx2"]
    assert (gen["texts"], gen["texts_equal"]) == (2, 1)


def test_agree_needs_a_folder_of_items(tmp_path, capsys):
    assert evidence_cost.main(["--agree", str(tmp_path / "missing")]) == 2
    assert "results folder" in capsys.readouterr().err
    assert evidence_cost.main(["--agree", str(tmp_path)]) == 2
    assert "no item the committed store has" in capsys.readouterr().err


@pytest.mark.slow
def test_committed_items_recomputed_on_this_cpu_agree_within_1e_4(tmp_path, mirror, monkeypatch):
    """The same numbers on every CPU: the first items of two artefacts, recomputed here with
    nothing read from the committed store, against the committed ones. Their committed items
    were recorded on both kinds of CPU (LINKAGE Table 5's first question judged by the 0.5B on
    an AVX2-only one, DebateQA Figure 5's first question by its own two judges, SmolLM2 and
    Gemma, on one with avx512_bf16), so whichever kind runs this
    compares across kinds. (The 0.5B, not the table's 1.5B judge: its items of that question
    are the AVX2 ones, and it takes a third of the time.) Generated texts are read from the
    committed store, not generated again (greedy decoding may diverge between kernels, which is
    why they are committed): every number is recomputed on the committed answers."""
    store = tmp_path / "items"
    monkeypatch.setenv("NFEVAL_STORE", str(store))
    monkeypatch.setenv("NFEVAL_STORE_READ", "texts")
    evidence.run(["lk_t05", "dq_f05"], tmp_path / "out",
                 {"lk_t05": ({"limit": 1, "lexical_limit": 1,
                              "judge": "qwen2.5-coder-0.5b-instruct"},),
                  "dq_f05": ({"limit": 1, "judges": "smollm2-135m-instruct,gemma3-270m"},)})
    rows = [r for r in evidence_cost.agreement(RESULTS, store) if r["items"] > r["texts"]]
    assert sum(r["items"] for r in rows) >= 20
    assert len({r["recorded_on"] for r in rows}) >= 2, rows  # both kinds of CPU
    worst = max(rows, key=lambda r: r["max_rel_diff"])
    assert worst["max_rel_diff"] <= 1e-4, worst


@pytest.mark.slow
def test_ctrl_c_ends_a_running_evidence_run_within_seconds_keeping_its_items(tmp_path, mirror):
    """SIGINT to the process group of a running ``make evidence`` (what Ctrl-C sends): the run
    ends within seconds with status 130 and a line saying how to resume; the kernel (in a
    session of its own) is gone, and every item written stays readable."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from nfeval_repro.store import read_records

    log = RESULTS / evidence.LOG
    logged = log.read_bytes() if log.exists() else None
    store = tmp_path / "store"
    env = {**os.environ, "NFEVAL_STORE": str(store), "NFEVAL_STORE_READ": "own",
           "NFEVAL_LLAMA_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "nfeval_repro.evidence", "lk_t05", "--set", "judge=smollm2-135m-instruct",
         "--set", "lexical_limit=3"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)  # its own process group, as a terminal's foreground job
    items = store / "lk_t05" / "items"

    def judged() -> int:
        return sum(1 for p in items.glob("smollm2*.jsonl") for _ in read_records(p))

    deadline = time.time() + 600
    while judged() < 3 and proc.poll() is None and time.time() < deadline:
        time.sleep(1)
    assert proc.poll() is None, proc.communicate()
    assert judged() >= 3, "no judge item was stored in 10 minutes"
    os.killpg(proc.pid, signal.SIGINT)
    t = time.time()
    out, err = proc.communicate(timeout=30)
    assert time.time() - t < 15, "the run went on after Ctrl-C"
    assert proc.returncode == 130, (out[-2000:], err[-2000:])
    assert "run the same command again to resume" in err
    n = judged()
    time.sleep(5)
    assert judged() == n  # nothing computes any more: the kernel is gone
    assert n >= 3
    assert (log.read_bytes() if log.exists() else None) == logged  # the repository's log untouched


def test_the_claims_stages_run_in_rounds_before_the_analyses_and_ablations():
    steps = evidence.schedule(["lk_t06", "dq_t05", "lk_t05", "lk_t02", "dq_t02"])
    got = [(a, s.get("limit")) for a, s in steps]
    assert got == [("lk_t02", 30), ("lk_t05", 40), ("dq_t02", 40),
                   ("lk_t02", 60), ("lk_t05", 0), ("dq_t02", 0), ("lk_t02", 120),
                   ("dq_t02", 0), ("lk_t02", 0), ("dq_t02", 0), ("lk_t02", 120),
                   ("lk_t02", 120), ("lk_t02", 240), ("lk_t02", 240), ("lk_t02", 0),
                   ("lk_t02", 0), ("dq_t05", 16), ("dq_t05", 40), ("lk_t06", 30)]
    # lk_t02's every-candidate stages: TREC-DL-NF first, then ANTIQUE, then both with the
    # refppl row (the two-dataset table), then more ANTIQUE questions, then both with the
    # refppl row on them (the committed table), then every judgeable ANTIQUE question, then
    # both with the refppl row at every judgeable question
    every = [s for a, s in steps if a == "lk_t02" and s.get("max_candidates") == 0]
    assert [s.get("datasets") for s in every] == ["trec-dl-nf", "antique", None, "antique", None,
                                                  "antique", None]
    assert [s.get("refppl_lm") for s in every] == ["none", "none", None, "none", None, "none",
                                                   None]
    assert [s["limit"] for s in every] == [0, 120, 120, 240, 240, 0, 0]
    assert every[-3] == evidence._EVERY_BOTH
    assert every[-1] == {**evidence._EVERY_BOTH, "limit": 0}
    assert all("pairwise-release" in s["judge_rows"] for s in every)
    # dq_t02's last two stages: P.D. with the judge's model on 40 questions, then on all
    assert [s.get("pd_judge_limit") for a, s in steps if a == "dq_t02"] == [None, None, 40, 0]
    # every stage of the whole plan is scheduled once
    whole = evidence.schedule([a for a, _ in evidence.PLAN])
    assert len(whole) == sum(len(evidence.STAGES.get(a, ({},))) for a, _ in evidence.PLAN)


def test_questions_a_stage_covers_are_capped_per_dataset():
    assert evidence.questions("lk_t02", {"limit": 60}) == 60 + 53
    assert evidence.questions("lk_t02", {"limit": 0}) == 345 + 53
    assert evidence.questions("lk_t02", {"limit": 0, "datasets": "trec-dl-nf"}) == 53
    assert evidence.questions("lk_t02", {"limit": 120, "datasets": "antique"}) == 120
    assert evidence.questions("lk_t05", {"limit": 0}) == 100
    assert evidence.questions("dq_t03", {}) is None
    assert evidence.questions("nope", {"limit": 3}) is None


def _log(artefact, stage, q, wall, items):
    return {"artefact": artefact, "stage": evidence._stage_text(stage), "questions": str(q),
            "wall_s": str(wall), "items_computed": str(items), "finished": "x"}


def test_projection_scales_the_last_logged_stage_by_the_questions_a_step_adds():
    steps = evidence.schedule(["lk_t02", "lk_t05"])
    log = [_log("lk_t02", {"limit": 30, **evidence._EIGHT}, 60, 6000.0, 100),
           _log("lk_t02", {"limit": 60, **evidence._EIGHT}, 113, 5300.0, 90)]
    rows = {(r["artefact"], r["stage"].get("limit")): r for r in evidence.projection(steps, log)
            if r["stage"].get("max_candidates") != 0}
    assert rows["lk_t02", 30]["done"] and rows["lk_t02", 60]["done"]
    # 100 s per question (5,300 s for the 53 questions stage 60 added); 120 adds 60 more
    assert rows["lk_t02", 120]["projected_s"] == pytest.approx(6000.0)
    assert rows["lk_t05", 40]["projected_s"] is None  # nothing of lk_t05 logged
    # a later stage is projected from the projection of the earlier one
    log = [_log("lk_t05", {"limit": 40, **evidence._J}, 40, 400.0, 10)]
    rows = evidence.projection(evidence.schedule(["lk_t05"]), log)
    assert rows[0]["done"] and rows[1]["projected_s"] == pytest.approx(600.0)
    # an every-candidate stage: the 8-candidate rate times the candidates per question over 8,
    # on the questions it adds to the earlier every-candidate stages of its datasets
    rows = {(r["artefact"], r["stage"].get("limit"), r["stage"].get("datasets")): r
            for r in evidence.projection(steps, [_log("lk_t02", {"limit": 30, **evidence._EIGHT}, 60, 6000.0, 100),
                                                 _log("lk_t02", {"limit": 60, **evidence._EIGHT}, 113, 5300.0, 90)],
                                         speedup=lambda dtype: None)
            if r["stage"].get("max_candidates") == 0}
    factor = {d: evidence.CANDIDATES[d] / 8 for d in evidence.CANDIDATES}
    assert rows["lk_t02", 0, "trec-dl-nf"]["projected_s"] == pytest.approx(
        100.0 * factor["trec-dl-nf"] * 53)
    assert rows["lk_t02", 120, "antique"]["projected_s"] == pytest.approx(
        100.0 * factor["antique"] * 120)
    assert rows["lk_t02", 240, "antique"]["projected_s"] == pytest.approx(
        100.0 * factor["antique"] * 120)
    # the stage on both datasets adds only the refppl row: not projected, and it says why
    both = rows["lk_t02", 120, None]
    assert both["projected_s"] is None and "refppl" in both["why"]
    # a rerun that computed nothing gives no rate
    rows = evidence.projection(steps, [_log("lk_t02", {"limit": 30, **evidence._EIGHT}, 60, 74.0, 0)])
    assert rows[0]["done"] and rows[1]["projected_s"] is None


def test_the_cost_table_has_a_row_per_finished_stage_and_the_totals_per_cpu():
    row = {"commit": "0123456789abcdef", "item_s": "1800", "finished": "2026-01-01T10:00Z"}
    log = [{**_log("lk_t05", {"limit": 40, **evidence._J}, 40, 3600.0, 10), **row,
            "machine": "x86_64/avx2"},
           {**_log("lk_t05", {"limit": 0, **evidence._J}, 100, 7200.0, 20), **row,
            "machine": "x86_64/avx2", "finished": ""},  # only started: no cost yet
           {**_log("dq_t03", {}, "", 36.0, 0), **row, "item_s": "0", "machine": "x86_64/amx"}]
    text = evidence.cost_table(log)
    rows = [line for line in text.splitlines() if line.startswith("| 2026")]
    assert rows == [
        "| 2026-01-01 10:00Z | lk_t05 | `judge=1.5B limit=40` | 40 | 10 | 0.50 | 1.00 | "
        "`x86_64/avx2` | `0123456789` |",
        "| 2026-01-01 10:00Z | dq_t03 | `defaults` | - | 0 | 0.00 | 0.01 | `x86_64/amx` | "
        "`0123456789` |"]
    assert "2 finished stages: 10 items in 0.5 item-hours (per CPU: `x86_64/avx2` 0.5; " \
           "`x86_64/amx` 0.0)" in text
    assert evidence.cost_table([]) == "No stage has finished yet.\n"


def test_a_finished_stage_rewrites_the_cost_table_of_the_page(tmp_path, capsys):
    """docs/results/evidence_stages.md's cost table is generated from the log; a stage that
    finishes rewrites it, so the page is never stale (a test checks the generated blocks)."""
    log = tmp_path / "stages.csv"
    row = {"commit": "0123456789abcdef", "item_s": "1800", "finished": "2026-01-01T10:00Z",
           "machine": "x86_64/avx2"}
    evidence._append_log(log, {**_log("lk_t05", {"limit": 40, **evidence._J}, 40, 3600.0, 10),
                               **row})
    page = tmp_path / "evidence_stages.md"
    page.write_text("intro\n<!-- BEGIN stages -->\nold\n<!-- END stages -->\nrest\n")
    assert evidence.refresh_cost_page(log, page)
    text = page.read_text()
    assert "old" not in text and "| lk_t05 |" in text and text.endswith("rest\n")
    assert not evidence.refresh_cost_page(log, page)  # current: unchanged
    bare = tmp_path / "bare.md"
    bare.write_text("no block here\n")
    assert not evidence.refresh_cost_page(log, bare) and bare.read_text() == "no block here\n"
    assert "not updated" in capsys.readouterr().out
    # the page a finished stage rewrites is the one `make readme` writes the block to
    from nfeval_repro.readme import PAGES

    assert [name for name, blocks in PAGES.items() if "stages" in blocks] == [
        evidence.COST_PAGE.relative_to(ROOT).as_posix()] == ["docs/results/evidence_stages.md"]
    assert "<!-- BEGIN stages -->" in evidence.COST_PAGE.read_text(encoding="utf-8")


def test_a_run_skips_the_stages_its_log_holds_and_says_so(tmp_path, monkeypatch, capsys):
    import papermill as pm

    results = tmp_path / "results"
    for a, stage in evidence.schedule(["lk_t05"]):
        evidence._append_log(results / evidence.LOG,
                             {**_log(a, stage, 1, 1.0, 1), "finished": "x",
                              "stored_items": "0"})

    def refuse(*args, **kwargs):
        raise AssertionError("a logged stage was run again")

    monkeypatch.setattr(pm, "execute_notebook", refuse)
    evidence.run(["lk_t05"], tmp_path)
    assert capsys.readouterr().out.count("skipped") == 2


def test_a_logged_stage_whose_items_were_deleted_is_run_again(tmp_path, monkeypatch, capsys):
    import papermill as pm

    store = tmp_path / "store"
    monkeypatch.setenv("NFEVAL_STORE", str(store))
    stage = {"limit": 40}
    evidence._append_log(tmp_path / "results" / evidence.LOG,
                         {**_log("lk_t05", stage, 40, 1.0, 3), "stored_items": "3"})
    _write(store, "lk_t05", "judge.labels.jsonl", [("a", "m", 1.0)])  # 2 of 3 deleted
    ran = []
    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: ran.append(1))
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": (stage,)})
    assert ran and "holds 2 fewer of lk_t05's items" in capsys.readouterr().out
    # with every item back, the logged stage is done again
    _write(store, "lk_t05", "judge.labels.jsonl", [("a", "m", 1.0), ("b", "m", 1.0),
                                                   ("c", "m", 1.0)])
    ran.clear()
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": (stage,)})
    assert not ran


def test_a_logged_stage_without_its_item_count_is_not_trusted_until_backfilled(
        tmp_path, monkeypatch, capsys):
    import papermill as pm

    store = tmp_path / "store"
    monkeypatch.setenv("NFEVAL_STORE", str(store))
    stage = {"limit": 40}
    log = tmp_path / "results" / evidence.LOG
    evidence._append_log(log, _log("lk_t05", stage, 40, 1.0, 3))  # finished, no stored_items
    _write(store, "lk_t05", "judge.labels.jsonl", [("a", "m", 1.0), ("b", "m", 2.0)])
    ran = []
    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: ran.append(1))
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": (stage,)})
    assert ran and "without the count of items" in capsys.readouterr().out
    # the backfill records the store's count; then a deleted item is seen
    log.unlink()
    evidence._append_log(log, _log("lk_t05", stage, 40, 1.0, 3))
    assert evidence.backfill(log, store) == 1
    assert evidence.read_log(log)[0]["stored_items"] == "2"
    assert evidence.backfill(log, store) == 0
    _write(store, "lk_t05", "judge.labels.jsonl", [("a", "m", 1.0)])
    ran.clear()
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": (stage,)})
    assert ran and "holds 1 fewer of lk_t05's items" in capsys.readouterr().out


def test_the_committed_log_has_an_item_count_on_every_finished_stage():
    rows = [r for r in evidence.read_log(evidence.RESULTS / evidence.LOG) if r["finished"]]
    assert rows and all(r["stored_items"].strip() for r in rows)


def test_a_finished_stage_is_logged_with_its_real_cost(tmp_path, monkeypatch):
    import papermill as pm

    store = tmp_path / "store"
    monkeypatch.setenv("NFEVAL_STORE", str(store))
    _write(store, "lk_t05", "judge.labels.jsonl", [("old", "m", 9.0)])

    def fake(*args, **kwargs):  # the notebook computes two items
        _write(store, "lk_t05", "judge.labels.jsonl",
               [("old", "m", 9.0), ("a", "m", 2.5), ("b", "m", 1.5)])

    monkeypatch.setattr(pm, "execute_notebook", fake)
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": ({"limit": 40},)})
    start, row = evidence.read_log(tmp_path / "results" / evidence.LOG)
    assert (start["finished"], start["stored_items"], start["stored_s"]) == ("", "1", "9.0")
    assert (row["artefact"], row["stage"], row["questions"], row["items_computed"],
            row["item_s"], row["stored_items"]) == ("lk_t05", '{"limit": 40}', "40", "2", "4.0", "3")
    assert float(row["wall_s"]) >= 0 and row["machine"] and row["commit"]
    assert row["started"] == start["started"] and row["finished"]


def test_a_run_with_set_parameters_is_no_stage_of_the_plan_and_is_not_logged(tmp_path, monkeypatch,
                                                                             capsys):
    """``--set`` (``overrides``) runs other parameters than the plan's: logging them would put
    rows of another judge into the plan's cost log (a test's Ctrl-C run once did)."""
    import papermill as pm

    store = tmp_path / "store"
    monkeypatch.setenv("NFEVAL_STORE", str(store))

    def fake(*args, **kwargs):
        _write(store, "lk_t05", "judge.labels.jsonl", [("a", "m", 2.5)])

    monkeypatch.setattr(pm, "execute_notebook", fake)
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": ({"limit": 40},)},
                 overrides={"judge": "smollm2-135m-instruct"})
    assert not (tmp_path / "results" / evidence.LOG).exists()
    assert "1 items computed" in capsys.readouterr().out


def test_a_stage_resumed_after_a_kill_counts_its_items_since_its_first_start(tmp_path, monkeypatch):
    """A stage spanning killed runs: its cost is every item added since it first started, not
    only those of the run that finished it; an older log without the start columns is kept."""
    import papermill as pm

    store, results = tmp_path / "store", tmp_path / "results"
    monkeypatch.setenv("NFEVAL_STORE", str(store))
    log = results / evidence.LOG
    log.parent.mkdir(parents=True)
    log.write_text("finished,artefact,stage,questions,wall_s,items_computed,item_s,machine,"
                   'commit\n2026-01-01T00:00Z,lk_t02,"{""limit"": 30}",60,79.0,0,0,m,c\n')
    _write(store, "lk_t05", "j.labels.jsonl", [("old", "m", 9.0)])

    def killed(*args, **kwargs):  # computes one item, then the run is killed
        _write(store, "lk_t05", "j.labels.jsonl", [("old", "m", 9.0), ("a", "m", 30.0)])
        raise KeyboardInterrupt

    monkeypatch.setattr(pm, "execute_notebook", killed)
    with pytest.raises(KeyboardInterrupt):
        evidence.run(["lk_t05"], tmp_path, {"lk_t05": ({"limit": 40},)})

    def finish(*args, **kwargs):
        _write(store, "lk_t05", "j.labels.jsonl",
               [("old", "m", 9.0), ("a", "m", 30.0), ("b", "m", 2.0)])

    monkeypatch.setattr(pm, "execute_notebook", finish)
    evidence.run(["lk_t05"], tmp_path, {"lk_t05": ({"limit": 40},)})
    old, start, row = evidence.read_log(log)
    assert (old["artefact"], old["wall_s"], old["started"]) == ("lk_t02", "79.0", "")
    assert not start["finished"] and row["started"] == start["started"]
    assert (row["items_computed"], row["item_s"]) == ("2", "32.0")
    # the projection takes the item seconds where they exceed the finishing run's wall
    steps = [("lk_t05", {"limit": 40}), ("lk_t05", {"limit": 80})]
    rows = evidence.projection(steps, evidence.read_log(log))
    assert rows[0]["done"] and rows[1]["projected_s"] == pytest.approx(32.0)


def test_a_failed_notebook_skips_its_artefact_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    import papermill as pm

    ran = []

    def fake(path, *args, **kwargs):
        ran.append(path)
        if "webglm" in path:
            raise RuntimeError("boom\nValueError: the judge is missing")

    monkeypatch.setenv("NFEVAL_STORE", str(tmp_path / "store"))
    monkeypatch.setattr(pm, "execute_notebook", fake)
    with pytest.raises(evidence.StagesFailed) as err:
        evidence.run(["lk_t05", "dq_t05"], tmp_path)
    assert list(err.value.failed) == ["lk_t05"] and "judge is missing" in err.value.failed["lk_t05"]
    # lk_t05's second stage is skipped, dq_t05 still runs and is logged
    assert sum("webglm" in p for p in ran) == 1 and any("dq_t05" in p for p in ran)
    rows = evidence.read_log(tmp_path / "results" / evidence.LOG)
    assert [r["artefact"] for r in rows if r["finished"]] == ["dq_t05", "dq_t05"]  # 16, 40
    assert "the run goes on" in capsys.readouterr().err


def test_the_command_exits_1_naming_the_failed_artefacts(monkeypatch, capsys):
    def fail(ids, **kwargs):
        raise evidence.StagesFailed({"lk_t05": "{'limit': 40}: no judge"})

    monkeypatch.setattr(evidence, "run", fail)
    assert evidence.main(["lk_t05"]) == 1
    err = capsys.readouterr().err
    assert "1 artefact(s) failed" in err and "lk_t05 {'limit': 40}: no judge" in err


def test_a_stage_in_another_dtype_is_projected_at_its_benched_speed_up(tmp_path):
    every = {"limit": 0, "datasets": "trec-dl-nf", **evidence._EVERY}
    assert every["judge_dtype"] == "bfloat16"
    steps = [("lk_t02", {"limit": 30, **evidence._EIGHT}), ("lk_t02", every)]
    log = [_log("lk_t02", {"limit": 30, **evidence._EIGHT}, 60, 6000.0, 100)]
    at_float32 = evidence.projection(steps, log, speedup=lambda d: None)[1]
    assert at_float32["speedup"] is None
    faster = evidence.projection(steps, log, speedup=lambda d: 4.0)[1]
    assert faster["speedup"] == 4.0
    assert faster["projected_s"] == pytest.approx(at_float32["projected_s"] / 4.0)
    # the speed-up is the last judge_path row of the CPU class's LINKAGE workload
    bench = tmp_path / "bench.csv"
    bench.write_text(
        "kernel,model,workload,speedup_vs_float32\n"
        "judge_path,j/hf-bfloat16,linkage-antique-0shot-3q@x86_64/a,0.6\n"
        "judge_path,j/hf-bfloat16,da-24answers@x86_64/a,9\n"
        "judge_path,j/hf-bfloat16,linkage-antique-0shot-3q@x86_64/b,5\n"
        "judge_path,j/hf-bfloat16,linkage-antique-0shot-3q@x86_64/a,2.5\n")
    assert evidence.dtype_speedup("bfloat16", "x86_64/a", bench) == 2.5
    assert evidence.dtype_speedup("bfloat16", "x86_64/c", bench) is None
    assert evidence.dtype_speedup("float32", "x86_64/c", bench) == 1.0


def test_a_stage_on_part_of_the_datasets_writes_beside_the_committed_table(tmp_path, monkeypatch,
                                                                          capsys):
    """lk_t02's every-candidate stages score one dataset each: their tables go under
    results/evidence/parts/, never over the artefact's two-dataset table, and their items still
    go to the store the run reads (NFEVAL_STORE while the notebook runs, restored after)."""
    import os

    import papermill as pm

    assert evidence.stage_output("lk_t02", {"limit": 30}, tmp_path) == tmp_path
    assert evidence.stage_output("lk_x03", {"datasets": "antique,trec-dl-nf"}, tmp_path) \
        == tmp_path  # both datasets: the artefact's own table
    part = evidence.stage_output("lk_t02", {"datasets": "antique"}, tmp_path)
    assert part == tmp_path / "results" / "evidence" / "parts" / "lk_t02-antique"
    monkeypatch.delenv("NFEVAL_STORE", raising=False)
    seen = []

    def fake(*args, parameters, **kwargs):
        seen.append((parameters["output_dir"], os.environ.get("NFEVAL_STORE")))

    monkeypatch.setattr(pm, "execute_notebook", fake)
    evidence.run(["lk_t02"], tmp_path, {"lk_t02": ({"limit": 1},
                                                   {"limit": 1, "datasets": "trec-dl-nf"})})
    (whole, env_whole), (parted, env_part) = seen
    assert whole == str(tmp_path) and env_whole is None
    assert parted == str(tmp_path / "results" / "evidence" / "parts" / "lk_t02-trec-dl-nf")
    assert env_part == str(evidence.RESULTS)
    assert "NFEVAL_STORE" not in os.environ
    assert "its tables go to" in capsys.readouterr().out


def test_an_every_candidate_stage_is_projected_at_its_artefacts_own_every_candidate_rate():
    """Once an artefact has finished an every-candidate judge stage, a later one in the same
    dtype is projected at that stage's rate per question times candidates over 8, not at the
    8-candidate rate (which scales work that does not grow with the candidates); lk_t02's
    refppl stage computes no judge item and gives no rate."""
    trec = {"limit": 0, "datasets": "trec-dl-nf", **evidence._EVERY}
    antique = {"limit": 120, "datasets": "antique", **evidence._EVERY}
    more = {"limit": 240, "datasets": "antique", **evidence._EVERY}
    eight = [_log("lk_t02", {"limit": 30, **evidence._EIGHT}, 60, 6000.0, 100)]
    units = 53 * evidence.CANDIDATES["trec-dl-nf"] / 8
    steps = [("lk_t02", trec), ("lk_t02", antique), ("lk_t02", evidence._EVERY_BOTH_120),
             ("lk_t02", more)]
    log = [*eight, _log("lk_t02", trec, 53, 2.0 * units, 500),
           _log("lk_t02", evidence._EVERY_BOTH_120, 173, 1.0, 500)]  # refppl: no judge rate
    rows = evidence.projection(steps, log, speedup=lambda dtype: 4.0)
    assert rows[0]["done"] and rows[2]["done"]
    added = 120 * evidence.CANDIDATES["antique"] / 8
    for row in (rows[1], rows[3]):
        assert row["projected_s"] == pytest.approx(2.0 * added)
        assert "every-candidate stage" in row["why"] and row["speedup"] is None
    # another dtype measured nothing yet: the 8-candidate rate over the speed-up, as before
    other = {**antique, "judge_dtype": "float16"}
    row = evidence.projection([("lk_t02", trec), ("lk_t02", other)], log,
                              speedup=lambda dtype: 4.0)[1]
    assert row["why"] == "" and row["speedup"] == 4.0


def test_a_stage_that_adds_no_question_logs_no_every_candidate_rate():
    """A two-dataset stage that reads its datasets' every-candidate stages from the store adds
    no question: even if it computes a few items in a few seconds, its log row must not become
    the artefact's rate (it would project the next stage at almost nothing). A stage's rate is
    its cost over the questions it added, not over all it names."""
    stage = {"limit": 40, **evidence._GEN, **evidence._EVERY_GEN}
    trec, antique = ({**stage, "datasets": d} for d in ("trec-dl-nf", "antique"))
    more = {**stage, "limit": 80, "datasets": "antique"}
    units = {d: 40 * evidence.CANDIDATES[d] / 8 for d in ("trec-dl-nf", "antique")}
    log = [_log("lk_t04", trec, 40, 3.0 * units["trec-dl-nf"], 900),
           _log("lk_t04", antique, 40, 5.0 * units["antique"], 300),
           _log("lk_t04", stage, 80, 2.0, 5)]  # both datasets: 5 items, 2 s
    steps = [("lk_t04", trec), ("lk_t04", antique), ("lk_t04", stage), ("lk_t04", more)]
    rows = evidence.projection(steps, log, speedup=lambda dtype: 4.0)
    assert [r["done"] for r in rows] == [True, True, True, False]
    # the ANTIQUE stage's rate (per unit it added), for the 40 ANTIQUE questions "more" adds
    assert rows[3]["projected_s"] == pytest.approx(5.0 * units["antique"])
    assert "every-candidate stage" in rows[3]["why"]
    # the helper both loops share: the work a stage adds, dataset by dataset
    judged = {}
    assert evidence._every_work("lk_t04", trec, judged) == pytest.approx(units["trec-dl-nf"])
    assert evidence._every_work("lk_t04", stage, judged) == pytest.approx(units["antique"])
    assert evidence._every_work("lk_t04", stage, judged) == 0
