"""P.D. kernel: both variants against direct computations on a tiny GPT-2.

The tiny model (2 layers, 160-token window, random weights from a fixed
seed) and its byte-level BPE tokenizer are built by a conftest fixture, so the
official variant's arithmetic -- right truncation, diluted normaliser, mean
over partial answers, GPT-2's legacy "content + EOS" template -- can be
checked against a plain forward pass written out here.
"""

from __future__ import annotations

import math

import pytest
from testkit import TINY_TEXTS, needs, release_formula

from nfeval import NfevalError
from nfeval.debateqa.pd import pd_context, pd_score, pd_scores

torch = needs("torch")

TEXTS = TINY_TEXTS


def test_official_equals_the_release_formula(tiny_gpt2):
    answer = "Some say animal research is needed, others call it cruel."
    got = pd_score(tiny_gpt2, answer, TEXTS[:3], variant="official")
    assert got.score == pytest.approx(release_formula(tiny_gpt2, answer, TEXTS[:3]), rel=1e-5)
    assert got.truncated_tokens == 0 and got.n_partial == 3


def test_official_truncates_on_the_right_and_says_so(tiny_gpt2):
    answer = " ".join(TEXTS * 3)  # long enough that x + y exceeds the window
    got = pd_score(tiny_gpt2, answer, TEXTS[:2], variant="official")
    assert got.truncated_tokens > 0
    assert got.score == pytest.approx(release_formula(tiny_gpt2, answer, TEXTS[:2]), rel=1e-5)


def test_paper_variant_is_a_sum_of_true_perplexities(tiny_gpt2):
    answer = "Some say animal research is needed, others call it cruel."
    got = pd_score(tiny_gpt2, answer, TEXTS[:3], variant="paper")
    context = pd_context(tiny_gpt2, answer, variant="paper")
    assert context == answer + "\nPlease restate." + "<|endoftext|>"
    direct = []
    for y in TEXTS[:3]:
        x_ids = tiny_gpt2.tokenizer(context)["input_ids"]
        y_ids = tiny_gpt2.tokenizer(y)["input_ids"]
        ids = x_ids + y_ids
        with torch.no_grad():
            logp = torch.log_softmax(tiny_gpt2.model(torch.tensor([ids])).logits[0], -1)
        nll = -sum(float(logp[len(x_ids) + j - 1, t]) for j, t in enumerate(y_ids)) / len(y_ids)
        direct.append(math.exp(nll))
    assert got.perplexities == pytest.approx(direct, rel=1e-4)
    assert got.score == pytest.approx(sum(direct), rel=1e-4)


def test_both_variants_on_the_same_inputs_differ_as_documented(tiny_gpt2):
    answer = "Some say animal research is needed, others call it cruel."
    paper = pd_score(tiny_gpt2, answer, TEXTS[:3], variant="paper")
    official = pd_score(tiny_gpt2, answer, TEXTS[:3], variant="official")
    # the official value averages (not sums) and divides by all positions: far smaller
    assert official.score < paper.score / 3
    print(f"tiny GPT-2: paper P.D. {paper.score:.2f}, official {official.score:.2f}")


def test_paper_variant_keeps_scored_tokens_and_reports_cut_context(tiny_gpt2):
    answer = " ".join(TEXTS * 4)
    got = pd_score(tiny_gpt2, answer, TEXTS[:1], variant="paper")
    assert got.truncated_tokens == 0
    assert got.context_truncated_tokens > 0
    assert got.scored_tokens == len(tiny_gpt2.encode_continuation(TEXTS[0]))


def test_restate_prompt_is_a_parameter(tiny_gpt2):
    a = pd_score(tiny_gpt2, "An answer.", TEXTS[:2], restate="Please restate.")
    b = pd_score(tiny_gpt2, "An answer.", TEXTS[:2], restate="Repeat the main points.")
    assert a.score != b.score


def test_scores_follow_answer_order_and_reject_bad_input(tiny_gpt2):
    answers = {2: "Second answer.", 1: "First answer."}
    partials = {1: TEXTS[:2], 2: TEXTS[2:]}
    assert [r.id for r in pd_scores(tiny_gpt2, answers, partials, progress=False)] == [2, 1]
    with pytest.raises(NfevalError, match="no partial answers"):
        pd_scores(tiny_gpt2, {3: "x"}, partials, progress=False)
    with pytest.raises(NfevalError, match="empty"):
        pd_scores(tiny_gpt2, {1: "  "}, partials, progress=False)
    with pytest.raises(NfevalError, match="unknown P.D. variant"):
        pd_score(tiny_gpt2, "x", TEXTS[:1], variant="mean")
