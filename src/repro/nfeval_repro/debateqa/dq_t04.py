"""dq_t04 -- DebateQA Table 4: P.D. and D.A. of answering models.

The systems are the profile's generators (greedy, the project's ``p_basic``
system prompt) and, on the project's sample, its four written answer sets;
every answer is scored with P.D. (paper variant) per backbone and D.A.
(``prob`` mode) per judge (:mod:`nfeval_repro.debateqa.systems`). The
table holds, per system, metric and evaluator: the mean over questions
(bootstrap over questions), the average length in words, the normalized rank
(exact, no interval), paired differences between systems on the same
questions (the written sets in their known order, every pair of models), and
on the written sets the shares of questions where P.D. orders them as it
should (Wilson intervals). Table 4's numbers are not printed in the paper's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import pandas as pd

from nfeval.data import load_prompt
from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.system_stats import difference_rows, mean_rows, model_systems
from nfeval_repro.debateqa.systems import (VALIDITY_ORDER, SystemsConfig, collect_systems,
                                           length_rows, load_questions, metric_signatures,
                                           normalized_rank, pd_validity_rows, score_systems,
                                           system_means)
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_t04"
ID_COLUMNS = ["system", "metric", "evaluator", "quantity"]
NOTES = ("Table 4 has no numbers in the paper's text. Systems: the generators' "
         "greedy answers with the project's p_basic prompt, and on the sample its "
         "written answer sets. quantity=mean and avg_words (length in words): mean "
         "over the questions with a 95% percentile bootstrap interval over questions. "
         "quantity=share ... (rows __validity__): Wilson interval over questions. "
         "quantity=norm_rank: the normalized rank, an exact function of the means, "
         "has no interval (NaN bounds); dq_f03/dq_f04 measure ranking stability. "
         "quantity=paired_difference (system 'a - b'): mean over the questions both "
         "systems answered of a's score minus b's, paired bootstrap over questions.")


def _system_pairs(systems) -> list[tuple[str, str]]:
    """The pairs compared on the same questions: the written sets in their known order
    (balanced - one-sided, one-sided - off-topic), then every pair of model systems."""
    models = model_systems(systems)
    return list(zip(VALIDITY_ORDER, VALIDITY_ORDER[1:])) + [
        (a, b) for i, a in enumerate(models) for b in models[i + 1:]]


def _assemble(scores: pd.DataFrame, systems, norm: pd.DataFrame, n_questions: int, *,
             seed: int) -> pd.DataFrame:
    """Table 4 in long form from the per-answer scores, the answers (for their lengths)
    and the normalized ranks."""
    mean_table = mean_rows(scores, ["system", "metric", "evaluator"],
                           seed=seed).assign(quantity="mean")
    validity = pd_validity_rows(scores)
    lengths = mean_rows(length_rows(systems, "length"), ["system", "metric", "evaluator"],
                        seed=seed).assign(quantity="avg_words")
    diffs = difference_rows(scores, ["metric", "evaluator"], column="system",
                            pairs=_system_pairs(systems),
                            seed=seed).assign(quantity="paired_difference")
    ranks = norm.rename(columns={"norm_rank": "ours"}).assign(
        evaluator="all", quantity="norm_rank", ci_low=math.nan, ci_high=math.nan,
        n_questions=n_questions)
    return pd.concat([mean_table, diffs, ranks, lengths, validity], ignore_index=True)[
        ["system", "metric", "evaluator", "quantity", "ours", "ci_low", "ci_high",
         "n_questions"]]


@dataclass(frozen=True)
class Config(SystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t04_main_results.ipynb`` is written from them."""

    #: comma-separated P.D. backbones; empty: the profile's two
    backbones: str = ""
    #: comma-separated D.A. judges; empty: the profile's
    judges: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) with every generator, score every
    system with every backbone and judge, and assemble Table 4.

    Frames: ``answers`` (``system, id, generation``) and ``scores`` (per answer and
    evaluator). ``extra``: ``items``, ``systems`` ({system: {id: answer}}), ``scores``
    and ``norm_rank`` (per system and metric).
    """
    prof = get_profile(config.profile)
    gen_names = model_list(config.generators, prof.generators)
    pd_names = model_list(config.backbones, prof.pd_backbones)
    da_names = model_list(config.judges, prof.da_judges)
    items = load_questions(config.split, config.limit, seed=config.seed)
    systems = collect_systems(items, gen_names, backend=prof.generator_backend,
                              split=config.split, progress=progress, load=prof.load,
                              decoding=Decoding(max_tokens=config.max_tokens, seed=config.seed))
    pd_models = {n: prof.load(n) for n in pd_names}
    da_models = {n: prof.load(n) for n in da_names}
    scores = score_systems(systems, items, config.split, pd_models=pd_models, judges=da_models,
                           progress=progress)
    norm = normalized_rank(system_means(scores))
    table = _assemble(scores, systems, norm, len(items), seed=config.seed)
    return Experiment(
        ID, table, id_columns=ID_COLUMNS, interval="questions",
        signatures=metric_signatures(
            pd_models, da_models, seed=config.seed, n=len(items), pd_prompt="Please restate.",
            da_prompt=load_prompt("debateqa/dispute_awareness_fewshot")),
        parameters=dict(generators=list(gen_names), backbones=list(pd_names),
                        judges=list(da_names)),
        notes=NOTES,
        frames={"answers": pd.DataFrame([{"system": s, "id": q, "generation": a}
                                         for s, ans in systems.items()
                                         for q, a in ans.items()]),
                "scores": scores},
        extra={"items": items, "systems": systems, "scores": scores,
               "norm_rank": norm})
