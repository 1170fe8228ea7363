"""lk_x07 (manipulation families against the judges): the per-family rows and their reading
on frames built here, where the answer is known; the held-out split and the question draw."""

import numpy as np
import pandas as pd
import pytest

from nfeval_repro.linkage import lk_x04
from nfeval_repro.linkage.lk_x07 import (family_rows, held_out_families, pick_questions,
                                         summary, variants)


def _frame(lift: float, control: float, *, method: str = "linkage-0shot", guard: str = "off",
           questions: int = 3, wordings: int = 10, seed: int = 0) -> pd.DataFrame:
    """Plain scores per question; each wording's manipulation lifts the score by ``lift`` and
    its control by ``control`` (plus noise that differs between wordings)."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(questions):
        base = float(q)
        rows.append({"qid": f"q{q}", "wording": "", "family": "", "split": "", "kind": "plain",
                     "score": base, "changed": False})
        for w in range(wordings):
            noise = rng.normal(0, 0.01)
            rows.append({"qid": f"q{q}", "wording": f"w{w}", "family": "fam", "split": "test",
                         "kind": "manipulation", "score": base + lift + noise,
                         "changed": w < 3})
            rows.append({"qid": f"q{q}", "wording": f"w{w}", "family": "fam", "split": "test",
                         "kind": "control", "score": base + control + noise / 2,
                         "changed": False})
    return pd.DataFrame(rows).assign(method=method, guard=guard, dataset="antique")


def _table(*frames) -> pd.DataFrame:
    return pd.DataFrame([r for f in frames for r in family_rows(f, seed=0)])


def test_family_rows_measure_against_plain_and_control_over_wordings():
    t = _table(_frame(0.5, 0.1)).set_index("statistic")
    assert t.loc["effect", "ours"] == pytest.approx(0.5, abs=0.01)
    assert t.loc["control", "ours"] == pytest.approx(0.1, abs=0.01)
    assert t.loc["beyond control", "ours"] == pytest.approx(0.4, abs=0.01)
    assert t.loc["changed", "ours"] == pytest.approx(0.3)
    assert set(t["n_units"]) == {10} and set(t["unit"]) == {"wordings"}
    assert set(t["n_questions"]) == {3}


def test_summary_reads_a_lift_and_a_stopped_manipulation():
    lifted = _frame(0.5, 0.0, guard="off")
    stopped = _frame(0.0, 0.0, guard="screen", seed=1)
    s = summary(_table(lifted, stopped)).set_index("guard")
    assert s.loc["off", "verdict"] == "lifts the score"
    assert not s.loc["off", "inside_control_interval"]
    assert s.loc["screen", "inside_control_interval"]
    assert not s.loc["screen", "verdict"].startswith("lifts")


def test_pd_reads_lower_as_the_manipulations_aim():
    s = summary(_table(_frame(-2.0, 0.0, method="pd", guard="none"))).iloc[0]
    assert s["verdict"] == "lifts the score"  # P.D.: lower perplexity is the better score


def test_the_report_reads_the_held_out_families_only():
    corpus = lk_x04.load_corpus()
    held = held_out_families(corpus)
    assert len(held) == 6
    assert not set(held) & set(corpus.loc[corpus["split"] == "dev", "family"])


def test_variants_insert_every_wording_and_its_control():
    corpus = lk_x04.load_corpus().head(4)
    base = "First sentence here. Second sentence there. Third one ends it."
    out = variants(base, corpus)
    assert len(out) == 8
    for (wid, _, kind, text), r in zip(out, corpus.loc[corpus.index.repeat(2)].itertuples()):
        piece = r.text if kind == "manipulation" else r.control
        assert wid == r.id and piece in text
        assert text.replace(piece, "").split() == base.split()


def test_questions_are_the_screens_evaluation_questions_seeded():
    a = pick_questions("antique", seed=0, limit=3)
    assert [q[0] for q in a] == [q[0] for q in pick_questions("antique", seed=0, limit=3)]
    assert [q[0] for q in a] != [q[0] for q in pick_questions("antique", seed=1, limit=3)]
    odd = {qid for i, (qid, *_rest) in enumerate(lk_x04._questions("antique")) if i % 2 == 1}
    for qid, _, refs, cands in a:
        assert qid in odd  # the screen's thresholds were chosen on the other questions
        assert [r.grade for r in refs] == [3, 2, 1, 0] and cands


def test_a_qid_in_both_datasets_is_two_questions():
    a = _frame(0.5, 0.1, questions=2).assign(dataset="antique")
    b = _frame(0.5, 0.1, questions=2).assign(dataset="trec-dl-nf")
    b["score"] += 100.0  # another question's plain score: read against the wrong one, the
    t = _table(pd.concat([a, b], ignore_index=True)).set_index("statistic")  # effect is 50
    assert t.loc["effect", "ours"] == pytest.approx(0.5, abs=0.01)
    assert t.loc["effect", "n_questions"] == 4


def test_a_screen_that_disagrees_with_the_librarys_guard_is_refused():
    from nfeval import NfevalError
    from nfeval_repro.linkage.lk_x07 import _check_library

    text = "Boiling water makes pasta soft. It takes about ten minutes."
    row = {"qid": "q", "wording": "w", "family": "f", "kind": "manipulation", "text": text,
           "context": ["How long does pasta cook?", "About ten minutes in boiling water."]}
    _check_library([{**row, "shown": text}])  # nothing changed: nothing to check
    with pytest.raises(NfevalError, match="another text"):
        _check_library([{**row, "shown": "[removed]"}])
