"""LINKAGE Table 2: its rows from a per-candidate frame (the pilot judge against every row), and
the notebook's steps."""

import pandas as pd
import pytest

from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.experiments.table2 import (
    FRAME_COLUMNS,
    bleu_pools,
    judge_frame,
    judged_items,
    pilot_frames,
    table_rows,
)
from nfeval.models.base import LanguageModel, ModelInfo, normalize


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


# -- the notebook's steps ------------------------------------------------------

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def _question(qid: str) -> GradedQuestion:
    answers = [GradedAnswer(f"{qid}-{i}", " ".join(WORDS[: 10 - i]), g, g)
               for i, g in enumerate([3, 3, 2, 2, 1, 1, 0, 0])]
    return GradedQuestion(qid, f"question {qid}?", answers)


class _ByLength(LanguageModel):
    """A judge that prefers label "1" more the longer the prompt (no model)."""

    def __init__(self, name):
        self.info = ModelInfo(name=name, backend="test", source="test")

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        return {lab: (len(prompt) / 100.0 if lab.startswith("1") else 0.0) for lab in labels}

    def label_distribution(self, prompt, labels):
        return normalize(self.label_logprobs(prompt, labels))

    def generate(self, prompt, **kwargs):
        raise NotImplementedError

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "\n".join(m.content for m in messages)


def test_pilot_frames_judge_the_first_questions_and_copy_the_default_rows(mirror):
    qs = [_question(f"q{i}") for i in range(4)]
    sample = judged_items(qs, "trec-dl-nf", seed=0, limit=0, max_candidates=3)
    default, _ = judge_frame(_ByLength("small"), qs, sample, dataset="trec-dl-nf",
                             rows=["pointwise-noref"], mode="prob", seed=0, shots=0,
                             progress=False)
    parts, sigs = pilot_frames(_ByLength("big"), qs, sample, [default], rows=["pointwise-noref"],
                               limit=2, seed=0)
    first = [s.qid for s in sample.judged[:2]]
    own, copied = parts
    assert set(own["sample"]) == set(copied["sample"]) == {"pilot"}
    assert set(own["our_judge"]) == {"big"} and set(copied["our_judge"]) == {"small"}
    assert sorted(set(own["qid"])) == sorted(set(copied["qid"])) == sorted(first)
    assert len(own) == len(copied) == sum(len(s.candidates) for s in sample.judged[:2])
    mine = default[default["qid"].isin(first)]
    assert copied["score"].tolist() == mine["score"].tolist()
    assert [s.n for s in sigs] == [2] and sigs[0].extra["sample"] == "pilot"


def test_bleu_pools_puts_bleu_beside_answer_length_on_both_pools():
    table = bleu_pools([_question(f"q{i}") for i in range(3)], seed=0, dataset="trec-dl-nf")
    assert list(table.columns) == ["kendall", "spearman", "pearson", "with_4gram_match"]
    assert set(table.index) == {(p, m) for p in ("all-but-ground", "rest")
                                for m in ("bleu", "length")}
    assert table["with_4gram_match"].between(0, 1).all()
    # longer answers have higher grades here, so length alone ranks them perfectly
    assert table.loc[("rest", "length"), "spearman"] == pytest.approx(1.0)
