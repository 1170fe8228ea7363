"""DebateQA Equation 7: closed form against the paper's example and a simulation."""

import math

import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.eq7 import exact_perplexity_ratio, probability_ratio, simulated_probability_ratio


def test_paper_example():
    assert probability_ratio(3, -2) == pytest.approx(math.exp(2 / 3))
    assert round(probability_ratio(3, -2), 2) == 1.95


@pytest.mark.parametrize("n,delta", [(1, -1), (3, -2), (5, -0.5), (4, 1.0)])
def test_simulation_agrees_with_closed_form(n, delta):
    assert simulated_probability_ratio(n, delta, seed=7) == pytest.approx(probability_ratio(n, delta), rel=1e-9)


def test_no_change_means_ratio_one():
    assert probability_ratio(3, 0) == 1.0
    assert exact_perplexity_ratio(3, 0, 10.0) == 1.0


def test_exact_ratio_depends_on_start():
    # true perplexities 5 -> 5 - 2/3: ratio 5 / (13/3) = 15/13
    assert exact_perplexity_ratio(3, -2, 5.0) == pytest.approx(15 / 13)
    assert math.isnan(exact_perplexity_ratio(1, -6, 5.0))


def test_bad_n():
    with pytest.raises(NfevalError):
        probability_ratio(0, -1)
