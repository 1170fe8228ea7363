"""Settings travel as one frozen, validated object, built where a run starts; facts live in
one place.

* No library function takes more than eight parameters (a settings value counts as one);
  the metrics are objects built from a settings value (:class:`nfeval.linkage.Linkage`,
  :class:`nfeval.debateqa.PD`, ``DA``), and their function forms are thin callers of them.
* ``nfeval linkage`` is one call into the library: the same
  :meth:`~nfeval.linkage.score_file.Linkage.score_file` that ``nfeval.linkage.score`` calls.
* :class:`~nfeval.linkage.settings.LinkageSettings` refuses what the command line refuses,
  with the same one-line messages.
* The default models and the method names are defined once.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from test_linkage_file import FakeJudge, line
from testkit import needs

import nfeval
from nfeval import NfevalError
from nfeval.cli import main
from nfeval.linkage import score_file as SF
from nfeval.linkage.settings import GenerationSettings, LinkageSettings

#: the library's source: the installed package's own files (the checkout's src/nfeval there)
SRC = Path(nfeval.__file__).resolve().parent
#: The papers' reproduction (experiments, claims, the item store, the artefact catalogue...),
#: which is leaving the library for a package of its own: not held to the rule here.
REPRODUCTION = {"claims", "evidence", "evidence_cost", "store", "artefacts", "plots",
                "profiles", "readme", "readings", "run_notebook", "figure_layout", "results"}
MAX_PARAMETERS = 8
#: The function forms of the metric objects, and the object each one builds and calls once.
ENTRY_POINTS = {
    "linkage/api.py:linkage_score": "Linkage",
    "debateqa/api.py:perspective_diversity": "PD",
    "debateqa/api.py:dispute_awareness": "DA",
}


def _library_functions():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if "experiments" in rel.parts or path.stem in REPRODUCTION:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{rel.as_posix()}:{node.name}", node


def _parameters(fn: ast.FunctionDef) -> int:
    """Every parameter but a method's ``self``/``cls``; ``*args`` and ``**kwargs`` count one."""
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + bool(a.vararg) + bool(a.kwarg)


def test_no_library_function_takes_more_than_eight_parameters():
    functions = list(_library_functions())
    assert len(functions) > 300  # the walk sees the library
    over = {name: _parameters(fn) for name, fn in functions if _parameters(fn) > MAX_PARAMETERS}
    assert over == {}


@pytest.mark.parametrize("name, metric", sorted(ENTRY_POINTS.items()))
def test_each_function_form_builds_its_metric_object_once(name, metric):
    fn = next(f for n, f in _library_functions() if n == name)
    built = [c for c in ast.walk(fn) if isinstance(c, ast.Call)
             and getattr(c.func, "id", getattr(c.func, "attr", None)) == metric]
    assert len(built) == 1, f"{name} should build one {metric}"
    assert len(fn.body) <= 6  # a docstring and a few lines: the object does the work


@pytest.mark.parametrize("metric, settings, bad", [
    ("Linkage", "LinkageSettings", {"method": "bleu", "shots": 2}),
    ("PD", "PDSettings", {"variant": "nope"}),
    ("DA", "DASettings", {"mode": "greedy"})])
def test_a_metric_object_checks_its_settings_when_built(metric, settings, bad, mirror):
    import nfeval.debateqa as D
    import nfeval.linkage as L

    cls = getattr(L if metric == "Linkage" else D, metric)
    with pytest.raises(NfevalError):  # refused when built, before any model loads
        cls(**bad)
    m = cls("bleu") if metric == "Linkage" else cls(model=FakeJudge())
    assert type(m.settings).__name__ == settings
    if metric == "Linkage":  # signed before anything is scored
        assert m.signature.as_string().startswith("metric:bleu|") and m.model is None


# --------------------------------------------------------------------------- one call

@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def spy(monkeypatch):
    """Every call of Linkage.score_file (which still runs): the metric's settings and the
    call's keywords."""
    calls = []
    real = SF.Linkage.score_file

    def record(self, *args, **kwargs):
        calls.append(((args[0] if args else None, self.settings), kwargs))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SF.Linkage, "score_file", record)
    return calls


