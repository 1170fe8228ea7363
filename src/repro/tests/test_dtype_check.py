"""A table whose judge ran in bfloat16 carries its check against float32 on the draw where the
committed float32 items lie (nfeval_repro.dtype_check), and the claims read it."""

import math

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro import dtype_check as checks


def _table(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "judge", "coefficient", "ours",
                                       "ci_low", "ci_high", "n_questions"])


def test_compare_pairs_the_rows_once_and_measures_the_shift():
    f32 = _table([("d", "a", "mistral", "spearman", 0.30, 0.2, 0.4, 53),
                  ("d", "a", "chatgpt", "spearman", 0.30, 0.2, 0.4, 53),  # the paper judges' copy
                  ("d", "a - b", "", "spearman", 0.10, 0.01, 0.2, 53)])
    bf16 = f32.assign(ours=f32["ours"] + [0.01, 0.01, -0.02])
    out = checks.compare(f32, bf16, keys=["dataset", "method", "coefficient"], dtype="bfloat16")
    assert list(out["method"]) == ["a", "a - b"]
    assert out["shift"].tolist() == pytest.approx([0.01, -0.02])
    assert set(out["dtype"]) == {"bfloat16"}
    with pytest.raises(NfevalError, match="different rows"):
        checks.compare(f32, bf16.iloc[:1], keys=["dataset", "method", "coefficient"],
                       dtype="bfloat16")


def test_only_another_dtype_than_float32_is_checked_and_not_the_rows_without_float32_items():
    assert checks.wanted("bfloat16", True) and not checks.wanted("bfloat16", False)
    assert not checks.wanted("", True) and not checks.wanted("float32", True)
    assert checks.checked_rows(["linkage-0shot", "pairwise-release", "pointwise-ref"]) == \
        ["linkage-0shot", "pointwise-ref"]


def test_lk_t02_in_bf16_on_every_candidate_carries_its_check_from_the_store(tmp_path, mirror):
    """TREC-DL-NF's every-candidate items (bf16) and the 8-candidate draw's (float32) are both
    committed: the check reads them all and computes nothing."""
    from nfeval_repro.linkage import lk_t02
    from nfeval_repro.store import close_store, use_store

    store = use_store("lk_t02", tmp_path)
    try:
        exp = lk_t02.run(lk_t02.Config(datasets="trec-dl-nf", limit=2, max_candidates=0,
                                       judge_rows="linkage-0shot,pointwise-noref,pairwise-release",
                                       judge_dtype="bfloat16", small_judge="", sample_limit=0,
                                       refppl_lm="none"), progress=False)
        misses = store.misses
    finally:
        close_store()
    assert misses == 0
    check = exp.frames["dtype_check"].set_index(["method", "coefficient"])
    assert set(check["dtype"]) == {"bfloat16"} and set(check["n_questions_float32"]) <= {1, 2}
    judged = check.loc[("linkage-0shot", "spearman")]
    assert judged["shift"] == pytest.approx(judged["ours_table"] - judged["ours_float32"])
    assert ("linkage-0shot - pointwise-noref", "spearman") in check.index
    assert check.loc[("rougeL", "spearman"), "shift"] == 0  # no judge: no dtype
    # pairwise with the candidate first has no float32 items on the draw: not checked
    assert not any("pairwise" in m for m, _ in check.index)
    assert not math.isnan(check["shift"].abs().max())


def test_item_shift_compares_the_items_both_dtypes_judged(tmp_path, capsys):
    """The item-level check for rows the table-level one cannot cover: shared keys only, the
    largest label-probability change per item, and how often the preferred label flips."""
    import json

    def write(name, rows):
        p = tmp_path / name
        p.write_text("".join(json.dumps({"k": k, "v": v}) + "\n" for k, v in rows.items()))
        return p

    half = math.log(0.5)
    more, less = math.log(0.6), math.log(0.4)
    a = write("j@f32.labels.jsonl", {"same": [half, half, -50.0], "flip": [more, less, -50.0],
                                     "only-a": [0.0, -1.0, -2.0]})
    b = write("j@bf16.labels.jsonl", {"same": [half, half, -50.0], "flip": [less, more, -50.0],
                                      "only-b": [0.0, -1.0, -2.0]})
    r = checks.item_shift(a, b)
    assert r["shared"] == 2
    assert r["max_shift"] == pytest.approx(0.2, abs=1e-9)
    assert r["mean_shift"] == pytest.approx(0.1, abs=1e-9)
    assert r["flips"] == 0.5 and r["first_vs_second_flips"] == 0.5
    assert checks.main([str(a), str(b)]) == 0
    assert "2 shared items" in capsys.readouterr().out
    c = write("j@other.labels.jsonl", {"elsewhere": [0.0, -1.0]})
    with pytest.raises(NfevalError, match="share no item"):
        checks.item_shift(a, c)
    with pytest.raises(NfevalError, match="not a judge item file"):
        checks.item_shift(a, tmp_path / "x.gen.jsonl")
