"""lk_t03 and lk_t04, LINKAGE Tables 3 and 4: reference lists written by an LLM (1GT, 0GT).

The notebook ``lk_t03_t04_reference_settings.ipynb`` calls :func:`run` with
``artefact`` "lk_t03" (Table 3: the golden answer is written from one
ground truth, a highest-grade answer that is not a candidate) or "lk_t04"
(Table 4: from the question alone). Both judge lk_t02's judged items with
the generated list (:func:`nfeval_repro.linkage.generated_lists.
generated_references_table`) beside lk_t02's own rows on the same
candidates; every row is a per-question coefficient averaged over questions
with its 95% interval, the comparisons paired on the same questions.
"""

from __future__ import annotations

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval_repro.linkage.same_items import judged_items
from nfeval_repro.linkage.generated_lists import generated_references_table, setting_rows
from nfeval.linkage.generated import GENERATORS, parse_generator
from nfeval_repro import dtype_check as checks
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["run"]

#: artefact -> (reference setting of :mod:`~nfeval_repro.linkage.generated_lists`, paper table)
SETTINGS: dict[str, tuple[str, str]] = {"lk_t03": ("1gt", "Table 3"),
                                        "lk_t04": ("0gt", "Table 4")}


def run(*, artefact: str = "lk_t03", profile: str = "embedded", seed: int = 0, limit: int = -1,
        datasets: str = "antique,trec-dl-nf", max_candidates: int = -1, shots: int = 3,
        generator: str = "", degraders: str = "", golden_tokens: int = 160,
        degraded_tokens: int = 320, attempts: int = 2, openai_base_url: str = "",
        judge: str = "", judge_mode: str = "",
        unparsed: str = "drop", judge_rows: str = "", judge_dtype: str = "",
        dtype_check: bool = True, progress: bool = True) -> Experiment:
    """Table 3 (``artefact`` "lk_t03") or Table 4 ("lk_t04") on the first ``limit`` of
    lk_t02's judged questions per dataset (-1: 2 embedded, all paper).

    ``extra``: ``setting`` ("1gt" or "0gt") and ``paper_table`` ("Table 3" or "Table 4"),
    ``questions`` (dataset -> questions), ``items`` (lk_t02's judged items), ``run`` (the
    :class:`~nfeval_repro.linkage.generated_lists.GeneratedTable`: the generated lists,
    the 1GT ground truths, the timings), ``datasets`` and the golden and degraded
    answers' writers (``generator``, ``degraders``).

    ``judge_rows`` (comma-separated; empty: the setting's rows) names the generated-list rows
    (:func:`~nfeval_repro.linkage.generated_lists.setting_rows`; ``pairwise-release``, the
    candidate first as the release runs it, for 1GT); ``judge_dtype`` (empty: the
    profile's) is the judge's dtype, every judge row alike (``bfloat16``: the
    every-candidate stages, as lk_t02's, whose human-reference rows they reuse).
    ``dtype_check``: with a ``judge_dtype`` other than float32, the same table on the
    8-candidate draw in float32 and in that dtype (:mod:`nfeval_repro.dtype_check`; frame
    ``dtype_check``), whose differences the claims table reads as the dtype's margin.
    """
    if artefact not in SETTINGS:
        raise NfevalError(f"artefact must be one of {sorted(SETTINGS)}, got {artefact!r}.")
    setting, paper_table = SETTINGS[artefact]
    prof = get_profile(profile)
    judge_name = judge or prof.judge
    mode = judge_mode or prof.judge_mode
    dataset_list = [d.strip() for d in datasets.split(",") if d.strip()]
    rows = setting_rows(setting, judge_rows)  # an unknown row fails before any model loads
    k = max_candidates if max_candidates >= 0 else (8 if profile == "embedded" else 0)
    n = limit if limit >= 0 else (2 if profile == "embedded" else 0)
    gold_spec = parse_generator(generator) if generator else GENERATORS[profile][0]
    deg_specs = ([parse_generator(d) for d in degraders.split(",") if d.strip()] if degraders
                 else list(GENERATORS[profile][1]))
    loaded = {str(spec): prof.load(spec.name, backend=spec.backend,
                                   **({"base_url": openai_base_url}
                                      if spec.backend == "openai" else {}))
              for spec in [gold_spec, *deg_specs]}
    questions = {name: load_linkage(name) for name in dataset_list}
    items = {name: judged_items(questions[name], name, seed=seed, limit=n, max_candidates=k)
             for name in dataset_list}
    model = prof.load(judge_name, **({"dtype": judge_dtype} if judge_dtype else {}))
    if progress:
        print(f"golden answers: {gold_spec}; degraded answers: {', '.join(map(str, deg_specs))}; "
              f"judge {judge_name} ({mode})")

    result = generated_references_table(
        setting, questions, items, golden=loaded[str(gold_spec)],
        degraders=[loaded[str(s)] for s in deg_specs], judge=model, paper=paper_values(artefact),
        mode=mode, seed=seed, shots=shots, unparsed=unparsed, attempts=attempts,
        golden_tokens=golden_tokens, degraded_tokens=degraded_tokens, progress=progress,
        rows=list(rows))
    checked, check_rows = None, checks.checked_rows(list(rows))
    if checks.wanted(judge_dtype, dtype_check) and check_rows:
        checked = checks.check(
            lambda dt: run(artefact=artefact, profile=profile, seed=seed, limit=limit,
                           datasets=datasets, max_candidates=checks.DRAW, shots=shots,
                           generator=generator, degraders=degraders,
                           golden_tokens=golden_tokens, degraded_tokens=degraded_tokens,
                           attempts=attempts, openai_base_url=openai_base_url, judge=judge,
                           judge_mode=judge_mode, unparsed=unparsed,
                           judge_rows=",".join(check_rows), judge_dtype=dt, dtype_check=False,
                           progress=progress).table,
            judge_dtype, keys=["dataset", "references", "method", "coefficient"])
    if progress:
        for name, lists in result.lists.items():
            print(f"{name}: {len(items[name].judged)} of lk_t02's judged questions, "
                  f"{sum(len(s.candidates) for s in items[name].judged)} candidates (at most "
                  f"{k or 'all'} each): {sum(r.ok for r in lists)} with a golden answer, "
                  f"{sum(r.complete for r in lists)} complete lists, "
                  f"{sum(r.degraded_failures for r in lists)} of "
                  f"{sum(r.degraded_outputs for r in lists)} degraded outputs unparsed")
    return Experiment(
        artefact, result.table,
        id_columns=["dataset", "references", "method", "judge", "coefficient"],
        interval="questions", signatures=result.signatures,
        parameters=dict(questions_per_dataset=n, max_candidates=k, generator=str(gold_spec),
                        degraders=[str(s) for s in deg_specs], judge=judge_name,
                        judge_mode=mode),
        notes="ours: mean over questions of the per-question coefficient, 95% percentile "
              "bootstrap interval over questions, on lk_t02's judged questions and candidates. "
              "method 'A - B': paired over the questions where both are defined (a_mean, b_mean: "
              f"the two means there). Paper: {paper_table}'s x100 figures / 100, on all "
              "candidates; our value sits beside both paper judges (mistral, chatgpt), "
              "our_judge names ours. pointwise-noref and the '-human' rows are lk_t02's "
              "judgments.",
        frames={"references": result.references, "per_candidate": result.frame,
                **({"dtype_check": checked} if checked is not None else {})},
        summary_frames=("dtype_check",),
        extra={"setting": setting, "paper_table": paper_table, "questions": questions,
               "items": items, "run": result, "datasets": dataset_list,
               "generator": str(gold_spec), "degraders": [str(s) for s in deg_specs]})
