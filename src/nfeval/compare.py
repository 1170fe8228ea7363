"""``nfeval compare A.csv B.csv``: two runs on the same items, A minus B with its interval.

The per-item CSVs of ``nfeval pd``, ``nfeval da`` and ``nfeval linkage`` are
matched item by item (answer id; question and candidate id). P.D. and D.A.
compare the scores (paired bootstrap over answers). LINKAGE files whose
candidates carry human grades compare the per-question correlation with the
grades (paired bootstrap over questions: the project's paired rows); without
grades, the scores of one method (bootstrap over questions, a question's
candidates resampled together). Files whose items differ are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nfeval.errors import NfevalError
from nfeval.metrics.intervals import Interval, small_n_warning

#: score column -> (name for people, lower is better)
_DEBATEQA = {"pd": ("P.D.", True), "da": ("D.A.", False)}


@dataclass
class Side:
    path: str
    kind: str  # "linkage", "pd" or "da"
    method: str
    frame: pd.DataFrame
    n_questions: int

    def describe(self) -> str:
        if self.kind == "linkage":
            return (f"{self.path} ({self.method}, {len(self.frame)} candidates of "
                    f"{self.n_questions} questions)")
        return f"{self.path} ({_DEBATEQA[self.kind][0]}, {len(self.frame)} answers)"


@dataclass
class Comparison:
    a: Side
    b: Side
    measure: str  # what is compared, for people
    difference: Interval  # A - B
    a_mean: float
    b_mean: float
    lower_is_better: bool
    dropped: int  # items or questions left out because one side has no value

    def reading(self) -> str:
        d = self.difference
        if d.n < 2 or math.isnan(d.low):
            return "the data cannot tell (no interval)"
        if not d.excludes(0.0):
            return f"the data cannot tell at n = {d.n} {d.unit} (the interval holds 0)"
        a_better = (d.estimate < 0) if self.lower_is_better else (d.estimate > 0)
        return (f"{'A' if a_better else 'B'} is better at n = {d.n} {d.unit} "
                f"({'lower' if self.lower_is_better else 'higher'} is better)")

    def lines(self) -> list[str]:
        d = self.difference
        ci = ("no interval" if math.isnan(d.low) else
              f"95% CI {d.low:+.3f} to {d.high:+.3f}")
        dropped = (f", {self.dropped} {d.unit} without a value on one side left out"
                   if self.dropped else "")
        return [f"A: {self.a.describe()}", f"B: {self.b.describe()}",
                f"{self.measure}: A {self.a_mean:.3f}, B {self.b_mean:.3f}; A - B "
                f"{d.estimate:+.3f} ({ci}; {d.n} {d.unit}, paired{dropped})"
                f"{small_n_warning(d.n, d.unit)}",
                f"reading: {self.reading()}"]

    def summary(self) -> dict[str, Any]:
        from nfeval.result import json_number as num

        d = self.difference
        return {"a": self.a.describe(), "b": self.b.describe(), "measure": self.measure,
                "a_mean": num(self.a_mean), "b_mean": num(self.b_mean),
                "difference": {"a_minus_b": num(d.estimate), "ci_low": num(d.low),
                               "ci_high": num(d.high), "confidence": 0.95, "n": d.n,
                               "unit": d.unit, "interval": d.method, "paired": True,
                               "warning": small_n_warning(d.n, d.unit).strip(" ()") or None},
                "lower_is_better": self.lower_is_better, "left_out": self.dropped,
                "reading": self.reading()}


def read_side(path: str | Path) -> Side:
    """One per-item CSV, with its kind recognized from its columns."""
    p = Path(path).expanduser()
    try:
        df = pd.read_csv(p, dtype={"qid": str, "candidate_id": str})
    except FileNotFoundError:
        raise NfevalError(f"{p} does not exist") from None
    except (OSError, ValueError) as e:
        raise NfevalError(f"cannot read {p} as CSV: {e}") from None
    cols = set(df.columns)
    if {"qid", "candidate_id", "method", "score"} <= cols:
        methods = sorted(df["method"].dropna().astype(str).unique())
        if len(methods) != 1:
            raise NfevalError(f"{p} holds {len(methods)} methods ({', '.join(methods)}); "
                              "compare takes one method a file")
        key = list(zip(df["qid"], df["candidate_id"]))
        kind, method, n_q = "linkage", methods[0], df["qid"].nunique()
    else:
        found = [c for c in _DEBATEQA if c in cols and "id" in cols]
        if len(found) != 1:
            raise NfevalError(f"{p} is not a per-item CSV of nfeval linkage, pd or da (its "
                              f"columns: {', '.join(map(str, df.columns[:8]))})")
        kind = method = found[0]
        key = df["id"].astype(str).tolist()
        n_q = len(df)
    dup = pd.Series(key).duplicated()
    if dup.any():
        raise NfevalError(f"{p}: item {key[int(dup.idxmax())]} appears more than once")
    df = df.assign(_key=key)
    return Side(str(path), kind, method, df, int(n_q))


def _check_items(a: Side, b: Side) -> None:
    if a.kind != b.kind:
        raise NfevalError(f"A is a {a.kind} file and B a {b.kind} file: compare two outputs "
                          "of the same command")
    ka, kb = set(a.frame["_key"]), set(b.frame["_key"])
    if ka != kb:
        def some(keys: set) -> str:
            shown = sorted(keys, key=str)[:5]
            return ", ".join(map(str, shown)) + (" ..." if len(keys) > 5 else "")

        parts = []
        if ka - kb:
            parts.append(f"{len(ka - kb)} only in A ({some(ka - kb)})")
        if kb - ka:
            parts.append(f"{len(kb - ka)} only in B ({some(kb - ka)})")
        raise NfevalError("the two files do not hold the same items: " + "; ".join(parts)
                          + ". Score the same questions and answers in both runs")


def compare_files(path_a: str | Path, path_b: str | Path, *, coefficient: str = "kendall",
                  seed: int = 0) -> Comparison:
    """A minus B (module docstring); an error when the files cannot be compared."""
    from nfeval.metrics.intervals import cluster_mean_interval, paired_difference

    a, b = read_side(path_a), read_side(path_b)
    _check_items(a, b)
    if a.kind in _DEBATEQA:
        col = a.kind
        va = dict(zip(a.frame["_key"], a.frame[col].astype(float)))
        vb = dict(zip(b.frame["_key"], b.frame[col].astype(float)))
        both = {k: (va[k], vb[k]) for k in va if not (math.isnan(va[k]) or math.isnan(vb[k]))}
        iv = paired_difference({k: x for k, (x, _) in both.items()},
                               {k: y for k, (_, y) in both.items()}, seed=seed,
                               key=f"compare/{col}", unit="answers")
        name, lower = _DEBATEQA[col]
        return Comparison(a, b, f"mean {name}", iv,
                          _mean([x for x, _ in both.values()]),
                          _mean([y for _, y in both.values()]), lower, len(va) - len(both))
    ga = _grades(a)
    gb = _grades(b)
    if ga is not None and gb is not None:
        if ga != gb:
            diff = sorted(k for k in ga if ga[k] != gb.get(k))[:3]
            raise NfevalError(f"the human grades differ between the files (e.g. {diff}): "
                              "compare runs on the same graded file")
        return _compare_correlations(a, b, coefficient, seed)
    if a.method != b.method:
        raise NfevalError(f"A scores with {a.method} and B with {b.method}, on different "
                          "scales, and the files carry no human grades to compare them by: "
                          "add grades to the candidates, or compare two runs of one method")
    sa = dict(zip(a.frame["_key"], a.frame["score"].astype(float)))
    sb = dict(zip(b.frame["_key"], b.frame["score"].astype(float)))
    groups: dict[str, list[float]] = {}
    dropped = 0
    for k in sa:
        if math.isnan(sa[k]) or math.isnan(sb[k]):
            dropped += 1
            continue
        groups.setdefault(k[0], []).append(sa[k] - sb[k])
    iv = cluster_mean_interval(groups, seed=seed, key=f"compare/{a.method}", unit="questions")
    kept = [k for k in sa if not (math.isnan(sa[k]) or math.isnan(sb[k]))]
    return Comparison(a, b, f"mean {a.method} score", iv, _mean([sa[k] for k in kept]),
                      _mean([sb[k] for k in kept]), False, dropped)


def _mean(values: list[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def _grades(side: Side) -> dict | None:
    """Candidate grades by item, when every candidate has one (else None)."""
    g = side.frame["grade"] if "grade" in side.frame else None
    if g is None or g.isna().all():
        return None
    if g.isna().any():
        raise NfevalError(f"{side.path}: {int(g.isna().sum())} candidate(s) have no grade and "
                          "the others have one; grade every candidate or none")
    return dict(zip(side.frame["_key"], g.astype(float)))


def _compare_correlations(a: Side, b: Side, coefficient: str, seed: int) -> Comparison:
    from nfeval.metrics.correlation import per_question
    from nfeval.metrics.intervals import paired_difference

    frames = []
    for label, side in (("A", a), ("B", b)):
        f = side.frame[["qid", "grade", "score"]].copy()
        f["method"] = label
        frames.append(f.dropna(subset=["score"]))
    pq = per_question(pd.concat(frames, ignore_index=True), by=["method"],
                      coefficients=[coefficient])
    vals = {m: dict(zip(g["qid"], g["value"])) for m, g in pq.groupby("method")}
    va = {q: v for q, v in vals.get("A", {}).items() if not math.isnan(v)}
    vb = {q: v for q, v in vals.get("B", {}).items() if not math.isnan(v)}
    common = [q for q in va if q in vb]
    iv = paired_difference({q: va[q] for q in common}, {q: vb[q] for q in common}, seed=seed,
                           key=f"compare/{coefficient}", unit="questions")
    n_q = a.frame["qid"].nunique()
    return Comparison(a, b, f"{coefficient} with the human grades", iv,
                      _mean([va[q] for q in common]), _mean([vb[q] for q in common]), False,
                      n_q - len(common))
