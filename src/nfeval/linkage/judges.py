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
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import derived_seed, sha256_text
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

METHODS = ("linkage", "pointwise", "pointwise-ref", "pointwise-ref-graded", "pairwise")
MODES = ("prob", "sample")
#: Release prompt (registry name) of each method.
PROMPTS = {
    "linkage": "linkage/LINKAGE",
    "pointwise": "linkage/no_ref_point_score",
    "pointwise-ref": "linkage/with_ref_point_score",
    "pointwise-ref-graded": "linkage/with_ref_point_score",
    "pairwise": "linkage/pairwise_comparison",
}
#: The paper's and release's decoding (vLLM SamplingParams of every judge script).
SAMPLING = {"temperature": 0.8, "top_p": 0.95, "max_tokens": 512}
RELEASE_UNPARSED_RANK = 2  # the release's correlation script scores a missing [[k]] as -2
POINT_RANGE = (0, 10)
VERDICTS = ("A", "B", "C")
FORCED_PREFIX = "[["
LABEL_CLOSE = "]]"


def _fewshot_file() -> Path:
    from nfeval.paths import PROMPTS as PROMPTS_DIR

    return PROMPTS_DIR / "linkage_fewshot.txt"


FEWSHOT_FILE = _fewshot_file()

# stands for the candidate while a prompt is rendered, then split on (never sent)
_SENTINEL = "\u27e6nfeval:candidate\u27e7"
_SLOT = re.compile(r"#([A-Za-z_]+)")
_RANK = re.compile(r"\[\[\s*(\d+)\s*\]\]")
_RANK_RELEASE = re.compile(r"\[\[(\d+)\]\]")  # what the release's correlation script matches
_VERDICT = re.compile(r"\[\[\s*([ABC])\s*\]\]")

Answer = GradedAnswer | str


class SplitLike(Protocol):
    """What the judges need of a reference split (:class:`nfeval.linkage.references.ReferenceSplit`)."""

    qid: str
    references: Sequence[GradedAnswer]
    candidates: Sequence[GradedAnswer]


def _text(a: Answer) -> str:
    return a if isinstance(a, str) else a.text


# --------------------------------------------------------------------------- parsers

def parse_rank(text: str | None, n_references: int | None = None, *,
               release: bool = False) -> int | None:
    """The rank of the first ``[[k]]`` in ``text``; None when there is none or it is out of range.

    Several ``[[k]]``: the first decides. With ``n_references`` = m, a rank
    outside 1..m+1 gives None. ``release=True`` is the release's parser:
    ``[[digits]]`` exactly (no spaces inside), first match, no range check.
    """
    m = (_RANK_RELEASE if release else _RANK).search(text or "")
    if not m:
        return None
    k = int(m.group(1))
    if not release and n_references is not None and not 1 <= k <= n_references + 1:
        return None
    return k


def parse_score(text: str | None, low: int = POINT_RANGE[0], high: int = POINT_RANGE[1]
                ) -> int | None:
    """The pointwise score of the first ``[[k]]`` in ``text``; None if missing or outside low..high."""
    m = _RANK.search(text or "")
    if not m:
        return None
    k = int(m.group(1))
    return k if low <= k <= high else None


def parse_verdict(text: str | None) -> str | None:
    """The first ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie) in ``text``, as "A"/"B"/"C"; else None."""
    m = _VERDICT.search(text or "")
    return m.group(1) if m else None


# --------------------------------------------------------------------------- prompts

def release_template(method: str) -> str:
    """The release's prompt of a method, stripped as the release strips it."""
    if method not in PROMPTS:
        raise NfevalError(f"unknown judge method {method!r}; use one of {', '.join(METHODS)}.")
    from nfeval.data import load_prompt

    return load_prompt(PROMPTS[method]).strip()


def fill_slots(template: str, values: Mapping[str, str | None]) -> str:
    """Replace every ``#name`` whose name has a (non-None) value, in one pass.

    Inserted text is never scanned again, so a slot name inside an answer
    stays as written. Names without a value are left as they are.
    """
    def sub(m: re.Match) -> str:
        v = values.get(m.group(1))
        return m.group(0) if v is None else v

    return _SLOT.sub(sub, template)


