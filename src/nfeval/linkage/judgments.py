"""The LINKAGE judges' configuration and results: :class:`JudgeConfig`, one
:class:`Judgment` per judge output, :class:`QuestionScores` per question, and the seeded
choices of a run (pairwise positions, sampling seeds)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from nfeval.errors import NfevalError
from nfeval.hashing import derived_seed
from nfeval.linkage.methods import POSITIONS
from nfeval.linkage.prompts import METHODS, MODES, SAMPLING, Answer, GradedAnswer


@dataclass(frozen=True)
class JudgeConfig:
    """Everything that decides a judge's numbers besides the model and the data."""

    method: str = "linkage"  # see METHODS
    mode: str = "prob"  # "prob" | "generate" ("sample" is read as "generate")
    unparsed: str | float = "drop"  # "drop" | "release" (linkage) | a number to impute
    # pairwise: "random" (paper) | "release" (candidate always A) | "reference-first" (always B)
    positions: str = "random"
    no_ref_ground: str = "omit"  # pointwise: "omit" | "release" (unfilled {#ground} line)
    chat: bool = True  # user turn of the judge's chat template; False: raw prompt (release)
    seed: int = 0
    temperature: float = SAMPLING["temperature"]
    top_p: float = SAMPLING["top_p"]
    max_tokens: int = SAMPLING["max_tokens"]
    # how the candidate enters the prompt (nfeval.guard.GUARD_MODES: off, quote, strip, screen; True
    # is quote); the papers' prompts are unchanged, only the candidate's slot is
    guard: str = "off"

    def __post_init__(self) -> None:
        from nfeval.guard import guard_mode

        object.__setattr__(self, "guard", guard_mode(self.guard))
        if self.method not in METHODS:
            raise NfevalError(f"unknown judge method {self.method!r}; use one of "
                              f"{', '.join(METHODS)}.")
        from nfeval.linkage.methods import judge_mode

        object.__setattr__(self, "mode", judge_mode(self.mode))
        if self.mode not in MODES:
            raise NfevalError(f"unknown judge mode {self.mode!r}; use 'prob' or 'generate'.")
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
        if self.positions not in POSITIONS:
            raise NfevalError(f"positions must be one of {', '.join(POSITIONS)}, got "
                              f"{self.positions!r}.")
        if self.no_ref_ground not in ("omit", "release"):
            raise NfevalError("no_ref_ground must be 'omit' or 'release', got "
                              f"{self.no_ref_ground!r}.")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if self.guard == "off":  # unguarded runs keep the fields (and cache keys) they always had
            d.pop("guard")
        if self.mode == "generate":  # so do generated replies, stored as "sample" before the
            d["mode"] = "sample"     # commands took one vocabulary
        return d


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
    cut_tokens: list[int] = field(default_factory=list)  # per candidate, cut to fit the window

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
                "demonstrations": self.demonstrations, "cut_tokens": self.cut_tokens}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionScores:
        return cls(qid=d["qid"], config=JudgeConfig(**d["config"]),
                   scores=[float(s) for s in d["scores"]],
                   judgments=[Judgment(**j) for j in d["judgments"]],
                   n_shots=d.get("n_shots", 0), demonstrations=list(d.get("demonstrations", [])),
                   cut_tokens=[int(c) for c in d.get("cut_tokens", [])])


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
