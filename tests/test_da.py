"""Dispute Awareness (nfeval.debateqa.da): prompt, modes, Acknowledge rule, metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nfeval import NfevalError
from nfeval.debateqa.da import (
    ACKNOWLEDGE_PHRASES_FILE,
    DAResult,
    acknowledge_baseline,
    acknowledge_patterns,
    da_metrics,
    da_prompt,
    da_score,
    da_scores,
    first_binary_digit,
    zero_shot_template,
)
from nfeval.models.base import Generation, LanguageModel, ModelInfo, normalize
from testkit import needs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "debateqa_sample"

# a template in the release's layout, so most tests need no mirror
TOY = ("Decide.\n\nExamples:\nQuestion: A?\nAnswer: B.\nResponse: 1\n\n"
       "Question: C?\nAnswer: D.\nResponse: 0\n\n"
       "Instruction:\n- Respond with \"1\" if debated.\n- Respond with \"0\" otherwise."
       "Question: {question}\nAnswer: {answer}\n\nImportant: one digit.\n")


class FakeJudge(LanguageModel):
    """Returns fixed text from generate; records the prompts it was given."""

    info = ModelInfo(name="fake", backend="test", source="test")

    def __init__(self, reply: str = "", p_one: float = 0.25):
        self.reply, self.p_one, self.prompts = reply, p_one, []

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_distribution(self, prompt, labels):
        self.prompts.append(prompt)
        return normalize({"0": math.log(1 - self.p_one), "1": math.log(self.p_one)})

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0):
        self.prompts.append(prompt)
        assert temperature == 0.0
        return Generation(text=self.reply)

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}</{m.role}>" for m in messages) + "<assistant>"


def _short_answers(n: int) -> list[tuple[str, str]]:
    qs = {json.loads(line)["id"]: json.loads(line)["question"]
          for line in (SAMPLE / "questions.jsonl").read_text().splitlines()}
    out = []
    for line in (SAMPLE / "answers_short.jsonl").read_text().splitlines()[:n]:
        o = json.loads(line)
        out.append((qs[o["id"]], o["generation"]))
    return out


# --------------------------------------------------------------------------- prompt

def test_prompt_fills_slots_and_keeps_braces():
    p = da_prompt("Is {x} fair?", 'Use {"a": 1} and {question} or {answer}.', template=TOY)
    assert "Question: Is {x} fair?\nAnswer: Use {\"a\": 1} and {question} or {answer}.\n" in p
    assert p.startswith("Decide.") and p.endswith("Important: one digit.\n")
    assert p.count("{question}") == 1 and p.count("{answer}") == 1  # only the answer's own


def test_prompt_slot_inside_question_not_refilled():
    p = da_prompt("Q {answer}?", "ANS", template=TOY)
    assert "Question: Q {answer}?\nAnswer: ANS\n" in p


@pytest.mark.parametrize("bad", ["no slots here", "Question: {question}"])
def test_prompt_needs_both_slots(bad):
    with pytest.raises(NfevalError):
        da_prompt("q", "a", template=bad)


def test_zero_shot_toy():
    zs = zero_shot_template(TOY)
    assert zs == TOY[: TOY.index("Examples:")] + TOY[TOY.index("Instruction:"):]
    assert "Response: " not in zs and "Examples:" not in zs
    assert '- Respond with "1" if debated.' in zs and "{question}" in zs and "{answer}" in zs


def test_zero_shot_needs_examples_block():
    with pytest.raises(NfevalError):
        zero_shot_template("Question: {question}\nAnswer: {answer}")


def test_release_prompt_and_zero_shot(mirror):
    full = da_prompt("Is X good?", "Yes {really}.")
    assert full.count("Response: ") == 3
    assert "Question: Is X good?\nAnswer: Yes {really}.\n" in full
    zs = da_prompt("Is X good?", "Yes {really}.", zero_shot=True)
    assert "Response: " not in zs and "Examples:" not in zs
    for line in (('- Respond with "1" if the answer explicitly states that the question is '
                  "open to debate or considered controversial."),
                 '- Respond with "0" if the answer does not acknowledge any debate',
                 "Important: Your answer should only contain one digit 0 or 1."):
        assert line in zs
    assert zs.startswith("Here is a question paired with an answer.")
    assert "Question: Is X good?\nAnswer: Yes {really}.\n" in zs


# --------------------------------------------------------------------------- modes (fake judge)

@pytest.mark.parametrize("reply, label", [
    ("Response: 0", 0), ("1", 1), ("0 - no debate", 0), (" The answer is 1.", 1),
    ("I think", None), ("", None), ("Response: 10", 1),
])
def test_generate_mode_parses_generated_text_only(reply, label):
    judge = FakeJudge(reply)
    r = da_score(judge, "q", "a", mode="generate", template=TOY, id=7)
    assert r.label == label and r.mode == "generate" and r.raw == reply and r.id == 7
    if label is None:
        assert math.isnan(r.score)  # the prompt's "Response: 1" is never used
    else:
        assert r.score == float(label)
    assert judge.prompts == [judge.chat_prompt(da_prompt("q", "a", template=TOY))]


def test_prob_mode_uses_chat_prompt():
    judge = FakeJudge(p_one=0.25)
    r = da_score(judge, "q", "a", template=TOY)
    assert r.mode == "prob" and r.score == pytest.approx(0.25) == r.p_one and r.label == 0
    assert judge.prompts[0].startswith("<user>Decide.")


def test_official_mode_decided_by_prompt_without_generating():
    judge = FakeJudge("0")
    r = da_score(judge, "q", "a", mode="official", template=TOY)
    assert (r.score, r.label) == (1.0, 1) and judge.prompts == []
    assert r.raw.endswith("Response: 1")
    assert da_score(None, "q", "a", mode="official", zero_shot=True, template=TOY).label == 1


def test_official_mode_generates_without_chat_template_when_prompt_has_no_digit():
    judge = FakeJudge("xx 0")
    r = da_score(judge, "q", "a", mode="official", template="Q: {question} A: {answer}")
    assert r.label == 0 and judge.prompts == ["Q: q A: a"]


def test_unknown_mode_and_missing_judge():
    with pytest.raises(NfevalError):
        da_score(FakeJudge(), "q", "a", mode="sample", template=TOY)
    with pytest.raises(NfevalError):
        da_score(None, "q", "a", mode="prob", template=TOY)


def test_da_scores_order_and_skips_unknown_ids():
    judge = FakeJudge("Response: 0")
    with pytest.warns(UserWarning, match="1 answer"):
        res = da_scores(judge, {1: "q1", 2: "q2"}, {2: "a2", 3: "a3", 1: "a1"},
                        mode="generate", template=TOY, progress=False)
    assert [r.id for r in res] == [2, 1] and all(r.label == 0 for r in res)


def test_first_binary_digit():
    assert first_binary_digit("a9b10") == 1 and first_binary_digit("x0") == 0
    assert first_binary_digit("none") is None and first_binary_digit("") is None


# --------------------------------------------------------------------------- Acknowledge rule

@pytest.mark.parametrize("text", [
    "Whether to ban it is one of the most debated questions in ethics.",
    "This remains a controversial topic.",
    "It is a contested area of health policy.",
    "Mandatory voting is a contentious issue.",
    "The matter is disputed among regulators.",
    "Few issues are as divisive as this one.",
    "There is no simple answer to this question.",
    "Economists disagree about the effects of the tax.",
    "Reasonable people differ on this.",
    "Opinion among athletes and ethicists is divided.",
    "There is no scientific consensus on the matter.",
    "The question is open to interpretation.",
    "There is considerable disagreement about it.",
])
def test_acknowledge_positive(text):
    r = acknowledge_baseline(text, id="x")
    assert (r.label, r.score, r.mode, r.id) == (1, 1.0, "acknowledge", "x") and r.raw


@pytest.mark.parametrize("text", [
    "The boiling point of water at sea level is 100 degrees Celsius.",
    "Yes. Uniforms save families money and reduce bullying.",
    "The issue is complex and multifaceted.",
    "Some scientists argue that the risks are small; others point to benefits.",
    "Arguments for: lower costs. Arguments against: less choice.",
    "This fact is undisputed.",
    "",
])
def test_acknowledge_negative(text):
    r = acknowledge_baseline(text)
    assert (r.label, r.score, r.raw) == (0, 0.0, None)


def test_acknowledge_phrase_file(tmp_path):
    head = ACKNOWLEDGE_PHRASES_FILE.read_text(encoding="utf-8").splitlines()[:3]
    assert all(line.startswith("#") for line in head)
    assert "DELPHI" in "\n".join(head) and "Table 3" in "\n".join(head)
    f = tmp_path / "p.txt"
    f.write_text("# comment\n\nfoo+\n")
    pats = acknowledge_patterns(f)
    assert acknowledge_baseline("FOOO", patterns=pats).label == 1
    f.write_text("(unclosed\n")
    with pytest.raises(NfevalError, match="line 1"):
        acknowledge_patterns(f)


# --------------------------------------------------------------------------- metrics

def test_metrics_hand_checked():
    # labels 1,1,0,0; predictions (>= 0.5) 1,0,1,0: TP=FN=FP=TN=1
    m = da_metrics([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1])
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["f1"] == pytest.approx(0.5)
    assert m["auroc"] == pytest.approx(0.75)  # 3 of 4 (pos, neg) pairs ordered right
    assert m["mcc"] == pytest.approx(0.0)
    assert (m["n"], m["n_scored"], m["n_unparsed"]) == (4, 4, 0)


def test_metrics_unparsed_excluded_and_counted():
    res = [DAResult(i, s, None if math.isnan(s) else int(s), "generate")
           for i, s in enumerate([1.0, math.nan, 0.0, 1.0, 0.0])]
    m = da_metrics([1, 1, 0, 0, 1], res)
    # scored: (1,1) (0,0) (0,1) (1,0): TP=1 TN=1 FP=1 FN=1
    assert (m["n"], m["n_scored"], m["n_unparsed"]) == (5, 4, 1)
    assert m["accuracy"] == pytest.approx(0.5) and m["mcc"] == pytest.approx(0.0)
    assert m["f1"] == pytest.approx(0.5) and m["auroc"] == pytest.approx(0.5)


def test_metrics_degenerate():
    m = da_metrics([1, 1], [0.7, 0.2])
    assert math.isnan(m["auroc"]) and m["accuracy"] == pytest.approx(0.5)
    m = da_metrics([1], [math.nan])
    assert math.isnan(m["accuracy"]) and m["n_unparsed"] == 1
    perfect = da_metrics([1, 0, 1, 0], [1.0, 0.0, 1.0, 0.0])
    assert perfect["mcc"] == pytest.approx(1.0) and perfect["f1"] == pytest.approx(1.0)
    with pytest.raises(NfevalError):
        da_metrics([1, 0], [0.5])


def test_metrics_are_scikit_learns_to_the_last_bit():
    """The library computes them itself (no scikit-learn in its dependencies); where
    scikit-learn is installed, every value equals its, bit for bit, on random labels and
    scores with and without ties (AUROC's trapezoids are summed in its order)."""
    import warnings

    import numpy as np

    metrics = needs("sklearn.metrics")
    rng = np.random.default_rng(0)
    for trial in range(600):
        n = int(rng.integers(1, 120))
        y = rng.integers(0, 2, n)
        s = (rng.random(n), rng.integers(0, 5, n) / 4, np.round(rng.random(n), 2))[trial % 3]
        pred = (s >= 0.5).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one class only: scikit-learn's shape warning
            want = {"accuracy": metrics.accuracy_score(y, pred),
                    "f1": metrics.f1_score(y, pred, pos_label=1, zero_division=0),
                    "auroc": metrics.roc_auc_score(y, s) if len(set(y)) == 2 else math.nan,
                    "mcc": metrics.matthews_corrcoef(y, pred)}
        got = da_metrics(list(y), list(s))
        for k, v in want.items():
            assert (math.isnan(v) and math.isnan(got[k])) or got[k] == float(v), (trial, k)


# --------------------------------------------------------------------------- real model

@pytest.fixture(scope="module")
def smol():
    needs("torch")
    needs("transformers")
    from nfeval.models import load_model

    return load_model("smollm2-135m-instruct")


@pytest.mark.slow
def test_official_mode_always_one(mirror, smol):
    """The released script's bug: the prompt's "Response: 1" decides every answer."""
    answers = _short_answers(2) + [("Is the sky blue?", "Yes, because of Rayleigh scattering.")]
    for q, a in answers:
        for zs in (False, True):
            r = da_score(smol, q, a, mode="official", zero_shot=zs)
            assert (r.score, r.label) == (1.0, 1)
    # what the release does in full: greedy continuation without a chat template, then the
    # first 0/1 of prompt + generated text (a short budget here; the prompt decides anyway)
    q, a = answers[0]
    prompt = da_prompt(q, a)
    gen = smol.generate(prompt, temperature=0.0, max_tokens=4)
    assert first_binary_digit(prompt + gen.text) == 1


@pytest.mark.slow
def test_prob_mode_matches_label_distribution(mirror, smol):
    q, a = _short_answers(1)[0]
    r = da_score(smol, q, a, mode="prob", id=9001)
    dist = smol.label_distribution(smol.chat_prompt(da_prompt(q, a)), ["0", "1"])
    assert 0.0 <= r.score <= 1.0 and r.score == pytest.approx(dist["1"], abs=1e-9)
    assert r.p_one == r.score and r.label == int(r.score >= 0.5) and r.id == 9001


def test_prob_batch_shares_prefix_and_matches_single(tiny_gpt2_wide):
    """The shared-prefix batch gives the per-answer prob-mode values (same split tokens)."""
    from nfeval.debateqa.da import _shared_split, da_prob_batch

    pairs = [("Is tea better than coffee?", "Some say yes; it is debated."),
             ("Should cities ban cars?", "No."),
             ("Is {answer} a slot?", "Braces {question} stay literal, as written.")]
    split = _shared_split(tiny_gpt2_wide, False, TOY)
    chat = tiny_gpt2_wide.chat_prompt(da_prompt(*pairs[0], template=TOY))
    assert split > 0 and chat[split:].startswith("Question: Is tea")
    batch = da_prob_batch(tiny_gpt2_wide, pairs, template=TOY)
    single = [da_score(tiny_gpt2_wide, q, a, mode="prob", template=TOY).score for q, a in pairs]
    assert batch == pytest.approx(single, abs=1e-5)
    zs = da_prob_batch(tiny_gpt2_wide, pairs, template=TOY, zero_shot=True)
    assert zs == pytest.approx([da_score(tiny_gpt2_wide, q, a, mode="prob", template=TOY,
                                         zero_shot=True).score for q, a in pairs], abs=1e-5)
    assert da_prob_batch(tiny_gpt2_wide, [], template=TOY) == []


@pytest.mark.slow
def test_prob_batch_equals_single_on_a_real_tokenizer(mirror, smol):
    """Token-level prefix sharing gives exactly the per-prompt values (BPE merges
    across the text boundary cannot change them)."""
    from nfeval.debateqa.da import da_prob_batch

    pairs = _short_answers(3)
    batch = da_prob_batch(smol, pairs)
    single = [da_score(smol, q, a, mode="prob").score for q, a in pairs]
    assert batch == pytest.approx(single, abs=1e-5)


def test_da_signature_hashes_the_prompt_as_given_in_either_slot_spelling():
    """nfeval's {question}/{answer} or the alias #question/#answer: the judge fills the
    braced form, the signature hashes the text as written (what sha256sum prints)."""
    import hashlib

    from nfeval.debateqa.scoring import DASettings, da_signature

    for text in ("Q: {question}\nA: {answer}\nDebatable (0/1)? ",
                 "Q: #question\nA: #answer\nDebatable (0/1)? "):
        st = DASettings(prompt=text)
        assert st.template == "Q: {question}\nA: {answer}\nDebatable (0/1)? "
        sig = da_signature(None, st)
        assert sig.prompt_sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
