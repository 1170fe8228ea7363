"""Results tables: long form, column order, determinism, paper join, signatures."""

import json

import pandas as pd
import pytest

from nfeval import NfevalError
from nfeval_repro.tables import Signature, join_paper, paper_values, write_frame, write_table


NONE = "none: exact counts in this test"


def test_column_order_and_json(tmp_path):
    table = pd.DataFrame({"n_questions": [5, 5], "paper": [0.5, None], "ours": [0.4, 0.3],
                          "sd": [0.1, 0.2], "ci_high": [0.5, 0.4], "ci_low": [0.3, 0.2],
                          "method": ["a", "b"], "dataset": ["x", "x"]})
    sig = Signature(metric="kendall", variant="test", seed=1, n=5)
    csv_path, json_path = write_table("t", table, id_columns=["dataset", "method"],
                                      interval="questions", signatures=[sig],
                                      parameters={"seed": 1, "output_dir": str(tmp_path)},
                                      output_dir=tmp_path)
    assert csv_path.read_text().splitlines()[0] == \
        "dataset,method,ours,ci_low,ci_high,n_questions,paper,sd"
    record = json.loads(json_path.read_text())
    assert record["rows"][1]["paper"] is None
    assert record["signatures"][0]["string"].startswith("metric:kendall|variant:test|model:none")
    assert record["parameters"] == {"seed": 1, "output_dir": "<outside the repository>"}
    assert record["interval"] == "questions"
    # the machine and the wall time are the run's, not the table's: beside the executed notebooks
    assert not {"machine", "cpu_flags", "wall_time_s", "store"} & set(record)
    from nfeval_repro.tables import run_record_path

    run = json.loads(run_record_path("t", tmp_path).read_text())
    assert run["machine"] and "cpu_flags" in run and run["commit"] == record["commit"]
    assert run_record_path("t", tmp_path).parent == tmp_path / "results" / "executed"
    assert str(tmp_path) not in json_path.read_text()


def test_same_table_twice_is_byte_identical(tmp_path):
    table = pd.DataFrame({"method": ["a"], "ours": [1 / 3]})
    a, _ = write_table("t", table, id_columns=["method"], interval=NONE, output_dir=tmp_path / "1")
    b, _ = write_table("t", table, id_columns=["method"], interval=NONE, output_dir=tmp_path / "2")
    assert a.read_bytes() == b.read_bytes()
    assert "0.333333" in a.read_text()


@pytest.mark.parametrize("columns,ids,interval,msg", [
    ({"method": ["a"], "value": [1]}, ["method"], NONE, "'ours' column"),
    ({"ours": [1]}, ["method"], NONE, "identifier columns"),
    ({"method": ["a"], "ours": [1]}, ["method"], "questions", "ci_low"),
    ({"method": ["a"], "ours": [1], "ci_low": [0], "ci_high": [2]}, ["method"], "answers",
     "n_answers"),
    ({"method": ["a"], "ours": [1]}, ["method"], "none", "must say why"),
])
def test_bad_tables(tmp_path, columns, ids, interval, msg):
    with pytest.raises(NfevalError, match=msg):
        write_table("t", pd.DataFrame(columns), id_columns=ids, interval=interval,
                    output_dir=tmp_path)


def test_dirty_means_a_source_file_changed(tmp_path):
    import subprocess

    from nfeval_repro.tables import git_commit

    repo = tmp_path / "r"
    (repo / "src").mkdir(parents=True)
    (repo / "results").mkdir()
    for f in ("src/a.py", "results/t.csv"):
        (repo / f).write_text("1\n")
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    run("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x")
    (repo / "results" / "t.csv").write_text("2\n")  # an output changed: still clean
    assert not git_commit(repo).endswith("-dirty")
    (repo / "src" / "a.py").write_text("2\n")
    assert git_commit(repo).endswith("-dirty")


def test_join_paper_keeps_our_order_and_refuses_orphans():
    ours = pd.DataFrame({"m": ["b", "a"], "ours": [2.0, 1.0]})
    joined = join_paper(ours, pd.DataFrame({"m": ["a"], "paper": [1.5]}), on=["m"])
    assert list(joined["m"]) == ["b", "a"] and joined["paper"].isna().tolist() == [True, False]
    with pytest.raises(NfevalError, match="without a row of ours"):
        join_paper(ours, pd.DataFrame({"m": ["z"], "paper": [1.0]}), on=["m"])


def test_paper_values_files_parse():
    t = paper_values("lk_t01")
    assert list(t.columns) == ["dataset", "statistic", "paper"] and len(t) == 12
    with pytest.raises(NfevalError, match="no paper values"):
        paper_values("nope")


def test_signature_records_model():
    sig = Signature(metric="pd", model={"name": "m", "source": "pypi:x==1", "checksum": "ab" * 32,
                                        "dtype": "bfloat16"}, prompt_sha256="cd" * 32)
    s = sig.as_string()
    assert "model:m|src:pypi:x==1|sha:abababababab|dtype:bfloat16|prompt:cdcdcdcdcdcd" in s


