"""dq_f03: DebateQA Figure 3, is the P.D. ranking stable across backbones?

The answering systems of dq_t04 (same questions, stored answers) scored with P.D. (paper
variant) by every backbone of the profile
(:func:`nfeval_repro.debateqa.agreement.score_each`); per pair of backbones, the
agreement of their system rankings and of their per-answer scores, each with a cluster
bootstrap over questions (:func:`nfeval_repro.debateqa.system_stats.stability_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import time

from nfeval_repro.debateqa.agreement import answer_systems, score_each
from nfeval_repro.debateqa.system_stats import model_systems, stability_rows
from nfeval_repro.debateqa.systems import SystemsConfig, system_means
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "dq_f03"
NOTES = ("Per pair of P.D. backbones: ranking_kendall = Kendall tau-b between the "
         "system rankings by mean P.D.; answer_spearman/answer_kendall = correlation "
         "of the two backbones' P.D. of the same answers, pooled; "
         "within_question_spearman = mean over questions of the Spearman among one "
         "question's answers. scope all = every system, models = the generated "
         "answers only (no written set). 95% intervals: cluster bootstrap over "
         "questions (within_question: bootstrap of the mean over questions). The "
         "paper's Figure 3 values are not printed in the paper's text.")


@dataclass(frozen=True)
class Config(SystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f03_pd_backbone_stability.ipynb`` is written from them."""

    #: comma-separated answering systems (a model, or model:t<temperature> for its sampled answers);
    #: empty: the profile's five stability systems
    generators: str = ""
    #: comma-separated P.D. backbones; empty: the profile's four (embedded: SmolLM2-135M,
    #: Gemma-3-270m, Qwen2.5-Coder-0.5B and the judge's Qwen2.5-Coder-1.5B)
    backbones: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 3 (parameters: the notebook's). Companion frame ``scores`` (every backbone's
    P.D. of every answer). ``extra``: ``means`` (mean P.D. per system and backbone),
    ``backbones``, ``systems`` (system names), ``n_questions``.
    """
    prof = get_profile(config.profile)
    pd_names = model_list(config.backbones, prof.pd_backbones + prof.pd_backbones_more)
    gen_names, items, systems = answer_systems(prof, split=config.split, limit=config.limit,
                                               seed=config.seed, generators=config.generators,
                                               max_tokens=config.max_tokens, stability=True,
                                               progress=progress)
    if progress:
        print(f"{len(items)} questions, {len(systems)} systems "
              f"({len(model_systems(systems))} models), backbones {pd_names}")
    scores, models = score_each(prof, systems, items, config.split, pd_names, "pd",
                                progress=progress)
    t = time.time()
    table = stability_rows(scores, "pd", pd_names, seed=config.seed).rename(
        columns={"a": "backbone_a", "b": "backbone_b"})
    if progress:
        print(f"intervals in {time.time() - t:.0f} s")
    return Experiment(
        id=ID, table=table, id_columns=["backbone_a", "backbone_b", "scope", "quantity"],
        interval="questions",
        signatures=[Signature(metric="perspective_diversity", variant="paper", model=m,
                              seed=config.seed, n=len(items)) for m in models.values()],
        parameters=dict(generators=list(gen_names), backbones=list(pd_names)),
        notes=NOTES, frames={"scores": scores},
        extra={"means": system_means(scores), "backbones": list(pd_names),
               "systems": list(systems), "n_questions": len(items)})
