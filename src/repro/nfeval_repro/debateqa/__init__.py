"""DebateQA's paper experiments: what a table's or figure's notebook computes, as functions.

One module per artefact, ``dq_<id>.py``, each with one entry point ``run(...)`` that takes
the notebook's parameters and returns a :class:`nfeval_repro.tables.Experiment` (the table, its
signatures, companion frames). What several artefacts share:

* :mod:`.systems`, :mod:`.intervals` -- answering systems (dq_t04's generators and answer
  sets), their scores, and means and paired differences with intervals;
* :mod:`.alignment`, :mod:`.alignment_scores` -- P.D., D.A. and the alternative metrics
  against human grades (Table 2); :mod:`.agreement` -- Figure 2's pseudo-annotators and the
  helpers of the stability and agreement figures (dq_f03-f07);
* :mod:`.rag`, :mod:`.rag_index`, :mod:`.rag_react` -- answering with retrieval and ReAct
  (Tables 6-7);
* :mod:`.tables` -- D.A. against labels (Table 3); :mod:`.eq7` -- Equation 7;
* :mod:`.curation` -- the dataset curation pipeline (Section 3, Appendix A).

Experiments use the kernels (:mod:`nfeval.debateqa`) and the generic metrics
(:mod:`nfeval.metrics`); the kernels never import from here.
"""
