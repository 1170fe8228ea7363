"""A local model whose outputs an item store holds needs no torch: the chat-template rules
(nfeval.models.templates) import none, and a transformers or llama.cpp model loads from its
tokenizer pack (tokenizer, chat template, config) without importing it; torch comes in where
the model first computes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from testkit import needs

from nfeval import NfevalError
from nfeval.models.base import Message
from nfeval.models.templates import render_messages, template_mode


class _Tokenizer:
    def __init__(self, chat_template=None, eos_token="</s>"):
        self.chat_template, self.eos_token = chat_template, eos_token


def test_template_mode_follows_the_tokenizer_and_the_model_type():
    assert template_mode(_Tokenizer("{{ x }}"), None) == "model"
    assert template_mode(_Tokenizer(), "gpt2") == "legacy-eos"
    assert template_mode(_Tokenizer(), "gemma3_text") == "none"
    assert template_mode(_Tokenizer(), None, "none") == "none"
    with pytest.raises(NfevalError, match="no chat template"):
        template_mode(_Tokenizer(), "gpt2", "model")
    with pytest.raises(NfevalError, match="Unknown chat_template"):
        template_mode(_Tokenizer(), None, "chatml")


def test_render_messages_without_a_model_template():
    msgs = [Message("user", "a"), {"role": "assistant", "content": "b"}]
    assert render_messages(_Tokenizer(eos_token="<e>"), "legacy-eos", msgs) == "a<e>b<e>"
    assert render_messages(None, "none", msgs) == "a\n\nb"


def test_the_transformers_backend_still_exports_the_template_rules():
    needs("torch")
    from nfeval.models import hf, templates

    assert hf.template_mode is templates.template_mode
    assert hf.render_messages is templates.render_messages


def _load_in_a_new_process(backend: str, then: str = "") -> list[str]:
    code = ("import sys\n"
            "from nfeval.models import load_model\n"
            f"m = load_model('qwen2.5-coder-0.5b-instruct', backend={backend!r})\n"
            "assert m.chat_prompt('hi').count('<|im_start|>') >= 1\n"
            "print('torch' in sys.modules, m.info.dtype, m.max_length)\n" + then)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()


def test_a_llama_model_loads_from_its_tokenizer_pack_without_torch():
    needs("llama_cpp")
    needs("transformers")
    assert _load_in_a_new_process("llama")[-1].split()[0] == "False"


def test_a_transformers_model_loads_without_torch_until_a_torch_object_is_asked_for():
    needs("torch")
    needs("transformers")
    lines = _load_in_a_new_process("hf", "print(m.dtype, m.device, 'torch' in sys.modules)\n")
    assert lines[-2] == "False float32 32768"
    assert lines[-1] == "torch.float32 cpu True"


def test_a_tokenizer_packs_config_read_as_json_is_what_autoconfig_reads():
    """HFModel reads a pack's config.json itself (model type and window): for every pack of
    the registry, the same as transformers' AutoConfig (with its classes' defaults)."""
    needs("torch")
    transformers = needs("transformers")
    from nfeval.models import registry
    from nfeval.models.hf import _max_length_of, _pack_config

    packs = [s.name for s in registry.list_models() if s.kind == "embedded-gguf"]
    assert packs
    for name in packs:
        folder = registry.resolve(name, weights=False).path
        light = _pack_config(folder)
        assert light is not None, name
        full = transformers.AutoConfig.from_pretrained(str(folder))
        tok = registry.pretrained("tokenizer", folder)
        assert light.model_type == full.model_type, name
        assert _max_length_of(light, tok) == _max_length_of(full, tok), name
    assert _pack_config(Path(__file__).parent) is None  # not a pack: AutoConfig reads it


def test_dtype_names_resolve_without_torch():
    needs("torch")
    from nfeval.models.hf import _dtype_name

    assert _dtype_name(None) == _dtype_name("auto") == "float32"
    assert _dtype_name("auto", "cuda:0") == "bfloat16"
    assert _dtype_name("BF16") == "bfloat16" and _dtype_name("fp32") == "float32"
    import torch

    assert _dtype_name(torch.float16) == "float16"
    with pytest.raises(NfevalError, match="Unknown dtype"):
        _dtype_name("int8")
