"""The settings of one LINKAGE run, as one frozen, validated object.

:class:`LinkageSettings` holds everything besides the models and the data that decides a
score of ``nfeval linkage`` (the method, the judge's mode and prompt, the reference lists,
the lexical implementation...). It is built once, where a run starts (the command line's
arguments, :func:`nfeval.linkage.score`'s keywords), and passed down to
:func:`~nfeval.linkage.score_file.score_linkage_file`: sacrebleu builds ``BLEU(...)`` once
and signs every score with it the same way. A setting that does not fit the method is
refused here, with the one-line message the command line prints, before anything is read
or loaded.

Usage::

    from nfeval.linkage.settings import LinkageSettings

    LinkageSettings("linkage", shots=2)            # LINKAGE 2-shot, prob mode
    LinkageSettings("pairwise", mode="generate", positions="release")
    LinkageSettings("bleu", shots=2)               # NfevalError: --shots is for the LLM judge...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nfeval.errors import NfevalError
from nfeval.guard import guard_mode
from nfeval.linkage.judgments import JudgeConfig
from nfeval.linkage.methods import (JUDGE_METHODS, check_references, check_rouge, judge_mode,
                                    method_kind)
from nfeval.linkage.prompts import SAMPLING, check_template

__all__ = ["GenerationSettings", "LinkageSettings"]

#: The judge-only settings and the value that means "not set" (the command line's flags).
_JUDGE_ONLY = (("--mode", "mode", None), ("--shots", "shots", 0),
               ("--unparsed", "unparsed", "drop"), ("--positions", "positions", "random"),
               ("--max-tokens", "max_tokens", SAMPLING["max_tokens"]),
               ("--guard", "guard", "off"))


def _unparsed(value: str | float) -> str | float:
    """The ``unparsed`` policy: "drop", "release" or a number (a number's text is read)."""
    if not isinstance(value, str) or value in ("drop", "release"):
        return value
    try:
        return float(value)
    except ValueError:
        raise NfevalError(f"--unparsed must be drop, release or a number, not {value!r}") from None


@dataclass(frozen=True)
class GenerationSettings:
    """How missing reference lists are written (LINKAGE-1GT/0GT,
    :func:`~nfeval.linkage.generated.generate_reference_lists`): generation attempts per
    output, the token budgets of the golden answer and of the three degraded ones, and the
    degrading prompt (None: the release's ``create_multi_step_answer``)."""

    attempts: int = 2  # checked (>= 1) where lists are written: a run that writes none runs
    golden_tokens: int = 256
    degraded_tokens: int = 512
    degrade_template: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class LinkageSettings:
    """What decides a LINKAGE score besides the models and the data (module docstring).

    ``mode``: the judge methods' ``"prob"`` (None: the default) or ``"generate"``
    (``"sample"`` is read as it); None for the other methods. ``unparsed``: "drop",
    "release" (linkage) or a number (its text is read as one). ``prompt``: a judge prompt
    of one's own, as written, with the method's slots spelt ``{name}`` (or the release's
    ``#name``); ``template`` is it with the slots the judges fill
    (:func:`nfeval.linkage.prompts.braced_slots`), and the signature's prompt hash is the
    sha256 of ``prompt`` as given, the hash ``sha256sum`` prints for its file. ``references``:
    "file", "1gt" or "0gt". ``rouge``, ``embedder``: the lexical and BERTScore methods'.
    ``judge``: the judge's :class:`~nfeval.linkage.judges.JudgeConfig` (judge methods; None
    otherwise), built here.
    """

    method: str = "linkage"
    mode: str | None = None
    shots: int = 0
    seed: int = 0
    unparsed: str | float = "drop"
    positions: str = "random"
    max_tokens: int = SAMPLING["max_tokens"]
    guard: str = "off"  # nfeval.guard.GUARD_MODES (True: quote)
    prompt: str | None = field(default=None, repr=False)
    references: str = "file"
    rouge: str = "rouge-score"
    embedder: str | None = None
    generation: GenerationSettings = GenerationSettings()
    judge: JudgeConfig | None = field(default=None, init=False, repr=False, compare=False)
    template: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "guard", guard_mode(self.guard))
        object.__setattr__(self, "mode", judge_mode(self.mode))
        method = self.method
        kind = method_kind(method)
        if kind != "judge":
            for flag, name, unset in _JUDGE_ONLY:
                if getattr(self, name) != unset:
                    raise NfevalError(f"{flag} is for the LLM judge methods "
                                      f"({', '.join(JUDGE_METHODS)}), not {method}")
        if self.embedder and not method.startswith("bertscore"):
            raise NfevalError("--embedder is for the bertscore methods")
        if self.shots and method != "linkage":
            raise NfevalError("--shots (demonstrations) is for method linkage only")
        if self.shots < 0:
            raise NfevalError(f"--shots must be >= 0, got {self.shots}")
        object.__setattr__(self, "unparsed", _unparsed(self.unparsed))
        if self.prompt is not None:
            if kind != "judge":
                raise NfevalError(f"--prompt is for the LLM judge methods "
                                  f"({', '.join(JUDGE_METHODS)}), not {method}")
            from nfeval.linkage.prompts import braced_slots

            template, _ = braced_slots(method, self.prompt)
            check_template(method, template)
            object.__setattr__(self, "template", template)
        if kind == "judge":
            object.__setattr__(self, "mode", self.mode or "prob")
            object.__setattr__(self, "judge", JudgeConfig(
                method=method, mode=self.mode, unparsed=self.unparsed,
                positions=self.positions, seed=self.seed, max_tokens=self.max_tokens,
                guard=self.guard))
            if self.max_tokens < 1:
                raise NfevalError(f"--max-tokens must be >= 1, got {self.max_tokens}")
            if self.max_tokens != SAMPLING["max_tokens"] and self.mode != "generate":
                raise NfevalError("--max-tokens bounds generated replies: it is for --mode "
                                  "generate")
        check_references(self.references)
        check_rouge(self.rouge)

    @property
    def kind(self) -> str:
        """``"judge"``, ``"refppl"`` or ``"lexical"``."""
        return method_kind(self.method)

    @property
    def label(self) -> str:
        """The method's name for people, e.g. ``"LINKAGE (prob, 3-shot)"``."""
        from nfeval.linkage.file_format import method_label

        return method_label(self.method, self.mode, self.shots)
