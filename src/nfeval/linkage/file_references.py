"""The reference lists and demonstrations of a LINKAGE answers file (``nfeval linkage``).

Which questions need a generated list (:func:`reference_plan`), writing them
(:func:`generate_missing`), each question's :class:`~nfeval.linkage.references.ReferenceSplit`
(:func:`build_splits`) and its n-shot demonstrations from the file's other questions
(:func:`demonstrations_for`). :func:`nfeval.linkage.score_file.score_linkage_file` runs
them in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer
from nfeval.linkage import judges as J
from nfeval.linkage.file_format import FileQuestion, LinkageFile, needs_references
from nfeval.linkage.methods import check_references
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.settings import GenerationSettings

__all__ = ["build_splits", "demonstrations_for", "generate_missing", "ground_truth",
           "reference_plan"]


def reference_plan(lf: LinkageFile, method: str, references: str = "file",
                   generator: bool = False) -> tuple[dict[str, str], list[str]]:
    """({qid: "1gt" | "0gt"} for the questions whose list must be generated, reasons for
    the questions that cannot be scored), without generating anything."""
    check_references(references)
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
                     *, seed: int = 0, generation: GenerationSettings = GenerationSettings(),
                     use_cache: bool = True, progress: bool = True) -> dict[str, Any]:
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
                seed=seed, generation=generation, use_cache=use_cache, progress=progress)
        except KeyboardInterrupt:
            from nfeval.errors import Interrupted

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