def render_references(references: Sequence[Answer], *, grades: bool = False) -> str:
    """The release's reference list: ``Answer k:<text>`` a line, best first.

    ``grades=True`` appends `` Score:<grade + 1>`` (4..1), as the release's
    graded pointwise prompt does; the references must then be
    :class:`GradedAnswer`.
    """
    out = []
    for k, r in enumerate(references, 1):
        line = f"Answer {k}:{_text(r)}"
        if grades:
            if isinstance(r, str):
                raise NfevalError("graded references need GradedAnswer objects, not strings.")
            line += f" Score:{r.grade + 1}"
        out.append(line + "\n")
    return "".join(out)


def pointwise_prompt(question: str, candidate: str,
                     references: Sequence[Answer] | None = None, *, grades: bool = False,
                     no_ref_ground: str = "omit", template: str | None = None) -> str:
    """Pointwise prompt: without references (``references=None``) or with the reference list.

    Without references, ``no_ref_ground="omit"`` removes the release
    prompt's ``{#ground}`` line and ``"release"`` leaves it unfilled (module
    docstring).
    """
    if references is None:
        t = template if template is not None else release_template("pointwise")
        if no_ref_ground == "omit":
            t = "\n".join(line for line in t.split("\n") if "#ground" not in line)
        elif no_ref_ground != "release":
            raise NfevalError(f"no_ref_ground must be 'omit' or 'release', got {no_ref_ground!r}.")
        return fill_slots(t, {"question": question, "candidate": candidate})
    t = template if template is not None else release_template("pointwise-ref")
    return fill_slots(t, {"question": question, "candidate": candidate,
                          "ground": render_references(references, grades=grades)})


def pairwise_prompt(question: str, answer_a: str, answer_b: str,
                    template: str | None = None) -> str:
    """The release's pairwise prompt with its two answers."""
    t = template if template is not None else release_template("pairwise")
    return fill_slots(t, {"question": question, "answer_a": answer_a, "answer_b": answer_b})


# --------------------------------------------------------------------------- few-shot

@dataclass(frozen=True)
class FewShotTemplate:
    """The project's few-shot wrapper (``prompts/linkage_fewshot.txt``), by section."""

    demonstration: str
    prompt: str
    sha256: str


def load_fewshot_template(path: str | Path | None = None) -> FewShotTemplate:
    """Read the few-shot template: leading ``# `` comment lines, then its two sections."""
    p = Path(path) if path is not None else FEWSHOT_FILE
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as e:
        raise NfevalError(f"cannot read the few-shot template {p}: {e.strerror or e}.") from e
    lines = raw.split("\n")
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        name = line.strip()
        if name in ("[demonstration]", "[prompt]"):
            current = sections.setdefault(name[1:-1], [])
        elif current is not None:
            current.append(line)
    if set(sections) != {"demonstration", "prompt"}:
        raise NfevalError(f"{p} must hold a [demonstration] and a [prompt] section.")
    return FewShotTemplate(demonstration="\n".join(sections["demonstration"]).strip("\n"),
                           prompt="\n".join(sections["prompt"]).strip("\n"),
                           sha256=sha256_text(raw))


def correct_rank(grade: int, reference_grades: Sequence[int]) -> int:
    """Where an answer of ``grade`` belongs in a best-first list: 1 + references graded higher.

    Among references of its own grade it takes the first place (the best
    rank its grade allows), e.g. grade 2 among 3,3,2,2,1,1,0,0 is rank 3.
    """
    return 1 + sum(g > grade for g in reference_grades)


@dataclass(frozen=True)
class Demonstration:
    """One worked example: another question, its references and a candidate of known grade."""

    qid: str
    question: str
    references: tuple[GradedAnswer, ...]
    candidate: GradedAnswer

    @property
    def rank(self) -> int:
        return correct_rank(self.candidate.grade, [r.grade for r in self.references])


