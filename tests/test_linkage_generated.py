"""Generated reference lists (LINKAGE-1GT / 0GT) and the judges' demonstration pool, with fake models."""

from __future__ import annotations

import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage.generated import (
    clean_golden,
    example_answers,
    generate_reference_lists,
    generated_split,
    golden_prompt,
    parse_degraded,
    parse_generator,
)
from nfeval.linkage.settings import GenerationSettings
from nfeval.models.base import Generation, LanguageModel, ModelInfo

TEMPLATE = ("Make three worse answers.\nExample.\nOutput:\nAnswer1:copy me\nAnswer2:and me\n"
            "Answer3:me too}\n\nBelow are the non-factoid question, and the golden answer.\n"
            "Non-factoid Question:{#question}\nGolden Answer:{#ground}")
GEN = GenerationSettings(degrade_template=TEMPLATE)


class ScriptedModel(LanguageModel):
    """Replies from a list of texts in turn (the last one repeats); records every call."""

    def __init__(self, replies, name="scripted"):
        self.replies, self.calls = list(replies), []
        self.info = ModelInfo(name=name, backend="test", source="test", chat_template="model")

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls.append((prompt, temperature, top_p, max_tokens, seed))
        text = self.replies[min(len(self.calls) - 1, len(self.replies) - 1)]
        return Generation(text=text, n_tokens=len(text.split()), finish_reason="stop")

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"


def _q(qid="q1", grades=(3, 3, 2, 1, 0, 0)):
    return GradedQuestion(qid, f"question {qid}?",
                          [GradedAnswer(f"{qid}-d{i}", f"answer {i} of {qid}", g, g + 1)
                           for i, g in enumerate(grades)])


@pytest.mark.parametrize("text, expected", [
    ("Answer1:a\nAnswer2:b\nAnswer3:c}", {1: "a", 2: "b", 3: "c"}),
    ("Output:\n**Answer 1:** a a\n\n**Answer 2:** b\n**Answer 3:** c", {1: "a a", 2: "b", 3: "c"}),
    ("Answer 1. {a}\nResponse 2) b\nanswer 3 - c", {1: "a", 2: "b", 3: "c"}),
    ("1. a\n2) b\n3. c", {1: "a", 2: "b", 3: "c"}),
    ("Answer1:a\nAnswer2:\nAnswer3:c", {1: "a", 3: "c"}),  # an empty segment is missing
    ("Answer1:a\nAnswer1:again\nAnswer4:d", {1: "a"}),  # first wins; 4 is out of range
    ("I cannot do that.", {}),
    ("", {}),
    (None, {}),
])
def test_parse_degraded(text, expected):
    assert parse_degraded(text) == expected


def test_parse_degraded_drops_copied_examples():
    ex = example_answers(TEMPLATE)
    assert ex == ("copy me", "and me", "me too")
    assert parse_degraded("Answer1:Copy  me\nAnswer2:x\nAnswer3:me too", exclude=ex) == {2: "x"}


@pytest.mark.parametrize("raw, expected", [
    ("  Answer: {It is so.} ", "It is so."),
    ("**Better answer:** yes", "yes"),
    ('"quoted"', "quoted"),
    ("   ", ""),
])
def test_clean_golden(raw, expected):
    assert clean_golden(raw) == expected


def test_golden_prompts_and_generator_specs():
    one = golden_prompt("why #ground?", "because")
    assert "{why #ground?}" in one and "{because}" in one  # one pass: slot text inside stays
    zero = golden_prompt("why?")
    assert "{why?}" in zero and "#ground" not in zero and "Reference" not in zero
    assert str(parse_generator("llama:qwen2.5-coder-0.5b-instruct")) == \
        "llama:qwen2.5-coder-0.5b-instruct"
    assert parse_generator("mistralai/Mistral-7B-Instruct-v0.2").backend == "hf"


def test_generate_1gt_lists_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    q = _q()
    gold = ScriptedModel(["Answer: {the better answer}"], "gold")
    deg = ScriptedModel(["Answer1:worse\nAnswer2:worse still\nAnswer3:worst}"], "deg")
    gts = {q.qid: q.answers[0]}
    [refs] = generate_reference_lists(gold, [deg], [q], gts, seed=0, progress=False,
                                      generation=GEN)
    assert refs.ok and refs.complete and refs.mode == "1gt"
    assert [r.grade for r in refs.references()] == [3, 2, 1, 0]
    assert [r.text for r in refs.references()] == ["the better answer", "worse", "worse still",
                                                   "worst"]
    assert refs.ground_truth_id == "q1-d0" and refs.degraded_failures == 0
    assert "{answer 0 of q1}" in gold.calls[0][0]  # the ground truth is in the golden prompt
    assert "{the better answer}" in deg.calls[0][0]  # the golden answer in the Figure 9 prompt
    assert gold.calls[0][1] == 0.8 and gold.calls[0][2] == 0.95
    split = generated_split(q, refs, q.answers[1:])
    assert split.pattern == "3210" and len(split.candidates) == 5 and split.complete
    # a rerun is served from the cache
    again = generate_reference_lists(gold, [deg], [q], gts, seed=0, progress=False,
                                     generation=GEN)
    assert again[0].references() == refs.references()
    assert len(gold.calls) == 1 and len(deg.calls) == 1
    # another seed generates again, with another sampling seed
    generate_reference_lists(gold, [deg], [q], gts, seed=1, progress=False,
                             generation=GEN)
    assert len(gold.calls) == 2 and gold.calls[1][4] != gold.calls[0][4]


