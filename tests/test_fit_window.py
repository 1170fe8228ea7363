"""A too-long answer is cut from its end to fit the model's window; the instructions and the
references never are (nfeval.models.window), for every judge method, D.A. and the reference
generators, and the output says how much was cut."""

import json

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval.models.window import fit_text

LONG = " ".join(f"word{i % 97}" for i in range(20_000))  # a 20,000-word candidate


class _Words:
    """A tokenizer of whitespace-separated words (one token each)."""

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": list(range(len(text.split())))}

    def decode(self, ids):
        return " ".join(self._words[: len(ids)])


class _WordModel:
    token_level = True

    def __init__(self, window):
        self.max_length = window
        self.tokenizer = _Words()

    def encode_context(self, text):
        return text.split()

    def encode_continuation(self, text):
        self.tokenizer._words = text.split()
        return text.split()


def test_a_text_that_fits_comes_back_whole():
    m = _WordModel(100)
    assert fit_text(m, lambda t: f"rate this: {t} now", "a b c", reserve=5) == ("a b c", 0)


def test_a_long_text_is_cut_from_its_end_and_the_prompt_then_fits():
    m = _WordModel(100)
    build = lambda t: f"instructions one two three: {t} end"  # noqa: E731
    text = " ".join(f"w{i}" for i in range(500))
    cut, n = fit_text(m, build, text, reserve=10)
    assert text.startswith(cut) and n == 500 - len(cut.split())
    assert len(build(cut).split()) + 10 <= 100
    assert build(cut).startswith("instructions one two three:")


def test_no_room_for_the_text_is_a_clear_error():
    m = _WordModel(20)
    with pytest.raises(NfevalError, match="no room is left for the answer"):
        fit_text(m, lambda t: "x " * 18 + t, "a b c d", reserve=5)


def test_a_model_without_its_tokenizer_is_sent_the_text_whole():
    class Server:
        token_level = False

    assert fit_text(Server(), lambda t: t, LONG, reserve=1) == (LONG, 0)


# -- real judges ---------------------------------------------------------------------

SMOL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def judge():
    needs("torch")
    needs("transformers")
    from nfeval.models import load_model

    return load_model(SMOL, max_length=1024)  # a small window: the same rule, quicker to run


def _question():
    from nfeval.data.loaders import GradedAnswer, GradedQuestion

    refs = [GradedAnswer(f"r{g}", f"Reference answer of grade {g} about stale bread.", g, g)
            for g in (3, 2, 1, 0)]
    cands = [GradedAnswer("long", LONG, 2, 2),
             GradedAnswer("short", "Starch recrystallises faster in the cold.", 3, 3)]
    return GradedQuestion("q", "Why does bread go stale faster in the fridge?", refs + cands), refs, cands


@pytest.mark.slow
@pytest.mark.parametrize("method", ["linkage", "pointwise", "pointwise-ref", "pairwise"])
def test_every_judge_method_keeps_its_instructions_and_says_what_it_cut(judge, method):
    from nfeval.linkage.judges import LABEL_CLOSE, JudgeConfig, judge_candidates, judge_labels, \
        judge_prompts

    q, refs, cands = _question()
    cfg = JudgeConfig(method=method, mode="prob")
    prompts = judge_prompts(judge, q, refs, cands, cfg)
    labels = [judge.encode_continuation(lab + LABEL_CLOSE) for lab in judge_labels(cfg, len(refs))]
    for p in prompts:
        n = len(judge.encode_context(p.prefix)) + len(judge.encode_continuation(p.suffix))
        assert n + max(map(len, labels)) <= judge.max_length  # the whole prompt fits
        text = p.text
        if method in ("linkage", "pointwise-ref"):  # the whole reference list is kept
            assert all(f"Answer {k}:Reference answer of grade {3 - k + 1}" in text
                       for k in range(1, 5))
        if method == "pairwise":  # the reference it is compared with is kept whole
            assert f"Reference answer of grade {refs[p.reference].grade} about" in text
        assert ("[[" in text) and text.rstrip().endswith("[[")  # the instructions' end is kept
        if p.candidate == 0:
            assert p.cut_tokens > 10_000 and "word0 word1 word2" in text
        else:
            assert p.cut_tokens == 0
    res = judge_candidates(judge, q, refs, cands, cfg)
    assert res.cut_tokens[0] > 10_000 and res.cut_tokens[1] == 0
    assert all(s == s for s in res.scores)  # scored, not dropped


@pytest.mark.slow
def test_dispute_awareness_cuts_the_answer_not_the_demonstrations(judge):
    from nfeval.debateqa.da import da_prompt, da_scores

    out = da_scores(judge, {1: "Is coffee healthy?", 2: "Is coffee healthy?"},
                    {1: LONG, 2: "It is debated: some studies say yes, others no."},
                    progress=False)
    assert out[0].cut_tokens > 10_000 and out[1].cut_tokens == 0
    assert 0 < out[0].p_one < 1
    demo = da_prompt("Q?", "A.")
    assert "Response: 1" in demo  # what the prompt keeps: the release's demonstrations


@pytest.mark.slow
def test_the_reference_generator_cuts_the_ground_truth_it_rewrites():
    needs("llama_cpp")
    from nfeval.data.loaders import GradedAnswer, GradedQuestion
    from nfeval.linkage.generated import generate_reference_lists
    from nfeval.linkage.settings import GenerationSettings
    from nfeval.models import load_model

    gen = load_model(SMOL, backend="llama", n_ctx=1024)
    q = GradedQuestion("q", "Why does bread go stale?", [])
    refs = generate_reference_lists(gen, [gen], [q], {"q": GradedAnswer("gt", LONG, 3, 3)},
                                    generation=GenerationSettings(1, 16, 16),
                                    use_cache=False, progress=False)
    assert refs[0].cut_tokens > 10_000


@pytest.mark.slow
def test_the_linkage_command_reports_the_cut_candidate(models_extra, tmp_path, capsys, monkeypatch):
    from nfeval.cli import main
    from nfeval.models import hf

    # the cut is the same at any window: 1,024 tokens instead of SmolLM2's 8,192 keeps the
    # scoring short (the window itself comes from the model config, tested in test_models_hf)
    monkeypatch.setattr(hf, "_max_length_of", lambda config, tokenizer: 1024)

    line = {"id": "q", "question": "Why does bread go stale faster in the fridge?",
            "candidates": [{"id": "long", "text": LONG, "grade": 1},
                           {"id": "short", "text": "Starch recrystallises in the cold.",
                            "grade": 3}],
            "references": [{"text": "Starch recrystallises fastest just above freezing.",
                            "grade": 3}, {"text": "The fridge dries it.", "grade": 1}]}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(line) + "\n")
    out = tmp_path / "scores.csv"
    assert main(["linkage", "--answers", str(path), "--model", SMOL, "--out", str(out),
                 "--no-cache", "--no-progress"]) == 0
    said = capsys.readouterr()
    assert "1 cut to fit the model's window" in said.out + said.err
    import pandas as pd

    table = pd.read_csv(out).set_index("candidate_id")
    assert table.loc["long", "cut_tokens"] > 10_000 and table.loc["short", "cut_tokens"] == 0
