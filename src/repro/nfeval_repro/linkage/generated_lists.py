"""LINKAGE Tables 3 and 4: reference lists written by an LLM (1GT, 0GT), on Table 2's items.

The experiment :mod:`nfeval_repro.linkage.lk_t03_t04` (LINKAGE-1GT,
Table 3, and LINKAGE-0GT, Table 4) judges a prefix
of lk_t02's judged questions with lk_t02's candidates
(:func:`nfeval_repro.linkage.same_items.judged_items`), so that every
row differs from Table 2's on the same items only by the references:

* ``generated`` rows -- the method judged against the LLM-written list
  (:mod:`nfeval.linkage.generated`): golden answer (grade 3) from the one
  ground truth (1GT, :func:`nfeval_repro.linkage.follow_up.single_ground_truth`,
  a highest-grade answer that is not a candidate) or from the question
  alone (0GT), then three degraded answers (grades 2, 1, 0);
* ``none`` -- Pointwise without references, lk_t02's own judgments (the
  paper's Tables 3 and 4 repeat Table 2's row, which only the same
  candidates allow);
* ``human (lk_t02)`` -- LINKAGE 0-shot and few-shot with lk_t02's human
  reference list (read from lk_t02's item store): what the generated list
  costs against a human one, on the same questions (beyond the paper's
  tables, which it sets side by side with Table 2).

Every row is a per-question correlation averaged over questions, with its
95% interval (:func:`nfeval.metrics.correlation.correlation_rows`); the
comparisons (:func:`comparisons`) are paired differences on the same questions.
:func:`generated_references_table` runs a whole table; the experiment
loads the models, calls it and returns the result.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import load_prompt
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.follow_up import judge_setting, single_ground_truth, with_paper
from nfeval_repro.linkage.same_items import (JUDGE_ROWS, ROW_POSITIONS, JudgeCall, JudgeSample,
                                             judge_frame, paper_rows)
from nfeval.linkage.generated import (DEGRADE_PROMPT, GOLDEN_PROMPTS, GeneratedReferences,
                                      generate_reference_lists, generated_split)
from nfeval.linkage.references import ReferenceSplit, sample_all
from nfeval.linkage.settings import GenerationSettings
from nfeval.metrics.correlation import correlation_rows, paired_rows
from nfeval.prompts import prompt_text
from nfeval_repro.tables import Signature

__all__ = [
    "EXTRA_ROWS",
    "GENERATED_ROWS",
    "GENERATION",
    "HUMAN_ROWS",
    "GeneratedTable",
    "comparisons",
    "generated_references_table",
    "generated_splits",
    "ground_truths",
    "known_rows",
    "references_frame",
    "setting_rows",
    "tick_label",
]

#: Rows judged with the generated list, per setting: row -> (judge method, shots; None = the
#: run's ``shots``). Pointwise with references is the release's graded variant (each
#: reference with its score), as its 1GT/0GT script.
GENERATED_ROWS: dict[str, dict[str, tuple[str, int | None]]] = {
    "1gt": {"pointwise-ref": ("pointwise-ref-graded", 0), "pairwise": ("pairwise", 0),
            "linkage-0shot": ("linkage", 0), "linkage-fewshot": ("linkage", None)},
    "0gt": {"linkage-0shot": ("linkage", 0), "linkage-fewshot": ("linkage", None)},
}
#: Rows a run may add to a setting's (``rows``): pairwise with the candidate always first,
#: the release's protocol (1GT's pairwise baseline as the paper ran it; the every-candidate
#: stages), beside the seeded coin of positions of ``pairwise``.
#: Its positions are Table 2's (:data:`~nfeval_repro.linkage.same_items.ROW_POSITIONS`).
EXTRA_ROWS: dict[str, dict[str, tuple[str, int | None]]] = {
    "1gt": {"pairwise-release": JUDGE_ROWS["pairwise-release"]},
    "0gt": {},
}
#: What the references of a setting are called in the table's ``references`` column.
LABELS: dict[str, str] = {"1gt": "generated (1GT)", "0gt": "generated (0GT)"}
#: The table's columns, in order.
COLUMNS = ["dataset", "references", "method", "judge", "coefficient", "ours", "ci_low", "ci_high",
           "n_questions", "paper", "gap", "paper_in_ci", "our_judge", "n_skipped_undefined",
           "n_candidates", "n_unparsed", "sd", "a_mean", "b_mean"]
#: lk_t02's rows read beside them (Table 2's row names), and their names here.
HUMAN_ROWS: dict[str, str] = {"pointwise-noref": "pointwise-noref",
                              "linkage-0shot": "linkage-0shot-human",
                              "linkage-fewshot": "linkage-fewshot-human"}


def ground_truths(questions: Sequence[GradedQuestion], splits: Sequence[ReferenceSplit],
                  seed: int) -> dict[str, GradedAnswer]:
    """LINKAGE-1GT's one ground truth of every judged question (qid -> answer)."""
    by_qid = {q.qid: q for q in questions}
    return {s.qid: single_ground_truth(by_qid[s.qid], s.candidates, seed) for s in splits}