def test_companion_frames_live_in_the_artefact_folder(tmp_path):
    frame = pd.DataFrame({"id": [1, 2], "score": [0.5, 1 / 3], "p": [0.5, 1 / 3]})
    path = write_frame("xx_t01", "scores", frame, tmp_path)
    assert path == tmp_path / "results" / "xx_t01" / "scores.csv"
    # 12 significant digits: 1/3 and 0.3333331 stay apart (6 digits would tie them), the last
    # bits a CPU's kernels move (1e-16 of the value) never reach the file; the score column
    # in full, so a rank statistic read back from it is the table's
    assert path.read_text() == "id,score,p\n1,0.5,0.5\n2,0.3333333333333333,0.333333333333\n"
    assert pd.read_csv(path)["score"].tolist() == [0.5, 1 / 3]
    assert not (tmp_path / "results" / "xx_t01.csv").exists()  # the table's name stays free


def test_a_notebook_records_its_parameters_itself(tmp_path):
    """The parameters cell's annotated names are recorded with papermill's injected values;
    what the notebook passes adds resolved values and wins; the output folder is not recorded."""
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('limit: int = 6  # size\njudge: str = ""  # empty: the profile\'s\n'
                                       'output_dir: str = ""  # where results go')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "import pandas as pd\nfrom nfeval_repro.tables import write_table\n"
        "shown: int = 3  # an annotation below the parameters cell is recorded too\n"
        "write_table('t', pd.DataFrame({'method': ['a'], 'ours': [1]}), id_columns=['method'],\n"
        "            interval='none: a test table', parameters={'judge': 'resolved'},\n"
        "            output_dir=output_dir)")]
    path = tmp_path / "t.ipynb"
    nbformat.write(nb, path)
    pm.execute_notebook(str(path), str(tmp_path / "out.ipynb"), kernel_name="python3",
                        language="python", parameters={"limit": 60, "output_dir": str(tmp_path)},
                        progress_bar=False)
    record = json.loads((tmp_path / "results" / "t.json").read_text())
    assert record["parameters"] == {"limit": 60, "judge": "resolved", "shown": 3}


def test_outside_a_notebook_only_the_given_parameters_are_recorded(tmp_path):
    limit: int = 6  # noqa: F841 (a local annotation is no notebook parameter)
    _, json_path = write_table("t", pd.DataFrame({"method": ["a"], "ours": [1]}), id_columns=["method"],
                               interval=NONE, parameters={"seed": 2}, output_dir=tmp_path)
    assert json.loads(json_path.read_text())["parameters"] == {"seed": 2}


def test_join_paper_matches_a_transcribed_whole_number_to_a_float_key_without_a_warning():
    import warnings

    ours = pd.DataFrame({"n": [3.0, 3.0], "d": [-2.0, -2.5], "ours": [1.9, 2.3]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        joined = join_paper(ours, pd.DataFrame({"n": [3], "d": [-2], "paper": [1.95]}), on=["n", "d"])
    assert joined["paper"].tolist()[0] == 1.95 and pd.isna(joined["paper"].tolist()[1])


def test_every_float_is_written_at_the_stated_precision_whatever_its_column():
    from nfeval_repro.tables import FRAME_DIGITS, TABLE_DIGITS, csv_text

    frame = pd.DataFrame({"id": ["a", "b", "c"], "x": [1 / 3, -0.0, float("nan")],
                          "mixed": [2 / 3, "text", 1.0], "n": [1, 2, 3]})
    assert csv_text(frame, TABLE_DIGITS) == ("id,x,mixed,n\na,0.333333,0.666667,1\n"
                                             "b,0,text,2\nc,,1.0,3\n")
    assert csv_text(frame, FRAME_DIGITS).splitlines()[1] == "a,0.333333333333,0.666666666667,1"


def test_the_last_bits_a_cpu_moves_do_not_reach_the_file():
    """Two runs whose sums went in another order differ by an ulp or two: the same bytes."""
    import numpy as np

    from nfeval_repro.tables import FRAME_DIGITS, TABLE_DIGITS, csv_text

    rng = np.random.default_rng(0)
    values = rng.normal(size=1000)
    moved = values * (1 + 4 * np.finfo(float).eps)
    a = csv_text(pd.DataFrame({"v": values}), TABLE_DIGITS)
    assert a == csv_text(pd.DataFrame({"v": moved}), TABLE_DIGITS)
    # at 12 digits a value within 4 ulps of a rounding boundary still turns: about 3 in
    # 10,000 values (the 12th digit's unit is about 3e-12 of the value, 4 ulps 9e-16)
    a = csv_text(pd.DataFrame({"v": values}), FRAME_DIGITS).splitlines()
    b = csv_text(pd.DataFrame({"v": moved}), FRAME_DIGITS).splitlines()
    assert sum(x != y for x, y in zip(a, b)) <= 2


def test_the_tolerance_is_half_a_unit_of_the_last_digit_written():
    from nfeval_repro.tables import format_float, tolerance

    assert tolerance(0.0653929) == pytest.approx(5e-8)
    assert tolerance(123.456) == pytest.approx(5e-4)
    assert tolerance(0.0) == 0.0
    for v in (0.0653929123, 123.4564999, -7.77777777e-5):
        assert abs(float(format_float(v, 6)) - v) <= tolerance(v)


def test_a_committed_record_holds_nothing_of_the_run(tmp_path):
    """Rerun later or on another machine, the same table writes the same JSON bytes."""
    table = pd.DataFrame({"method": ["a"], "ours": [1 / 3]})
    _, a = write_table("t", table, id_columns=["method"], interval=NONE,
                       output_dir=tmp_path / "1", started=0.0)
    _, b = write_table("t", table, id_columns=["method"], interval=NONE,
                       output_dir=tmp_path / "2", started=1.0)
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.read_text())["rows"] == [{"method": "a", "ours": 0.333333}]
