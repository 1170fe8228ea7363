"""The library's statistics on LINKAGE Table 2's committed per-candidate scores
(results/lk_t02): the correlations equal scipy's to the last bit, and ``nfeval meta`` gives
lk_t02's committed rows. (Moved from tests/test_correlation.py and tests/test_meta.py: they
read the checkout's results/.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from test_correlation import _ours, _same_bits, _scipy

from nfeval import meta_evaluation as M

RESULTS = Path(__file__).resolve().parents[3] / "results"


def test_equals_scipy_to_the_last_bit_on_committed_questions():
    """Every 25th (method, question) group of LINKAGE Table 2's committed per-candidate scores."""
    frame = pd.read_csv(RESULTS / "lk_t02" / "per_candidate.csv", low_memory=False).dropna(
        subset=["score"])
    groups = list(frame.groupby(["dataset", "sample", "method", "qid"], sort=False))[::25]
    assert len(groups) > 200
    for _, grp in groups:
        g, s = grp["grade"].to_numpy(float), grp["score"].to_numpy(float)
        if g.min() < g.max() and s.min() < s.max():
            assert _same_bits(_ours(g, s), _scipy(g, s)), grp[["qid", "method"]].iloc[0].tolist()


def test_meta_on_lk_t02s_committed_scores_finds_the_committed_rows():
    """The same statistics as lk_t02's table: its per-candidate file, read as it is, gives
    lk_t02's correlation rows and paired differences (TREC-DL-NF's judged items)."""
    per = M.read_scores([RESULTS / "lk_t02" / "per_candidate.csv"])
    per = per[(per["dataset"] == "trec-dl-nf") & (per["sample"] == "same items")]
    res = M.meta(per, coefficients=("kendall", "spearman", "pearson"), combine=False)
    table = pd.read_csv(RESULTS / "lk_t02.csv", keep_default_na=False,
                        na_values={c: [""] for c in ("ours", "ci_low", "ci_high")})
    mine = table[(table["dataset"] == "trec-dl-nf") & (table["sample"] == "same items")]
    cols = ["ours", "ci_low", "ci_high", "n_questions"]
    corr = mine[~mine["method"].str.contains(" - ") & mine["judge"].isin(["", "mistral"])]
    diffs = mine[mine["method"].str.contains(" - ") & ~mine["method"].str.contains(": ")]
    for committed, ours in ((corr, res.rows), (diffs, res.pairs)):
        assert len(committed) >= 30
        got = ours.set_index(["evaluator", "coefficient"])
        for _, r in committed.iterrows():
            g = got.loc[(r["method"], r["coefficient"])]
            np.testing.assert_allclose(g[cols].to_numpy(float), r[cols].to_numpy(float),
                                       rtol=0, atol=5e-7,
                                       err_msg=f"{r['method']} {r['coefficient']}")
