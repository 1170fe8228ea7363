"""The claims table (nfeval_repro.claims, notebooks/claims.ipynb): verdicts from intervals, every claim
present, the committed table and the README's copy equal to what the committed sources give."""

import math
from pathlib import Path

import pandas as pd
import pytest

from nfeval_repro.claims import (CLAIMS, COLUMNS, FLIP_LABEL, VERDICTS, claims_table,
                                 flip_probability, kind, markdown, plain_verdict, row_verdict,
                                 tie, verdict)

ROOT = Path(__file__).resolve().parents[3]  # the checkout
RESULTS = ROOT / "results"


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


def test_every_committed_label_follows_its_interval(committed):
    """Each label names its interval's verdict, a tie exactly where a bound is the line, and
    a settled label is what row_verdict gives with no seed turning it."""
    assert set(committed.columns) == set(COLUMNS)
    for r in committed.itertuples():
        if r.verdict == "not computed":
            assert math.isnan(r.ours) and r.note.startswith("not computed: "), r
            continue
        assert kind(r.verdict) in (*VERDICTS, "borderline"), r
        if r.verdict == "too few questions":
            assert r.n < 10, r
            continue
        assert plain_verdict(r.verdict) == verdict(r.ci_low, r.ci_high, r.line), r
        if r.verdict.startswith("cannot tell at n: a tie"):
            assert tie(r.ci_low, r.ci_high, r.line), r
        if kind(r.verdict) != "borderline":
            assert r.verdict == row_verdict(r.ci_low, r.ci_high, r.line, r.n, flips=0,
                                            seeds=100), r
        assert r.ci_low <= r.ours <= r.ci_high and r.n >= 1


def test_a_label_says_what_could_turn_it():
    assert row_verdict(0.1, 0.5, 0.0, 9) == "too few questions"
    assert row_verdict(0.1, 0.5, 0.0, 10) == "holds"
    # counted: 23 of 100 other seeds turn it; 4 of 100 do not make it borderline
    assert row_verdict(-0.1296, 0.0004, 0.0, 430, flips=23, seeds=100) == (
        "borderline: cannot tell at n here; other resampling seeds turn it in 23 of 100 (a "
        "bound 0.0004 from the line)")
    assert row_verdict(-0.1296, 0.0004, 0.0, 430, flips=4, seeds=100) == "cannot tell at n"
    # estimated (no seeds counted): width 0.13, a Monte Carlo spread of about 0.0009; a bound
    # 0.0004 from the line turns with probability about 0.33, one 0.01 away never
    near = row_verdict(-0.1296, 0.0004, 0.0, 430)
    assert near.startswith("borderline: cannot tell at n here; another resampling seed turns "
                           "it with probability 0.3"), near
    assert "estimated from the interval's width" in near
    assert row_verdict(-0.14, -0.01, 0.0, 430) == "contradicted"
    # the G-Eval row's numbers: about three spreads from the line, 0.3% (below FLIP_LABEL)
    assert flip_probability(0.0081, 0.439, 0.0) == pytest.approx(0.0026, abs=0.001)
    assert row_verdict(0.0081, 0.439, 0.0, 43) == "holds"
    assert flip_probability(-0.0001, 0.2) > 0.4 and math.isnan(flip_probability(math.nan, 0.2))


def test_the_monte_carlo_spread_matches_the_seeds_on_data_it_never_saw():
    """A paired sample drawn here (not a committed row), its interval recomputed under 100
    resampling seeds: the standard deviation of each bound between seeds lies within 30% of
    reseed_spread's estimate from seed 0's interval alone."""
    import numpy as np

    from nfeval_repro.claims import reseed_spread
    from nfeval.metrics.intervals import paired_difference

    rng = np.random.default_rng(20261205)
    for n in (40, 240):
        va = dict(enumerate(rng.normal(0.1, 0.5, n)))
        vb = dict(enumerate(rng.normal(0.0, 0.5, n)))
        ivs = [paired_difference(va, vb, seed=s, key="synthetic") for s in range(101)]
        spread = reseed_spread(ivs[0].low, ivs[0].high)
        for bound in ("low", "high"):
            sd = float(np.std([getattr(iv, bound) for iv in ivs[1:]], ddof=1))
            assert 0.7 * spread < sd < 1.3 * spread, (n, bound, sd, spread)


