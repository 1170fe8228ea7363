"""The DebateQA systems experiments (nfeval_repro.debateqa.<id>.run for dq_t04-dq_t07,
dq_f08_f09, dq_f10, dq_eq7) and the helpers they share (systems, rag).

Model-free: the scoring is replaced by hand-written scores or a stub, so every
expected value can be checked by hand; the notebooks themselves run in
tests/test_notebooks.py.
"""

from __future__ import annotations

import importlib
import json
import math
from types import SimpleNamespace

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa.systems import (collect_systems, length_rows, load_questions,
                                                 metric_signatures, split_systems, system_spec)
from nfeval.hashing import sha256_text
from nfeval.models.base import Generation, LanguageModel, ModelInfo
from nfeval_repro.tables import Experiment

def _experiment(name: str):
    return importlib.import_module(f"nfeval_repro.debateqa.{name}")


# --------------------------------------------------------------------------- dq_eq7

def test_dq_eq7_closed_form_and_simulation():
    exp = _experiment("dq_eq7").run()
    assert isinstance(exp, Experiment) and exp.id == "dq_eq7"
    assert list(exp.id_columns) == ["n", "delta_pd"] and exp.interval.startswith("none: ")
    assert dict(exp.parameters) == {} and not exp.frames
    t = exp.table
    assert len(t) == 6 * 4
    row = t[(t["n"] == 3) & (t["delta_pd"] == -2)].iloc[0]
    assert row["ours"] == pytest.approx(math.exp(2 / 3)) and row["paper"] == 1.95
    assert row["exact_if_perplexity_5"] == pytest.approx(5 / (5 - 2 / 3))
    assert t[t["n"] == 3.7]["simulated"].isna().all()  # no simulation for a fractional n
    assert (t.dropna(subset=["simulated"])["abs_diff_simulated"] < 1e-9).all()
    assert exp.signatures[0].n == 24 and exp.signatures[0].seed == 0


def test_dq_eq7_checks_the_profile():
    with pytest.raises(NfevalError, match="unknown profile"):
        _experiment("dq_eq7").run(_experiment("dq_eq7").Config(profile="no-such-profile"))


# --------------------------------------------------------------------------- dq_t04

WRITTEN = ("written:balanced", "written:one_sided", "written:off_topic")


def _scores(values: dict[str, list[float]], metric: str = "pd", evaluator: str = "b"):
    return pd.DataFrame([{"system": s, "id": q, "metric": metric, "evaluator": evaluator,
                          "score": v} for s, vs in values.items() for q, v in enumerate(vs)])


def test_dq_t04_table_means_differences_ranks_lengths_and_validity():
    dq_t04 = _experiment("dq_t04")
    # P.D. of three questions: the written sets in their known order on every question
    values = {WRITTEN[0]: [10, 20, 30], WRITTEN[1]: [20, 30, 40], WRITTEN[2]: [40, 50, 60],
              "m1": [15, 25, 35], "m2": [18, 27, 36]}
    scores = _scores(values)
    systems = {s: {q: "a b c" if s == "m1" else "a" for q in range(3)} for s in values}
    from nfeval_repro.debateqa.systems import normalized_rank, system_means

    norm = normalized_rank(system_means(scores))
    table = dq_t04._assemble(scores, systems, norm, 3, seed=0)
    assert list(table.columns) == ["system", "metric", "evaluator", "quantity", "ours",
                                   "ci_low", "ci_high", "n_questions"]

    def get(system, quantity, metric="pd"):
        row = table[(table.system == system) & (table.quantity == quantity)
                    & (table.metric == metric)]
        assert len(row) == 1, (system, quantity)
        return row.iloc[0]

    assert get(WRITTEN[0], "mean")["ours"] == 20 and get("m2", "mean")["ours"] == 27
    # the written sets' known order, then every pair of models (and no other pair)
    diffs = table[table.quantity == "paired_difference"]["system"].tolist()
    assert diffs == [f"{WRITTEN[0]} - {WRITTEN[1]}", f"{WRITTEN[1]} - {WRITTEN[2]}", "m1 - m2"]
    assert get(f"{WRITTEN[0]} - {WRITTEN[1]}", "paired_difference")["ours"] == -10
    assert get("m1 - m2", "paired_difference")["ours"] == pytest.approx(-2)
    # normalized rank: balanced first (0), off-topic last (1); exact, so no interval
    assert get(WRITTEN[0], "norm_rank")["ours"] == 0 and get(WRITTEN[2], "norm_rank")["ours"] == 1
    rank = get("m1", "norm_rank")
    assert math.isnan(rank["ci_low"]) and math.isnan(rank["ci_high"]) and rank["n_questions"] == 3
    assert get("m1", "avg_words", "length")["ours"] == 3
    validity = table[table.system == "__validity__"]
    assert len(validity) == 3 and (validity["ours"] == 1).all()


