"""dq_t03: DebateQA Table 3, D.A. against 0/1 labels, with intervals over questions.

The labels are the project's DebateQA-format sample (``data/debateqa_sample/``: four
labelled answers to each of 40 questions), not the paper's annotations (not public). Each
judge scores every labelled answer with the D.A. rows of
:data:`~nfeval_repro.debateqa.da_labels.DA_JUDGE_RUNS`; two rows no model decides
(``da_official``, ``acknowledge_rule``) stand beside them; the statistics and their
cluster-bootstrap intervals are :mod:`nfeval_repro.debateqa.da_labels`'.
"""

from __future__ import annotations

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

__all__ = ["run"]

ID = "dq_t03"
BY = ["judge", "method"]
NOTES = ("Labels: the project's sample (data/debateqa_sample/da_labels.csv), not the paper's "
         "human annotations; the paper's Table 3 has no numbers in the paper's text. Intervals: 95% "
         "percentile cluster bootstrap over questions (each with all its labelled answers, "
         f"{N_RESAMPLES:,} resamples, seeded); 'paired difference' rows: A minus B on the same resampled "
         "questions, on the answers both scored.")


def run(*, profile: str = "embedded", seed: int = 0, limit: int = 0, judges: str = "",
        generate_backend: str = "llama", max_tokens: int = 8, later_methods: str = "da_prob,da_zs_prob",
        progress: bool = True) -> Experiment:
    """Table 3 on the project's labelled sample (parameters: the notebook's).

    ``extra``: ``rows`` (the estimates), ``per_answer`` (every method's score of every
    labelled answer, also the companion frame), ``judges`` (the judges run, in order),
    ``timings`` (seconds and answers per judge and method).
    """
    prof = get_profile(profile)
    judge_names = list(model_list(judges, DA_VALIDITY_JUDGES if profile == "embedded"
                                  else prof.da_judges))
    gen_backend = generate_backend if profile == "embedded" else "hf"  # llama: embedded GGUF only
    sample = load_sample().limit(limit)
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
        runs = (DA_JUDGE_RUNS if name == judge_names[0] or not later_methods
                else {m: DA_JUDGE_RUNS[m] for m in later_methods.split(",")})
        for method, kw in runs.items():
            lm = models[gen_backend if kw["mode"] == "generate" else "hf"]
            t = time.time()
            res = da_scores(lm, questions, answers, max_tokens=max_tokens, progress=progress,
                            **kw)
            timings.append({"judge": name, "method": method, "backend": lm.info.backend,
                            "seconds": time.time() - t, "answers": len(res)})
            frames.append(da_frame(res, judge=name, method=method, backend=lm.info.backend))
            signatures.append(Signature(
                metric="dispute_awareness",
                variant=kw["mode"] + ("-zero-shot" if kw["zero_shot"] else ""),
                model=lm.info.as_dict(), prompt_sha256=sha256_text(template), seed=seed,
                n=len(res), extra={"backend": lm.info.backend,
                                   "max_tokens": max_tokens if kw["mode"] == "generate"
                                   else None}))
        del models, lm

    frames.append(da_frame(da_scores(None, questions, answers, mode="official", progress=False),
                           judge=MODEL_FREE, method="da_official", backend="none"))
    frames.append(da_frame([acknowledge_baseline(a, id=k) for k, a in answers.items()],
                           judge=MODEL_FREE, method="acknowledge_rule", backend="none"))
    signatures += [
        Signature(metric="dispute_awareness", variant="official",
                  prompt_sha256=sha256_text(template), seed=seed, n=len(answers),
                  extra={"decided_by": "the prompt's first 0/1 digit"}),
        Signature(metric="dispute_awareness", variant="acknowledge-rule", seed=seed,
                  n=len(answers),
                  prompt_sha256=sha256_text((PROMPTS / "da_acknowledge_phrases.txt").read_text()))]
    per_answer = labels[["qid", "key", "answer_set", "label"]].merge(
        pd.concat(frames, ignore_index=True), on="key")

    rows = da_rows(per_answer, by=BY, seed=seed).assign(kind="estimate")
    present = set(zip(per_answer["judge"], per_answer["method"]))
    pairs = [p for p in da_comparisons(judge_names) if p[0] in present and p[1] in present]
    diffs = da_paired_rows(per_answer, pairs, by=BY, seed=seed).assign(kind="paired difference")
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
