"""dq_f03: DebateQA Figure 3, is the P.D. ranking stable across backbones?

The answering systems of dq_t04 (same questions, stored answers) scored with P.D. (paper
variant) by every backbone of the profile
(:func:`nfeval_repro.debateqa.agreement.score_each`); per pair of backbones, the
agreement of their system rankings and of their per-answer scores, each with a cluster
bootstrap over questions (:func:`nfeval_repro.debateqa.system_stats.stability_rows`).
"""

from __future__ import annotations

import time

from nfeval_repro.debateqa.agreement import answer_systems, score_each
from nfeval_repro.debateqa.system_stats import model_systems, stability_rows
from nfeval_repro.debateqa.systems import system_means
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment, Signature

__all__ = ["run"]

ID = "dq_f03"
NOTES = ("Per pair of P.D. backbones: ranking_kendall = Kendall tau-b between the "
         "system rankings by mean P.D.; answer_spearman/answer_kendall = correlation "
         "of the two backbones' P.D. of the same answers, pooled; "
         "within_question_spearman = mean over questions of the Spearman among one "
         "question's answers. scope all = every system, models = the generated "
         "answers only (no written set). 95% intervals: cluster bootstrap over "
         "questions (within_question: bootstrap of the mean over questions). The "
         "paper's Figure 3 values are not printed in the paper's text.")


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 40, split: str = "sample",
        max_tokens: int = 256, generators: str = "",
        backbones: str = "",
        progress: bool = True) -> Experiment:
    """Figure 3 (parameters: the notebook's). Companion frame ``scores`` (every backbone's
    P.D. of every answer). ``extra``: ``means`` (mean P.D. per system and backbone),
    ``backbones``, ``systems`` (system names), ``n_questions``.
    """
    prof = get_profile(profile)
    pd_names = model_list(backbones, prof.pd_backbones + prof.pd_backbones_more)
    gen_names, items, systems = answer_systems(prof, split=split, limit=limit, seed=seed,
                                               generators=generators, max_tokens=max_tokens,
                                               stability=True, progress=progress)
    if progress:
        print(f"{len(items)} questions, {len(systems)} systems "
              f"({len(model_systems(systems))} models), backbones {pd_names}")
    scores, models = score_each(prof, systems, items, split, pd_names, "pd", progress=progress)
    t = time.time()
    table = stability_rows(scores, "pd", pd_names, seed=seed).rename(
        columns={"a": "backbone_a", "b": "backbone_b"})
    if progress:
        print(f"intervals in {time.time() - t:.0f} s")
    return Experiment(
        id=ID, table=table, id_columns=["backbone_a", "backbone_b", "scope", "quantity"],
        interval="questions",
        signatures=[Signature(metric="perspective_diversity", variant="paper", model=m,
                              seed=seed, n=len(items)) for m in models.values()],
        parameters=dict(generators=list(gen_names), backbones=list(pd_names)),
        notes=NOTES, frames={"scores": scores},
        extra={"means": system_means(scores), "backbones": list(pd_names),
               "systems": list(systems), "n_questions": len(items)})