def generated_splits(questions: Sequence[GradedQuestion], splits: Sequence[ReferenceSplit],
                     lists: Sequence[GeneratedReferences], seed: int) -> list[ReferenceSplit]:
    """The judged splits with their generated list as references (same candidates).

    Questions whose generation gave no golden answer are left out (counted by
    the caller as ``not ok``); short lists are kept, with ``missing`` set.
    """
    by_qid = {q.qid: q for q in questions}
    made = {r.qid: r for r in lists}
    return [generated_split(by_qid[s.qid], made[s.qid], s.candidates, seed)
            for s in splits if s.qid in made and made[s.qid].ok]


def known_rows(setting: str) -> dict[str, tuple[str, int | None]]:
    """Every generated-list row a run of ``setting`` may judge: its :data:`GENERATED_ROWS`,
    then its :data:`EXTRA_ROWS`."""
    return {**GENERATED_ROWS[setting], **EXTRA_ROWS[setting]}


def setting_rows(setting: str, rows: Sequence[str] | str | None = None
                 ) -> dict[str, tuple[str, int | None]]:
    """The generated-list rows a run judges: the setting's :data:`GENERATED_ROWS` (``rows``
    empty), or those named (comma-separated or a list) among them and :data:`EXTRA_ROWS`; an
    unknown name is an error that lists the known ones."""
    known = known_rows(setting)
    if isinstance(rows, str):
        rows = [r.strip() for r in rows.split(",") if r.strip()]
    if not rows:
        return dict(GENERATED_ROWS[setting])
    unknown = [r for r in rows if r not in known]
    if unknown:
        raise NfevalError(f"unknown {setting.upper()} judge row {', '.join(unknown)}; "
                          f"known: {', '.join(known)}")
    return {r: known[r] for r in rows}


def comparisons(setting: str, rows: Sequence[str] | str | None = None
                ) -> list[tuple[str, str]]:
    """LINKAGE minus the baselines on the same items, and generated minus human references
    (the baselines among the run's ``rows``, :func:`setting_rows`)."""
    rows = setting_rows(setting, rows)
    baselines = ["pointwise-noref"] + [r for r in rows if not r.startswith("linkage")]
    pairs = [(a, b) for a in ("linkage-0shot", "linkage-fewshot") for b in baselines]
    pairs += [(a, HUMAN_ROWS[a]) for a in ("linkage-0shot", "linkage-fewshot")]
    return pairs


def tick_label(method: str) -> str:
    """A row name on several lines for a figure's x axis ("a - b": "a", "minus", "b"; the
    human-reference rows marked "(human refs)")."""
    return method.replace(" - ", "\nminus\n").replace("-human", "\n(human refs)")


