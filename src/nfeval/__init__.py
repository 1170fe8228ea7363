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
* the API (``nfeval.linkage.score``, ``nfeval.debateqa.pd`` ..., :func:`meta`), what it
  returns (:mod:`nfeval.result`), the ``nfeval`` command (:mod:`nfeval.cli`) and
  ``nfeval compare``.

The papers' reproduction (experiments, claims, the committed item store, notebooks'
tables) is a separate package beside this one, ``nfeval_repro``, which imports this one;
this package never imports it.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # each subpackage is imported on first use, so ``import nfeval`` stays light
    if name == "linkage":
        import nfeval.linkage as module
    elif name == "debateqa":
        import nfeval.debateqa as module
    elif name == "metrics":
        import nfeval.metrics as module
    elif name == "models":
        import nfeval.models as module
    elif name == "data":
        import nfeval.data as module
    else:
        raise AttributeError(f"module 'nfeval' has no attribute {name!r}")
    return module


def meta(scores=None, *, answers=None, methods=None, model=None, coefficients=("kendall",),
         seed: int = 0, folds: int = 5, repeats: int = 5, combine: bool = True):
    """Which evaluator agrees best with your human grades (``nfeval meta``;
    :mod:`nfeval.meta_evaluation`). ``scores``: per-item CSV paths of ``nfeval linkage`` runs,
    or a long frame (``qid``, ``doc_id``, ``grade``, ``score``, ``method``); or ``answers`` (a
    graded LINKAGE answers file) with ``methods`` to run (``model``: the judge). Returns a
    :class:`~nfeval.meta_evaluation.MetaResult` (``.rows``, ``.pairs``, ``.best``,
    ``.combination``, ``.readings()``, ``.summary()``, ``.plot(path)``)."""
    from nfeval import meta_evaluation as M

    if (scores is None) == (answers is None):
        raise NfevalError("give scores (per-item CSVs or a frame) or answers with methods")
    if answers is not None:
        if not methods:
            raise NfevalError("answers needs methods, e.g. methods=['rouge1', 'bertscore']")
        frame = M.score_methods(answers, list(methods), model=model, seed=seed,
                                progress=False)
    elif isinstance(scores, (str, bytes)) or hasattr(scores, "__fspath__"):
        frame = M.read_scores([scores])
    elif hasattr(scores, "columns"):
        frame = scores
    else:
        frame = M.read_scores(list(scores))
    return M.meta(frame, coefficients=coefficients, seed=seed, folds=folds, repeats=repeats,
                  combine=combine)


class NfevalError(Exception):
    """An error with a message meant for the user: what went wrong and the fix."""


class NothingScored(NfevalError):
    """The input was read but no item in it can be scored (``nfeval`` exits with 1)."""

    exit_status = 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while scoring. The message says what is cached and how to resume
    (``nfeval`` prints it and exits with 130)."""

    exit_status = 130
