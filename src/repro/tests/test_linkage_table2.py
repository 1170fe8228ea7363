"""LINKAGE Table 2: its rows from a per-candidate frame (the judge against the small judge on the
same items), and the notebook's steps."""

import pandas as pd
import pytest
from stubs import LengthJudge

from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval_repro.linkage.same_items import (
    FRAME_COLUMNS,
    JudgeCall,
    bleu_pools,
    judged_items,
    small_judge_frames,
    table_rows,
)


def _rows(sample, mode, method, judge, order):
    """Three questions of four candidates (grades 3, 2, 1, 0); ``order`` scores them."""
    return [{"dataset": "trec-dl-nf", "sample": sample, "mode": mode, "method": method,
             "our_judge": judge, "qid": f"q{q}", "doc_id": f"d{i}", "grade": 3 - i,
             "score": order(q, i), "unparsed": 0} for q in range(3) for i in range(4)]


def test_the_judge_is_paired_with_the_small_judge_on_the_same_items():
    right, wrong = (lambda q, i: -i), (lambda q, i: i)
    same = (_rows("same items", "prob", "linkage-0shot", "big", right)
            + _rows("same items", "prob", "pointwise-noref", "big", wrong)
            + _rows("same items", "", "rouge1", "", wrong))
    small = (_rows("small judge", "prob", "linkage-0shot", "small", wrong)
             + _rows("small judge", "prob", "pointwise-noref", "small", right))
    frame = pd.DataFrame(same + small, columns=FRAME_COLUMNS)
    paper = pd.DataFrame(columns=["dataset", "method", "coefficient", "judge", "paper"])
    table = table_rows(frame, paper, mode="prob", judge="big", small_judge="small", seed=0)
    sp = table[(table["sample"] == "small judge") & (table["coefficient"] == "spearman")]
    sp = sp.set_index("method")
    # per judge row: the judge minus the small judge, on the same questions
    assert sp.loc["linkage-0shot: big - small", "ours"] == pytest.approx(2.0)
    assert sp.loc["pointwise-noref: big - small", "ours"] == pytest.approx(-2.0)
    assert sp.loc["linkage-0shot: big - small", "n_questions"] == 3
    # the small judge's own rows and its LINKAGE minus its own baseline
    assert sp.loc["linkage-0shot", "ours"] == pytest.approx(-1.0)
    assert sp.loc["linkage-0shot - pointwise-noref", "ours"] == pytest.approx(-2.0)
    assert sp.loc["linkage-0shot - pointwise-noref", "our_judge"] == "small"
    # the same-items differences are the judge's only (the small judge's rows stay apart)
    same_sp = table[(table["sample"] == "same items") & (table["coefficient"] == "spearman")]
    d = same_sp.set_index("method").loc["linkage-0shot - pointwise-noref"]
    assert d["ours"] == pytest.approx(2.0) and d["our_judge"] == "big"


# -- the notebook's steps ------------------------------------------------------

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def _question(qid: str) -> GradedQuestion:
    answers = [GradedAnswer(f"{qid}-{i}", " ".join(WORDS[: 10 - i]), g, g)
               for i, g in enumerate([3, 3, 2, 2, 1, 1, 0, 0])]
    return GradedQuestion(qid, f"question {qid}?", answers)


def test_small_judge_frames_judge_every_judged_question(mirror):
    qs = [_question(f"q{i}") for i in range(4)]
    sample = judged_items(qs, "trec-dl-nf", seed=0, limit=0, max_candidates=3)
    parts, sigs = small_judge_frames(LengthJudge("small"), {"trec-dl-nf": qs},
                                     {"trec-dl-nf": sample}, rows=["pointwise-noref"],
                                     call=JudgeCall(mode="prob", seed=0, shots=0))
    (own,) = parts
    assert set(own["sample"]) == {"small judge"} and set(own["our_judge"]) == {"small"}
    assert sorted(set(own["qid"])) == sorted(s.qid for s in sample.judged)
    assert len(own) == sum(len(s.candidates) for s in sample.judged)
    assert [s.n for s in sigs] == [len(sample.judged)]
    assert sigs[0].extra["sample"] == "small judge"


def test_bleu_pools_puts_bleu_beside_answer_length_on_both_pools():
    table = bleu_pools([_question(f"q{i}") for i in range(3)], seed=0, dataset="trec-dl-nf")
    assert list(table.columns) == ["kendall", "spearman", "pearson", "with_4gram_match"]
    assert set(table.index) == {(p, m) for p in ("all-but-ground", "rest")
                                for m in ("bleu", "length")}
    assert table["with_4gram_match"].between(0, 1).all()
    # longer answers have higher grades here, so length alone ranks them perfectly
    assert table.loc[("rest", "length"), "spearman"] == pytest.approx(1.0)


def test_same_items_frames_without_a_language_model_leave_the_refppl_row_out(mirror):
    """refppl_lm 'none' (the every-candidate stages): the automatic metrics on the judged
    items, and no refppl row, signature or token count."""
    from nfeval_repro.linkage.same_items import same_items_frames

    qs = [_question(f"q{i}") for i in range(3)]
    sample = judged_items(qs, "trec-dl-nf", seed=0, limit=0, max_candidates=3)
    frames, sigs, counts = same_items_frames(None, {"trec-dl-nf": qs}, {"trec-dl-nf": sample},
                                             seed=0, max_candidates=3, embedder=None,
                                             num_layers=6, progress=False)
    methods = set(pd.concat(frames)["method"])
    assert "refppl" not in methods and {"rouge1", "rougeL", "bleu"} <= methods
    assert sigs == [] and counts == {}


def test_pairwise_with_the_candidate_first_is_set_beside_the_papers_pairwise_figure():
    """The release runs pairwise with the candidate first: that row gets the paper's pairwise
    figure, as the seeded coin's row does (and the [CLS] BERTScore the paper's BERTScore)."""
    import pandas as pd

    from nfeval_repro.linkage.same_items import paper_rows
    from nfeval_repro.tables import paper_values

    paper = paper_values("lk_t02")
    out = paper_rows(paper)
    for ours, theirs in (("pairwise-release", "pairwise"), ("bertscore-cls", "bertscore")):
        a = out[out["method"] == ours].drop(columns="method").reset_index(drop=True)
        b = paper[paper["method"] == theirs].drop(columns="method").reset_index(drop=True)
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b)
    assert len(out) == len(paper) + len(a) + len(paper[paper["method"] == "pairwise"])
