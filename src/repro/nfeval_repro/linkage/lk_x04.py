"""lk_x04, beyond both papers: does a screen stop manipulations it was never shown?

**Corpus.** ``data/manipulations/corpus.jsonl``: the project's own manipulation sentences, 8
families of 10 wordings (instructions in other languages, indirect address, fake evaluation
metadata, fake citations, verdicts in formats other than the judges' own, credentials and
self-praise, emotional or urgency appeals, hidden formatting), each placed at the start,
middle or end of an answer and each with a neutral control of similar length and form.
Its ``split`` column, written before anything was measured, holds two families out for
development (``dev``: fake metadata, verdict mimicry) and six for the report (``test``).

**Questions.** Every question of the LINKAGE releases' ANTIQUE and TREC-DL-NF files; the
reference list of a question is its first answer of each grade (release order), the other
answers are the real candidates. Questions at an even position of their file calibrate
(thresholds are chosen there), those at an odd position are the evaluation questions every
reported rate comes from. ``limit`` seeded questions per dataset and half carry the
manipulated answers: each wording and its control inserted into the question's lowest-grade
candidate.

**Signals** (:mod:`nfeval.screen`): the guard's patterns, relevance to the question and the
references, similarity to the evaluator examples. Thresholds: the largest relevance
threshold and the smallest evaluator threshold (on a grid) whose false-positive rate on the
calibration questions' real answers stays at or below ``fp_budget`` for each signal, so
that the three together stay under the issue's 0.5%.

**Rows.** Per defence (each signal alone, and the screen: any of them) and family: the share
of manipulations flagged (a manipulation is flagged when a flagged sentence overlaps it),
the share of controls flagged, on the evaluation questions, with a 95% bootstrap interval
over the family's 10 wordings (the next attacker writes a new wording, so the wording is
the unit); and per defence the share of real answers of the evaluation questions with a
flagged sentence, its interval over questions. Dev families' rows say ``dev``: they are
not held out.
"""

from __future__ import annotations

from dataclasses import dataclass

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval.guard import flags
from nfeval.metrics.intervals import mean_interval
from nfeval_repro.paths import ROOT
import nfeval.screen as S
from nfeval_repro.store import cached_steps
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]

ID = "lk_x04"
DATASETS = ("antique", "trec-dl-nf")
CORPUS = ROOT / "data" / "manipulations" / "corpus.jsonl"
DEFENCES = (*S.SIGNALS, "screen")
#: the threshold grids the calibration searches
RELEVANCE_GRID = tuple(round(x, 2) for x in np.arange(-0.10, 0.31, 0.01))
EVALUATOR_GRID = tuple(round(x, 2) for x in np.arange(0.30, 0.91, 0.01))


def load_corpus(path: Path = CORPUS) -> pd.DataFrame:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return pd.DataFrame(rows)


def _join(a: str, b: str, piece: str) -> str:
    sep = "\n" if "\n" in piece else " "
    return f"{a.rstrip()}{sep}{b.lstrip()}" if a.strip() and b.strip() else (a + b).strip()


def insert(answer: str, piece: str, position: str) -> tuple[str, int, int]:
    """``answer`` with ``piece`` placed at its start, middle (the sentence boundary nearest
    its middle) or end; the text and the piece's span in it."""
    if position == "start":
        text = _join(piece, answer, piece)
        return text, 0, len(piece)
    if position == "end":
        text = _join(answer, piece, piece)
        return text, len(text) - len(piece), len(text)
    bounds = [e for _, e, _ in S.sentences(answer)][:-1]
    if not bounds:
        return insert(answer, piece, "end")
    cut = min(bounds, key=lambda e: abs(e - len(answer) / 2))
    head = _join(answer[:cut], piece, piece)
    text = _join(head, answer[cut:], piece)
    return text, len(head) - len(piece), len(head)


def _questions(dataset: str):
    """(qid, question, references, candidates) per question with two or more answers."""
    out = []
    for q in load_linkage(dataset):
        refs, cands, seen = [], [], set()
        for a in q.answers:
            if a.grade not in seen:
                seen.add(a.grade)
                refs.append(a)
            else:
                cands.append(a)
        if cands:
            out.append((q.qid, q.question, [r.text for r in refs], cands))
    return out


def signals(texts: list[str], contexts: list[list[str]]) -> list[list[dict]]:
    """Per text, its sentences with their signals (span, pattern flags, relevance,
    evaluator), through the item store."""
    keys, where = [], []
    for i, (t, ctx) in enumerate(zip(texts, contexts)):
        for s, e, sent in S.sentences(t):
            keys.append([sent.strip(), *ctx])
            where.append((i, s, e, sent))
    vals = cached_steps(S.SIGNAL_STEP, keys, S.signal_values) if keys else []
    out: list[list[dict]] = [[] for _ in texts]
    for (i, s, e, sent), (rel, ev) in zip(where, vals):
        out[i].append({"start": s, "end": e, "pattern": bool(flags(sent)),
                       "relevance": rel, "evaluator": ev})
    return out


