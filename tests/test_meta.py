"""nfeval meta: which evaluator agrees best with a user's graded answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nfeval import NfevalError, cli
from nfeval import meta_evaluation as M

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "linkage_answers.jsonl"


def _synthetic(n_q=40, per=8, seed=0, noise=(0.3, 1.5, 1.5, 50.0)):
    """Candidates graded 0-3 and methods = grade + Gaussian noise of the given sizes."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        grades = rng.integers(0, 4, per)
        for m, sd in enumerate(noise):
            scores = grades + rng.normal(0, sd, per)
            rows += [{"qid": f"q{q}", "doc_id": f"d{i}", "grade": int(g), "score": float(s),
                      "method": f"m{m}"} for i, (g, s) in enumerate(zip(grades, scores))]
    return pd.DataFrame(rows)


def test_the_best_evaluator_its_ties_and_who_it_beats_on_synthetic_grades():
    res = M.meta(_synthetic(), combine=False)
    best = res.best.iloc[0]
    assert best["best"] == "m0" and best["n_questions"] == 40
    assert not best["ties"]  # m0 (little noise) is told apart from every other
    assert set(best["beats"]) == {"m1", "m2", "m3"}
    rows = res.rows.set_index("evaluator")
    assert rows.loc["m0", "ci_low"] > rows.loc["m1", "ci_high"]
    # m3 is almost pure noise: at chance
    text = "\n".join(res.lines())
    assert "at chance" in text.splitlines()[[i for i, line in enumerate(text.splitlines())
                                             if line.strip().startswith("m3")][0]]
    # m1 and m2 have the same noise: the data cannot tell them apart
    m1m2 = res.pairs[(res.pairs["evaluator"] == "m1 - m2")].iloc[0]
    assert m1m2["ci_low"] < 0 < m1m2["ci_high"]
    assert len(res.pairs) == 4 * 3  # every ordered pair, one coefficient


def test_two_evaluators_the_data_cannot_tell_apart_are_named_as_ties():
    res = M.meta(_synthetic(noise=(1.0, 1.0, 40.0)), combine=False)
    best = res.best.iloc[0]
    assert [t[0] for t in best["ties"]] == [({"m0", "m1"} - {best["best"]}).pop()]
    assert best["beats"] == ["m2"]
    assert "cannot tell it apart from" in res.readings()[0]
    assert "they beat m2" in res.readings()[0]


def test_a_combination_is_called_better_only_where_it_beats_the_best_single_out_of_sample():
    # two methods with independent noise: their rank average beats either one
    res = M.meta(_synthetic(n_q=60, noise=(1.0, 1.0, 60.0)), seed=0)
    diff = res.combination[res.combination["evaluator"] == "rank average - best single"].iloc[0]
    assert diff["ci_low"] > 0
    assert any("rank average combination beats the best single" in r for r in res.readings())
    # one good method and noise: no combination beats it, and none is said to
    res = M.meta(_synthetic(n_q=60, noise=(0.2, 60.0, 60.0)), seed=0)
    assert not any("combination beats" in r for r in res.readings())


def test_too_few_questions_for_folds_is_said_not_hidden():
    res = M.meta(_synthetic(n_q=6), combine=True)
    assert res.combination.empty
    assert any("no combination: 6 questions" in n for n in res.notes)
    assert any("cannot be trusted" in line for line in res.lines())


def test_pairwise_position_preference_from_the_dist_column():
    df = _synthetic(n_q=30, noise=(1.0,)).assign(method="pairwise")
    df["dist"] = json.dumps([{"reference": "r", "candidate_first": True,
                              "dist": {"A": 0.8, "B": 0.1, "C": 0.1}}])
    res = M.meta(df, combine=False)
    p = res.position.iloc[0]
    assert p["ours"] == 1.0 and p["n_questions"] == 30
    assert any("prefers the first slot" in r for r in res.readings())


def test_bad_inputs_are_named_in_one_line(tmp_path):
    df = _synthetic(n_q=5)
    with pytest.raises(NfevalError, match="no human grade"):
        M.meta_frame(df.assign(grade=np.where(df.index == 3, np.nan, df["grade"])))
    with pytest.raises(NfevalError, match="score different candidates"):
        M.meta_frame(df.drop(index=[0]))
    with pytest.raises(NfevalError, match="more than once"):
        M.meta_frame(pd.concat([df, df.iloc[:1]]))
    with pytest.raises(NfevalError, match="unknown coefficient"):
        M.meta(df, coefficients=["tau"])
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(NfevalError, match="no column"):
        M.read_scores([bad])


