"""The device a user asks for reaches every model load, as an argument (no global).

On a CPU machine no GPU exists, so torch is told one does and every loader's
device argument is recorded instead of used: the transformers backend, the
BERTScore scorer and the [CLS] encoder of the release's "BERTScore" (the
reproduction's sentence embedder behind retrieval, dedup and BERTopic:
src/repro/tests/test_device_reproduction.py).
"""

from __future__ import annotations

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval.runtime import Runtime, from_env, resolve_device

ASKED = "cuda:3"


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch sees a GPU; NFEVAL_DEVICE asks for it (the default of a load given no device)."""
    torch = needs("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("NFEVAL_DEVICE", ASKED)


class Recorder:
    def __init__(self):
        self.devices: list[str] = []


def test_a_gpu_asked_for_where_there_is_none_is_a_clear_error(monkeypatch):
    torch = needs("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NfevalError, match="no GPU"):
        resolve_device("cuda")
    assert resolve_device("auto") == "cpu"
    with pytest.raises(NfevalError, match="unknown device"):
        resolve_device("tpu")


@pytest.mark.slow
def test_transformers_backend_loads_on_the_asked_device(fake_gpu, monkeypatch):
    torch = needs("torch")
    transformers = needs("transformers")

    from nfeval.models.hf import HFModel

    rec = Recorder()

    class FakeLM(torch.nn.Module):
        def to(self, device):
            rec.devices.append(str(device))
            return self

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: FakeLM())
    from nfeval.models import load_model
    from nfeval.runtime import Runtime

    m = load_model("smollm2-135m-instruct")  # a load with no runtime: the environment's
    assert str(m.device) == ASKED and m.info.dtype == "bfloat16"  # auto on a GPU
    assert str(HFModel("smollm2-135m-instruct", Runtime(device=ASKED)).device) == ASKED
    assert str(HFModel("smollm2-135m-instruct").device) == "cpu"  # no edge: nothing read
    m.model  # the weights load where asked
    assert rec.devices == [ASKED]
    assert str(HFModel("smollm2-135m-instruct", device="cpu").device) == "cpu"


def test_bertscore_and_cls_encoder_use_the_asked_device(fake_gpu, monkeypatch):
    torch = needs("torch")
    bert_score = needs("bert_score")
    transformers = needs("transformers")

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
        lexical.bertscore_f1(["a candidate"], ["a reference"], device=ASKED)
        lexical.cls_cosine(["a candidate"], ["a reference"], device=ASKED)
        lexical.bertscore_f1(["a candidate"], ["a reference"], device="cuda:1")
    finally:
        embedding._bert_scorer.cache_clear()
        embedding._encoder.cache_clear()
    assert ("bertscore", ASKED) in rec.devices and ("cls", ASKED) in rec.devices
    assert ("bertscore", "cuda:1") in rec.devices


def test_cpu_default_is_float32_even_where_the_cpu_has_native_bf16(monkeypatch):
    """A CPU with avx512_bf16/AMX must not change the default dtype (numbers differ in bf16)."""
    torch = needs("torch")

    from nfeval import machine
    from nfeval.models.hf import _as_dtype, default_dtype

    monkeypatch.setattr(machine, "cpu_flags", lambda: ("avx2", "avx512f", "avx512_bf16", "amx_bf16"))
    assert machine.native_bf16()
    assert default_dtype("cpu") is torch.float32 and _as_dtype("auto", "cpu") is torch.float32
    assert _as_dtype("bfloat16", "cpu") is torch.bfloat16  # only when asked
    assert default_dtype("cuda") is torch.bfloat16


AMX = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
AMX_KIND = "x86_64/avx2+avx512f+avx512_bf16+amx_bf16"


def _fake_cpu(monkeypatch, flags, arch="x86_64", model="a CPU model never measured"):
    """This machine's CPU kind, faked: its flags (``cpu_flags`` is cached: replaced whole), its
    architecture and its model name."""
    from nfeval import machine

    monkeypatch.setattr(machine, "cpu_flags", lambda: tuple(flags))
    monkeypatch.setattr(machine, "cpu_model", lambda: model)
    monkeypatch.setattr(machine.platform, "machine", lambda: arch)


@pytest.mark.parametrize("flags, arch, want", [
    (AMX, "x86_64", "bfloat16"),  # the Xeon's kind: faster in two runs, its table agreed
    (("avx2",), "x86_64", None),
    (("avx2", "avx512f", "avx512_bf16"), "x86_64", None),  # 0.62x in one run of the kind
    (("avx2", "amx_bf16"), "x86_64", None),  # a kind never measured, whatever its flags
    (AMX, "aarch64", None),  # the kind includes the architecture
    ((), "x86_64", None),  # no /proc/cpuinfo
])
def test_the_listwise_judge_dtype_is_its_cpu_kinds_entry(monkeypatch, flags, arch, want):
    from nfeval import machine

    _fake_cpu(monkeypatch, flags, arch)
    _check_judge_dtype(machine, want)


@pytest.mark.parametrize("flags, model, want", [
    # the AMD EPYC of the avx512_bf16 kind: bf16 2.10-2.38x float32 in two runs, but its
    # judge_table moved a LINKAGE row by 0.018 (> 0.01): the rule keeps float32
    (("avx2", "avx512f", "avx512_bf16"), "AMD EPYC", None),
    (AMX, "Intel(R) Xeon(R) Processor", "bfloat16"),  # the kind's entry, whatever the model
    (AMX, "AMD EPYC", "bfloat16"),
])
def test_the_listwise_judge_dtype_on_a_cpu_model_follows_the_table_rule(monkeypatch, flags,
                                                                         model, want):
    from nfeval import machine

    _fake_cpu(monkeypatch, flags, model=model)
    _check_judge_dtype(machine, want)


def test_a_kind_on_a_cpu_model_is_looked_up_before_the_kind(monkeypatch):
    from types import MappingProxyType

    from nfeval import machine

    kind = "x86_64/avx2+avx512f+avx512_bf16"
    monkeypatch.setattr(machine, "LISTWISE_JUDGE_DTYPES", MappingProxyType({
        f"{kind} on AMD EPYC": ("bfloat16", "model"), kind: ("float16", "kind")}))
    _fake_cpu(monkeypatch, ("avx2", "avx512f", "avx512_bf16"), model="AMD EPYC")
    assert machine.listwise_judge_default() == (f"{kind} on AMD EPYC", "bfloat16", "model")
    _fake_cpu(monkeypatch, ("avx2", "avx512f", "avx512_bf16"), model="another CPU")
    assert machine.listwise_judge_default() == (kind, "float16", "kind")


def _check_judge_dtype(machine, want):
    assert machine.judge_dtype() == want
    default = machine.listwise_judge_default()
    if want is None:
        assert default is None
    else:
        kind, dtype, reason = default
        assert (kind, dtype) == (machine.machine_tag(), want) and reason


def test_the_judge_dtype_table_is_frozen_and_names_kinds_as_machine_tag_does():
    from nfeval import machine

    table = machine.LISTWISE_JUDGE_DTYPES
    with pytest.raises(TypeError):
        table["x86_64/avx2"] = ("bfloat16", "")  # type: ignore[index]
    for key, (dtype, reason) in table.items():
        kind, on, model = key.partition(" on ")
        assert not on or model.strip() == model != "", key  # a kind, or a kind on a CPU model
        arch, _, flags = kind.partition("/")
        named = flags.split("+")
        assert arch and named == [f for f in machine.RELEVANT_FLAGS if f in named], kind
        assert dtype in ("bfloat16", "float16") and reason and "\n" not in reason