def select_demonstrations(target_qid: str, questions: Sequence[GradedQuestion],
                          splits: Sequence[SplitLike], n: int, seed: int = 0
                          ) -> list[Demonstration]:
    """``n`` demonstrations for the question ``target_qid``, never drawn from it.

    The splits are shuffled once by ``seed`` (the same order for every target
    question), and the first ``n`` other questions with references and
    candidates are taken, so the examples are the same for nearly every
    question (like a fixed few-shot prompt). Each example's candidate is drawn
    by a generator seeded from ``seed`` and its question, preferring a grade
    not yet shown, so the examples show different ranks.
    """
    if n < 0:
        raise NfevalError(f"the number of demonstrations must be >= 0, got {n}.")
    if n == 0:
        return []
    text = {q.qid: q.question for q in questions}
    order = list(range(len(splits)))
    random.Random(f"{seed}/fewshot").shuffle(order)
    chosen: list[Demonstration] = []
    shown: set[int] = set()
    for i in order:
        s = splits[i]
        if str(s.qid) == str(target_qid) or not s.references or not s.candidates:
            continue
        if s.qid not in text:
            raise NfevalError(f"split {s.qid!r} has no question among the questions given.")
        cands = list(s.candidates)
        random.Random(f"{seed}/fewshot/{s.qid}").shuffle(cands)
        pick = next((c for c in cands if c.grade not in shown), cands[0])
        shown.add(pick.grade)
        chosen.append(Demonstration(str(s.qid), text[s.qid], tuple(s.references), pick))
        if len(chosen) == n:
            return chosen
    raise NfevalError(f"only {len(chosen)} other questions can serve as demonstrations; "
                      f"{n} were asked for.")


def _split_linkage_template(template: str) -> tuple[str, str, str]:
    """(instruction, lead, query) of the 0-shot template: the query starts at the #question line."""
    lines = template.split("\n")
    qi = next((i for i, line in enumerate(lines) if "#question" in line), None)
    if qi is None:
        raise NfevalError("the LINKAGE template has no #question slot.")
    head, query = lines[:qi], lines[qi:]
    lead = ""
    if head and head[-1].startswith("Below"):
        lead = head.pop()
    return "\n".join(head), lead, "\n".join(query)


def linkage_prompt(question: str, references: Sequence[Answer], candidate: str,
                   demonstrations: Sequence[Demonstration] = (), *,
                   template: str | None = None, fewshot: FewShotTemplate | None = None) -> str:
    """The LINKAGE prompt: the release's 0-shot prompt, or the project's n-shot one."""
    t = template if template is not None else release_template("linkage")
    values = {"question": question, "ground": render_references(references),
              "candidate": candidate}
    if not demonstrations:
        return fill_slots(t, values)
    fs = fewshot if fewshot is not None else load_fewshot_template()
    instruction, lead, query = _split_linkage_template(t)
    demos = "\n\n".join(
        fill_slots(fs.demonstration, {"k": str(k), "question": d.question,
                                      "ground": render_references(d.references),
                                      "candidate": d.candidate.text, "rank": str(d.rank)})
        for k, d in enumerate(demonstrations, 1))
    return fill_slots(fs.prompt, {"instruction": instruction, "lead": lead,
                                  "demonstrations": demos, "query": fill_slots(query, values)})


# --------------------------------------------------------------------------- config, results

@dataclass(frozen=True)
class JudgeConfig:
    """Everything that decides a judge's numbers besides the model and the data."""

    method: str = "linkage"  # see METHODS
    mode: str = "prob"  # "prob" | "sample"
    unparsed: str | float = "drop"  # "drop" | "release" (linkage) | a number to impute
    positions: str = "random"  # pairwise: "random" (paper) | "release" (candidate always A)
    no_ref_ground: str = "omit"  # pointwise: "omit" | "release" (unfilled {#ground} line)
    chat: bool = True  # user turn of the judge's chat template; False: raw prompt (release)
    seed: int = 0
    temperature: float = SAMPLING["temperature"]
    top_p: float = SAMPLING["top_p"]
    max_tokens: int = SAMPLING["max_tokens"]

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise NfevalError(f"unknown judge method {self.method!r}; use one of "
                              f"{', '.join(METHODS)}.")
        if self.mode not in MODES:
            raise NfevalError(f"unknown judge mode {self.mode!r}; use 'prob' or 'sample'.")
        u = self.unparsed
        if isinstance(u, str):
            if u not in ("drop", "release"):
                raise NfevalError(f"unparsed must be 'drop', 'release' or a number, got {u!r}.")
            if u == "release" and self.method != "linkage":
                raise NfevalError("unparsed='release' exists for method 'linkage' only (the "
                                  "release scores an unparsed rank as 2 and published no "
                                  "parser for the baselines); use 'drop' or a number.")
        elif isinstance(u, bool) or not isinstance(u, (int, float)):
            raise NfevalError(f"unparsed must be 'drop', 'release' or a number, got {u!r}.")
        if self.positions not in ("random", "release"):
            raise NfevalError(f"positions must be 'random' or 'release', got {self.positions!r}.")
        if self.no_ref_ground not in ("omit", "release"):
            raise NfevalError("no_ref_ground must be 'omit' or 'release', got "
                              f"{self.no_ref_ground!r}.")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Judgment:
    """One judge output: a candidate (listwise, pointwise) or a candidate-reference pair.

    ``value``: the rank (linkage), the 0-10 score (pointwise) or the
    candidate's outcome against the reference (pairwise: 1 win, 0.5 tie, 0
    loss); in ``prob`` mode its expected value; when unparsed, what the
    ``unparsed`` policy says (NaN for "drop"). ``dist``: the label
    distribution (``prob``), keyed by label without the closing ``]]``.
    """

    candidate: int
    value: float
    parsed: bool
    reference: int | None = None
    candidate_first: bool | None = None
    weight: float | None = None
    text: str | None = None
    dist: dict[str, float] | None = None


