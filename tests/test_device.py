"""The device a user asks for reaches every model load, as an argument (no global).

On a CPU machine no GPU exists, so torch is told one does and every loader's
device argument is recorded instead of used: the transformers backend, the
BERTScore scorer, the [CLS] encoder of the release's "BERTScore", and the
sentence embedder behind retrieval, dedup and BERTopic.
"""

from __future__ import annotations

import pytest
import torch

from nfeval import NfevalError
from nfeval.runtime import Runtime, from_env, resolve_device

ASKED = "cuda:3"


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch sees a GPU; NFEVAL_DEVICE asks for it (the default of a load given no device)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("NFEVAL_DEVICE", ASKED)


class Recorder:
    def __init__(self):
        self.devices: list[str] = []


def test_profile_carries_device_and_dtype_and_the_environment_overrides_it(monkeypatch):
    from nfeval_repro.profiles import get_profile

    for var in ("NFEVAL_DEVICE", "NFEVAL_DTYPE", "NFEVAL_BATCH_TOKENS"):
        monkeypatch.delenv(var, raising=False)
    prof = get_profile("embedded")
    assert (prof.device, prof.dtype, prof.batch_tokens) == ("cpu", "float32", 2048)
    assert from_env() == Runtime()  # selecting a profile set nothing globally
    monkeypatch.setenv("NFEVAL_DEVICE", "cpu:0")
    monkeypatch.setenv("NFEVAL_BATCH_TOKENS", "512")
    prof = get_profile("embedded")
    assert prof.device == "cpu:0" and prof.batch_tokens == 512 and prof.dtype == "float32"
    monkeypatch.setenv("NFEVAL_BATCH_TOKENS", "many")
    with pytest.raises(NfevalError, match="NFEVAL_BATCH_TOKENS must be an integer"):
        get_profile("embedded")


def test_profile_load_passes_its_device_dtype_and_batch_size(monkeypatch):
    import nfeval.models as models
    from nfeval_repro.profiles import get_profile

    seen = {}
    monkeypatch.setattr(models, "load_model", lambda name, backend="hf", **kw: seen.update(
        name=name, backend=backend, **kw))
    monkeypatch.setenv("NFEVAL_DEVICE", "cpu:0")
    get_profile("embedded").load("smollm2-135m-instruct")
    assert seen == {"name": "smollm2-135m-instruct", "backend": "hf", "device": "cpu:0",
                    "dtype": "float32", "batch_tokens": 2048}
    seen.clear()
    get_profile("embedded").load("smollm2-135m-instruct", backend="llama", n_ctx=512)
    assert seen == {"name": "smollm2-135m-instruct", "backend": "llama", "n_ctx": 512}


def test_a_gpu_asked_for_where_there_is_none_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NfevalError, match="no GPU"):
        resolve_device("cuda")
    assert resolve_device("auto") == "cpu"
    with pytest.raises(NfevalError, match="unknown device"):
        resolve_device("tpu")


@pytest.mark.slow
def test_transformers_backend_loads_on_the_asked_device(fake_gpu, monkeypatch):
    import transformers

    from nfeval.models.hf import HFModel

    rec = Recorder()

    class FakeLM(torch.nn.Module):
        def to(self, device):
            rec.devices.append(str(device))
            return self

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: FakeLM())
    m = HFModel("smollm2-135m-instruct")
    assert str(m.device) == ASKED and m.info.dtype == "bfloat16"  # auto on a GPU
    m.model  # the weights load where asked
    assert rec.devices == [ASKED]
    assert str(HFModel("smollm2-135m-instruct", device="cpu").device) == "cpu"


def test_bertscore_and_cls_encoder_use_the_asked_device(fake_gpu, monkeypatch):
    import bert_score
    import transformers

    from nfeval.linkage import embedding, lexical

    rec = Recorder()

    class FakeScorer:
        def __init__(self, *a, device=None, **k):
            rec.devices.append(("bertscore", device))

        def score(self, cands, refs, batch_size=64):
            t = torch.zeros(len(cands))
            return t, t, t

    class FakeEncoder(torch.nn.Module):
        config = type("C", (), {"hidden_size": 4})()

        def to(self, device):
            rec.devices.append(("cls", str(device)))
            return self

        def forward(self, input_ids=None, attention_mask=None):
            return type("O", (), {"last_hidden_state": torch.ones(input_ids.shape[0],
                                                                  input_ids.shape[1], 4)})()

    monkeypatch.setattr(bert_score, "BERTScorer", FakeScorer)
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", lambda *a, **k: FakeEncoder())
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **k: self)
    embedding._bert_scorer.cache_clear()
    embedding._encoder.cache_clear()
    try:
        lexical.bertscore_f1(["a candidate"], ["a reference"])
        lexical.cls_cosine(["a candidate"], ["a reference"])
        lexical.bertscore_f1(["a candidate"], ["a reference"], device="cuda:1")
    finally:
        embedding._bert_scorer.cache_clear()
        embedding._encoder.cache_clear()
    assert ("bertscore", ASKED) in rec.devices and ("cls", ASKED) in rec.devices
    assert ("bertscore", "cuda:1") in rec.devices  # an argument wins over the environment


def test_sentence_embedder_uses_the_asked_device(fake_gpu, monkeypatch):
    import sentence_transformers

    from nfeval_repro.debateqa.curation import documents

    rec = Recorder()

    class FakeST:
        def __init__(self, path, device=None, **k):
            rec.devices.append(device)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeST)
    documents._encoder_on.cache_clear()
    try:
        documents._encoder("minilm-l6")
        documents._encoder("minilm-l6", device="cpu")
    finally:
        documents._encoder_on.cache_clear()
    assert rec.devices == [ASKED, "cpu"]


def test_bertopic_embeds_through_the_same_encoder():
    """BERTopic gets its embedding model from documents._encoder (so the device above)."""
    import inspect

    from nfeval_repro.debateqa.curation import topics

    assert "_encoder(" in inspect.getsource(topics)


def test_cpu_default_is_float32_even_where_the_cpu_has_native_bf16(monkeypatch):
    """A CPU with avx512_bf16/AMX must not change the default dtype (numbers differ in bf16)."""
    import torch

    from nfeval import machine
    from nfeval.models.hf import _as_dtype, default_dtype

    monkeypatch.setattr(machine, "cpu_flags", lambda: ("avx2", "avx512f", "avx512_bf16", "amx_bf16"))
    assert machine.native_bf16()
    assert default_dtype("cpu") is torch.float32 and _as_dtype("auto", "cpu") is torch.float32
    assert _as_dtype("bfloat16", "cpu") is torch.bfloat16  # only when asked
    assert default_dtype("cuda") is torch.bfloat16
