"""The DebateQA answer systems of the reproduction (nfeval_repro.debateqa.systems): ranks,
the z-normalized ranking, Kendall matrices, the question draw and P.D.'s validity rows; and
the library's run cache read as item-store records (nfeval_repro.store)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval.runcache import RunCache
from nfeval_repro.debateqa.systems import (kendall_matrix, load_questions, normalized_rank,
                                           pd_validity_rows, system_ranks, znorm_ranking)


def _means(rows):
    return pd.DataFrame(rows, columns=["system", "metric", "evaluator", "mean"]).assign(n=1)


def test_ranks_and_normalized_rank():
    m = _means([("a", "pd", "x", 1.0), ("b", "pd", "x", 2.0), ("c", "pd", "x", 3.0),
                ("a", "pd", "y", 2.0), ("b", "pd", "y", 1.0), ("c", "pd", "y", 3.0),
                ("a", "da", "j", 0.9), ("b", "da", "j", 0.1), ("c", "da", "j", 0.5)])
    r = system_ranks(m).set_index(["system", "metric", "evaluator"])["rank"]
    assert r[("a", "pd", "x")] == 1 and r[("c", "pd", "x")] == 3  # P.D.: lower is better
    assert r[("a", "da", "j")] == 1 and r[("b", "da", "j")] == 3  # D.A.: higher is better
    n = normalized_rank(m).set_index(["system", "metric"])["norm_rank"]
    assert n[("a", "pd")] == pytest.approx(0.25) and n[("b", "pd")] == pytest.approx(0.25)
    assert n[("c", "pd")] == 1.0 and n[("a", "da")] == 0.0 and n[("b", "da")] == 1.0


def test_znorm_ranking_limits():
    m = _means([("a", "pd", "x", 1.0), ("b", "pd", "x", 2.0), ("c", "pd", "x", 3.0),
                ("a", "da", "j", 0.1), ("b", "da", "j", 0.5), ("c", "da", "j", 0.9)])
    z = znorm_ranking(m, [0.0, 100.0], pd_evaluator="x", da_evaluator="j")
    by_k = {k: dict(zip(s["system"], s["rank"])) for k, s in z.groupby("k")}
    assert by_k[0.0] == {"c": 1, "b": 2, "a": 3}  # D.A. alone
    assert by_k[100.0] == {"a": 1, "b": 2, "c": 3}  # P.D. dominates, lower is better
    # k = 1: z(-pd) and z(da) cancel exactly here, every system ties
    z1 = znorm_ranking(m, [1.0], pd_evaluator="x", da_evaluator="j")
    assert all(math.isclose(v, 0.0, abs_tol=1e-12) for v in z1["combined"])
    with pytest.raises(NfevalError):
        znorm_ranking(m[m.system == "a"], [1.0], pd_evaluator="x", da_evaluator="j")


def test_kendall_matrix():
    m = _means([("a", "pd", "x", 1.0), ("b", "pd", "x", 2.0), ("c", "pd", "x", 3.0),
                ("a", "pd", "y", 3.0), ("b", "pd", "y", 2.0), ("c", "pd", "y", 1.0),
                ("a", "pd", "z", 1.0), ("b", "pd", "z", 2.0), ("c", "pd", "z", 5.0)])
    t = kendall_matrix(m, "pd")
    assert t.loc["x", "y"] == pytest.approx(-1) and t.loc["x", "z"] == pytest.approx(1)
    assert t.loc["y", "y"] == 1 and t.loc["y", "x"] == t.loc["x", "y"]


def test_load_questions_first_or_seeded_draw():
    every = [it.id for it in load_questions("sample")]
    assert len(every) == 40 and every == sorted(every)
    assert [it.id for it in load_questions("sample", 3)] == every[:3]
    drawn = [it.id for it in load_questions("sample", 16, seed=0)]
    assert len(set(drawn)) == 16 and drawn == sorted(drawn) and drawn != every[:16]
    assert drawn == [it.id for it in load_questions("sample", 16, seed=0)]  # deterministic
    small = [it.id for it in load_questions("sample", 3, seed=0)]
    assert set(small) <= set(drawn)  # nested: a smaller limit reuses a larger one's questions
    assert [it.id for it in load_questions("sample", 0, seed=5)] == every
    assert [it.id for it in load_questions("sample", 16, seed=1)] != drawn
    with pytest.raises(NfevalError):
        load_questions("sample", -1)


def test_pd_validity_rows_shares_with_wilson_intervals():
    rows = []
    for q, (b, o, f) in enumerate([(1, 2, 3), (1, 2, 3), (2, 1, 3), (1, 3, 2)]):
        for name, v in (("balanced", b), ("one_sided", o), ("off_topic", f)):
            rows.append({"system": f"written:{name}", "id": q, "metric": "pd",
                         "evaluator": "bb", "score": float(v)})
    out = pd_validity_rows(pd.DataFrame(rows)).set_index("quantity")
    assert out.loc["share balanced<one_sided", "ours"] == 0.75
    assert out.loc["share one_sided<off_topic", "ours"] == 0.75
    assert out.loc["share balanced<one_sided<off_topic", "ours"] == 0.5
    assert (out["n_questions"] == 4).all() and (out["ci_low"] < out["ours"]).all()
    assert pd_validity_rows(pd.DataFrame(rows[:1])).empty  # no written sets to compare


def test_runcache_writes_item_store_records(tmp_path):
    """The commands' cache is the store's file format: one reader for both."""
    from nfeval_repro.store import read_records

    c = RunCache("t", {"a": 1}, directory=tmp_path)
    c.put(7, "first", {"v": 1})
    (rec,) = list(read_records(c.path))
    assert rec["v"] == {"v": 1} and set(rec) == {"k", "v", "m", "s"}