@dataclass
class QuestionScores:
    """A judge's scores of one question's candidates (higher is better, NaN: dropped)."""

    qid: str
    config: JudgeConfig
    scores: list[float]
    judgments: list[Judgment]
    n_shots: int = 0
    demonstrations: list[str] = field(default_factory=list)  # qids of the examples shown

    @property
    def n_outputs(self) -> int:
        """Judge outputs: one per candidate, or one per candidate-reference pair."""
        return len(self.judgments)

    @property
    def n_unparsed(self) -> int:
        """Outputs whose reply did not parse (``sample`` mode; always 0 in ``prob``)."""
        return sum(not j.parsed for j in self.judgments)

    @property
    def n_nan(self) -> int:
        """Candidates whose score is NaN (left out of this question's correlation)."""
        return sum(math.isnan(s) for s in self.scores)

    def as_dict(self) -> dict[str, Any]:
        return {"qid": self.qid, "config": self.config.as_dict(), "scores": self.scores,
                "judgments": [asdict(j) for j in self.judgments], "n_shots": self.n_shots,
                "demonstrations": self.demonstrations}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionScores:
        return cls(qid=d["qid"], config=JudgeConfig(**d["config"]),
                   scores=[float(s) for s in d["scores"]],
                   judgments=[Judgment(**j) for j in d["judgments"]],
                   n_shots=d.get("n_shots", 0), demonstrations=list(d.get("demonstrations", [])))


def pair_weight(grade: int) -> float:
    """Weight of a pairwise comparison against a reference of ``grade`` (0..3): grade + 1."""
    return float(grade + 1)


def _key(seed: int, qid: str, *parts: object) -> str:
    return "/".join([str(seed), str(qid), *map(str, parts)])


def candidate_first(seed: int, qid: str, candidate_key: object, reference_key: object) -> bool:
    """The paper's random position of a pair: True puts the candidate in position A.

    A fair coin from a generator seeded by (seed, question, candidate,
    reference), so a pair's position does not depend on the rest of the run.
    """
    return random.Random("pair/" + _key(seed, qid, candidate_key, reference_key)).random() < 0.5


def _output_seed(seed: int, qid: str, *parts: object) -> int:
    return derived_seed("sample/" + _key(seed, qid, *parts))


