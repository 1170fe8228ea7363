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

import pandas as pd

from nfeval_repro.debateqa.system_stats import difference_rows, mean_rows
from nfeval_repro.debateqa.systems import (collect_systems, length_rows,
                                                 load_questions, metric_signatures,
                                                 score_systems, split_systems)
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment

__all__ = ["run"]

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


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 16, split: str = "sample",
        max_tokens: int = 256, generator: str = "", backbone: str = "",
        judge: str = "", temperatures: str = "0.2,0.4,0.6,0.8,1.0",
        top_ps: str = "0.2,0.4,0.6,0.8,1.0", progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) at every sampling setting, score
    the answers and assemble Figures 8-9's table.

    Frame ``scores``: every answer's P.D., D.A. and length (words) with its ``sweep`` and
    ``value``.
    ``extra``: ``items`` and ``scores``.
    """
    prof = get_profile(profile)
    gen_name = model_list(generator, prof.generators)[0]
    bb_name = model_list(backbone, prof.pd_backbones)[0]
    judge_name = model_list(judge, (prof.da_judge,))[0]
    items = load_questions(split, limit, seed=seed)
    systems = {}
    for sweep, value, temp, top_p in _sweep_settings(temperatures, top_ps):
        got = collect_systems(items, [gen_name], backend=prof.generator_backend, split=split,
                              written=False, temperature=temp, top_p=top_p,
                              max_tokens=max_tokens, seed=seed, progress=progress,
                              load=prof.load)
        systems[f"{sweep}={value:g}"] = got[gen_name]
    pd_models, judges = {bb_name: prof.load(bb_name)}, {judge_name: prof.load(judge_name)}
    scores = split_systems(pd.concat([score_systems(systems, items, split,
                                                    pd_models=pd_models, judges=judges,
                                                    progress=progress),
                                      length_rows(systems, "length_words")],
                                     ignore_index=True),
                           ["sweep", "value"], sep="=")
    scores["value"] = scores["value"].astype(float)
    return Experiment(
        ID, _sweep_table(scores, seed=seed), id_columns=["sweep", "value", "metric", "quantity"],
        interval="questions",
        signatures=metric_signatures(pd_models, judges, seed=seed, n=len(items)),
        parameters=dict(generator=gen_name, backbone=bb_name, judge=judge_name),
        notes=NOTES, frames={"scores": scores}, extra={"items": items, "scores": scores})