# --------------------------------------------------------------------------- dq_f08_f09

def test_dq_f08_f09_settings_and_differences_from_the_largest_value():
    f = _experiment("dq_f08_f09")
    assert f._sweep_settings("0.5, 1.0", "0.5,") == [
        ("temperature", 0.5, 0.5, 1.0), ("temperature", 1.0, 1.0, 1.0), ("top_p", 0.5, 1.0, 0.5)]
    scores = pd.DataFrame([
        {"sweep": sw, "value": v, "id": q, "metric": "pd", "score": base + q}
        for sw, v, base in (("temperature", 0.5, 10), ("temperature", 1.0, 13),
                            ("temperature", 0.2, 11), ("top_p", 0.5, 20), ("top_p", 1.0, 20))
        for q in range(3)])
    table = f._sweep_table(scores, seed=0)
    diff = table[table.quantity == "difference"].set_index(["sweep", "value"])["ours"]
    # every value minus its sweep's largest (1.0), never the other way round
    assert diff.to_dict() == {("temperature", "0.2 - 1.0"): -2.0,
                              ("temperature", "0.5 - 1.0"): -3.0,
                              ("top_p", "0.5 - 1.0"): 0.0}
    means = table[table.quantity == "mean"]
    assert len(means) == 5 and set(means["n_questions"]) == {3}


def test_dq_f10_differences_from_the_shortest_target_per_generator():
    f = _experiment("dq_f10")
    scores = pd.DataFrame([
        {"generator": g, "target_tokens": n, "id": q, "metric": m, "score": base + q}
        for g, m, n, base in (("a", "pd", 100, 7), ("a", "pd", 50, 10), ("a", "pd", 200, 4),
                              ("b", "pd", 50, 1), ("b", "pd", 100, 3))
        for q in range(3)])
    table = f._length_table(scores, seed=0)
    diff = table[table.quantity == "difference"].set_index(["generator", "target_tokens"])
    # every target minus the shortest (50), by generator, never the other way round
    assert diff["ours"].to_dict() == {("a", "100 - 50"): -3.0, ("a", "200 - 50"): -6.0,
                                      ("b", "100 - 50"): 2.0}
    assert set(diff["n_questions"]) == {3}
    assert len(table[table.quantity == "mean"]) == 5


# --------------------------------------------------------------------------- systems helpers

def test_split_systems_and_length_rows():
    frame = pd.DataFrame({"system": ["g|basic", "g|detailed"], "score": [1.0, 2.0]})
    out = split_systems(frame, ["generator", "prompt"])
    assert out["prompt"].tolist() == ["basic", "detailed"] and "prompt" not in frame
    assert split_systems(pd.DataFrame({"system": ["top_p=0.5"]}), ["sweep", "value"],
                         sep="=").iloc[0].tolist() == ["top_p=0.5", "top_p", "0.5"]
    rows = length_rows({"s": {1: "one two three", 2: ""}}, "length")
    assert rows.to_dict("records") == [
        {"system": "s", "id": 1, "metric": "length", "evaluator": "words", "score": 3},
        {"system": "s", "id": 2, "metric": "length", "evaluator": "words", "score": 0}]


def _stub(name: str) -> SimpleNamespace:
    return SimpleNamespace(info=ModelInfo(name=name, backend="test", source="test"))


