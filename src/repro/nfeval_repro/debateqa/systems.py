"""Answer "systems" and their P.D./D.A. scores, shared by the DebateQA experiments.

A system is a named set of answers ``{question id: answer}``: a model's
generations (:mod:`nfeval_repro.debateqa.generation`) or one of the sample's written answer
sets. :func:`score_systems` scores every answer with P.D. and/or D.A.
through :mod:`nfeval.debateqa.scoring`, so results are cached per answer on disk and
several notebooks scoring the same answers compute them once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import DebateItem, load_debateqa
from nfeval.debateqa.scoring import (DASettings, PDSettings, answers_input, question_file,
                                     score_da, score_pd)
from nfeval_repro.debateqa.generation import Decoding

if TYPE_CHECKING:
    from nfeval.models.base import LanguageModel
    from nfeval_repro.tables import Signature

Systems = Mapping[str, Mapping[int, str]]


@dataclass(frozen=True)
class SystemsConfig:
    """The fields a DebateQA system artefact's ``Config`` starts with (each extends this or
    :class:`ScoredSystemsConfig`, declaring again a field whose default or meaning differs):
    the run profile, the questions and the answering models."""

    #: run profile: embedded (CPU, PyPI-shipped models) or paper
    profile: str = "embedded"
    #: random seed: the question draw and the bootstrap (decoding is greedy)
    seed: int = 0
    #: questions, drawn uniformly at random with seed (a smaller limit takes a subset), 0 for all
    #: (40: every question of the sample, the committed tables)
    limit: int = 40
    #: question set: sample, test, dev or a path to a split file
    split: str = "sample"
    #: generation budget per answer
    max_tokens: int = 256
    #: comma-separated answering models; empty: the profile's
    generators: str = ""


@dataclass(frozen=True)
class ScoredSystemsConfig(SystemsConfig):
    """:class:`SystemsConfig` and the one P.D. backbone and D.A. judge the answers are scored
    with."""

    #: P.D. backbone; empty: the profile's first
    backbone: str = ""
    #: D.A. judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B, the stronger of the dq_t03
    #: pilot, AUROC 0.865 vs 0.23)
    judge: str = ""


def load_questions(split: str = "sample", limit: int = 0, *,
                   seed: int | None = None) -> list[DebateItem]:
    """``limit`` questions (0 = all) of a split, the sample or a file, sorted by id.

    With ``seed=None`` they are the first ``limit`` by id. With a seed they are
    drawn uniformly at random: the first ``limit`` of a permutation of all the
    questions seeded by ``seed`` alone, so a smaller ``limit`` with the same
    seed takes a subset of a larger one's questions (and reuses their stored
    answers and scores).
    """
    items = sorted(load_debateqa(question_file(split)), key=lambda it: it.id)
    if limit < 0:
        raise NfevalError(f"limit must be >= 0, got {limit}.")
    if not limit:
        return items
    if seed is None:
        return items[:limit]
    from nfeval.hashing import derived_seed

    rng = np.random.default_rng(derived_seed(f"questions/{int(seed)}", 16))
    chosen = sorted(rng.permutation(len(items))[:limit])
    return [items[i] for i in chosen]


def system_spec(spec: str) -> tuple[str, float | None]:
    """An answering system's name: a generator's registry name (its answers at the run's
    decoding), or ``<name>:t<temperature>`` for the same model's answers sampled at that
    temperature (top-p 1, each question's seed from the run's): ``(model name, temperature
    or None)``."""
    name, sep, option = str(spec).partition(":")
    if not sep:
        return name, None
    try:
        if not option.startswith("t"):
            raise ValueError
        temperature = float(option[1:])
        if not 0 < temperature <= 2:
            raise ValueError
    except ValueError:
        raise NfevalError(f"system {spec!r}: after ':' give the sampling temperature as "
                          f"t<value> in (0, 2], e.g. {name}:t0.7") from None
    return name, temperature


def collect_systems(items: Sequence[DebateItem], generators: Sequence[str], *,
                    backend: str = "hf", split: str = "sample", written: bool = True,
                    system: str | None = None, suffix: str = "",
                    decoding: Decoding = Decoding(), progress: bool = True,
                    load: Callable[..., LanguageModel] | None = None) -> dict[str, dict[int, str]]:
    """Answers of each generator (cached, see :mod:`nfeval_repro.debateqa.generation`; a
    generator may be a :func:`system_spec`, ``<name>:t<temperature>``) and, with ``written``
    on the project's sample (``split``), its four written answer sets as ``written:<set>``
    systems.

    The answers are sampled with ``decoding`` (a ``<name>:t<temperature>`` system at its
    temperature with top-p 1, the token budget and seed kept), under the ``system`` prompt
    (``None``: the project's p_basic) with ``suffix`` after each question.

    ``load(name, backend=backend)`` loads a generator: an experiment passes its
    profile's :meth:`~nfeval_repro.profiles.Profile.load` (device and dtype); default
    :func:`nfeval.models.load_model` answered from the active item store."""
    from nfeval_repro.debateqa.generation import generate_answers
    from nfeval.models import load_model
    from nfeval_repro.store import stored

    load = load or (lambda *a, **k: stored(load_model(*a, **k)))
    systems: dict[str, dict[int, str]] = {}
    for spec in generators:
        name, sampled = system_spec(spec)
        model = load(name, backend=backend)
        how = (decoding if sampled is None else
               replace(decoding, temperature=sampled, top_p=1.0))
        df = generate_answers(model, items, system=system, suffix=suffix, decoding=how,
                              progress=progress)
        systems[spec] = dict(zip(df["id"].astype(int), df["answer"]))
        del model
    if written and split == "sample":
        from nfeval.data.sample import load_sample

        sample = load_sample()
        for set_name, answers in sample.answers.items():
            systems[f"written:{set_name}"] = {it.id: answers[it.id] for it in items
                                              if it.id in answers}
    return systems


def score_systems(systems: Systems, items: Sequence[DebateItem], split: str, *,
                  pd_models: Mapping[str, object] = {}, judges: Mapping[str, object] = {},
                  variant: str = "paper", restate: str | None = None, da_mode: str = "prob",
                  progress: bool = True) -> pd.DataFrame:
    """Long table ``system, id, metric, evaluator, score`` (metric "pd" or "da").

    ``pd_models``/``judges``: {label: loaded model}. Empty answers get no row
    (counted by the caller from the systems).
    """
    by_id = {it.id: it for it in items}
    path = question_file(split)
    frames = []
    for system, answers in systems.items():
        inputs = answers_input(answers, by_id, path, name=system)
        if not inputs.answers:
            continue
        for label, lm in pd_models.items():
            df = score_pd(inputs, lm, PDSettings(variant, restate), progress=progress)
            frames.append(pd.DataFrame({"system": system, "id": df["id"], "metric": "pd",
                                        "evaluator": label, "score": df["pd"]}))
        for label, judge in judges.items():
            df = score_da(inputs, judge, DASettings(mode=da_mode), progress=progress)
            frames.append(pd.DataFrame({"system": system, "id": df["id"], "metric": "da",
                                        "evaluator": label, "score": df["da"]}))
    if not frames:
        raise NfevalError("score_systems: nothing to score (no answers, or no models given).")
    return pd.concat(frames, ignore_index=True)


def split_systems(frame: pd.DataFrame, columns: Sequence[str], sep: str = "|") -> pd.DataFrame:
    """``frame`` with its ``system`` names ``"<a><sep><b>"`` split into ``columns``
    (strings; e.g. ``generator`` and ``prompt`` of ``"smollm2|basic"``)."""
    out = frame.copy()
    out[list(columns)] = out["system"].str.split(sep, expand=True)
    return out


def length_rows(systems: Systems, metric: str, evaluator: str = "words") -> pd.DataFrame:
    """Every answer's length in words as score rows ``system, id, metric, evaluator,
    score`` (the long form of :func:`score_systems`)."""
    return pd.DataFrame([{"system": s, "id": q, "metric": metric, "evaluator": evaluator,
                          "score": word_count(a)}
                         for s, ans in systems.items() for q, a in ans.items()])


def metric_signatures(pd_models: Mapping[str, LanguageModel],
                      judges: Mapping[str, LanguageModel], *, seed: int, n: int,
                      pd_prompt: str | None = None, da_prompt: str | None = None,
                      pd_extra: Mapping[str, object] | None = None) -> list[Signature]:
    """Signatures of the scores of :func:`score_systems`: P.D. (paper variant) per
    backbone, then D.A. (``prob`` mode) per judge, each with its model, the seed and the
    ``n`` questions. ``pd_prompt``/``da_prompt``: the restate prompt / the judge's
    template, recorded by checksum; ``pd_extra``: what else decided the P.D. rows
    (e.g. the retrieval of the RAG answers)."""
    from nfeval.hashing import sha256_text
    from nfeval_repro.tables import Signature

    def sha(text: str | None) -> str | None:
        return sha256_text(text) if text is not None else None

    return ([Signature(metric="perspective_diversity", variant="paper", model=m.info.as_dict(),
                       prompt_sha256=sha(pd_prompt), seed=seed, n=n, extra=dict(pd_extra or {}))
             for m in pd_models.values()]
            + [Signature(metric="dispute_awareness", variant="prob", model=m.info.as_dict(),
                         prompt_sha256=sha(da_prompt), seed=seed, n=n)
               for m in judges.values()])


def system_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean score per system, metric and evaluator, with the answers counted."""
    g = scores.groupby(["system", "metric", "evaluator"])["score"]
    return g.agg(mean="mean", n="count").reset_index()


LOWER_IS_BETTER = {"pd": True, "da": False}


def system_ranks(means: pd.DataFrame) -> pd.DataFrame:
    """Rank systems (1 = best) per metric and evaluator: P.D. lower is better, D.A. higher."""
    out = means.copy()
    out["rank"] = np.nan
    for (metric, _ev), idx in out.groupby(["metric", "evaluator"]).groups.items():
        asc = LOWER_IS_BETTER[metric]
        out.loc[idx, "rank"] = out.loc[idx, "mean"].rank(ascending=asc, method="average")
    return out


def normalized_rank(means: pd.DataFrame) -> pd.DataFrame:
    """Per system and metric, the average rank over evaluators rescaled to [0, 1]
    (0 = ranked first by every evaluator, 1 = last): (mean rank - 1) / (n - 1)."""
    ranks = system_ranks(means)
    n = ranks.groupby(["metric", "evaluator"])["system"].transform("count")
    ranks["norm"] = (ranks["rank"] - 1) / (n - 1).where(n > 1, math.nan)
    return ranks.groupby(["system", "metric"])["norm"].mean().rename("norm_rank").reset_index()


def znorm_ranking(means: pd.DataFrame, ks: Sequence[float], *, pd_evaluator: str,
                  da_evaluator: str) -> pd.DataFrame:
    """Paper Figure 7: systems ranked by k * Z(-P.D.) + Z(D.A.) for each k.

    P.D. is negated before z-normalization so that higher is better for both
    terms. Returns ``system, k, combined, rank``.
    """
    def column(metric: str, evaluator: str) -> pd.Series:
        part = means[(means.metric == metric) & (means.evaluator == evaluator)]
        return part.set_index("system")["mean"]

    pdm, dam = column("pd", pd_evaluator), column("da", da_evaluator)
    common = pdm.index.intersection(dam.index)
    if len(common) < 2:
        raise NfevalError("znorm_ranking needs at least two systems scored by both metrics.")

    def z(s: pd.Series) -> pd.Series:
        sd = s.std(ddof=0)
        return (s - s.mean()) / sd if sd > 0 else s * 0.0

    zp, zd = z(-pdm[common]), z(dam[common])
    rows = []
    for k in ks:
        comb = k * zp + zd
        rank = comb.rank(ascending=False, method="min")
        rows += [{"system": s, "k": k, "combined": float(comb[s]), "rank": int(rank[s])}
                 for s in common]
    return pd.DataFrame(rows)


def kendall_matrix(means: pd.DataFrame, metric: str, by: str = "evaluator") -> pd.DataFrame:
    """Pairwise Kendall tau between the system rankings of each ``by`` value."""
    from scipy.stats import kendalltau

    sub = means[means.metric == metric].pivot(index="system", columns=by, values="mean").dropna()
    cols = list(sub.columns)
    mat = pd.DataFrame(np.eye(len(cols)), index=cols, columns=cols)
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            tau = kendalltau(sub[a], sub[b]).statistic
            mat.loc[a, b] = mat.loc[b, a] = tau
    return mat


def word_count(text: str) -> int:
    return len(text.split())


VALIDITY_ORDER = ("written:balanced", "written:one_sided", "written:off_topic")


def pd_validity_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """P.D. on the sample's written sets, whose order is known: per backbone, the share
    of questions where the balanced answer scores below the one-sided one, the
    one-sided below the off-topic one, and both, each with its Wilson interval over
    questions. Empty when the written sets were not scored. Columns ``system``
    ("__validity__"), ``metric, evaluator, quantity, ours, ci_low, ci_high, n_questions``.
    """
    from nfeval.metrics.intervals import proportion_interval

    cols = ["system", "metric", "evaluator", "quantity", "ours", "ci_low", "ci_high",
            "n_questions"]
    sub = scores[(scores.metric == "pd") & scores.system.isin(VALIDITY_ORDER)]
    per_q = sub.pivot_table(index=["evaluator", "id"], columns="system", values="score")
    if not set(VALIDITY_ORDER) <= set(per_q.columns):
        return pd.DataFrame(columns=cols)
    rows = []
    for ev, part in per_q.dropna(subset=list(VALIDITY_ORDER)).groupby(level="evaluator",
                                                                       sort=False):
        b, o, f = (part[s] for s in VALIDITY_ORDER)
        for name, ok in (("share balanced<one_sided", b < o), ("share one_sided<off_topic", o < f),
                         ("share balanced<one_sided<off_topic", (b < o) & (o < f))):
            iv = proportion_interval(int(ok.sum()), int(len(ok)))
            rows.append({"system": "__validity__", "metric": "pd", "evaluator": ev,
                         "quantity": name, **iv.columns()})
    return pd.DataFrame(rows, columns=cols)
