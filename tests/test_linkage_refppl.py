"""Reference-recovery perplexity (the LINKAGE row beyond the paper)."""

from __future__ import annotations

import math

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.refppl import (
    refppl_context,
    refppl_correlations,
    refppl_question,
    top_references,
)
from nfeval.models.base import LanguageModel, ModelInfo, TokenLogprobs

torch = needs("torch")


def ans(doc_id, grade, text):
    return GradedAnswer(doc_id=doc_id, text=text, grade=grade, raw_label=grade)


REFS = (ans("r1", 3, "Animal research saves lives."), ans("r2", 3, "Alternatives exist."),
        ans("r3", 1, "Voting should be mandatory."))


def test_top_references_keeps_the_highest_grade_in_order():
    assert [r.doc_id for r in top_references(REFS)] == ["r1", "r2"]
    assert [r.doc_id for r in top_references(REFS[2:])] == ["r3"]
    with pytest.raises(NfevalError, match="at least one"):
        top_references([])
    with pytest.raises(NfevalError, match="graded"):
        top_references(["plain text"])


class FixedLM(LanguageModel):
    """Per-token log-prob -len(context)/100 for every continuation token; records calls."""

    info = ModelInfo(name="fixed", backend="test", source="test")

    def __init__(self):
        self.calls = []

    def continuation_logprobs(self, context, continuations):
        self.calls.append((context, list(continuations)))
        lp = -len(context) / 100
        return [TokenLogprobs(list(range(len(c.split()))), c.split(), [lp] * len(c.split()))
                for c in continuations]

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, **kw):
        raise NotImplementedError

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        raise NotImplementedError


def test_score_is_minus_the_mean_token_nll_of_the_top_references():
    lm = FixedLM()
    out = refppl_question(lm, "Is animal research right?", REFS, ["Yes.", "It saves many lives."])
    assert len(out) == 2 and len(lm.calls) == 2  # one shared context per candidate
    for (context, conts), res, cand in zip(lm.calls, out, ["Yes.", "It saves many lives."]):
        assert context == refppl_context("Is animal research right?", cand)
        assert "Is animal research right?" in context and cand in context
        assert conts == [" Animal research saves lives.", " Alternatives exist."]
        assert res.score == pytest.approx(-len(context) / 100)
        assert res.scored_tokens == 4 + 2 and res.truncated_tokens == 0
    with pytest.raises(NfevalError, match="empty"):
        refppl_question(lm, "q", REFS, ["  "])


def test_refppl_equals_a_brute_force_forward_pass(tiny_gpt2):
    question, cand = "Is animal research right?", "Many treatments were first tested on animals."
    res = refppl_question(tiny_gpt2, question, REFS, [cand])[0]
    ctx = tiny_gpt2.encode_context(refppl_context(question, cand))
    nlls = []
    for ref in top_references(REFS):
        y = tiny_gpt2.encode_continuation(" " + ref.text)
        ids = torch.tensor([ctx + y])
        with torch.no_grad():
            logits = tiny_gpt2.model(input_ids=ids).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        token_lp = [logp[len(ctx) + i - 1, t].item() for i, t in enumerate(y)]
        nlls.append(-sum(token_lp) / len(y))
    assert res.nll == pytest.approx(tuple(nlls), abs=1e-4)
    assert res.score == pytest.approx(-sum(nlls) / len(nlls), abs=1e-4)


def test_correlations_follow_the_grades():
    # FixedLM's score falls with the context length, so the shortest candidate scores best:
    # candidates written so that length falls as grade rises give a perfect correlation.
    q = GradedQuestion(qid="q1", question="Is animal research right?", answers=[])
    cands = (ans("c1", 3, "Yes."), ans("c2", 2, "Yes, it is."), ans("c3", 0, "Yes, it is right, always."))
    split = ReferenceSplit(qid="q1", pattern="31", seed=0, references=REFS[:1] + REFS[2:], candidates=cands)
    df = refppl_correlations(FixedLM(), [q], [split], progress=False)
    assert df.set_index("coefficient")["ours"]["kendall"] == pytest.approx(1.0)
    assert df.set_index("coefficient")["ours"]["spearman"] == pytest.approx(1.0)
    assert (df["n_questions"] == 1).all() and (df["n_candidates"] == 3).all()
    assert not math.isnan(df["ours"].iloc[0])
    with pytest.raises(NfevalError, match="no question"):
        refppl_correlations(FixedLM(), [], [split], progress=False)
