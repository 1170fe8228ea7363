"""dq_f07: DebateQA Figure 7, ranking the systems by k * Z(P.D.) + Z(D.A.).

The systems of dq_t04 (its stored answers and scores), P.D. from the profile's first
backbone (negated before z-normalization: lower is better) and D.A. (``prob``) from the
named judge; per system and coefficient k the combined score with a cluster bootstrap
over questions, and the rank it implies
(:func:`nfeval_repro.debateqa.system_stats.combined_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

from nfeval_repro.debateqa.agreement import answer_systems, pd_and_da
from nfeval_repro.debateqa.system_stats import combined_rows
from nfeval_repro.debateqa.systems import ScoredSystemsConfig
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_f07"
NOTES = ("quantity combined = k * Z(-P.D.) + Z(D.A.) of the system means (z over the "
         "systems) with a 95% cluster bootstrap interval over questions; quantity "
         "rank = its rank (1 = best), exact, no interval (NaN bounds). Paper values "
         "not printed in the paper's text.")


def parse_ks(ks: str) -> list[float]:
    """A notebook's comma-separated coefficients k, as floats."""
    return [float(k) for k in ks.split(",") if k.strip()]


@dataclass(frozen=True)
class Config(ScoredSystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f07_combined_ranking.ipynb`` is written from them."""

    #: comma-separated values of the coefficient k
    ks: str = "0,0.25,0.5,1,2,4,8"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 7 (parameters: the notebook's). ``extra``: ``ks`` (the coefficients, as
    floats) and ``n_questions``."""
    prof = get_profile(config.profile)
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    judge_name = model_list(config.judge, (prof.da_judge,))[0]
    k_values = parse_ks(config.ks)
    gen_names, items, systems = answer_systems(prof, split=config.split, limit=config.limit,
                                               seed=config.seed, generators=config.generators,
                                               max_tokens=config.max_tokens, progress=progress)
    scores, signatures = pd_and_da(prof, systems, items, config.split, bb_name, judge_name,
                                   seed=config.seed, progress=progress)
    table = combined_rows(scores, k_values, pd_evaluator=bb_name, da_evaluator=judge_name,
                          seed=config.seed)
    return Experiment(
        id=ID, table=table, id_columns=["system", "k", "quantity"], interval="questions",
        signatures=signatures,
        parameters=dict(generators=list(gen_names), backbone=bb_name, judge=judge_name,
                        ks=k_values),
        notes=NOTES, extra={"ks": k_values, "n_questions": len(items)})
