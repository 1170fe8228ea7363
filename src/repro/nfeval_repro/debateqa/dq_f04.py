"""dq_f04: DebateQA Figure 4, is the P.D. ranking stable across restate prompts?

Equation 1 wraps the answer with the restate instruction
(:data:`nfeval.debateqa.pd.DEFAULT_RESTATE`); the paper replaces it with five prompts
(its Table 13, not printed in the paper's text). Here the project's five
(:func:`nfeval.prompts.restate_prompts`, labelled R1-R5; R1 is the default, so its
scores are dq_t04's) score the answering systems of dq_t04 with the profile's first P.D.
backbone; per pair of prompts, the agreement of their system rankings and of their
per-answer scores (:func:`nfeval_repro.debateqa.system_stats.stability_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.debateqa.agreement import answer_systems
from nfeval_repro.debateqa.system_stats import model_systems, stability_rows
from nfeval_repro.debateqa.systems import SystemsConfig, score_systems, system_means
from nfeval.debateqa.pd import DEFAULT_RESTATE
from nfeval.hashing import sha256_text
from nfeval_repro.profiles import get_profile, model_list
from nfeval.prompts import restate_prompts
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "dq_f04"
NOTES = ("Per pair of restate prompts (the project's five, "
         "prompts/pd_restate_prompts.txt): ranking_kendall = Kendall tau-b between "
         "the system rankings by mean P.D.; answer_spearman/answer_kendall = "
         "correlation of the two prompts' P.D. of the same answers, pooled; "
         "within_question_spearman = mean over questions of the Spearman among one "
         "question's answers. scope all = every system, models = the generated "
         "answers only. 95% intervals: cluster bootstrap over questions "
         "(within_question: bootstrap of the mean over questions). The paper's "
         "Figure 4 values and Table 13 prompts are not printed in the paper's text.")


def prompt_labels() -> dict[str, str]:
    """``{restate prompt: "R1"...}`` in the file's order; R1 must be Equation 1's default
    (:data:`~nfeval.debateqa.pd.DEFAULT_RESTATE`), the prompt every other P.D. score uses."""
    prompts = restate_prompts()
    if not prompts or prompts[0] != DEFAULT_RESTATE:
        raise NfevalError(f"the first restate prompt must be the default {DEFAULT_RESTATE!r}, "
                          f"got {prompts[:1]}: prompts/pd_restate_prompts.txt")
    return {p: f"R{i + 1}" for i, p in enumerate(prompts)}


@dataclass(frozen=True)
class Config(SystemsConfig):
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_f04_pd_restate_stability.ipynb`` is written from them."""

    #: comma-separated answering systems (a model, or model:t<temperature> for its sampled answers);
    #: empty: the profile's five stability systems
    generators: str = ""
    #: P.D. backbone; empty: the profile's first
    backbone: str = ""


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Figure 4 (parameters: the notebook's). Companion frame ``scores`` (every prompt's
    P.D. of every answer, ``evaluator`` = the prompt's label). ``extra``: ``labels``
    (prompt -> label), ``means`` (mean P.D. per system and prompt), ``backbone``,
    ``systems`` (system names).
    """
    prof = get_profile(config.profile)
    bb_name = model_list(config.backbone, prof.pd_backbones)[0]
    gen_names, items, systems = answer_systems(prof, split=config.split, limit=config.limit,
                                               seed=config.seed, generators=config.generators,
                                               max_tokens=config.max_tokens, stability=True,
                                               progress=progress)
    labels = prompt_labels()
    if progress:
        print(f"{len(items)} questions, {len(systems)} systems "
              f"({len(model_systems(systems))} models)")
    lm = prof.load(bb_name)
    frames = []
    for p, label in labels.items():
        t = time.time()
        frames.append(score_systems(systems, items, config.split, pd_models={label: lm}, restate=p,
                                    progress=progress))
        if progress:
            print(f"{label} ({p!r}): {time.time() - t:.0f} s")
    scores = pd.concat(frames, ignore_index=True)
    t = time.time()
    table = stability_rows(scores, "pd", list(labels.values()), seed=config.seed).rename(
        columns={"a": "prompt_a", "b": "prompt_b"})
    if progress:
        print(f"intervals in {time.time() - t:.0f} s")
    return Experiment(
        id=ID, table=table, id_columns=["prompt_a", "prompt_b", "scope", "quantity"],
        interval="questions",
        signatures=[Signature(metric="perspective_diversity", variant="paper",
                              model=lm.info.as_dict(), prompt_sha256=sha256_text(p),
                              seed=config.seed, n=len(items)) for p in labels],
        parameters=dict(generators=list(gen_names), backbone=bb_name, prompts=labels),
        notes=NOTES, frames={"scores": scores},
        extra={"labels": labels, "means": system_means(scores), "backbone": bb_name,
               "systems": list(systems)})
