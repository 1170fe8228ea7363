"""Answer collection (nfeval_repro.debateqa.generation) and the project's prompts (the answer systems
of the reproduction: src/repro/tests/test_systems.py)."""

from __future__ import annotations

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval_repro.debateqa.generation import (
    Decoding,
    answer_prompt,
    clean_answer,
    generate_answers,
    question_seed,
    stop_strings,
)
from nfeval.models.base import Generation, LanguageModel, ModelInfo
from nfeval.prompts import (
    length_instruction,
    prompt_text,
    restate_prompts,
    system_prompts,
)
from nfeval.runcache import RunCache


class EchoModel(LanguageModel):
    """Generates "answer <n>" and counts its calls; template 'model' or 'none'."""

    def __init__(self, template: str = "model", name: str = "echo"):
        self.calls = []  # the template is known from info.chat_template alone (public interface)
        self.info = ModelInfo(name=name, backend="test", source="test", chat_template=template)

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls.append((prompt, temperature, top_p, max_tokens, seed, tuple(stop)))
        return Generation(text=f" answer {len(self.calls)}\nQuestion: next?", n_tokens=5,
                          finish_reason="length")

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"


def test_project_prompts():
    r = restate_prompts()
    assert len(r) == 5 and r[0] == "Please restate." and len(set(r)) == 5
    sp = system_prompts()
    assert list(sp) == ["basic", "comprehensive", "detailed"]
    assert "debat" not in sp["basic"].lower() and "debat" in sp["comprehensive"].lower()
    assert length_instruction(120) == "Answer in about 120 tokens."
    assert "{system}" in prompt_text("answer_completion_base")
    with pytest.raises(NfevalError, match="No project prompt"):
        prompt_text("no_such_prompt")


def test_answer_prompt_chat_and_base():
    chat = EchoModel("model")
    assert answer_prompt(chat, " Q? ", system="S", suffix="Be short.") == \
        "<system>S<user>Q? Be short.<assistant>"
    base = EchoModel("none")
    p = answer_prompt(base, "Q?", system="S")
    assert p.startswith("S\n\nQuestion: Q?") and p.endswith("Answer:")
    assert stop_strings(base) == ["\nQuestion:"] and stop_strings(chat) == []
    assert clean_answer(base, " yes.\n Question: more") == "yes."
    assert clean_answer(chat, " yes.\nQuestion: kept ") == "yes.\nQuestion: kept"


def test_question_seed():
    assert question_seed(0, 5) == question_seed(0, 5)
    assert len({question_seed(0, q) for q in range(50)}) == 50
    assert question_seed(1, 5) != question_seed(0, 5)


def test_generate_answers_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    m = EchoModel("none")
    qs = {1: "A?", 2: "B?"}
    decoding = Decoding(temperature=0.7, top_p=0.9, max_tokens=9, seed=3)
    df = generate_answers(m, qs, system="S", decoding=decoding, progress=False)
    assert df["answer"].tolist() == ["answer 1", "answer 2"] and len(m.calls) == 2
    assert m.calls[0][1:] == (0.7, 0.9, 9, question_seed(3, 1), ("\nQuestion:",))
    again = generate_answers(m, qs, system="S", decoding=decoding, progress=False)
    assert len(m.calls) == 2 and again.equals(df)  # nothing regenerated
    generate_answers(m, {1: "A?", 3: "C?"}, system="S", decoding=decoding, progress=False)
    assert len(m.calls) == 3  # only the new question
    generate_answers(m, qs, system="other", decoding=decoding, progress=False)
    assert len(m.calls) == 5  # another prompt is another run
    with pytest.raises(NfevalError):
        generate_answers(m, {}, progress=False)


def test_runcache_keeps_several_texts_per_id(tmp_path):
    c = RunCache("t", {"a": 1}, directory=tmp_path)
    c.put(7, "first", {"v": 1})
    c.put(7, "second", {"v": 2})
    again = RunCache("t", {"a": 1}, directory=tmp_path)
    assert again.get(7, "first") == {"v": 1} and again.get(7, "second") == {"v": 2}
    assert again.get(7, "third") is None


@pytest.mark.slow
def test_llama_backend_generates_like_hf_and_stops():
    """llama.cpp on the GGUF and transformers on its conversion: same template, same
    greedy start; both stop at a stop string; seeded sampling repeats."""
    needs("llama_cpp")
    needs("torch")
    needs("transformers")
    from nfeval.models import load_model

    fast = load_model("smollm2-135m-instruct", backend="llama")
    slow = load_model("smollm2-135m-instruct")
    prompt = answer_prompt(fast, "Is coffee healthy?", system="Be brief.")
    assert prompt == answer_prompt(slow, "Is coffee healthy?", system="Be brief.")
    a = fast.generate(prompt, max_tokens=8)
    b = slow.generate(prompt, max_tokens=8)
    assert a.n_tokens == 8 and a.text.split()[:3] == b.text.split()[:3]
    first_word = a.text.split()[1]
    for lm in (fast, slow):
        g = lm.generate(prompt, max_tokens=8, stop=[first_word])
        assert first_word not in g.text and g.finish_reason == "stop"
    s1 = fast.generate(prompt, temperature=1.0, top_p=0.9, max_tokens=12, seed=4)
    s2 = fast.generate(prompt, temperature=1.0, top_p=0.9, max_tokens=12, seed=4)
    assert s1.text == s2.text
    with pytest.raises(NfevalError, match="max_tokens"):
        fast.generate(prompt, max_tokens=0)
