"""lk_f03, LINKAGE Figure 3: one question's candidates, every method's scores on 0..10.

The notebook ``lk_f03_case_study.ipynb`` calls :func:`run`. The question is
the ``question``-th judged question of ``dataset`` in lk_t02's items
(:func:`nfeval_repro.linkage.figure3.case_item`), scored with lk_t02's
own functions (:mod:`nfeval_repro.linkage.same_items`: the automatic
metrics, the five judge rows and ``refppl``), so every judgment is read from
lk_t02's item store; :func:`nfeval_repro.linkage.figure3.rescaled`
puts each method on 0..10. A case study: one question, no interval.
"""

from __future__ import annotations

import time

import pandas as pd

from nfeval.data import load_linkage
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.figure3 import case_item, rescaled
from nfeval_repro.linkage.same_items import (DEFAULT_JUDGE_ROWS, LEXICAL_ROWS, judge_frame,
                                               lexical_frame, refppl_frame)
from nfeval.linkage.lexical import method_signature, split_scores
from nfeval.linkage.references import DEFAULT_PATTERN
from nfeval.linkage.refppl import PROMPT as REFPPL_PROMPT
from nfeval_repro.profiles import get_profile
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment, Signature
from nfeval_repro.store import active_store, cached_steps

__all__ = ["run"]

ID = "lk_f03"


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0, dataset: str = "antique",
        question: int = 0, max_candidates: int = -1,
        judge: str = "", judge_mode: str = "",
        unparsed: str = "drop", shots: int = 3, refppl_lm: str = "",
        progress: bool = True) -> Experiment:
    """Figure 3's scores; ``limit`` is unused (one question). ``extra``: the case's
    ``question`` and ``split`` (references and candidates) and the judge's ``judge_name``."""
    started = time.time()
    prof = get_profile(profile)
    judge_name = judge or prof.judge
    mode = judge_mode or prof.judge_mode
    k = max_candidates if max_candidates >= 0 else (8 if profile == "embedded" else 0)
    qs = load_linkage(dataset)
    sample, split = case_item(qs, dataset, seed=seed, max_candidates=k, question=question)
    q = next(x for x in qs if x.qid == split.qid)
    if progress:
        print(f"{dataset} question {q.qid}: {q.question}")
        print(f"references (grades {''.join(map(str, split.reference_grades))}), candidates "
              "with grades", [c.grade for c in split.candidates])

    lexical = split_scores([split], qs, methods=LEXICAL_ROWS,
                           embedder=prof.embedder if profile == "paper" else None,
                           num_layers=6 if profile == "embedded" else None, device=prof.device,
                           steps=cached_steps)
    frames = [lexical_frame(lexical, dataset=dataset, label="case study")]
    signatures = [method_signature(m, pattern=DEFAULT_PATTERN[dataset], seed=seed, n=1,
                                   candidates="rest", embedder=lexical.attrs["embedder"],
                                   num_layers=lexical.attrs["num_layers"])
                  for m in LEXICAL_ROWS]
    model = prof.load(judge_name)
    part, sigs = judge_frame(model, qs, sample, dataset=dataset, rows=list(DEFAULT_JUDGE_ROWS),
                             mode=mode, seed=seed, shots=shots, unparsed=unparsed,
                             splits=[split], label="case study", progress=False)
    frames.append(part)
    signatures += sigs
    lm_name = refppl_lm or prof.refppl_lm
    lm = prof.load(lm_name)
    part, _ = refppl_frame(lm, qs, [split], dataset=dataset, label="case study", progress=False)
    frames.append(part)
    signatures.append(Signature(metric="linkage/refppl", variant="top-grade-mean-token-nll",
                                model=lm.info.as_dict(),
                                prompt_sha256=sha256_text(prompt_text(REFPPL_PROMPT)),
                                seed=seed, n=1, extra={"dataset": dataset, "qid": q.qid}))
    if progress:
        store = active_store()
        print(f"scored in {time.time() - started:.0f} s; "
              f"{store.summary() if store else 'no item store'}")

    table = rescaled(pd.concat(frames, ignore_index=True), split).assign(dataset=dataset)
    return Experiment(
        ID, table, id_columns=["dataset", "qid", "candidate", "doc_id", "grade", "method"],
        interval="none: one question's candidates, a case study", signatures=signatures,
        parameters=dict(max_candidates=k, judge=judge_name, judge_mode=mode, refppl_lm=lm_name),
        notes="Scores of one question's candidates (lk_t02's judged items: the same draw, "
              "references and candidates), rescaled to 0..10 from each method's own range "
              "(raw: the method's score; for refppl, the project's row beyond the paper, the "
              "geometric-mean token probability of the top-grade references). The paper's "
              "Figure 3 shows another question, as an image only, so there is no paper column.",
        extra={"question": q, "split": split, "judge_name": model.info.name})
