"""The local backends' chat-template rules (nfeval.models.templates) need no torch, and a
llama.cpp model whose tokenizer pack is unpacked loads without importing torch."""

from __future__ import annotations

import subprocess
import sys

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


def test_a_llama_model_loads_from_its_tokenizer_pack_without_torch():
    needs("llama_cpp")
    needs("transformers")
    code = ("import sys\n"
            "from nfeval.models import load_model\n"
            "m = load_model('qwen2.5-coder-0.5b-instruct', backend='llama')\n"
            "assert m.chat_prompt('hi').count('<|im_start|>') >= 1\n"
            "print('torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"
