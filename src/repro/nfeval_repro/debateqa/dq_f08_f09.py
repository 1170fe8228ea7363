"""dq_f08_f09 -- DebateQA Figures 8-9: P.D. and D.A. under sampling settings.

One generator answers with sampling decoding at each temperature (top-p 1.0)
and each top-p value (temperature 1.0), one sample per question and setting,
seeded per question; the answers are scored with P.D. (Figure 8) and D.A.
(Figure 9); metric ``length_words`` (words per answer) shows whether a setting
changes the length too. The table holds the mean per setting (bootstrap over
questions) and each setting minus the largest value of its sweep on the same
questions (paired bootstrap). The paper's values are not printed in the paper's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.system_stats import difference_rows, mean_rows
from nfeval_repro.debateqa.systems import (collect_systems, length_rows,
                                                 load_questions, metric_signatures,
                                                 score_systems, split_systems)
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_f08_f09"
NOTES = ("Figure 8 = metric pd, Figure 9 = metric da; metric length_words = words per "
         "answer. The temperature sweep runs at top-p 1.0, the top-p sweep at temperature "
         "1.0. quantity mean: 95% bootstrap interval over questions; quantity difference: "
         "the setting minus the sweep's largest value, paired bootstrap over questions. "
         "Paper values not printed in the paper's text.")


def _sweep_settings(temperatures: str, top_ps: str) -> list[tuple[str, float, float, float]]:
    """``(sweep, value, temperature, top_p)`` of every point: the temperatures at top-p
    1.0, then the top-p values at temperature 1.0 (comma-separated lists)."""
    return ([("temperature", float(t), float(t), 1.0) for t in temperatures.split(",")
             if t.strip()]
            + [("top_p", float(p), 1.0, float(p)) for p in top_ps.split(",") if p.strip()])


def _sweep_table(scores: pd.DataFrame, *, seed: int) -> pd.DataFrame:
    """Means per sweep, value and metric, then per sweep each value minus its largest."""
    frames = [mean_rows(scores, ["sweep", "value", "metric"], seed=seed).assign(quantity="mean")]
    for _sweep, part in scores.groupby("sweep", sort=False):
        values = sorted(part["value"].unique())
        frames.append(difference_rows(part, ["sweep", "metric"], column="value", seed=seed,
                                      pairs=[(v, values[-1]) for v in values[:-1]])
                      .assign(quantity="difference"))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f08_f09_sampling_sweeps.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed: the question draw, the sampling (per question, derived from this) and the
    #: bootstrap
    seed: int = 0
    #: questions, drawn uniformly at random with seed (a smaller limit takes a subset), 0 for all
    #: (40: every question of the sample, the committed tables)
    limit: int = 40
    #: question set: sample, test, dev or a path to a split file
    split: str = "sample"
    #: generation budget per answer
    max_tokens: int = 256
    #: answering model; empty: the profile's first
    generator: str = ""
    #: P.D. backbone; empty: the profile's first
    backbone: str = ""
    #: D.A. judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, the stronger of the dq_t03
    #: pilot, AUROC 0.865 vs 0.23)
    judge: str = ""
    #: comma-separated temperatures, top-p fixed at 1.0
    temperatures: str = "0.2,0.4,0.6,0.8,1.0"
    #: comma-separated top-p values, temperature fixed at 1.0
    top_ps: str = "0.2,0.4,0.6,0.8,1.0"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) at every sampling setting, score
    the answers and assemble Figures 8-9's table.

    Frame ``scores``: every answer's P.D., D.A. and length (words) with its ``sweep`` and
    ``value``.
    ``extra``: ``items`` and ``scores``.
    """
    prof = get_profile(config.profile)
    gen_name = model_list(config.generator, prof.generators)[0]
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    judge_name = model_list(config.judge, (prof.da_judge,))[0]
    items = load_questions(config.split, config.limit, seed=config.seed)
    systems = {}
    for sweep, value, temp, top_p in _sweep_settings(config.temperatures, config.top_ps):
        got = collect_systems(items, [gen_name], backend=prof.generator_backend,
                              split=config.split, written=False,
                              decoding=Decoding(temp, top_p, config.max_tokens, config.seed),
                              progress=progress, load=prof.load)
        systems[f"{sweep}={value:g}"] = got[gen_name]
    pd_models, judges = {bb_name: prof.load(bb_name)}, {judge_name: prof.load(judge_name)}
    scores = split_systems(pd.concat([score_systems(systems, items, config.split,
                                                    pd_models=pd_models, judges=judges,
                                                    progress=progress),
                                      length_rows(systems, "length_words")],
                                     ignore_index=True),
                           ["sweep", "value"], sep="=")
    scores["value"] = scores["value"].astype(float)
    return Experiment(ID, _sweep_table(scores, seed=config.seed), id_columns=["sweep", "value",
                                                                              "metric", "quantity"],
                      interval="questions", signatures=metric_signatures(pd_models, judges,
                                                                         seed=config.seed,
                                                                         n=len(items)),
                      parameters=dict(generator=gen_name, backbone=bb_name, judge=judge_name),
                      notes=NOTES, frames={"scores": scores}, extra={"items": items,
                                                                     "scores": scores})
