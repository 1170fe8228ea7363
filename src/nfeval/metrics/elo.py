"""Elo ratings from pairwise preferences.

DebateQA (Section 4.2, Table 2) turns annotators' pairwise preferences
between model answers into Elo rankings and correlates metric rankings with
them. This is the classic sequential Elo update:

    E_a = 1 / (1 + 10 ** ((R_b - R_a) / scale))
    R_a += k * (S_a - E_a);  R_b += k * ((1 - S_a) - (1 - E_a))

with S_a = 1 (a wins), 0.5 (tie) or 0 (b wins). Sequential Elo depends on
the order of the games, so ``rounds > 1`` replays the games in ``rounds``
seeded random orders and averages the final ratings (the usual remedy); the
first round always uses the given order, so ``rounds=1`` is the plain
textbook update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence

import numpy as np

from nfeval.errors import NfevalError


@dataclass(frozen=True)
class Comparison:
    """One pairwise judgement: ``outcome`` is 1 if ``a`` is preferred, 0 if ``b``, 0.5 tie."""

    a: Hashable
    b: Hashable
    outcome: float


def _play(games: Sequence[Comparison], players: Sequence[Hashable],
          k: float, initial: float, scale: float) -> dict:
    r = {p: float(initial) for p in players}
    for g in games:
        e_a = 1.0 / (1.0 + 10.0 ** ((r[g.b] - r[g.a]) / scale))
        delta = k * (g.outcome - e_a)
        r[g.a] += delta
        r[g.b] -= delta
    return r


def elo_ratings(
    comparisons: Iterable[Comparison | tuple],
    *,
    k: float = 32.0,
    initial: float = 1000.0,
    scale: float = 400.0,
    rounds: int = 1,
    seed: int = 0,
) -> dict:
    """Final Elo rating of every player (mean over ``rounds`` orderings)."""
    games = [c if isinstance(c, Comparison) else Comparison(*c) for c in comparisons]
    for g in games:
        if g.outcome not in (0, 0.5, 1):
            raise NfevalError(f"comparison outcome must be 1, 0.5 or 0, got {g.outcome!r}")
        if g.a == g.b:
            raise NfevalError(f"a player cannot be compared with itself: {g.a!r}")
    if rounds < 1:
        raise NfevalError("rounds must be >= 1")
    players = list(dict.fromkeys(p for g in games for p in (g.a, g.b)))
    rng = np.random.default_rng(seed)
    total = {p: 0.0 for p in players}
    for i in range(rounds):
        order = games if i == 0 else [games[j] for j in rng.permutation(len(games))]
        for p, v in _play(order, players, k, initial, scale).items():
            total[p] += v
    return {p: v / rounds for p, v in total.items()}


def ranking(ratings: dict) -> list:
    """Players from best to worst (ties broken by first appearance)."""
    return sorted(ratings, key=lambda p: -ratings[p])
