"""LINKAGE's paper experiments: what a table's notebook computes, as functions.

One module per artefact (``lk_t01``, ``lk_t02``, ``lk_t03_t04``, ``lk_t05``,
``lk_t06``, ``lk_t07_t08``, ``lk_t09_t10_f02``, ``lk_f03``), each with one
entry point ``run(...) -> nfeval_repro.tables.Experiment`` that its notebook calls
with its parameters. The helpers they share are named for what they hold: ``same_items``
(Table 2's items, every evaluator's frame on them, the correlation table), ``generated_lists``
(Tables 3-4's LLM-written reference lists), ``webglm_hits`` and ``webglm_scores`` (Table 5's
Acc(best) and its per-candidate scores), ``list_settings`` (Tables 6-8's reference patterns
and demonstrations), ``reference_draws`` (Tables 9-10), ``follow_up`` (the items and frames
every follow-up table shares), ``figure3`` and ``evaluation``.

Experiments use the kernels (:mod:`nfeval.linkage.judges`,
:mod:`nfeval.linkage.lexical`, :mod:`nfeval.linkage.refppl`) and the generic
metrics (:mod:`nfeval.metrics`); the kernels never import from here.
"""
