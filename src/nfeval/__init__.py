"""nfeval: evaluate long-form answers to open-ended questions.

Reproduces two methods and makes them usable on your own answers:

* DebateQA (EACL 2026): Perspective Diversity (P.D.) and Dispute Awareness (D.A.).
* LINKAGE (EMNLP 2024): listwise ranking of a candidate among graded references.

Layout (arrows point one way: the method kernels use the models, the models use
nothing of the metrics):

* ``nfeval.models``: one language-model interface over transformers, llama.cpp and
  OpenAI-compatible servers; ``nfeval.data``: the public release files (mirror, cache,
  checksums); ``nfeval.metrics``: generic kernels (correlation protocol, intervals, Elo);
* ``nfeval.debateqa``: P.D., D.A., answer files and answering; ``nfeval.linkage``:
  reference lists, lexical and embedding baselines, LLM judges, refppl, ``nfeval linkage``
  on one's own files;
* the API (``nfeval.linkage.score``, ``nfeval.debateqa.pd`` ..., ``nfeval.meta``), what it
  returns (:mod:`nfeval.result`), the ``nfeval`` command (:mod:`nfeval.cli`) and
  ``nfeval compare``; the errors it raises (:mod:`nfeval.errors`).

This root only re-exports: it defines nothing of its own.

The papers' reproduction (experiments, claims, the committed item store, notebooks'
tables) is a separate package beside this one, ``nfeval_repro``, which imports this one;
this package never imports it.
"""

from nfeval.errors import Interrupted, NfevalError, NothingScored
from nfeval.version import __version__

__all__ = ["Interrupted", "NfevalError", "NothingScored", "__version__", "data", "debateqa",
           "linkage", "meta", "metrics", "models"]


def __getattr__(name: str):
    # re-exported on first use, so that ``import nfeval`` stays light
    if name == "linkage":
        import nfeval.linkage as value
    elif name == "debateqa":
        import nfeval.debateqa as value
    elif name == "metrics":
        import nfeval.metrics as value
    elif name == "models":
        import nfeval.models as value
    elif name == "data":
        import nfeval.data as value
    elif name == "meta":
        from nfeval.meta_evaluation import evaluate as value
    else:
        raise AttributeError(f"module 'nfeval' has no attribute {name!r}")
    return value