def references_frame(lists: Sequence[GeneratedReferences], *, dataset: str,
                     ground_texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every generated list as rows (one per reference), with how it was obtained."""
    rows = []
    for r in lists:
        for a in r.references() or (None,):
            rows.append({"dataset": dataset, "qid": r.qid, "grade": a.grade if a else None,
                         "source": a.model if a else None, "text": a.text if a else "",
                         "ground_truth_id": r.ground_truth_id or "",
                         "ground_truth": (ground_texts or {}).get(r.qid, ""),
                         "missing": "".join(map(str, r.missing)),
                         "golden_attempts": r.golden_attempts,
                         "degraded_outputs": r.degraded_outputs,
                         "degraded_failures": r.degraded_failures})
    return pd.DataFrame(rows)


@dataclass
class GeneratedTable:
    """One run of Table 3 (1GT) or Table 4 (0GT): what the experiment writes and plots."""

    table: pd.DataFrame  #: the results table (rows, then paired differences)
    frame: pd.DataFrame  #: per-candidate scores of every row
    references: pd.DataFrame  #: every generated list (:func:`references_frame`)
    lists: dict[str, list[GeneratedReferences]]  #: dataset -> generated lists
    ground_truths: dict[str, dict[str, GradedAnswer]]  #: dataset -> qid -> ground truth (1GT)
    signatures: list[Signature]  #: generators first, then every judged row
    timings: pd.DataFrame  #: seconds (wall and CPU) of each step


#: The generation of lk_t03_t04's defaults: two attempts per output, 160 tokens for a golden
#: answer, 320 for the three degraded ones.
GENERATION = GenerationSettings(attempts=2, golden_tokens=160, degraded_tokens=320)


def generated_references_table(
    setting: str, questions: Mapping[str, Sequence[GradedQuestion]],
    items: Mapping[str, JudgeSample], *, golden, degraders: Sequence, judge, paper: pd.DataFrame,
    call: JudgeCall, generation: GenerationSettings = GENERATION, progress: bool = False,
    rows: Sequence[str] | str | None = None,
) -> GeneratedTable:
    """LINKAGE Table 3 (``setting`` "1gt") or Table 4 ("0gt") on lk_t02's judged items.

    Per dataset (the keys of ``questions``): the ``golden`` model writes a
    golden answer (from a ground truth, 1GT, or from the question, 0GT) and
    the ``degraders`` three worse ones (:func:`nfeval.linkage.generated.
    generate_reference_lists`, with ``generation``'s attempts and token budgets);
    ``judge`` scores the candidates against that list in every row of
    :data:`GENERATED_ROWS`, and lk_t02's rows (:data:`HUMAN_ROWS`) on the same
    candidates, called as ``call`` says (its ``shots``: the few-shot rows'). ``call.seed``
    also seeds the ground truths, the generation and the bootstrap. The table holds each
    row's mean correlation with its interval, the ``paper`` values beside ours, and
    the paired differences of :func:`comparisons`. ``progress`` shows a bar per step (the
    lists, each judge row). ``rows`` (:func:`setting_rows`) narrows or extends the
    generated-list rows (``pairwise-release`` for 1GT).
    """
    seed = call.seed
    label = LABELS[setting]
    judged_rows = setting_rows(setting, rows)
    lists, gts, frames, signatures, timings = {}, {}, [], [], []
    for name, sample in items.items():
        judged = sample.judged
        gts[name] = (ground_truths(questions[name], judged, seed) if setting == "1gt" else {})
        by_qid = {q.qid: q for q in questions[name]}
        t, cpu = time.time(), time.process_time()
        lists[name] = generate_reference_lists(
            golden, list(degraders), [by_qid[s.qid] for s in judged],
            gts[name] if setting == "1gt" else None, seed=seed, generation=generation,
            progress=progress)
        timings.append(_timing(name, "references", len(judged), 0, t, cpu))
    for name, sample in items.items():
        splits = generated_splits(questions[name], sample.judged, lists[name], seed)
        pool = sample_all(questions[name], "3210", seed).splits
        for row, (method, n_shots) in judged_rows.items():
            n_shots = call.shots if n_shots is None else n_shots
            t, cpu = time.time(), time.process_time()
            part, sig = judge_setting(judge, questions[name], splits, method=method,
                                      call=replace(call, shots=n_shots),
                                      positions=ROW_POSITIONS.get(row, "random"),
                                      demonstration_splits=pool if n_shots else None,
                                      ids={"dataset": name, "references": label, "method": row},
                                      progress=progress)
            frames.append(part)
            signatures.append(sig)
            timings.append(_timing(name, row, len(splits), len(part), t, cpu))
        t, cpu = time.time(), time.process_time()
        part, sigs = judge_frame(judge, questions[name], sample, dataset=name,
                                 rows=list(HUMAN_ROWS), call=call, progress=progress)
        frames.append(part.assign(
            method=part["method"].map(HUMAN_ROWS),
            references=part["method"].map(lambda m: "none" if m == "pointwise-noref"
                                          else "human (lk_t02)"))
            [["dataset", "references", "method", "our_judge", "qid", "doc_id", "grade", "score",
              "unparsed"]])
        signatures += sigs
        timings.append(_timing(name, "lk_t02 rows", len(sample.judged), len(part), t, cpu))

    frame = pd.concat(frames, ignore_index=True)
    by = ["dataset", "references", "method"]
    rows = correlation_rows(frame, by=by, seed=seed)
    rows = rows.merge(frame.groupby(by, sort=False)["unparsed"].sum().rename("n_unparsed")
                      .reset_index(), on=by)
    rows = with_paper(rows, paper_rows(paper[paper["dataset"].isin(list(items))]),
                      on=["dataset", "method", "coefficient"])
    diffs = paired_rows(frame, comparisons(setting, list(judged_rows)), by=["dataset"],
                        method="method", seed=seed)
    table = pd.concat([rows, diffs.assign(references="paired")], ignore_index=True) \
        .assign(our_judge=judge.info.name)
    table["judge"] = table["judge"].fillna("")

    degrade_template = load_prompt(DEGRADE_PROMPT)
    n_lists = sum(len(v) for v in lists.values())
    gen_signatures = [Signature(
        metric=f"linkage-{setting}-references", variant=role, model=model.info.as_dict(),
        prompt_sha256=sha256_text(prompt_text(GOLDEN_PROMPTS[setting]) if role == "golden"
                                  else degrade_template),
        seed=seed, n=n_lists,
        extra={"max_tokens": (generation.golden_tokens if role == "golden"
                              else generation.degraded_tokens),
               "attempts": generation.attempts, "temperature": 0.8, "top_p": 0.95})
        for role, model in [("golden", golden)] + [("degraded", m) for m in degraders]]
    references = pd.concat(
        [references_frame(lists[name], dataset=name,
                          ground_texts={qid: a.text for qid, a in gts[name].items()})
         for name in items], ignore_index=True)
    return GeneratedTable(table=table[COLUMNS], frame=frame, references=references, lists=lists,
                          ground_truths=gts, signatures=gen_signatures + signatures,
                          timings=pd.DataFrame(timings))


def _timing(dataset: str, step: str, questions: int, candidates: int, t: float,
            cpu: float) -> dict:
    return {"dataset": dataset, "step": step, "questions": questions, "candidates": candidates,
            "seconds": round(time.time() - t, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1)}
