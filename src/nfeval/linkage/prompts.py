"""LINKAGE's prompts, parsers and demonstrations: what the judges read and how their replies
are read (the scoring loop is :mod:`nfeval.linkage.judges`).

The release's prompt files are read from the release (mirror, cache or download); the
project's few-shot wrapper (``prompts/linkage_fewshot.txt``) stands in for the paper's
unreleased few-shot prompt. What each departs from in the release: ``docs/linkage.md``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import sha256_text
from nfeval.linkage.methods import JUDGE_METHODS as METHODS
from nfeval.linkage.methods import MODES  # noqa: F401 (judgments and judges read it here)

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


#: The slots a judge prompt of one's own must hold, by method (the release prompts' own).
REQUIRED_SLOTS = {
    "linkage": ("question", "ground", "candidate"),
    "pointwise": ("question", "candidate"),
    "pointwise-ref": ("question", "ground", "candidate"),
    "pointwise-ref-graded": ("question", "ground", "candidate"),
    "pairwise": ("question", "answer_a", "answer_b"),
}


def template_key(method: str) -> str:
    """The key of ``templates`` (:func:`nfeval.linkage.judges.judge_prompts`) a method reads."""
    return "pointwise-ref" if method == "pointwise-ref-graded" else method


def check_template(method: str, template: str) -> str:
    """``template`` when it holds every slot of :data:`REQUIRED_SLOTS` for ``method``;
    else an error that names the missing ones (slots as the judges fill them, ``#name``:
    :func:`braced_slots` turns nfeval's ``{name}`` into it)."""
    if method not in REQUIRED_SLOTS:
        raise NfevalError(f"unknown judge method {method!r}; use one of {', '.join(METHODS)}.")
    if not template.strip():
        raise NfevalError("the judge prompt is empty")
    have = set(_SLOT.findall(template))
    missing = [f"{{{s}}}" for s in REQUIRED_SLOTS[method] if s not in have]
    if missing:  # spelt {name}, as the docs and --help write slots (#name works too)
        need = ", ".join(f"{{{s}}}" for s in REQUIRED_SLOTS[method])
        raise NfevalError(f"the {method} prompt lacks the slot(s) {', '.join(missing)}; a "
                          f"{method} prompt holds {need} (the question, "
                          + ("the two answers" if method == "pairwise" else
                             "the candidate" if method == "pointwise" else
                             "the reference list and the candidate") + ")")
    return template


def braced_slots(method: str, template: str) -> tuple[str, bool]:
    """A prompt of one's own with its slots in nfeval's one spelling, ``{name}``, turned into
    the release's ``#name`` that the judges fill; and whether it was written ``#name`` already
    (the LINKAGE release's spelling, accepted as an alias). Only the method's slot names are
    read as slots."""
    names = REQUIRED_SLOTS.get(method, ())
    braced = [n for n in names if "{" + n + "}" in template]
    if not braced:
        return template, any(f"#{n}" in template for n in names)
    for n in braced:
        template = template.replace("{" + n + "}", f"#{n}")
    return template, False


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
