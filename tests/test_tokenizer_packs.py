"""The tokenizer packs (data/tokenizers): what the store's keys and prompts need of an
embedded model, with no weights read."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from nfeval import NfevalError
from conftest import NO_WEIGHTS
from nfeval.models import registry
from nfeval.paths import ROOT

EMBEDDED_LMS = [s.name for s in registry.list_models() if s.kind == "embedded-gguf"]


@pytest.mark.parametrize("name", EMBEDDED_LMS)
def test_every_embedded_model_has_a_pack_of_its_gguf(name):
    pack = registry.tokenizer_pack(name)
    assert pack is not None, f"{name}: no data/tokenizers/{name}; run scripts/pack_tokenizers.py"
    man = json.loads((pack / registry.PACK_MANIFEST).read_text())
    assert man["gguf_sha256"] == registry.get_spec(name).sha256
    assert {"tokenizer.json", "tokenizer_config.json", "config.json"} <= set(man["files"])


def test_a_pack_unpacks_once_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    folder = registry.tokenizer_dir("smollm2-135m-instruct")
    assert folder.parent == tmp_path / "tokenizers"
    mtime = (folder / "tokenizer.json").stat().st_mtime_ns
    assert registry.tokenizer_dir("smollm2-135m-instruct") == folder
    assert (folder / "tokenizer.json").stat().st_mtime_ns == mtime


def test_a_damaged_pack_is_refused(tmp_path, monkeypatch):
    import shutil

    pack = tmp_path / "tokenizers" / "smollm2-135m-instruct"
    shutil.copytree(registry.tokenizer_pack("smollm2-135m-instruct"), pack)
    (pack / "config.json").write_text("{}")
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(registry, "tokenizer_pack", lambda name: pack)
    with pytest.raises(NfevalError, match="does not match its sha256 sums"):
        registry.tokenizer_dir("smollm2-135m-instruct")
    assert not (tmp_path / "cache" / "tokenizers").exists() or not any(
        p.name.startswith("smollm2") for p in (tmp_path / "cache" / "tokenizers").iterdir())
    man = json.loads((pack / registry.PACK_MANIFEST).read_text())
    man["gguf_sha256"] = "0" * 64
    (pack / registry.PACK_MANIFEST).write_text(json.dumps(man))
    with pytest.raises(NfevalError, match="made from another GGUF file"):
        registry.tokenizer_dir("smollm2-135m-instruct")


@pytest.mark.parametrize("name", EMBEDDED_LMS)
def test_the_pack_holds_the_files_of_this_machines_conversion(name):
    """Where this machine has converted the model (registry.prepare, from the GGUF), the pack
    unpacks to the same bytes. (tests/test_models_hf.py checks SmolLM2's pack against the
    tokenizer transformers builds from the GGUF file itself.)"""
    folder = registry.model_dir(name)
    if not registry._valid(folder, registry.get_spec(name)):
        pytest.skip(f"{name} is not converted here")
    man = json.loads((registry.tokenizer_pack(name) / registry.PACK_MANIFEST).read_text())
    from nfeval.hashing import sha256_file

    assert {f: sha256_file(folder / f) for f in man["files"]} == man["files"]


def test_models_load_with_no_weight_package_and_no_network(models_extra, tmp_path):
    """Both backends build (tokenizer, template, store key) in a Python where the weight
    packages cannot be imported and the network fails; the weights are asked for only when
    an item must be computed, and then the error says how to install them."""
    code = (
        "from nfeval.models import load_model\n"
        "from nfeval import NfevalError\n"
        "for backend in ('llama', 'hf'):\n"
        "    m = load_model('smollm2-135m-instruct', backend=backend)\n"
        "    print(backend, m.info.checksum[:8], len(m.apply_chat_template("
        "[{'role': 'user', 'content': 'hi'}])))\n"
        "try:\n"
        "    m.label_logprobs('hi', ['a', 'b'])\n"
        "except NfevalError as exc:\n"
        "    print('error:', exc)\n")
    env = {**os.environ, "NFEVAL_CACHE": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(NO_WEIGHTS), str(ROOT / "src")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("llama b179c952 ") and lines[1].startswith("hf b179c952 ")
    assert lines[0].split()[-1] == lines[1].split()[-1]  # the same rendered prompt length
    assert "error:" in lines[2] and "make models" in lines[2]