def test_generate_0gt_retries_and_counts_failures(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    q = _q()
    gold = ScriptedModel(["", "A fine answer."], "gold")  # first attempt empty, second works
    deg = ScriptedModel(["Answer1:only one", "Answer1:x\nAnswer2:y"], "deg")  # never complete
    [refs] = generate_reference_lists(gold, [deg], [q], None, seed=0,
                                      progress=False, generation=GenerationSettings(attempts=2, degrade_template=TEMPLATE))
    assert refs.mode == "0gt" and refs.golden == "A fine answer." and refs.golden_attempts == 2
    assert "Reference" not in gold.calls[0][0]
    assert refs.degraded_outputs == 2 and refs.degraded_failures == 2
    assert refs.degraded == {2: "x", 1: "y"} and refs.missing == (0,)
    assert [r.grade for r in refs.references()] == [3, 2, 1]


def test_generate_empty_golden_leaves_no_references(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    gold = ScriptedModel(["  "], "gold")
    deg = ScriptedModel(["Answer1:a\nAnswer2:b\nAnswer3:c"], "deg")
    [refs] = generate_reference_lists(gold, [deg], [_q()], None,
                                      progress=False,
                                      generation=GenerationSettings(attempts=3, degrade_template=TEMPLATE))
    assert not refs.ok and refs.references() == () and refs.missing == (3, 2, 1, 0)
    assert len(gold.calls) == 3 and deg.calls == []


def test_several_degraders_pick_per_grade(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    gold = ScriptedModel(["gold"], "gold")
    a = ScriptedModel(["Answer1:a1\nAnswer2:a2\nAnswer3:a3"], "A")
    b = ScriptedModel(["Answer1:b1\nAnswer3:b3"], "B")
    qs = [_q(f"q{i}") for i in range(8)]
    lists = generate_reference_lists(gold, [a, b], qs, None,
                                     progress=False,
                                     generation=GenerationSettings(attempts=1, degrade_template=TEMPLATE))
    assert all(r.complete for r in lists)
    assert all(r.degraded[1] == "a2" for r in lists)  # only A wrote grade 1
    assert {r.sources[2] for r in lists} == {"A", "B"}  # both lists are drawn from
    assert sum(r.degraded_failures for r in lists) == 8  # B's outputs lack Answer2
    with pytest.raises(NfevalError, match="degrader"):
        generate_reference_lists(gold, [], qs, None, progress=False, generation=GEN)


class UniformJudge(LanguageModel):
    """Equal log-probs for every label; counts the prompts it scores."""

    info = ModelInfo(name="uniform", backend="test", source="test", chat_template="model")

    def __init__(self):
        self.prompts = []

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        self.prompts.append(prompt)
        return {lab: 0.0 for lab in labels}

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, **kw):
        raise NotImplementedError

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"


def test_judge_questions_demonstration_pool(tmp_path, monkeypatch):
    from nfeval.linkage.judges import judge_questions
    from nfeval.linkage.references import sample_all

    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    qs = [_q(f"q{i}", (3, 3, 2, 2, 1, 1, 0, 0, 2)) for i in range(5)]
    pool = sample_all(qs, "3210", 0).splits
    judged = [pool[0]]
    tpl = {"linkage": "Rank.\nQuestion:{#question}\nReference answer list:{#ground}\n"
                      "Candidate answer:{#candidate}"}
    fs = {"demonstration": "Example #k:\nQ:{#question}\nR:{#ground}\nC:{#candidate}\n[[#rank]]",
          "prompt": "#instruction\n#demonstrations\n#lead\n#query"}
    from nfeval.linkage.judges import FewShotTemplate, JudgeConfig as JC

    monkeypatch.setattr("nfeval.linkage.judges.load_fewshot_template",
                        lambda path=None: FewShotTemplate(fs["demonstration"], fs["prompt"], "x"))
    monkeypatch.setattr("nfeval.linkage.judges.release_template", lambda m: tpl["linkage"])
    judge = UniformJudge()
    [res] = judge_questions(judge, qs, judged, JC(), shots=2, use_cache=True, progress=False,
                            demonstration_splits=pool)
    assert res.n_shots == 2 and "q0" not in res.demonstrations
    assert set(res.demonstrations) <= {"q1", "q2", "q3", "q4"}
    n = len(judge.prompts)
    judge_questions(judge, qs, judged, JC(), shots=2, use_cache=True, progress=False,
                    demonstration_splits=pool)
    assert len(judge.prompts) == n  # served from the cache
    other = sample_all(qs, "3210", 1).splits  # same questions, other references
    judge_questions(judge, qs, judged, JC(), shots=2, use_cache=True, progress=False,
                    demonstration_splits=other)
    assert len(judge.prompts) > n  # the pool's references are part of the key
