"""The claims table (nfeval.claims, notebooks/claims.ipynb): verdicts from intervals, every claim
present, the committed table and the README's copy equal to what the committed sources give."""

import math

import pandas as pd
import pytest

from nfeval.claims import CLAIMS, COLUMNS, VERDICTS, claims_table, markdown, verdict
from nfeval.paths import RESULTS, ROOT


def test_verdict_reads_the_interval_against_the_line():
    assert verdict(0.01, 0.3) == "holds"
    assert verdict(-0.3, -0.01) == "contradicted"
    assert verdict(-0.1, 0.2) == "cannot tell at n"
    assert verdict(0.0, 0.2) == "cannot tell at n"  # touching the line decides nothing
    assert verdict(0.51, 0.9, line=0.5) == "holds" and verdict(0.2, 0.4, line=0.5) == "contradicted"
    assert verdict(math.nan, 0.3) == "cannot tell at n"


@pytest.fixture(scope="module")
def committed():
    return pd.read_csv(RESULTS / "claims.csv", keep_default_na=False, na_values=[""])


def test_every_committed_verdict_follows_its_interval(committed):
    assert set(committed.columns) == set(COLUMNS)
    assert set(committed["verdict"]) <= set(VERDICTS)
    for r in committed.itertuples():
        assert r.verdict == verdict(r.ci_low, r.ci_high, r.line), r
        assert r.ci_low <= r.ours <= r.ci_high and r.n >= 1


def test_every_claim_has_a_row_per_dataset_it_concerns(committed):
    have = set(zip(committed["claim"], committed["dataset"]))
    for claim in ("L1", "L2", "D1"):
        assert {(claim, "antique"), (claim, "trec-dl-nf")} <= have, claim
    assert {("L3", "antique"), ("L3", "trec-dl-nf"), ("L3", "webglm")} <= have
    assert ("D2", "debateqa sample") in have and ("D3", "debateqa sample") in have
    assert {("X", "antique"), ("X", "trec-dl-nf")} <= have
    assert set(committed["claim"]) == set(CLAIMS)


def test_the_committed_table_is_what_the_committed_sources_give(committed):
    fresh = claims_table(RESULTS)
    assert len(fresh) == len(committed)
    for col in ("claim", "dataset", "comparison", "verdict", "source"):
        assert fresh[col].tolist() == committed[col].tolist(), col
    for col in ("ours", "ci_low", "ci_high", "paper_margin", "line"):
        assert fresh[col].tolist() == pytest.approx(committed[col].tolist(), abs=1e-5, nan_ok=True)


def test_the_readme_shows_the_committed_table(committed):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- BEGIN claims -->\n")[1].split("<!-- END claims -->")[0]
    assert block == markdown(committed)


def test_a_missing_source_table_is_a_clear_error(tmp_path):
    from nfeval import NfevalError

    with pytest.raises(NfevalError, match="make results/lk_t02.csv"):
        claims_table(tmp_path)
