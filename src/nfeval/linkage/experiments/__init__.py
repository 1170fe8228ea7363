"""LINKAGE's paper experiments: what a table's notebook computes, as functions.

Experiments use the kernels (:mod:`nfeval.linkage.judges`,
:mod:`nfeval.linkage.lexical`, :mod:`nfeval.linkage.refppl`) and the generic
metrics (:mod:`nfeval.metrics`); the kernels never import from here.
"""
