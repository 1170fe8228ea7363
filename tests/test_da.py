"""Dispute Awareness (nfeval.debateqa.da): prompt, modes, Acknowledge rule, metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
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


# --------------------------------------------------------------------------- intervals (Table 3)

def _toy_frame(methods, n_questions=10, seed=0, nan_share=0.0):
    """Four labelled answers per question; each method's scores drawn at random."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        for a in range(4):
            y = int(rng.integers(0, 2))
            for m in methods:
                s = float(rng.random())
                if rng.random() < nan_share:
                    s = math.nan
                rows.append({"method": m, "qid": f"q{q}", "key": f"q{q}:{a}", "label": y,
                             "score": s})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("labels,scores", [
    ([1, 1, 0, 0], [0.9, 0.4, 0.6, 0.1]),           # the hand-checked case above
    ([1, 1, 0, 0, 1], [1.0, math.nan, 0.0, 1.0, 0.0]),
    ([1, 0, 1, 0, 1, 0], [0.5, 0.5, 0.5, 0.2, 0.7, 0.7]),  # ties at the threshold
    ([1, 1, 1, 0], [1.0, 1.0, 1.0, 1.0]),           # one predicted class: MCC 0
    ([0, 0, 0, 0], [0.1, 0.2, 0.9, 0.3]),           # one label: AUROC NaN, F1 0
])
def test_binary_statistic_equals_da_metrics(labels, scores):
    from nfeval_repro.debateqa.tables import DA_STATISTICS, binary_statistic

    want = da_metrics(labels, scores)
    for name in DA_STATISTICS:
        got = binary_statistic(name, labels, scores)
        assert (math.isnan(got) and math.isnan(want[name])) or got == pytest.approx(want[name])


@pytest.mark.parametrize("other", [None, 2])
def test_the_vectorized_bootstrap_statistics_equal_the_loop_to_the_last_bit(other):
    """da_rows and da_paired_rows compute every resample at once, each answer weighted by how
    often its question is drawn; every value must be the loop's exactly (ties at 0.5, one
    class left, unscored answers, questions without answers)."""
    from nfeval_repro.debateqa.tables import (DA_STATISTICS, LabelledQuestion, _statistic,
                                                    _vectorized)

    rng = np.random.default_rng(1)
    for trial in range(40):
        q = int(rng.integers(1, 25))
        units = []
        for i in range(q):
            k = int(rng.integers(1, 6))
            scores = rng.choice([0.0, 0.25, 0.5, 1.0, float(rng.random())], size=(k, 3))
            scores[rng.random((k, 3)) < 0.2] = np.nan
            units.append(LabelledQuestion(i, rng.integers(0, 2, size=k), scores))
        draws = rng.integers(0, q, size=(40, q))
        for name in DA_STATISTICS:
            stat = _statistic(name, 0, other)
            loop = np.array([stat([units[i] for i in row]) for row in draws])
            vec = _vectorized(units, name, 0, other)(draws)
            assert np.array_equal(loop, vec, equal_nan=True), (trial, name)


def test_binary_statistic_rejects():
    from nfeval_repro.debateqa.tables import binary_statistic

    with pytest.raises(NfevalError, match="statistic"):
        binary_statistic("precision", [1, 0], [1.0, 0.0])
    with pytest.raises(NfevalError, match="labels"):
        binary_statistic("accuracy", [1, 0], [1.0])
    assert math.isnan(binary_statistic("accuracy", [1], [math.nan]))


def test_question_units_group_answers_by_question():
    import pandas as pd

    from nfeval_repro.debateqa.tables import question_units

    frame = pd.DataFrame({
        "judge": ["a", "a", "a", "b", "b"], "method": ["p"] * 5,
        "qid": [1, 1, 2, 1, 2], "key": ["x", "y", "z", "x", "z"],
        "label": [1, 0, 1, 1, 1], "score": [0.9, 0.1, 0.8, 0.7, 0.6]})
    units, keys = question_units(frame, by=["judge", "method"])
    assert keys == [("a", "p"), ("b", "p")]
    assert [u.qid for u in units] == [1, 2]
    assert units[0].labels.tolist() == [1, 0]
    assert units[0].scores[:, 0].tolist() == [0.9, 0.1]
    assert units[0].scores[0, 1] == 0.7 and math.isnan(units[0].scores[1, 1])  # b skipped y
    frame.loc[3, "label"] = 0
    with pytest.raises(NfevalError, match="more than one label"):
        question_units(frame, by=["judge", "method"])


def test_da_rows_estimates_equal_da_metrics_and_are_seeded():
    from nfeval_repro.debateqa.tables import da_rows

    frame = _toy_frame(["p", "q"], n_questions=12, nan_share=0.1)
    rows = da_rows(frame, seed=3)
    assert len(rows) == 8 and list(rows.columns[:6]) == ["method", "statistic", "ours", "ci_low",
                                                        "ci_high", "n_questions"]
    for m, part in frame.groupby("method"):
        want = da_metrics(part["label"].tolist(), part["score"].tolist())
        got = rows[rows["method"] == m].set_index("statistic")
        for name in ("accuracy", "f1", "auroc", "mcc"):
            assert got.loc[name, "ours"] == pytest.approx(want[name])
            assert got.loc[name, "ci_low"] <= got.loc[name, "ours"] <= got.loc[name, "ci_high"]
            assert got.loc[name, "ci_low"] < got.loc[name, "ci_high"]
        assert (got["n_questions"] == 12).all()
        assert (got["n_answers"] == want["n_scored"]).all()
        assert (got["n_unparsed"] == want["n_unparsed"]).all()
    assert rows.equals(da_rows(frame, seed=3))          # deterministic
    assert not rows.equals(da_rows(frame, seed=4))      # the seed matters


