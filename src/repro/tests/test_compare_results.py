"""scripts/compare_results.py: the cross-machine comparison of results tables."""

import importlib.util
from pathlib import Path

import pandas as pd

spec = importlib.util.spec_from_file_location(
    "compare_results", Path(__file__).resolve().parents[3] / "scripts" / "compare_results.py")
compare_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_results)


def _write(root: Path, name: str, frame: pd.DataFrame) -> None:
    (root / "results").mkdir(parents=True, exist_ok=True)
    frame.to_csv(root / "results" / name, index=False)


def test_within_tolerance_is_the_same_and_beyond_it_differs(tmp_path):
    table = pd.DataFrame({"method": ["a", "b"], "ours": [0.5, float("nan")], "n_questions": [3, 3]})
    _write(tmp_path / "old", "t.csv", table)
    _write(tmp_path / "new", "t.csv", table.assign(ours=[0.50005, float("nan")]))
    assert compare_results.main([str(tmp_path / "new"), str(tmp_path / "old")]) == 0
    _write(tmp_path / "new", "t.csv", table.assign(ours=[0.5002, float("nan")]))
    assert compare_results.main([str(tmp_path / "new"), str(tmp_path / "old")]) == 1
    _write(tmp_path / "new", "t.csv", table.assign(ours=[0.5, 0.1]))  # NaN only where NaN
    assert compare_results.main([str(tmp_path / "new"), str(tmp_path / "old")]) == 1
    _write(tmp_path / "new", "t.csv", table.assign(method=["a", "c"]))
    lines = compare_results.compare(tmp_path / "new", tmp_path / "old")
    assert lines == ["DIFFERS t.csv: 1 cells differ (largest numeric gap 0)"]


def test_a_missing_or_reshaped_table_differs(tmp_path):
    _write(tmp_path / "old", "t.csv", pd.DataFrame({"ours": [1.0]}))
    (tmp_path / "new").mkdir()
    assert compare_results.compare(tmp_path / "new", tmp_path / "old")[0].startswith("DIFFERS")
    _write(tmp_path / "new", "t.csv", pd.DataFrame({"ours": [1.0, 2.0]}))
    assert "shape" in compare_results.compare(tmp_path / "new", tmp_path / "old")[0]