def test_metric_signatures_pd_then_da_with_prompts_and_extra():
    sigs = metric_signatures({"b1": _stub("b1"), "b2": _stub("b2")}, {"j": _stub("j")},
                             seed=3, n=7, pd_prompt="Please restate.",
                             pd_extra={"top_k": 10})
    assert [(s.metric, s.variant, s.model["name"]) for s in sigs] == [
        ("perspective_diversity", "paper", "b1"), ("perspective_diversity", "paper", "b2"),
        ("dispute_awareness", "prob", "j")]
    assert sigs[0].prompt_sha256 == sha256_text("Please restate.") and sigs[2].prompt_sha256 is None
    assert dict(sigs[0].extra) == {"top_k": 10} and dict(sigs[2].extra) == {}
    assert {(s.seed, s.n) for s in sigs} == {(3, 7)}
    assert metric_signatures({}, {}, seed=0, n=0) == []


class _Writer(LanguageModel):
    """Generates "answer <n>"."""

    def __init__(self, name: str):
        self.info = ModelInfo(name=name, backend="test", source="test")
        self.calls = 0

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_distribution(self, prompt, labels):
        raise NotImplementedError

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        self.calls += 1
        self.decodings = getattr(self, "decodings", []) + [(temperature, top_p)]
        return Generation(text=f"answer {self.calls}", n_tokens=2, finish_reason="stop")

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"


