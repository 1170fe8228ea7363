"""What the library's tests (tests/) and the reproduction's (src/repro/tests/) share: the
fixtures both conftests import from here, the tiny GPT-2 and the release's P.D. formula
(importable as ``testkit``: tests/ is on the path of both).

A test that needs an optional package says so itself: :func:`needs` at the top of a module
(or inside a test), a fixture below (``models_extra``, ``plot_extra``, the tiny GPT-2's),
so that in a core install (``pip install nfeval`` plus pytest) it is skipped with the extra to
install, and every other failure stays a failure.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from nfeval.extras import EXTRA_OF

#: a folder for PYTHONPATH whose sitecustomize blocks the weight packages and the network
#: (a fresh machine with `make env` only: see its docstring)
NO_WEIGHTS = Path(__file__).resolve().parent / "no_weights"


def needs(module: str):
    """``pytest.importorskip(module)`` with the extra that installs it as the reason."""
    extra = EXTRA_OF.get(module.split(".")[0])
    why = f"needs {module!r}, the {extra!r} extra" if extra else f"needs {module!r}"
    return pytest.importorskip(module, reason=why)


@pytest.fixture
def models_extra():
    """Skips a test that runs a command needing the language models (the ``models`` extra:
    torch and transformers) where they are not installed: the command would refuse first."""
    needs("torch")
    needs("transformers")


@pytest.fixture
def plot_extra():
    """The same for the plots (matplotlib, the ``plot`` extra)."""
    needs("matplotlib")


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
TINY_TEXTS = [
    "Animal research saves lives. Many treatments were first tested on animals.",
    "Animal research is cruel. Sentient beings should not suffer for our benefit.",
    "Alternatives exist. Cell cultures and computer models can replace many tests.",
    "Voting should be mandatory. Turnout would rise and represent everyone.",
]


def _tiny_gpt2(folder: Path, window: int) -> Path:
    torch = needs("torch")
    needs("tokenizers")
    needs("transformers")
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
