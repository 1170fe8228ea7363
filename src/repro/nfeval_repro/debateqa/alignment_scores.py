"""Metric scores of the graded answers of DebateQA Table 2 (Section 5, Appendix B.1.2):
P.D., the prompt-based baselines and the Acknowledge rule, one score per answer.

The questions and answers come from
:func:`nfeval_repro.debateqa.alignment.select_questions`; every
``score_*`` function returns rows ``dataset, qid, doc_id, grade, metric,
score`` that :func:`nfeval_repro.debateqa.alignment.alignment_rows`
correlates with the human ranking.

* **P.D.** (:func:`score_pd`, paper variant, Equation 1) with the question's
  top-grade answers as the partial answers; an answer is never among its own
  references (leave-one-out, :func:`leave_one_out_references`), and every
  answer of a question is scored against the same number ``k`` of references
  (:func:`reference_count`; Equation 1 sums perplexities, so unequal counts
  would favour the answers with fewer references): top-grade answers against
  ``k`` of the other top-grade answers, the rest against a seeded ``k`` of
  all of them.
* **Direct-Score, G-Eval and Num-of-POVs** (:func:`score_judge`) from the
  project's prompts ``prompts/dq_direct_score.txt``, ``dq_geval.txt``,
  ``dq_num_povs.txt`` (the paper's Table 12 text is not printed in the paper).
* **Acknowledge** (:func:`score_acknowledge`): the rule of
  :mod:`nfeval.debateqa.da` stands in for "DELPHI's metric".
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer
from nfeval_repro.debateqa.alignment import (SCORE_COLUMNS, AlignmentQuestion,
                                                   reference_pool)
from nfeval.hashing import sha256_text

__all__ = [
    "JUDGE_METRICS",
    "JUDGE_MODES",
    "JudgeMetric",
    "judge_prompt",
    "judge_variant",
    "label_distributions",
    "leave_one_out_references",
    "parse_count",
    "reduce_distribution",
    "reference_count",
    "score_acknowledge",
    "score_judge",
    "score_pd",
]


# --------------------------------------------------------------------------- P.D.

def reference_count(question: AlignmentQuestion, max_references: int) -> int:
    """k: the references every candidate of the question gets (same for all of them).

    The smallest leave-one-out pool among the candidates, capped at
    ``max_references`` (0: no cap).
    """
    if max_references < 0:
        raise NfevalError(f"max_references must be >= 0, got {max_references}.")
    k = min(len(reference_pool(question.top_answers, a)) for a in question.candidates)
    if k < 1:
        raise NfevalError(f"{question.dataset} question {question.qid}: a candidate has no "
                          "leave-one-out reference (select with need_references=True).")
    return min(k, max_references) if max_references else k


def leave_one_out_references(question: AlignmentQuestion, answer: GradedAnswer, k: int,
                             seed: int = 0) -> tuple[GradedAnswer, ...]:
    """``k`` of the question's top-grade answers, never ``answer`` itself (nor a copy of its text).

    Chosen by a generator seeded from (seed, dataset, qid, answer id) and kept
    in the pool's order; when ``k`` is the whole pool, no choice is made.
    """
    pool = reference_pool(question.top_answers, answer)
    if not 1 <= k <= len(pool):
        raise NfevalError(f"{question.dataset} question {question.qid}, answer {answer.doc_id}: "
                          f"cannot take {k} reference(s) from a pool of {len(pool)}.")
    if k == len(pool):
        return tuple(pool)
    rng = random.Random(f"{seed}/{question.dataset}/{question.qid}/{answer.doc_id}/references")
    return tuple(pool[i] for i in sorted(rng.sample(range(len(pool)), k)))


def _item_id(q: AlignmentQuestion, a: GradedAnswer) -> str:
    return f"{q.dataset}/{q.qid}/{a.doc_id}"


def score_pd(model, questions: Sequence[AlignmentQuestion], *, max_references: int = 3,
             seed: int = 0, variant: str = "paper", restate: str | None = None,
             use_cache: bool = True, progress: bool = True) -> pd.DataFrame:
    """P.D. of every candidate against its leave-one-out top-grade references.

    Columns: ``dataset, qid, doc_id, grade, metric ("pd"), score`` (lower is
    better), ``n_references``, ``references`` (their ids, ``;``-joined),
    ``scored_tokens``, ``context_truncated_tokens``. Each result is cached on
    disk (:class:`nfeval.runcache.RunCache`) under the model, variant and
    restate instruction, keyed by the answer and its references' texts.
    """
    from tqdm.auto import tqdm

    from nfeval.debateqa.pd import DEFAULT_RESTATE, pd_score
    from nfeval.runcache import RunCache

    restate = DEFAULT_RESTATE if restate is None else restate
    cache = RunCache("dq-align-pd", {"model": model.info.cache_fields(), "variant": variant,
                                     "restate": restate if variant == "paper" else None},
                     model=model) if use_cache else None
    rows = []
    total = sum(len(q.candidates) for q in questions)
    with tqdm(total=total, desc=f"P.D. ({variant})", unit="answer", disable=not progress) as bar:
        for q in questions:
            k = reference_count(q, max_references)
            for a in q.candidates:
                refs = leave_one_out_references(q, a, k, seed)
                key = "\x1e".join([a.text] + [f"{r.doc_id}\x1f{r.text}" for r in refs])
                hit = cache.get(_item_id(q, a), key) if cache is not None else None
                if hit is None:
                    r = pd_score(model, a.text, [x.text for x in refs], variant=variant,
                                 restate=restate, id=_item_id(q, a))
                    hit = {"score": r.score, "scored_tokens": r.scored_tokens,
                           "context_truncated_tokens": r.context_truncated_tokens,
                           "perplexities": [float(p) for p in r.perplexities]}
                    if cache is not None:
                        cache.put(_item_id(q, a), key, hit)
                rows.append({"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id,
                             "grade": a.grade, "metric": "pd", "score": float(hit["score"]),
                             "n_references": len(refs),
                             "references": ";".join(r.doc_id for r in refs),
                             "scored_tokens": hit["scored_tokens"],
                             "context_truncated_tokens": hit["context_truncated_tokens"]})
                bar.update()
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- LLM judges

@dataclass(frozen=True)
class JudgeMetric:
    """A prompt-based baseline of Table 2.

    ``prompt``: file under ``prompts/``. ``labels``: the integer labels read
    at the first position of the reply. ``reduce``: how ``prob`` mode turns
    the label distribution into a score: ``"argmax"`` (the single label the
    judge would most likely write: Direct-Score's one Likert number) or
    ``"expected"`` (probability-weighted mean: G-Eval's score, Num-of-POVs'
    expected count). ``prob_only``: scored from the distribution in every
    mode (G-Eval is defined by its probability weighting).
    """

    name: str
    prompt: str
    labels: tuple[str, ...]
    reduce: str
    prob_only: bool = False

    @property
    def low(self) -> int:
        return int(self.labels[0])

    @property
    def high(self) -> int:
        return int(self.labels[-1])


_LIKERT = tuple(str(i) for i in range(1, 6))
JUDGE_METRICS = {
    "direct_score": JudgeMetric("direct_score", "dq_direct_score", _LIKERT, "argmax"),
    "g_eval": JudgeMetric("g_eval", "dq_geval", _LIKERT, "expected", prob_only=True),
    "num_povs": JudgeMetric("num_povs", "dq_num_povs", tuple(str(i) for i in range(10)),
                            "expected"),
}
JUDGE_MODES = ("prob", "generate")


def judge_variant(metric: str | JudgeMetric, mode: str) -> str:
    """The variant a signature records: ``prob-argmax``, ``prob-expected`` or ``generate``."""
    m = _judge_metric(metric)
    return f"prob-{m.reduce}" if mode == "prob" or m.prob_only else "generate"


def _judge_metric(metric: str | JudgeMetric) -> JudgeMetric:
    if isinstance(metric, JudgeMetric):
        return metric
    try:
        return JUDGE_METRICS[metric]
    except KeyError:
        raise NfevalError(f"unknown judge metric {metric!r}; use one of "
                          f"{', '.join(JUDGE_METRICS)}.") from None


def judge_prompt(metric: str | JudgeMetric, question: str, answer: str,
                 template: str | None = None) -> str:
    """The metric's prompt with ``{question}`` and ``{answer}`` filled.

    Filled with ``str.replace``, the question first and the answer last, so
    braces or slot names inside an answer are kept literally.
    """
    from nfeval.prompts import prompt_text

    m = _judge_metric(metric)
    t = prompt_text(m.prompt) if template is None else template
    if "{question}" not in t or "{answer}" not in t:
        raise NfevalError(f"the {m.name} prompt must contain the {{question}} and "
                          "{answer} slots.")
    head, _, tail = t.partition("{answer}")
    return head.replace("{question}", question) + answer + tail.replace("{question}", question)


def reduce_distribution(dist: Mapping[str, float], how: str) -> float:
    """``"expected"``: sum of int(label) * p; ``"argmax"``: the most probable label
    (the lowest one on an exact tie)."""
    if not dist:
        return math.nan
    if how == "expected":
        return float(sum(int(lab) * p for lab, p in dist.items()))
    if how == "argmax":
        best = max(dist.values())
        return float(min(int(lab) for lab, p in dist.items() if p == best))
    raise NfevalError(f"unknown reduction {how!r}; use 'expected' or 'argmax'.")


_INT = re.compile(r"\d+")


def parse_count(text: str | None, low: int, high: int) -> float:
    """The first integer of ``text`` if it lies in ``low..high``, else NaN (unparsed)."""
    m = _INT.search(text or "")
    if not m:
        return math.nan
    v = int(m.group())
    return float(v) if low <= v <= high else math.nan


def label_distributions(judge, prompts: Sequence[str], labels: Sequence[str]
                        ) -> list[tuple[dict[str, float], float]]:
    """(distribution over ``labels``, raw label mass) after each full prompt, in order.

    The raw mass is the probability the judge gives to the labels at all
    (before renormalising): a low value says the judge does not answer with
    one. :meth:`~nfeval.models.base.LanguageModel.batch_label_logprobs`: on
    the transformers backend the token ids the prompts share run through the
    model once, which gives the per-prompt values exactly; other backends
    score each prompt on its own.
    """
    from nfeval.models.base import normalize

    logps = judge.batch_label_logprobs(list(prompts), list(labels))
    return [(normalize(lp), float(sum(math.exp(v) for v in lp.values()))) for lp in logps]


def score_judge(judge, questions: Sequence[AlignmentQuestion], metric: str | JudgeMetric, *,
                mode: str = "prob", max_tokens: int = 8, use_cache: bool = True,
                progress: bool = True) -> pd.DataFrame:
    """A prompt-based baseline's score for every candidate (higher is better).

    ``prob`` mode: the label distribution at the first position of the
    judge's reply (the prompt as the user turn of its chat template), reduced
    as the metric says (:class:`JudgeMetric`); the prompts of one question are
    scored together on their shared prefix. ``generate`` mode: greedy reply of
    up to ``max_tokens`` tokens, first integer in the label range
    (:func:`parse_count`), NaN when there is none; G-Eval stays ``prob``.
    Columns: ``dataset, qid, doc_id, grade, metric, score, label_mass, raw``
    (``label_mass``: prob mode's raw mass on the labels; ``raw``: the reply in
    generate mode, else the distribution as JSON). Cached on disk per judge,
    metric, mode and prompt text.
    """
    from tqdm.auto import tqdm

    from nfeval.prompts import prompt_text
    from nfeval.runcache import RunCache

    m = _judge_metric(metric)
    if mode not in JUDGE_MODES:
        raise NfevalError(f"unknown judge mode {mode!r}; use one of {', '.join(JUDGE_MODES)}.")
    mode = "prob" if m.prob_only else mode
    template = prompt_text(m.prompt)
    cache = RunCache("dq-align-judge", {"model": judge.info.cache_fields(), "metric": m.name,
                                        "labels": list(m.labels), "mode": mode,
                                        "max_tokens": max_tokens if mode == "generate" else None,
                                        "prompt": sha256_text(template)}, model=judge) if use_cache else None
    rows = []
    total = sum(len(q.candidates) for q in questions)
    with tqdm(total=total, desc=f"{m.name} ({mode})", unit="answer", disable=not progress) as bar:
        for q in questions:
            chats = {a.doc_id: judge.chat_prompt(judge_prompt(m, q.question, a.text, template))
                     for a in q.candidates}
            results = {}
            todo = []
            for a in q.candidates:
                hit = cache.get(_item_id(q, a), chats[a.doc_id]) if cache is not None else None
                if hit is not None:
                    results[a.doc_id] = hit
                    bar.update()
                else:
                    todo.append(a)
            if todo and mode == "prob":
                dists = label_distributions(judge, [chats[a.doc_id] for a in todo], m.labels)
                fresh = [{"dist": d, "label_mass": mass} for d, mass in dists]
            else:
                fresh = [{"raw": judge.generate(chats[a.doc_id], temperature=0.0,
                                                max_tokens=max_tokens).text} for a in todo]
            for a, res in zip(todo, fresh):
                if cache is not None:
                    cache.put(_item_id(q, a), chats[a.doc_id], res)
                results[a.doc_id] = res
                bar.update()
            for a in q.candidates:
                res = results[a.doc_id]
                if "dist" in res:
                    score = reduce_distribution(res["dist"], m.reduce)
                    raw, mass = json.dumps(res["dist"], sort_keys=True), res["label_mass"]
                else:
                    score, raw, mass = parse_count(res["raw"], m.low, m.high), res["raw"], math.nan
                rows.append({"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id,
                             "grade": a.grade, "metric": m.name, "score": score,
                             "label_mass": mass, "raw": raw})
    return pd.DataFrame(rows)


def score_acknowledge(questions: Sequence[AlignmentQuestion]) -> pd.DataFrame:
    """The Acknowledge phrase rule (:func:`nfeval.debateqa.da.acknowledge_baseline`), 1/0.

    The project's stand-in for "DELPHI's metric" of Table 2 (a phrase rule,
    not DELPHI's code); model-free.
    """
    from nfeval.debateqa.da import acknowledge_baseline

    rows = [{"dataset": q.dataset, "qid": q.qid, "doc_id": a.doc_id, "grade": a.grade,
             "metric": "acknowledge", "score": acknowledge_baseline(a.text).score}
            for q in questions for a in q.candidates]
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)
