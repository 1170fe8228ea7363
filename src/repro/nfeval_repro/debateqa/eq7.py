"""Equation 7: the per-token probability ratio that a change of P.D. implies (dq_eq7)."""

from __future__ import annotations

import math

import numpy as np

from nfeval.errors import NfevalError


def probability_ratio(n: float, delta_pd: float) -> float:
    """Equation 7: per-token probability ratio implied by a P.D. change."""
    if n <= 0:
        raise NfevalError(f"n (partial answers) must be positive, got {n}")
    return math.exp(-delta_pd / n)


def simulated_probability_ratio(n: int, delta_pd: float, *, n_tokens: int = 150,
                                seed: int = 0) -> float:
    """Equation 7 checked numerically on simulated token log-probabilities.

    Draws per-token NLLs for n partial answers under answer A1, subtracts
    ``delta_pd / n`` from every token of every partial answer (so the sum of
    per-answer mean NLLs moves by exactly ``delta_pd``), recomputes both
    P.D. values from the tokens, and returns the ratio of the geometric-mean
    per-token probabilities of one partial answer under A2 and A1.
    """
    rng = np.random.default_rng(seed)
    nll_a1 = rng.gamma(shape=2.0, scale=1.5, size=(n, n_tokens)) + abs(delta_pd)
    nll_a2 = nll_a1 + delta_pd / n
    pd_a1 = nll_a1.mean(axis=1).sum()
    pd_a2 = nll_a2.mean(axis=1).sum()
    if not math.isclose(pd_a2 - pd_a1, delta_pd, rel_tol=0, abs_tol=1e-9):
        raise AssertionError("simulation did not produce the requested P.D. change")
    p_a1 = np.exp(-nll_a1[0].mean())
    p_a2 = np.exp(-nll_a2[0].mean())
    return float(p_a2 / p_a1)


def exact_perplexity_ratio(n: float, delta_pd: float, start_perplexity: float) -> float:
    """Ratio when P.D. sums true perplexities starting at ``start_perplexity`` each."""
    end = start_perplexity + delta_pd / n
    if end <= 0:
        return math.nan
    return start_perplexity / end
