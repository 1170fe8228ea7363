"""Reference sampler: pattern, order, partition, determinism, seeds, short questions."""

from __future__ import annotations

from collections import Counter

import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage import (
    DEFAULT_PATTERN,
    sample_all,
    sample_references,
    single_reference,
    usable,
)
from nfeval.linkage.references import parse_pattern


def make_question(qid: str, counts: dict[int, int]) -> GradedQuestion:
    """Answers interleaved by grade, so file order is not grade order."""
    answers = []
    left = dict(counts)
    i = 0
    while any(left.values()):
        for g in (0, 2, 3, 1):
            if left.get(g, 0):
                answers.append(GradedAnswer(f"{qid}-d{i}", f"answer {i} of grade {g}", g, g + 1))
                left[g] -= 1
                i += 1
    return GradedQuestion(qid, f"question {qid}?", answers)


RICH = make_question("q1", {3: 5, 2: 6, 1: 4, 0: 7})  # more of every grade than any pattern needs
PATTERNS = ["3210", "33221100", "33321000", "32221110"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_respected_in_order(pattern):
    split = sample_references(RICH, pattern, seed=0)
    assert "".join(str(g) for g in split.reference_grades) == pattern  # best first, as written
    assert split.complete and split.missing == ()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_references_and_candidates_partition_the_answers(pattern):
    split = sample_references(RICH, pattern, seed=3)
    refs = {a.doc_id for a in split.references}
    cands = {a.doc_id for a in split.candidates}
    assert len(refs) == len(pattern) and not refs & cands
    assert refs | cands == {a.doc_id for a in RICH.answers}
    # candidates keep the question's order
    order = [a.doc_id for a in RICH.answers if a.doc_id in cands]
    assert [a.doc_id for a in split.candidates] == order


def test_deterministic_per_seed():
    a = sample_references(RICH, "33221100", seed=7)
    b = sample_references(RICH, "33221100", seed=7)
    assert a == b


def test_seeds_give_different_draws():
    draws = {tuple(a.doc_id for a in sample_references(RICH, "33221100", seed=s).references)
             for s in (0, 1, 2)}
    assert len(draws) == 3


def test_questions_get_their_own_draws():
    # same grade layout, other qid: another stream, so (almost surely) another draw
    twin = make_question("q2", {3: 5, 2: 6, 1: 4, 0: 7})

    def positions(q: GradedQuestion) -> list[int]:
        return [q.answers.index(a) for a in sample_references(q, "33221100", 0).references]

    assert positions(RICH) != positions(twin)


def test_impossible_pattern_raises_and_is_skipped():
    short = make_question("q3", {3: 1, 2: 3, 1: 0, 0: 2})
    assert not usable(short, "3210")
    assert usable(RICH, "3210")
    with pytest.raises(NfevalError, match="grade 1: needs 1, has 0"):
        sample_references(short, "3210")
    draw = sample_all([RICH, short], "3210", seed=0)
    assert [s.qid for s in draw.splits] == ["q1"]
    assert draw.skipped == ["q3"] and draw.n_skipped == 1


def test_allow_short_takes_what_there_is():
    short = make_question("q3", {3: 1, 2: 3, 1: 0, 0: 2})
    split = sample_references(short, "33221100", seed=0, allow_short=True)
    assert split.reference_grades == (3, 2, 2, 0, 0)
    assert split.missing == (3, 1, 1) and not split.complete
    assert Counter(a.grade for a in split.candidates) == Counter({2: 1})
    draw = sample_all([RICH, short], "33221100", seed=0, allow_short=True)
    assert draw.n_skipped == 0 and draw.n_short == 1


def test_single_reference_takes_one_top_grade_answer():
    split = single_reference(RICH, seed=0)
    assert split.reference_grades == (3,) and len(split.candidates) == len(RICH.answers) - 1
    no_three = make_question("q4", {2: 2, 1: 3})
    assert single_reference(no_three, seed=0).reference_grades == (2,)
    picks = {single_reference(RICH, seed=s).references[0].doc_id for s in range(6)}
    assert len(picks) > 1


@pytest.mark.parametrize("bad", ["", "3a10", "3 2", "4321"])
def test_bad_patterns(bad):
    with pytest.raises(NfevalError, match="pattern"):
        parse_pattern(bad)


def test_defaults():
    assert DEFAULT_PATTERN == {"antique": "33221100", "trec-dl-nf": "3210"}


def test_release_counts(mirror):
    """On the real data: how many questions each paper pattern can fill exactly."""
    from nfeval.data.loaders import load_linkage

    for name, n_ok in (("antique", 167), ("trec-dl-nf", 38)):
        qs = load_linkage(name)
        draw = sample_all(qs, DEFAULT_PATTERN[name], seed=0)
        assert len(draw) == n_ok and draw.n_skipped == len(qs) - n_ok
        rich = [q for q in qs if all(n > 2 for n in q.grade_counts().values())][:20]
        for q in rich:
            draws = {tuple(a.doc_id for a in sample_references(q, "3210", s).references)
                     for s in (0, 1, 2)}
            assert len(draws) > 1


# --------------------------------------------------------------------------- candidate draws

def test_candidate_draws_are_uniform_not_by_grade():
    from nfeval.linkage.references import sample_candidates

    q = make_question("q", {3: 2, 2: 2, 1: 2, 0: 94})  # 94% grade 0
    counts = Counter()
    for seed in range(300):
        counts.update(a.grade for a in sample_candidates(q.answers, 4, seed, q.qid))
    # a uniform draw keeps the grade mix (94% grade 0); a stratified one would show 25% each
    assert counts[0] / sum(counts.values()) > 0.85


def test_candidate_draws_are_seeded_per_question_and_keep_order():
    from nfeval.linkage.references import sample_candidates

    q = make_question("q7", {3: 5, 2: 5, 1: 5, 0: 5})
    a = sample_candidates(q.answers, 6, 0, q.qid)
    assert a == sample_candidates(q.answers, 6, 0, q.qid)
    assert a != sample_candidates(q.answers, 6, 1, q.qid)
    idx = [q.answers.index(x) for x in a]
    assert idx == sorted(idx) and len(a) == 6
    assert sample_candidates(q.answers, 0, 0, q.qid) == tuple(q.answers)
    assert sample_candidates(q.answers[:3], 6, 0, q.qid) == tuple(q.answers[:3])


def test_min_grades_redraws_until_two_grades():
    from nfeval.linkage.references import sample_candidates

    q = make_question("q", {3: 1, 0: 60})
    for seed in range(20):
        assert len({a.grade for a in sample_candidates(q.answers, 3, seed, q.qid,
                                                       min_grades=2)}) == 2
    one = make_question("one", {0: 10})  # impossible: returns the first draw
    assert len(sample_candidates(one.answers, 3, 0, one.qid, min_grades=2)) == 3
