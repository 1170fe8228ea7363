"""The evidence driver's plan and its cost projection (``python -m nfeval.evidence``)."""

import json
import math

import pytest

from nfeval import evidence


def _write(folder, artefact, name, records):
    path = folder / artefact / "items" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"k": k, "v": 0, "m": m, "s": s}) for k, m, s in records]
    path.write_text("\n".join(lines) + "\n{\"k\": \"cut", encoding="utf-8")  # a killed last line


def test_every_planned_artefact_has_a_probe_and_stages_that_are_notebook_parameters():
    import papermill as pm

    from nfeval.artefacts import by_id

    assert set(evidence.PROBE) == {a for a, _ in evidence.PLAN}
    for artefact, _ in evidence.PLAN:
        known = set(pm.inspect_notebook(str(by_id(artefact).path)))
        for stage in (evidence.PROBE[artefact], *evidence.STAGES.get(artefact, ())):
            assert set(stage) <= known, (artefact, set(stage) - known)


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
    rows = evidence.project(evidence.read_items(committed), evidence.read_items(probe))
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
    from nfeval.paths import ROOT

    assert evidence.main(["--measure", str(ROOT / "results")]) == 2
    assert "scratch folder" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["no_such_artefact"], ["--measure", "/tmp/x", "lk_t01"]])
def test_an_artefact_outside_the_plan_is_a_clear_error(argv, capsys):
    assert evidence.main(argv) == 2
    assert "unknown artefact" in capsys.readouterr().err