def _answer_key(a: Answer, i: int) -> str:
    return a.doc_id if isinstance(a, GradedAnswer) else f"#{i}"


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
    ``seed`` is the output's sampling seed.
    """

    candidate: int
    prefix: str
    suffix: str
    reference: int | None = None
    candidate_first: bool | None = None
    weight: float | None = None
    seed: int = 0

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
                  demonstrations: Sequence[Demonstration] = (), qid: str | None = None,
                  templates: Mapping[str, Any] | None = None,
                  **options: Any) -> list[JudgePrompt]:
    """The prompts :func:`judge_candidates` sends, in its order (arguments as there).

    One per candidate, or (pairwise) one per candidate and reference, candidate-major.
    """
    cfg = replace(config or JudgeConfig(), **options)
    qtext = question.question if isinstance(question, GradedQuestion) else str(question)
    qid = str(qid if qid is not None else getattr(question, "qid", ""))
    if demonstrations and cfg.method != "linkage":
        raise NfevalError("demonstrations are for method 'linkage' only.")
    if cfg.method != "pointwise" and not references:
        raise NfevalError(f"method {cfg.method!r} needs at least one reference.")
    tpl = dict(templates or {})
    if cfg.method == "linkage" and demonstrations and "fewshot" not in tpl:
        tpl["fewshot"] = load_fewshot_template()
    texts = [_text(c) for c in candidates]
    m = cfg.method
    out: list[JudgePrompt] = []
    if m == "pairwise":
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
                first = (True if cfg.positions == "release"
                         else candidate_first(cfg.seed, qid, ck, rk))
                lead = ("c", i) if first else ("r", j)
                if lead not in wrapped:
                    user = pairwise_prompt(qtext, texts[i] if first else r.text, _SENTINEL,
                                           template=tpl.get("pairwise"))
                    wrapped[lead] = _wrap(judge, user, cfg)
                prefix, rest = wrapped[lead]
                out.append(JudgePrompt(i, prefix, (r.text if first else texts[i]) + rest, j,
                                       first, pair_weight(r.grade),
                                       _output_seed(cfg.seed, qid, ck, rk)))
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
    return [JudgePrompt(i, prefix, texts[i] + rest,
                        seed=_output_seed(cfg.seed, qid, _answer_key(c, i)))
            for i, c in enumerate(candidates)]


def judge_labels(config: JudgeConfig, n_references: int) -> list[str]:
    """The label strings of ``prob`` mode, each followed by ``]]`` when scored."""
    return _labels(config, n_references)


def judge_candidates(judge: LanguageModel, question: GradedQuestion | str,
                     references: Sequence[Answer], candidates: Sequence[Answer],
                     config: JudgeConfig | None = None, *,
                     demonstrations: Sequence[Demonstration] = (), qid: str | None = None,
                     templates: Mapping[str, Any] | None = None,
                     **options: Any) -> QuestionScores:
    """Score one question's candidates with an LLM judge (module docstring).

    ``references``: best first (graded answers; strings are enough for
    ``linkage``, ``pointwise`` and ``pointwise-ref``). ``candidates``: graded
    answers or strings. ``config`` and/or keyword options (the fields of
    :class:`JudgeConfig`, e.g. ``method="pairwise", mode="sample"``) choose
    the judge. ``demonstrations`` (linkage only) make it n-shot.
    ``templates`` overrides prompt texts by method name (and ``"fewshot"``),
    for tests; by default the release files are read.
    """
    cfg = replace(config or JudgeConfig(), **options)
    qid = str(qid if qid is not None else getattr(question, "qid", ""))
    prompts = judge_prompts(judge, question, references, candidates, cfg,
                            demonstrations=demonstrations, qid=qid, templates=templates)
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
    return QuestionScores(qid, cfg, scores, judgments, len(demonstrations),
                          [d.qid for d in demonstrations])


def _prompt_fields(cfg: JudgeConfig, shots: int) -> dict[str, str]:
    out = {"prompt_sha256": sha256_text(release_template(cfg.method))}
    if cfg.method == "linkage" and shots:
        out["fewshot_sha256"] = load_fewshot_template().sha256
    return out


def judge_questions(judge: LanguageModel, questions: Sequence[GradedQuestion],
                    splits: Sequence[SplitLike], config: JudgeConfig | None = None, *,
                    shots: int = 0, progress: bool = True, use_cache: bool = False,
                    demonstration_splits: Sequence[SplitLike] | None = None,
                    **options: Any) -> list[QuestionScores]:
    """:func:`judge_candidates` for every split (one question each), in order.

    ``shots`` > 0 (linkage) shows that many demonstrations from the other
    splits (:func:`select_demonstrations`, seeded with the config's seed).
    ``use_cache`` keeps each finished question on disk
    (:class:`nfeval.runcache.RunCache`), keyed by the model, the config, the
    prompts and the question's own inputs, so an interrupted run resumes.
    ``demonstration_splits`` draws the demonstrations from those splits
    instead of from ``splits`` (e.g. a whole dataset's splits while a few of
    its questions are judged); their questions must be in ``questions``.
    """
    from tqdm.auto import tqdm

    cfg = replace(config or JudgeConfig(), **options)
    by_qid = {q.qid: q for q in questions}
    tpl: dict[str, Any] = {}
    if cfg.method == "linkage" and shots:
        tpl["fewshot"] = load_fewshot_template()
    cache = None
    if use_cache:
        from nfeval.runcache import RunCache

        cache = RunCache("linkage-judge", {
            "model": judge.info.cache_fields(),
            "config": cfg.as_dict(), "shots": shots, **_prompt_fields(cfg, shots)})
    out: list[QuestionScores] = []
    for s in tqdm(splits, desc=f"LINKAGE judge ({cfg.method}, {cfg.mode})",
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

