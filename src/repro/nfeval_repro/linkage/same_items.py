"""LINKAGE Table 2: every evaluator's per-question correlation with human grades.

The experiment :mod:`nfeval_repro.linkage.lk_t02` calls these functions; they
share one long per-candidate frame (:data:`FRAME_COLUMNS`: one row per
dataset, item sample, decoding mode, method, judge and candidate, with its
human grade and score), from which every row of the table is computed the
same way (:func:`nfeval.metrics.correlation.correlation_rows`, each with a
95% bootstrap interval over questions) and every comparison of two methods
as a paired difference on the same questions
(:func:`nfeval.metrics.correlation.paired_rows`).

Item samples (the ``sample`` column):

* ``all`` -- the paper's protocol for the automatic metrics: every question,
  every answer but the lexical ground truth (the release's pool).
* ``same items`` -- the questions and candidates the LLM judges see
  (:func:`nfeval_repro.linkage.evaluation.judge_sample`: judgeable questions in a
  seeded random order, at most ``max_candidates`` candidates each, drawn
  uniformly at random); every judge method, ``refppl`` and the automatic
  metrics are scored on exactly these items, so two rows differ only by the
  method.
* ``small judge`` -- the same items judged by a smaller judge (the embedded
  profile's Qwen2.5-Coder-0.5B, whose rows were committed before the 1.5B
  judge became the default): per row, the judge minus the small judge, and
  the small judge's LINKAGE minus its own baselines.
* ``mode subset`` -- the first ``sample_limit`` questions of the judged ones,
  where the small judge's LINKAGE and pointwise rows are scored in both
  decodings: the project's ``prob`` (expected label) and the paper's
  ``sample`` (temperature 0.8, parsed ``[[k]]``, ties possible).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedQuestion
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.evaluation import JudgeSample, judge_sample, unparsed_policy
from nfeval.linkage.judges import (
    SAMPLING,
    JudgeConfig,
    judge_questions,
    load_fewshot_template,
    release_template,
)
from nfeval.linkage.references import DEFAULT_PATTERN
from nfeval.metrics.correlation import correlation_rows, paired_rows
from nfeval_repro.store import cached_steps
from nfeval_repro.tables import Signature

__all__ = [
    "FRAME_COLUMNS",
    "CLAIM_ROWS",
    "DEFAULT_JUDGE_ROWS",
    "JUDGE_ROWS",
    "LEXICAL_ROWS",
    "MODE_ROWS",
    "PAPER_ROW_OF",
    "ROW_POSITIONS",
    "TABLE_COLUMNS",
    "JudgeCall",
    "automatic_frames",
    "bleu_pools",
    "comparisons",
    "judge_frame",
    "judged_items",
    "paper_rows",
    "lexical_frame",
    "mode_subset_frames",
    "refppl_frame",
    "table2_figure",
    "same_items_frames",
    "same_items_subset",
    "small_judge_frames",
    "table_rows",
]

#: Table 2's judge rows: row name -> (judge method, demonstrations; None = the run's ``shots``).
JUDGE_ROWS: dict[str, tuple[str, int | None]] = {
    "pointwise-noref": ("pointwise", 0),
    "pointwise-ref": ("pointwise-ref", 0),
    "pairwise": ("pairwise", 0),
    "pairwise-release": ("pairwise", 0),
    "linkage-0shot": ("linkage", 0),
    "linkage-fewshot": ("linkage", None),
}
#: Pairwise positions of a judge row (:class:`~nfeval.linkage.judges.JudgeConfig`):
#: ``pairwise`` a seeded coin per pair (the paper's text), ``pairwise-release`` the candidate
#: always first (what the release scripts run); every other row has no positions.
ROW_POSITIONS: dict[str, str] = {"pairwise-release": "release"}
#: The judge rows of the 8-candidate draw (pairwise with a seeded coin for positions, the small
#: judge beside them): lk_t02's earlier stages, lk_f03's case study.
DEFAULT_JUDGE_ROWS = ("pointwise-noref", "pointwise-ref", "pairwise", "linkage-0shot",
                      "linkage-fewshot")
#: The claim-deciding judge rows, judged on every candidate (lk_t02's default): LINKAGE 0-shot
#: and few-shot, pointwise with and without references, and pairwise as the release runs it
#: (the candidate first); the coin's positions stay lk_x02's position-bias diagnostic.
CLAIM_ROWS = ("linkage-0shot", "pointwise-ref", "pointwise-noref", "linkage-fewshot",
              "pairwise-release")
#: The automatic metrics (lexical and embedding).
LEXICAL_ROWS = ("rouge1", "rouge2", "rougeL", "bleu", "bertscore", "bertscore-cls")
#: Rows scored in both decodings on the mode subset.
MODE_ROWS = ("pointwise-noref", "pointwise-ref", "linkage-0shot")
FRAME_COLUMNS = ["dataset", "sample", "mode", "method", "our_judge", "qid", "doc_id", "grade",
                 "score", "unparsed"]


def judged_items(questions: Sequence[GradedQuestion], dataset: str, *, seed: int, limit: int,
                 max_candidates: int) -> JudgeSample:
    """The questions and candidates every same-items row is scored on (module doc)."""
    return judge_sample(questions, DEFAULT_PATTERN[dataset], seed, limit, max_candidates,
                        order="random")


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


@dataclass(frozen=True)
class JudgeCall:
    """How an LLM judge is called, the same for every judge row of a run: what
    :func:`judge_frame` and :func:`nfeval_repro.linkage.follow_up.judge_setting` (and the
    follow-up tables through them) pass to :class:`~nfeval.linkage.judges.JudgeConfig`."""

    #: decoding: ``prob`` (the expected label) or ``sample`` (temperature 0.8, a parsed
    #: ``[[k]]``, ties possible)
    mode: str
    #: seeds the pairwise positions (the coin), the sampled replies and the draw of the
    #: demonstrations
    seed: int
    #: demonstrations of a few-shot judgment: :func:`judge_frame`'s few-shot rows (the
    #: :data:`JUDGE_ROWS` whose shots are None); every judgment of
    #: :func:`~nfeval_repro.linkage.follow_up.judge_setting` (0: none)
    shots: int
    #: a candidate's judge outputs that did not parse (``sample`` mode; pairwise has one
    #: output per reference): drop, release (LINKAGE rank 2) or a number
    #: (:func:`~nfeval_repro.linkage.evaluation.unparsed_policy`)
    unparsed: str = "drop"
    #: the bound on each sampled reply's tokens
    max_tokens: int = SAMPLING["max_tokens"]


def judge_frame(model, questions: Sequence[GradedQuestion], sample: JudgeSample, *,
                dataset: str, rows: Sequence[str], call: JudgeCall, splits=None,
                label: str = "same items", guard: str = "off", progress: bool = True
                ) -> tuple[pd.DataFrame, list[Signature]]:
    """Per-candidate scores of the judge rows ``rows`` (names of :data:`JUDGE_ROWS`), the
    judge called as ``call`` says.

    ``splits`` (default: ``sample.judged``) are the questions judged; the
    demonstrations of the few-shot row come from all of the dataset's splits.
    The frame's ``unparsed`` counts a candidate's outputs that did not parse;
    ``guard`` is how the judge sees each candidate (:data:`nfeval.guard.GUARD_MODES`).
    """
    unknown = [r for r in rows if r not in JUDGE_ROWS]
    if unknown:
        raise NfevalError(f"unknown judge row(s) {unknown}; Table 2's rows are {list(JUDGE_ROWS)}")
    splits = sample.judged if splits is None else splits
    out, sigs = [], []
    for row in rows:
        method, n_shots = JUDGE_ROWS[row]
        n_shots = call.shots if n_shots is None else n_shots
        cfg = JudgeConfig(method=method, mode=call.mode, seed=call.seed,
                          max_tokens=call.max_tokens,
                          unparsed=unparsed_policy(call.unparsed, method),
                          positions=ROW_POSITIONS.get(row, "random"), guard=guard)
        results = judge_questions(model, questions, splits, cfg, shots=n_shots,
                                  demonstration_splits=sample.splits, progress=progress)
        by_qid = {s.qid: s for s in splits}
        for r in results:
            bad = [0] * len(r.scores)
            for j in r.judgments:
                bad[j.candidate] += not j.parsed
            for c, score, b in zip(by_qid[r.qid].candidates, r.scores, bad):
                out.append({"dataset": dataset, "sample": label, "mode": call.mode,
                            "method": row, "our_judge": model.info.name, "qid": r.qid,
                            "doc_id": c.doc_id, "grade": c.grade, "score": score,
                            "unparsed": b})
        sigs.append(Signature(
            metric=f"linkage-judge/{row}", variant=f"{method}-{call.mode}",
            model=model.info.as_dict(),
            prompt_sha256=sha256_text(release_template(method)
                                      + (load_fewshot_template().sha256 if n_shots else "")),
            seed=call.seed, n=len(splits),
            extra={"dataset": dataset, "sample": label, "pattern": DEFAULT_PATTERN[dataset],
                   "shots": n_shots, "unparsed": str(cfg.unparsed), "positions": cfg.positions,
                   **({"guard": guard} if guard != "off" else {})}))
    return _frame(out), sigs


def refppl_frame(lm, questions: Sequence[GradedQuestion], splits, *, dataset: str,
                 label: str = "same items", progress: bool = True
                 ) -> tuple[pd.DataFrame, dict]:
    """Per-candidate reference-recovery perplexity scores (the project's row beyond the paper)."""
    from tqdm.auto import tqdm

    from nfeval.linkage.refppl import refppl_question
    from nfeval.prompts import prompt_text

    template = prompt_text("linkage_refppl")
    text = {q.qid: q.question for q in questions}
    rows, scored, cut = [], 0, 0
    for s in tqdm(splits, desc=f"refppl ({dataset})", unit="question", disable=not progress):
        res = refppl_question(lm, text[s.qid], s.references, s.candidates, template=template)
        scored += sum(r.scored_tokens for r in res)
        cut += sum(r.truncated_tokens for r in res)
        rows += [{"dataset": dataset, "sample": label, "mode": "prob", "method": "refppl",
                  "our_judge": lm.info.name, "qid": s.qid, "doc_id": c.doc_id, "grade": c.grade,
                  "score": r.score, "unparsed": 0} for c, r in zip(s.candidates, res)]
    return _frame(rows), {"scored_tokens": scored, "truncated_tokens": cut}


def lexical_frame(scores: pd.DataFrame, *, dataset: str, label: str) -> pd.DataFrame:
    """:func:`nfeval.linkage.lexical.split_scores` / ``lexical_scores`` rows in the frame's
    columns."""
    df = scores.assign(dataset=dataset, sample=label, mode="", our_judge="", unparsed=0)
    return df[FRAME_COLUMNS].reset_index(drop=True)


def automatic_frames(questions: Mapping[str, Sequence[GradedQuestion]], *, seed: int,
                     lexical_limit: int = 0, candidates: str = "all-but-ground",
                     rouge: str = "rouge-score", embedder: str | None = None,
                     num_layers: int | None = 6, device: str | None = None
                     ) -> tuple[list[pd.DataFrame], list[Signature]]:
    """The automatic metrics on all items (sample ``all``, the paper's protocol) of each
    dataset of ``questions`` (its first ``lexical_limit`` questions; 0: all), with the
    signature of every method; ``device`` runs the BERTScore and [CLS] encoders."""
    from nfeval.linkage.lexical import lexical_scores, method_signature

    frames, sigs = [], []
    for name, qs in questions.items():
        qs = qs[:lexical_limit] if lexical_limit else qs
        scores = lexical_scores(qs, DEFAULT_PATTERN[name], seed, methods=LEXICAL_ROWS,
                                candidates=candidates, rouge=rouge, embedder=embedder,
                                num_layers=num_layers, device=device, steps=cached_steps)
        frames.append(lexical_frame(scores, dataset=name, label="all"))
        sigs += [method_signature(m, pattern=DEFAULT_PATTERN[name], seed=seed, n=len(qs),
                                  candidates=candidates, rouge=rouge,
                                  embedder=scores.attrs["embedder"],
                                  num_layers=scores.attrs["num_layers"]) for m in LEXICAL_ROWS]
    return frames, sigs


def bleu_pools(questions: Sequence[GradedQuestion], *, seed: int,
               dataset: str = "antique") -> pd.DataFrame:
    """What the BLEU rows measure: per candidate pool (the release's ``all-but-ground`` and
    the non-reference answers ``rest``), BLEU's coefficients beside those of answer length
    alone (words), and the share of candidates with a 4-gram in common with their ground
    truth (``with_4gram_match``). Index (pool, method); columns the three coefficients."""
    from nfeval.linkage.lexical import correlation_table, lexical_scores

    words = {(q.qid, a.doc_id): len(a.text.split()) for q in questions for a in q.answers}
    parts = []
    for pool in ("all-but-ground", "rest"):
        s = lexical_scores(questions, DEFAULT_PATTERN[dataset], seed, methods=("bleu",),
                           candidates=pool)
        by_length = s.assign(method="length",
                             score=[words[k] for k in zip(s["qid"], s["doc_id"])])
        part = correlation_table(pd.concat([s, by_length], ignore_index=True))
        part = part.pivot(index="method", columns="coefficient", values="ours")
        parts.append(part[["kendall", "spearman", "pearson"]].assign(
            pool=pool, with_4gram_match=round(float((s["score"] > 1e-30).mean()), 3)))
    return pd.concat(parts).reset_index().set_index(["pool", "method"])


def same_items_frames(lm, questions: Mapping[str, Sequence[GradedQuestion]],
                      items: Mapping[str, JudgeSample], *, seed: int, max_candidates: int,
                      embedder: str | None = None, num_layers: int | None = 6,
                      device: str | None = None, progress: bool = True
                      ) -> tuple[list[pd.DataFrame], list[Signature], dict[str, dict]]:
    """``refppl`` with the base LM ``lm`` and the automatic metrics on the judged items of
    every dataset (sample ``same items``): the frames, refppl's signatures, and per dataset
    the reference tokens scored and cut by the window (:func:`refppl_frame`). ``device``
    runs the BERTScore and [CLS] encoders. ``lm`` None: no refppl row (nor its counts)."""
    from nfeval.linkage.lexical import split_scores
    from nfeval.linkage.refppl import PROMPT
    from nfeval.prompts import prompt_text

    frames, sigs, counts = [], [], {}
    for name, qs in (questions.items() if lm is not None else ()):
        part, counts[name] = refppl_frame(lm, qs, items[name].judged, dataset=name,
                                          progress=progress)
        frames.append(part)
        sigs.append(Signature(
            metric="linkage/refppl", variant="top-grade-mean-token-nll", model=lm.info.as_dict(),
            prompt_sha256=sha256_text(prompt_text(PROMPT)), seed=seed,
            n=len(items[name].judged), extra={"dataset": name, "max_candidates": max_candidates}))
    for name, qs in questions.items():
        scores = split_scores(items[name].judged, qs, methods=LEXICAL_ROWS, embedder=embedder,
                              num_layers=num_layers, device=device, steps=cached_steps)
        frames.append(lexical_frame(scores, dataset=name, label="same items"))
    return frames, sigs, counts


def mode_subset_frames(sampler, questions: Mapping[str, Sequence[GradedQuestion]],
                       items: Mapping[str, JudgeSample], frames: Sequence[pd.DataFrame], *,
                       sample_limit: int, seed: int, shots: int, unparsed: str = "drop",
                       prob_sample: str = "small judge", max_tokens: int = SAMPLING["max_tokens"],
                       progress: bool = True
                       ) -> tuple[list[pd.DataFrame], list[Signature]]:
    """The :data:`MODE_ROWS` decoded by sampling (``sampler``) on the first ``sample_limit``
    judged questions of each dataset (sample ``mode subset``), each followed by the ``prob``
    rows of the same judge on the same questions, copied from the ``prob_sample`` rows of
    ``frames`` (:func:`same_items_subset`)."""
    call = JudgeCall(mode="sample", seed=seed, shots=shots, unparsed=unparsed,
                     max_tokens=max_tokens)
    out, sigs = [], []
    for name, qs in questions.items():
        subset = items[name].judged[:sample_limit]
        part, s = judge_frame(sampler, qs, items[name], dataset=name, rows=list(MODE_ROWS),
                              call=call, splits=subset, label="mode subset",
                              progress=progress)
        out.append(part)
        sigs += s
        out.append(same_items_subset([*frames, *out], dataset=name, methods=MODE_ROWS,
                                     qids=[x.qid for x in subset], label="mode subset",
                                     source=prob_sample, judge=sampler.info.name))
    return out, sigs


def small_judge_frames(model, questions: Mapping[str, Sequence[GradedQuestion]],
                       items: Mapping[str, JudgeSample], *, rows: Sequence[str],
                       call: JudgeCall, progress: bool = True
                       ) -> tuple[list[pd.DataFrame], list[Signature]]:
    """The small judge ``model``'s ``rows`` on the judged items of every dataset (sample
    ``small judge``), called as ``call`` says (the judge's own call)."""
    out, sigs = [], []
    for name, qs in questions.items():
        part, s = judge_frame(model, qs, items[name], dataset=name, rows=list(rows), call=call,
                              label="small judge", progress=progress)
        out.append(part)
        sigs += s
    return out, sigs


def comparisons(shots_row: str = "linkage-fewshot") -> dict[str, list[tuple[str, str]]]:
    """The paired differences each item sample reports: LINKAGE (0-shot and few-shot) minus
    every baseline, few-shot minus 0-shot and pointwise with minus without references (a
    table keeps those whose two methods it scored)."""
    baselines = ["pointwise-noref", "pointwise-ref", "pairwise", "pairwise-release",
                 *LEXICAL_ROWS, "refppl"]
    same = [("linkage-0shot", b) for b in baselines]
    same += [(shots_row, b) for b in ("pointwise-noref", "pointwise-ref", "pairwise",
                                      "pairwise-release", *LEXICAL_ROWS)]
    # section 5.1's own claims: demonstrations help LINKAGE, references help pointwise
    same += [(shots_row, "linkage-0shot"), ("pointwise-ref", "pointwise-noref")]
    mode = [("linkage-0shot", "pointwise-noref"), ("linkage-0shot", "pointwise-ref")]
    return {"same items": same, "mode subset": mode}


def same_items_subset(frames: Sequence[pd.DataFrame], *, dataset: str, methods: Sequence[str],
                      qids, label: str, source: str = "same items",
                      judge: str | None = None) -> pd.DataFrame:
    """The ``source`` rows of ``methods`` (of ``judge``, if given) on the questions ``qids``,
    relabelled ``label``: a subset sample (``mode subset``) compares its decoding with the
    same judge's ``prob`` rows on the same questions."""
    same = pd.concat(frames)
    keep = ((same["dataset"] == dataset) & (same["sample"] == source)
            & same["method"].isin(list(methods)) & same["qid"].isin(set(qids)))
    if judge is not None:
        keep &= same["our_judge"] == judge
    return same[keep].assign(sample=label)


#: Column order of the committed table.
TABLE_COLUMNS = ["dataset", "sample", "mode", "method", "judge", "coefficient", "ours", "ci_low",
                 "ci_high", "n_questions", "paper", "gap", "paper_in_ci", "our_judge",
                 "n_skipped_undefined", "n_candidates", "n_unparsed", "sd", "a_mean", "b_mean"]
_SAMPLE_ORDER = {"all": 0, "same items": 1, "small judge": 2, "mode subset": 3}


#: Our rows that stand for a paper row of another name (the paper's figure goes beside both):
#: pairwise with the candidate first is the paper's pairwise as its release runs it (the seeded
#: coin of positions, the paper's text, keeps the figure too); BERTScore's [CLS] variant.
PAPER_ROW_OF = {"pairwise-release": "pairwise", "bertscore-cls": "bertscore"}


def paper_rows(paper: pd.DataFrame) -> pd.DataFrame:
    """``paper`` with the rows of each :data:`PAPER_ROW_OF` paper row copied under our row's
    name."""
    return pd.concat([paper, *[paper[paper["method"] == theirs].assign(method=ours)
                               for ours, theirs in PAPER_ROW_OF.items()]], ignore_index=True)


def table_rows(frame: pd.DataFrame, paper: pd.DataFrame, *, mode: str, judge: str,
               small_judge: str = "", seed: int = 0) -> pd.DataFrame:
    """Every row of the table from the per-candidate ``frame`` (:data:`FRAME_COLUMNS`).

    Correlation rows per dataset, sample, mode, method and judge with their
    unparsed counts; the paired differences of :func:`comparisons` (``same
    items`` in ``mode``, ``mode subset`` per decoding); on the ``small judge``
    sample, per judge row the judge minus the small judge (``<row>: judge -
    small``) and the small judge's LINKAGE rows minus its own other rows.
    ``paper`` (dataset, method, coefficient, judge, paper) is joined to the
    rows it measures: the automatic metrics on all items and the judge rows
    on the same items in ``mode``; ``gap`` and ``paper_in_ci`` compare with it.
    """
    by = ["dataset", "sample", "mode", "method", "our_judge"]
    rows = correlation_rows(frame, by=by, seed=seed)
    unparsed = frame.groupby(by, sort=False)["unparsed"].sum().rename("n_unparsed").reset_index()
    rows = rows.merge(unparsed, on=by, how="left")
    pairs = comparisons()
    same = frame[frame["sample"] == "same items"]  # one decoding (the automatic metrics have none)
    present = set(same["method"])  # a run of some judge rows compares those it has
    pairs["same items"] = [(a, b) for a, b in pairs["same items"] if {a, b} <= present]
    diffs = [paired_rows(same, pairs["same items"], by=["dataset", "sample"], seed=seed)
             .assign(mode=mode, our_judge=judge)]
    both = frame[frame["sample"] == "mode subset"]
    if len(both):
        diffs.append(paired_rows(both, pairs["mode subset"], by=["dataset", "sample", "mode"],
                                 seed=seed).assign(our_judge=small_judge))
    small = frame[frame["sample"] == "small judge"]
    if len(small):
        # per judge row: the judge minus the small judge on the same items
        big = same[same["method"].isin(set(small["method"])) & (same["our_judge"] == judge)]
        d = paired_rows(pd.concat([big.assign(sample="small judge"), small]),
                        [(judge, small_judge)], by=["dataset", "sample", "mode", "method"],
                        method="our_judge", seed=seed)
        diffs.append(d.assign(method=d["method"] + ": " + d["our_judge"]))
        # the small judge's LINKAGE rows against its own other judge rows
        own = [(a, b) for a, b in pairs["same items"] if a in set(small["method"])
               and b in set(small["method"])]
        diffs.append(paired_rows(small, own, by=["dataset", "sample"], seed=seed)
                     .assign(mode=mode, our_judge=small_judge))
    ours = pd.concat([rows, *diffs], ignore_index=True)
    paper = paper_rows(paper)
    eligible = (((ours["sample"] == "all") & ours["method"].isin(LEXICAL_ROWS))
                | ((ours["sample"] == "same items") & (ours["mode"] == mode)
                   & ours["method"].isin(list(JUDGE_ROWS))))
    joined = ours[eligible].merge(paper, on=["dataset", "method", "coefficient"], how="left")
    table = pd.concat([joined, ours[~eligible].assign(judge="")], ignore_index=True)
    table["judge"] = table["judge"].fillna("")
    table["gap"] = table["ours"] - table["paper"]
    inside = (table["paper"] >= table["ci_low"]) & (table["paper"] <= table["ci_high"])
    table["paper_in_ci"] = np.where(table["paper"].isna(), "", np.where(inside, "yes", "no"))
    table = table.sort_values(["dataset", "sample"], kind="stable",
                              key=lambda c: c.map(_SAMPLE_ORDER) if c.name == "sample" else c)
    return table.reset_index(drop=True)[TABLE_COLUMNS]


def table2_figure(exp, small_judge: str):
    """lk_t02's figure (``exp``: what :func:`nfeval_repro.linkage.lk_t02.run` returns):
    Spearman's rho of every row with its 95% interval, one panel per
    dataset (automatic metrics on all items and on the judged items, the LLM rows on the
    judged items, the small judge's bars beside them where it ran)."""
    import matplotlib.pyplot as plt

    from nfeval_repro.plots import BarStyle, interval_bars

    table = exp.table
    judge_name, mode = exp.parameters["judge"], exp.parameters["judge_mode"]
    sp = table[(table["coefficient"] == "spearman") & table["judge"].isin(["", "mistral"])
               & ~table["method"].str.contains(" - ")]
    small = f"small judge ({small_judge})"
    sp = pd.concat([sp[sp["sample"].isin(["all", "same items"])],
                    sp[(sp["sample"] == "small judge")
                       & (sp["our_judge"] == small_judge)].assign(sample=small)])
    methods = [*LEXICAL_ROWS, "refppl", *JUDGE_ROWS]
    datasets = exp.extra["datasets"]
    fig, axes = plt.subplots(len(datasets), 1, figsize=(13, 4.25 * len(datasets)), sharey=True,
                             squeeze=False)
    for ax, name in zip(axes[:, 0], datasets):
        part = sp[(sp["dataset"] == name) & (sp["mode"] != "sample")]
        interval_bars(ax, part, x="method", hue="sample",
                      order=[m for m in methods if m in set(part["method"])],
                      hue_order=["all", "same items", small],
                      ylabel="Spearman's rho (mean over questions)",
                      style=BarStyle(compact=True))
        ax.set_title(f"{name}: automatic metrics on all items and on the judged items; LLM rows "
                     f"({judge_name}, {mode}) on the judged items"
                     + (f", beside the {small}" if (part["sample"] == small).any() else ""),
                     fontsize=10)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("LINKAGE Table 2 with 95% bootstrap intervals over questions")
    fig.tight_layout()
    return fig
