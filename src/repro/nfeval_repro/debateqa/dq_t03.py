"""dq_t03: DebateQA Table 3, D.A. against 0/1 labels, with intervals over questions.

The labels are the project's DebateQA-format sample (``data/debateqa_sample/``: four
labelled answers to each of 40 questions), not the paper's annotations (not public). Each
judge scores every labelled answer with the D.A. rows of
:data:`~nfeval_repro.debateqa.da_labels.DA_JUDGE_RUNS`; two rows no model decides
(``da_official``, ``acknowledge_rule``) stand beside them; the statistics and their
cluster-bootstrap intervals are :mod:`nfeval_repro.debateqa.da_labels`'.
"""

from __future__ import annotations

from dataclasses import dataclass

import time

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.data import load_prompt
from nfeval.data.sample import load_sample
from nfeval.debateqa.da import DA_PROMPT, acknowledge_baseline, da_scores
from nfeval_repro.debateqa.da_labels import (DA_JUDGE_RUNS, DA_VALIDITY_JUDGES, MODEL_FREE,
                                                da_comparisons, da_frame, da_paired_rows,
                                                da_rows)
from nfeval.hashing import sha256_text
from nfeval.paths import PROMPTS
from nfeval_repro.profiles import get_profile, model_list
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "dq_t03"
BY = ["judge", "method"]
NOTES = ("Labels: the project's sample (data/debateqa_sample/da_labels.csv), not the paper's "
         "human annotations; the paper's Table 3 has no numbers in the paper's text. Intervals: 95% "
         "percentile cluster bootstrap over questions (each with all its labelled answers, "
         f"{N_RESAMPLES:,} resamples, seeded); 'paired difference' rows: A minus B on the same resampled "
         "questions, on the answers both scored.")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t03_da_validity.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judges) or paper
    profile: str = "embedded"
    #: seed of the bootstrap intervals (every D.A. method here is deterministic)
    seed: int = 0
    #: questions of the sample to use (4 labelled answers each), 0 for all 40
    limit: int = 0
    #: comma-separated judge models; empty: both embedded Qwen2.5-Coder judges (paper profile: its
    #: D.A. judges)
    judges: str = ""
    #: backend of da_generate: llama (llama.cpp on the same GGUF file; embedded models) or hf
    generate_backend: str = "llama"
    #: greedy generation budget of da_generate (its first 0/1 digit decides)
    max_tokens: int = 8
    #: D.A. methods of the judges after the first (comma-separated; empty: all three): D.A. and
    #: D.A.-ZS (the paper's two Table 3 claims); the 1.5B judge costs 3x
    later_methods: str = "da_prob,da_zs_prob"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 3 on the project's labelled sample (parameters: the notebook's).

    ``extra``: ``rows`` (the estimates), ``per_answer`` (every method's score of every
    labelled answer, also the companion frame), ``judges`` (the judges run, in order),
    ``timings`` (seconds and answers per judge and method).
    """
    prof = get_profile(config.profile)
    judge_names = list(model_list(config.judges, DA_VALIDITY_JUDGES if config.profile == "embedded"
                                  else prof.da_judges))
    # llama: the embedded GGUF only
    gen_backend = config.generate_backend if config.profile == "embedded" else "hf"
    sample = load_sample().limit(config.limit)
    labels = sample.labels.rename(columns={"id": "qid"})
    labels["key"] = labels["answer_set"] + ":" + labels["qid"].astype(str)
    questions = {k: sample.items[q].question for k, q in zip(labels["key"], labels["qid"])}
    answers = {k: sample.answers[s][q]
               for k, s, q in zip(labels["key"], labels["answer_set"], labels["qid"])}
    if progress:
        print(f"{len(answers)} labelled answers from {len(sample.items)} questions "
              f"({int(labels['label'].sum())} labelled 1); judges {judge_names}; "
              f"generation on {gen_backend}")

    frames, signatures, timings = [], [], []
    template = load_prompt(DA_PROMPT)
    for name in judge_names:
        models = {"hf": prof.load(name)}  # weights load lazily, only for items the store lacks
        models[gen_backend] = models.get(gen_backend) or prof.load(name, backend=gen_backend)
        runs = (DA_JUDGE_RUNS if name == judge_names[0] or not config.later_methods
                else {m: DA_JUDGE_RUNS[m] for m in config.later_methods.split(",")})
        for method, kw in runs.items():
            lm = models[gen_backend if kw["mode"] == "generate" else "hf"]
            t = time.time()
            res = da_scores(lm, questions, answers, max_tokens=config.max_tokens, progress=progress,
                            **kw)
            timings.append({"judge": name, "method": method, "backend": lm.info.backend,
                            "seconds": time.time() - t, "answers": len(res)})
            frames.append(da_frame(res, judge=name, method=method, backend=lm.info.backend))
            signatures.append(Signature(
                metric="dispute_awareness",
                variant=kw["mode"] + ("-zero-shot" if kw["zero_shot"] else ""),
                model=lm.info.as_dict(), prompt_sha256=sha256_text(template), seed=config.seed,
                n=len(res), extra={"backend": lm.info.backend,
                                   "max_tokens": config.max_tokens if kw["mode"] == "generate"
                                   else None}))
        del models, lm

    frames.append(da_frame(da_scores(None, questions, answers, mode="official", progress=False),
                           judge=MODEL_FREE, method="da_official", backend="none"))
    frames.append(da_frame([acknowledge_baseline(a, id=k) for k, a in answers.items()],
                           judge=MODEL_FREE, method="acknowledge_rule", backend="none"))
    signatures += [
        Signature(metric="dispute_awareness", variant="official",
                  prompt_sha256=sha256_text(template), seed=config.seed, n=len(answers),
                  extra={"decided_by": "the prompt's first 0/1 digit"}),
        Signature(metric="dispute_awareness", variant="acknowledge-rule", seed=config.seed,
                  n=len(answers),
                  prompt_sha256=sha256_text((PROMPTS / "da_acknowledge_phrases.txt").read_text()))]
    per_answer = labels[["qid", "key", "answer_set", "label"]].merge(
        pd.concat(frames, ignore_index=True), on="key")

    rows = da_rows(per_answer, by=BY, seed=config.seed).assign(kind="estimate")
    present = set(zip(per_answer["judge"], per_answer["method"]))
    pairs = [p for p in da_comparisons(judge_names) if p[0] in present and p[1] in present]
    diffs = da_paired_rows(per_answer, pairs, by=BY,
                           seed=config.seed).assign(kind="paired difference")
    table = pd.concat([rows, diffs], ignore_index=True)
    table = table[["kind", *BY, "statistic", "ours", "ci_low", "ci_high", "n_questions",
                   "n_answers", "n_unparsed", "a_value", "b_value", "n_undefined"]]
    timings = pd.DataFrame(timings).assign(per_answer=lambda d: d["seconds"] / d["answers"])
    return Experiment(
        id=ID, table=table, id_columns=["kind", *BY, "statistic"], interval="questions",
        signatures=signatures,
        parameters=dict(judges=judge_names, generate_backend=gen_backend),
        notes=NOTES, frames={"per_answer": per_answer},
        extra={"rows": rows, "per_answer": per_answer, "judges": judge_names,
               "timings": timings})
