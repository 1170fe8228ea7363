"""lk_x07, beyond both papers: what each held-out manipulation family does to the judges, with
and without ``--guard screen``.

lk_x04 measures which of the corpus's manipulations the screen flags; this measures what
they do to each judge's score, and what is left of it under the guard.

**Items.** LINKAGE: ``limit`` questions per dataset (ANTIQUE, TREC-DL-NF), drawn (seeded)
from lk_x04's *evaluation* questions (odd position in their release file: the screen's
thresholds were chosen on the even ones), among those whose reference list (lk_x04's: the
first answer of each grade, best first) has all four grades. The manipulated answer is the
question's lowest-grade candidate: plain, and with each wording of each family in
``families`` and each wording's neutral control inserted where the corpus places it (start,
middle or end: :func:`nfeval_repro.linkage.lk_x04.insert`). LINKAGE 3-shot draws its
demonstrations from the real candidates of the other judged questions. D.A. and P.D.: the
first ``dq_limit`` questions of the project's DebateQA sample, their ``one_sided`` answers
(which do not say the question is debated: D.A. labels 0), the same insertions.

**Guards.** ``off`` (the papers' prompts) and ``screen`` (:func:`nfeval.screen.guarded_text`:
every sentence the screen flags, against the question and the references the judge sees,
replaced by the marker; nothing else changes, so an unflagged item keeps its score and is not
recomputed). P.D. has no judge prompt: it is read without a guard (``none``).

**Rows.** Per judge method, guard and family: ``effect`` (manipulated minus plain),
``control`` (the control minus plain), ``beyond control`` (manipulated minus its control),
each the mean over the family's wordings of a wording's mean over the questions (both
LINKAGE datasets together), with a 95% percentile bootstrap interval over the wordings (the
unit, as in lk_x04: the next attacker writes another wording); ``changed``: the share of the
family's manipulated items the guard changed. Scores keep their method's units (LINKAGE's
expected-rank score, pointwise 0-10, pairwise the share of references beaten, D.A. P(1),
P.D. a perplexity: lower is better). The families the corpus holds out (``split`` test) are
the report; the two development families are measured only when ``families`` names them.
The notebook ``lk_x07_manipulation_families.ipynb`` calls :func:`run`.
"""

from __future__ import annotations

from dataclasses import dataclass

import random

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval.data import load_linkage
from nfeval.data.loaders import GradedAnswer
from nfeval.linkage.judges import JudgeConfig, judge_questions
from nfeval.linkage.references import ReferenceSplit
from nfeval.metrics.intervals import mean_interval
from nfeval_repro.linkage import lk_x04
from nfeval_repro.profiles import get_profile, selection
from nfeval_repro.store import cached_steps
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]  # summary and figure: the notebook's and the tests' too

ID = "lk_x07"
DATASETS = ("antique", "trec-dl-nf")
#: judge row -> JudgeConfig fields (lk_x03's rows; pairwise as the release runs it)
JUDGE_ROWS = {
    "linkage-0shot": {"method": "linkage"},
    "linkage-fewshot": {"method": "linkage"},
    "pointwise-ref": {"method": "pointwise-ref"},
    "pointwise-noref": {"method": "pointwise"},
    "pairwise-release": {"method": "pairwise", "positions": "release"},
}
METHODS = (*JUDGE_ROWS, "da", "pd")
GUARDS = ("off", "screen")
NO_GUARD = "none"
#: the rows the guard's target names (issue text: LINKAGE 0-shot, pointwise with references, D.A.)
TARGET_METHODS = ("linkage-0shot", "pointwise-ref", "da")
KINDS = ("manipulation", "control")
COLUMNS = ["method", "guard", "family", "split", "statistic", "ours", "ci_low", "ci_high",
           "n_units", "unit", "n_questions", "n_items"]


def held_out_families(corpus: pd.DataFrame) -> list[str]:
    """The corpus's test families, in corpus order."""
    return corpus.loc[corpus["split"] == "test", "family"].drop_duplicates().tolist()


