"""LINKAGE's paper experiments: what a table's notebook computes, as functions.

One module per artefact (``lk_t01``, ``lk_t02``, ``lk_t03_t04``, ``lk_t05``,
``lk_t06``, ``lk_t07_t08``, ``lk_t09_t10_f02``, ``lk_f03``), each with one
entry point ``run(...) -> nfeval_repro.tables.Experiment`` that its notebook calls
with its parameters. The table helpers they share are the per-table modules
(``table2``, ``tables3_4``, ``table5`` with ``table5_scores``, ``tables6_8``,
``tables9_10``, ``figure3``) and ``settings`` and ``evaluation``.

Experiments use the kernels (:mod:`nfeval.linkage.judges`,
:mod:`nfeval.linkage.lexical`, :mod:`nfeval.linkage.refppl`) and the generic
metrics (:mod:`nfeval.metrics`); the kernels never import from here.
"""