def test_a_bound_on_its_line_is_named_a_tie():
    """Kendall's tau over 5 systems moves in steps of 0.2: an upper bound of exactly 0.8 is a
    tie with the line, not Monte Carlo spread; one off by a float's last digits is too."""
    assert row_verdict(-0.4, 0.8, 0.8, 40) == ("cannot tell at n: a tie, the upper bound "
                                               "equals the line 0.8 (the statistic moves in "
                                               "steps)")
    assert tie(-0.4, 0.7999999999999999, 0.8) == "upper" and tie(0.0, 0.2) == "lower"
    assert tie(-0.4, 0.79, 0.8) == ""
    assert kind(row_verdict(-0.4, 0.8, 0.8, 40)) == "cannot tell at n"


def test_a_dtype_shift_turns_a_row_only_in_the_direction_that_crosses_its_line():
    """lk_t02's every-candidate table ran its judge in bfloat16; float32 ~ ours - shift. A
    shift that would carry the bound across the line makes the row borderline, one that
    carries it away from the line does not."""
    near = row_verdict(0.005, 0.100, 0.0, 53, dtype_shift=+0.0135, dtype="bfloat16")
    assert near.startswith("borderline: holds here; float32 could give cannot tell at n")
    assert "bfloat16 moved this comparison by +0.0135 against float32" in near
    assert row_verdict(0.005, 0.100, 0.0, 53, dtype_shift=-0.0135, dtype="bfloat16") == "holds"
    # L3 TREC-DL-NF 1GT 3-shot - pointwise: contradicted, bf16 moved it +0.030 above float32
    assert row_verdict(-0.116, -0.0119, 0.0, 40, dtype_shift=0.0301, dtype="bfloat16") == \
        "contradicted"
    assert row_verdict(-0.116, -0.0119, 0.0, 40, dtype_shift=-0.0301, dtype="bfloat16"
                       ).startswith("borderline: contradicted here; float32 could give")
    assert row_verdict(0.005, 0.100, 0.0, 53) == "holds"  # no dtype check
    assert row_verdict(0.1, 0.5, 0.0, 9, dtype_shift=0.5) == "too few questions"


def test_the_l1_l2_rows_carry_the_shift_of_their_own_comparison_from_the_dtype_check():
    from nfeval_repro.claims import _diff_rows

    table = pd.DataFrame([
        {"dataset": "trec-dl-nf", "method": f"linkage-0shot - {b}", "coefficient": "spearman",
         "our_judge": "j", "ours": 0.05, "ci_low": lo, "ci_high": 0.10, "n_questions": 53}
        for b, lo in (("pointwise-noref", 0.005), ("pointwise-ref", 0.006))])
    check = pd.DataFrame([
        {"dataset": "trec-dl-nf", "method": "linkage-0shot - pointwise-noref",
         "coefficient": "spearman", "shift": 0.0136, "dtype": "bfloat16"},
        {"dataset": "trec-dl-nf", "method": "linkage-0shot - pointwise-ref",
         "coefficient": "spearman", "shift": 0.0010, "dtype": "bfloat16"},
        {"dataset": "trec-dl-nf", "method": "linkage-0shot - pointwise-ref",
         "coefficient": "kendall", "shift": 0.5, "dtype": "bfloat16"}])
    paper = pd.DataFrame(columns=["dataset", "method", "judge", "coefficient", "paper"])
    rows = _diff_rows(table, claim="L2", source="lk_t02", a="linkage-0shot",
                      others={"trec-dl-nf": ["pointwise-noref", "pointwise-ref"]}, paper=paper,
                      dtype_check=check)
    verdicts = [r.as_dict()["verdict"] for r in rows]
    assert verdicts[0].startswith("borderline: holds here; float32") and "+0.0136" in verdicts[0]
    assert verdicts[1] == "holds"  # its own shift (0.001) is below its bound, not kendall's


