"""LINKAGE follow-up tables (3, 4, 6, 7-8, 9-10, Figure 3): items, frames, comparisons."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval_repro.linkage.evaluation import JudgeSample, judge_sample
from nfeval.linkage.generated import GeneratedReferences
from nfeval.linkage.judges import JudgeConfig, Judgment, QuestionScores
from nfeval.linkage.references import ReferenceSplit, sample_references
from nfeval_repro.linkage.follow_up import (
    ITEM_COLUMNS,
    judge_setting,
    references_among,
    results_frame,
    single_ground_truth,
    with_paper,
)
from nfeval_repro.linkage.same_items import JudgeCall
from nfeval.models.base import LanguageModel, ModelInfo


def _q(qid="q", grades=(3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 2, 1, 0, 3)):
    return GradedQuestion(qid, f"question {qid}?",
                          [GradedAnswer(f"{qid}-d{i}", f"answer {i} of {qid}", g, g)
                           for i, g in enumerate(grades)])


# --------------------------------------------------------------------------- settings

@pytest.mark.parametrize("pattern", ["3210", "33221100", "33321000", "32221110"])
def test_references_among_keeps_candidates_and_never_draws_them(pattern):
    q = _q()
    cands = q.answers[::3]  # 6 answers, grades 3, 2, 1, 0, 2, 0... fixed
    s = references_among(q, cands, pattern, seed=0)
    assert s.candidates == tuple(cands)
    assert not {a.doc_id for a in s.references} & {a.doc_id for a in cands}
    assert s.qid == "q" and s.pattern == pattern
    assert s == references_among(q, cands, pattern, seed=0)  # seeded
    # within the other answers, the draw is sample_references' draw
    others = GradedQuestion("q", q.question, [a for a in q.answers if a not in cands])
    assert s.references == sample_references(others, pattern, 0, allow_short=True).references


def test_references_among_short_grades_and_other_seeds():
    q = _q(grades=(3, 2, 1, 0, 0, 3, 2))
    cands = [q.answers[0], q.answers[4]]  # a grade 3 and a grade 0 are candidates
    s = references_among(q, cands, "33221100", seed=0)
    assert s.reference_grades == (3, 2, 2, 1, 0) and s.missing == (3, 1, 0)
    assert not s.complete
    seeds = {references_among(_q(), _q().answers[:2], "3210", seed=k).references
             for k in range(6)}
    assert len(seeds) > 1  # other seeds, other lists
    with pytest.raises(NfevalError):
        references_among(q, [], "3210", 0)


def test_single_ground_truth_is_a_top_grade_non_candidate():
    q = _q(grades=(3, 3, 3, 2, 1, 0))
    cands = [q.answers[0], q.answers[3], q.answers[5]]
    drawn = {single_ground_truth(q, cands, seed=k).doc_id for k in range(20)}
    assert drawn == {"q-d1", "q-d2"}  # the two grade-3 answers that are not candidates
    assert single_ground_truth(q, cands, 0) == single_ground_truth(q, cands, 0)
    low = _q(grades=(3, 1, 1, 0))
    assert single_ground_truth(low, [low.answers[0]], 0).grade == 1  # top of what is left
    with pytest.raises(NfevalError, match="every answer"):
        single_ground_truth(low, low.answers, 0)


def _split(qid, grades):
    cands = tuple(GradedAnswer(f"{qid}-c{i}", f"c {i}", g, g) for i, g in enumerate(grades))
    return ReferenceSplit(qid, "3210", 0, (), cands)


def test_results_frame_rows_and_unparsed_counts():
    s1, s2 = _split("a", [3, 2, 1]), _split("b", [0, 2])
    r1 = QuestionScores("a", JudgeConfig(method="pairwise"), [0.9, 0.5, math.nan],
                        [Judgment(0, 1.0, True, reference=0), Judgment(0, 1.0, True, reference=1),
                         Judgment(1, 0.5, True, reference=0), Judgment(2, math.nan, False, reference=0),
                         Judgment(2, math.nan, False, reference=1)])
    r2 = QuestionScores("b", JudgeConfig(), [-2.0, -1.0], [Judgment(0, 2, True), Judgment(1, 1, True)])
    f = results_frame([r1, r2], [s1, s2], ids={"dataset": "x", "shots": 3}, our_judge="j")
    assert list(f.columns) == ["dataset", "shots", *ITEM_COLUMNS]
    assert f["qid"].tolist() == ["a", "a", "a", "b", "b"]
    assert f["grade"].tolist() == [3, 2, 1, 0, 2]
    assert f["unparsed"].tolist() == [0, 0, 2, 0, 0]
    assert (f["dataset"] == "x").all() and (f["our_judge"] == "j").all()
    with pytest.raises(NfevalError, match="scores for"):
        results_frame([r1], [_split("a", [3, 2])], ids={})


class LengthJudge(LanguageModel):
    """Prefers the higher labels the longer the prompt's last line; counts prompts scored."""

    info = ModelInfo(name="length-judge", backend="test", source="test", chat_template="model")

    def __init__(self):
        self.prompts = []

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        self.prompts.append(prompt)
        size = len(prompt) % 7
        return {lab: -abs(i - size) for i, lab in enumerate(labels)}

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, **kw):
        raise NotImplementedError

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"


