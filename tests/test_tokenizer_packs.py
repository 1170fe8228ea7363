"""The tokenizer packs (data/tokenizers): what the store's keys and prompts need of an
embedded model, with no weights read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import NO_WEIGHTS, needs

import nfeval
import nfeval.paths
from nfeval import NfevalError
from nfeval.models import registry

EMBEDDED_LMS = [s.name for s in registry.list_models() if s.kind == "embedded-gguf"]
#: the packs are the checkout's data/tokenizers: an installed wheel carries none (its library
#: reads the GGUF file's own tokenizer instead), so these tests need the library of a checkout
packs = pytest.mark.skipif(not nfeval.paths.IN_CHECKOUT,
                           reason="needs the checkout's data/tokenizers (a wheel has no packs)")


@packs
@pytest.mark.parametrize("name", EMBEDDED_LMS)
def test_every_embedded_model_has_a_pack_of_its_gguf(name):
    pack = registry.tokenizer_pack(name)
    assert pack is not None, f"{name}: no data/tokenizers/{name}; run scripts/pack_tokenizers.py"
    man = json.loads((pack / registry.PACK_MANIFEST).read_text())
    assert man["gguf_sha256"] == registry.get_spec(name).sha256
    assert {"tokenizer.json", "tokenizer_config.json", "config.json"} <= set(man["files"])


@packs
def test_a_pack_unpacks_once_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    folder = registry.tokenizer_dir("smollm2-135m-instruct")
    assert folder.parent == tmp_path / "tokenizers"
    mtime = (folder / "tokenizer.json").stat().st_mtime_ns
    assert registry.tokenizer_dir("smollm2-135m-instruct") == folder
    assert (folder / "tokenizer.json").stat().st_mtime_ns == mtime


@packs
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


@packs
@pytest.mark.parametrize("name", EMBEDDED_LMS)
def test_the_pack_holds_the_files_of_this_machines_conversion(name):
    """Where this machine has converted the model (registry.prepare, from the GGUF), the pack
    unpacks to the same bytes. (tests/test_models_hf.py checks SmolLM2's pack against the
    tokenizer transformers builds from the GGUF file itself.)"""
    folder = registry.converted_dir(name)  # this environment's versions' conversion only
    if folder is None:
        pytest.skip(f"{name} is not converted by this environment's versions")
    man = json.loads((registry.tokenizer_pack(name) / registry.PACK_MANIFEST).read_text())
    from nfeval.hashing import sha256_file

    assert {f: sha256_file(folder / f) for f in man["files"]} == man["files"]


# ------------------------------------------------------------- the converted-model cache
# Folders are built by hand (a manifest, a config.json, an empty safetensors file): no test
# here converts a model.

SMALL = "smollm2-135m-instruct"


def _converted(folder, versions, sha256=None):
    """A folder that looks like a finished conversion by the code of ``versions``."""
    folder.mkdir(parents=True)
    man = {"name": SMALL, "gguf_sha256": sha256 or registry.get_spec(SMALL).sha256,
           "versions": versions}
    (folder / registry.MANIFEST).write_text(json.dumps(man))
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty NFEVAL_CACHE, and a prepare() whose conversion is recorded, not run."""
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    calls = []

    def convert(spec, gguf, out):
        calls.append(spec.name)
        (out / "config.json").write_text("{}")
        (out / "model.safetensors").write_bytes(b"")
        return {}

    monkeypatch.setattr(registry, "_convert", convert)
    monkeypatch.setattr(registry, "gguf_file", lambda name: tmp_path / "model.gguf")
    return tmp_path / "cache", calls


def test_the_conversion_versions_name_the_converting_packages():
    needs("transformers")  # and torch, tokenizers, gguf: the models extra
    versions = registry.conversion_versions()
    assert set(versions) == {"nfeval_conversion", "transformers", "tokenizers", "torch", "gguf"}
    assert versions["nfeval_conversion"] == registry.CONVERSION_VERSION
    assert versions["transformers"]  # installed wherever these tests run


@pytest.mark.parametrize("changed", ["transformers", "tokenizers", "torch", "gguf",
                                     "nfeval_conversion"])
def test_the_key_changes_when_any_one_version_changes(changed, cache):
    ours = registry.conversion_versions()
    other = {**ours, changed: "0.0.0-other" if ours[changed] != "0.0.0-other" else "1"}
    assert registry.conversion_key(SMALL, other) != registry.conversion_key(SMALL, ours)
    assert registry.model_dir(SMALL, other) != registry.model_dir(SMALL)
    assert registry.model_dir(SMALL).parent == cache[0] / "models"
    assert registry.model_dir(SMALL).name == f"{SMALL}-{registry.conversion_key(SMALL)}"
    # and the model's GGUF is part of the key: another model never shares one
    assert registry.conversion_key("gemma3-270m", ours) != registry.conversion_key(SMALL, ours)


def test_an_old_unkeyed_folder_is_ignored_and_converted_beside(cache):
    root, calls = cache
    old = _converted(root / "models" / SMALL, registry.conversion_versions())
    assert registry.converted_dir(SMALL) is None
    folder = registry.prepare(SMALL)
    assert calls == [SMALL] and folder == registry.model_dir(SMALL) != old
    assert registry.converted_dir(SMALL) == folder
    assert registry.read_manifest(folder)["versions"] == registry.conversion_versions()
    assert (old / "config.json").is_file()  # left alone, not deleted
    assert registry.other_model_dirs() == [(old, "unkeyed")]


@pytest.mark.parametrize("changed", ["transformers", "tokenizers"])
def test_a_folder_at_the_key_with_other_versions_is_refused(changed, cache):
    root, calls = cache
    versions = {**registry.conversion_versions(), changed: "0.0.0-other"}
    folder = _converted(registry.model_dir(SMALL), versions)
    assert registry.converted_dir(SMALL) is None
    assert not registry._valid(folder, registry.get_spec(SMALL))
    with pytest.raises(NfevalError, match=f"{changed} 0.0.0-other .*Fix: delete it") as err:
        registry.prepare(SMALL)
    assert "\n" not in str(err.value)
    assert calls == [] and (folder / "model.safetensors").is_file()


def test_a_folder_of_this_environments_versions_is_used_without_converting(cache, capsys):
    from nfeval.cli import main

    root, calls = cache
    folder = _converted(registry.model_dir(SMALL), registry.conversion_versions())
    other = _converted(registry.model_dir(SMALL, {**registry.conversion_versions(),
                                                  "transformers": "0.0.0-other"}),
                       {**registry.conversion_versions(), "transformers": "0.0.0-other"})
    assert registry.prepare(SMALL) == folder and registry.converted_dir(SMALL) == folder
    assert registry.resolve(SMALL).path == str(folder)
    assert calls == []
    assert registry.other_model_dirs() == [(other, "other versions")]
    assert main(["models", "list"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith(SMALL))
    assert f"converted: {folder}" in line
    assert f"{other}: another environment's conversion" in out


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
           "PYTHONPATH": os.pathsep.join([str(NO_WEIGHTS), str(Path(nfeval.__file__).resolve().parents[1])])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("llama b179c952 ") and lines[1].startswith("hf b179c952 ")
    assert lines[0].split()[-1] == lines[1].split()[-1]  # the same rendered prompt length
    assert "error:" in lines[2] and "make models" in lines[2]
