"""dq_f05: DebateQA Figure 5, do D.A. judges agree with each other?

The answering systems of dq_t04 (same questions, stored answers) scored with D.A.
(``prob`` mode) by every judge of the profile
(:func:`nfeval_repro.debateqa.agreement.score_each`), plus the project's
Acknowledge phrase rule as a reference judge; per pair of judges, the agreement of their
0/1 decisions (P("1") >= 0.5) and of their scores, each with a cluster bootstrap over
questions (:func:`nfeval_repro.debateqa.system_stats.decision_agreement_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.debateqa.da import acknowledge_baseline
from nfeval_repro.debateqa.agreement import answer_systems, score_each
from nfeval_repro.debateqa.system_stats import decision_agreement_rows
from nfeval_repro.debateqa.systems import SystemsConfig
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "dq_f05"
RULE = "acknowledge_rule"
NOTES = ("Decision = P('1') >= 0.5 (prob mode); acknowledge_rule is the project's "
         "phrase rule (0/1). agreement and cohen_kappa of the decisions and "
         "answer_spearman of the scores, over the answers both judges scored; "
         "share_judged_1 per judge (judge_b '-'). 95% intervals: cluster bootstrap "
         "over questions; n_undefined resamples (a constant judge) are left out. "
         "The paper's Figure 5 values are not printed in the paper's text.")


@dataclass(frozen=True)
class Config(SystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f05_da_judge_agreement.ipynb`` is written from them."""

    #: comma-separated D.A. judges; empty: the profile's, Table 4 plus extra
    judges: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 5 (parameters: the notebook's). Companion frame ``scores`` (every judge's
    and the rule's D.A. of every answer)."""
    prof = get_profile(config.profile)
    judge_names = model_list(config.judges, prof.da_judges + prof.da_judges_more)
    gen_names, items, systems = answer_systems(prof, split=config.split, limit=config.limit,
                                               seed=config.seed, generators=config.generators,
                                               max_tokens=config.max_tokens, progress=progress)
    if progress:
        print(f"{len(items)} questions, {len(systems)} systems, judges {judge_names}")
    scores, models = score_each(prof, systems, items, config.split, judge_names, "da",
                                progress=progress)
    ack = pd.DataFrame([{"system": s, "id": q, "metric": "da", "evaluator": RULE,
                         "score": acknowledge_baseline(a).score}
                        for s, ans in systems.items() for q, a in ans.items() if a.strip()])
    scores = pd.concat([scores, ack], ignore_index=True)
    t = time.time()
    table = decision_agreement_rows(scores, [*judge_names, RULE], seed=config.seed).rename(
        columns={"a": "judge_a", "b": "judge_b"})
    if progress:
        print(f"intervals in {time.time() - t:.0f} s")
    return Experiment(
        id=ID, table=table, id_columns=["judge_a", "judge_b", "quantity"],
        interval="questions",
        signatures=[Signature(metric="dispute_awareness", variant="prob", model=m, seed=config.seed,
                              n=len(items)) for m in models.values()],
        parameters=dict(generators=list(gen_names), judges=list(judge_names)),
        notes=NOTES, frames={"scores": scores})