def test_the_command_on_the_example_file_with_lexical_methods(plot_extra, tmp_path, capsys):
    out = tmp_path / "m"
    code = cli.main(["meta", "--answers", str(EXAMPLE), "--methods", "rouge1,rougeL,bleu",
                     "--coefficient", "kendall,spearman", "--summary", str(out) + ".json",
                     "--plot", str(out) + ".png", "--per-question", str(out) + ".csv",
                     "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0
    assert "kendall with the human grades" in text and "spearman with the human grades" in text
    assert "reading:" in text and "cannot be trusted" in text  # 4 questions
    summary = json.loads((tmp_path / "m.json").read_text())
    assert {r["evaluator"] for r in summary["agreement"]} == {"rouge1", "rougeL", "bleu"}
    assert summary["readings"]
    assert (tmp_path / "m.png").stat().st_size > 1000
    pq = pd.read_csv(tmp_path / "m.csv")
    assert set(pq["coefficient"]) == {"kendall", "spearman"}


def test_the_command_reads_per_item_csvs_of_nfeval_linkage(tmp_path, capsys):
    paths = []
    for m in ("rouge1", "bleu"):
        p = tmp_path / f"{m}.csv"
        assert cli.main(["linkage", "--answers", str(EXAMPLE), "--method", m, "--out", str(p),
                         "--no-progress"]) == 0
        paths.append(str(p))
    capsys.readouterr()
    assert cli.main(["meta", *paths, "--no-combination"]) == 0
    assert "rouge1" in capsys.readouterr().out


def test_an_output_into_a_missing_folder_fails_before_any_scoring(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.setattr(M, "score_methods", lambda *a, **k: pytest.fail("scored"))
    code = cli.main(["meta", "--answers", str(EXAMPLE), "--methods", "rouge1,bleu",
                     "--summary", str(tmp_path / "no" / "x.json")])
    assert code == 2 and "folder does not exist" in capsys.readouterr().err


def test_unknown_methods_are_named_with_a_suggestion(capsys):
    code = cli.main(["meta", "--answers", str(EXAMPLE), "--methods", "rougel,bleu"])
    assert code == 2 and "did you mean 'rougeL'" in capsys.readouterr().err


def test_the_python_api_takes_paths_frames_or_answers_with_methods(tmp_path):
    import nfeval

    res = nfeval.meta(answers=EXAMPLE, methods=["rouge1", "bleu"])
    assert set(res.rows["evaluator"]) == {"rouge1", "bleu"}
    frame = _synthetic(n_q=12)
    assert nfeval.meta(frame, combine=False).best.iloc[0]["best"] == "m0"
    p = tmp_path / "s.csv"
    frame.rename(columns={"doc_id": "candidate_id"}).to_csv(p, index=False)
    assert nfeval.meta(str(p), combine=False).best.iloc[0]["best"] == "m0"
    with pytest.raises(NfevalError, match="give scores"):
        nfeval.meta()


def test_the_python_api_scores_judge_methods_with_its_default_loader(tiny_gpt2_wide_dir):
    """``score_methods`` with no ``load`` loads the judge itself (float32 on the CPU) and scores
    a judge method next to a lexical one on the same items."""
    frame = M.score_methods(EXAMPLE, ["pointwise", "rouge1"], model=str(tiny_gpt2_wide_dir),
                            limit=1, use_cache=False, progress=False)
    assert set(frame["method"]) == {"pointwise", "rouge1"}
    per = frame.groupby("method").size()
    assert per["pointwise"] == per["rouge1"] > 1
    assert frame["score"].notna().all()


def _reversed(df: pd.DataFrame, method: str, seed: int = 1) -> pd.DataFrame:
    """``method``'s scores replaced by minus the grade plus a little noise: it ranks worse
    answers higher."""
    rng = np.random.default_rng(seed)
    df = df.copy()
    rows = df["method"] == method
    df.loc[rows, "score"] = -df.loc[rows, "grade"] + rng.normal(0, 0.5, rows.sum())
    return df


def test_no_evaluator_is_called_best_when_every_one_is_at_chance():
    res = M.meta(_synthetic(noise=(80.0, 80.0, 80.0), seed=3), combine=False)
    rows = res.rows
    assert (rows["ci_low"] <= 0).all()  # the premise: no interval above 0
    best = res.best.iloc[0]
    assert not best["beyond_chance"]
    (reading,) = res.readings()
    assert "agrees best" not in reading and "no evaluator agrees with the grades" in reading
    assert "none can be trusted" in reading
    table = [line for line in res.lines() if line.startswith("  m")]
    assert "highest mean" in "\n".join(table) and " best" not in "\n".join(table)
    assert M.meta(_synthetic(), combine=False).best.iloc[0]["beyond_chance"]  # and otherwise


def test_an_evaluator_whose_interval_lies_below_0_is_said_to_reverse_the_grades():
    res = M.meta(_reversed(_synthetic(noise=(0.5, 80.0, 80.0)), "m2"), combine=False)
    r = res.rows.set_index("evaluator").loc["m2"]
    assert r["ci_high"] < 0
    line = next(x for x in res.lines() if x.strip().startswith("m2"))
    assert line.endswith("reverses the grades")
    assert "m2 reverses the grades" in res.readings()[0]
    assert "m0 agrees best" in res.readings()[0]
    # with every other evaluator at chance: none is named, the reversal still is
    res = M.meta(_reversed(_synthetic(noise=(80.0, 80.0, 80.0)), "m2"), combine=False)
    (reading,) = res.readings()
    assert "no evaluator agrees with the grades beyond chance" in reading
    assert "m2 reverses the grades" in reading


def test_the_combination_block_prints_each_paired_difference_and_labels_each_row():
    res = M.meta(_synthetic(n_q=60, noise=(1.0, 1.0, 60.0)), seed=0)
    text = "\n".join(res.lines())
    for name in ("rank average", "linear"):
        d = res.combination[res.combination["evaluator"] == f"{name} - best single"].iloc[0]
        verdict = ("beats it" if d["ci_low"] > 0 else "worse" if d["ci_high"] < 0
                   else "cannot tell")
        line = next(x for x in text.splitlines() if f"{name} - best single" in x)
        assert f"paired: {verdict}" in line and f"n = {int(d['n_questions'])}" in line
    chosen = res.combination.set_index("evaluator")["chosen"]
    assert chosen["linear"].startswith("a ridge fit") and "mean weights" in chosen["linear"]
    assert chosen["rank average"].startswith("the mean rank of")
    assert "folds" in chosen["best single"]
    assert len({chosen["linear"], chosen["rank average"], chosen["best single"]}) == 3


def test_meta_answers_names_every_line_it_leaves_out(plot_extra, tmp_path, capsys):
    lines = EXAMPLE.read_text().splitlines()
    bad = tmp_path / "answers.jsonl"
    bad.write_text("\n".join([lines[0], "{not json", lines[1], "", *lines[2:]]) + "\n")
    out = tmp_path / "m.json"
    code = cli.main(["meta", "--answers", str(bad), "--methods", "rouge1,rougeL,bleu",
                     "--summary", str(out), "--no-progress", "--no-combination"])
    cap = capsys.readouterr()
    assert code == 0
    assert "skipped line 2: invalid JSON" in cap.err and "skipped line 4: blank line" in cap.err
    assert "left out of every evaluator: 2 line(s)" in cap.out
    summary = json.loads(out.read_text())
    assert summary["left_out"]["count"] == 2
    assert summary["left_out"]["entries"][0].startswith("line 2: invalid JSON")


def _run_csv(path, frame, method="linkage"):
    frame.assign(method=method).rename(columns={"doc_id": "candidate_id"}).to_csv(path,
                                                                                   index=False)
    return str(path)


def test_two_runs_of_one_method_are_named_by_what_differs_in_their_file_names(tmp_path):
    """Two judges of one method (nfeval linkage names a file after its non-default settings):
    meta compares them, each named by its file's own part."""
    base = _synthetic(n_q=12, noise=(0.5, 5.0))
    a = _run_csv(tmp_path / "mine.linkage.csv", base[base["method"] == "m0"])
    b = _run_csv(tmp_path / "mine.linkage.smollm2-135m-instruct.csv",
                 base[base["method"] == "m1"])
    res = M.meta(M.read_scores([a, b]), combine=False)
    assert set(res.rows["evaluator"]) == {"linkage (default)",
                                          "linkage (smollm2-135m-instruct)"}
    assert "linkage (default) - linkage (smollm2-135m-instruct)" in set(res.pairs["evaluator"])
    # one name in two folders: the folders tell them apart
    (tmp_path / "guard").mkdir()
    (tmp_path / "off").mkdir()
    c = _run_csv(tmp_path / "guard" / "mine.linkage.csv", base[base["method"] == "m0"])
    d = _run_csv(tmp_path / "off" / "mine.linkage.csv", base[base["method"] == "m1"])
    names = set(M.meta(M.read_scores([c, d]), combine=False).rows["evaluator"])
    assert names == {f"linkage ({tmp_path / 'guard'})", f"linkage ({tmp_path / 'off'})"}
    # nothing tells them apart: refused, saying how
    with pytest.raises(NfevalError, match="give each file once, or name each run's file"):
        M.read_scores([a, a])


def test_meta_answers_passes_prompt_and_guard_to_the_judge_methods_only(monkeypatch):
    from nfeval.linkage import score_file as SF

    seen = {}
    real = SF.score_linkage_file

    def spy(lf, settings, model, **kw):
        seen[settings.method] = settings
        if settings.method == "linkage":  # no model: score the lexical way, as rouge1
            settings = SF.LinkageSettings("rouge1")
        return real(lf, settings, None, **kw)

    monkeypatch.setattr(SF, "score_linkage_file", spy)
    prompt = "Rank #candidate among: #ground (question: #question)"
    M.score_methods(EXAMPLE, ["linkage", "rouge1"], prompt=prompt, guard="strip",
                    loader=type("Loader", (), {"load": lambda self, name: object()})(),
                    progress=False, use_cache=False)
    assert seen["linkage"].guard == "strip" and seen["linkage"].prompt == prompt
    assert seen["rouge1"].guard == "off" and seen["rouge1"].prompt is None


def test_meta_on_csvs_refuses_the_scoring_options(tmp_path, capsys):
    p = _run_csv(tmp_path / "a.csv", _synthetic(n_q=4, noise=(1.0,)), method="m")
    assert cli.main(["meta", p, "--guard"]) == 2
    assert "go with --answers" in capsys.readouterr().err
