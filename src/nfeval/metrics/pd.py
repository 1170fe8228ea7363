"""Perspective Diversity (DebateQA, EACL 2026): what a P.D. change means.

Equation 7 of the paper reads a change of P.D. as a change in the
probability of recovering a partial answer. With n partial answers and the
(log-)perplexity of each written as its per-token negative log-likelihood
(the paper's simplification, stated in its footnote), P.D. is the sum of the
n per-token NLLs, so a change of ``delta`` in P.D. spread evenly over the n
partial answers changes each one's per-token log-probability by
``-delta / n``. The ratio of per-token probabilities between the two answers
is therefore

    P1(A2) / P1(A1) = exp(-delta / n)

For n = 3 and delta = -2 this gives exp(2/3) = 1.948, the paper's "1.95
times". If P.D. is instead summed over true perplexities (what the metric
computes), the same ratio depends on the starting perplexity:
``ppl / (ppl + delta / n)``; :func:`exact_perplexity_ratio` gives it so the
approximation can be judged.
"""

from __future__ import annotations

import math

import numpy as np

from nfeval import NfevalError


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
