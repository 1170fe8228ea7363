"""dq_t10 -- DebateQA Table 10: the trusted top-level domains and their filter.

Applies the filter of Section 3.2 (:mod:`nfeval_repro.debateqa.curation.tld`) to
the project's own document collection: documents per Table 10 TLD and per URL suffix,
documents kept and dropped, and questions left with at least ``min_docs`` trusted
documents (at most ``max_docs`` used). Exact counts; no model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

#: Table 10's two kinds of TLD, as the paper's text describes them.
REGISTRATION = {"gov": "closed", "edu": "closed", "org": "open", "pro": "open", "info": "open"}


def _rows(docs, trusted_list, suffixes, per_question, kept_docs) -> list[dict]:
    from nfeval_repro.debateqa.curation.tld import is_trusted, url_suffix

    per_tld = {t: sum(is_trusted(d.url, [t]) for d in docs) for t in trusted_list}
    kept_q = per_question[per_question["kept"]]
    rows = [{"section": "table10", "item": t, "ours": n, "registration": REGISTRATION.get(t, "")}
            for t, n in per_tld.items()]
    rows += [{"section": "suffix", "item": r.suffix, "ours": r.documents, "trusted": r.trusted}
             for r in suffixes.itertuples()]
    rows += [{"section": "filter", "item": k, "ours": v} for k, v in {
        "documents": len(docs),
        "documents_linked": int(sum(d.question_id is not None for d in docs)),
        "documents_trusted": len(kept_docs),
        "documents_dropped": len(docs) - len(kept_docs),
        "documents_bad_url": int(sum(url_suffix(d.url) is None for d in docs)),
        "questions": len(per_question),
        "questions_kept": len(kept_q),
        "questions_dropped": len(per_question) - len(kept_q),
        "docs_per_kept_question_min": kept_q["used"].min() if len(kept_q) else None,
        "docs_per_kept_question_max": kept_q["used"].max() if len(kept_q) else None,
    }.items()]
    return rows


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t10_trusted_tlds.ipynb`` is written from them."""

    #: run profile: embedded or paper; this table uses no model
    profile: str = "embedded"
    #: random seed (unused: the filter is deterministic)
    seed: int = 0
    #: sample questions (the first by id), 0 for all
    limit: int = 0
    #: document collection file; empty: the project collection in data/debateqa_docs
    documents: str = ""
    #: comma-separated trusted TLDs (the paper names these five)
    tlds: str = "gov,edu,org,pro,info"
    #: keep questions with at least this many trusted documents
    min_docs: int = 3
    #: use at most this many documents per kept question
    max_docs: int = 5


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The filter on ``documents`` (empty: the project collection) for the first ``limit``
    sample questions (0: all) and the distractors.

    ``frames``: ``documents_per_question``; ``extra``: ``suffixes`` (documents per URL
    suffix), ``per_question``, ``kept_documents`` and ``n_documents``. ``seed`` is only
    recorded (the filter is deterministic); ``progress``: print what was read.
    """
    from nfeval.data.sample import load_sample
    from nfeval_repro.debateqa.curation.documents import (
        DOCS_FILE,
        documents_per_question,
        load_documents,
        suffix_counts,
        trusted_documents,
    )
    from nfeval_repro.debateqa.curation.tld import COUNTRY_EQUIVALENTS
    from nfeval.hashing import sha256_file
    from nfeval_repro.profiles import get_profile
    from nfeval_repro.tables import join_paper, paper_values

    get_profile(config.profile)
    trusted_list = [t.strip().lstrip(".").lower() for t in config.tlds.split(",") if t.strip()]
    docs_path = config.documents or DOCS_FILE
    question_ids = list(load_sample().limit(config.limit).items)
    docs = [d for d in load_documents(docs_path)
            if d.question_id is None or d.question_id in question_ids]
    if progress:
        print(f"{len(docs)} documents for {len(question_ids)} questions from {docs_path}")
    suffixes = suffix_counts(docs, trusted_list)
    per_question = documents_per_question(docs, question_ids, trusted_list, config.min_docs,
                                          config.max_docs)
    kept_docs = trusted_documents(docs, trusted_list)
    ours = pd.DataFrame(_rows(docs, trusted_list, suffixes, per_question, kept_docs))
    table = join_paper(ours, paper_values("dq_t10"), on=["section", "item"])
    country = ",".join(f"{k}>{v}" for k, v in sorted(COUNTRY_EQUIVALENTS.items()))
    sig = Signature(metric="trusted_tld_filter", variant="suffix-or-country-form",
                    seed=config.seed, n=len(docs),
                    extra={"tlds": ",".join(trusted_list), "min_docs": config.min_docs,
                           "max_docs": config.max_docs, "documents_sha256": sha256_file(docs_path),
                           "country_forms": country})
    return Experiment(
        id="dq_t10", table=table, id_columns=["section", "item"], signatures=[sig],
        interval="none: exact counts of the documents and questions of the whole collection",
        parameters={"documents": str(config.documents)},
        notes="The project's own collection, not the paper's web pages; paper values are "
              "the paper's question counts (3,216 before, 2,982 kept) and its 3-5 documents.",
        frames={"documents_per_question": per_question},
        extra={"suffixes": suffixes, "per_question": per_question, "kept_documents": kept_docs,
               "n_documents": len(docs)})
