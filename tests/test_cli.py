"""The command line: help, status, and one clear error line for bad input."""

import subprocess
import sys
from pathlib import Path

import pytest
from testkit import needs

from nfeval.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"  # the checkout's


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NFEVAL_OFFLINE", "1")
    monkeypatch.delenv("NFEVAL_MIRROR", raising=False)
    return tmp_path


def test_help_lists_commands():
    out = subprocess.run([sys.executable, "-m", "nfeval.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for word in ("data", "models", "linkage", "meta", "NFEVAL_MIRROR"):
        assert word in out.stdout
    assert "artefacts" not in out.stdout  # the reproduction's catalogue is not the library's


def test_data_status_without_mirror_says_what_is_missing(isolated, capsys):
    assert main(["data", "status"]) == 1  # files are missing
    out = capsys.readouterr().out
    assert "antique" in out and "missing" in out and "NFEVAL_MIRROR" in out


def test_data_status_with_mirror(mirror, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    assert main(["data", "status", "antique", "linkage/LINKAGE"]) == 0  # both there, verified
    out = capsys.readouterr().out.splitlines()
    line = next(l for l in out if l.startswith("antique "))
    assert "mirror" in line and "verified" in line and len(out) == 2


def test_data_status_fails_on_a_corrupted_mirror_file(mirror, capsys, monkeypatch, tmp_path):
    """A copy of the mirror whose LINKAGE prompt was edited: status exits non-zero."""
    import shutil

    copy = tmp_path / "mirror"
    shutil.copytree(mirror, copy)
    prompt = copy / "prompts" / "linkage" / "LINKAGE.txt"
    prompt.write_text(prompt.read_text() + " (edited)")
    monkeypatch.setenv("NFEVAL_MIRROR", str(copy))
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    assert main(["data", "status", "linkage/LINKAGE", "antique"]) == 1
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("linkage/LINKAGE "))
    assert "bad" in line and "CHECKSUM MISMATCH" in line
    assert "1 file(s) fail their checksum: linkage/LINKAGE" in out
    assert main(["data", "status", "antique"]) == 0  # the others are fine
    run = subprocess.run([sys.executable, "-m", "nfeval", "data", "status"],
                         capture_output=True, text=True)
    assert run.returncode == 1 and "CHECKSUM MISMATCH" in run.stdout


def test_data_status_rejects_unknown_names(isolated, capsys):
    assert main(["data", "status", "no-such-file"]) == 2
    assert "no-such-file" in capsys.readouterr().err


@pytest.mark.parametrize("argv,msg", [
    (["data", "fetch"], "name at least one file"),
    (["data", "fetch", "no-such-file"], "no-such-file"),
    (["data", "fetch", "antique"], "NFEVAL_MIRROR"),
    (["models", "prepare", "no-such-model"], "no-such-model"),
    # the DebateQA test split does not ship: the error names the split that does
    (["pd", "--answers", str(EXAMPLES / "debateqa_answers.jsonl")], "--split sample"),
    (["da", "--answers", str(EXAMPLES / "debateqa_answers.jsonl"), "--split", "dev"],
     "--split sample"),
])
def test_errors_are_one_clear_line(isolated, capsys, argv, msg):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("nfeval: error: ") and msg in err


def test_ctrl_c_anywhere_exits_130(monkeypatch, capsys):
    import nfeval.cli as cli

    def boom(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_models_list", boom)
    assert main(["models", "list"]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_the_library_command_has_no_reproduction_command():
    with pytest.raises(SystemExit):
        main(["artefacts"])


def test_hardware_flags_reach_the_model_load_and_a_missing_gpu_is_one_clear_error(
        isolated, capsys, monkeypatch):
    """--device/--dtype/--batch-tokens are passed to the load; a GPU that is not there is
    said before any model loads."""
    torch = needs("torch")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    answers = isolated / "a.jsonl"
    answers.write_text('{"id": 9001, "generation": "x"}\n')
    code = main(["da", "--answers", str(answers), "--split", "sample", "--judge", "smollm2-135m-instruct",
                 "--device", "cuda", "--dtype", "bfloat16", "--batch-tokens", "4096"])
    err = capsys.readouterr().err
    assert code == 2 and "torch sees no GPU" in err and "--device cpu" in err
    seen = _da_load_options(answers, monkeypatch, "--device", "cpu", "--dtype", "bfloat16",
                            "--batch-tokens", "4096")
    from nfeval.runtime import Runtime

    assert seen == {"runtime": Runtime("cpu", "bfloat16", 4096)}


def _da_load_options(answers, monkeypatch, *argv) -> dict:
    """The runtime and options `nfeval da ... argv` loads its judge with (the load itself
    stopped)."""
    seen = {}

    def fake_load(name, backend="hf", runtime=None, **kw):
        seen.update(kw, runtime=runtime)
        raise KeyboardInterrupt

    monkeypatch.setattr("nfeval.models.loader.load_model", fake_load)
    prompt = answers.parent / "da_prompt.txt"  # a prompt of one's own: no release file needed
    prompt.write_text("Question: {question}\nAnswer: {answer}\nDebated (1) or not (0)?")
    main(["da", "--answers", str(answers), "--split", "sample", "--judge",
          "smollm2-135m-instruct", "--prompt", str(prompt), *argv])
    return seen


AMX = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")  # x86_64/avx2+avx512f+avx512_bf16+amx_bf16


def _fake_cpu(monkeypatch, flags, model="a CPU model never measured"):
    """An x86-64 CPU with ``flags`` (``cpu_flags`` is cached: replaced whole) named ``model``."""
    import nfeval.machine as machine

    monkeypatch.setattr(machine, "cpu_flags", lambda: tuple(flags))
    monkeypatch.setattr(machine, "cpu_model", lambda: model)
    monkeypatch.setattr(machine.platform, "machine", lambda: "x86_64")


@pytest.mark.parametrize("flags, kw, env, want", [
    (AMX, {}, "", "bfloat16"),  # its kind's entry: faster in two runs, LINKAGE rows agreed
    (("avx2", "avx512f", "avx512_bf16"), {}, "", None),  # a kind with no entry: float32
    (("avx2", "avx512f", "avx512_bf16", "AMD EPYC"), {}, "", None),  # its table moved 0.018
    (("avx2",), {}, "", None),
    (("avx2", "amx_bf16"), {}, "", None),  # a kind never measured, whatever its flags
    (AMX, {"dtype": "float32"}, "", "float32"),  # asked for: kept
    (AMX, {}, "float32", None),  # NFEVAL_DTYPE decides in the load
    (AMX, {"judge": False}, "", None),  # not a LINKAGE judge
])
def test_the_linkage_judge_scores_in_its_cpu_kinds_dtype_only_where_listed(
        capsys, monkeypatch, flags, kw, env, want):
    import argparse

    import nfeval.cli as cli
    from nfeval.machine import LISTWISE_JUDGE_DTYPES, machine_tag

    *flags, model = flags if flags and flags[-1] == "AMD EPYC" else (*flags, "a CPU model")
    _fake_cpu(monkeypatch, flags, model)
    monkeypatch.setenv("NFEVAL_DTYPE", env)
    args = argparse.Namespace(backend="hf", device=None, dtype=kw.get("dtype"),
                              batch_tokens=None, threads=None, base_url=None)
    loader = cli._loader(args, listwise=kw.get("judge", True))
    assert (loader.judge_dtype or kw.get("dtype")) == want
    assert loader.runtime.dtype == (kw.get("dtype") or env or "auto")  # the runtime unchanged
    # said when the judge loads, not before: a command refused first says only why
    assert capsys.readouterr().err == ""
    note = loader.judge_note
    assert ("scores in bfloat16" in note) == (want == "bfloat16")
    if want == "bfloat16":  # the line names the kind and the table's evidence, and the way out
        kind = machine_tag()
        assert f"on this CPU kind ({kind}: {LISTWISE_JUDGE_DTYPES[kind][1]})" in note
        assert "--dtype float32" in note and "AMX" not in note
        monkeypatch.setattr("nfeval.models.loader.load_model", lambda *a, **k: "a model")
        loader.load("a-model")  # not the judge: nothing said
        assert capsys.readouterr().err == ""
        loader.load("a-model", judge=True)
        assert capsys.readouterr().err.strip() == note


def test_linkage_help_lists_the_listwise_judges_cpu_kinds_from_the_table(capsys, monkeypatch):
    from nfeval.machine import LISTWISE_JUDGE_DTYPES

    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(["linkage", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: float32 on CPU" in text and "at least two benchmark runs" in text
    for kind, (dtype, _) in LISTWISE_JUDGE_DTYPES.items():
        assert f"{kind}: {dtype}" in text


@pytest.mark.parametrize("method, mode, want", [
    ("linkage", "prob", True),  # the listwise judge: its Table 2 rows agreed in bf16
    ("linkage", "sample", False),
    ("pointwise", "prob", False),  # its rows moved by up to 0.016 in bf16, two verdicts moved
    ("pointwise-ref", "prob", False),
    ("pairwise", "prob", False),
])
def test_only_the_listwise_linkage_judge_may_take_bf16(method, mode, want):
    from nfeval.linkage import Linkage
    from nfeval.linkage.settings import LinkageSettings
    from nfeval.models.loader import ModelLoader

    seen = {}

    class Loader(ModelLoader):
        def load(self, name, backend=None, *, judge=False):
            seen["judge"] = judge
            return object()

    Linkage(LinkageSettings(method, mode=mode), loader=Loader()).model
    assert seen["judge"] is want


def test_meta_scores_every_method_in_float32_on_amx(monkeypatch, tmp_path):
    """nfeval meta compares methods: none of them may run in another dtype than the others."""
    import nfeval.meta_evaluation as M

    _fake_cpu(monkeypatch, AMX)
    monkeypatch.delenv("NFEVAL_DTYPE", raising=False)
    seen = []

    def score_methods(answers, methods, *, loader, **kw):
        seen.append(loader)
        raise SystemExit(0)

    monkeypatch.setattr(M, "score_methods", score_methods)
    answers = tmp_path / "a.jsonl"
    answers.write_text("{}\n")
    with pytest.raises(SystemExit):
        main(["meta", "--answers", str(answers), "--methods", "linkage,pointwise"])
    assert seen and all(x.judge_dtype is None and x.runtime.dtype in ("auto", "float32")
                        for x in seen)


def test_da_keeps_float32_on_amx_its_table_moved_in_bf16(models_extra, isolated, monkeypatch):
    _fake_cpu(monkeypatch, AMX)
    monkeypatch.delenv("NFEVAL_DTYPE", raising=False)
    answers = isolated / "a.jsonl"
    answers.write_text('{"id": 9001, "generation": "x"}\n')
    assert _da_load_options(answers, monkeypatch)["runtime"].dtype == "auto"


@pytest.mark.parametrize("backend", ["openai", "openai-chat"])
def test_server_backends_need_a_base_url(isolated, capsys, backend, tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": 9001, "generation": "x"}\n')
    code = main(["da", "--answers", str(answers), "--split", "sample", "--judge", "m",
                 "--backend", backend])
    assert code == 2 and f"--backend {backend} needs --base-url" in capsys.readouterr().err


def test_bad_batch_tokens_is_a_usage_error(isolated, capsys):
    code = main(["linkage", "--answers", "-", "--method", "rouge1", "--batch-tokens", "0"])
    assert code == 2 and "batch_tokens must be >= 1" in capsys.readouterr().err


def test_a_mistyped_choice_is_one_line_with_the_nearest_name(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["linkage", "--answers", "x.jsonl", "--method", "rogueL"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == ("nfeval linkage: error: argument --method: unknown choice 'rogueL'; "
                      "did you mean 'rougeL'?")
    assert err[1] == "run `nfeval linkage --help` for the options" and len(err) == 2



@pytest.mark.parametrize("argv", [
    ["linkage", "--answers", str(EXAMPLES / "linkage_answers.jsonl"), "--method", "rougeL"],
    ["pd", "--answers", str(EXAMPLES / "debateqa_answers.jsonl"), "--split", "sample"],
    ["da", "--answers", str(EXAMPLES / "debateqa_answers.jsonl"), "--split", "sample"],
])
@pytest.mark.parametrize("flag", ["--out", "--summary"])
def test_an_output_into_a_missing_folder_fails_before_anything_loads(
        isolated, monkeypatch, capsys, argv, flag):
    import nfeval.models as models

    monkeypatch.setattr("nfeval.models.loader.load_model",
                        lambda *a, **k: pytest.fail("a model loaded before the path check"))
    monkeypatch.chdir(isolated)
    code = main([*argv, flag, str(isolated / "missing" / "out.x"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "its folder" in err and "does not exist" in err and "nothing was scored" in err
    assert not list(isolated.glob("*.csv"))


def test_output_names_carry_every_setting_that_differs_from_its_default():
    from nfeval.cli import _default_out

    assert _default_out("a/answers.jsonl", "linkage") == "answers.linkage.csv"
    assert _default_out("answers.jsonl", "linkage", (
        ("model", "smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct"), ("shots", 3, 0),
        ("seed", 0, 0))) == "answers.linkage.smollm2-135m-instruct.shots-3.csv"
    assert _default_out("answers.jsonl", "linkage", (
        ("model", "/models/my judge", "qwen"),)) == "answers.linkage.my-judge.csv"
    assert _default_out("answers.jsonl", "da", (("zero-shot", True, False),
                                                ("", "prompt-0123abcd", None))) == \
        "answers.da.zero-shot.prompt-0123abcd.csv"


def test_a_second_run_with_other_settings_keeps_the_first_output(isolated, monkeypatch, capsys):
    monkeypatch.chdir(isolated)
    answers = str(EXAMPLES / "linkage_answers.jsonl")
    assert main(["linkage", "--answers", answers, "--method", "rougeL", "--no-progress"]) == 0
    first = (isolated / "linkage_answers.rougeL.csv").read_text()
    assert main(["linkage", "--answers", answers, "--method", "rougeL", "--seed", "2",
                 "--no-progress"]) == 0
    assert (isolated / "linkage_answers.rougeL.csv").read_text() == first
    assert (isolated / "linkage_answers.rougeL.seed-2.csv").is_file()


def test_a_line_in_another_encoding_is_left_out_and_the_rest_scored(isolated, monkeypatch,
                                                                    capsys):
    lines = (EXAMPLES / "linkage_answers.jsonl").read_bytes().split(b"\n")
    bad = lines[1].replace(b"faster", "fast\u00e9r".encode("latin-1"))
    path = isolated / "mixed.jsonl"
    path.write_bytes(b"\n".join([lines[0], bad, *lines[2:]]))
    monkeypatch.chdir(isolated)
    code = main(["linkage", "--answers", str(path), "--method", "rougeL", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "skipped line 2: not UTF-8 text" in err
    assert "of 3 questions scored" in out


def test_strict_exits_3_when_anything_was_left_out(isolated, monkeypatch, capsys):
    path = isolated / "answers.jsonl"
    path.write_text((EXAMPLES / "linkage_answers.jsonl").read_text() + "{not json}\n")
    monkeypatch.chdir(isolated)
    args = ["linkage", "--answers", str(path), "--method", "rougeL", "--no-progress"]
    assert main(args) == 0
    assert main([*args, "--strict"]) == 3
    assert "--strict" in capsys.readouterr().err
    assert (isolated / "answers.rougeL.csv").is_file()  # the outputs are written all the same


def test_one_question_is_said_in_the_singular_with_no_interval(isolated, monkeypatch, capsys):
    path = isolated / "one.jsonl"
    path.write_text((EXAMPLES / "linkage_answers.jsonl").read_text().splitlines()[0] + "\n")
    monkeypatch.chdir(isolated)
    assert main(["linkage", "--answers", str(path), "--method", "rougeL", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "of 1 question scored" in out and "no interval: 1 question" in out
    assert "1 questions" not in out


@pytest.mark.parametrize("argv, name", [
    (["linkage", "--answers", str(EXAMPLES / "linkage_answers.jsonl")], "linkage/LINKAGE"),
    (["linkage", "--answers", str(EXAMPLES / "linkage_answers.jsonl"), "--method",
      "pointwise-ref"], "linkage/with_ref_point_score"),
    (["da", "--answers", str(EXAMPLES / "debateqa_answers.jsonl"), "--split", "sample"],
     "debateqa/dispute_awareness_fewshot"),
])
def test_a_default_command_without_network_or_mirror_says_how_in_one_line_before_loading(models_extra, 
        isolated, monkeypatch, capsys, argv, name):
    """No mirror, an empty cache, downloads off: the release prompt cannot be had, and the one
    line says every way to provide it, before any model loads."""
    import nfeval.models as models

    monkeypatch.setattr("nfeval.models.loader.load_model",
                        lambda *a, **k: pytest.fail("a model loaded before the prompt check"))
    monkeypatch.chdir(isolated)
    code = main([*argv, "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    for needed in ("--prompt FILE", "NFEVAL_MIRROR", f"nfeval data fetch {name}"):
        assert needed in err, needed


def test_one_spelling_for_the_judge_and_the_slots_the_others_aliases_that_say_so(
        isolated, monkeypatch, capsys):
    """nfeval da takes --model (as nfeval linkage and pd do); --judge still works and says it is
    an alias. Prompts write their slots {name}; LINKAGE's #name still works and says so."""
    from nfeval.cli import build_parser

    args = build_parser().parse_args(["da", "--answers", "a", "--split", "sample", "--judge",
                                      "m1"])
    assert args.judge == "m1" and "alias of --model" in capsys.readouterr().err
    args = build_parser().parse_args(["da", "--answers", "a", "--split", "sample", "--model",
                                      "m2"])
    assert args.judge == "m2" and capsys.readouterr().err == ""
    from nfeval.debateqa.da import braced_slots as da_slots
    from nfeval.linkage.prompts import braced_slots, check_template

    text, alias = braced_slots("pointwise", "Q: {question}\nA: {candidate}\nScore [[k]]")
    assert text == "Q: #question\nA: #candidate\nScore [[k]]" and not alias
    assert check_template("pointwise", text) == text
    assert braced_slots("pointwise", "Q: #question A: #candidate")[1] is True
    assert da_slots("Q: #question A: #answer") == ("Q: {question} A: {answer}", True)
    assert da_slots("Q: {question} A: {answer} #answer") == ("Q: {question} A: {answer} #answer",
                                                            False)


def test_the_missing_extras_line_works_from_a_checkout_and_gives_cpu_torch_first():
    from nfeval.extras import missing_extra

    err = str(missing_extra(ModuleNotFoundError("no torch", name="torch")))
    assert "pip install 'nfeval[" not in err  # not on the package index: that line fails
    assert "pip install '<checkout>[models]'" in err and "not on the package index" in err
    assert err.index("--index-url https://download.pytorch.org/whl/cpu") < err.index(
        "<checkout>[models]")
    err = str(missing_extra(ModuleNotFoundError("no httpx", name="httpx")))
    assert "pip install '<checkout>[http]'" in err and "torch" not in err


@pytest.mark.parametrize("command", [["linkage", "--answers", "x.jsonl"],
                                     ["pd", "--answers", "x.jsonl"],
                                     ["da", "--answers", "x.jsonl"],
                                     ["meta", "--answers", "x.jsonl", "--methods", "bleu"]])
def test_every_scoring_command_takes_model_and_judge_for_its_model(command):
    from nfeval.cli import build_parser

    parser = build_parser()
    a = parser.parse_args([*command, "--model", "m1"])
    b = parser.parse_args([*command, "--judge", "m1"])
    assert vars(a) == vars(b)


def test_an_unknown_option_is_said_by_the_subcommand_with_the_nearest_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["linkage", "--answers", "x.jsonl", "--judgee", "m"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("nfeval linkage: error: unrecognized arguments: --judgee m")
    assert "did you mean --judge?" in err[0]
    assert err[1] == "run `nfeval linkage --help` for the options" and len(err) == 2
    with pytest.raises(SystemExit):
        main(["data", "status", "--frobnicate"])
    assert "run `nfeval data status --help`" in capsys.readouterr().err


def test_a_closed_output_pipe_ends_quietly_with_status_141(tmp_path):
    """`nfeval linkage --out - | head -1`: no BrokenPipeError traceback."""
    import subprocess
    import sys

    answers = EXAMPLES / "linkage_answers.jsonl"
    code = (f"import sys; from nfeval.cli import main; "
            f"sys.exit(main(['linkage', '--answers', {str(answers)!r}, '--method', 'bleu', "
            "'--out', '-', '--no-progress']))")
    proc = subprocess.run(f"{sys.executable} -c \"{code}\" | head -1", shell=True,
                          capture_output=True, text=True, executable="/bin/bash",
                          env={**__import__('os').environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout.startswith("qid,")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_data_status_names_the_mirror_it_was_given(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NFEVAL_MIRROR", str(tmp_path))
    main(["data", "status"])
    out = capsys.readouterr().out
    assert f"NFEVAL_MIRROR is {tmp_path}, which does not hold them" in out
    assert "Set NFEVAL_MIRROR" not in out


def test_the_library_help_promises_no_reproduction(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "reproduce" not in capsys.readouterr().out.split("\n\n")[1]


def test_no_progress_silences_the_model_libraries_bars(monkeypatch):
    import os

    transformers = needs("transformers")
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # restored after the test
    monkeypatch.delenv("TQDM_DISABLE", raising=False)  # restored after the test
    try:
        assert main(["linkage", "--answers", "/nonexistent.jsonl", "--method", "bleu",
                     "--no-progress"]) == 2
        assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
        assert not transformers.utils.logging.is_progress_bar_enabled()
        assert are_progress_bars_disabled()
        assert os.environ["TQDM_DISABLE"] == "1"
    finally:
        transformers.utils.logging.enable_progress_bar()
        enable_progress_bars()


def test_no_progress_silences_the_gguf_conversion_bar_in_a_fresh_process():
    """transformers converts a GGUF under a plain tqdm.auto bar (no transformers setting
    reaches it): after --no-progress's setup, a bar made as it makes one prints nothing."""
    import subprocess
    import sys

    code = ("from nfeval.cli import _quiet_model_bars; _quiet_model_bars(); "
            "from tqdm.auto import tqdm; "
            "[0 for _ in tqdm(range(3), desc='Converting and de-quantizing GGUF tensors...')]")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    assert "Converting" not in shown.stderr + shown.stdout
    plain = subprocess.run([sys.executable, "-c", code.split("; ", 2)[2]],
                           capture_output=True, text=True, check=True,
                           env={k: v for k, v in __import__("os").environ.items()
                                if k != "TQDM_DISABLE"})
    assert "Converting" in plain.stderr  # the bar the check would miss


@pytest.mark.parametrize("method", ["bertscore", "bertscore-cls"])
def test_bertscore_counts_and_says_what_its_window_leaves_out(models_extra, method, tmp_path,
                                                              capsys):
    """A 20,000-word answer and a 600-word one: BERTScore encodes only its window of each, so
    the part left out is counted per candidate (cut_tokens) and said, as the judges do."""
    needs("bert_score")
    import json

    import pandas as pd

    line = json.loads((EXAMPLES / "linkage_answers.jsonl").read_text().splitlines()[0])
    words = "the bread dries out in the cold air of the fridge".split()
    line["candidates"][1]["text"] = " ".join(words * 60)  # 600 words
    line["candidates"][2]["text"] = " ".join(words * 2000)  # 20,000 words
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps(line) + "\n")
    out = tmp_path / "s.csv"
    assert main(["linkage", "--answers", str(answers), "--method", method, "--out", str(out),
                 "--no-progress", "--no-cache"]) == 0
    said = capsys.readouterr()
    table = pd.read_csv(out).set_index("candidate_id")
    short, long_ = line["candidates"][0]["id"], line["candidates"][2]["id"]
    assert table.loc[short, "cut_tokens"] == 0
    assert table.loc[long_, "cut_tokens"] > 20000 > table.loc[line["candidates"][1]["id"],
                                                               "cut_tokens"] > 0
    assert "cut to fit the model's window" in said.out + said.err


def test_the_loader_gives_a_server_generator_the_commands_base_url():
    """`--backend hf --generator openai-chat:NAME --base-url URL`: the generator loads with the
    URL (the loader holds each server backend's options); with no URL, one clear error."""
    import argparse

    import nfeval.cli as cli
    from nfeval.models.loader import ModelLoader

    args = argparse.Namespace(backend="hf", device=None, dtype=None, batch_tokens=None,
                              threads=None, base_url="http://127.0.0.1:9/v1",
                              api_key_env="OPENAI_API_KEY", concurrency=2,
                              assistant_prefill="none", chat_template=None)
    loader = cli._loader(args)
    assert loader.options["openai-chat"]["base_url"] == "http://127.0.0.1:9/v1"
    assert loader.options["openai"]["base_url"] == "http://127.0.0.1:9/v1"
    from nfeval.errors import NfevalError

    with pytest.raises(NfevalError, match="needs a server's base_url"):
        ModelLoader().load("m", "openai-chat")
