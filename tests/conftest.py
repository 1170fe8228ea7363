"""Shared test fixtures."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest


#: what a test module may need beyond the core install: the extras' modules, and the
#: reproduction (``nfeval_repro``, installed by ``make env`` from src/repro)
def _optional(name: str) -> str | None:
    from nfeval.extras import EXTRA_OF

    top = (name or "").split(".")[0]
    if top == "nfeval_repro":
        return "the reproduction (make env; pip install -e src/repro)"
    if top in EXTRA_OF:
        return f"{top!r}, the {EXTRA_OF[top]!r} extra"
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A test module that cannot be imported because an optional package is missing (a core
    install: ``pip install nfeval`` plus pytest) is skipped with that reason; any other import
    error still fails."""
    outcome = yield
    report = outcome.get_result()
    if not (report.failed and isinstance(collector, pytest.Module)):
        return
    import re

    found = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", str(report.longrepr))
    why = _optional(found.group(1)) if found else None
    if why is None:
        return
    report.outcome = "skipped"
    report.longrepr = (str(collector.path), 0, f"Skipped: needs {why}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The same for a test (or its fixture) that needs an optional package: skipped with the
    reason, where the library says which extra to install or the import itself fails."""
    outcome = yield
    report = outcome.get_result()
    exc = call.excinfo.value if call.excinfo is not None else None
    why = None
    if isinstance(exc, ModuleNotFoundError):
        why = _optional(exc.name)
    elif type(exc).__name__ == "NfevalError" and str(exc).startswith(
            "this needs the Python package"):
        why = str(exc).split("'")[1]
        why = _optional(why) or why
    if why is None or not report.failed:
        return
    report.outcome = "skipped"
    report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: needs {why}")

# benchmarks/ is not part of the package: its tests import it as the top-level module `bench`.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
# every figure a test renders is checked for overlapping text and a height over 2:1 of its
# width (nfeval_repro.figure_layout): a notebook whose figure a reader cannot read fails its test
os.environ.setdefault("NFEVAL_FIGURE_CHECK", "1")


@pytest.fixture
def models_extra():
    """Skips a test that runs a command needing the language models (the ``models`` extra:
    torch and transformers) where they are not installed: the command would refuse first."""
    pytest.importorskip("torch", reason="needs 'torch', the 'models' extra")
    pytest.importorskip("transformers", reason="needs 'transformers', the 'models' extra")


@pytest.fixture
def notebooks_extra():
    """The same for the plotting packages (the ``notebooks`` extra)."""
    pytest.importorskip("matplotlib", reason="needs 'matplotlib', the 'notebooks' extra")


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The offline release copies (``NFEVAL_MIRROR``); tests using it skip without it."""
    env = os.environ.get("NFEVAL_MIRROR")
    if not env or not Path(env).is_dir():
        pytest.skip("NFEVAL_MIRROR is not set to the release mirror (make test sets it when ../shared/data exists)")
    return Path(env)


# A tiny GPT-2 (2 layers, 160-token window, random weights from a fixed seed)
# with a byte-level BPE tokenizer trained on these sentences: small enough to
# build in a second, real enough to exercise GPT-2's legacy template and
# tokenization end to end.
#: a folder for PYTHONPATH whose sitecustomize blocks the weight packages and the network
#: (a fresh machine with `make env` only: see its docstring)
NO_WEIGHTS = Path(__file__).parent / "no_weights"

TINY_TEXTS = [
    "Animal research saves lives. Many treatments were first tested on animals.",
    "Animal research is cruel. Sentient beings should not suffer for our benefit.",
    "Alternatives exist. Cell cultures and computer models can replace many tests.",
    "Voting should be mandatory. Turnout would rise and represent everyone.",
]


def _tiny_gpt2(folder: Path, window: int) -> Path:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TINY_TEXTS * 3, vocab_size=500, special_tokens=["<|endoftext|>"])
    tok = GPT2TokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>",
                            bos_token="<|endoftext|>", unk_token="<|endoftext|>")
    tok.model_max_length = window
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_positions=window, n_embd=32, n_layer=2, n_head=2,
                     bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
    GPT2LMHeadModel(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A random two-layer GPT-2 with a 160-token window (window rules are easy to reach)."""
    return _tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), 160)


@pytest.fixture(scope="session")
def tiny_gpt2_wide_dir(tmp_path_factory) -> Path:
    """The same with a 4,096-token window: room for a release prompt (D.A.'s few-shot one)."""
    return _tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2-wide"), 4096)


@pytest.fixture(scope="session")
def tiny_gpt2(tiny_gpt2_dir):
    from nfeval.models import load_model

    return load_model(str(tiny_gpt2_dir), dtype="float32")


@pytest.fixture(scope="session")
def tiny_gpt2_wide(tiny_gpt2_wide_dir):
    from nfeval.models import load_model

    return load_model(str(tiny_gpt2_wide_dir), dtype="float32")


def release_formula(lm, answer: str, partials: list[str]) -> float:
    """DebateQA's released P.D. arithmetic, written out on a plain forward pass.

    x = answer + EOS (GPT-2's legacy template); x + y tokenized jointly and cut
    on the right at the window; summed NLL of y over all positions - 1;
    exp; mean over partial answers.
    """
    tok, model = lm.tokenizer, lm.model
    x = answer + tok.eos_token  # GPT-2's legacy chat template
    values = []
    for y in partials:
        n_x = len(tok(x)["input_ids"])
        ids = tok(x + y)["input_ids"][:lm.max_length]  # joint tokenization, right truncation
        import torch  # the fast tests run without the [models] extra

        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
        nll = -sum(float(logp[t - 1, ids[t]]) for t in range(n_x, len(ids)))
        values.append(math.exp(nll / (len(ids) - 1)))  # diluted normaliser
    return sum(values) / len(values)  # mean over partial answers