def test_every_baseline_the_papers_print_has_a_claims_row(committed):
    """Read from the papers' tables (data/paper_values), not from the claims code's lists:
    every non-LINKAGE row of LINKAGE Tables 2-5 and every DebateQA Table 2 metric has a row
    in the claim that names it (computed, or "not computed" with its reason)."""
    from nfeval_repro.tables import paper_values

    def names(claim, dataset):
        sel = committed[(committed["claim"] == claim) & (committed["dataset"] == dataset)]
        return list(sel["comparison"])

    variants = {"linkage-0shot": "LINKAGE 0-shot", "linkage-fewshot": "LINKAGE 3-shot"}
    expected = []
    for artefact, claim_of, prefix in (("lk_t02", None, ""), ("lk_t03", "L3", "1GT: "),
                                       ("lk_t04", "L3", "0GT: ")):
        paper = paper_values(artefact)
        for r in paper.itertuples():
            if r.method.startswith("linkage"):
                continue
            lexical = r.method in ("rouge1", "rouge2", "rougeL", "bleu", "bertscore")
            claim = claim_of or ("L1" if lexical else "L2")
            # every LINKAGE variant the paper's table prints, against every baseline (L1
            # too: the few-shot row is the paper's bold one)
            printed = [v for v in variants if (paper["method"] == v).any()]
            for v in printed:
                expected.append((claim, r.dataset, prefix, variants[v], r.method))
    for r in paper_values("lk_t05").itertuples():
        if not r.method.startswith("linkage"):
            expected.append(("L3", "webglm", "WebGLM", "LINKAGE", r.method))
    for ds in ("antique", "trec-dl-nf"):
        for m in ("direct_score", "g_eval", "num_povs", "comprehensiveness"):
            expected.append(("D1", ds, "P.D. - ", "P.D.", m))
    label = {"rouge1": ["ROUGE-1"], "rouge2": ["ROUGE-2"], "rougeL": ["ROUGE-L"],
             "bleu": ["BLEU"],
             "bertscore": ["BERTScore ([CLS] cosine, as the release)", "BERTScore (MiniLM F1)"],
             "pointwise-noref": ["pointwise"],
             "pointwise-ref": ["pointwise (refs)"],
             "pairwise": ["pairwise", "pairwise (candidate first)"],
             "direct_score": ["Direct-Score"], "g_eval": ["G-Eval"], "num_povs": ["Num-of-POVs"],
             "comprehensiveness": ["Comprehensiveness Answer Rate (DELPHI)"]}
    missing = []
    for claim, ds, prefix, variant, method in expected:
        have = names(claim, ds)
        if prefix == "WebGLM":  # both of Table 5's measures
            ok = any(sum(c.startswith("WebGLM") and c.endswith(f"LINKAGE - {x}")
                         for c in have) == 2 for x in label[method])
        elif prefix == "P.D. - ":
            ok = any(c.startswith("P.D.") and c.endswith(f" - {label[method][0]}")
                     for c in have)
        else:
            ok = any(f"{prefix}{variant} - {x}" in have for x in label[method])
        if not ok:
            missing.append((claim, ds, prefix + variant + " - " + method))
    assert not missing, missing
    assert len(expected) > 60
    # Table 3's two claims: D.A. against DELPHI's rule and against its zero-shot prompt
    d2 = set(committed.loc[committed["claim"] == "D2", "comparison"])
    assert {"D.A. - Acknowledge (DELPHI's rule)", "D.A. - D.A.-ZS (no demonstrations)"} <= d2


