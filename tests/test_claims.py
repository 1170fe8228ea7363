"""The claims table (nfeval.claims, notebooks/claims.ipynb): verdicts from intervals, every claim
present, the committed table and the README's copy equal to what the committed sources give."""

import math

import pandas as pd
import pytest

from nfeval.claims import CLAIMS, COLUMNS, VERDICTS, claims_table, markdown, settled, verdict
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
    for r in committed.itertuples():
        if r.verdict == "not computed":
            assert math.isnan(r.ours) and r.note.startswith("not computed: "), r
            continue
        if r.verdict.startswith("borderline: "):  # the seeds disagree; seed 0 is one of them
            assert verdict(r.ci_low, r.ci_high, r.line) in r.verdict, r
            continue
        assert r.verdict in VERDICTS
        assert r.verdict == verdict(r.ci_low, r.ci_high, r.line), r
        assert r.ci_low <= r.ours <= r.ci_high and r.n >= 1


def test_settled_labels_a_verdict_the_seeds_disagree_on_as_borderline():
    assert settled(["holds"] * 5) == "holds"
    assert settled(["holds", "cannot tell at n", "holds", "holds", "cannot tell at n"]) == \
        "borderline: holds in 3 of 5 seeds"


def test_every_baseline_the_papers_print_has_a_claims_row(committed):
    """Read from the papers' tables (data/paper_values), not from the claims code's lists:
    every non-LINKAGE row of LINKAGE Tables 2-5 and every DebateQA Table 2 metric has a row
    in the claim that names it (computed, or "not computed" with its reason)."""
    from nfeval.results import paper_values

    def names(claim, dataset):
        sel = committed[(committed["claim"] == claim) & (committed["dataset"] == dataset)]
        return list(sel["comparison"])

    expected = []
    for r in paper_values("lk_t02").itertuples():
        if not r.method.startswith("linkage"):
            lexical = r.method in ("rouge1", "rouge2", "rougeL", "bleu", "bertscore")
            expected.append(("L1" if lexical else "L2", r.dataset, "", r.method))
    for artefact, label in (("lk_t03", "1GT: "), ("lk_t04", "0GT: ")):
        for r in paper_values(artefact).itertuples():
            if not r.method.startswith("linkage"):
                expected.append(("L3", r.dataset, label, r.method))
    for r in paper_values("lk_t05").itertuples():
        if not r.method.startswith("linkage"):
            expected.append(("L3", "webglm", "WebGLM", r.method))
    for ds in ("antique", "trec-dl-nf"):
        for m in ("direct_score", "g_eval", "num_povs", "acknowledge"):
            expected.append(("D1", ds, "P.D. - ", m))
    label = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "bleu": "BLEU",
             "bertscore": "BERTScore", "pointwise-noref": "pointwise",
             "pointwise-ref": "pointwise (refs)", "pairwise": "pairwise",
             "direct_score": "Direct-Score", "g_eval": "G-Eval", "num_povs": "Num-of-POVs",
             "acknowledge": "Acknowledge (for DELPHI)"}
    missing = []
    for claim, ds, prefix, method in expected:
        have = names(claim, ds)
        if prefix == "WebGLM":  # both of Table 5's measures
            ok = sum(c.startswith("WebGLM") and c.endswith(f"LINKAGE - {label[method]}")
                     for c in have) == 2
        elif prefix == "P.D. - ":
            ok = any(c.startswith("P.D.") and c.endswith(f" - {label[method]}") for c in have)
        else:
            ok = f"{prefix}LINKAGE 0-shot - {label[method]}" in have
        if not ok:
            missing.append((claim, ds, prefix + method))
    assert not missing, missing
    assert len(expected) > 40


def test_d1_sets_pd_against_the_judge_on_one_backbone(committed):
    d1 = committed[committed["claim"] == "D1"]
    same = d1[(d1["model_a"] == d1["judge"]) & (d1["model_b"] == d1["judge"])]
    assert set(same["dataset"]) == {"antique", "trec-dl-nf"}, "no same-backbone D1 row"
    assert (d1.loc[d1["model_b"].isna() | (d1["model_b"] == ""), "comparison"]
            .str.endswith("Acknowledge (for DELPHI)").all())


def test_the_seed_check_recomputes_the_committed_sources_at_seed_0():
    """Seed 0 of the check recomputes the source tables from their per-unit files and must
    give the committed rows (the check varies the resampling only)."""
    from nfeval import claims

    base = claims._rows(RESULTS)
    try:
        claims._SUBSTITUTES.update({a: claims.recomputed_source(RESULTS, a, 0)
                                    for a in claims.SOURCES})
        again = claims._rows(RESULTS)
    finally:
        claims._SUBSTITUTES.clear()
    assert again["comparison"].tolist() == base["comparison"].tolist()
    for col in ("ours", "ci_low", "ci_high"):
        assert again[col].tolist() == pytest.approx(base[col].tolist(), rel=2e-5, abs=2e-6,
                                                    nan_ok=True), col
    assert again["n"].tolist() == base["n"].tolist()


def test_a_second_seed_gives_the_committed_labels(committed):
    """Resampled under a seed outside the check, every settled verdict stays; a borderline one
    may go either way."""
    from nfeval.claims import seed_verdicts

    other = seed_verdicts(RESULTS, seeds=(0, 11))
    for label, got in zip(committed["verdict"], other["seed_11"]):
        if label.startswith("borderline: ") or label == "not computed":
            continue
        assert got == label


def test_every_claim_has_a_row_per_dataset_it_concerns(committed):
    have = set(zip(committed["claim"], committed["dataset"]))
    for claim in ("L1", "L2", "D1"):
        assert {(claim, "antique"), (claim, "trec-dl-nf")} <= have, claim
    assert {("L3", "antique"), ("L3", "trec-dl-nf"), ("L3", "webglm")} <= have
    assert ("D2", "debateqa sample") in have and ("D3", "debateqa sample") in have
    assert {("X", "antique"), ("X", "trec-dl-nf")} <= have
    assert set(committed["claim"]) == set(CLAIMS)


def test_the_committed_table_is_what_the_committed_sources_give(committed):
    """Rows, numbers and verdicts as the committed sources give them (the seed check's other
    seeds are the next tests': here a borderline label must hold seed 0's verdict)."""
    fresh = claims_table(RESULTS, seeds=())
    assert len(fresh) == len(committed)
    for col in ("claim", "dataset", "comparison", "source", "model_a", "model_b"):
        assert fresh[col].fillna("").tolist() == committed[col].fillna("").tolist(), col
    for got, label in zip(fresh["verdict"], committed["verdict"]):
        assert got == label or (label.startswith("borderline: ") and got in label)
    for col in ("ours", "ci_low", "ci_high", "paper_margin", "line"):
        assert fresh[col].tolist() == pytest.approx(committed[col].tolist(), abs=1e-5, nan_ok=True)


def test_the_docs_show_the_committed_table_and_the_readme_its_summary(committed):
    from nfeval.claims import summary

    page = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    block = page.split("<!-- BEGIN claims -->\n")[1].split("<!-- END claims -->")[0]
    assert block == markdown(committed)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- BEGIN claims-summary -->\n")[1].split("<!-- END claims-summary -->")[0]
    assert block == summary(committed)


def test_a_missing_source_table_is_a_clear_error(tmp_path):
    from nfeval import NfevalError

    with pytest.raises(NfevalError, match="make results/lk_t02.csv"):
        claims_table(tmp_path)
