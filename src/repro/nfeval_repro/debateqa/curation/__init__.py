"""DebateQA's curation pipeline (Section 3, Appendix A), run on local data.

* :mod:`.sources`: named question sources (ANTIQUE, TREC-DL-NF, WebGLM, the
  project's DebateQA sample, the DebateQA splits where reachable);
* :mod:`.dedup`: similarity-graph deduplication by greedy vertex cover (A.1);
* :mod:`.documents`: the project's local document collection, BM25 and dense
  search over it;
* :mod:`.tld`: the trusted top-level domains of Table 10 and a URL filter;
* :mod:`.chunking`: character and token chunks by LangChain's recursive splitter
  (Figure 11, RAG);
* :mod:`.topics`: BERTopic topics of a question set (Figure 14), stored once fitted;
* :mod:`.pipeline`: the stages end to end (Figure 1);
* :mod:`.report`: a run as the artefacts make it, and its tables (Figures 1, 12-13).

Steps whose floats could differ on another CPU (embeddings, the dedup
graph's edges, the topic assignments) go through the item store
(:mod:`nfeval_repro.store`) while one is active.

Submodules are imported on use, so importing the package loads no model.
"""
