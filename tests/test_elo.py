"""Elo ratings from pairwise preferences: hand-checked updates and properties."""

import pytest

from nfeval import NfevalError
from nfeval.metrics import Comparison, elo_ratings, ranking


def test_single_win_from_equal_ratings():
    # expected score 0.5 each, so the winner gains k * 0.5 = 16
    r = elo_ratings([("a", "b", 1)], k=32)
    assert r == pytest.approx({"a": 1016.0, "b": 984.0})


def test_second_game_uses_updated_ratings():
    # after a beats b: a=1016, b=984; E_b = 1 / (1 + 10**(32/400)) = 0.45398...
    r = elo_ratings([("a", "b", 1), ("b", "a", 1)], k=32)
    e_b = 1 / (1 + 10 ** (32 / 400))
    assert r["b"] == pytest.approx(984 + 32 * (1 - e_b))
    assert r["a"] + r["b"] == pytest.approx(2000)  # zero-sum


def test_tie_between_equals_changes_nothing():
    assert elo_ratings([Comparison("a", "b", 0.5)]) == pytest.approx({"a": 1000, "b": 1000})


def test_consistent_preferences_give_their_order():
    games = [(x, y, 1) for x, y in [("a", "b"), ("b", "c"), ("a", "c")]] * 5
    r = elo_ratings(games, rounds=20, seed=3)
    assert ranking(r) == ["a", "b", "c"]


def test_rounds_are_seeded():
    games = [("a", "b", 1), ("b", "c", 1), ("c", "a", 1), ("a", "c", 0.5)]
    assert elo_ratings(games, rounds=10, seed=1) == elo_ratings(games, rounds=10, seed=1)


@pytest.mark.parametrize("game,msg", [(("a", "b", 2), "outcome"), (("a", "a", 1), "itself")])
def test_bad_comparisons(game, msg):
    with pytest.raises(NfevalError, match=msg):
        elo_ratings([game])
