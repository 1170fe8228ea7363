"""Scoring on llama.cpp's batch API (nfeval.models.llama_kernel) against the float32 backend."""

import math

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval.models.llama_kernel import label_tree

pytestmark = pytest.mark.slow
NAME = "qwen2.5-coder-0.5b-instruct"


def test_label_tree_lists_each_labels_leading_tokens_once_ancestors_first():
    assert label_tree([[1, 9], [2, 9], [1, 0, 9]]) == [(1,), (2,), (1, 0)]
    assert label_tree([[5], [6]]) == []


@pytest.fixture(scope="module")
def models():
    needs("llama_cpp")  # against the float32 transformers backend: both extras
    needs("torch")
    needs("transformers")
    from nfeval.models import load_model

    return load_model(NAME, backend="llama", n_ctx=4096, score_threads=2), load_model(NAME)


def _dist(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    return [x / sum(e) for x in e]


def test_shared_prefix_labels_equal_whole_prompts_and_stay_near_float32(models):
    fast, ref = models
    prefix = fast.chat_prompt("Rank the answer from 1 to 12. The question: why is the sky blue? "
                              "The answer: ")
    suffixes = ["Because of Rayleigh scattering.", "It reflects the sea.", "", "Blue light scatters"
                " more than red light in the air, so the sky looks blue from the ground."]
    labels = [f"{k}]]" for k in range(1, 13)]  # "1]]" and "10]]".."12]]" share a first token
    ctx = fast.encode_context(prefix)
    sfx = [fast.encode_continuation(s) for s in suffixes]
    lab = [fast.encode_continuation(x) for x in labels]
    shared = fast.score_labels_ids(ctx, sfx, lab)  # one pass: a label tree per suffix
    named = fast.prefix_label_distribution(prefix, suffixes, labels)  # the same on text
    for d, a in zip(named, shared):
        assert [d[k] for k in labels] == pytest.approx(_dist(a), abs=1e-6)
    whole = [[r.total for r in fast.score_ids(ctx + s, lab)] for s in sfx]  # each prompt whole
    # llama.cpp picks its matrix kernels by the batch's size, so one prompt's numbers depend on
    # what else is in its batch: label probabilities moved by up to 0.018 between the shared
    # pass and each prompt alone (measured on this test), as far as float32 is from llama.cpp
    for a, b in zip(shared, whole):
        assert max(abs(x - y) for x, y in zip(_dist(a), _dist(b))) < 0.05
    f32 = ref.score_labels_ids(ctx, sfx, lab)
    for a, b in zip(shared, f32):  # 8-bit activations: near float32, not equal
        assert max(abs(x - y) for x, y in zip(_dist(a), _dist(b))) < 0.05
    # the prefix's cells are now reused from the last prompt's cache, computed in a batch of
    # another size: on an AVX2-only CPU the same call moved by 0.026 (measured on this test; an
    # avx512 machine gave the same values), the batch-size effect above, so the same bound
    again = fast.score_labels_ids(ctx, sfx, lab)
    for a, b in zip(shared, again):
        assert max(abs(x - y) for x, y in zip(_dist(a), _dist(b))) < 0.05


def test_continuations_and_the_window_rules(models):
    fast, ref = models
    got = fast.continuation_logprobs("The capital of France is", [" Paris.", " a city", " Paris."])
    want = ref.continuation_logprobs("The capital of France is", [" Paris.", " a city", " Paris."])
    assert [g.n for g in got] == [w.n for w in want]
    # the same continuation twice in one pass: llama.cpp's numbers depend on a token's row in
    # the batch (0.044 nats apart here), so they are close, not equal
    assert got[0].total == pytest.approx(got[2].total, abs=0.1)
    for g, w in zip(got, want):
        assert g.total == pytest.approx(w.total, abs=0.2)
    rows = fast.batch_label_logprobs(["Say 0 or 1: 1", "Say 0 or 1: 0"], ["0", "1"])
    assert all(set(r) == {"0", "1"} for r in rows)
    with pytest.raises(NfevalError, match="distinct"):
        fast.label_logprobs("x", ["1", "1"])