def test_d1_sets_pd_against_the_judge_on_one_backbone(committed):
    d1 = committed[committed["claim"] == "D1"]
    same = d1[(d1["model_a"] == d1["judge"]) & (d1["model_b"] == d1["judge"])]
    assert set(same["dataset"]) == {"antique", "trec-dl-nf"}, "no same-backbone D1 row"
    no_model = d1.loc[d1["model_b"].isna() | (d1["model_b"] == ""), "comparison"]
    assert (no_model.str.endswith("Acknowledge (DELPHI's rule)")
            | no_model.str.endswith("Comprehensiveness Answer Rate (DELPHI)")).all()


def test_the_seed_check_recomputes_the_committed_sources_at_seed_0():
    """Seed 0 of the check recomputes the source tables from their per-unit files and must
    give the committed rows (the check varies the resampling only). The committed source
    cells hold 6 significant digits (tables.TABLE_DIGITS) and a row is one cell or the
    difference of two, each at most 1 in size: a row recomputed in memory lies within two
    half-units of the 6th digit of 1 (1e-6) of the row read from the committed cells, on
    every CPU (the numbers are computed without kernel-dependent sums where it matters)."""
    import math

    from nfeval_repro import claims
    from nfeval_repro.tables import TABLE_DIGITS, tolerance

    base = claims._rows(claims.Sources(RESULTS))
    again = claims._rows(claims.Sources(RESULTS, tables={
        a: claims.recomputed_source(RESULTS, a, 0) for a in claims.SOURCES}))
    assert again["comparison"].tolist() == base["comparison"].tolist()
    for col in ("ours", "ci_low", "ci_high"):
        for key, a, b in zip(base["comparison"], again[col], base[col]):
            if math.isnan(a) and math.isnan(b):
                continue
            tol = 2 * tolerance(max(abs(b), 0.5), TABLE_DIGITS)
            assert abs(a - b) <= tol, f"{key} {col}: {a} recomputed, {b} committed (tol {tol})"
    assert again["n"].tolist() == base["n"].tolist()


@pytest.fixture(scope="module")
def brute():
    from nfeval_repro.claims import read_seed_check

    check = read_seed_check(RESULTS)
    assert check is not None, "results/claims/seed_check.csv: run python -m nfeval_repro.claim_seeds"
    return check


def test_the_brute_force_belongs_to_the_committed_table(committed, brute):
    """results/claims/seed_check.csv (python -m nfeval_repro.claim_seeds) holds every row of
    the committed claims table with seed 0's interval, over two blocks of at least 100 seeds,
    and every committed label reads its label block (none estimated)."""
    key = ["claim", "dataset", "comparison"]
    assert brute[key].values.tolist() == committed[key].values.tolist()
    assert brute["ci_low"].tolist() == pytest.approx(committed["ci_low"].tolist(), abs=1e-5,
                                                     nan_ok=True)
    assert (brute["seeds_label"] >= 100).all() and (brute["seeds_check"] >= 100).all()
    assert not committed["verdict"].str.contains("estimated from the interval").any()


def test_recomputed_seeds_give_the_brute_forces_columns(brute):
    """Seed 11 (label block) and seed 111 (check block), recomputed here from the per-unit
    files, turn exactly the rows the committed brute force says they turn."""
    from nfeval_repro.claims import seed_verdicts

    other = seed_verdicts(RESULTS, seeds=(0, 11, 111))
    for r, s0, s11, s111 in zip(brute.itertuples(), other["seed_0"], other["seed_11"],
                                other["seed_111"]):
        assert (s0 != s11) == ("11" in str(r.flipped_label).split()), r.comparison
        assert (s0 != s111) == ("111" in str(r.flipped_check).split()), r.comparison


