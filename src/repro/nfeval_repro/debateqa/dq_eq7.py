"""dq_eq7 -- DebateQA Equation 7: the per-token probability ratio a change of P.D. implies.

Over a grid of ``n`` partial answers and P.D. changes ``delta``, the table holds
the closed form ``exp(-delta / n)`` (:func:`nfeval_repro.debateqa.eq7.probability_ratio`;
the paper's example n = 3, delta = -2 gives 1.95x, joined as ``paper``), the same
ratio recomputed from simulated token log-probabilities (integer ``n`` only), and
the ratio one gets instead when P.D. sums true perplexities starting at 5 or 20.
No model, no questions: exact figures, no interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import pandas as pd

from nfeval_repro.debateqa.eq7 import (exact_perplexity_ratio, probability_ratio,
                                             simulated_probability_ratio)
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, Signature, join_paper, paper_values

__all__ = ["Config", "run"]

ID = "dq_eq7"
N_VALUES = [1, 2, 3, 3.7, 4, 5]  # 3.7 = mean partial answers per DebateQA question (paper text)
DELTAS = [-0.5, -1.0, -2.0, -3.0]
START_PERPLEXITIES = [5.0, 20.0]
NOTES = ("ours = exp(-delta/n); simulated = same ratio from simulated token log-probs; "
         "exact_if_perplexity_P = ratio if P.D. sums true perplexities starting at P each")


def _ratio_rows(seed: int = 0) -> pd.DataFrame:
    """One row per ``n`` and ``delta_pd``: ``ours`` (the closed form), ``simulated``
    (NaN for a fractional ``n``) and ``exact_if_perplexity_<P>`` per starting perplexity."""
    rows = []
    for n in N_VALUES:
        for delta in DELTAS:
            row = {"n": n, "delta_pd": delta, "ours": probability_ratio(n, delta)}
            row["simulated"] = (simulated_probability_ratio(int(n), delta, seed=seed)
                                if float(n).is_integer() else math.nan)
            for ppl in START_PERPLEXITIES:
                row[f"exact_if_perplexity_{ppl:g}"] = exact_perplexity_ratio(n, delta, ppl)
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_eq7_pd_probability_ratio.ipynb`` is written from them."""

    #: run profile: "embedded" or "paper"; this artefact uses no model
    profile: str = "embedded"
    #: seed of the simulated token log-probabilities
    seed: int = 0
    #: unused here (no questions); kept for the shared notebook interface
    limit: int = 0


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Equation 7's table (``seed``: the simulated log-probabilities). ``profile`` is
    checked but no model runs; ``limit`` and ``progress`` are unused (no questions)."""
    get_profile(config.profile)
    table = join_paper(_ratio_rows(config.seed), paper_values(ID), on=["n", "delta_pd"])
    table["abs_diff_simulated"] = (table["ours"] - table["simulated"]).abs()
    return Experiment(
        ID, table, id_columns=["n", "delta_pd"],
        interval="none: a closed form, exp(-delta/n), checked on simulated log-probabilities",
        signatures=[Signature(metric="pd_probability_ratio", variant="eq7-closed-form",
                              seed=config.seed, n=len(table))],
        notes=NOTES)
