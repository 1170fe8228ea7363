"""dq_f10 -- DebateQA Figure 10: metrics against the actual answer length.

Every generator is asked to "answer in about N tokens" (the project's
instruction, ``prompts/answer_length_instruction.txt``, after the question;
p_basic; a budget of 2N tokens) for each target N; the answers are scored
with P.D. and D.A., and their actual length is the number of tokens the
answering model generated. The table holds the mean of each per generator and
target (bootstrap over questions) and, for the paper's "longer scores better",
each target minus the shortest on the same questions (paired bootstrap). The
paper's values are not printed in the paper's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.system_stats import mean_and_difference_rows
from nfeval_repro.debateqa.systems import (load_questions, metric_signatures,
                                                 score_systems, split_systems)
from nfeval_repro.debateqa.generation import Decoding, generate_answers
from nfeval_repro.profiles import get_profile, model_list
from nfeval.prompts import length_instruction
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_f10"
NOTES = ("metric actual_tokens = tokens generated (answering model's tokenizer). "
         "quantity mean: mean over questions with a 95% bootstrap interval over "
         "questions; quantity difference: target_tokens 'N - S', the target N minus "
         "the shortest target S for the same generator and metric, paired bootstrap "
         "over questions. Length prompt is the project's; paper values not printed in the paper's text.")


def _length_table(scores: pd.DataFrame, *, seed: int) -> pd.DataFrame:
    """Means per generator, target and metric, then each target minus the shortest."""
    by = ["generator", "target_tokens", "metric"]
    targets = sorted(scores["target_tokens"].unique())
    return mean_and_difference_rows(scores, by, column="target_tokens", seed=seed,
                                    pairs=[(n, targets[0]) for n in targets[1:]])


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f10_answer_length.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed: the question draw and the bootstrap (decoding is greedy)
    seed: int = 0
    #: questions, drawn uniformly at random with seed (a smaller limit takes a subset), 0 for all
    #: (40: every question of the sample, the committed table)
    limit: int = 40
    #: question set: sample, test, dev or a path to a split file
    split: str = "sample"
    #: comma-separated answering models; empty: the profile's chat models
    generators: str = ""
    #: P.D. backbone; empty: the profile's first
    backbone: str = ""
    #: D.A. judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, the stronger of the dq_t03
    #: pilot, AUROC 0.865 vs 0.23)
    judge: str = ""
    #: comma-separated target lengths in tokens
    lengths: str = "50,100,200,400"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) with every generator at every
    target length (``lengths``, comma-separated tokens), score the answers and assemble
    Figure 10's table (``generators`` empty: the profile's first two).

    Frame ``scores``: every answer's P.D., D.A. and ``actual_tokens`` with its
    ``generator`` and ``target_tokens``. ``extra``: ``items`` and ``scores``.
    """
    prof = get_profile(config.profile)
    gen_names = model_list(config.generators, prof.generators[:2])
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    judge_name = model_list(config.judge, (prof.da_judge,))[0]
    targets = [int(n) for n in config.lengths.split(",") if n.strip()]
    items = load_questions(config.split, config.limit, seed=config.seed)
    systems, tokens = {}, []
    for g in gen_names:
        lm = prof.load(g, backend=prof.generator_backend)
        for n in targets:
            df = generate_answers(lm, items, suffix=length_instruction(n),
                                  decoding=Decoding(max_tokens=2 * n, seed=config.seed),
                                  progress=progress)
            systems[f"{g}|{n}"] = dict(zip(df["id"].astype(int), df["answer"]))
            tokens.append(df.assign(system=f"{g}|{n}", metric="actual_tokens", evaluator="-")
                          .rename(columns={"n_tokens": "score"})[
                              ["system", "id", "metric", "evaluator", "score"]])
        del lm
    pd_models, judges = {bb_name: prof.load(bb_name)}, {judge_name: prof.load(judge_name)}
    scores = score_systems(systems, items, config.split, pd_models=pd_models, judges=judges,
                           progress=progress)
    long = split_systems(pd.concat([scores, *tokens], ignore_index=True),
                         ["generator", "target_tokens"])
    long["target_tokens"] = long["target_tokens"].astype(int)
    return Experiment(
        ID, _length_table(long, seed=config.seed),
        id_columns=["generator", "target_tokens", "metric", "quantity"], interval="questions",
        signatures=metric_signatures(pd_models, judges, seed=config.seed, n=len(items)),
        parameters=dict(generators=list(gen_names), backbone=bb_name, judge=judge_name,
                        lengths=targets),
        notes=NOTES, frames={"scores": long}, extra={"items": items, "scores": long})
