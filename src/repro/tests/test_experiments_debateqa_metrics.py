"""The experiment functions of DebateQA's metric studies (dq_t02, dq_t03, dq_f02-dq_f07).

Model-free: the model-free runs (the Acknowledge rule alone, the pseudo-annotators) run on
a few questions of the release mirror; the shared helpers and the model studies' wiring on
fake scores. The notebook tests (``tests/test_notebooks.py``) run every function with models.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.debateqa import agreement, dq_f02, dq_f03, dq_f04, dq_f05, dq_f07, dq_t02
from nfeval.debateqa.pd import DEFAULT_RESTATE
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment

# --------------------------------------------------------------------------- model-free runs


def test_dq_t02_with_the_acknowledge_rule_alone(mirror):
    exp = dq_t02.run(dq_t02.Config(limit=3, max_answers=4, metrics="acknowledge", rounds=20),
                     progress=False)
    assert isinstance(exp, Experiment) and exp.id == "dq_t02"
    assert list(exp.id_columns) == ["kind", "dataset", "metric", "coefficient"]
    assert exp.interval == "questions"
    assert list(exp.table.columns[:8]) == [*exp.id_columns, "ours", "ci_low", "ci_high",
                                           "n_questions"]
    assert "paper" not in exp.table.columns  # Table 2's values are not in our copy
    # no P.D. scored: no paired difference, and only the rule's rows
    assert set(exp.table["kind"]) == {"estimate"}
    assert set(exp.table["metric"]) == {"acknowledge"}
    assert set(exp.table["dataset"]) == {"antique", "trec-dl-nf"}
    assert (exp.table["n_selected"] == 3).all()
    prof = get_profile("embedded")  # default backbones: the judge's model, then the small one
    assert exp.parameters == {"backbone": f"{prof.judge},{prof.pd_backbones[0]}",
                              "judge": prof.judge, "judge_mode": "prob",
                              "metrics": ["acknowledge"]}
    assert [s.metric for s in exp.signatures] == ["acknowledge"]
    frame = exp.frames["per_answer_scores"]
    assert len(frame) == exp.signatures[0].n == 2 * 3 * 4
    assert frame["score"].isin([0.0, 1.0]).all() and frame["elo"].notna().all()


def test_dq_t02_judge_limit_judges_the_first_questions_and_pairs_on_them(mirror, monkeypatch):
    """P.D. on every selected question, the judge metric on each dataset's first
    ``judge_limit``: its rows and the paired rows rest on those, and its signature counts
    the answers judged (fake scores: no model)."""
    from types import SimpleNamespace

    from nfeval_repro.debateqa.alignment import SCORE_COLUMNS

    judged = []

    def fake_scores(questions, metric):
        rows = [{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id, "grade": a.grade,
                 "metric": metric, "score": float(a.grade) + 0.1 * i}
                for q in questions for i, a in enumerate(q.candidates)]
        return pd.DataFrame(rows, columns=SCORE_COLUMNS)

    def fake_judge(lm, questions, name, **kw):
        judged.append(len(questions))
        return fake_scores(questions, name)

    class Profile:
        pd_backbones, judge, judge_mode = ("fake-pd",), "fake-judge", "prob"

        def load(self, name):
            return SimpleNamespace(info=SimpleNamespace(as_dict=lambda: {"name": name}))

    monkeypatch.setattr(dq_t02, "get_profile", lambda name: Profile())
    monkeypatch.setattr(dq_t02, "score_judge", fake_judge)
    monkeypatch.setattr(dq_t02, "score_pd", lambda lm, qs, **kw: fake_scores(qs, "pd"))
    exp = dq_t02.run(dq_t02.Config(limit=4, max_answers=4, metrics="pd,direct_score", rounds=20,
                                   judge_limit=2, backbone="fake-pd"), progress=False)
    assert judged == [4]  # 2 questions of each dataset
    t = exp.table[exp.table["coefficient"] == "spearman"].set_index(["kind", "metric", "dataset"])
    for ds in ("antique", "trec-dl-nf"):
        assert t.loc[("estimate", "pd:fake-pd", ds), "n_questions"] == 4
        assert t.loc[("estimate", "direct_score", ds), "n_questions"] == 2
        assert t.loc[("paired difference", "pd:fake-pd - direct_score", ds), "n_questions"] == 2
    sig = {s.metric: s.n for s in exp.signatures}
    assert sig == {"perspective_diversity": 2 * 4 * 4, "direct_score": 2 * 2 * 4}
    # both default backbones: the judge's model (on the first pd_judge_limit questions per
    # dataset) and the small one (on all); each paired with the judge metric, never with
    # each other
    exp = dq_t02.run(dq_t02.Config(limit=4, max_answers=4, metrics="pd,direct_score", rounds=20,
                                   pd_judge_limit=3), progress=False)
    t = exp.table[exp.table["coefficient"] == "spearman"].set_index(["kind", "metric", "dataset"])
    for ds in ("antique", "trec-dl-nf"):
        assert t.loc[("estimate", "pd:fake-judge", ds), "n_questions"] == 3
        assert t.loc[("estimate", "pd:fake-pd", ds), "n_questions"] == 4
        assert t.loc[("paired difference", "pd:fake-judge - direct_score", ds), "n_questions"] == 3
    assert not exp.table["metric"].str.contains("pd:fake-judge - pd:").any()
    assert exp.extra["metrics"] == ["pd:fake-judge", "pd:fake-pd", "direct_score"]
    with pytest.raises(NfevalError, match="judge_limit"):
        dq_t02.run(dq_t02.Config(limit=2, judge_limit=-1, metrics="acknowledge"), progress=False)


def test_dq_f02_rows_and_signatures(mirror):
    exp = dq_f02.run(dq_f02.Config(limit=2, max_answers=4, annotators=3, rounds=20), progress=False)
    assert exp.id == "dq_f02" and list(exp.id_columns) == ["dataset", "pair"]
    assert exp.parameters == {}  # the notebook's own parameters, nothing resolved
    for ds, part in exp.table.groupby("dataset"):
        assert part["pair"].tolist() == ["P1-P2", "P1-P3", "P2-P3", "min_pair"]
        assert part["paper"].iloc[:3].isna().all()
        assert part["paper"].iloc[-1] == 0.8
        assert (part["answers_per_question"] == 4).all()
    assert [s.extra["dataset"] for s in exp.signatures] == ["antique", "trec-dl-nf"]
    assert all(s.variant == "3-disjoint-parts" and s.n == 2 for s in exp.signatures)


# --------------------------------------------------------------------------- shared helpers


class _Model:
    def __init__(self, name):
        self.info = type("Info", (), {"as_dict": lambda _self, n=name: {"name": n}})()


class _Profile:
    """Records the models it loads."""

    def __init__(self):
        self.loaded = []

    def load(self, name, backend="hf", **kwargs):
        self.loaded.append(name)
        return _Model(name)


@pytest.mark.parametrize("metric,role", [("pd", "pd_models"), ("da", "judges")])
def test_score_each_scores_with_every_model_in_turn(monkeypatch, metric, role):
    calls = []

    def fake_score_systems(systems, items, split, *, progress=True, **models):
        assert list(models) == [role] and len(models[role]) == 1
        (name, _model), = models[role].items()
        calls.append(name)
        return pd.DataFrame({"system": ["s"], "id": [1], "metric": [metric],
                             "evaluator": [name], "score": [float(len(calls))]})

    monkeypatch.setattr(agreement, "score_systems", fake_score_systems)
    prof = _Profile()
    scores, models = agreement.score_each(prof, {}, [], "sample", ["a", "b", "c"], metric,
                                          progress=False)
    assert prof.loaded == calls == ["a", "b", "c"]
    assert scores["evaluator"].tolist() == ["a", "b", "c"]
    assert scores["score"].tolist() == [1.0, 2.0, 3.0]
    assert models == {"a": {"name": "a"}, "b": {"name": "b"}, "c": {"name": "c"}}


def test_score_each_rejects_an_unknown_metric():
    with pytest.raises(NfevalError, match="unknown metric"):
        agreement.score_each(_Profile(), {}, [], "sample", ["a"], "bleu", progress=False)


def test_restate_labels_start_with_the_default():
    labels = dq_f04.prompt_labels()
    assert list(labels.values()) == [f"R{i + 1}" for i in range(len(labels))]
    assert next(iter(labels)) == DEFAULT_RESTATE


def test_restate_labels_refuse_a_file_without_the_default_first(monkeypatch):
    monkeypatch.setattr(dq_f04, "restate_prompts", lambda: ["Say it again.", DEFAULT_RESTATE])
    with pytest.raises(NfevalError, match="first restate prompt"):
        dq_f04.prompt_labels()


@pytest.mark.parametrize("text,expected", [
    ("0,0.25,0.5,1,2,4,8", [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]),
    ("1, ,2", [1.0, 2.0]),
    ("", []),
])
def test_parse_ks(text, expected):
    assert dq_f07.parse_ks(text) == expected


# --------------------------------------------------------------------------- model studies, fake scores

_SYSTEMS = {
    "model-a": {q: ("This is a controversial topic." if q % 2 else "Use a hammer.")
                for q in range(1, 9)},
    "model-b": {q: ("People disagree on this." if q % 3 else "Yes.") for q in range(1, 9)},
    "written:balanced": {q: "Some say yes, others say no: it is debated." for q in range(1, 9)},
}


def _fake_scores(names, metric):
    rng = np.random.default_rng(0)
    rows = [{"system": s, "id": q, "metric": metric, "evaluator": n,
             "score": float(rng.uniform(0.2, 0.9))}
            for n in names for s, ans in _SYSTEMS.items() for q in ans]
    return pd.DataFrame(rows), {n: {"name": n} for n in names}


def _fake_systems(monkeypatch, module):
    monkeypatch.setattr(module, "answer_systems",
                        lambda prof, **kw: (("gen",), list(range(8)), _SYSTEMS))


def test_dq_f05_adds_the_rule_as_a_judge(monkeypatch):
    _fake_systems(monkeypatch, dq_f05)
    monkeypatch.setattr(dq_f05, "score_each",
                        lambda prof, systems, items, split, names, metric, progress:
                        _fake_scores(names, metric))
    exp = dq_f05.run(dq_f05.Config(judges="j1,j2"), progress=False)
    assert exp.id == "dq_f05" and list(exp.id_columns) == ["judge_a", "judge_b", "quantity"]
    shares = exp.table[exp.table["quantity"] == "share_judged_1"]
    assert shares["judge_a"].tolist() == ["j1", "j2", "acknowledge_rule"]
    pairs = exp.table[exp.table["judge_b"] != "-"][["judge_a", "judge_b"]].drop_duplicates()
    assert len(pairs) == 3  # j1-j2, j1-rule, j2-rule
    rule = exp.frames["scores"].query("evaluator == 'acknowledge_rule'")
    assert len(rule) == 24 and set(rule["score"]) == {0.0, 1.0}
    assert exp.parameters == {"generators": ["gen"], "judges": ["j1", "j2"]}
    assert [s.model["name"] for s in exp.signatures] == ["j1", "j2"]


def test_dq_f03_pairs_every_backbone(monkeypatch):
    _fake_systems(monkeypatch, dq_f03)
    monkeypatch.setattr(dq_f03, "score_each",
                        lambda prof, systems, items, split, names, metric, progress:
                        _fake_scores(names, metric))
    exp = dq_f03.run(dq_f03.Config(backbones="b1,b2,b3"), progress=False)
    assert list(exp.id_columns) == ["backbone_a", "backbone_b", "scope", "quantity"]
    pairs = exp.table[["backbone_a", "backbone_b"]].drop_duplicates()
    assert [tuple(p) for p in pairs.to_numpy()] == [("b1", "b2"), ("b1", "b3"), ("b2", "b3")]
    assert set(exp.table["scope"]) == {"all", "models"}
    models = exp.table[exp.table["scope"] == "models"]
    assert (models["n_systems"] <= 2).all()  # the written set is not a model system
    assert exp.extra["systems"] == list(_SYSTEMS) and exp.extra["n_questions"] == 8
    assert not math.isnan(exp.table["ours"].iloc[0])
