"""Score your own candidate answers with LINKAGE or one of its baselines (``nfeval linkage``).

Input: JSON Lines, one question a line (:mod:`nfeval.linkage.file_format` says
what each line holds).

Methods (:data:`METHODS`):

* LLM judges (:mod:`nfeval.linkage.judges`): ``linkage`` (0-shot, or n-shot
  with ``shots`` demonstrations drawn from the file's *other* questions:
  a graded candidate, shown at the rank its grade gives it among those
  references), ``pointwise`` (no references), ``pointwise-ref``,
  ``pointwise-ref-graded``, ``pairwise``; each in ``prob`` mode (expected
  value of the judge's label distribution) or ``sample`` mode (the paper's
  decoding, the reply parsed).
* ``refppl``: reference-recovery perplexity (:mod:`nfeval.linkage.refppl`),
  with a small base language model.
* ``rouge1``, ``rouge2``, ``rougeL``, ``bleu``, ``bertscore``,
  ``bertscore-cls`` (:mod:`nfeval.linkage.lexical`): each candidate against
  the one ground truth the release picks from the reference list.

Every score is higher-is-better (LINKAGE's is minus the rank).

Reference lists (``references``, :data:`REFERENCE_SOURCES`):

* ``"file"`` (default): the line's references. A line without any gets a
  LINKAGE-0GT list written by the generator when one is given, else it is
  left out (for every method but ``pointwise``, which needs none).
* ``"1gt"``: LINKAGE-1GT (paper Section 3.3.2): the line's best reference
  (the first of the highest grade) is the one ground truth; the generator
  rewrites it into a golden answer, then writes three degraded answers
  (grades 3, 2, 1, 0; :mod:`nfeval.linkage.generated`).
* ``"0gt"``: LINKAGE-0GT: the golden answer from the question alone; the
  file's references are not used.

Generated lists are cached (:func:`~nfeval.linkage.generated.generate_reference_lists`),
and so is every scored question (:class:`nfeval.runcache.RunCache`, keyed by
the model, the method's settings, the prompts and the question's own
inputs): a run stopped by Ctrl-C (:class:`nfeval.Interrupted`)
resumes where it stopped when the same command is run again.

One function runs it all, for the command line and the Python API alike:
:func:`score_linkage_file` reads the file, plans and writes the missing reference
lists, builds each question's split and demonstrations, loads the model, scores and
signs. What it decides with comes in one :class:`~nfeval.linkage.settings.LinkageSettings`;
what a caller hears along the way (and how models given by name load) is a
:class:`LinkageHooks`.

Usage::

    from nfeval.linkage.score_file import score_linkage_file
    from nfeval.linkage.settings import LinkageSettings

    res = score_linkage_file("examples/linkage_answers.jsonl",
                             LinkageSettings("linkage", shots=2), "smollm2-135m-instruct")
    res.table          # one row per candidate: score, rank, distribution, ...
    res.correlations   # Kendall / Spearman / Pearson with the human grades, 95% intervals
    res.signature.as_string()
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any


from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage import judges as J
from nfeval.linkage import lexical as LX
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.file_format import (COLUMNS, DEFAULT_MODELS, JUDGE_METHODS, METHODS,
                                        REFERENCE_SOURCES, FileQuestion, LinkageFile,
                                        method_kind, method_label, needs_references,
                                        parse_linkage_text, read_linkage_file)
from nfeval.linkage.file_references import (build_splits, demonstrations_for, generate_missing,
                                            ground_truth, reference_plan)
from nfeval.linkage.file_results import LinkageScores, finish
from nfeval.linkage.settings import GenerationSettings, LinkageSettings

__all__ = [
    "COLUMNS",
    "DEFAULT_MODELS",
    "JUDGE_METHODS",
    "METHODS",
    "REFERENCE_SOURCES",
    "FileQuestion",
    "GenerationSettings",
    "LinkageFile",
    "LinkageHooks",
    "LinkageScores",
    "LinkageSettings",
    "build_splits",
    "demonstrations_for",
    "finish",
    "generate_missing",
    "ground_truth",
    "method_kind",
    "method_label",
    "needs_references",
    "parse_linkage_text",
    "read_linkage_file",
    "reference_plan",
    "score_linkage_file",
    "score_splits",
]


# --------------------------------------------------------------------------- scoring


def _judge_rows(res: J.QuestionScores, split: ReferenceSplit, mode: str) -> list[dict]:
    """One row per candidate: its score, and its label distribution(s) or reply(ies)."""
    pairwise = res.config.method == "pairwise"

    def ref_id(j: J.Judgment) -> str:
        return split.references[j.reference].doc_id

    rows = []
    for i, c in enumerate(split.candidates):
        js = [j for j in res.judgments if j.candidate == i]
        if mode == "prob":
            dist = (json.dumps([{"reference": ref_id(j), "candidate_first": j.candidate_first,
                                 "dist": j.dist} for j in js]) if pairwise
                    else json.dumps(js[0].dist))
            raw = None
        else:
            dist = None
            raw = (json.dumps([{"reference": ref_id(j), "candidate_first": j.candidate_first,
                                "reply": j.text} for j in js]) if pairwise else js[0].text)
        rows.append({"candidate_id": c.doc_id, "score": res.scores[i],
                     "unparsed": any(not j.parsed for j in js), "n_outputs": len(js),
                     "cut_tokens": res.cut_tokens[i] if res.cut_tokens else 0,
                     "dist": dist, "raw": raw, "detail": None})
    return rows


class _Scorer:
    """What scores one question, and the cache fields that name its settings."""

    def __init__(self, settings: LinkageSettings, model, *,
                 demonstrations: dict[str, list[J.Demonstration]], questions: dict[str, str],
                 device: str | None = None):
        method, prompt, shots = settings.method, settings.template, settings.shots
        self.method, self.model, self.mode, self.shots = method, model, settings.mode, shots
        self.device = device
        self.kind = settings.kind
        self.demos = demonstrations
        self.questions = questions
        self.embedder, self.rouge = settings.embedder, settings.rouge
        if self.kind == "judge":
            self.cfg = settings.judge
            self.templates = {"fewshot": J.load_fewshot_template()} if shots else {}
            if prompt is not None:  # a judge prompt of one's own (checked by the settings)
                from nfeval.linkage.prompts import template_key

                self.templates[template_key(method)] = prompt
            else:
                prompt = J.release_template(method)
            self.prompt_sha = sha256_text(prompt + (self.templates["fewshot"].sha256
                                                    if shots else ""))
            self.fields = {"model": model.info.cache_fields(), "config": self.cfg.as_dict(),
                           "shots": shots, "prompt": self.prompt_sha}
        elif self.kind == "refppl":
            from nfeval.linkage.refppl import PROMPT
            from nfeval.prompts import prompt_text

            self.template = prompt_text(PROMPT)
            self.prompt_sha = sha256_text(self.template)
            self.fields = {"model": model.info.cache_fields(), "prompt": self.prompt_sha}
        else:
            self.prompt_sha = None
            self.fields = {"method": method, "rouge": self.rouge,
                           "embedder": LX.resolve_name(self.embedder),
                           "versions": [LX._version(p) for p in ("rouge-score", "nltk",
                                                                  "bert-score")],
                           "rows": 2}  # 2: BERTScore rows count their cut tokens

    def key(self, s: ReferenceSplit) -> str:
        key = {"q": self.questions[s.qid],
               "refs": [[r.doc_id, r.text, r.grade] for r in s.references],
               "cands": [[c.doc_id, c.text] for c in s.candidates]}
        if self.shots:
            key["demos"] = [[d.qid, d.candidate.doc_id, sha256_text(json.dumps(
                [d.question, d.candidate.text, [[r.text, r.grade] for r in d.references]]))]
                for d in self.demos.get(s.qid, [])]
        return json.dumps(key)

    def score(self, s: ReferenceSplit) -> list[dict]:
        q = self.questions[s.qid]
        if self.kind == "judge":
            res = J.judge_candidates(self.model, q, s.references, s.candidates, self.cfg,
                                     demonstrations=self.demos.get(s.qid, ()), qid=s.qid,
                                     templates=self.templates)
            return _judge_rows(res, s, self.mode)
        if self.kind == "refppl":
            from nfeval.linkage.refppl import refppl_question

            res = refppl_question(self.model, q, s.references, s.candidates,
                                  template=self.template)
            return [{"candidate_id": c.doc_id, "score": r.score, "unparsed": False,
                     "n_outputs": 1, "dist": None, "raw": None,
                     "detail": json.dumps({"nll": list(r.nll), "scored_tokens": r.scored_tokens,
                                           "truncated_tokens": r.truncated_tokens})}
                    for c, r in zip(s.candidates, res)]
        df = LX.split_scores([s], [GradedQuestion(s.qid, q, list(s.candidates))],
                             methods=[self.method], candidates="rest", rouge=self.rouge,
                             embedder=self.embedder, device=self.device)
        gt = LX.lexical_ground_truth(s.references)
        cut = [0] * len(s.candidates)
        detail = {"ground_truth": gt.doc_id}
        if self.method.startswith("bertscore"):  # the encoder's window: count what it cuts
            from nfeval.linkage.embedding import cut_tokens

            cut = cut_tokens([c.text for c in s.candidates], self.method,
                             embedder=self.embedder)
            detail["ground_truth_cut_tokens"] = cut_tokens([gt.text], self.method,
                                                           embedder=self.embedder)[0]
        return [{"candidate_id": c.doc_id, "score": float(v), "unparsed": False,
                 "n_outputs": 1, "dist": None, "raw": None, "cut_tokens": n,
                 "detail": json.dumps(detail)}
                for c, v, n in zip(s.candidates, df["score"], cut)]


def score_splits(splits: Sequence[ReferenceSplit], questions: dict[str, str],
                 settings: LinkageSettings, model=None, *,
                 demonstrations: dict[str, list[J.Demonstration]] | None = None,
                 use_cache: bool = True, progress: bool = True, device: str | None = None
                 ) -> tuple[list[dict], str | None]:
    """Per-candidate rows of every split, and the prompt checksum of the method.

    Each finished question is cached (``use_cache``); on Ctrl-C an
    :class:`nfeval.Interrupted` says how many questions are done.
    ``questions`` maps qid to the question text; ``settings`` say how to score
    (:class:`~nfeval.linkage.settings.LinkageSettings`: the method, the judge's mode,
    prompt and guard, the sampled replies' ``max_tokens``...); ``device`` is where the
    BERTScore methods' encoder runs.
    """
    from tqdm.auto import tqdm

    from nfeval.runcache import RunCache
    from nfeval.errors import Interrupted

    kind = settings.kind
    if kind != "lexical" and model is None:
        raise NfevalError(f"method {settings.method!r} needs a model")
    scorer = _Scorer(settings, model, demonstrations=demonstrations or {},
                     questions=questions, device=device)
    cache = RunCache(f"linkage-file-{kind}", scorer.fields, model=model) if use_cache else None
    rows: list[dict] = []
    todo = []
    for s in splits:
        key = scorer.key(s)
        hit = cache.get(s.qid, key) if cache is not None else None
        if hit is not None:
            rows += [{"qid": s.qid, **r} for r in hit["rows"]]
        else:
            todo.append((s, key))
    done = len(splits) - len(todo)
    bar = tqdm(total=len(splits), initial=done, desc=settings.label, unit="question",
               disable=not progress)
    try:
        for s, key in todo:
            got = scorer.score(s)
            if cache is not None:
                cache.put(s.qid, key, {"rows": got})
            rows += [{"qid": s.qid, **r} for r in got]
            done += 1
            bar.update(1)
    except KeyboardInterrupt:
        bar.close()
        what = ("the finished ones are cached: rerun the same command to resume"
                if cache is not None else "nothing was cached (caching is off)")
        raise Interrupted(f"interrupted after {done} of {len(splits)} questions; {what}") from None
    bar.close()
    order = {s.qid: i for i, s in enumerate(splits)}
    rows.sort(key=lambda r: order[r["qid"]])  # stable: candidates keep their order
    return rows, scorer.prompt_sha


class LinkageHooks:
    """What :func:`score_linkage_file` tells its caller along the way, and how it loads the
    models it is given by name. These defaults say nothing and load with
    :func:`nfeval.models.load_model` (``backend``: the backend of a model named without
    one); the command line prints, checks its output paths once the file is read, and
    loads with its backend options."""

    def __init__(self, backend: str = "hf"):
        self.backend = backend

    def read(self, lf: LinkageFile) -> None:
        """The file is read; nothing is loaded yet."""

    def note(self, text: str) -> None:
        """A line for the user: a line or question left out, reference lists being written."""

    def load(self, name: str, backend: str | None = None, *, judge: bool = False):
        """The model ``name`` on ``backend`` (None: :attr:`backend`); ``judge``: the
        LINKAGE judge that scores label probabilities (the command line picks its dtype)."""
        from nfeval.result import load_model_arg

        return load_model_arg(None, name, backend=backend or self.backend)


def _reference_writers(generator, degraders: Sequence, hooks: LinkageHooks
                       ) -> tuple[Any, list, str, list[str]]:
    """(the golden-answer model, the degraded-answer models, the generator's name for the
    signature, the degraders' names): each given loaded, or as ``BACKEND:NAME`` and loaded
    here (a degrader named as the generator is the generator)."""
    from nfeval.linkage.generated import parse_generator

    def name(m) -> str:
        return str(parse_generator(m)) if isinstance(m, str) else m.info.name

    def load(m):
        if not isinstance(m, str):
            return m
        spec = parse_generator(m)
        return hooks.load(spec.name, spec.backend)

    golden, gen_name = load(generator), name(generator)
    models = [golden if d is generator or (isinstance(d, str) and name(d) == gen_name)
              else load(d) for d in degraders]
    return golden, models or [golden], gen_name, [name(d) for d in degraders]


def _scoring_model(model, settings: LinkageSettings, hooks: LinkageHooks):
    """The loaded judge (judge methods) or base LM (refppl); None for the lexical methods.
    ``model``: loaded, a name or a path, or None for the method's default."""
    kind = settings.kind
    if kind == "lexical":
        return None
    if model is None or isinstance(model, (str, os.PathLike)):
        return hooks.load(str(model or DEFAULT_MODELS[kind]),
                          judge=(settings.method == "linkage" and settings.mode == "prob"))
    return model


def score_linkage_file(source: LinkageFile | str | os.PathLike,
                       settings: LinkageSettings | str = "linkage", model=None, *,
                       generator=None, degraders: Sequence = (), use_cache: bool = True,
                       progress: bool = True, device: str | None = None, limit: int = 0,
                       hooks: LinkageHooks | None = None) -> LinkageScores:
    """Score a LINKAGE answers file with one method (module docstring): read it, write the
    reference lists that are missing, build each question's split and demonstrations,
    load the model, score and sign.

    ``source``: a read file (:func:`read_linkage_file`, :func:`parse_linkage_text`) or a
    path ("-": standard input), whose first ``limit`` valid questions are read (0: all).
    ``settings``: a :class:`~nfeval.linkage.settings.LinkageSettings` (or a method's name:
    its defaults). ``model``: the judge (judge methods) or the base LM (``refppl``), loaded
    or a name (None: :data:`DEFAULT_MODELS`); unused by the lexical methods.
    ``generator`` / ``degraders``: the models that write the reference lists that are
    needed (``references`` "1gt", "0gt", or lines without references), loaded or as
    ``BACKEND:NAME``; ``degraders`` defaults to the generator. ``device``: where the
    BERTScore encoder runs. ``hooks``: what the caller hears, and how named models load
    (:class:`LinkageHooks`). Raises :class:`nfeval.NothingScored` when no question can
    be scored.
    """
    from nfeval.errors import NothingScored

    if not isinstance(settings, LinkageSettings):
        settings = LinkageSettings(settings)
    hooks = hooks if hooks is not None else LinkageHooks()
    method = settings.method
    lf = source if isinstance(source, LinkageFile) else read_linkage_file(source, limit=limit)
    hooks.read(lf)
    if settings.kind == "judge" and settings.prompt is None:  # before any model loads
        J.release_template(method)
    for line in lf.skipped:
        hooks.note(f"skipped {line}")
    if not lf.questions:
        raise NothingScored(f"{lf.name}: no valid question line ({len(lf.skipped)} line(s) "
                            "skipped)")
    need, _ = reference_plan(lf, method, settings.references, generator=generator is not None)
    generated, gen_name = {}, None
    if need:
        golden, writers, gen_name, names = _reference_writers(generator, degraders, hooks)
        hooks.note(f"writing {len(need)} reference list(s) with {gen_name}"
                   + (f" (degraded answers: {', '.join(names)})" if names else ""))
        generated = generate_missing(lf, need, golden, writers, seed=settings.seed,
                                     generation=settings.generation, use_cache=use_cache,
                                     progress=progress)
    splits, sources, skipped = build_splits(lf, method, settings.references, generated,
                                            settings.seed)
    for line in skipped:
        hooks.note(f"skipped {line}")
    if not splits:
        raise NothingScored(f"{lf.name}: no question can be scored with {method} "
                            f"({len(lf.skipped) + len(skipped)} left out)")
    demos = demonstrations_for(lf, splits, sources, settings.shots, settings.seed)
    scorer = _scoring_model(model, settings, hooks)
    rows, sha = score_splits(splits, {q.qid: q.question for q in lf.questions}, settings,
                             scorer, demonstrations=demos, use_cache=use_cache,
                             progress=progress, device=device)
    if settings.prompt is not None:  # one's own prompt: the hash of the text as given
        sha = sha256_text(settings.prompt)
    return finish(lf, splits, rows, sources, settings, scorer, prompt_sha=sha,
                  generator=gen_name, skipped=skipped)
