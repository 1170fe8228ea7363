"""dq_f06: DebateQA Figure 6, P.D. against D.A. over the answering systems.

One point per system of dq_t04 (its stored answers and scores): mean P.D. (the profile's
first backbone) against mean D.A. (``prob`` mode, the named judge), each with a bootstrap
interval over questions (:func:`nfeval_repro.debateqa.system_stats.mean_rows`), and
rows ``__correlation__``: Spearman and Pearson between the two means over the systems, on
all systems and on the model systems alone, with a cluster bootstrap over questions
(:func:`nfeval_repro.debateqa.system_stats.system_correlation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.agreement import answer_systems, pd_and_da
from nfeval_repro.debateqa.system_stats import mean_rows, model_systems, system_correlation
from nfeval_repro.debateqa.systems import ScoredSystemsConfig
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_f06"
NOTES = ("Means per system (quantity pd / da) with a 95% bootstrap interval over "
         "questions; correlations of the two means over systems (scope all, or the "
         "model systems only) with a cluster bootstrap over questions. Paper values "
         "not printed in the paper's text.")


@dataclass(frozen=True)
class Config(ScoredSystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f06_pd_vs_da.ipynb`` is written from them."""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 6 (parameters: the notebook's). ``extra``: ``means`` (both means per system
    with intervals), ``correlations`` (the ``__correlation__`` rows), ``backbone``,
    ``judge``, ``n_questions``.
    """
    prof = get_profile(config.profile)
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    judge_name = model_list(config.judge, (prof.da_judge,))[0]
    gen_names, items, systems = answer_systems(prof, split=config.split, limit=config.limit,
                                               seed=config.seed, generators=config.generators,
                                               max_tokens=config.max_tokens, progress=progress)
    scores, signatures = pd_and_da(prof, systems, items, config.split, bb_name, judge_name,
                                   seed=config.seed, progress=progress)
    means = mean_rows(scores, ["system", "metric"], seed=config.seed)
    corr = []
    for scope, names in (("all", list(systems)), ("models", model_systems(systems))):
        for method in ("spearman", "pearson"):
            row = system_correlation(scores, ("pd", bb_name), ("da", judge_name),
                                     method=method, systems=names, seed=config.seed, key=scope)
            corr.append({"system": "__correlation__", "quantity": f"{method}_pd_da",
                         "scope": scope, **row})
    corr = pd.DataFrame(corr)
    table = pd.concat([means.rename(columns={"metric": "quantity"}).assign(scope="system"),
                       corr], ignore_index=True)
    return Experiment(
        id=ID, table=table, id_columns=["system", "quantity", "scope"], interval="questions",
        signatures=signatures,
        parameters=dict(generators=list(gen_names), backbone=bb_name, judge=judge_name),
        notes=NOTES,
        extra={"means": means, "correlations": corr, "backbone": bb_name,
               "judge": judge_name, "n_questions": len(items)})
