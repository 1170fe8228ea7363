"""``nfeval meta``: which evaluator agrees best with people on your own graded answers.

Both papers answer one question for their datasets: which automatic evaluator agrees best
with human grades. This module answers it on any graded file, with the same statistics as
the project's tables:

* **agreement** of each evaluator with the grades: per question, the correlation
  (Kendall's tau-b by default; Spearman, Pearson on request) of its scores with the grades
  of that question's candidates, averaged over questions, with a 95% percentile bootstrap
  interval over questions and the number of questions it rests on
  (:func:`nfeval.metrics.correlation.correlation_rows`); a question whose grades or scores
  are all equal has no coefficient and is counted apart;
* **paired differences** of every ordered pair of evaluators on the questions where both
  have a coefficient (:func:`nfeval.metrics.correlation.paired_rows`): A minus B with its
  paired interval;
* **the best and its ties**: the evaluator with the highest mean, and those whose paired
  difference from it has an interval that holds 0 (the data cannot tell them apart);
* **a combination out of sample** (:mod:`nfeval.metrics.combine`): folds
  of questions, the best single method, the best rank average of 2-3 methods and a ridge
  fit chosen on the training folds, scored on the held-out fold; reported as beating the
  best single method only where its paired interval lies above 0;
* **position preference** of pairwise judges (files of ``nfeval linkage --method pairwise
  --mode prob``): the share of pairs whose first slot gets the higher probability, with a
  bootstrap interval over questions (line 0.5);
* warnings: an evaluator whose interval holds 0 is at chance; fewer than 10 questions
  cannot be trusted.

Inputs are long per-candidate frames (``qid``, ``doc_id``, ``grade``, ``score``,
``method``): the per-item CSVs of ``nfeval linkage`` (:func:`read_scores`), or scores
computed here from a graded answers file (:func:`score_methods`). Optional columns
``dataset`` and ``sample`` split the questions into groups, each reported on its own;
``mode`` and ``our_judge`` name the evaluator further (a per-candidate table with those
columns reads as it is and gives its own rows).

Why this file is long: the inputs' checks, the statistics, and the report they make (the
printed table, the readings in words, the forest plot, the JSON) are one command's; split,
each part would import the others.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.metrics.intervals import SMALL_N, small_n_warning

__all__ = ["MetaResult", "evaluate", "meta", "meta_frame", "read_scores", "score_methods"]

COEFFICIENTS = ("kendall", "spearman", "pearson")
#: Columns that split the questions into groups reported apart, and that name the evaluator.
GROUPS = ("dataset", "sample")
QUALIFIERS_BEFORE = ("mode",)
QUALIFIERS_AFTER = ("our_judge", "run")
_STR = {c: str for c in ("qid", "doc_id", "candidate_id", "method", "dataset", "sample", "mode",
                         "our_judge", "run")}


# --------------------------------------------------------------------------- inputs

def read_scores(paths: Sequence[str | Path]) -> pd.DataFrame:
    """The long frame of one or more per-item CSVs (``nfeval linkage`` outputs, or any CSV
    with ``qid``, ``candidate_id`` or ``doc_id``, ``grade``, ``score`` and ``method``)."""
    frames = []
    for p in paths:
        path = Path(p).expanduser()
        try:
            df = pd.read_csv(path, dtype=_STR, keep_default_na=False,
                             na_values={"score": ["", "nan", "NaN"], "grade": ["", "nan", "NaN"]})
        except FileNotFoundError:
            raise NfevalError(f"{path} does not exist") from None
        except (OSError, ValueError) as e:
            raise NfevalError(f"cannot read {path} as CSV: {e}") from None
        if "doc_id" not in df.columns and "candidate_id" in df.columns:
            df = df.rename(columns={"candidate_id": "doc_id"})
        missing = [c for c in ("qid", "doc_id", "grade", "score", "method") if c not in df.columns]
        if missing:
            raise NfevalError(f"{path}: no column {', '.join(missing)}; nfeval meta reads the "
                              "per-item CSVs of nfeval linkage (qid, candidate_id, method, score, "
                              "grade)")
        frames.append(df.assign(_source=str(p)))
    _name_runs(frames, [Path(p) for p in paths])
    return meta_frame(pd.concat(frames, ignore_index=True))


def _name_runs(frames: list[pd.DataFrame], paths: list[Path]) -> None:
    """Where one method is scored in several files (two judges, two prompts, guard on and
    off), tell its runs apart by what differs in their file names (``nfeval linkage`` puts
    every setting that differs from its default there: ``a.linkage.smollm2-135m-instruct``
    against ``a.linkage``), else by their folders; a ``run`` column the evaluator's name
    carries. Files that nothing tells apart are refused."""
    by_method: dict[str, list[int]] = {}
    for i, df in enumerate(frames):
        for m in dict.fromkeys(df["method"]):
            by_method.setdefault(m, []).append(i)
    for m, idx in by_method.items():
        if len(idx) < 2:
            continue
        tokens = [paths[i].name.removesuffix(".csv").split(".") for i in idx]
        common = set.intersection(*(set(t) for t in tokens))
        names = [".".join(x for x in t if x not in common) or "default" for t in tokens]
        if len(set(names)) < len(names):
            names = [str(paths[i].parent) for i in idx]
        if len(set(names)) < len(names):
            dup = [str(paths[i]) for i in idx]
            raise NfevalError(f"{m} is scored by {len(idx)} files that neither their names nor "
                              f"their folders tell apart ({', '.join(dup)}): give each file "
                              "once, or name each run's file after what differs (nfeval "
                              "linkage --out)")
        for i, name in zip(idx, names):
            mine = frames[i]["method"] == m
            frames[i].loc[mine, "run"] = name
    for df in frames:
        if "run" in df.columns:
            df["run"] = df["run"].fillna("")


def meta_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Check a long frame: every candidate graded, one score per evaluator and candidate,
    and every evaluator on the same candidates of its group (a clear error otherwise)."""
    df = frame.copy()
    df["grade"] = pd.to_numeric(df["grade"], errors="coerce")
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    if df.empty:
        raise NfevalError("no scored candidate to compare")
    if df["grade"].isna().any():
        bad = df[df["grade"].isna()].iloc[0]
        raise NfevalError(f"{int(df['grade'].isna().sum())} candidate(s) have no human grade "
                          f"(e.g. question {bad['qid']}, candidate {bad['doc_id']}): meta needs "
                          "a grade on every candidate")
    groups = [c for c in GROUPS if c in df.columns]
    ev = _evaluator_columns(df)
    dup = df.duplicated([*groups, *ev, "qid", "doc_id"])
    if dup.any():
        d = df[dup].iloc[0]
        raise NfevalError(f"{d['method']} scores question {d['qid']}, candidate {d['doc_id']} "
                          "more than once (one file given twice?): give each file once")
    for key, g in (df.groupby(groups, sort=False) if groups else [((), df)]):
        items = {e: set(zip(x["qid"], x["doc_id"])) for e, x in g.groupby(ev, sort=False)}
        first = next(iter(items))
        for e, s in items.items():
            if s != items[first]:
                only = sorted(s ^ items[first])[:3]
                raise NfevalError(f"{_label(e)} and {_label(first)} score different candidates "
                                  f"(e.g. {only}"
                                  f"{' in ' + '/'.join(map(str, np.atleast_1d(key))) if groups else ''}): "
                                  "score the same answers file with every method")
        grades = g.groupby(["qid", "doc_id"])["grade"].nunique()
        if (grades > 1).any():
            q, d = grades[grades > 1].index[0]
            raise NfevalError(f"question {q}, candidate {d} has different grades in different "
                              "files: score the same graded file with every method")
    return df


