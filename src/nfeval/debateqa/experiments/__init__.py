"""DebateQA's paper experiments: what a table's or figure's notebook computes, as functions.

* :mod:`.alignment` -- P.D., D.A. and the alternative metrics against human grades (Table 2,
  Figure 2);
* :mod:`.rag` -- answering with retrieval and ReAct (Tables 6-7);
* :mod:`.tables` -- table logic of Table 3;
* :mod:`.curation` -- the dataset curation pipeline (Section 3, Appendix A).

Experiments use the kernels (:mod:`nfeval.debateqa`) and the generic metrics
(:mod:`nfeval.metrics`); the kernels never import from here.
"""