def test_cluster_interval_is_wider_than_answers_are_independent():
    # four identical answers per question: the cluster bootstrap resamples 10 units,
    # not 40 independent answers, so its interval is about twice as wide as Wilson's
    from nfeval_repro.debateqa.tables import da_rows
    from nfeval.metrics.intervals import proportion_interval

    frame = _toy_frame(["p"], n_questions=10)
    first = frame.groupby("qid")[["label", "score"]].transform("first")
    frame[["label", "score"]] = first
    row = da_rows(frame, statistics=["accuracy"]).iloc[0]
    hits = round(row["ours"] * 40)
    wilson = proportion_interval(hits, 40, unit="answers")
    assert row["ci_high"] - row["ci_low"] > 1.5 * (wilson.high - wilson.low)


def test_paired_difference_of_identical_scores_is_zero():
    from nfeval_repro.debateqa.tables import da_paired_rows

    frame = _toy_frame(["p"], n_questions=8)
    frame = _concat([frame, frame.assign(method="same")])
    rows = da_paired_rows(frame, [("same", "p")])
    assert rows["method"].tolist() == ["same - p"] * 4
    assert (rows["ours"] == 0).all()
    assert (rows["ci_low"] == 0).all() and (rows["ci_high"] == 0).all()
    assert (rows["n_questions"] == 8).all() and (rows["n_answers"] == 32).all()


def test_paired_difference_estimate_and_answers_scored_by_both():
    from nfeval_repro.debateqa.tables import binary_statistic, da_paired_rows

    frame = _toy_frame(["p", "q"], n_questions=12, nan_share=0.15, seed=1)
    rows = da_paired_rows(frame, [("q", "p")], seed=0).set_index("statistic")
    wide = frame.pivot(index="key", columns="method", values="score")
    labels = frame.groupby("key")["label"].first()
    both = wide.dropna().index
    for name in ("accuracy", "f1", "auroc", "mcc"):
        a = binary_statistic(name, labels[both], wide.loc[both, "q"])
        b = binary_statistic(name, labels[both], wide.loc[both, "p"])
        assert rows.loc[name, "ours"] == pytest.approx(a - b)
        assert rows.loc[name, "a_value"] == pytest.approx(a)
        assert rows.loc[name, "ci_low"] <= rows.loc[name, "ours"] <= rows.loc[name, "ci_high"]
        assert rows.loc[name, "n_answers"] == len(both)
    with pytest.raises(NfevalError, match="no scores"):
        da_paired_rows(frame, [("q", "nope")])


def test_paired_rows_label_only_the_columns_that_differ():
    from nfeval_repro.debateqa.tables import da_paired_rows

    frame = _toy_frame(["p", "r"], n_questions=5)
    frame["judge"] = "big"
    frame = _concat([frame, frame[frame["method"] == "p"].assign(judge="small")])
    rows = da_paired_rows(frame, [(("big", "p"), ("small", "p")), (("big", "p"), ("big", "r"))],
                          by=["judge", "method"], statistics=["accuracy"])
    assert rows[["judge", "method"]].values.tolist() == [["big - small", "p"], ["big", "p - r"]]


def test_one_question_gives_the_estimate_without_an_interval():
    from nfeval_repro.debateqa.tables import da_rows

    rows = da_rows(_toy_frame(["p"], n_questions=1), statistics=["accuracy"])
    assert rows["n_questions"].tolist() == [1]
    assert math.isnan(rows["ci_low"].iloc[0]) and not math.isnan(rows["ours"].iloc[0])


def test_da_comparisons_judges_and_the_acknowledge_rule():
    from nfeval_repro.debateqa.tables import da_comparisons

    pairs = da_comparisons(["small", "big"])
    assert pairs[:2] == [(("big", "da_prob"), ("small", "da_prob")),
                         (("big", "da_zs_prob"), ("small", "da_zs_prob"))]
    ack = ("none", "acknowledge_rule")
    assert pairs[2:8] == [((j, m), ack) for j in ("small", "big")
                          for m in ("da_prob", "da_zs_prob", "da_generate")]
    # each judge's D.A. minus its D.A.-ZS: the paper's "necessity of including demonstrations"
    assert pairs[8:10] == [((j, "da_prob"), (j, "da_zs_prob")) for j in ("small", "big")]
    assert pairs[10:] == [(("none", "da_official"), ack)]
    assert len(da_comparisons(["only"])) == 5  # no judge difference with one judge


def test_da_frame_rows():
    from nfeval_repro.debateqa.tables import da_frame

    res = [DAResult("a:1", 0.7, 1, "prob", p_one=0.7), DAResult("b:1", math.nan, None,
                                                                 "generate", raw="yes")]
    frame = da_frame(res, judge="j", method="m")
    assert list(frame.columns) == ["judge", "method", "key", "score", "raw"]
    assert frame["key"].tolist() == ["a:1", "b:1"] and frame["score"].iloc[0] == 0.7
    assert math.isnan(frame["score"].iloc[1]) and frame["raw"].iloc[1] == "yes"
    assert da_frame([], judge="j").columns.tolist() == ["judge", "key", "score", "raw"]


def _concat(frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- real model

@pytest.fixture(scope="module")
def smol():
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
