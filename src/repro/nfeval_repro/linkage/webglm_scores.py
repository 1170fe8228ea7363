"""LINKAGE Table 5 (WebGLM): the items and every row's per-candidate scores.

The items are fixed (:func:`webglm_sample`: each question's three graded
answers as candidates, its four generated references ``ground3`` ..
``ground0`` as a graded list, :func:`nfeval_repro.linkage.evaluation.
webglm_split`). Every row's scores go into one long per-candidate frame
(:data:`nfeval_repro.linkage.same_items.FRAME_COLUMNS`, ``dataset`` =
``webglm``): the automatic rows against ``ground3`` (:func:`automatic_frame`),
answer length (:func:`length_frame`, a row beyond the paper) and the LLM
judges with the graded list (:func:`judge_frame`). :mod:`nfeval.linkage.
experiments.table5` turns that frame into the table.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedQuestion
from nfeval.hashing import sha256_text
from nfeval_repro.linkage.evaluation import JudgeSample, unparsed_policy, webglm_split
from nfeval_repro.linkage.same_items import FRAME_COLUMNS, lexical_frame
from nfeval_repro.linkage.webglm_hits import AUTOMATIC_ROWS, DATASET, JUDGE_ROWS, ROW_POSITIONS
from nfeval.linkage.judges import (
    JudgeConfig,
    judge_questions,
    load_fewshot_template,
    release_template,
)
from nfeval.linkage.lexical import method_signature, split_scores
from nfeval_repro.store import cached_steps
from nfeval_repro.tables import Signature

__all__ = ["automatic_frame", "automatic_signatures", "judge_frame", "length_frame",
           "webglm_sample"]


def webglm_sample(questions: Sequence[GradedQuestion], limit: int = 0) -> JudgeSample:
    """Every question's split (:func:`webglm_split`), the first ``limit`` judged (0: all).

    WebGLM's candidates and references are fixed (three answers, four
    generated references per question): nothing is drawn; file order.
    """
    splits = [webglm_split(q) for q in questions]
    judged = splits[:limit] if limit > 0 else splits
    return JudgeSample(splits, judged, len(questions), 0)


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def automatic_frame(questions: Sequence[GradedQuestion], splits, *,
                    methods: Sequence[str] = AUTOMATIC_ROWS, embedder: str | None = None,
                    num_layers: int | None = 6, device: str | None = None) -> pd.DataFrame:
    """Per-candidate scores of the automatic rows against ``ground3`` (the splits' best reference).

    :func:`nfeval.linkage.lexical.split_scores` with ``candidates="rest"``:
    the three graded answers, each against the one reference the release's
    rule picks from ``ground3..ground0`` (the only grade-3 one, ``ground3``).
    ``rougeL`` is ``rouge-score``'s F1, ``rougeL-release`` the release's
    ``rouge`` package (:func:`nfeval.linkage.lexical.rouge_release`); ``device`` runs the
    BERTScore and [CLS] encoders.
    """
    unknown = [m for m in methods if m not in AUTOMATIC_ROWS]
    if unknown:
        raise NfevalError(f"unknown automatic rows {unknown}; use {list(AUTOMATIC_ROWS)}.")
    frames = []
    plain = [m for m in methods if m != "rougeL-release"]
    if plain:
        frames.append(split_scores(splits, questions, methods=plain, candidates="rest",
                                   rouge="rouge-score", embedder=embedder,
                                   num_layers=num_layers, device=device, steps=cached_steps))
    if "rougeL-release" in methods:
        frames.append(split_scores(splits, questions, methods=("rougeL",), candidates="rest",
                                   rouge="release").assign(method="rougeL-release"))
    scores = pd.concat(frames, ignore_index=True)
    order = {m: i for i, m in enumerate(methods)}
    scores = scores.sort_values("method", key=lambda c: c.map(order), kind="stable")
    return lexical_frame(scores, dataset=DATASET, label="all")


def automatic_signatures(methods: Sequence[str] = AUTOMATIC_ROWS, *, seed: int, n: int,
                         embedder: str | None = None, num_layers: int | None = 6
                         ) -> list[Signature]:
    """The signatures of :func:`automatic_frame`'s rows (reference ``ground3``)."""
    return [method_signature("rougeL" if m == "rougeL-release" else m, pattern="ground3",
                             seed=seed, n=n, candidates="rest",
                             rouge="release" if m == "rougeL-release" else "rouge-score",
                             embedder=embedder, num_layers=num_layers) for m in methods]


def length_frame(splits) -> pd.DataFrame:
    """Answer length in whitespace words as a score (longer = better; a row beyond the paper)."""
    return _frame([{"dataset": DATASET, "sample": "all", "mode": "", "method": "length",
                    "our_judge": "", "qid": s.qid, "doc_id": c.doc_id, "grade": c.grade,
                    "score": float(len(c.text.split())), "unparsed": 0}
                   for s in splits for c in s.candidates])


def judge_frame(model, questions: Sequence[GradedQuestion], sample: JudgeSample, *, row: str,
                mode: str, seed: int, shots: int = 0, unparsed: str = "drop",
                progress: bool = False) -> tuple[pd.DataFrame, Signature, float]:
    """Per-candidate scores of one judge row of :data:`JUDGE_ROWS` on ``sample.judged``.

    The references are the graded list ``ground3, ground2, ground1, ground0``
    (grades 3..0); LINKAGE shows ``shots`` demonstrations from the other
    questions (0: the release's 0-shot prompt). Returns the frame, the row's
    signature and the wall seconds it took (near 0 when the item store
    already held every output).
    """
    if row not in JUDGE_ROWS:
        raise NfevalError(f"unknown WebGLM judge row {row!r}; use one of {list(JUDGE_ROWS)}.")
    method = JUDGE_ROWS[row]
    n_shots = shots if method == "linkage" else 0
    cfg = JudgeConfig(method=method, mode=mode, seed=seed,
                      unparsed=unparsed_policy(unparsed, method),
                      positions=ROW_POSITIONS.get(row, "random"))
    started = time.perf_counter()
    results = judge_questions(model, questions, sample.judged, cfg, shots=n_shots,
                              demonstration_splits=sample.splits, progress=progress)
    seconds = time.perf_counter() - started
    by_qid = {s.qid: s for s in sample.judged}
    out = []
    for r in results:
        bad = [0] * len(r.scores)
        for j in r.judgments:
            bad[j.candidate] += not j.parsed
        for c, score, b in zip(by_qid[r.qid].candidates, r.scores, bad):
            out.append({"dataset": DATASET, "sample": "all", "mode": mode, "method": row,
                        "our_judge": model.info.name, "qid": r.qid, "doc_id": c.doc_id,
                        "grade": c.grade, "score": score, "unparsed": b})
    sig = Signature(
        metric=f"linkage-judge/{row}", variant=f"{method}-{mode}", model=model.info.as_dict(),
        prompt_sha256=sha256_text(release_template(method)
                                  + (load_fewshot_template().sha256 if n_shots else "")),
        seed=seed, n=len(sample.judged),
        extra={"dataset": DATASET, "references": "ground3..ground0", "shots": n_shots,
               "unparsed": str(cfg.unparsed), "positions": cfg.positions})
    return _frame(out), sig, seconds
