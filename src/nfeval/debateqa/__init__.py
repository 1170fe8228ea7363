"""DebateQA (EACL 2026): Perspective Diversity and Dispute Awareness, on any answers.

Kernels and what users call on their own answers:

* :mod:`.pd` -- P.D.: perplexity of the reference partial answers given an answer;
* :mod:`.da` -- D.A.: the few-shot judge of whether an answer says the question is debated;
* :mod:`.scoring` -- both over an answer file (resumable, cached; ``nfeval pd`` / ``nfeval da``);
* :mod:`.generation`, :mod:`.systems` -- collecting answers from models, scoring answering
  systems; :mod:`.system_intervals` -- their means and differences with intervals.

The paper's experiments (alignment with human grades, RAG, the curation
pipeline, table logic) are in :mod:`nfeval.debateqa.experiments`; they use
these kernels, never the other way round.

Submodules are imported on use, so importing the package loads no model.
"""
