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
        exp = lk_t02.run(datasets="trec-dl-nf", limit=2, max_candidates=0,
                         judge_rows="linkage-0shot,pointwise-noref,pairwise-release",
                         judge_dtype="bfloat16", small_judge="", sample_limit=0,
                         refppl_lm="none", progress=False)
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
