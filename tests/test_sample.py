"""The project's DebateQA-format sample: complete, consistent, in the release's format."""

from nfeval.data.sample import ANSWER_SETS, load_sample


def test_sample_is_complete_and_consistent():
    s = load_sample()
    assert len(s.items) >= 40
    for item in s.items.values():
        assert 3 <= len(item.partial_answers) <= 5
        for pa in item.partial_answers:
            assert not pa.point_of_view.endswith(".")
            assert 80 <= len(pa.explanation.split()) <= 200
    for name in ANSWER_SETS:
        assert set(s.answers[name]) == set(s.items), name
    assert len(s.labels) == 4 * len(s.items)
    assert set(s.labels["label"]) == {0, 1}
    assert set(zip(s.labels["id"], s.labels["answer_set"])) == {
        (q, a) for q in s.items for a in ANSWER_SETS}


def test_limit_keeps_questions_answers_and_labels_together():
    s = load_sample().limit(5)
    assert len(s.items) == 5 and len(s.labels) == 20
    assert all(set(a) == set(s.items) for a in s.answers.values())
