"""dq_t05 -- DebateQA Table 5: do richer system prompts give better answers?

Every generator answers under each of the project's three system prompts
(p_basic, p_comprehensive, p_detailed: ``prompts/answer_system_prompts.txt``;
the paper's Table 17 is not printed in the paper's text); the answers are scored with P.D.
(one backbone) and D.A. (one judge), and their length counted in words. The
table holds the mean per generator, prompt and metric (bootstrap over
questions) and each richer prompt minus p_basic for the same generator
(paired bootstrap over questions). Table 5's numbers are not printed in the paper's text.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nfeval_repro.debateqa.generation import Decoding
from nfeval_repro.debateqa.system_stats import mean_and_difference_rows
from nfeval_repro.debateqa.systems import (ScoredSystemsConfig, collect_systems, length_rows,
                                           load_questions, metric_signatures, score_systems,
                                           split_systems)
from nfeval.hashing import sha256_text
from nfeval_repro.profiles import get_profile, model_list
from nfeval.prompts import system_prompts
from nfeval_repro.tables import Experiment

__all__ = ["Config", "run"]

ID = "dq_t05"
NOTES = ("quantity mean: mean over questions with a 95% bootstrap interval over "
         "questions; quantity difference: prompt minus basic for the same generator, "
         "paired bootstrap over questions. System prompts are the project's "
         "(prompts/answer_system_prompts.txt); Table 5's numbers are not printed in the paper's text.")


@dataclass(frozen=True)
class Config(ScoredSystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t05_system_prompts.ipynb`` is written from them."""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Answer ``limit`` questions (drawn with ``seed``) with every generator under every
    system prompt, score them and assemble Table 5.

    Frame ``scores``: every answer's P.D., D.A. and length with its ``generator`` and
    ``prompt``. ``extra``: ``items``, ``prompts`` ({name: text}) and ``scores``.
    """
    prof = get_profile(config.profile)
    gen_names = model_list(config.generators, prof.generators)
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    judge_name = model_list(config.judge, (prof.da_judge,))[0]
    items = load_questions(config.split, config.limit, seed=config.seed)
    prompts = system_prompts()
    systems = {}
    for pname, text in prompts.items():
        got = collect_systems(items, gen_names, backend=prof.generator_backend,
                              split=config.split, written=False, system=text,
                              decoding=Decoding(max_tokens=config.max_tokens, seed=config.seed),
                              progress=progress, load=prof.load)
        systems.update({f"{g}|{pname}": a for g, a in got.items()})
    pd_models, judges = {bb_name: prof.load(bb_name)}, {judge_name: prof.load(judge_name)}
    scores = score_systems(systems, items, config.split, pd_models=pd_models, judges=judges,
                           progress=progress)
    long = split_systems(pd.concat([scores, length_rows(systems, "length_words")],
                                   ignore_index=True), ["generator", "prompt"])
    by = ["generator", "prompt", "metric"]
    table = mean_and_difference_rows(long, by, column="prompt", seed=config.seed,
                                     pairs=[(p, "basic") for p in prompts if p != "basic"])
    return Experiment(
        ID, table, id_columns=["generator", "prompt", "metric", "quantity"],
        interval="questions",
        signatures=metric_signatures(pd_models, judges, seed=config.seed, n=len(items)),
        parameters=dict(generators=list(gen_names), backbone=bb_name, judge=judge_name,
                        prompt_sha256={k: sha256_text(v) for k, v in prompts.items()}),
        notes=NOTES, frames={"scores": long},
        extra={"items": items, "prompts": prompts, "scores": long})
