"""The result of scoring a LINKAGE answer file: per-candidate table, signature, correlations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nfeval.linkage import judges as J
from nfeval.linkage import lexical as LX
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.file_format import COLUMNS, LinkageFile
from nfeval.linkage.settings import LinkageSettings


@dataclass
class LinkageScores:
    """A file's scores: the per-candidate table, its signature, the correlation with
    the human grades (None without grades) and the questions left out."""

    method: str
    label: str
    table: pd.DataFrame
    signature: Any  # nfeval.signature.Signature
    correlations: pd.DataFrame | None
    skipped: list[str]
    n_questions: int

    @property
    def n_candidates(self) -> int:
        return len(self.table)

    @property
    def n_scored(self) -> int:
        return int(self.table["score"].notna().sum())

    @property
    def n_unparsed(self) -> int:
        return int(self.table["unparsed"].sum())

    @property
    def n_cut(self) -> int:
        """Candidates cut from their end to fit the judge's window."""
        return int((self.table["cut_tokens"] > 0).sum())

    def summary(self, name: str) -> str:
        """The one-line summary: what was scored, the mean score and the signature."""
        mean = self.table["score"].mean()
        extra = f", {self.n_unparsed} unparsed" if self.n_unparsed else ""
        nan = self.n_candidates - self.n_scored
        extra += f", {nan} without a score" if nan else ""
        if self.n_cut:
            extra += (f", {self.n_cut} cut to fit the model's window "
                      f"({int(self.table['cut_tokens'].sum())} tokens; column cut_tokens)")
        return (f"File: {name}, {self.label}: {self.n_candidates} candidates of "
                f"{self.n_questions} questions scored{extra}, mean score {mean:.6g} | "
                f"{self.signature.as_string()}")


def _signature(settings: LinkageSettings, model, *, n: int, n_questions: int,
               prompt_sha: str | None, generator: str | None):
    from nfeval.signature import Signature

    method, mode, seed = settings.method, settings.mode, settings.seed
    refs = settings.references if method != "pointwise" else "none"
    if generator and method != "pointwise":
        refs += f"+{generator}"
    extra: dict[str, Any] = {"refs": refs}
    if n_questions is not None:  # None: the metric's signature, before anything is scored
        extra["questions"] = n_questions
    kind = settings.kind
    if kind == "judge":
        extra["unparsed"] = settings.unparsed
        if mode == "generate" and settings.max_tokens != J.SAMPLING["max_tokens"]:
            extra["max_tokens"] = settings.max_tokens
        if method == "pairwise":
            extra["positions"] = settings.positions
        if settings.guard != "off":
            extra["guard"] = settings.guard
        variant = f"{mode}" + (f"-{settings.shots}shot" if method == "linkage" else "")
        info = model.info.as_dict()
        return Signature(metric=method, variant=variant, model=info, dtype=info.get("dtype"),
                         prompt_sha256=prompt_sha, seed=seed, n=n, extra=extra)
    if kind == "refppl":
        info = model.info.as_dict()
        return Signature(metric="refppl", variant="top-grade-mean-nll", model=info,
                         dtype=info.get("dtype"), prompt_sha256=prompt_sha, seed=seed, n=n,
                         extra=extra)
    sig = LX.method_signature(method, pattern="file", seed=seed, n=n, candidates="rest",
                              rouge=settings.rouge, embedder=settings.embedder)
    sig.extra = {**{k: v for k, v in sig.extra.items() if k != "pattern"}, **extra}
    return sig


def finish(lf: LinkageFile, built: tuple[Sequence[ReferenceSplit], dict[str, str],
                                         Sequence[str]],
           rows: list[dict], settings: LinkageSettings, model, *,
           prompt_sha: str | None = None, generator: str | None = None) -> LinkageScores:
    """The table (ranks, grades, list sources), its signature and the correlations.
    ``built``: :func:`~nfeval.linkage.file_references.build_splits`' (splits, each question's
    list source, the questions left out); ``generator``: the name of the model that wrote
    reference lists (None: none was)."""
    splits, sources, skipped = built
    from nfeval.metrics.correlation import correlation_rows

    from nfeval.guard import flags_text

    method, seed = settings.method, settings.seed
    grades = {(q.qid, c.doc_id): c.grade for q in lf.questions for c in q.candidates}
    texts = {(q.qid, c.doc_id): c.text for q in lf.questions for c in q.candidates}
    df = pd.DataFrame(rows)
    if df.empty:
        df = pd.DataFrame(columns=COLUMNS)
    df["method"] = method
    df["grade"] = [grades.get((q, c)) for q, c in zip(df["qid"], df["candidate_id"])]
    df["references"] = [sources.get(q) for q in df["qid"]]
    df["score"] = df["score"].astype(float)
    df["rank"] = (df.groupby("qid", sort=False)["score"]
                  .rank(ascending=False, method="min").astype("Int64"))
    df["unparsed"] = df["unparsed"].astype(bool)
    # tokens cut from a candidate's end to fit the model's window (judge methods) or left
    # out by the encoder's window (BERTScore methods); 0 otherwise
    df["cut_tokens"] = (df["cut_tokens"].fillna(0).astype(int) if "cut_tokens" in df
                        else 0)
    # text addressed to an evaluator or in a judge's verdict format (nfeval.guard.flags)
    df["flags"] = [flags_text(texts.get((q, c), "")) for q, c in zip(df["qid"],
                                                                     df["candidate_id"])]
    df = df[COLUMNS].reset_index(drop=True)
    graded = df[df["grade"].notna()]
    corr = None
    if len(graded):
        frame = graded.assign(grade=graded["grade"].astype(float))[["method", "qid", "grade",
                                                                     "score"]]
        corr = correlation_rows(frame, by=["method"], seed=seed)
    sig = _signature(settings, model, n=int(df["score"].notna().sum()),
                     n_questions=len(splits), prompt_sha=prompt_sha, generator=generator)
    return LinkageScores(method, settings.label, df, sig, corr,
                         list(lf.skipped) + list(skipped), len(splits))