def test_the_linkage_command_is_one_call_into_the_library(models_extra, mirror, cache, spy, monkeypatch,
                                                          capsys):
    import nfeval.cli as cli

    judge = FakeJudge()
    monkeypatch.setattr("nfeval.models.loader.ModelLoader.load", lambda self, name, backend=None, **kw: judge)
    answers = cache / "mine.jsonl"
    answers.write_text("\n".join(line(f"q{i}") for i in range(1, 4)) + "\n")
    assert main(["linkage", "--answers", str(answers), "--shots", "1", "--seed", "2",
                 "--no-progress", "--no-cache"]) == 0
    out = capsys.readouterr().out
    [(args, kwargs)] = spy
    settings = args[1]
    assert settings == LinkageSettings("linkage", shots=1, seed=2)
    assert settings.judge.seed == 2 and settings.mode == "prob"
    # what the command wrote is what the library returns for the same settings
    direct = SF.score_linkage_file(str(answers), settings, FakeJudge(), progress=False,
                                   use_cache=False)
    written = (cache / "mine.linkage.shots-1.seed-2.csv").read_text()
    buf = io.StringIO()
    direct.table.to_csv(buf, index=False, lineterminator="\n")
    assert written == buf.getvalue()
    assert out.splitlines()[0].endswith("| " + direct.signature.as_string())


def test_cli_linkage_calls_no_scoring_step_itself():
    """The command parses, prints and names its output; the steps are the library's."""
    tree = ast.parse((SRC / "cli.py").read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
              and n.name == "_linkage")
    calls = [c.func.attr for c in ast.walk(fn) if isinstance(c, ast.Call)
             and isinstance(c.func, ast.Attribute) and getattr(c.func.value, "id", "") == "SF"]
    assert calls == ["read_linkage_file", "Linkage"]  # read (to name the output), then score


def test_the_api_calls_the_same_function_once(cache, spy):
    import nfeval

    res = nfeval.linkage.score(["Why is the sky blue?"], [["Air scatters blue light.",
                                                            "The sea."]],
                               [["Blue light scatters most.", "No idea."]], method="rougeL",
                               seed=4, progress=False)
    [(args, kwargs)] = spy
    assert args[1] == LinkageSettings("rougeL", seed=4) and res.n_scored == 2


# --------------------------------------------------------------------------- validation

