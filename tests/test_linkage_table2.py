"""LINKAGE Table 2's rows from a per-candidate frame: the pilot judge against every row."""

import pandas as pd
import pytest

from nfeval.linkage.experiments.table2 import FRAME_COLUMNS, table_rows


def _rows(sample, mode, method, judge, order):
    """Three questions of four candidates (grades 3, 2, 1, 0); ``order`` scores them."""
    return [{"dataset": "trec-dl-nf", "sample": sample, "mode": mode, "method": method,
             "our_judge": judge, "qid": f"q{q}", "doc_id": f"d{i}", "grade": 3 - i,
             "score": order(q, i), "unparsed": 0} for q in range(3) for i in range(4)]


def test_the_pilot_judge_is_paired_with_every_row_on_the_same_items():
    right, wrong = (lambda q, i: -i), (lambda q, i: i)
    same = (_rows("same items", "prob", "linkage-0shot", "small", wrong)
            + _rows("same items", "prob", "pointwise-noref", "small", right)
            + _rows("same items", "", "rouge1", "", wrong))
    pilot = (_rows("pilot", "prob", "linkage-0shot", "big", right)
             + _rows("pilot", "prob", "linkage-0shot", "small", wrong)
             + _rows("pilot", "prob", "pointwise-noref", "big", wrong)
             + _rows("pilot", "prob", "pointwise-noref", "small", right))
    frame = pd.DataFrame(same + pilot, columns=FRAME_COLUMNS)
    paper = pd.DataFrame(columns=["dataset", "method", "coefficient", "judge", "paper"])
    table = table_rows(frame, paper, mode="prob", judge="small", pilot_judge="big", seed=0)
    sp = table[(table["sample"] == "pilot") & (table["coefficient"] == "spearman")].set_index("method")
    assert sp.loc["linkage-0shot: big - small", "ours"] == pytest.approx(2.0)
    assert sp.loc["linkage-0shot: big - pointwise-noref", "ours"] == pytest.approx(0.0)
    assert sp.loc["linkage-0shot: big - rouge1", "ours"] == pytest.approx(2.0)
    assert (sp.loc["linkage-0shot: big - rouge1", "n_questions"] == 3
            and sp.loc["linkage-0shot: big - rouge1", "our_judge"] == "big")
    assert "linkage-0shot: big - linkage-0shot" not in sp.index  # the judge difference says it
    # a second pilot row: its judge difference, and LINKAGE against it within the pilot judge
    assert sp.loc["pointwise-noref: big - small", "ours"] == pytest.approx(-2.0)
    assert sp.loc["linkage-0shot: big - pointwise-noref: big", "ours"] == pytest.approx(2.0)
    own = sp[(sp.index == "pointwise-noref") & (sp["our_judge"] == "big")]
    assert own["ours"].tolist() == pytest.approx([-1.0])
