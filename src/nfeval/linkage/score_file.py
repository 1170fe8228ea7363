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

Usage::

    from nfeval.linkage.score_file import read_linkage_file, score_linkage_file
    from nfeval.models import load_model

    lf = read_linkage_file("examples/linkage_answers.jsonl")
    res = score_linkage_file(lf, "linkage", load_model("smollm2-135m-instruct"))
    res.table          # one row per candidate: score, rank, distribution, ...
    res.correlations   # Kendall / Spearman / Pearson with the human grades, 95% intervals
    res.signature.as_string()
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage import judges as J
from nfeval.linkage import lexical as LX
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.file_format import (COLUMNS, DEFAULT_MODELS, JUDGE_METHODS, METHODS,
                                        REFERENCE_SOURCES, FileQuestion, LinkageFile,
                                        method_kind, method_label, needs_references,
                                        parse_linkage_text, read_linkage_file)
from nfeval.linkage.file_results import LinkageScores, finish

__all__ = [
    "COLUMNS",
    "DEFAULT_MODELS",
    "JUDGE_METHODS",
    "METHODS",
    "REFERENCE_SOURCES",
    "FileQuestion",
    "LinkageFile",
    "LinkageScores",
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


# --------------------------------------------------------------------------- reference lists

def reference_plan(lf: LinkageFile, method: str, references: str = "file",
                   generator: bool = False) -> tuple[dict[str, str], list[str]]:
    """({qid: "1gt" | "0gt"} for the questions whose list must be generated, reasons for
    the questions that cannot be scored), without generating anything."""
    if references not in REFERENCE_SOURCES:
        raise NfevalError(f"references must be one of {', '.join(REFERENCE_SOURCES)}, "
                          f"got {references!r}")
    if not needs_references(method):
        return {}, []
    if references != "file" and not generator:
        raise NfevalError(f"--references {references} writes the reference lists with a "
                          "generator: pass --generator (e.g. llama:qwen2.5-coder-0.5b-instruct)")
    need: dict[str, str] = {}
    skipped: list[str] = []
    for q in lf.questions:
        if references == "0gt":
            need[q.qid] = "0gt"
        elif references == "1gt":
            if q.references:
                need[q.qid] = "1gt"
            else:
                skipped.append(f"line {q.line}: question {q.qid} has no reference to serve "
                               "as the one ground truth of --references 1gt")
        elif not q.references:
            if generator:
                need[q.qid] = "0gt"
            else:
                skipped.append(f"line {q.line}: question {q.qid} has no references; add some, "
                               "or pass --generator to write a LINKAGE-0GT list")
    return need, skipped


def ground_truth(q: FileQuestion) -> GradedAnswer:
    """LINKAGE-1GT's one ground truth: the first reference of the highest grade."""
    top = max(r.grade for r in q.references)
    return next(r for r in q.references if r.grade == top)


def generate_missing(lf: LinkageFile, need: dict[str, str], golden_model, degraders: Sequence,
                     *, seed: int = 0, attempts: int = 2, golden_tokens: int = 256,
                     degraded_tokens: int = 512, use_cache: bool = True,
                     progress: bool = True) -> dict[str, Any]:
    """Generated reference lists (:class:`~nfeval.linkage.generated.GeneratedReferences`)
    of the questions in ``need``, by qid; cached, so a rerun writes nothing again."""
    from nfeval.linkage.generated import generate_reference_lists

    out: dict[str, Any] = {}
    by_qid = {q.qid: q for q in lf.questions}
    for mode in ("1gt", "0gt"):
        qs = [by_qid[qid] for qid, m in need.items() if m == mode]
        if not qs:
            continue
        gts = {q.qid: ground_truth(q) for q in qs} if mode == "1gt" else None
        try:
            lists = generate_reference_lists(
                golden_model, list(degraders), [q.graded_question() for q in qs], gts,
                seed=seed, attempts=attempts, golden_tokens=golden_tokens,
                degraded_tokens=degraded_tokens, use_cache=use_cache, progress=progress)
        except KeyboardInterrupt:
            from nfeval import Interrupted

            raise Interrupted("interrupted while writing reference lists; the finished ones "
                              "are cached" + (": rerun the same command to resume"
                                              if use_cache else "")) from None
        out.update({r.qid: r for r in lists})
    return out


def build_splits(lf: LinkageFile, method: str, references: str = "file",
                 generated: dict[str, Any] | None = None, seed: int = 0
                 ) -> tuple[list[ReferenceSplit], dict[str, str], list[str]]:
    """(one split per scorable question, the source of each list by qid, reasons for
    the questions left out). The split's candidates are the file's, in order."""
    generated = generated or {}
    need, skipped = reference_plan(lf, method, references, generator=bool(generated))
    splits, sources = [], {}
    for q in lf.questions:
        if not needs_references(method):
            splits.append(ReferenceSplit(q.qid, "-", seed, (), q.candidates))
            sources[q.qid] = "none"
            continue
        if q.qid in need:
            g = generated.get(q.qid)
            if g is None:
                skipped.append(f"line {q.line}: question {q.qid}: no reference list was "
                               "generated")
                continue
            if not g.ok:
                skipped.append(f"line {q.line}: question {q.qid}: the generator wrote no "
                               "golden answer, so there is no reference list")
                continue
            refs = g.references()
            src = need[q.qid]
        elif q.references:
            refs, src = q.references, "file"
        else:
            continue  # listed by reference_plan
        pattern = "".join(str(r.grade) for r in refs)
        splits.append(ReferenceSplit(q.qid, pattern, seed, tuple(refs), q.candidates))
        sources[q.qid] = f"{src}:{pattern}"
    return splits, sources, skipped


def demonstrations_for(lf: LinkageFile, splits: Sequence[ReferenceSplit],
                       sources: dict[str, str], shots: int, seed: int = 0
                       ) -> dict[str, list[J.Demonstration]]:
    """``shots`` LINKAGE demonstrations per scored question, drawn from the file's other
    questions (:func:`~nfeval.linkage.judges.select_demonstrations`).

    A question can serve when its reference list has real grades (given in
    the file, or a generated list) and some candidate has an integer human
    grade on that scale; only such candidates are shown, at the rank their
    grade gives them among the references.
    """
    if shots <= 0:
        return {}
    graded_refs = {q.qid for q in lf.questions if q.graded_references}
    pool = []
    for s in splits:
        real = s.qid in graded_refs or not sources.get(s.qid, "").startswith("file")
        cands = tuple(c for c in s.candidates
                      if isinstance(c.grade, int) and not isinstance(c.grade, bool))
        if real and s.references and cands:
            pool.append(ReferenceSplit(s.qid, s.pattern, s.seed, s.references, cands))
    questions = [q.graded_question() for q in lf.questions]
    out = {}
    for s in splits:
        others = sum(p.qid != s.qid for p in pool)
        if others < shots:
            raise NfevalError(
                f"--shots {shots}: question {s.qid} has only {others} other question(s) that "
                "can serve as a demonstration (graded references and a candidate with an "
                "integer grade); lower --shots or add graded questions")
        out[s.qid] = J.select_demonstrations(s.qid, questions, pool, shots, seed)
    return out


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

    def __init__(self, method: str, model, *, mode: str, shots: int, seed: int,
                 unparsed: str | float, positions: str, embedder: str | None, rouge: str,
                 demonstrations: dict[str, list[J.Demonstration]], questions: dict[str, str],
                 max_tokens: int = J.SAMPLING["max_tokens"], device: str | None = None,
                 prompt: str | None = None, guard: bool = False):
        self.method, self.model, self.mode, self.shots = method, model, mode, shots
        self.device = device
        self.kind = method_kind(method)
        self.demos = demonstrations
        self.questions = questions
        self.embedder, self.rouge = embedder, rouge
        if self.kind == "judge":
            self.cfg = J.JudgeConfig(method=method, mode=mode, unparsed=unparsed,
                                     positions=positions, seed=seed, max_tokens=max_tokens,
                                     guard=guard)
            self.templates = {"fewshot": J.load_fewshot_template()} if shots else {}
            if prompt is not None:  # a judge prompt of one's own
                from nfeval.linkage.prompts import check_template, template_key

                self.templates[template_key(method)] = check_template(method, prompt)
            else:
                prompt = J.release_template(method)
            self.prompt_sha = sha256_text(prompt + (self.templates["fewshot"].sha256
                                                    if shots else ""))
            self.fields = {"model": model.info.cache_fields(), "config": self.cfg.as_dict(),
                           "shots": shots, "prompt": self.prompt_sha}
        elif prompt is not None:
            raise NfevalError(f"a judge prompt is for the LLM judge methods, not {method}")
        elif guard:
            raise NfevalError(f"--guard is for the LLM judge methods, not {method} (which no "
                              "text can address)")
        elif self.kind == "refppl":
            from nfeval.linkage.refppl import PROMPT
            from nfeval.prompts import prompt_text

            self.template = prompt_text(PROMPT)
            self.prompt_sha = sha256_text(self.template)
            self.fields = {"model": model.info.cache_fields(), "prompt": self.prompt_sha}
        else:
            self.prompt_sha = None
            self.fields = {"method": method, "rouge": rouge,
                           "embedder": LX.resolve_name(embedder),
                           "versions": [LX._version(p) for p in ("rouge-score", "nltk",
                                                                  "bert-score")]}

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
        return [{"candidate_id": c.doc_id, "score": float(v), "unparsed": False,
                 "n_outputs": 1, "dist": None, "raw": None,
                 "detail": json.dumps({"ground_truth": gt.doc_id})}
                for c, v in zip(s.candidates, df["score"])]


def score_splits(splits: Sequence[ReferenceSplit], questions: dict[str, str], method: str,
                 model=None, *, mode: str = "prob", shots: int = 0, seed: int = 0,
                 unparsed: str | float = "drop", positions: str = "random",
                 embedder: str | None = None, rouge: str = "rouge-score",
                 demonstrations: dict[str, list[J.Demonstration]] | None = None,
                 max_tokens: int = J.SAMPLING["max_tokens"],
                 use_cache: bool = True, progress: bool = True, device: str | None = None,
                 prompt: str | None = None, guard: bool = False
                 ) -> tuple[list[dict], str | None]:
    """Per-candidate rows of every split, and the prompt checksum of the method.

    Each finished question is cached (``use_cache``); on Ctrl-C an
    :class:`nfeval.Interrupted` says how many questions are done.
    ``questions`` maps qid to the question text; ``max_tokens`` bounds a
    sampled reply (judge methods, ``sample`` mode; the paper's 512 by default);
    ``device`` is where the BERTScore methods' encoder runs; ``prompt`` is a
    judge prompt of one's own (judge methods; default the release's); ``guard`` shows the
    judge each candidate as quoted data (:mod:`nfeval.guard`).
    """
    from tqdm.auto import tqdm

    from nfeval.runcache import RunCache
    from nfeval import Interrupted

    kind = method_kind(method)
    if kind != "lexical" and model is None:
        raise NfevalError(f"method {method!r} needs a model")
    if shots and method != "linkage":
        raise NfevalError("--shots (demonstrations) is for method linkage only")
    scorer = _Scorer(method, model, mode=mode, shots=shots, seed=seed, unparsed=unparsed,
                     positions=positions, embedder=embedder, rouge=rouge,
                     demonstrations=demonstrations or {}, questions=questions,
                     max_tokens=max_tokens, device=device, prompt=prompt, guard=guard)
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
    bar = tqdm(total=len(splits), initial=done, desc=method_label(method, mode, shots),
               unit="question", disable=not progress)
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


def score_linkage_file(lf: LinkageFile, method: str = "linkage", model=None, *,
                       mode: str = "prob", shots: int = 0, seed: int = 0,
                       references: str = "file", generator=None, degraders: Sequence = (),
                       generation: dict[str, Any] | None = None,
                       unparsed: str | float = "drop", positions: str = "random",
                       embedder: str | None = None, rouge: str = "rouge-score",
                       max_tokens: int = J.SAMPLING["max_tokens"],
                       use_cache: bool = True, progress: bool = True,
                       device: str | None = None, prompt: str | None = None,
                       guard: bool = False) -> LinkageScores:
    """Score a read file (:func:`read_linkage_file`) with one method (module docstring).

    ``model``: the judge (judge methods) or the base LM (``refppl``); None
    for the lexical methods. ``generator`` / ``degraders``: loaded models
    that write the reference lists that are needed (``references`` "1gt",
    "0gt", or lines without references); ``degraders`` defaults to the
    generator; ``generation`` passes options to
    :func:`~nfeval.linkage.generated.generate_reference_lists` (``attempts``,
    ``golden_tokens``, ``degraded_tokens``).
    """
    need, _ = reference_plan(lf, method, references, generator=generator is not None)
    generated = {}
    if need:
        generated = generate_missing(lf, need, generator, list(degraders) or [generator],
                                     seed=seed, use_cache=use_cache, progress=progress,
                                     **(generation or {}))
    splits, sources, skipped = build_splits(lf, method, references, generated, seed)
    demos = demonstrations_for(lf, splits, sources, shots, seed) if method == "linkage" else {}
    rows, sha = score_splits(splits, {q.qid: q.question for q in lf.questions}, method, model,
                             mode=mode, shots=shots, seed=seed, unparsed=unparsed,
                             positions=positions, embedder=embedder, rouge=rouge,
                             demonstrations=demos, max_tokens=max_tokens,
                             use_cache=use_cache, progress=progress, device=device,
                             prompt=prompt, guard=guard)
    gen_name = generator.info.name if generator is not None and need else None
    return finish(lf, splits, rows, sources, method, model, mode=mode, shots=shots, seed=seed,
                  prompt_sha=sha, references=references, generator=gen_name,
                  unparsed=unparsed, positions=positions, embedder=embedder, rouge=rouge,
                  skipped=skipped, max_tokens=max_tokens, guard=guard)