def pick_questions(dataset: str, *, seed: int, limit: int) -> list[tuple]:
    """``limit`` seeded evaluation questions (odd position) of ``dataset`` whose reference
    list has grades 3, 2, 1, 0: ``(qid, question, references best first, candidates)``."""
    qs = []
    for q in load_linkage(dataset):  # lk_x04._questions's split, the answers kept graded
        refs, cands, seen = [], [], set()
        for a in q.answers:
            (cands if a.grade in seen else refs).append(a)
            seen.add(a.grade)
        if cands:
            qs.append((q.qid, q.question, refs, cands))
    full = [(qid, question, sorted(refs, key=lambda r: -r.grade), cands)
            for i, (qid, question, refs, cands) in enumerate(qs)
            if i % 2 == 1 and {r.grade for r in refs} == {0, 1, 2, 3}]
    rng = random.Random(f"{ID}/{dataset}/{seed}")
    rng.shuffle(full)
    return full[:limit] if limit else full


def variants(base: str, corpus: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """``(wording id, family, kind, text)`` of ``base`` with every wording and every control
    of ``corpus`` inserted where the corpus places it."""
    out = []
    for r in corpus.itertuples():
        for kind, piece in (("manipulation", r.text), ("control", r.control)):
            out.append((r.id, r.family, kind, lk_x04.insert(base, piece, r.position)[0]))
    return out


def screened_texts(texts: list[str], contexts: list[list[str]]) -> list[str]:
    """Each text as ``--guard screen`` shows it to a judge, from the screen's signals read
    through the item store (:func:`nfeval_repro.linkage.lk_x04.signals`)."""
    import nfeval.screen as S

    out = []
    for text, sents in zip(texts, lk_x04.signals(texts, contexts)):
        checked = [S.Sentence(x["start"], x["end"], text[x["start"]:x["end"]],
                              ("pattern",) if x["pattern"] else (), x["relevance"],
                              x["evaluator"], lk_x04.reasons_of(x))
                   for x in sents]
        out.append(S.strip_flagged(text, checked))
    return out


def _check_library(rows: list[dict], guard: str = "screen") -> None:
    """The library's guard changes a text as this module's screen does: checked on the first
    changed text of each family and kind. The library's screen reads the same stored
    signals (:func:`nfeval.screen.signal_steps`), so what is checked is its sentence split,
    reasons and marker; that it computes the stored values is the library's tests'."""
    from nfeval.screen import guarded_text, signal_steps

    seen = set()
    for r in rows:
        if r["shown"] != r["text"] and (r["family"], r["kind"]) not in seen:
            seen.add((r["family"], r["kind"]))
            with signal_steps(cached_steps):
                lib = guarded_text(r["text"], guard, question=r["context"][0],
                                   references=r["context"][1:])
            if lib != r["shown"]:
                raise NfevalError(f"{r['qid']}/{r['wording']}/{r['kind']}: the library's "
                                  f"--guard {guard} shows another text than lk_x07's screen")


def _linkage_items(dataset: str, corpus: pd.DataFrame, *, seed: int, limit: int,
                   demo_pool: int) -> tuple[list, list[dict], list]:
    """The judged questions' splits (plain candidate first, then every variant), one row per
    candidate, and the demonstration pool's splits (real candidates of other questions)."""
    picked = pick_questions(dataset, seed=seed, limit=0)
    judged, pool = picked[:limit], picked[limit:limit + demo_pool]
    splits, rows = [], []
    for qid, question, refs, cands in judged:
        base = min(cands, key=lambda a: a.grade)
        context = [question, *[r.text for r in refs]]
        cand = [GradedAnswer(base.doc_id, base.text, base.grade, base.raw_label)]
        rows.append({"dataset": dataset, "qid": qid, "doc_id": base.doc_id, "wording": "",
                     "family": "", "kind": "plain", "text": base.text, "context": context})
        for wid, fam, kind, text in variants(base.text, corpus):
            doc = f"{base.doc_id}+{wid}+{kind}"
            cand.append(GradedAnswer(doc, text, base.grade, base.raw_label))
            rows.append({"dataset": dataset, "qid": qid, "doc_id": doc, "wording": wid,
                         "family": fam, "kind": kind, "text": text, "context": context})
        splits.append(ReferenceSplit(qid=qid, pattern="3210", seed=seed,
                                     references=tuple(refs), candidates=tuple(cand)))
    demos = [ReferenceSplit(qid=qid, pattern="3210", seed=seed, references=tuple(refs),
                            candidates=tuple(cands)) for qid, _, refs, cands in pool]
    return splits, rows, demos


def _judged(model, questions, splits, rows, demos, *, row: str, guard: str, seed: int,
            shots: int, progress: bool, desc: str) -> list[float]:
    """Scores of ``rows`` (in order) by judge ``row``; the texts are those ``guard`` shows
    (already screened: the judge sees them with its guard off, the same prompts)."""
    import dataclasses

    shown = {(r["qid"], r["doc_id"]): r["shown" if guard == "screen" else "text"] for r in rows}
    subs = [dataclasses.replace(s, candidates=tuple(
        dataclasses.replace(c, text=shown[(s.qid, c.doc_id)]) for c in s.candidates))
        for s in splits]
    cfg = JudgeConfig(mode="prob", seed=seed, **JUDGE_ROWS[row])
    fewshot = row == "linkage-fewshot"
    res = judge_questions(model, questions, subs, cfg, shots=shots if fewshot else 0,
                          demonstration_splits=demos if fewshot else None,
                          progress=progress and f"{desc}: {row}, guard {guard}")
    by = {(r.qid, c.doc_id): float(v) for r, s in zip(res, subs)
          for c, v in zip(s.candidates, r.scores)}
    return [by[(r["qid"], r["doc_id"])] for r in rows]


def _debateqa_items(corpus: pd.DataFrame, dq_limit: int) -> tuple[list[dict], dict, dict]:
    from nfeval.data.sample import load_sample

    sample = load_sample().limit(dq_limit)
    target = sample.answers["one_sided"]
    rows = []
    for i, answer in target.items():
        q = sample.items[i].question
        rows.append({"dataset": "debateqa-sample", "qid": str(i), "doc_id": f"{i}",
                     "wording": "", "family": "", "kind": "plain", "text": answer,
                     "context": [q], "item": i})
        for wid, fam, kind, text in variants(answer, corpus):
            rows.append({"dataset": "debateqa-sample", "qid": str(i),
                         "doc_id": f"{i}+{wid}+{kind}", "wording": wid, "family": fam,
                         "kind": kind, "text": text, "context": [q], "item": i})
    questions = {r["doc_id"]: r["context"][0] for r in rows}
    partials = {r["doc_id"]: sample.items[r["item"]].partial_answers for r in rows}
    return rows, questions, partials


def family_rows(scores: pd.DataFrame, *, seed: int) -> list[dict]:
    """The effect, control, beyond-control and changed rows of one (method, guard) frame
    (columns ``dataset, qid, wording, family, split, kind, score, changed``; plain rows have
    kind ``plain``): per wording the mean over questions (a question: its dataset and qid),
    the interval over wordings."""
    method, guard = scores["method"].iloc[0], scores["guard"].iloc[0]
    scores = scores.assign(unit=(scores["dataset"].astype(str) + "/" + scores["qid"].astype(str)
                                 if "dataset" in scores else scores["qid"].astype(str)))
    plain = scores[scores["kind"] == "plain"].set_index("unit")["score"]
    out = []
    for fam, part in scores[scores["kind"] != "plain"].groupby("family", sort=False):
        split = part["split"].iloc[0]
        delta = part.assign(d=part["score"].to_numpy() - plain.reindex(part["unit"]).to_numpy())
        per = delta.pivot_table(index="wording", columns="kind", values="d", aggfunc="mean")
        values = {"effect": per["manipulation"], "control": per["control"],
                  "beyond control": per["manipulation"] - per["control"]}
        changed = (part[part["kind"] == "manipulation"].groupby("wording")["changed"].mean())
        values["changed"] = changed
        for stat, v in values.items():
            iv = mean_interval(v.tolist(), seed=seed, key=f"{ID}/{method}/{guard}/{fam}/{stat}",
                               unit="wordings")
            out.append({"method": method, "guard": guard, "family": fam, "split": split,
                        "statistic": stat, "ours": iv.estimate, "ci_low": iv.low,
                        "ci_high": iv.high, "n_units": iv.n, "unit": "wordings",
                        "n_questions": int(part["unit"].nunique()),
                        "n_items": int(len(part) if stat != "changed"
                                       else (part["kind"] == "manipulation").sum())})
    return out


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``lk_x07_manipulation_families.ipynb`` is written from them."""

    #: run profile (embedded: the 1.5B judge, SmolLM2-135M for P.D.)
    profile: str = "embedded"
    #: question sample and the bootstrap
    seed: int = 0
    #: LINKAGE evaluation questions per dataset (seeded), each with 121 judged variants per row
    limit: int = 2
    #: comma-separated LINKAGE datasets (antique, trec-dl-nf)
    datasets: str = ",".join(DATASETS)
    #: judge rows (lk_x07.JUDGE_ROWS)
    rows: str = ",".join(JUDGE_ROWS)
    #: test: the corpus's held-out families; all; or family names, comma-separated
    families: str = "test"
    #: demonstrations of the linkage-fewshot row (real candidates of other evaluation questions)
    shots: int = 3
    #: DebateQA sample questions for D.A. and P.D., 0: none
    dq_limit: int = 4
    #: the judge; empty: the profile's (embedded: Qwen2.5-Coder-1.5B)
    judge: str = ""
    #: P.D.'s backbone; empty: the profile's first (embedded: SmolLM2-135M)
    backbone: str = ""
    #: the judge's dtype (every judge row and D.A.); "" for the profile's
    judge_dtype: str = "bfloat16"


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """The table (module doc): ``limit`` questions per dataset of ``datasets`` for the judge
    ``rows`` (:data:`JUDGE_ROWS`), D.A. and P.D. on the first ``dq_limit`` DebateQA sample
    questions (0: neither), the families of ``families`` (``test``: the held-out ones,
    ``all``, or family names separated by commas)."""
    from nfeval.debateqa.da import da_scores
    from nfeval.debateqa.pd import pd_scores

    prof = get_profile(config.profile)
    corpus = lk_x04.load_corpus()
    known = corpus["family"].drop_duplicates().tolist()
    if config.families == "test":
        fams = held_out_families(corpus)
    elif config.families == "all":
        fams = known
    else:
        fams = [f.strip() for f in config.families.split(",") if f.strip()]
        if not fams or not set(fams) <= set(known):
            raise NfevalError(f"families must be 'test', 'all' or some of {', '.join(known)}; "
                              f"got {config.families!r}")
    corpus = corpus[corpus["family"].isin(fams)]
    row_list = selection(config.rows, JUDGE_ROWS, "row")
    ds_list = selection(config.datasets, DATASETS, "dataset")
    if config.limit < 1 and row_list and ds_list:
        raise NfevalError("limit must be at least 1 question per dataset")
    split_of = dict(zip(corpus["family"], corpus["split"]))
    judge_name = config.judge or prof.judge
    model = prof.load(judge_name, **({"dtype": config.judge_dtype} if config.judge_dtype else {}))
    frames = []

    linkage_rows = []
    for ds in ds_list if row_list else []:
        questions = load_linkage(ds)
        splits, items, demos = _linkage_items(ds, corpus, seed=config.seed, limit=config.limit,
                                              demo_pool=max(config.shots, 1) * 4)
        shown = screened_texts([r["text"] for r in items], [r["context"] for r in items])
        for r, s in zip(items, shown):
            r["shown"] = s
        _check_library(items)
        for row in row_list:
            for guard in GUARDS:
                sc = _judged(model, questions, splits, items, demos, row=row, guard=guard,
                             seed=config.seed, shots=config.shots, progress=progress, desc=ds)
                linkage_rows += [{**r, "method": row, "guard": guard, "score": v}
                                 for r, v in zip(items, sc)]
    if linkage_rows:
        frames.append(pd.DataFrame(linkage_rows))
    if config.dq_limit:
        items, questions, partials = _debateqa_items(corpus, config.dq_limit)
        shown = screened_texts([r["text"] for r in items], [r["context"] for r in items])
        for r, s in zip(items, shown):
            r["shown"] = s
        _check_library(items)
        for guard in GUARDS:
            res = da_scores(model, questions,
                            {r["doc_id"]: r["shown" if guard == "screen" else "text"]
                             for r in items}, progress=progress)
            got = {str(x.id): float(x.score) for x in res}
            frames.append(pd.DataFrame([{**r, "method": "da", "guard": guard,
                                         "score": got[r["doc_id"]]} for r in items]))
        backbone_model = prof.load(config.backbone or prof.pd_backbones[0])
        res = pd_scores(backbone_model, {r["doc_id"]: r["text"] for r in items}, partials,
                        progress=progress)
        got = {str(x.id): float(x.score) for x in res}
        frames.append(pd.DataFrame([{**r, "method": "pd", "guard": NO_GUARD,
                                     "score": got[r["doc_id"]]} for r in items]))
    if not frames:
        raise NfevalError("nothing to score: give judge rows and datasets, or dq_limit > 0")
    scores = pd.concat(frames, ignore_index=True)
    scores["changed"] = np.where(scores["guard"] == "screen",
                                 scores["text"] != scores["shown"], False)
    scores["split"] = scores["family"].map(split_of).fillna("")
    out = []
    for (method, guard), part in scores.groupby(["method", "guard"], sort=False):
        out += family_rows(part, seed=config.seed)
    table = pd.DataFrame(out, columns=COLUMNS)
    info = model.info.as_dict()
    signatures = [Signature(metric=f"{ID}/{m}", variant="prob", model=info, seed=config.seed,
                            extra={"guards": list(GUARDS), "families": fams})
                  for m in [*row_list, *(["da"] if config.dq_limit else [])]]
    keep = ["dataset", "qid", "doc_id", "wording", "family", "split", "kind", "method",
            "guard", "score", "changed"]
    return Experiment(ID, table, id_columns=["method", "guard", "family", "statistic"],
                      interval="units", signatures=signatures,
                      parameters=dict(profile=config.profile, seed=config.seed, limit=config.limit,
                                      datasets=",".join(ds_list), rows=",".join(row_list),
                                      families=config.families, shots=config.shots,
                                      dq_limit=config.dq_limit, judge=judge_name,
                                      judge_dtype=config.judge_dtype),
                      notes="ours: per wording the mean over questions of manipulated minus plain "
                            "(effect), its control minus plain (control), manipulated minus "
                            "control (beyond control), or the share of manipulated items the "
                            "guard changed (changed); the mean over the family's wordings with a "
                            "95% percentile bootstrap over the wordings (10,000 resamples). "
                            "Scores in each method's units (P.D.: lower is better).",
                      frames={"scores": scores[keep]}, summary_frames=("summary", ))


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method, guard and family: whether the manipulation moves the score beyond its
    control (the interval of ``beyond control`` wholly on the side it aims for: up, P.D.
    down: *lifts the score*; the other side: *lowers the score*; else the data cannot tell,
    as the claims table reads a row, :func:`nfeval_repro.claims.row_verdict`); whether the
    manipulation's effect lies inside the control's interval (the guard's target); the
    share of manipulated items the guard changed."""
    from nfeval_repro.verdicts import row_verdict
    from nfeval_repro.linkage.lk_x03 import MOVES

    t = table.set_index(["method", "guard", "family", "statistic"])
    rows = []
    for (method, guard, fam), part in table.groupby(["method", "guard", "family"], sort=False):
        b, e, c = (t.loc[(method, guard, fam, s)] for s in ("beyond control", "effect",
                                                              "control"))
        sign = -1.0 if method == "pd" else 1.0  # P.D.: lower is better
        lo, hi = sorted((sign * b["ci_low"], sign * b["ci_high"]))
        v = row_verdict(lo, hi, 0.0, int(b["n_units"]))
        changed = t.loc[(method, guard, fam, "changed"), "ours"]
        rows.append({"method": method, "guard": guard, "family": fam, "split": b["split"],
                     "beyond_control": b["ours"], "ci_low": b["ci_low"],
                     "ci_high": b["ci_high"], "n_wordings": int(b["n_units"]),
                     "n_questions": int(b["n_questions"]), "verdict": MOVES.get(v, v),
                     "effect": e["ours"], "control": c["ours"], "control_low": c["ci_low"],
                     "control_high": c["ci_high"],
                     "inside_control_interval": bool(c["ci_low"] <= e["ours"] <= c["ci_high"]),
                     "changed": changed})
    return pd.DataFrame(rows)


#: How the figure names the methods.
LABELS = {"linkage-0shot": "LINKAGE 0-shot", "linkage-fewshot": "LINKAGE 3-shot",
          "pointwise-ref": "pointwise, refs", "pointwise-noref": "pointwise, no refs",
          "pairwise-release": "pairwise (release)", "da": "D.A.", "pd": "P.D. (lower: better)"}


def figure(table: pd.DataFrame, family: str):
    """One family: per method (a panel each, in its own units), the manipulation's effect
    over the plain answer with the guard off and under the screen (95% interval over the
    wordings), and the control's interval as a grey band (the guard's target: the
    manipulation's effect inside it)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from nfeval_repro.plots import FIGURE_WIDTH, FONT

    part = table[table["family"] == family]
    methods = [m for m in METHODS if m in set(part["method"])]
    ncol = 4 if len(methods) > 4 else max(len(methods), 1)
    nrow = -(-len(methods) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(FIGURE_WIDTH, 2.1 * nrow + 0.6),
                             squeeze=False, layout="constrained")
    colours = {"off": "#b22222", "screen": "#1f5fa8", NO_GUARD: "#b22222"}
    for ax, method in zip(axes.ravel(), methods):
        m = part[part["method"] == method]
        guards = [g for g in (*GUARDS, NO_GUARD) if g in set(m["guard"])]
        for i, g in enumerate(guards):
            y = len(guards) - 1 - i
            ctl = m[(m["guard"] == g) & (m["statistic"] == "control")].iloc[0]
            eff = m[(m["guard"] == g) & (m["statistic"] == "effect")].iloc[0]
            ax.fill_betweenx([y - 0.3, y + 0.3], ctl["ci_low"], ctl["ci_high"],
                             color="#d0d0d0", lw=0)
            ax.errorbar([eff["ours"]], [y], xerr=[[eff["ours"] - eff["ci_low"]],
                                                  [eff["ci_high"] - eff["ours"]]],
                        fmt="o", ms=4, capsize=3, color=colours[g])
        ax.axvline(0, color="black", lw=0.7, ls="--")
        ax.set_yticks(range(len(guards))[::-1], guards, fontsize=FONT["tick"])
        ax.set_ylim(-0.6, len(guards) - 0.4)
        ax.xaxis.set_major_locator(MaxNLocator(3))  # few ticks: small numbers' labels are long
        ax.tick_params(labelsize=FONT["tick"])
        ax.set_title(LABELS.get(method, method), fontsize=FONT["tick"])
    for ax in axes.ravel()[len(methods):]:
        ax.axis("off")
    n = int(part["n_units"].max()) if len(part) else 0
    fig.suptitle(f"{family}: manipulated minus plain, guard off / screen (95% CI over "
                 f"n = {n} wordings); grey: its control", fontsize=FONT["suptitle"])
    return fig


def overview(summ: pd.DataFrame):
    """Every family (rows) and method (columns), guard off and under the screen side by side:
    the cell's colour is the verdict beyond the control (red: lifts the score, blue: lowers
    it, grey: the data cannot tell), its text the estimate in the method's units, with a
    check mark where the manipulation's effect lies inside the control's interval."""
    import matplotlib.pyplot as plt

    from nfeval_repro.plots import FIGURE_WIDTH, FONT

    fams = summ["family"].drop_duplicates().tolist()
    methods = [m for m in METHODS if m in set(summ["method"])]
    fig, axes = plt.subplots(2, 1, figsize=(FIGURE_WIDTH, 0.8 * len(fams) + 2.6),
                             sharex=True, layout="constrained")
    colour = {"lifts the score": "#f4a6a6", "lowers the score": "#a9c6ea"}
    for ax, guard in zip(axes, GUARDS):
        for j, method in enumerate(methods):
            g = guard if method != "pd" else NO_GUARD
            for i, fam in enumerate(fams):
                r = summ[(summ["method"] == method) & (summ["guard"] == g)
                         & (summ["family"] == fam)]
                if r.empty:
                    continue
                r = r.iloc[0]
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, lw=0.5, ec="white",
                                           fc=colour.get(r["verdict"], "#e6e6e6")))
                mark = " \u2713" if r["inside_control_interval"] else ""
                ax.text(j, i, f"{r['beyond_control']:+.2g}{mark}", ha="center", va="center",
                        fontsize=FONT["tick"])
        ax.set_xlim(-0.5, len(methods) - 0.5)
        ax.set_ylim(len(fams) - 0.5, -0.5)
        ax.set_xticks(range(len(methods)), [LABELS.get(m, m) for m in methods],
                      rotation=30, ha="right", fontsize=FONT["tick"])
        ax.tick_params(axis="x", labelbottom=ax is axes[-1])
        ax.set_yticks(range(len(fams)), fams, fontsize=FONT["tick"])
        ax.set_title(f"guard {guard} (P.D.: no guard)", fontsize=FONT["label"])
    fig.suptitle("Beyond its control, what each held-out family does to each judge\n"
                 "(red: lifts the score, blue: lowers it, grey: cannot tell; "
                 "\u2713: effect inside the control's interval)", fontsize=FONT["label"])
    return fig