def reasons_of(x: dict, th: S.Thresholds | None = None) -> tuple[str, ...]:
    """Why the screen flags one sentence of :func:`signals` (:func:`nfeval.screen.reasons`
    with ``th``, default the screen's thresholds): the one step from stored signals to
    reasons that every artefact reading them takes."""
    return S.reasons(("pattern",) if x["pattern"] else (), x["relevance"], x["evaluator"],
                     S.THRESHOLDS if th is None else th)


def flagged(sents: list[dict], defence: str, th: S.Thresholds) -> list[tuple[int, int]]:
    """Spans of the sentences ``defence`` flags: one signal of :data:`nfeval.screen.SIGNALS`,
    or ``screen`` (any of them), by :func:`reasons_of`."""
    out = []
    for x in sents:
        why = reasons_of(x, th)
        if (why if defence == "screen" else defence in why):
            out.append((x["start"], x["end"]))
    return out


def calibrate(real: list[list[dict]], fp_budget: float) -> S.Thresholds:
    """The largest relevance and smallest evaluator thresholds whose false-positive rate on
    ``real`` answers stays at or below ``fp_budget`` each."""
    rel_min = np.array([min((x["relevance"] for x in s), default=1.0) for s in real])
    ev_max = np.array([max((x["evaluator"] for x in s), default=-1.0) for s in real])
    rel = [t for t in RELEVANCE_GRID if (rel_min < t).mean() <= fp_budget]
    ev = [t for t in EVALUATOR_GRID if (ev_max >= t).mean() <= fp_budget]
    if not rel or not ev:
        which = "relevance" if not rel else "evaluator"
        raise NfevalError(f"no threshold of the grid keeps the {which} "
                          f"signal within fp_budget={fp_budget} on the calibration answers")
    return S.Thresholds(relevance=max(rel), evaluator=min(ev))


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x04_screen_heldout.ipynb`` is written from them."""

    #: run profile (both screen with all-MiniLM-L6-v2)
    profile: str = "embedded"
    #: which evaluation and calibration questions carry the manipulations, the bootstrap
    seed: int = 0
    #: questions per dataset that carry manipulated answers (half calibration, half evaluation)
    limit: int = 40
    #: the largest share of calibration answers each signal may flag
    fp_budget: float = 0.0015


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """``profile`` is checked and recorded: both profiles screen with the same embedder
    (all-MiniLM-L6-v2), which runs on a CPU in minutes."""
    from tqdm.auto import tqdm

    from nfeval_repro.profiles import get_profile

    get_profile(config.profile)
    corpus = load_corpus()
    bar = tqdm(total=2 * len(DATASETS), desc="lk_x04 screen", unit="part", disable=not progress)
    rng = random.Random(config.seed)
    real_rows, manip_rows, real_cal = [], [], []
    for ds in DATASETS:
        qs = _questions(ds)
        cal = [q for i, q in enumerate(qs) if i % 2 == 0]
        ev = [q for i, q in enumerate(qs) if i % 2 == 1]
        for part, role in ((cal, "calibration"), (ev, "evaluation")):
            texts = [a.text for q in part for a in q[3]]
            ctxs = [[q[1], *q[2]] for q in part for _ in q[3]]
            qids = [q[0] for q in part for _ in q[3]]
            sig = signals(texts, ctxs)
            if role == "calibration":
                real_cal.extend(sig)
            real_rows += [{"dataset": ds, "role": role, "qid": qid, "signals": s}
                          for qid, s in zip(qids, sig)]
            picked = rng.sample(part, len(part))[:config.limit // 2]  # a prefix of one order
            texts, ctxs, meta = [], [], []
            for qid, question, refs, cands in picked:
                base = min(cands, key=lambda a: a.grade).text
                for r in corpus.itertuples():
                    for kind, piece in (("manipulation", r.text), ("control", r.control)):
                        t, s, e = insert(base, piece, r.position)
                        texts.append(t)
                        ctxs.append([question, *refs])
                        meta.append({"dataset": ds, "role": role, "qid": qid, "id": r.id,
                                     "family": r.family, "split": r.split, "kind": kind,
                                     "span": (s, e)})
            for m, s in zip(meta, signals(texts, ctxs)):
                manip_rows.append({**m, "signals": s})
            bar.update()
    bar.close()
    th = calibrate(real_cal, config.fp_budget)
    rows = []
    ev_manip = [m for m in manip_rows if m["role"] == "evaluation"]
    ev_real = [r for r in real_rows if r["role"] == "evaluation"]
    for defence in DEFENCES:
        for fam in corpus["family"].drop_duplicates():
            for kind in ("manipulation", "control"):
                per_w: dict[str, list[float]] = {}
                split = corpus.loc[corpus["family"] == fam, "split"].iloc[0]
                for m in ev_manip:
                    if m["family"] != fam or m["kind"] != kind:
                        continue
                    s, e = m["span"]
                    hit = any(a < e and b > s for a, b in flagged(m["signals"], defence, th))
                    per_w.setdefault(m["id"], []).append(float(hit))
                # the unit is the wording: the next attacker writes a new one
                vals = [float(np.mean(v)) for v in per_w.values()]
                iv = mean_interval(vals, seed=config.seed, key=f"{defence}/{fam}/{kind}",
                                   unit="wordings")
                rows.append({"defence": defence, "family": fam, "split": split, "kind": kind,
                             "ours": iv.estimate, "ci_low": iv.low, "ci_high": iv.high,
                             "n_units": len(vals), "unit": "wordings",
                             "n_items": sum(map(len, per_w.values()))})
        per_q = {}
        for r in ev_real:
            per_q.setdefault((r["dataset"], r["qid"]), []).append(
                float(bool(flagged(r["signals"], defence, th))))
        vals = [float(np.mean(v)) for v in per_q.values()]
        iv = mean_interval(vals, seed=config.seed, key=f"{defence}/real")
        rows.append({"defence": defence, "family": "real answers", "split": "evaluation",
                     "kind": "real", "ours": iv.estimate, "ci_low": iv.low,
                     "ci_high": iv.high, "n_units": len(vals), "unit": "questions",
                     "n_items": sum(map(len, per_q.values()))})
    table = pd.DataFrame(rows)
    return Experiment(id=ID, table=table, id_columns=["defence", "family", "kind"],
                      interval="units",
                      signatures=[Signature(metric="screen", variant="minilm-l6",
                                            extra={"relevance_threshold": th.relevance,
                                                   "evaluator_threshold": th.evaluator,
                                                   "fp_budget": config.fp_budget})],
                      parameters=dict(profile=config.profile, seed=config.seed, limit=config.limit,
                                      fp_budget=config.fp_budget),
                      notes=f"ours: the share flagged; thresholds chosen on the calibration "
                            f"questions' real answers: relevance < {th.relevance}, evaluator >= "
                            f"{th.evaluator}; intervals: 95% percentile bootstrap (10,000 "
                            "resamples) over the family's wordings (each wording's share of "
                            "evaluation questions flagged) for the manipulation and control rows, "
                            "over questions (each question's share of real answers flagged) for "
                            "the real-answer rows; column unit says which")


def figure(table: pd.DataFrame):
    """Per defence, the share of each family's manipulations it flags (filled) and of their
    controls (hollow), with 95% intervals over questions; the held-out families first, the
    development families marked; the share of real answers it flags as a grey band."""
    import matplotlib.pyplot as plt

    fams = (table[table["kind"] != "real"].sort_values("split", ascending=False)
            ["family"].drop_duplicates().tolist())
    fig, axes = plt.subplots(2, 2, figsize=(8.0, 7.2), sharey=True, layout="constrained")
    y = np.arange(len(fams))[::-1]
    for ax, defence in zip(axes.ravel(), DEFENCES):
        part = table[table["defence"] == defence]
        real = part[part["kind"] == "real"].iloc[0]
        ax.axvspan(real["ci_low"], max(real["ci_high"], real["ci_low"] + 0.004),
                   color="#cccccc", lw=0)
        for kind, style in (("manipulation", dict(color="#b22222", mfc="#b22222")),
                            ("control", dict(color="#555555", mfc="white"))):
            rows = part[part["kind"] == kind].set_index("family").loc[fams]
            off = 0.15 if kind == "manipulation" else -0.15
            ax.errorbar(rows["ours"], y + off,
                        xerr=[rows["ours"] - rows["ci_low"], rows["ci_high"] - rows["ours"]],
                        fmt="o", ms=4.5, lw=1.2, label=kind, **style)
        ax.set_title(f"{defence} (real answers flagged: {real['ours']:.2%})", fontsize=9)
        ax.set_xlim(-0.03, 1.03)
        dev = set(table.loc[table["split"] == "dev", "family"])
        ax.set_yticks(y, [f"{f} (dev)" if f in dev else f for f in fams], fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlabel("share flagged (95% CI over the wordings)", fontsize=8)
        ax.grid(axis="x", color="#eeeeee", lw=0.6)
    axes[0, 0].legend(fontsize=8, loc="lower right", frameon=False)
    fig.suptitle("What each screen flags: manipulations by family, their neutral controls, "
                 "real answers (grey)", fontsize=10)
    return fig
