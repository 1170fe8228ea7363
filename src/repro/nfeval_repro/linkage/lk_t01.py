"""lk_t01, LINKAGE Table 1: questions and mean answers per human grade of ANTIQUE and TREC-DL-NF.

The notebook ``lk_t01_dataset_stats.ipynb`` calls :func:`run`. The counts
come from :func:`nfeval_repro.linkage.grade_stats.grade_statistics` on every question of the
two releases (the loader maps ANTIQUE's labels 1..4 to the paper's 0..3);
``match`` compares our value rounded half-up to one decimal, as the paper
prints it (6.45 -> 6.5), with the paper's figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval.data import load_linkage, resolve, sha256_file
from nfeval_repro.linkage.grade_stats import grade_statistics
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, Signature, join_paper, paper_values, round_half_up

__all__ = ["Config", "run"]

ID = "lk_t01"
DATASETS = ("antique", "trec-dl-nf")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t01_dataset_stats.ipynb`` is written from them."""

    #: run profile: "embedded" (CPU) or "paper"; this table uses no model
    profile: str = "embedded"
    #: random seed (unused: the table is a pure count)
    seed: int = 0
    #: questions per dataset, 0 for all (tests use a few; the paper comparison needs all)
    limit: int = 0


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 1 on the first ``limit`` questions of each dataset (0: all; the paper's needs all).

    The table uses no model: ``profile`` is only checked, ``seed`` only recorded.
    """
    get_profile(config.profile)
    questions = {name: load_linkage(name) for name in DATASETS}
    if config.limit:
        questions = {name: qs[:config.limit] for name, qs in questions.items()}
    if progress:
        for name, qs in questions.items():
            print(f"{name}: {len(qs)} questions from {resolve(name)}")
    ours = pd.concat([grade_statistics(name, qs) for name, qs in questions.items()],
                     ignore_index=True)
    table = join_paper(ours, paper_values(ID), on=["dataset", "statistic"])
    table["match"] = table["ours"].map(lambda v: round_half_up(v, 1)) == table["paper"]
    table["ours"] = table["ours"].round(4)
    table["n_questions"] = table["dataset"].map({k: len(v) for k, v in questions.items()})
    signatures = [Signature(metric="grade_counts", variant="release-labels-to-0..3", n=len(qs),
                            seed=config.seed, extra={"dataset": name,
                                                     "data_sha256": sha256_file(resolve(name))})
                  for name, qs in questions.items()]
    return Experiment(ID, table, id_columns=["dataset", "statistic"], signatures=signatures,
                      interval="none: dataset statistics counted over every question of the "
                               "release (not a sample)")