def test_no_label_disagrees_with_the_seeds_it_never_read(committed, brute):
    """Every label (read from seeds 1..100) against the check block (seeds 101..200): none
    whose 95% Clopper-Pearson interval of the flip rate lies wholly on the other side of
    FLIP_LABEL; and each label's count is its label block's."""
    from nfeval_repro.claims import by_resampling, disagreements

    bad = disagreements(committed, brute)
    assert bad.empty, bad.to_string()
    assert (brute["flips_label"] > 0).any()  # the brute force found rows that seeds turn
    for r, b in zip(committed.itertuples(), brute.itertuples()):
        if by_resampling(r.verdict):
            assert f"turn it in {b.flips_label} of {b.seeds_label}" in r.verdict, r.verdict
            assert b.flips_label / b.seeds_label >= FLIP_LABEL


def test_disagreements_finds_a_label_the_seeds_contradict(committed, brute):
    from nfeval_repro.claims import disagreements

    table, check = committed.copy(), brute.copy()
    settled = table.index[table["verdict"].isin(["holds", "contradicted"])][0]
    check.at[settled, "flips_check"] = 40  # a settled label that 40 of 100 seeds turn
    other = table.index[table["verdict"].isin(["holds", "contradicted"])][1]
    table.at[other, "verdict"] = ("borderline: holds here; other resampling seeds turn it in "
                                  "30 of 100 (...)")
    check.at[other, "flips_check"] = 0  # ... and a borderline label that no seed turns
    bad = disagreements(table, check)
    assert sorted(bad["comparison"]) == sorted(table.loc[[settled, other], "comparison"])


def test_a_row_the_brute_force_does_not_fit_is_estimated_and_said(brute):
    """A claims row whose interval moved since the brute force was written is labelled from
    the estimate, says so, and the table warns."""
    check = brute.copy()
    check["ci_low"] = check["ci_low"] + 0.01
    with pytest.warns(UserWarning, match="not in claims/seed_check.csv"):
        table = claims_table(RESULTS, seed_check=check)
    assert (table["verdict"] == claims_table(RESULTS, seed_check=None)["verdict"]).all()


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
    fresh = claims_table(RESULTS)  # labels from the committed brute force
    assert len(fresh) == len(committed)
    for col in ("claim", "dataset", "comparison", "source", "model_a", "model_b", "verdict"):
        assert fresh[col].fillna("").tolist() == committed[col].fillna("").tolist(), col
    for col in ("ours", "ci_low", "ci_high", "paper_margin", "line"):
        assert fresh[col].tolist() == pytest.approx(committed[col].tolist(), abs=1e-5, nan_ok=True)


def test_the_docs_show_the_committed_table_and_the_readme_its_summary(committed):
    from nfeval_repro.claims import summary

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


def test_the_seed_parameter_changes_the_resampling_the_rows_read():
    """claims_table's seed: 0 reads the committed tables; another seed recomputes every source
    under it: the same estimates, other interval bounds."""
    base = claims_table(RESULTS, seed_check=None)
    other = claims_table(RESULTS, seed=7)
    computed = base["verdict"] != "not computed"
    assert other["ours"][computed].tolist() == pytest.approx(base["ours"][computed].tolist(),
                                                             abs=1e-5)
    moved = (other["ci_low"][computed] - base["ci_low"][computed]).abs()
    assert (moved > 1e-6).sum() > len(moved) / 2