def _dataset(n=6):
    return [_q(f"q{i}", (3, 3, 2, 2, 1, 1, 0, 0, 3, 2, 1, 0, 2, 1)) for i in range(n)]


@pytest.mark.parametrize("method,shots", [("linkage", 0), ("linkage", 2), ("pointwise", 0),
                                          ("pairwise", 0), ("pointwise-ref-graded", 0)])
def test_judge_setting_frame_and_signature(method, shots):
    qs = _dataset()
    items = judge_sample(qs, "3210", seed=0, limit=3, max_candidates=4)
    judge = LengthJudge()
    call = JudgeCall(mode="prob", seed=0, shots=shots)
    frame, sig = judge_setting(judge, qs, items.judged, method=method, call=call,
                               demonstration_splits=items.splits,
                               ids={"dataset": "toy", "method": "row"})
    assert len(frame) == 12 and list(frame.columns) == ["dataset", "method", *ITEM_COLUMNS]
    assert frame["score"].notna().all() and (frame["unparsed"] == 0).all()
    assert sig.metric == "linkage-judge/row" and sig.n == 3 and sig.extra["shots"] == shots
    assert sig.extra["candidates"] == 12 and sig.extra["dataset"] == "toy"
    again, _ = judge_setting(judge, qs, items.judged, method=method, call=call,
                             demonstration_splits=items.splits,
                             ids={"dataset": "toy", "method": "row"})
    pd.testing.assert_frame_equal(frame, again)


def test_with_paper_repeats_per_judge_and_checks_the_interval():
    ours = pd.DataFrame({"dataset": ["a", "a", "b"], "pattern": ["3210", "33221100", "3210"],
                         "coefficient": ["kendall"] * 3, "ours": [0.3, 0.2, 0.1],
                         "ci_low": [0.25, 0.1, math.nan], "ci_high": [0.35, 0.15, math.nan]})
    paper = pd.DataFrame({"dataset": ["a", "a", "a"], "pattern": [3210, 3210, 33221100],
                          "judge": ["mistral", "chatgpt", "mistral"],
                          "coefficient": ["kendall"] * 3, "paper": [0.3, 0.5, 0.2]})
    out = with_paper(ours, paper, on=["dataset", "pattern", "coefficient"])
    assert out["judge"].tolist() == ["mistral", "chatgpt", "mistral", ""]
    assert out["paper_in_ci"].tolist() == ["yes", "no", "no", ""]
    assert out["gap"].iloc[1] == pytest.approx(-0.2) and math.isnan(out["gap"].iloc[3])
    one = with_paper(ours, paper[paper["judge"] == "mistral"].drop(columns="judge"),
                     on=["dataset", "pattern", "coefficient"], judge="mistral")
    assert one["judge"].tolist() == ["mistral", "mistral", ""]


# --------------------------------------------------------------------------- Tables 3-4

def test_tables3_4_ground_truths_generated_splits_and_pairs():
    from nfeval_repro.linkage.generated_lists import (comparisons, generated_splits,
                                                      ground_truths, references_frame)

    qs = _dataset(4)
    items = judge_sample(qs, "3210", seed=0, limit=3, max_candidates=4)
    gts = ground_truths(qs, items.judged, seed=0)
    for s in items.judged:
        assert gts[s.qid].grade == 3 and gts[s.qid] not in s.candidates
    ok = GeneratedReferences(items.judged[0].qid, "1gt", "gold", {2: "b", 1: "c"}, {3: "m"})
    failed = GeneratedReferences(items.judged[1].qid, "1gt", "", {}, {})
    gen = generated_splits(qs, items.judged, [ok, failed], seed=0)
    assert len(gen) == 1 and gen[0].candidates == items.judged[0].candidates
    assert gen[0].reference_grades == (3, 2, 1) and gen[0].missing == (0,)
    pairs = comparisons("1gt")
    assert ("linkage-0shot", "pointwise-noref") in pairs and ("linkage-fewshot", "pairwise") in pairs
    assert ("linkage-0shot", "linkage-0shot-human") in pairs
    assert comparisons("0gt") == [("linkage-0shot", "pointwise-noref"),
                                  ("linkage-fewshot", "pointwise-noref"),
                                  ("linkage-0shot", "linkage-0shot-human"),
                                  ("linkage-fewshot", "linkage-fewshot-human")]
    refs = references_frame([ok, failed], dataset="d", ground_texts={ok.qid: "gt"})
    assert refs["grade"].tolist()[:3] == [3, 2, 1] and len(refs) == 4
    assert refs["ground_truth"].iloc[0] == "gt" and refs["missing"].iloc[3] == "3210"


# --------------------------------------------------------------------------- Tables 6-8