JUDGES = "(linkage, pointwise, pointwise-ref, pointwise-ref-graded, pairwise)"


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "bleu", "shots": 2}, f"--shots is for the LLM judge methods {JUDGES}, not bleu"),
    ({"method": "rougeL", "mode": "prob"}, f"--mode is for the LLM judge methods {JUDGES}"),
    ({"method": "rougeL", "unparsed": "2"}, "--unparsed is for the LLM judge methods"),
    ({"method": "refppl", "positions": "release"}, "--positions is for the LLM judge"),
    ({"method": "bleu", "max_tokens": 64}, "--max-tokens is for the LLM judge methods"),
    ({"method": "bleu", "guard": True}, f"--guard is for the LLM judge methods {JUDGES}"),
    ({"method": "rouge1", "embedder": "x"}, "--embedder is for the bertscore methods"),
    ({"method": "pairwise", "shots": 1}, "--shots (demonstrations) is for method linkage only"),
    ({"shots": -1}, "--shots must be >= 0, got -1"),
    ({"unparsed": "often"}, "--unparsed must be drop, release or a number, not 'often'"),
    ({"method": "rougeL", "prompt": "Q: #question"}, "--prompt is for the LLM judge methods"),
    ({"method": "pointwise", "prompt": "Q: #question"}, "prompt lacks the slot(s) {candidate}"),
    ({"method": "pairwise", "unparsed": "release"}, "for method 'linkage' only"),
    ({"mode": "greedy"}, "unknown judge mode 'greedy'"),
    ({"max_tokens": 0, "mode": "sample"}, "--max-tokens must be >= 1, got 0"),
    ({"max_tokens": 64}, "--max-tokens bounds generated replies: it is for --mode generate"),
    ({"references": "2gt"}, "references must be one of file, 1gt, 0gt, got '2gt'"),
    ({"method": "rougeL", "rouge": "pltrdy"}, "rouge must be 'rouge-score' or 'release'"),
    ({"method": "meteor"}, "unknown method 'meteor'"),
])
def test_settings_refuse_what_the_command_refuses(kwargs, message):
    with pytest.raises(NfevalError) as err:
        LinkageSettings(**kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_settings_are_frozen_normalized_and_rebuildable():
    s = LinkageSettings("linkage", mode="sample", unparsed="1.5", max_tokens=64)
    assert s.unparsed == 1.5 and s.judge.unparsed == 1.5 and s.judge.max_tokens == 64
    assert s.label == "LINKAGE (generate, 0-shot)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.seed = 3
    assert LinkageSettings("pointwise").mode == "prob"
    lexical = LinkageSettings("bleu", references="1gt")
    assert lexical.mode is None and lexical.judge is None and lexical.kind == "lexical"
    assert dataclasses.replace(lexical, seed=3).seed == 3  # replace() re-validates
    assert dataclasses.replace(s, seed=3).judge.seed == 3
    assert LinkageSettings().generation == GenerationSettings(2, 256, 512)
    assert "prompt" not in repr(LinkageSettings("pointwise", prompt="Q #question A #candidate"))


def test_a_method_name_is_settings_with_its_defaults(mirror, cache):
    lf = SF.parse_linkage_text(line("q1") + "\n")
    by_name = SF.score_linkage_file(lf, "pointwise", FakeJudge(), progress=False)
    given = SF.score_linkage_file(lf, LinkageSettings("pointwise"), FakeJudge(),
                                  progress=False)
    pd.testing.assert_frame_equal(by_name.table, given.table)
    assert by_name.signature.as_string() == given.signature.as_string()


# --------------------------------------------------------------------------- facts

def test_the_default_models_are_named_once():
    from nfeval.linkage.file_format import DEFAULT_MODELS
    from nfeval.models import registry

    assert DEFAULT_MODELS == {"judge": registry.DEFAULT_JUDGE,
                              "refppl": registry.DEFAULT_REFPPL_LM}
    for name in (registry.DEFAULT_JUDGE, registry.DEFAULT_PD_BACKBONE,
                 registry.DEFAULT_REFPPL_LM, registry.DEFAULT_EMBEDDER):
        registry.get_spec(name)  # each is a registered model
    library = [p for p in sorted(SRC.rglob("*.py"))
               if "experiments" not in p.parts and p.stem not in REPRODUCTION]
    quoted = [p.relative_to(SRC).as_posix() for p in library
              if f'"{registry.DEFAULT_JUDGE}"' in p.read_text(encoding="utf-8")]
    assert quoted == ["models/registry.py"]


def test_the_method_names_are_defined_once():
    from nfeval import cli
    from nfeval.linkage import file_format, judges, lexical, methods

    assert cli.LINKAGE_METHODS is methods.METHODS is file_format.METHODS
    assert judges.METHODS is methods.JUDGE_METHODS
    assert lexical.METHODS is methods.LEXICAL_METHODS


# --------------------------------------------------------------------------- backends

def test_load_model_gathers_the_transport_keywords_into_http_options():
    httpx = needs("httpx")

    from nfeval.models import load_model
    from nfeval.models.openai_backend import OpenAIModel
    from nfeval.models.transport import HTTPOptions

    mock = httpx.MockTransport(lambda r: httpx.Response(500))
    chat = load_model("m", backend="openai-chat", base_url="http://a.test:1/v1",
                      timeout=5, max_retries=1, api_key="sk-secret", api_key_env=None,
                      concurrency=2, transport=mock)
    t = chat._http
    assert (t.timeout, t.max_retries, t.has_key, chat.concurrency) == (5.0, 1, True, 2)
    assert t.api_key_env is None
    completions = load_model("m", backend="openai", base_url="http://a.test:1/v1",
                             backoff=0.25, transport=mock)
    assert (completions.max_retries, completions.backoff) == (3, 0.25)  # its own 3 retries
    assert OpenAIModel("http://a.test:1/v1", "m").max_retries == 3
    assert "sk-secret" not in repr(HTTPOptions(api_key="sk-secret"))
    with pytest.raises(TypeError):
        load_model("m", backend="openai-chat", base_url="http://a.test:1/v1", no_such=1)


def test_pd_and_da_settings_are_checked_first():
    from nfeval.debateqa.scoring import DASettings, PDSettings

    with pytest.raises(NfevalError, match="unknown P.D. variant"):
        PDSettings(variant="fast")
    with pytest.raises(NfevalError, match="Unknown D.A. mode"):
        DASettings(mode="vote")
    with pytest.raises(NfevalError, match=r"lacks the slot\(s\) \{answer\}"):
        DASettings(prompt="Is it debated? {question}")
    assert json.dumps(dataclasses.asdict(DASettings()))  # plain values