def test_collect_systems_loads_through_the_given_loader(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    loaded = []

    def load(name, backend="hf", **kwargs):
        loaded.append((name, backend, kwargs))
        return _Writer(name)

    items = load_questions("sample", 2)
    systems = collect_systems(items, ["w1", "w2"], backend="llama", written=False, load=load,
                              progress=False)
    assert loaded == [("w1", "llama", {}), ("w2", "llama", {})]
    assert systems == {name: {items[0].id: "answer 1", items[1].id: "answer 2"}
                       for name in ("w1", "w2")}
    with_written = collect_systems(items, [], load=load, progress=False)
    assert sorted(with_written) == ["written:balanced", "written:off_topic",
                                    "written:one_sided", "written:short"]


def test_a_sampled_system_is_the_same_model_at_its_temperature(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    assert system_spec("m") == ("m", None) and system_spec("m:t0.7") == ("m", 0.7)
    for bad in ("m:x", "m:t0", "m:t2.5", "m:tq"):
        with pytest.raises(NfevalError, match="sampling temperature"):
            system_spec(bad)
    models = {}

    def load(name, backend="hf", **kwargs):
        models.setdefault(name, []).append(_Writer(name))
        return models[name][-1]

    items = load_questions("sample", 2)
    systems = collect_systems(items, ["w", "w:t0.7"], written=False, load=load, progress=False)
    assert list(systems) == ["w", "w:t0.7"]  # one model loaded twice, two systems
    greedy, sampled = models["w"]
    assert greedy.decodings == [(0.0, 1.0)] * 2 and sampled.decodings == [(0.7, 1.0)] * 2


# --------------------------------------------------------------------------- RAG (dq_t06, dq_t07)

def test_rag_setup_resolves_the_shared_parameters():
    from nfeval_repro.debateqa.curation.documents import DOCS_FILE
    from nfeval_repro.debateqa.rag import rag_setup

    setup = rag_setup(profile="embedded", seed=0, limit=2, split="sample", documents="",
                      generators="", chunk_chars=2000, k_docs=7, backbone="", judge="none")
    assert setup.generators == setup.profile.generators and setup.judge == ""
    assert setup.backbone == setup.profile.pd_backbones[0]
    assert setup.documents == DOCS_FILE and setup.index.k_docs == 7
    assert setup.index.device == setup.profile.device  # the embedder runs where the profile says
    assert [it.id for it in setup.items] == [it.id for it in load_questions("sample", 2, seed=0)]
    named = rag_setup(profile="embedded", seed=0, limit=1, split="sample", documents="",
                      generators="a, b", chunk_chars=500, k_docs=0, backbone="bb", judge="")
    assert named.generators == ("a", "b") and named.backbone == "bb"
    assert named.judge == named.profile.da_judge and named.index.max_chars == 500


def _rag_answers(arm: str, arms: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame([{"generator": "g", arm: a, "id": q, "answer": "w " * (q + 1),
                          "n_tokens": 3, "finish_reason": "stop", "n_chunks": 2,
                          "n_trusted_chunks": 1 + (a == arms[-1]), "chunk_ids": "d#0;e#0",
                          "steps": 0, "action_retries": 0, "unparsed_steps": 0,
                          "fallback": False, "stop": "", "trace": ""}
                         for a in arms for q in (1, 2)])


@pytest.mark.parametrize("judge", ["", "j"])
def test_rag_experiment_scores_every_arm_and_keeps_its_frames(monkeypatch, tmp_path, judge):
    from nfeval_repro.debateqa import rag, systems

    def score(systems_, items, split, *, pd_models, judges, progress=True):
        assert set(systems_) == {"g|all", "g|trusted"} and split == "sample"
        return pd.DataFrame([{"system": s, "id": q, "metric": m, "evaluator": ev,
                              "score": float(len(s) + q)}
                             for s, ans in systems_.items() for q in ans
                             for m, models in (("pd", pd_models), ("da", judges))
                             for ev in models])

    monkeypatch.setattr(systems, "score_systems", score)
    loads = []
    prof = SimpleNamespace(embedder="emb", load=lambda n: loads.append(n) or _stub(n))
    docs = tmp_path / "documents.jsonl"
    docs.write_text("{}\n")
    setup = rag.RagSetup(profile=prof, split="sample", items=[1, 2], generators=("g",),
                         backbone="bb", judge=judge, documents=docs,
                         index=SimpleNamespace(k_docs=10, max_chars=2000))
    arms = rag.RagArms(column="documents", order=("all", "trusted"), pairs=(("trusted", "all"),),
                       answer_columns=("answer", "n_chunks"))
    exp = rag.rag_experiment("dq_t07", setup, _rag_answers("documents", ("all", "trusted")), arms,
                             prompt_sha256="x", notes="n", seed=0, top_k=10, progress=False)
    assert loads == ["bb"] + ([judge] if judge else [])
    assert exp.id == "dq_t07" and exp.interval == "questions"
    assert list(exp.id_columns) == ["generator", "documents", "metric", "evaluator", "quantity"]
    assert list(exp.frames["answers"].columns) == ["generator", "documents", "id", "answer",
                                                   "n_chunks"]
    assert list(exp.frames["scores"].columns) == ["generator", "documents", "id", "metric",
                                                  "evaluator", "score"]
    assert exp.parameters["judge"] == (judge or "none") and exp.parameters["embedder"] == "emb"
    assert exp.parameters["documents_sha256"] == sha256_text("{}\n")
    assert [s.metric for s in exp.signatures] == (["perspective_diversity"]
                                                   + ["dispute_awareness"] * bool(judge))
    assert dict(exp.signatures[0].extra) == {"retrieval": "bm25-top10+dense-emb",
                                             "chunk_chars": 2000, "top_k": 10}
    t = exp.table
    share = t[t.metric == "trusted_chunk_share"].set_index("documents")["ours"]
    assert share.to_dict() == {"all": 0.5, "trusted": 1.0}
    diff = t[(t.quantity == "difference") & (t.metric == "pd")]
    assert diff["documents"].tolist() == ["trusted - all"] and diff["ours"].tolist() == [4.0]


def test_react_trace_rows_of_one_question():
    from nfeval_repro.debateqa.rag import react_trace

    step = {"raw": "Thought: look\nAction: Search[x]", "retry": None, "action": "search",
            "query": "x", "default": False, "new": ["d#0", "e#0"]}
    answers = pd.DataFrame([
        {"generator": "g", "strategy": "react", "id": 1,
         "trace": json.dumps([step, {**step, "action": "finish", "new": [], "retry": "F"}])},
        {"generator": "g", "strategy": "react", "id": 2, "trace": json.dumps([step])},
        {"generator": "g", "strategy": "vanilla", "id": 1, "trace": ""}])
    trace = react_trace(answers, 1)
    assert trace[["step", "action", "new_chunks", "retry"]].values.tolist() == [
        [1, "search", 2, ""], [2, "finish", 0, "F"]]
