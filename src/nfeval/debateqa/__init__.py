"""DebateQA (EACL 2026): Perspective Diversity and Dispute Awareness, on any answers.

Kernels and what users call on their own answers:

* :mod:`.pd` -- P.D.: perplexity of the reference partial answers given an answer;
* :mod:`.da` -- D.A.: the few-shot judge of whether an answer says the question is debated;
* :mod:`.scoring` -- both over an answer file (resumable, cached; ``nfeval pd`` / ``nfeval da``).

The paper's experiments (alignment with human grades, RAG, the curation
pipeline, collecting answers from models, answering systems and their intervals, one module
per table) are in :mod:`nfeval_repro.debateqa`; they use
these kernels, never the other way round.

The metrics as objects, built once from their settings and a model and called on answers:
:class:`PD` and :class:`DA` (``PD(model=...).score(answers, partial_answers=...)``); their
function forms :func:`perspective_diversity` and :func:`dispute_awareness`
(:mod:`nfeval.debateqa.api`).

Submodules are imported on use, so importing the package loads no model.
"""

from nfeval.debateqa.api import DA, PD, dispute_awareness, perspective_diversity

__all__ = ["DA", "PD", "dispute_awareness", "perspective_diversity"]
