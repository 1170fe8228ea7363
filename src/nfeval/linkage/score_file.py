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

One object runs it all, for the command line and the Python API alike: a :class:`Linkage`
metric, built once from its :class:`~nfeval.linkage.settings.LinkageSettings` and a model
(models given by name load with its :class:`~nfeval.models.loader.ModelLoader`);
:meth:`Linkage.score_file` reads the file, plans and writes the missing reference lists,
builds each question's split and demonstrations, loads the model, scores and signs.

Usage::

    from nfeval.linkage import Linkage

    res = Linkage("linkage", "smollm2-135m-instruct", shots=2).score_file(
        "examples/linkage_answers.jsonl")
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
    "Linkage",
    "LinkageFile",
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
            res = J.judge_candidates(self.model, GradedQuestion(s.qid, q, []), s.references,
                                     s.candidates, self.cfg,
                                     demonstrations=self.demos.get(s.qid, ()),
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


def _note(notes, text: str) -> None:
    """A line for the user (a line or question left out, reference lists being written) on
    ``notes`` (a text stream; None: said nowhere, the result still names what was left
    out)."""
    if notes is not None:
        print(f"nfeval: {text}", file=notes)


class Linkage:
    """LINKAGE or one of its baselines as one metric, built once from its settings and a model,
    then called on data: ``Linkage(settings, model).score(questions, candidates,
    references)`` on lists in memory (a :class:`~nfeval.result.Result`),
    :meth:`score_file` on an answers file, :attr:`signature` before anything is scored
    (sacrebleu's ``BLEU(**opts).corpus_score()`` is the shape).

    ``settings``: a :class:`~nfeval.linkage.settings.LinkageSettings`, or a method's name
    with its settings as keywords (``Linkage("linkage", shots=3)``), checked here.
    ``model``: the judge (judge methods) or base LM (refppl), loaded or a name (None: the
    method's default, :data:`DEFAULT_MODELS`); the lexical methods take none. Models given
    by name load with ``loader`` (a :class:`~nfeval.models.loader.ModelLoader`), or where
    ``runtime`` says (None: :func:`nfeval.runtime.from_env`); the BERTScore encoder runs on
    its device.

    Usage::

        from nfeval.linkage import Linkage

        metric = Linkage("linkage", "smollm2-135m-instruct", shots=2)
        res = metric.score(["Why is the sky blue?"], [["Rayleigh scattering.", "It is."]],
                           [["Sunlight scatters off air molecules...", "Because."]])
        res.score, metric.signature.as_string()
    """

    def __init__(self, settings: LinkageSettings | str = "linkage", model: Any = None, *,
                 runtime=None, loader=None, **options: Any):
        from nfeval.models.loader import metric_loader

        if "method" in options:  # Linkage(method="bleu"): the settings' first field by name
            if settings != "linkage":
                raise NfevalError("give the method once: as settings or as method=")
            settings = options.pop("method")
        if not isinstance(settings, LinkageSettings):
            settings = LinkageSettings(settings, **options)
        elif options:
            raise NfevalError("give the settings as a LinkageSettings or as keywords, not both")
        if settings.kind == "lexical" and model is not None:
            raise NfevalError(f"method {settings.method} uses no language model: drop model")
        self.settings = settings
        self.loader = metric_loader(runtime, loader)
        self._model = model
        self._loaded = None
        if settings.kind == "judge" and settings.prompt is None:  # before any model loads
            J.release_template(settings.method)

    def __repr__(self) -> str:
        return f"Linkage({self.settings!r})"

    @property
    def model(self):
        """The loaded judge (judge methods) or base LM (refppl); None for the lexical methods.
        Loaded on first use: the listwise judge scoring probabilities takes the loader's
        ``judge_dtype``."""
        st = self.settings
        if st.kind == "lexical":
            return None
        if self._loaded is None:
            self._loaded = self.loader.model(
                self._model, DEFAULT_MODELS[st.kind],
                judge=(st.method == "linkage" and st.mode == "prob"))
        return self._loaded

    @property
    def prompt_sha256(self) -> str | None:
        """The checksum of the prompt the signature names (None: the lexical methods)."""
        if self.settings.prompt is not None:  # one's own prompt: the hash of the text as given
            return sha256_text(self.settings.prompt)
        return _Scorer(self.settings, self.model, demonstrations={}, questions={}).prompt_sha

    @property
    def signature(self):
        """What decides this metric's scores (:class:`~nfeval.signature.Signature`); a
        result's own signature adds the counts of what it scored."""
        from nfeval.linkage.file_results import _signature

        return _signature(self.settings, self.model, n=None, n_questions=None,
                          prompt_sha=self.prompt_sha256, generator=None)

    def score(self, questions: Sequence[str], candidates: Sequence[Sequence[Any]],
              references: Sequence[Sequence[Any]] | None = None, *, grades=None, ids=None,
              use_cache: bool = True, progress: bool = True):
        """Score the candidates of each question (:func:`nfeval.linkage.api.linkage_score`
        says what the lists hold); a :class:`~nfeval.result.Result`, with the correlation
        with ``grades`` when they are given."""
        from nfeval.linkage.memory import linkage_result, memory_file

        lf = memory_file(questions, candidates, references, grades=grades, ids=ids,
                         method=self.settings.method)
        res = self.score_file(lf, use_cache=use_cache, progress=progress)
        return linkage_result(res, "<memory>")

    def _reference_writers(self, generator, degraders: Sequence) -> tuple[Any, list, str,
                                                                           list[str]]:
        """(the golden-answer model, the degraded-answer models, the generator's name for
        the signature, the degraders' names): each given loaded, or as ``BACKEND:NAME`` and
        loaded here (a degrader named as the generator is the generator)."""
        from nfeval.linkage.generated import parse_generator

        def name(m) -> str:
            return str(parse_generator(m)) if isinstance(m, str) else m.info.name

        def load(m):
            if not isinstance(m, str):
                return m
            spec = parse_generator(m)
            return self.loader.load(spec.name, spec.backend)

        golden, gen_name = load(generator), name(generator)
        models = [golden if d is generator or (isinstance(d, str) and name(d) == gen_name)
                  else load(d) for d in degraders]
        return golden, models or [golden], gen_name, [name(d) for d in degraders]

    def score_file(self, source: LinkageFile | str | os.PathLike, *, limit: int = 0,
                   generator=None, degraders: Sequence = (), use_cache: bool = True,
                   progress: bool = True, notes=None) -> LinkageScores:
        """Score a LINKAGE answers file (module docstring): read it, write the reference
        lists that are missing, build each question's split and demonstrations, load the
        model, score and sign.

        ``source``: a read file (:func:`read_linkage_file`, :func:`parse_linkage_text`) or a
        path ("-": standard input), whose first ``limit`` valid questions are read (0: all).
        ``generator`` / ``degraders``: the models that write the reference lists that are
        needed (``references`` "1gt", "0gt", or lines without references), loaded or as
        ``BACKEND:NAME``; ``degraders`` defaults to the generator. ``notes``: a text stream
        for the lines and questions left out and the lists being written (None: none; the
        result names them). Raises :class:`nfeval.NothingScored` when no question can be
        scored.
        """
        from nfeval.errors import NothingScored

        settings = self.settings
        method = settings.method
        lf = source if isinstance(source, LinkageFile) else read_linkage_file(source,
                                                                              limit=limit)
        for line in lf.skipped:
            _note(notes, f"skipped {line}")
        if not lf.questions:
            raise NothingScored(f"{lf.name}: no valid question line ({len(lf.skipped)} "
                                "line(s) skipped)")
        need, _ = reference_plan(lf, method, settings.references,
                                 generator=generator is not None)
        generated, gen_name = {}, None
        if need:
            golden, writers, gen_name, names = self._reference_writers(generator, degraders)
            _note(notes, f"writing {len(need)} reference list(s) with {gen_name}"
                  + (f" (degraded answers: {', '.join(names)})" if names else ""))
            generated = generate_missing(lf, need, golden, writers, seed=settings.seed,
                                         generation=settings.generation, use_cache=use_cache,
                                         progress=progress)
        built = build_splits(lf, method, settings.references, generated, settings.seed)
        splits, sources, skipped = built
        for line in skipped:
            _note(notes, f"skipped {line}")
        if not splits:
            raise NothingScored(f"{lf.name}: no question can be scored with {method} "
                                f"({len(lf.skipped) + len(skipped)} left out)")
        demos = demonstrations_for(lf, splits, sources, settings.shots, settings.seed)
        scorer = self.model
        rows, sha = score_splits(splits, {q.qid: q.question for q in lf.questions}, settings,
                                 scorer, demonstrations=demos, use_cache=use_cache,
                                 progress=progress, device=self.loader.runtime.device)
        if settings.prompt is not None:  # one's own prompt: the hash of the text as given
            sha = sha256_text(settings.prompt)
        return finish(lf, built, rows, settings, scorer, prompt_sha=sha, generator=gen_name)


def score_linkage_file(source: LinkageFile | str | os.PathLike,
                       settings: LinkageSettings | str = "linkage", model=None,
                       **options: Any) -> LinkageScores:
    """``Linkage(settings, model).score_file(source, ...)`` (:class:`Linkage`); ``options``:
    :meth:`Linkage.score_file`'s, and ``runtime`` or ``loader`` for the metric."""
    metric = {k: options.pop(k) for k in ("runtime", "loader") if k in options}
    return Linkage(settings, model, **metric).score_file(source, **options)
