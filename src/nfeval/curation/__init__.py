"""DebateQA's curation pipeline (Section 3, Appendix A), run on local data.

* :mod:`.sources`: named question sources (ANTIQUE, TREC-DL-NF, WebGLM, the
  project's DebateQA sample, the DebateQA splits where reachable);
* :mod:`.dedup`: similarity-graph deduplication by greedy vertex cover (A.1);
* :mod:`.documents`: the project's local document collection, BM25 and dense
  search over it;
* :mod:`.tld`: the trusted top-level domains of Table 10 and a URL filter;
* :mod:`.chunking`: lossless character and token chunking (Figure 11, RAG).

Submodules are imported on use, so importing the package loads no model.
"""