def test_tables6_8_pattern_splits_share_candidates():
    from nfeval_repro.linkage.list_settings import (PATTERNS, composition_pairs,
                                                      demonstration_pool, pattern_splits,
                                                      shot_pairs)

    qs = _dataset()
    items = judge_sample(qs, "3210", seed=0, limit=3, max_candidates=4)
    out = pattern_splits(qs, items.judged, "trec-dl-nf", PATTERNS, seed=0)
    assert out["3210"] == items.judged  # the dataset's own pattern: lk_t02's lists
    for p in PATTERNS:
        assert [s.candidates for s in out[p]] == [s.candidates for s in items.judged]
        for s in out[p]:
            assert not set(s.references) & set(s.candidates)
    assert [s.pattern for s in out["33321000"]] == ["33321000"] * 3
    assert demonstration_pool(qs, "3210", 0) == items.splits
    assert composition_pairs(PATTERNS, "antique") == [("3210", "33221100"),
                                                      ("33321000", "33221100"),
                                                      ("32221110", "33221100")]
    assert composition_pairs(["3210"], "antique") == []
    assert shot_pairs([0, 1, 3, 5]) == [(1, 0), (3, 0), (5, 0)] and shot_pairs([1, 3]) == []


# --------------------------------------------------------------------------- Tables 9-10

def test_tables9_10_draws_keep_questions_and_candidates():
    from nfeval_repro.linkage.reference_draws import draw_splits

    qs = _dataset()
    items = judge_sample(qs, "3210", seed=0, limit=3, max_candidates=4)
    judged0, pool0 = draw_splits(qs, items, "trec-dl-nf", 0, items_seed=0)
    assert judged0 == items.judged and pool0 == items.splits
    judged1, pool1 = draw_splits(qs, items, "trec-dl-nf", 1, items_seed=0)
    assert [s.qid for s in judged1] == [s.qid for s in items.judged]
    assert [s.candidates for s in judged1] == [s.candidates for s in items.judged]
    assert [s.references for s in judged1] != [s.references for s in items.judged]
    assert all(s.seed == 1 for s in pool1) and len(pool1) == len(qs)


def _draw_frame(values):
    """values[draw][question] = scores of candidates with grades 0, 1, 2."""
    rows = []
    for d, per_q in enumerate(values, 1):
        for qi, scores in enumerate(per_q):
            rows += [{"dataset": "x", "method": "m", "draw": d, "qid": f"q{qi}", "grade": g,
                      "score": s} for g, s in zip((0, 1, 2), scores)]
    return pd.DataFrame(rows)


def test_draw_summary_mean_and_sample_std():
    from nfeval_repro.linkage.reference_draws import draw_summary

    up, down, flat = (1, 2, 3), (3, 2, 1), (1, 1, 1)
    frame = _draw_frame([[up, up], [up, down], [down, down]])  # draw means 1, 0, -1
    out = draw_summary(frame).set_index("quantity")
    assert out.loc["mean", "ours"] == pytest.approx(0.0)
    assert out.loc["std", "ours"] == pytest.approx(1.0)  # ddof 1 of (1, 0, -1)
    assert out.loc["mean", "n_questions"] == 2 and out.loc["mean", "n_draws"] == 3
    # chi-square interval of a normal sample's std, 2 degrees of freedom
    assert out.loc["std", "ci_low"] == pytest.approx(math.sqrt(2 / 7.3778), rel=1e-3)
    assert out.loc["std", "ci_high"] == pytest.approx(math.sqrt(2 / 0.050636), rel=1e-3)
    lone = draw_summary(_draw_frame([[up, flat]])).set_index("quantity")  # one draw, q1 undefined
    assert lone.loc["mean", "ours"] == pytest.approx(1.0) and lone.loc["mean", "n_questions"] == 1
    assert math.isnan(lone.loc["std", "ours"]) and math.isnan(lone.loc["std", "ci_high"])


# --------------------------------------------------------------------------- Figure 3

def test_figure3_case_item_and_rescaled():
    from nfeval_repro.linkage.figure3 import case_item, rescaled

    qs = _dataset()
    sample, split = case_item(qs, "trec-dl-nf", seed=0, max_candidates=3, question=1)
    assert isinstance(sample, JudgeSample) and split == sample.judged[1]
    with pytest.raises(NfevalError):
        case_item(qs, "trec-dl-nf", seed=0, max_candidates=3, question=-1)
    c = split.candidates
    frame = pd.DataFrame(
        [{"method": "linkage-0shot", "doc_id": a.doc_id, "grade": a.grade, "score": -1.0 - i,
          "unparsed": 0} for i, a in enumerate(c)]
        + [{"method": "refppl", "doc_id": a.doc_id, "grade": a.grade, "score": math.log(0.5),
            "unparsed": 0} for a in c])
    out = rescaled(frame, split)
    assert len(out) == 3 * len(c) and out["candidate"].tolist()[:3] == [1, 1, 1]
    human = out[out["method"] == "human"]
    assert human["ours"].tolist() == pytest.approx([10 * a.grade / 3 for a in c])
    link = out[out["method"] == "linkage-0shot"]["ours"].tolist()
    m = len(split.references)  # rank 1 of m + 1 -> 10, rank 2 -> 10 (m - 1) / m
    assert link[:2] == pytest.approx([10.0, 10.0 * (m - 1) / m])
    assert np.allclose(out[out["method"] == "refppl"]["ours"], 5.0)
