"""lk_x06 (what --guard screen costs): the cost table on frames built here, where the answer
is known: unchanged answers keep their scores, so only the changed ones move a row."""

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.linkage.lk_x06 import ROWS, cost_table, first_questions


def _own(n_questions=12, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        for i, g in enumerate(rng.integers(0, 4, 6)):
            for m in ROWS:
                rows.append({"dataset": "antique", "method": m, "qid": str(q),
                             "doc_id": f"{q}-{i}", "grade": int(g),
                             "score": float(g + rng.normal(0, 1.0))})
    return pd.DataFrame(rows)


def _screened(own, changed=()):
    items = own.drop_duplicates(["qid", "doc_id"])[["qid", "doc_id"]].assign(dataset="antique")
    items["changed"] = [d in changed for d in items["doc_id"]]
    items["reasons"] = np.where(items["changed"], "evaluator", "")
    return items


def test_nothing_changed_costs_exactly_nothing():
    own = _own()
    table = cost_table(own, own.iloc[0:0], _screened(own), guard="screen")
    assert len(table) == len(ROWS)
    assert (table["ours"] == 0).all() and (table["n_changed"] == 0).all()
    assert (table["n_questions"] == 12).all() and (table["n_answers"] == 72).all()


def test_a_changed_answer_moves_only_its_own_question():
    own = _own()
    # the guard drops one top answer of question 0 to the bottom in every row
    q0 = own[own["qid"] == "0"]
    top = q0.sort_values("grade").iloc[-1]["doc_id"]
    rejudged = own[own["doc_id"] == top].assign(score=-100.0)
    table = cost_table(own, rejudged, _screened(own, {top}), guard="screen")
    assert (table["ours"] < 0).all()
    assert (table["n_changed"] == 1).all() and (table["n_questions_changed"] == 1).all()
    assert (table["by_evaluator"] == 1).all() and (table["by_pattern"] == 0).all()
    assert table["share_changed"].iloc[0] == pytest.approx(1 / 72)


def test_a_rejudged_answer_the_table_does_not_hold_is_an_error():
    own = _own()
    stray = own.iloc[:1].assign(doc_id="nowhere")
    with pytest.raises(NfevalError, match="missing from lk_t02"):
        cost_table(own, stray, _screened(own), guard="screen")


def test_first_questions_reads_a_table_limit_of_0_as_every_question():
    # lk_t02's committed limits of 0 mean every judgeable question, not none
    assert first_questions({"antique": 0, "trec-dl-nf": 0}, 240) == {"antique": 240,
                                                                    "trec-dl-nf": 240}
    assert first_questions({"antique": 0, "trec-dl-nf": 0}, 0) == {"antique": 0,
                                                                  "trec-dl-nf": 0}
    assert first_questions({"antique": 240, "trec-dl-nf": 240}, 100) == {"antique": 100,
                                                                        "trec-dl-nf": 100}
    assert first_questions({"antique": 240, "trec-dl-nf": 53}, 0) == {"antique": 240,
                                                                     "trec-dl-nf": 53}