def test_changes_pairs_rows_and_names_every_verdict_that_moved(committed, tmp_path, capsys):
    """Two claims tables side by side: widths before and after, the ratio, and each verdict
    that changed; a row in one table only is kept and counted as changed."""
    from nfeval_repro.claims import _main, changes

    after = committed.copy()
    first = after.index[after["claim"] == "L1"][0]
    half = (after.at[first, "ci_high"] - after.at[first, "ci_low"]) / 2
    after.at[first, "ci_high"] = after.at[first, "ci_low"] + half
    after.at[first, "verdict"] = "contradicted"
    after = after.drop(after.index[-1])
    table = changes(committed, after)
    assert len(table) == len(committed)
    row = table[(table["comparison"] == committed.at[first, "comparison"])
                & (table["dataset"] == committed.at[first, "dataset"])
                & (table["claim"] == "L1")].iloc[0]
    assert row["width_ratio"] == pytest.approx(0.5)
    assert row["verdict_after"] == "contradicted" and row["verdict_changed"]
    gone = table[table["verdict_after"].isna()]
    assert len(gone) == 1 and gone["verdict_changed"].all()
    assert int(table["verdict_changed"].sum()) == 2
    only = changes(committed, committed, claims=("L1", "L2"))
    assert set(only["claim"]) == {"L1", "L2"} and not only["verdict_changed"].any()
    assert (only["width_ratio"].dropna() == 1).all()

    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    committed.to_csv(a, index=False)
    after.to_csv(b, index=False)
    assert _main([str(a), str(b), "--claims", "L1", "--out", str(tmp_path / "c.csv")]) == 0
    out = capsys.readouterr().out
    assert "-> **contradicted**" in out and "1 verdict changed" in out
    assert "-> **-**" not in out and "nan" not in out  # L1 only: the dropped row is not L1
    _main([str(a), str(b), "--claims", next(iter(committed.iloc[[-1]]["claim"]))])
    assert "-> **-**" in capsys.readouterr().out  # the row the later table lacks
    assert (tmp_path / "c.csv").is_file()
    with pytest.raises(SystemExit):
        _main([str(a), str(b), "--claims", "L9"])
    assert "unknown claim L9" in capsys.readouterr().err


def test_a_stages_part_table_gives_its_artefacts_rows_on_its_dataset(committed, tmp_path,
                                                                      capsys):
    """A part folder holding the committed lk_t02 outputs cut to TREC-DL-NF gives the committed
    TREC-DL-NF rows of lk_t02 back (same estimates and intervals, no verdict changed), and
    nothing of another artefact or dataset."""
    import shutil

    from nfeval import NfevalError
    from nfeval_repro.claims import _main, part_claims

    part = tmp_path / "lk_t02-trec-dl-nf"
    (part / "lk_t02").mkdir(parents=True)
    t = pd.read_csv(RESULTS / "lk_t02.csv", keep_default_na=False, na_values=[""])
    t[t["dataset"] == "trec-dl-nf"].to_csv(part / "lk_t02.csv", index=False)
    shutil.copy(RESULTS / "lk_t02.json", part / "lk_t02.json")
    per = pd.read_csv(RESULTS / "lk_t02" / "per_candidate.csv", dtype=str)
    per[per["dataset"] == "trec-dl-nf"].to_csv(part / "lk_t02" / "per_candidate.csv",
                                                index=False)
    if (RESULTS / "lk_t02" / "dtype_check.csv").exists():  # a bf16 table's margin, as a stage writes it
        check = pd.read_csv(RESULTS / "lk_t02" / "dtype_check.csv", dtype=str)
        check[check["dataset"] == "trec-dl-nf"].to_csv(part / "lk_t02" / "dtype_check.csv",
                                                       index=False)
    rows, artefact, datasets = part_claims(part)
    assert (artefact, datasets) == ("lk_t02", ["trec-dl-nf"])
    mine = committed[(committed["source"] == "lk_t02") & (committed["dataset"] == "trec-dl-nf")]
    assert len(rows) == len(mine) > 0 and set(rows["claim"]) == {"L1", "L2", "L4"}
    got = rows.set_index(["claim", "comparison"])[["ours", "ci_low", "ci_high", "n"]]
    want = mine.set_index(["claim", "comparison"])[["ours", "ci_low", "ci_high", "n"]]
    pd.testing.assert_frame_equal(got.sort_index(), want.sort_index(), check_dtype=False)
    assert _main([str(RESULTS / "claims.csv"), "--part", str(part), "--claims", "L2"]) == 0
    out = capsys.readouterr().out
    assert "lk_t02 on trec-dl-nf" in out and "0 verdicts changed" in out
    with pytest.raises(SystemExit):
        _main([str(RESULTS / "claims.csv"), str(RESULTS / "claims.csv"), "--part", str(part)])
    with pytest.raises(NfevalError):
        part_claims(tmp_path)
