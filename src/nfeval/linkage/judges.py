"""LLM judges of LINKAGE (EMNLP 2024): listwise ranking and the pointwise/pairwise baselines.

What it computes, where it departs from the release and why:
``docs/linkage.md`` (LLM judges).

Usage::

    from nfeval.data import load_linkage
    from nfeval.linkage.references import sample_references
    from nfeval.linkage.judges import judge_candidates
    from nfeval.models import load_model

    judge = load_model("qwen2.5-coder-0.5b-instruct")
    q = load_linkage("antique")[0]
    split = sample_references(q, "33221100", seed=0)
    res = judge_candidates(judge, q, split.references, split.candidates)  # LINKAGE, prob
    res.scores, res.n_unparsed  # per candidate (higher is better), unparsed outputs
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage.judgments import (  # noqa: F401  (the judges' public names, re-exported)
    JudgeConfig,
    Judgment,
    QuestionScores,
    _answer_key,
    _output_seed,
    candidate_first,
    pair_weight,
)
from nfeval.linkage.prompts import (  # noqa: F401  (re-exported)
    _SENTINEL,
    FEWSHOT_FILE,
    FORCED_PREFIX,
    LABEL_CLOSE,
    METHODS,
    MODES,
    POINT_RANGE,
    PROMPTS,
    RELEASE_UNPARSED_RANK,
    SAMPLING,
    VERDICTS,
    Answer,
    Demonstration,
    FewShotTemplate,
    SplitLike,
    _text,
    correct_rank,
    fill_slots,
    linkage_prompt,
    load_fewshot_template,
    pairwise_prompt,
    parse_rank,
    parse_score,
    parse_verdict,
    pointwise_prompt,
    release_template,
    render_references,
    select_demonstrations,
)
from nfeval.models.base import LanguageModel

__all__ = [
    "FEWSHOT_FILE",
    "METHODS",
    "MODES",
    "PROMPTS",
    "SAMPLING",
    "Demonstration",
    "FewShotTemplate",
    "JudgeConfig",
    "JudgePrompt",
    "Judgment",
    "QuestionScores",
    "candidate_first",
    "correct_rank",
    "correlation_inputs",
    "fill_slots",
    "judge_candidates",
    "judge_labels",
    "judge_prompts",
    "judge_questions",
    "linkage_prompt",
    "load_fewshot_template",
    "pair_weight",
    "pairwise_prompt",
    "parse_rank",
    "parse_score",
    "parse_verdict",
    "pointwise_prompt",
    "release_template",
    "render_references",
    "sample_reply",
    "select_demonstrations",
]

# --------------------------------------------------------------------------- judging

@dataclass(frozen=True)
class JudgePrompt:
    """One prompt a judge answers, split where its prompts stop being shared.

    ``prefix`` is the part the question's prompts share: for LINKAGE and
    pointwise everything before the candidate's text (instructions, examples,
    question, reference list); for pairwise everything before the second
    answer (so a first-placed reference is shared by every candidate after it,
    and a first-placed candidate by every reference after it). ``suffix`` is
    the rest of the prompt (in ``prob`` mode ending with the forced ``[[``).
    ``seed`` is the output's sampling seed. ``cut_tokens``: the tokens cut from the end of
    the candidate's text so that the prompt fits the judge's window
    (:func:`nfeval.models.window.fit_text`; 0 when it fits whole).
    """

    candidate: int
    prefix: str
    suffix: str
    reference: int | None = None
    candidate_first: bool | None = None
    weight: float | None = None
    seed: int = 0
    cut_tokens: int = 0

    @property
    def text(self) -> str:
        return self.prefix + self.suffix


def _wrap(judge: LanguageModel, user: str, cfg: JudgeConfig) -> tuple[str, str]:
    """(prefix, rest) of the judge's prompt around the candidate's place."""
    prompt = judge.chat_prompt(user) if cfg.chat else user
    if cfg.mode == "prob":
        prompt += FORCED_PREFIX
    if prompt.count(_SENTINEL) != 1:
        raise NfevalError("the judge's chat template changed the prompt's text; cannot locate "
                          "the candidate in it (try chat=False).")
    prefix, rest = prompt.split(_SENTINEL)
    return prefix, rest


def _fit_candidates(judge: LanguageModel, cfg: JudgeConfig, texts: Sequence[str],
                    builders: Sequence[Any], n_refs: int) -> tuple[list[str], list[int]]:
    """Each candidate's text cut from its end where the prompt would not fit the judge's
    window otherwise (:func:`nfeval.models.window.fit_text`), and the tokens cut. One builder
    per prompt shape a candidate appears in (pairwise: one per reference); the tightest
    decides."""
    from nfeval.models.window import MARGIN, fit_text, fits

    if not fits(judge):
        return list(texts), [0] * len(texts)
    # a token covers at least one byte of the text (the special ones more), and the context
    # gains at most its leading special tokens: a prompt whose bytes fit the window fits it,
    # whatever it tokenizes to (the usual case, with a window of thousands of tokens)
    room = judge.max_length - MARGIN - (
        int(cfg.max_tokens) if cfg.mode == "generate"
        else max(len((lab + LABEL_CLOSE).encode()) for lab in _labels(cfg, n_refs)))
    widest = max(len(b("").encode()) for b in builders) + 2
    if all(widest + len(t.encode()) <= room for t in texts):
        return list(texts), [0] * len(texts)
    if cfg.mode == "generate":
        reserve = int(cfg.max_tokens)
    else:
        reserve = max(len(judge.encode_continuation(lab + LABEL_CLOSE))
                      for lab in _labels(cfg, n_refs))
    worst = max(len(judge.encode_context(b(""))) for b in builders)
    out, cuts = [], []
    for t in texts:
        if len(judge.encode_continuation(t)) + worst + reserve + MARGIN <= judge.max_length:
            out.append(t)
            cuts.append(0)
            continue
        best, cut = t, 0
        for b in builders:
            t2, c = fit_text(judge, b, t, reserve=reserve, what="the candidate answer")
            if c > cut:
                best, cut = t2, c
        out.append(best)
        cuts.append(cut)
    return out, cuts


def _labels(cfg: JudgeConfig, n_refs: int) -> list[str]:
    if cfg.method == "linkage":
        return [str(k) for k in range(1, n_refs + 2)]
    if cfg.method == "pairwise":
        return list(VERDICTS)
    return [str(k) for k in range(POINT_RANGE[0], POINT_RANGE[1] + 1)]


def _impute(cfg: JudgeConfig) -> float:
    if cfg.unparsed == "drop":
        return math.nan
    if cfg.unparsed == "release":
        return float(RELEASE_UNPARSED_RANK)
    return float(cfg.unparsed)


def _outcome(verdict: str, cand_first: bool) -> float:
    if verdict == "C":
        return 0.5
    return 1.0 if (verdict == "A") == cand_first else 0.0


def _value_from_text(cfg: JudgeConfig, text: str, n_refs: int, cand_first: bool | None
                     ) -> float | None:
    if cfg.method == "linkage":
        k = parse_rank(text, n_refs, release=cfg.unparsed == "release")
        return None if k is None else float(k)
    if cfg.method == "pairwise":
        v = parse_verdict(text)
        return None if v is None else _outcome(v, bool(cand_first))
    k = parse_score(text)
    return None if k is None else float(k)


def _value_from_dist(cfg: JudgeConfig, dist: Mapping[str, float], cand_first: bool | None
                     ) -> float:
    if cfg.method == "pairwise":
        own = "A" if cand_first else "B"
        return dist[own] + 0.5 * dist["C"]
    return sum(int(k) * p for k, p in dist.items())


MAX_CONTINUATIONS = 8


def sample_reply(judge: LanguageModel, prompt: str, cfg: JudgeConfig, seed: int,
                 value: Any) -> str:
    """A sampled reply, generated only up to the ``]]`` that closes its deciding label.

    The parsers read the first ``[[...]]`` that holds a label, so nothing
    after it can change a judgment. Generation therefore stops at each
    ``]]``; if the reply so far (with that ``]]``) holds a label
    (``value(text)`` is not None) it is complete, otherwise sampling goes on
    from the prompt and the reply so far, up to ``cfg.max_tokens`` tokens in
    all. Sampling is autoregressive, so a reply continued this way is drawn
    from the same distribution as one generated in a single call (up to the
    re-tokenization of the reply text at each stop). A reply that ends (end
    of turn or token budget) without a label is returned as it is.
    """
    text, budget = "", int(cfg.max_tokens)
    for k in range(MAX_CONTINUATIONS):
        gen = judge.generate(prompt + text, temperature=cfg.temperature, top_p=cfg.top_p,
                             max_tokens=budget, seed=seed if k == 0 else seed + 7919 * k,
                             stop=[LABEL_CLOSE])
        text += gen.text
        budget -= int(gen.n_tokens or 0)
        opened = text.rfind("[[") > text.rfind(LABEL_CLOSE)
        if gen.finish_reason != "stop" or not opened:
            return text  # the token budget, or the end of the reply (no label left open)
        text += LABEL_CLOSE  # stopped at "]]": put it back
        if value(text) is not None or budget <= 0:
            return text
    return text


def judge_prompts(judge: LanguageModel, question: GradedQuestion | str,
                  references: Sequence[Answer], candidates: Sequence[Answer],
                  config: JudgeConfig | None = None, *,
                  demonstrations: Sequence[Demonstration] = (),
                  templates: Mapping[str, Any] | None = None,
                  **options: Any) -> list[JudgePrompt]:
    """The prompts :func:`judge_candidates` sends, in its order (arguments as there).

    One per candidate, or (pairwise) one per candidate and reference, candidate-major.
    """
    cfg = replace(config or JudgeConfig(), **options)
    qtext = question.question if isinstance(question, GradedQuestion) else str(question)
    qid = str(getattr(question, "qid", ""))  # seeds the positions and sampled replies
    if demonstrations and cfg.method != "linkage":
        raise NfevalError("demonstrations are for method 'linkage' only.")
    if cfg.method != "pointwise" and not references:
        raise NfevalError(f"method {cfg.method!r} needs at least one reference.")
    tpl = dict(templates or {})
    if cfg.method == "linkage" and demonstrations and "fewshot" not in tpl:
        tpl["fewshot"] = load_fewshot_template()
    texts = [_text(c) for c in candidates]
    if cfg.guard != "off":
        from nfeval.screen import guarded_text

        ref_texts = [_text(r) for r in references]
        texts = [guarded_text(t, cfg.guard, question=qtext, references=ref_texts)
                 for t in texts]
    m = cfg.method
    out: list[JudgePrompt] = []
    if m == "pairwise":
        def whole(ref_text: str):
            def build(t: str) -> str:
                p, r = _wrap(judge, pairwise_prompt(qtext, t, _SENTINEL,
                                                    template=tpl.get("pairwise")), cfg)
                return p + ref_text + r
            return build

        texts, cuts = _fit_candidates(judge, cfg, texts,
                                      [whole(_text(r)) for r in references] or [whole("")],
                                      len(references))
        # The prompt splits where its second answer starts: a reference in first
        # place is shared by every candidate placed after it, a candidate in first
        # place by every reference placed after it.
        wrapped: dict[tuple[str, int], tuple[str, str]] = {}
        for i, c in enumerate(candidates):
            ck = _answer_key(c, i)
            for j, r in enumerate(references):
                if not isinstance(r, GradedAnswer):
                    raise NfevalError("pairwise needs graded references (GradedAnswer).")
                rk = _answer_key(r, j)
                first = (cfg.positions == "release" if cfg.positions != "random"
                         else candidate_first(cfg.seed, qid, ck, rk))
                lead = ("c", i) if first else ("r", j)
                if lead not in wrapped:
                    user = pairwise_prompt(qtext, texts[i] if first else r.text, _SENTINEL,
                                           template=tpl.get("pairwise"))
                    wrapped[lead] = _wrap(judge, user, cfg)
                prefix, rest = wrapped[lead]
                out.append(JudgePrompt(i, prefix, (r.text if first else texts[i]) + rest, j,
                                       first, pair_weight(r.grade),
                                       _output_seed(cfg.seed, qid, ck, rk), cuts[i]))
        return out
    if m == "linkage":
        user = linkage_prompt(qtext, references, _SENTINEL, demonstrations,
                              template=tpl.get("linkage"), fewshot=tpl.get("fewshot"))
    elif m == "pointwise":
        user = pointwise_prompt(qtext, _SENTINEL, None, no_ref_ground=cfg.no_ref_ground,
                                template=tpl.get("pointwise"))
    else:
        user = pointwise_prompt(qtext, _SENTINEL, references,
                                grades=m == "pointwise-ref-graded",
                                template=tpl.get("pointwise-ref"))
    prefix, rest = _wrap(judge, user, cfg)
    texts, cuts = _fit_candidates(judge, cfg, texts, [lambda t: prefix + t + rest],
                                  len(references))
    return [JudgePrompt(i, prefix, texts[i] + rest,
                        seed=_output_seed(cfg.seed, qid, _answer_key(c, i)), cut_tokens=cuts[i])
            for i, c in enumerate(candidates)]


def judge_labels(config: JudgeConfig, n_references: int) -> list[str]:
    """The label strings of ``prob`` mode, each followed by ``]]`` when scored."""
    return _labels(config, n_references)


def judge_candidates(judge: LanguageModel, question: GradedQuestion | str,
                     references: Sequence[Answer], candidates: Sequence[Answer],
                     config: JudgeConfig | None = None, *,
                     demonstrations: Sequence[Demonstration] = (),
                     templates: Mapping[str, Any] | None = None,
                     **options: Any) -> QuestionScores:
    """Score one question's candidates with an LLM judge (module docstring).

    ``question``: a :class:`~nfeval.data.loaders.GradedQuestion` (its ``qid`` seeds the
    pairwise positions and the sampled replies) or its text (qid "").
    ``references``: best first (graded answers; strings are enough for
    ``linkage``, ``pointwise`` and ``pointwise-ref``). ``candidates``: graded
    answers or strings. ``config`` and/or keyword options (the fields of
    :class:`JudgeConfig`, e.g. ``method="pairwise", mode="generate"``) choose
    the judge. ``demonstrations`` (linkage only) make it n-shot.
    ``templates`` overrides prompt texts by method name (and ``"fewshot"``),
    for tests; by default the release files are read.
    """
    cfg = replace(config or JudgeConfig(), **options)
    qid = str(getattr(question, "qid", ""))
    prompts = judge_prompts(judge, question, references, candidates, cfg,
                            demonstrations=demonstrations, templates=templates)
    n_refs = len(references)
    judgments: list[Judgment] = []
    if cfg.mode == "prob":
        labels = _labels(cfg, n_refs)
        groups: dict[str, list[int]] = {}
        for k, p in enumerate(prompts):
            groups.setdefault(p.prefix, []).append(k)
        dists: list[dict[str, float]] = [{} for _ in prompts]
        for prefix, idx in groups.items():
            got = judge.prefix_label_distribution(prefix, [prompts[k].suffix for k in idx],
                                                  [lab + LABEL_CLOSE for lab in labels])
            for k, d in zip(idx, got):
                dists[k] = {lab: float(d[lab + LABEL_CLOSE]) for lab in labels}
        for p, d in zip(prompts, dists):
            judgments.append(Judgment(p.candidate, _value_from_dist(cfg, d, p.candidate_first),
                                      True, p.reference, p.candidate_first, p.weight, dist=d))
    else:
        for p in prompts:
            text = sample_reply(judge, p.text, cfg, p.seed,
                                lambda t, p=p: _value_from_text(cfg, t, n_refs, p.candidate_first))
            v = _value_from_text(cfg, text, n_refs, p.candidate_first)
            judgments.append(Judgment(p.candidate, _impute(cfg) if v is None else v,
                                      v is not None, p.reference, p.candidate_first, p.weight,
                                      text=text))
    scores = [math.nan] * len(candidates)
    if cfg.method == "pairwise":
        num = [0.0] * len(candidates)
        den = [0.0] * len(candidates)
        for j in judgments:
            if not math.isnan(j.value):
                num[j.candidate] += j.weight * j.value
                den[j.candidate] += j.weight
        scores = [n / d if d > 0 else math.nan for n, d in zip(num, den)]
    else:
        sign = -1.0 if cfg.method == "linkage" else 1.0
        for j in judgments:
            scores[j.candidate] = sign * j.value
    cut = [0] * len(candidates)
    for p in prompts:
        cut[p.candidate] = max(cut[p.candidate], p.cut_tokens)
    return QuestionScores(qid, cfg, scores, judgments, len(demonstrations),
                          [d.qid for d in demonstrations], cut)


def _prompt_fields(cfg: JudgeConfig, shots: int) -> dict[str, str]:
    out = {"prompt_sha256": sha256_text(release_template(cfg.method))}
    if cfg.method == "linkage" and shots:
        out["fewshot_sha256"] = load_fewshot_template().sha256
    return out


def judge_questions(judge: LanguageModel, questions: Sequence[GradedQuestion],
                    splits: Sequence[SplitLike], config: JudgeConfig | None = None, *,
                    shots: int = 0, progress: bool | str = True, use_cache: bool = False,
                    demonstration_splits: Sequence[SplitLike] | None = None
                    ) -> list[QuestionScores]:
    """:func:`judge_candidates` for every split (one question each), in order.

    ``shots`` > 0 (linkage) shows that many demonstrations from the other
    splits (:func:`select_demonstrations`, seeded with the config's seed).
    ``use_cache`` keeps each finished question on disk
    (:class:`nfeval.runcache.RunCache`), keyed by the model, the config, the
    prompts and the question's own inputs, so an interrupted run resumes.
    ``demonstration_splits`` draws the demonstrations from those splits
    instead of from ``splits`` (e.g. a whole dataset's splits while a few of
    its questions are judged); their questions must be in ``questions``. ``progress``: show a
    progress bar (a text: the bar's name; True: the method and mode).
    """
    from tqdm.auto import tqdm

    cfg = config or JudgeConfig()
    desc = progress if isinstance(progress, str) else ""
    by_qid = {q.qid: q for q in questions}
    tpl: dict[str, Any] = {}
    if cfg.method == "linkage" and shots:
        tpl["fewshot"] = load_fewshot_template()
    cache = None
    if use_cache:
        from nfeval.runcache import RunCache

        cache = RunCache("linkage-judge", {
            "model": judge.info.cache_fields(),
            "config": cfg.as_dict(), "shots": shots, **_prompt_fields(cfg, shots)}, model=judge)
    out: list[QuestionScores] = []
    for s in tqdm(splits, desc=desc or f"LINKAGE judge ({cfg.method}, {cfg.mode})",
                  disable=not progress, unit="question"):
        q = by_qid.get(s.qid)
        if q is None:
            raise NfevalError(f"split {s.qid!r} has no question among the questions given.")
        pool = splits if demonstration_splits is None else demonstration_splits
        demos = select_demonstrations(s.qid, questions, pool, shots, cfg.seed) if shots else []
        key = {"q": q.question, "refs": [_text(r) for r in s.references],
               "grades": [r.grade for r in s.references],
               "cands": [_text(c) for c in s.candidates],
               "demos": [[d.qid, d.candidate.doc_id] for d in demos]}
        if demonstration_splits is not None:  # another pool: key its references' texts too
            key["demo_refs"] = [sha256_text("\n".join(_text(r) for r in d.references))
                                for d in demos]
        key_text = json.dumps(key)
        hit = cache.get(s.qid, key_text) if cache is not None else None
        if hit is not None:
            out.append(QuestionScores.from_dict(hit))
            continue
        res = judge_candidates(judge, q, s.references, s.candidates, cfg,
                               demonstrations=demos, templates=tpl)
        if cache is not None:
            cache.put(s.qid, key_text, res.as_dict())
        out.append(res)
    return out


def correlation_inputs(results: Sequence[QuestionScores], splits: Sequence[SplitLike]
                       ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(grades, scores) by question id, for :func:`~nfeval.metrics.correlation.question_correlations`."""
    by_qid = {str(s.qid): s for s in splits}
    grades: dict[str, list[float]] = {}
    scores: dict[str, list[float]] = {}
    for r in results:
        s = by_qid[r.qid]
        if len(s.candidates) != len(r.scores):
            raise NfevalError(f"question {r.qid}: {len(r.scores)} scores for "
                              f"{len(s.candidates)} candidates.")
        grades[r.qid] = [float(c.grade) for c in s.candidates]
        scores[r.qid] = list(r.scores)
    return grades, scores

