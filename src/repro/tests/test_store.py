"""The committed per-item store: every model output is read back, never recomputed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nfeval import NfevalError
from nfeval.models.base import Generation, LanguageModel, ModelInfo, TokenLogprobs, normalize
from nfeval_repro.store import (
    ItemStore,
    StoredModel,
    active_store,
    cached_steps,
    close_store,
    recorded_costs,
    stored,
    use_store,
)


class CountingModel(LanguageModel):
    """A deterministic fake model that counts what it was asked to compute."""

    info = ModelInfo(name="counting/model", backend="test", source="test", dtype="float32")

    def __init__(self):
        self.calls: list[tuple] = []

    def continuation_logprobs(self, context, continuations):
        self.calls.append(("cont", context, tuple(continuations)))
        return [TokenLogprobs(list(range(len(c))), list(c), [-0.5] * len(c), 0)
                for c in continuations]

    def label_logprobs(self, prompt, labels):
        self.calls.append(("labels", prompt, tuple(labels)))
        return {lab: -float(len(prompt) % 7 + i) for i, lab in enumerate(labels)}

    def label_distribution(self, prompt, labels):
        return normalize(self.label_logprobs(prompt, labels))

    def prefix_label_logprobs(self, prefix, suffixes, labels):
        self.calls.append(("prefix", prefix, tuple(suffixes)))
        return [{lab: -float(len(s) + i) for i, lab in enumerate(labels)} for s in suffixes]

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls.append(("gen", prompt, seed))
        return Generation(f"reply to {prompt} #{seed}", "stop", 3)

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(m.content for m in messages)


@pytest.fixture(autouse=True)
def _no_active_store():
    close_store()
    yield
    close_store()


def store_at(tmp_path, artefact="t_art"):
    return ItemStore(artefact, tmp_path / artefact / "items",
                     sorted((tmp_path).glob("*/items")))


def test_every_kind_of_call_is_stored_and_read_back(tmp_path):
    inner = CountingModel()
    m = StoredModel(inner, store_at(tmp_path))
    first = (m.continuation_logprobs("ctx", ["ab", "cde"]),
             m.label_distribution("prompt", ["0", "1"]),
             m.prefix_label_logprobs("pre", ["x", "yy"], ["A", "B"]),
             m.batch_label_logprobs(["p1", "p22"], ["0", "1"]),
             m.generate("hello", seed=3, stop=["]]"]))
    n_calls = len(inner.calls)
    inner2 = CountingModel()
    again = StoredModel(inner2, store_at(tmp_path))
    second = (again.continuation_logprobs("ctx", ["ab", "cde"]),
              again.label_distribution("prompt", ["0", "1"]),
              again.prefix_label_logprobs("pre", ["x", "yy"], ["A", "B"]),
              again.batch_label_logprobs(["p1", "p22"], ["0", "1"]),
              again.generate("hello", seed=3, stop=["]]"]))
    assert n_calls == 6 and inner2.calls == []  # nothing recomputed (batch: 2 prompts)
    assert [(t.total, t.n, t.truncated) for t in first[0]] == \
           [(t.total, t.n, t.truncated) for t in second[0]] == [(-1.0, 2, 0), (-1.5, 3, 0)]
    assert second[0][1].mean_nll == pytest.approx(0.5)
    assert first[1] == pytest.approx(second[1])
    assert first[2] == second[2] and first[3] == second[3]
    assert second[4].text == first[4].text == "reply to hello #3"


def test_only_missing_items_are_computed(tmp_path):
    inner = CountingModel()
    m = StoredModel(inner, store_at(tmp_path))
    m.prefix_label_logprobs("pre", ["a", "b"], ["1", "2"])
    m.prefix_label_logprobs("pre", ["a", "b", "c"], ["1", "2"])
    assert inner.calls[-1] == ("prefix", "pre", ("c",))
    # a different input is a different item: another prefix, other labels, another seed
    m.prefix_label_logprobs("pre2", ["a"], ["1", "2"])
    m.prefix_label_logprobs("pre", ["a"], ["1", "3"])
    m.generate("hello", seed=1)
    m.generate("hello", seed=2)
    assert len(inner.calls) == 6


def test_a_prompt_asked_twice_in_one_call_is_computed_once_and_gets_one_value(tmp_path):
    """A batched kernel may give two copies of one prompt values 1e-8 apart; the store keeps one
    value per key, so the computing run must use that one value in both places (else its table
    differs from the rebuild's in the eighth digit)."""

    class Jittery(CountingModel):
        def prefix_label_logprobs(self, prefix, suffixes, labels):
            self.calls.append(("prefix", prefix, tuple(suffixes)))
            return [{lab: -1.0 - 1e-8 * k for lab in labels} for k, _ in enumerate(suffixes)]

    inner = Jittery()
    m = StoredModel(inner, store_at(tmp_path))
    live = m.prefix_label_logprobs("pre", ["x", "y", "x"], ["A", "B"])
    assert inner.calls == [("prefix", "pre", ("x", "y"))]  # "x" computed once
    assert live[0] == live[2]
    again = StoredModel(CountingModel(), store_at(tmp_path))
    assert again.prefix_label_logprobs("pre", ["x", "y", "x"], ["A", "B"]) == live
    store = store_at(tmp_path)
    assert store.cached_many("step", [1, 2, 1], lambda xs: [x * 10 for x in xs]) == [10, 20, 10]
    assert store.misses == 2


def test_a_line_cut_short_is_ignored_and_appends_continue(tmp_path):
    store = store_at(tmp_path)
    m = StoredModel(CountingModel(), store)
    m.label_logprobs("p", ["0", "1"])
    path = next((tmp_path / "t_art" / "items").glob("*.labels.jsonl"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"k": "abc", "v": [1.0')  # killed mid-write
    inner = CountingModel()
    m2 = StoredModel(inner, store_at(tmp_path))
    m2.label_logprobs("p", ["0", "1"])
    assert inner.calls == []
    rec = json.loads(path.read_text().splitlines()[0])
    assert set(rec) == {"k", "v", "m", "s"} and "/" in rec["m"]


def test_reads_every_artefacts_folder_and_writes_its_own(tmp_path):
    StoredModel(CountingModel(), store_at(tmp_path, "a1")).generate("shared")
    inner = CountingModel()
    b = StoredModel(inner, ItemStore("a2", tmp_path / "a2" / "items",
                                     sorted(tmp_path.glob("*/items"))))
    b.generate("shared")
    b.generate("own")
    assert [c[1] for c in inner.calls] == ["own"]
    assert (tmp_path / "a2" / "items").is_dir()
    assert len(list((tmp_path / "a1" / "items").glob("*.jsonl"))) == 1


def test_token_id_kernels_exist_only_when_the_inner_model_has_them(tmp_path):
    m = StoredModel(CountingModel(), store_at(tmp_path))
    assert not hasattr(m, "score_ids") and not hasattr(m, "score_labels_ids")
    assert m.info.name == "counting/model"


def test_a_model_loaded_with_no_store_active_says_so_once(monkeypatch, capsys):
    import nfeval_repro.store as store_module

    monkeypatch.setattr(store_module, "_NOTICED", False)
    monkeypatch.delenv("NFEVAL_STORE", raising=False)
    model = CountingModel()
    assert stored(model) is model and stored(CountingModel()) is not None
    err = capsys.readouterr().err
    assert err.count("no item store is active") == 1 and "counting/model" in err
    assert "use_store(" in err
    # a deterministic step computed with no store says so too, before any model loads
    monkeypatch.setattr(store_module, "_NOTICED", False)
    assert cached_steps("emb", [1, 2], lambda xs: [x * 2 for x in xs]) == [2, 4]
    assert "step 'emb'" in capsys.readouterr().err
    # NFEVAL_STORE=off asked for every call computed: no note
    monkeypatch.setattr(store_module, "_NOTICED", False)
    monkeypatch.setenv("NFEVAL_STORE", "off")
    stored(CountingModel())
    assert capsys.readouterr().err == ""


def test_use_store_off_and_its_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_STORE", "off")
    assert use_store("lk_t02", tmp_path) is None and active_store() is None
    monkeypatch.delenv("NFEVAL_STORE")
    with pytest.raises(NfevalError):
        use_store("../evil", tmp_path)
    monkeypatch.setenv("NFEVAL_STORE_READ", "own")
    with pytest.raises(NfevalError):
        use_store("lk_t02", tmp_path)


def test_read_mode_texts_recomputes_every_number_on_the_committed_texts(tmp_path, monkeypatch):
    use_store("t_art", tmp_path)
    first = stored(CountingModel())
    first.generate("q")
    first.label_logprobs("q", ["a", "b"])
    close_store()
    monkeypatch.setenv("NFEVAL_STORE", str(tmp_path / "own"))
    monkeypatch.setenv("NFEVAL_STORE_READ", "texts")
    use_store("t_art", tmp_path)
    inner = CountingModel()
    again = stored(inner)
    assert again.generate("q").text == "reply to q #0"  # the committed text, not generated
    again.label_logprobs("q", ["a", "b"])  # a number: recomputed
    again.generate("new")  # a text the store lacks: generated
    assert [c[:2] for c in inner.calls] == [("labels", "q"), ("gen", "new")]
    written = sorted(p.name.rsplit(".", 2)[1] for p in (tmp_path / "own").glob("*/items/*"))
    assert written == ["gen", "labels"]
    close_store()
    monkeypatch.setenv("NFEVAL_STORE_READ", "some")
    with pytest.raises(NfevalError, match="'own'"):
        use_store("t_art", tmp_path)


def test_stored_models_keep_their_items_so_a_run_cache_stays_off(tmp_path, monkeypatch):
    from nfeval.runcache import RunCache

    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))

    store = use_store("t_art", tmp_path)
    assert active_store() is store
    m = stored(CountingModel())
    assert isinstance(m, StoredModel) and m.keeps_items
    cache = RunCache("x", {"a": 1}, None, model=m)
    cache.put(1, "t", {"v": 1})
    assert cache.disabled and not cache.path.exists()
    plain = CountingModel()  # a model outside the store caches as before
    assert not plain.keeps_items
    assert not RunCache("x", {"a": 2}, tmp_path / "runs", model=plain).disabled
    close_store()
    assert not isinstance(stored(CountingModel()), StoredModel)


def test_cached_steps_compute_once(tmp_path):
    use_store("t_art", tmp_path)
    seen = []

    def compute(xs):
        seen.append(list(xs))
        return [x * 2 for x in xs]

    assert cached_steps("double", [1, 2], compute) == [2, 4]
    assert cached_steps("double", [2, 3], compute) == [4, 6]
    assert seen == [[1, 2], [3]]
    costs = recorded_costs("t_art", tmp_path)
    assert costs[0]["items"] == 3 and costs[0]["file"] == "step.double.jsonl"
    close_store()
    assert cached_steps("double", [5], compute) == [10]  # no store: computed, not kept


def test_real_model_is_not_loaded_when_everything_is_stored(tmp_path):
    from nfeval.models import load_model

    use_store("t_art", tmp_path)
    m = stored(load_model("smollm2-135m-instruct"))
    m.label_distribution("Is it? Answer 0 or 1.", ["0", "1"])
    assert m.inner.loaded
    close_store()
    use_store("t_art", tmp_path)
    m2 = stored(load_model("smollm2-135m-instruct"))
    d = m2.label_distribution("Is it? Answer 0 or 1.", ["0", "1"])
    assert not m2.inner.loaded and math.isclose(sum(d.values()), 1.0)


test_real_model_is_not_loaded_when_everything_is_stored = pytest.mark.slow(
    test_real_model_is_not_loaded_when_everything_is_stored)


def test_model_cache_fields_keep_the_cache_keys_of_earlier_runs():
    """Every run cache keys its outputs on ModelInfo.cache_fields(); a changed field set
    would silently orphan every cached judgment and generation."""
    from nfeval.runcache import run_key

    info = ModelInfo(name="m", backend="hf", source="pypi:x==1", checksum="abc",
                     dtype="float32", chat_template="model", max_length=2048)
    assert info.cache_fields() == {"name": "m", "source": "pypi:x==1", "checksum": "abc",
                                   "dtype": "float32", "backend": "hf", "template": "model"}
    assert run_key({"model": info.cache_fields(), "mode": "prob"}) == "4483cb6e8cba195d3cbf"


def test_derived_seeds_keep_their_values():
    """Seeds derived before derived_seed existed must not move (committed draws rest on them)."""
    from nfeval.hashing import derived_seed, sha256_text

    for name in ("refgen/0/q1/golden/1", "0:17", "curation/0/povs"):
        assert derived_seed(name) == int(sha256_text(name)[:8], 16)
    assert derived_seed("interval/0/x", 16) == int(sha256_text("interval/0/x")[:16], 16)
    assert derived_seed("0:17") == 1834861385


def test_the_docs_python_example_reads_the_committed_store(tmp_path, mirror):
    """docs/reproduce.md's example (an experiment function called from Python) runs with no
    weight package importable and no network (tests/no_weights): every item it needs is read
    from the committed store, none is written, and no note says the store is off."""
    import os
    import re
    import subprocess
    import sys

    from testkit import NO_WEIGHTS

    ROOT = Path(__file__).resolve().parents[3]  # the checkout

    section = (ROOT / "docs" / "reproduce.md").read_text().split("## The item store")[1]
    block = re.findall(r"```python\n(.*?)```", section.split("\n## ")[0], flags=re.S)[0]
    assert "use_store(" in block
    env = {**os.environ, "NFEVAL_STORE": str(tmp_path / "written"),
           "NFEVAL_CACHE": str(tmp_path / "empty-cache"),
           "PYTHONPATH": os.pathsep.join([str(NO_WEIGHTS)] + [
               p for p in [os.environ.get("PYTHONPATH", "")] if p])}
    out = subprocess.run([sys.executable, "-c", block + "\nprint(len(table))"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) > 0
    assert "no item store is active" not in out.stderr
    assert not list((tmp_path / "written").rglob("*.jsonl"))  # nothing computed
