"""The LINKAGE experiment functions (nfeval_repro.linkage.<id>.run): each returns the Experiment its notebook writes."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import pytest
from stubs import LengthJudge

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion


def _experiment(name: str):
    return importlib.import_module(f"nfeval_repro.linkage.{name}")


def test_lk_t01_counts_the_first_questions(mirror):
    from nfeval_repro.linkage import lk_t01

    exp = lk_t01.run(lk_t01.Config(limit=3), progress=False)
    assert exp.id == "lk_t01" and list(exp.id_columns) == ["dataset", "statistic"]
    assert exp.interval.startswith("none: ") and not exp.parameters and not exp.frames
    assert set(exp.table["n_questions"]) == {3}
    counts = exp.table[exp.table["statistic"] == "n_questions"].set_index("dataset")["ours"]
    assert counts.to_dict() == {"antique": 3.0, "trec-dl-nf": 3.0}
    assert [s.extra["dataset"] for s in exp.signatures] == ["antique", "trec-dl-nf"]


def test_lk_t03_t04_names_its_two_artefacts():
    from nfeval_repro.linkage import lk_t03_t04

    assert lk_t03_t04.SETTINGS == {"lk_t03": ("1gt", "Table 3"), "lk_t04": ("0gt", "Table 4")}
    with pytest.raises(NfevalError, match="lk_t03"):
        lk_t03_t04.run(lk_t03_t04.Config(artefact="lk_t05"))


# --------------------------------------------------------------------------- a stub judge

WORDS = "the a of to and in is it that for on with as was by at".split()


def _question(qid: str) -> GradedQuestion:
    answers = [GradedAnswer(f"{qid}-{i}", " ".join(WORDS[: 16 - i]), g, g)
               for i, g in enumerate([3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0])]
    return GradedQuestion(qid, f"question {qid}?", answers)


@dataclass
class _Profile:
    judge: str = "profile-judge"
    judge_mode: str = "prob"
    device: str = "cpu"

    def load(self, name, **kwargs):
        return LengthJudge(name)


@pytest.fixture
def stub(monkeypatch):
    """Patch an experiment module: six synthetic questions per dataset, the stub judge."""
    questions = [_question(f"q{i}") for i in range(6)]

    def patch(module):
        monkeypatch.setattr(module, "load_linkage", lambda name: questions)
        monkeypatch.setattr(module, "get_profile", lambda name: _Profile())
        return module

    return patch


def test_lk_t06_run_on_a_stub_judge(stub):
    from nfeval_repro.linkage import lk_t06

    exp = stub(lk_t06).run(lk_t06.Config(limit=2, datasets="trec-dl-nf", patterns="3210,33221100",
                                         shots="0,1", max_candidates=3, judge=""), progress=False)
    assert exp.id == "lk_t06" and exp.interval == "questions"
    assert list(exp.table.columns) == lk_t06.COLUMNS
    assert exp.parameters == {"questions_per_dataset": 2, "max_candidates": 3,
                              "judge": "profile-judge", "judge_mode": "prob"}
    frame = exp.frames["per_candidate"]
    assert len(frame) == 2 * 2 * 2 * 3  # patterns x shots x questions x candidates
    assert set(frame["our_judge"]) == {"profile-judge"}
    means = exp.table[exp.table["kind"] == "mean"]
    assert len(means) == 2 * 2 * 3 and set(means["n_questions"]) <= {0, 1, 2}
    diffs = exp.table[exp.table["kind"] == "difference"]
    assert set(diffs["pattern"].astype(str)) == {"33221100 - 3210", "3210", "33221100"}
    assert len(exp.signatures) == 4 and list(exp.extra["timings"]["shots"]) == [0, 1, 0, 1]


def test_lk_t07_t08_run_on_a_stub_judge(stub):
    from nfeval_repro.linkage import lk_t07_t08

    config = lk_t07_t08.Config(limit=3, datasets="antique,trec-dl-nf", shots="0,1",
                               max_candidates=3, judge="named-judge")
    exp = stub(lk_t07_t08).run(config, progress=False)
    assert exp.id == "lk_t07_t08"
    assert list(exp.table.columns) == lk_t07_t08.COLUMNS
    assert exp.parameters["judge"] == "named-judge" and exp.parameters["judge_mode"] == "prob"
    assert dict(zip(exp.table["dataset"], exp.table["paper_table"])) == {
        "antique": "Table 8", "trec-dl-nf": "Table 7"}
    assert set(exp.table.loc[exp.table["kind"] == "difference", "shots"]) == {"1 - 0"}
    assert exp.extra["datasets"] == ["antique", "trec-dl-nf"] and exp.extra["shots"] == [0, 1]


def test_lk_t09_t10_f02_run_on_a_stub_judge(stub):
    from nfeval_repro.linkage import lk_t09_t10_f02

    config = lk_t09_t10_f02.Config(limit=2, datasets="trec-dl-nf", seeds="0,1", max_candidates=3,
                                   shots=1)
    exp = stub(lk_t09_t10_f02).run(config, progress=False)
    table = exp.table
    assert list(table.columns) == lk_t09_t10_f02.COLUMNS
    assert list(dict.fromkeys(table["method"])) == ["pointwise-ref", "pairwise",
                                                    "linkage-fewshot"]
    assert set(table["quantity"]) == {"spearman_draw1", "spearman_draw2", "mean", "std",
                                      "spearman_draw2 - spearman_draw1"}
    assert set(table["coefficient"]) == {"spearman"}
    assert exp.parameters["seeds"] == [0, 1]
    frame = exp.frames["per_candidate"]
    assert set(frame["draw"]) == {1, 2} and len(frame) == 3 * 2 * 2 * 3


def test_lk_t03_t04_rows_a_run_judges_and_the_comparisons_they_give():
    """1GT may add pairwise as the release runs it (the every-candidate stages' baseline);
    the comparisons follow the rows judged; an unknown row names the known ones."""
    from nfeval_repro.linkage.generated_lists import (GENERATED_ROWS, ROW_POSITIONS, comparisons,
                                                setting_rows)

    assert setting_rows("1gt") == GENERATED_ROWS["1gt"]
    rows = setting_rows("1gt", "pointwise-ref,pairwise-release,linkage-0shot,linkage-fewshot")
    assert list(rows) == ["pointwise-ref", "pairwise-release", "linkage-0shot",
                          "linkage-fewshot"]
    assert rows["pairwise-release"] == ("pairwise", 0)
    assert ROW_POSITIONS["pairwise-release"] == "release"
    pairs = comparisons("1gt", list(rows))
    assert ("linkage-fewshot", "pairwise-release") in pairs
    assert ("linkage-0shot", "pairwise") not in pairs
    assert ("linkage-0shot", "pairwise") in comparisons("1gt")
    with pytest.raises(NfevalError, match="unknown 0GT judge row pairwise-release; known: linkage-0shot"):
        setting_rows("0gt", "pairwise-release")


def test_judge_setting_puts_the_candidate_first_under_release_positions(mirror):
    """A generated-list pairwise row under ``positions`` release records it in its signature
    and its items differ from the seeded coin's."""
    from nfeval_repro.linkage.follow_up import judge_setting
    from nfeval_repro.linkage.same_items import JudgeCall, judged_items

    qs = [_question(f"q{i}") for i in range(3)]
    splits = judged_items(qs, "trec-dl-nf", seed=0, limit=0, max_candidates=3).judged
    call = JudgeCall(mode="prob", seed=0, shots=0)
    _, coin = judge_setting(LengthJudge("j"), qs, splits, method="pairwise", call=call,
                            ids={"dataset": "trec-dl-nf"})
    _, release = judge_setting(LengthJudge("j"), qs, splits, method="pairwise", call=call,
                               ids={"dataset": "trec-dl-nf"}, positions="release")
    assert coin.extra["positions"] == "random" and release.extra["positions"] == "release"