def _evaluator_columns(df: pd.DataFrame) -> list[str]:
    return ([c for c in QUALIFIERS_BEFORE if c in df.columns] + ["method"]
            + [c for c in QUALIFIERS_AFTER if c in df.columns])


def _label(e) -> str:
    parts = [str(x) for x in np.atleast_1d(e) if str(x) not in ("", "nan")]
    return " ".join(parts) if parts else "?"


def score_methods(answers: str | Path, methods: Sequence[str], *, model: str | None = None,
                  loader=None, limit: int = 0, use_cache: bool = True, progress: bool = True,
                  **settings: Any) -> pd.DataFrame:
    """Score a graded LINKAGE answers file with every method of ``methods`` (names of
    ``nfeval linkage --method``; ``linkage-Nshot``: LINKAGE with N demonstrations), each on
    the same items and through the same cache as ``nfeval linkage``; ``loader`` (a
    :class:`~nfeval.models.loader.ModelLoader`) loads the models, each once, the listwise
    judge in the runtime's dtype like every other (default: the environment's runtime).
    ``settings``: ``seed`` (every method's), and the judge methods' ``prompt`` (a prompt
    text with the method's slots) and ``guard``, as ``nfeval linkage``'s."""
    if bad := sorted(set(settings) - {"seed", "prompt", "guard"}):
        raise NfevalError(f"unknown setting(s) {bad}; use seed, prompt, guard")
    seed, prompt = settings.get("seed", 0), settings.get("prompt")
    guard = settings.get("guard", "off")
    from nfeval.linkage import score_file as SF

    parsed = []
    for m in methods:
        name, shots = m, 0
        if m.startswith("linkage-") and m.endswith("shot") and m[8:-4].isdigit():
            name, shots = "linkage", int(m[8:-4])
        if name not in SF.METHODS:
            import difflib

            near = difflib.get_close_matches(m, [*SF.METHODS, "linkage-3shot"], n=1)
            raise NfevalError(f"unknown method {m!r}" + (f"; did you mean {near[0]!r}?" if near
                                                          else "")
                              + f" (choose from {', '.join(SF.METHODS)}, linkage-Nshot)")
        parsed.append((m, name, shots))
    if len({m for m, _, _ in parsed}) != len(parsed):
        raise NfevalError("a method is named twice in --methods")
    lf = SF.read_linkage_file(answers, limit=limit)
    if not lf.questions:
        raise NfevalError(f"{lf.name}: no valid question line ({len(lf.skipped)} skipped)")
    if loader is None:
        from nfeval.models.loader import ModelLoader
        from nfeval.runtime import from_env

        loader = ModelLoader(from_env())
    models: dict[tuple[str, str], Any] = {}
    frames = []
    left_out: list[str] = []  # every line or question left out, and unparsed items, named
    for label, name, shots in parsed:
        kind = SF.method_kind(name)
        model_obj = None
        if kind != "lexical":
            want = model if (model and kind == "judge") else SF.DEFAULT_MODELS[kind]
            model_obj = models.get((want, kind))
            if model_obj is None:
                model_obj = models[(want, kind)] = loader.load(want)
        judge = kind == "judge"
        settings = SF.LinkageSettings(name, shots=shots, seed=seed,
                                      prompt=prompt if judge else None,
                                      guard=guard if judge else "off")
        res = SF.score_linkage_file(lf, settings, model_obj, use_cache=use_cache,
                                    progress=progress)
        t = res.table.rename(columns={"candidate_id": "doc_id"})
        frames.append(t.assign(method=label)[["qid", "doc_id", "grade", "score", "method"]])
        for x in [*lf.skipped, *res.skipped]:
            if x not in left_out:
                left_out.append(x)
        if res.n_unparsed:
            left_out.append(f"{label}: {res.n_unparsed} candidate(s) unparsed (no score)")
    frame = meta_frame(pd.concat(frames, ignore_index=True))
    frame.attrs["left_out"] = left_out
    return frame


