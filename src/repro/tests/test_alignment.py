"""Metric alignment with human judgement (DebateQA Table 2, Figure 2) on graded answers.

Model-free: preferences, Elo and correlations are checked by hand on small
cases, the metric scores are fakes.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.agreement import pseudo_annotator_agreement, split_preferences
from nfeval_repro.debateqa.alignment import (
    AlignmentQuestion,
    alignment_table,
    elo_ranking,
    grade_preferences,
    human_rankings,
    merge_ties,
    select_questions,
)
from nfeval_repro.debateqa.alignment_scores import (
    judge_prompt,
    leave_one_out_references,
    parse_count,
    reduce_distribution,
    reference_count,
    score_acknowledge,
)
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.metrics.elo import Comparison


def _answers(grades, prefix="d"):
    return [GradedAnswer(f"{prefix}{i}", f"answer text {prefix}{i}", g, g + 1)
            for i, g in enumerate(grades)]


def _question(grades, qid="0", dataset="toy", max_answers=0):
    q = GradedQuestion(qid, f"question {qid}?", _answers(grades))
    sel = select_questions([q], dataset, max_answers=max_answers)
    assert sel.questions, sel.skipped
    return sel.questions[0]


# --------------------------------------------------------------------------- preferences

@pytest.mark.parametrize("grades,expected", [
    ({"a": 3, "b": 1, "c": 3}, [("a", "b", 1.0), ("a", "c", 0.5), ("b", "c", 0.0)]),
    ({"x": 0, "y": 2}, [("x", "y", 0.0)]),
    ({"x": 2, "y": 2}, [("x", "y", 0.5)]),
    ({"only": 3}, []),
    ({}, []),
])
def test_preferences_from_grades(grades, expected):
    got = [(c.a, c.b, c.outcome) for c in grade_preferences(grades)]
    assert got == expected


def test_every_pair_once():
    comps = grade_preferences({i: i % 3 for i in range(6)})
    assert len(comps) == 15  # 6 choose 2
    assert len({frozenset((c.a, c.b)) for c in comps}) == 15


# --------------------------------------------------------------------------- Elo

def test_elo_ranking_follows_clear_grades():
    grades = {"a": 3, "b": 2, "c": 1, "d": 0}
    elo = elo_ranking(grade_preferences(grades), list(grades), rounds=50, seed=0)
    assert sorted(elo, key=lambda p: -elo[p]) == ["a", "b", "c", "d"]
    assert sum(elo.values()) == pytest.approx(4000)  # zero-sum from 1000 each


def test_equal_grades_tie_after_merging():
    grades = {"a": 3, "b": 3, "c": 0, "d": 0}
    elo = elo_ranking(grade_preferences(grades), list(grades), rounds=200, seed=1, tie_points=1.0)
    assert elo["a"] == elo["b"] > elo["c"] == elo["d"]


def test_player_without_games_keeps_initial_rating():
    elo = elo_ranking([Comparison("a", "b", 1.0)], ["a", "b", "c"], rounds=1, tie_points=0)
    assert elo == pytest.approx({"a": 1016.0, "b": 984.0, "c": 1000.0})


def test_elo_ranking_is_seeded():
    comps = grade_preferences({"a": 2, "b": 1, "c": 1, "d": 0})
    assert elo_ranking(comps, list("abcd"), seed=4) == elo_ranking(comps, list("abcd"), seed=4)


def test_elo_ranking_rejects_unknown_players():
    with pytest.raises(NfevalError, match="not in the list"):
        elo_ranking([Comparison("a", "z", 1.0)], ["a", "b"])


@pytest.mark.parametrize("ratings,tol,expected", [
    ({"a": 10.0, "b": 10.5, "c": 20.0}, 1.0, {"a": 10.25, "b": 10.25, "c": 20.0}),
    ({"a": 10.0, "b": 10.5, "c": 20.0}, 0.0, {"a": 10.0, "b": 10.5, "c": 20.0}),
    ({"a": 1.0, "b": 1.8, "c": 2.6}, 1.0, {"a": 1.8, "b": 1.8, "c": 1.8}),  # chained
    ({"a": 1.0, "b": 3.0}, 1.0, {"a": 1.0, "b": 3.0}),
])
def test_merge_ties(ratings, tol, expected):
    assert merge_ties(ratings, tol) == pytest.approx(expected)


# --------------------------------------------------------------------------- selection

def test_selection_skips_single_grade_and_no_reference_questions():
    qs = [GradedQuestion("0", "q0", _answers([1, 1, 1])),          # one grade
          GradedQuestion("1", "q1", _answers([3, 2, 1])),          # one top answer
          GradedQuestion("2", "q2", _answers([3, 3, 2, 0])),       # usable
          GradedQuestion("3", "q3", _answers([3, 3, 1]))]
    sel = select_questions(qs, "toy", limit=1)
    assert [q.qid for q in sel.questions] == ["2"]
    assert set(sel.skipped) == {"0", "1"}
    assert "single grade" in sel.skipped["0"] and "leave-one-out" in sel.skipped["1"]
    # without the reference requirement, question 1 is usable
    free = select_questions(qs, "toy", need_references=False)
    assert [q.qid for q in free.questions] == ["1", "2", "3"]


def test_selection_caps_candidates_uniformly_at_random():
    from nfeval.data.draws import sample_candidates

    grades = [3, 3, 3, 2, 2, 1, 1, 0, 0, 0]
    q = _question(grades, max_answers=4)
    assert len(q.candidates) == 4
    # the uniform, seeded draw of LINKAGE's candidates, never picked by grade
    assert q.candidates == sample_candidates(_answers(grades), 4, 0, "0")
    assert q.candidates == _question(grades, max_answers=4).candidates  # deterministic
    assert len(q.top_answers) == 3  # the reference pool is every top answer, not only candidates
    draws = {tuple(a.doc_id for a in select_questions(
        [GradedQuestion("0", "q?", _answers(grades))], "toy", max_answers=4,
        seed=s, need_references=False).questions[0].candidates) for s in range(20)}
    assert len(draws) > 10  # other seeds, other draws


@pytest.mark.parametrize("max_answers", [-1, 1])
def test_selection_rejects_bad_caps(max_answers):
    with pytest.raises(NfevalError):
        select_questions([], "toy", max_answers=max_answers)


# --------------------------------------------------------------------------- references

@pytest.mark.parametrize("grades,max_refs,k", [
    ([3, 3, 2, 0], 3, 1),        # two top answers: each top answer keeps one
    ([3, 3, 3, 3, 1], 0, 3),     # four top answers, no cap: 3
    ([3, 3, 3, 3, 1], 2, 2),
])
def test_reference_count(grades, max_refs, k):
    assert reference_count(_question(grades), max_refs) == k


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_leave_one_out_never_includes_the_scored_answer(seed):
    q = _question([3, 3, 3, 3, 2, 1, 0])
    k = reference_count(q, 2)
    for a in q.candidates:
        refs = leave_one_out_references(q, a, k, seed)
        assert len(refs) == k
        assert a.doc_id not in {r.doc_id for r in refs}
        assert all(r.grade == q.top_grade for r in refs)
        assert refs == leave_one_out_references(q, a, k, seed)  # deterministic


def test_leave_one_out_skips_copies_of_the_answer_text():
    answers = [GradedAnswer("a", "same text", 3, 4), GradedAnswer("b", "same text", 3, 4),
               GradedAnswer("c", "other text", 3, 4), GradedAnswer("d", "low", 0, 1)]
    q = AlignmentQuestion("toy", "0", "q?", tuple(answers), tuple(answers[:3]))
    assert [r.doc_id for r in leave_one_out_references(q, answers[0], 1)] == ["c"]
    with pytest.raises(NfevalError, match="cannot take"):
        leave_one_out_references(q, answers[0], 2)


# --------------------------------------------------------------------------- correlation

def _fake_scores(questions, fn, metric):
    return pd.DataFrame([{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id,
                          "grade": a.grade, "metric": metric, "score": fn(a)}
                         for q in questions for a in q.candidates])


def _two_questions():
    return [_question([3, 3, 2, 1, 0], qid="0"), _question([3, 3, 2, 2, 0], qid="1")]


@pytest.mark.parametrize("metric,fn,expected", [
    ("g_eval", lambda a: a.grade, 1.0),            # perfect, higher is better
    ("g_eval", lambda a: -a.grade, -1.0),          # inverted
    ("pd", lambda a: 10.0 - a.grade, 1.0),         # lower P.D. is better: perfect
    ("pd", lambda a: float(a.grade), -1.0),        # inverted P.D.
])
def test_perfect_and_inverted_metrics(metric, fn, expected):
    qs = _two_questions()
    human = human_rankings(qs, rounds=200, seed=0)
    table = alignment_table(_fake_scores(qs, fn, metric), human)
    assert set(table["coefficient"]) == {"spearman", "kendall"}
    for _, row in table.iterrows():
        assert row["ours"] == pytest.approx(expected)
        assert row["n_questions"] == 2 and row["n_skipped_undefined"] == 0


def test_constant_metric_is_skipped_and_nan_scores_are_counted():
    qs = _two_questions()
    human = human_rankings(qs, seed=0)
    scores = _fake_scores(qs, lambda a: 1.0, "acknowledge")
    row = alignment_table(scores, human).iloc[0]
    assert math.isnan(row["ours"]) and row["n_questions"] == 0 and row["n_skipped_undefined"] == 2
    scores = _fake_scores(qs, lambda a: math.nan if a.doc_id == "d4" else a.grade, "num_povs")
    row = alignment_table(scores, human).iloc[0]
    assert row["ours"] == pytest.approx(1.0) and row["n_unscored"] == 2


def test_alignment_frame_negates_lower_is_better_and_keeps_the_raw_score():
    from nfeval_repro.debateqa.alignment import alignment_frame

    qs = _two_questions()
    human = human_rankings(qs, rounds=50, seed=0)
    scores = pd.concat([_fake_scores(qs, lambda a: 10.0 - a.grade, "pd"),
                        _fake_scores(qs, lambda a: float(a.grade), "g_eval")])
    frame = alignment_frame(scores, human)
    assert list(frame.columns) == ["dataset", "metric", "qid", "doc_id", "grade", "score",
                                   "raw_score"]
    pd_rows = frame[frame["metric"] == "pd"]
    assert (pd_rows["score"] == -pd_rows["raw_score"]).all()
    g = frame[frame["metric"] == "g_eval"]
    assert (g["score"] == g["raw_score"]).all()
    assert frame["grade"].tolist()[:5] == human["elo"].tolist()[:5]


def test_alignment_rows_match_the_table_and_carry_intervals():
    from nfeval_repro.debateqa.alignment import alignment_rows

    qs = [_question([3, 3, 2, 1, 0, 2], qid=str(i)) for i in range(6)]
    human = human_rankings(qs, rounds=50, seed=0)
    noisy = {a.doc_id: v for a, v in zip(qs[0].candidates, [0.3, 0.9, 0.1, 0.5, 0.2, 0.4])}
    scores = pd.concat([
        _fake_scores(qs, lambda a: 10.0 - a.grade + noisy[a.doc_id] * 3, "pd"),
        _fake_scores(qs, lambda a: noisy[a.doc_id], "g_eval"),
        _fake_scores(qs, lambda a: 1.0, "acknowledge")])
    rows = alignment_rows(scores, human, seed=0)
    table = alignment_table(scores, human)
    merged = rows.merge(table, on=["dataset", "metric", "coefficient"], suffixes=("", "_t"))
    assert len(merged) == 6
    for _, r in merged.iterrows():
        assert (math.isnan(r["ours"]) and math.isnan(r["ours_t"])) or \
            r["ours"] == pytest.approx(r["ours_t"])
        assert r["n_questions"] == r["n_questions_t"]
        assert r["n_skipped_undefined"] == r["n_skipped_undefined_t"]
    ack = rows[rows["metric"] == "acknowledge"]
    assert (ack["n_questions"] == 0).all() and (ack["n_skipped_undefined"] == 6).all()
    pd_row = rows[(rows["metric"] == "pd") & (rows["coefficient"] == "spearman")].iloc[0]
    assert pd_row["ci_low"] <= pd_row["ours"] <= pd_row["ci_high"]
    assert rows.equals(alignment_rows(scores, human, seed=0))


def test_alignment_differences_pd_minus_each_metric():
    from nfeval_repro.debateqa.alignment import alignment_differences, alignment_rows

    qs = [_question([3, 3, 2, 1, 0, 2], qid=str(i)) for i in range(5)]
    human = human_rankings(qs, rounds=50, seed=0)
    scores = pd.concat([_fake_scores(qs, lambda a: 10.0 - a.grade, "pd"),
                        _fake_scores(qs, lambda a: float(a.grade), "g_eval"),
                        _fake_scores(qs, lambda a: -float(a.grade), "num_povs")])
    diffs = alignment_differences(scores, human)
    assert diffs["metric"].unique().tolist() == ["pd - g_eval", "pd - num_povs"]
    same = diffs[diffs["metric"] == "pd - g_eval"]  # both perfect: 0, zero-width interval
    assert (same["ours"] == 0).all() and (same["ci_low"] == 0).all() and (same["ci_high"] == 0).all()
    opposite = diffs[diffs["metric"] == "pd - num_povs"]
    assert opposite["ours"].tolist() == pytest.approx([2.0, 2.0])
    assert (opposite["n_questions"] == 5).all()
    assert alignment_differences(scores[scores["metric"] != "pd"], human).empty
    assert set(alignment_rows(scores, human)["metric"]) == {"pd", "g_eval", "num_povs"}


def test_scores_without_human_ranking_are_an_error():
    qs = _two_questions()
    human = human_rankings(qs[:1])
    with pytest.raises(NfevalError, match="without a human ranking"):
        alignment_table(_fake_scores(qs, lambda a: a.grade, "g_eval"), human)


# --------------------------------------------------------------------------- agreement

def test_split_is_a_partition_and_deterministic():
    comps = grade_preferences({i: i % 4 for i in range(8)})  # 28 games
    parts = split_preferences(comps, 3, seed=5)
    assert sorted(len(p) for p in parts) == [9, 9, 10]
    flat = [c for p in parts for c in p]
    assert sorted(map(repr, flat)) == sorted(map(repr, comps))
    assert parts == split_preferences(comps, 3, seed=5)
    assert parts != split_preferences(comps, 3, seed=6)


def test_pseudo_annotators_agree_on_a_clear_case():
    # every part sees other pairs of the same grades: the orders agree clearly, not exactly
    # (each answer meets about a third of its opponents per part)
    qs = [_question([3] * 4 + [2] * 4 + [1] * 4 + [0] * 4, qid=str(i)) for i in range(3)]
    res = pseudo_annotator_agreement(qs, n_annotators=3, rounds=50, seed=0)
    assert list(res.matrix.index) == ["P1", "P2", "P3"]
    assert (res.matrix.values.diagonal() == 1).all()
    assert res.matrix.equals(res.matrix.T)
    assert res.matrix.values.min() > 0.6
    assert (res.n_used.values[~pd.DataFrame(res.matrix).eq(1).values] == 3).all()
    again = pseudo_annotator_agreement(qs, n_annotators=3, rounds=50, seed=0)
    assert again.per_question.equals(res.per_question)


def test_pseudo_annotator_agreement_needs_two_parts():
    with pytest.raises(NfevalError, match=">= 2"):
        pseudo_annotator_agreement(_two_questions(), n_annotators=1)


# --------------------------------------------------------------------------- judge helpers

@pytest.mark.parametrize("dist,how,expected", [
    ({"1": 0.5, "2": 0.5}, "expected", 1.5),
    ({"1": 0.1, "2": 0.2, "3": 0.7}, "expected", 2.6),
    ({"1": 0.1, "2": 0.2, "3": 0.7}, "argmax", 3.0),
    ({"1": 0.5, "5": 0.5}, "argmax", 1.0),  # exact tie: the lowest label
])
def test_reduce_distribution(dist, how, expected):
    assert reduce_distribution(dist, how) == pytest.approx(expected)


@pytest.mark.parametrize("text,low,high,expected", [
    ("4", 1, 5, 4.0), ("Score: 3/5", 1, 5, 3.0), ("There are 2 views.", 0, 9, 2.0),
    ("7", 1, 5, math.nan), ("none", 0, 9, math.nan), (None, 1, 5, math.nan),
])
def test_parse_count(text, low, high, expected):
    got = parse_count(text, low, high)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


@pytest.mark.parametrize("metric", ["direct_score", "g_eval", "num_povs"])
def test_judge_prompts_fill_both_slots(metric):
    p = judge_prompt(metric, "Is {answer} a slot?", "It says {question} literally.")
    assert "Is {answer} a slot?" in p and "It says {question} literally." in p
    assert "{question}" not in p.replace("It says {question} literally.", "")


def test_acknowledge_scores_are_binary():
    answers = (GradedAnswer("a", "This is a controversial topic.", 3, 4),
               GradedAnswer("b", "Use a hammer.", 0, 1))
    q = AlignmentQuestion("toy", "0", "q?", answers, ())
    assert score_acknowledge([q])["score"].tolist() == [1.0, 0.0]


@pytest.mark.parametrize("text,expected", [
    ("pd, g_eval", ["pd", "g_eval"]), ("pd,pd", ["pd"]),
])
def test_parse_metrics(text, expected):
    from nfeval_repro.debateqa.alignment import parse_metrics

    assert parse_metrics(text) == expected


@pytest.mark.parametrize("text", ["", "pd,bleu"])
def test_parse_metrics_rejects(text):
    from nfeval_repro.debateqa.alignment import parse_metrics

    with pytest.raises(NfevalError, match="metrics"):
        parse_metrics(text)


@pytest.mark.parametrize("metric,mode,variant", [
    ("direct_score", "prob", "prob-argmax"), ("g_eval", "generate", "prob-expected"),
    ("num_povs", "generate", "generate"), ("num_povs", "prob", "prob-expected"),
])
def test_judge_variant(metric, mode, variant):
    from nfeval_repro.debateqa.alignment_scores import judge_variant

    assert judge_variant(metric, mode) == variant


def test_agreement_rows_have_every_pair_and_the_minimum():
    from nfeval_repro.debateqa.agreement import agreement_rows

    qs = [_question([3, 3, 2, 2, 1, 1, 0, 0], qid=str(i)) for i in range(4)]
    res = pseudo_annotator_agreement(qs, n_annotators=3, rounds=20, seed=2)
    rows = agreement_rows(res)
    assert rows["pair"].tolist() == ["P1-P2", "P1-P3", "P2-P3", "min_pair"]
    assert rows["ours"].iloc[-1] == rows["ours"].iloc[:3].min()
    assert rows["min_of"].iloc[-1] == rows.loc[rows["ours"].iloc[:3].idxmin(), "pair"]
    assert rows["games_per_part"].tolist() == pytest.approx([28 / 3] * 4)
    assert rows["ours"].iloc[0] == pytest.approx(res.matrix.loc["P1", "P2"])
    assert (rows["n_questions"] == 4).all()
    assert ((rows["ci_low"] <= rows["ours"] + 1e-12) & (rows["ours"] <= rows["ci_high"] + 1e-12)).all()
    assert rows.equals(agreement_rows(res))  # seeded


def test_agreement_rows_one_question_has_no_interval():
    from nfeval_repro.debateqa.agreement import agreement_rows

    res = pseudo_annotator_agreement([_question([3, 3, 2, 2, 1, 1, 0, 0])], n_annotators=2,
                                     rounds=20, seed=0)
    row = agreement_rows(res).iloc[0]
    assert row["n_questions"] == 1 and math.isnan(row["ci_low"]) and not math.isnan(row["ours"])


# --------------------------------------------------------------------------- tiny model (seconds)

def _tiny_question():
    texts = ["Animal research saves lives.", "Animal research is cruel.",
             "Alternatives exist.", "Voting should be mandatory."]
    grades = [3, 3, 3, 0]
    answers = tuple(GradedAnswer(f"d{i}", t, g, g + 1)
                    for i, (t, g) in enumerate(zip(texts, grades)))
    return AlignmentQuestion("toy", "0", "Is animal research right?", answers, answers[:3])


def test_shared_prefix_distributions_equal_per_prompt_ones(tiny_gpt2):
    from nfeval_repro.debateqa.alignment_scores import label_distributions
    from nfeval.models.base import normalize

    labels = ["1", "2", "3", "4", "5"]
    q = _tiny_question()
    prompts = [judge_prompt("g_eval", q.question, a.text) for a in q.candidates]
    got = label_distributions(tiny_gpt2, prompts, labels)
    for p, (dist, mass) in zip(prompts, got):
        want = normalize(tiny_gpt2.label_logprobs(p, labels))
        assert dist == pytest.approx(want, abs=1e-5)
        assert 0 < mass <= 1


def test_score_pd_and_judge_on_a_tiny_model(tiny_gpt2):
    from nfeval_repro.debateqa.alignment_scores import score_judge, score_pd

    q = _tiny_question()
    pd_rows = score_pd(tiny_gpt2, [q], max_references=2, use_cache=False, progress=False)
    assert pd_rows["n_references"].tolist() == [2, 2, 2, 2]
    for _, row in pd_rows.iterrows():
        assert row["doc_id"] not in row["references"].split(";")
        assert row["score"] > 0
    judged = score_judge(tiny_gpt2, [q], "num_povs", use_cache=False, progress=False)
    assert judged["score"].between(0, 9).all() and len(judged) == 4