# --------------------------------------------------------------------------- the statistics

@dataclass
class MetaResult:
    """What :func:`meta` found (see the module doc)."""

    rows: pd.DataFrame  # agreement: one row per group, evaluator, coefficient
    pairs: pd.DataFrame  # every ordered pair's paired difference
    per_question: pd.DataFrame  # each question's coefficient per evaluator
    best: pd.DataFrame  # per group and coefficient: the best and what ties with it
    combination: pd.DataFrame  # the out-of-sample combination rows (may be empty)
    position: pd.DataFrame  # pairwise judges' first-slot preference (may be empty)
    coefficients: tuple[str, ...]
    groups: list[str]
    notes: list[str] = field(default_factory=list)
    #: input left out before scoring ("line 4: invalid JSON ...", unparsed items), each named
    left_out: list[str] = field(default_factory=list)

    # ---- words
    def readings(self) -> list[str]:
        """One sentence per group and coefficient."""
        out = []
        for _, b in self.best.iterrows():
            where = f"{b['group']}: " if b["group"] else ""
            coef = b["coefficient"]
            n = int(b["n_questions"])
            best = b["best"]
            ties = [t for t in b["ties"] if t]
            beats = list(b["beats"])
            mine = self._rows_of(b["group"], coef)
            reversing = [r for _, r in mine.iterrows() if r["ci_high"] < 0]
            rev = "".join(f" {r['evaluator']} reverses the grades ({_signed(r['ours'])}, "
                          f"{_signed(r['ci_low'])} to {_signed(r['ci_high'])}, n = "
                          f"{int(r['n_questions'])}): its interval lies below 0, so it ranks "
                          "worse answers higher." for r in reversing)
            if not b["beyond_chance"]:
                out.append(f"{where}on these {n} questions ({coef}), no evaluator agrees with "
                           "the grades beyond chance: no interval lies above 0 (the highest "
                           f"mean, {best}'s {_signed(b['mean'])}, has an interval that holds "
                           f"{'0' if b['ci_low'] <= 0 <= b['ci_high'] else 'only values below 0'}"
                           "), so none can be trusted to rank these answers." + rev
                           + small_n_warning(n))
                continue
            s = f"{where}on these {n} questions ({coef}), {best} agrees best with the grades"
            if b["ci_low"] <= 0:
                s += " (its own interval holds 0)"
            if ties:
                tie_text = ", ".join(f"{t} ({_signed(d)}, {_signed(lo)} to {_signed(hi)})"
                                     for t, d, lo, hi in ties)
                s += f"; the data cannot tell it apart from {tie_text}"
            if beats:
                s += f"; {'they beat' if ties else 'it beats'} {', '.join(beats)}"
            out.append(s + "." + rev + small_n_warning(n))
        for _, c in self.combination.iterrows():
            if c["evaluator"].endswith(" - best single"):
                where = f"{c['group']}: " if c["group"] else ""
                name = c["evaluator"].split(" - ")[0]
                if c["ci_low"] > 0:
                    out.append(f"{where}the {name} combination beats the best single method out "
                               f"of sample ({c['coefficient']} {_signed(c['ours'])}, "
                               f"{_signed(c['ci_low'])} to {_signed(c['ci_high'])}, n = "
                               f"{int(c['n_questions'])}).")
        for _, p in self.position.iterrows():
            lean = ("prefers the first slot" if p["ci_low"] > 0.5 else
                    "prefers the second slot" if p["ci_high"] < 0.5 else
                    "shows no position preference the data can tell")
            out.append(f"{p['evaluator']}: {lean} (first slot higher in {p['ours']:.0%} of "
                       f"pairs, {p['ci_low']:.0%} to {p['ci_high']:.0%}, n = "
                       f"{int(p['n_questions'])} questions).")
        return out

    def lines(self) -> list[str]:
        """The printed report: a table per group and coefficient, then the readings."""
        out = []
        for (group, coef), part in self._by_group_coef():
            title = f"{group + ': ' if group else ''}{coef} with the human grades"
            out.append(title)
            width = max(len(e) for e in part["evaluator"])
            out.append(f"  {'evaluator':<{width}}  mean    95% CI            n   vs best")
            b = self.best[(self.best["group"] == group) & (self.best["coefficient"] == coef)]
            best = b.iloc[0]["best"] if len(b) else None
            top = "best" if len(b) and b.iloc[0]["beyond_chance"] else "highest mean"
            for _, r in part.sort_values("ours", ascending=False, na_position="last").iterrows():
                vs = top if r["evaluator"] == best else self._vs_best(group, coef, best,
                                                                       r["evaluator"])
                chance = ("  reverses the grades" if r["ci_high"] < 0 else
                          "" if r["ci_low"] > 0 else "  at chance")
                out.append(f"  {r['evaluator']:<{width}}  {_fmt(r['ours'])}  "
                           f"{_fmt(r['ci_low'])} to {_fmt(r['ci_high'])}  "
                           f"{int(r['n_questions']):>3}   {vs}{chance}")
        if len(self.combination):
            out.append("combination out of sample (chosen on training folds of questions, "
                       "scored on the held-out ones)")
            for _, r in self.combination.iterrows():
                where = f"  {r['group'] + ' ' if r['group'] else ''}{r['coefficient']} "
                if " - " in r["evaluator"]:  # a paired difference, with its verdict
                    verdict = ("beats it" if r["ci_low"] > 0 else "worse" if r["ci_high"] < 0
                               else "cannot tell")
                    out.append(f"{where}{r['evaluator']:<26} {_signed(r['ours'])}  "
                               f"{_signed(r['ci_low'])} to {_signed(r['ci_high'])}  n = "
                               f"{int(r['n_questions'])}  paired: {verdict}")
                else:
                    out.append(f"{where}{r['evaluator']:<26} {_fmt(r['ours'])}  "
                               f"{_fmt(r['ci_low'])} to {_fmt(r['ci_high'])}  n = "
                               f"{int(r['n_questions'])}"
                               + (f"  ({r['chosen']})" if r.get("chosen") else ""))
        out += self.notes
        if self.left_out:
            out.append(f"left out of every evaluator: {len(self.left_out)} line(s), question(s) "
                       "or item(s) of the input:")
            out += [f"  {x}" for x in self.left_out]
        out += [f"reading: {s}" for s in self.readings()]
        return out

    def _rows_of(self, group: str, coef: str) -> pd.DataFrame:
        """The agreement rows of one group and coefficient."""
        return self.rows[(_group_text(self.rows, self.groups) == group)
                         & (self.rows["coefficient"] == coef)].dropna(subset=["ours"])

    def _by_group_coef(self):
        rows = self.rows.assign(group=_group_text(self.rows, self.groups))
        for (g, c), part in rows.groupby(["group", "coefficient"], sort=False):
            yield (g, c), part

    def _vs_best(self, group: str, coef: str, best: str | None, other: str) -> str:
        if best is None:
            return "no coefficient"
        p = self.pairs.assign(group=_group_text(self.pairs, self.groups))
        r = p[(p["group"] == group) & (p["coefficient"] == coef)
              & (p["evaluator"] == f"{best} - {other}")]
        if r.empty or pd.isna(r.iloc[0]["ci_low"]):
            return "no interval"
        r = r.iloc[0]
        verdict = "worse" if r["ci_low"] > 0 else "cannot tell"
        return f"{verdict} ({_signed(-r['ours'])}, {_signed(-r['ci_high'])} to " \
               f"{_signed(-r['ci_low'])})"

    # ---- files
    def summary(self) -> dict[str, Any]:
        from nfeval.result import json_number as num

        def records(df: pd.DataFrame) -> list[dict]:
            return [{k: (bool(v) if isinstance(v, (bool, np.bool_)) else
                         num(v) if isinstance(v, (int, float, np.floating, np.integer))
                         else v) for k, v in r.items()} for r in df.to_dict("records")]

        best = self.best.assign(ties=[[list(t) for t in x] for x in self.best["ties"]],
                                beats=[list(x) for x in self.best["beats"]])
        return {"coefficients": list(self.coefficients), "groups": self.groups,
                "confidence": 0.95, "interval": "bootstrap-percentile over questions",
                "agreement": records(self.rows), "best": records(best),
                "pairs": records(self.pairs), "combination": records(self.combination),
                "position": records(self.position), "readings": self.readings(),
                "notes": self.notes,
                "left_out": {"count": len(self.left_out), "entries": list(self.left_out)}}

    def plot(self, path: str | Path) -> Path:
        """A forest plot: each evaluator's mean with its 95% interval, per group and
        coefficient, best at the top."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = list(self._by_group_coef())
        rows_max = max(len(p) for _, p in panels)
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1.5,
                                                          0.42 * rows_max + 1.4),
                                 squeeze=False)
        for ax, ((group, coef), part) in zip(axes[0], panels):
            part = part.sort_values("ours", na_position="first")
            y = np.arange(len(part))
            lo = (part["ours"] - part["ci_low"]).clip(lower=0).fillna(0)
            hi = (part["ci_high"] - part["ours"]).clip(lower=0).fillna(0)
            ax.errorbar(part["ours"], y, xerr=[lo, hi], fmt="o", color="C0", capsize=3)
            ax.set_yticks(y)
            ax.set_yticklabels([f"{e} (n={int(n)})" for e, n in
                                zip(part["evaluator"], part["n_questions"])], fontsize=8)
            ax.axvline(0, color="grey", lw=0.6, ls="--")
            ax.set_xlabel(f"mean per-question {coef} with the grades")
            ax.set_title(group or "all questions", fontsize=9)
        fig.suptitle("Agreement with the human grades (95% bootstrap intervals over questions)",
                     fontsize=10)
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=110)
        plt.close(fig)
        return out

    def per_question_csv(self, path: str | Path) -> Path:
        out = Path(path)
        self.per_question.to_csv(out, index=False)
        return out


def _group_text(df: pd.DataFrame, groups: Sequence[str]) -> pd.Series:
    if not groups:
        return pd.Series([""] * len(df), index=df.index)
    return df[list(groups)].astype(str).agg(" / ".join, axis=1)


def _fmt(x: float) -> str:
    return "   n/a" if pd.isna(x) else f"{round(float(x), 3) + 0.0:+.3f}"


def _signed(x: float) -> str:
    return "n/a" if pd.isna(x) else f"{round(float(x), 3) + 0.0:+.3f}"


def meta(frame: pd.DataFrame, *, coefficients: Sequence[str] = ("kendall",), seed: int = 0,
         folds: int = 5, repeats: int = 5, combine: bool = True) -> MetaResult:
    """Every statistic of the module doc on a long per-candidate ``frame``
    (:func:`meta_frame`'s columns)."""
    from nfeval.metrics.correlation import correlation_rows, paired_rows, per_question

    coefficients = tuple(coefficients)
    if bad := [c for c in coefficients if c not in COEFFICIENTS]:
        raise NfevalError(f"unknown coefficient(s) {bad}; use {', '.join(COEFFICIENTS)}")
    df = meta_frame(frame)
    left_out = list(frame.attrs.get("left_out", []))
    groups = [c for c in GROUPS if c in df.columns]
    ev = _evaluator_columns(df)
    df["evaluator"] = _evaluator_labels(df, ev)
    rows = correlation_rows(df, by=[*groups, *ev], seed=seed, coefficients=coefficients)
    rows = rows.merge(df[[*groups, *ev, "evaluator"]].drop_duplicates(), on=[*groups, *ev],
                      how="left")
    pq = per_question(df, by=[*groups, "evaluator"], coefficients=coefficients)
    pair_frames, best_rows, notes = [], [], []
    for key, g in (df.groupby(groups, sort=False) if groups else [((), df)]):
        key = key if isinstance(key, tuple) else (key,)
        names = list(dict.fromkeys(g["evaluator"]))
        pairs = [(a, b) for a in names for b in names if a != b]
        gm = g.assign(method=g["evaluator"])
        pr = paired_rows(gm, pairs, by=groups, seed=seed, coefficients=coefficients)
        pair_frames.append(pr)
        text = " / ".join(map(str, key))
        for coef in coefficients:
            mine = rows[(_group_text(rows, groups) == text) & (rows["coefficient"] == coef)]
            defined = mine.dropna(subset=["ours"])
            if defined.empty:
                notes.append(f"{text + ': ' if text else ''}no evaluator has a {coef} "
                             "coefficient (every question's grades or scores are constant)")
                continue
            top = defined.sort_values("ours", ascending=False).iloc[0]
            ties, beats = [], []
            for other in defined["evaluator"]:
                if other == top["evaluator"]:
                    continue
                d = pr[(pr["coefficient"] == coef)
                       & (pr["method"] == f"{top['evaluator']} - {other}")].iloc[0]
                if pd.isna(d["ci_low"]) or d["ci_low"] <= 0:
                    ties.append((other, -d["ours"], -d["ci_high"], -d["ci_low"]))
                else:
                    beats.append(other)
            # "they beat": an evaluator beaten by the best and by every tie
            beaten = [o for o in beats if all(
                _beats(pr, coef, t[0], o) for t in ties)]
            best_rows.append({"group": text, "coefficient": coef, "best": top["evaluator"],
                              "mean": top["ours"], "ci_low": top["ci_low"],
                              "ci_high": top["ci_high"], "n_questions": int(top["n_questions"]),
                              "beyond_chance": bool((defined["ci_low"] > 0).any()),
                              "ties": ties, "beats": beaten})
    pairs_df = pd.concat(pair_frames, ignore_index=True).rename(columns={"method": "evaluator"})
    for _, r in rows.iterrows():
        if 0 < r["n_questions"] < SMALL_N:
            notes.append(f"warning: {r['evaluator']} rests on {int(r['n_questions'])} questions; "
                         f"an interval on fewer than {SMALL_N} cannot be trusted")
            break
    comb = _combination(df, groups, coefficients, seed, folds, repeats, notes) if combine \
        else pd.DataFrame()
    return MetaResult(rows=rows, pairs=pairs_df, per_question=pq,
                      best=pd.DataFrame(best_rows, columns=["group", "coefficient", "best",
                                                            "mean", "ci_low", "ci_high",
                                                            "n_questions", "beyond_chance",
                                                            "ties", "beats"]),
                      combination=comb, position=_position(df, groups, seed),
                      coefficients=coefficients, groups=groups, notes=notes,
                      left_out=left_out)


def evaluate(scores=None, *, answers=None, methods=None, model=None, **options) -> MetaResult:
    """Which evaluator agrees best with your human grades (``nfeval.meta``, ``nfeval meta``).
    ``scores``: per-item CSV paths of ``nfeval linkage`` runs, or a long frame (``qid``,
    ``doc_id``, ``grade``, ``score``, ``method``); or ``answers`` (a graded LINKAGE answers
    file) with ``methods`` to run (``model``: the judge). ``options``: :func:`meta`'s
    (``coefficients``, ``seed``, ``folds``, ``repeats``, ``combine``). Returns a
    :class:`MetaResult` (``.rows``, ``.pairs``, ``.best``, ``.combination``, ``.readings()``,
    ``.summary()``, ``.plot(path)``)."""
    if (scores is None) == (answers is None):
        raise NfevalError("give scores (per-item CSVs or a frame) or answers with methods")
    if answers is not None:
        if not methods:
            raise NfevalError("answers needs methods, e.g. methods=['rouge1', 'bertscore']")
        frame = score_methods(answers, list(methods), model=model,
                              seed=options.get("seed", 0), progress=False)
    elif isinstance(scores, (str, bytes)) or hasattr(scores, "__fspath__"):
        frame = read_scores([scores])
    elif hasattr(scores, "columns"):
        frame = scores
    else:
        frame = read_scores(list(scores))
    return meta(frame, **options)


def _beats(pr: pd.DataFrame, coef: str, a: str, b: str) -> bool:
    d = pr[(pr["coefficient"] == coef) & (pr["method"] == f"{a} - {b}")]
    return bool(len(d)) and not pd.isna(d.iloc[0]["ci_low"]) and d.iloc[0]["ci_low"] > 0


def _evaluator_labels(df: pd.DataFrame, ev: list[str]) -> pd.Series:
    """The method's name, with its qualifiers (mode, judge) where a method has several."""
    if ev == ["method"]:
        return df["method"].astype(str)
    quals = [c for c in ev if c != "method"]
    several = df.groupby("method")[quals].nunique().max(axis=1) > 1
    out = []
    for _, r in df[ev].iterrows():
        m = str(r["method"])
        if several.get(m, False):
            extra = ", ".join(str(r[q]) for q in quals if str(r[q]) not in ("", "nan"))
            m = f"{m} ({extra})" if extra else m
        out.append(m)
    return pd.Series(out, index=df.index)


def _combination(df: pd.DataFrame, groups: list[str], coefficients: Sequence[str], seed: int,
                 folds: int, repeats: int, notes: list[str]) -> pd.DataFrame:
    """The out-of-sample combination per group, with each chosen evaluator minus the
    best single method (paired, over questions)."""
    from nfeval.metrics import combine
    from nfeval.metrics.intervals import mean_interval, paired_difference

    out = []
    for key, g in (df.groupby(groups, sort=False) if groups else [((), df)]):
        key = key if isinstance(key, tuple) else (key,)
        text = " / ".join(map(str, key))
        wide = g.pivot_table(index=["qid", "doc_id", "grade"], columns="evaluator",
                             values="score", aggfunc="first").reset_index()
        names = [e for e in dict.fromkeys(g["evaluator"])]
        wide = wide.dropna(subset=names)
        if len(names) < 3:
            continue
        qs = combine.questions_of(wide.assign(dataset=text or "all"), names)
        if len(qs) < 2 * folds:
            notes.append(f"{text + ': ' if text else ''}no combination: {len(qs)} questions, "
                         f"fewer than {2 * folds} for {folds} folds")
            continue
        cv = combine.CrossValidation(folds, repeats, seed, key=text or "all", prefix="meta")
        per, choices = combine.out_of_sample(qs, names, cv, coefficients=coefficients)
        picks = pd.DataFrame(choices)
        folds_n = len(picks)

        def most(col: str) -> str:
            counts = picks[col].value_counts()
            return f"{counts.index[0]} in {counts.iloc[0]} of {folds_n} folds"

        weights = ", ".join(f"{n} {_signed(float(picks[f'w_{n}'].mean()))}" for n in names
                            if f"w_{n}" in picks)
        chosen = {"best single": most("best_single"),
                  "rank average": f"the mean rank of {most('rank_average')}",
                  "linear": f"a ridge fit on every evaluator's z-scores, refit per fold; mean "
                            f"weights {weights}"}
        for coef in coefficients:
            vals = {n: {q: v for q, v in per[n][coef].items() if np.isfinite(v)}
                    for n in combine.CHOSEN}
            for n in combine.CHOSEN:
                iv = mean_interval(list(vals[n].values()), seed=seed,
                                   key=f"meta/{text}/{n}/{coef}")
                out.append({"group": text, "coefficient": coef, "evaluator": n, **iv.columns(),
                            "chosen": chosen[n]})
            for n in ("rank average", "linear"):
                iv = paired_difference(vals[n], vals["best single"], seed=seed,
                                       key=f"meta/{text}/{n} - best single/{coef}")
                out.append({"group": text, "coefficient": coef,
                            "evaluator": f"{n} - best single", **iv.columns(), "chosen": ""})
    return pd.DataFrame(out, columns=["group", "coefficient", "evaluator", "ours", "ci_low",
                                      "ci_high", "n_questions", "chosen"])


def _position(df: pd.DataFrame, groups: list[str], seed: int) -> pd.DataFrame:
    """Pairwise judges' first-slot preference, from the ``dist`` column of ``nfeval linkage
    --method pairwise --mode prob`` files."""
    from nfeval.metrics.intervals import cluster_mean_interval

    if "dist" not in df.columns:
        return pd.DataFrame()
    out = []
    for e, g in df[df["method"].astype(str).str.startswith("pairwise")].groupby("evaluator"):
        by_q: dict[str, list[float]] = {}
        for qid, text in zip(g["qid"], g["dist"]):
            try:
                pairs = json.loads(text)
            except (TypeError, ValueError):
                continue
            if not isinstance(pairs, list):
                continue
            for p in pairs:
                d = p.get("dist") or {}
                if "A" in d and "B" in d:
                    by_q.setdefault(qid, []).append(float(d["A"] > d["B"]))
        if by_q:
            iv = cluster_mean_interval(by_q, seed=seed, key=f"meta/position/{e}")
            out.append({"evaluator": e, **iv.columns(),
                        "pairs": sum(len(v) for v in by_q.values())})
    return pd.DataFrame(out)


def check_outputs(*paths: str | Path | None) -> None:
    """Refuse, before any work, output paths whose folder does not exist."""
    for p in paths:
        if p and not Path(p).expanduser().resolve().parent.is_dir():
            raise NfevalError(f"cannot write {p}: its folder does not exist")
