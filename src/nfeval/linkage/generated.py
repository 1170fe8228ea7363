"""Reference lists written by LLMs: LINKAGE-1GT and LINKAGE-0GT (Tables 3 and 4).

LINKAGE (EMNLP 2024), Section 3.3.2: when a question has a single grade of
ground truth, "we first prompt LLMs to answer the question based on the
original golden answer, thus obtaining a new high-quality golden answer"
(Figure 8), "then use the prompt in Figure 9 to obtain other lower-quality
reference answers". Section 3.3.3: without any ground truth, the golden answer
comes from GPT-4 directly, and the lower-quality ones as before. Section 4.4:
the golden answer is written by gpt-4-1106-preview; the degraded answers by
three LLMs (Mistral-7B-Instruct-v0.2, gpt-3.5-turbo-16k,
Meta-Llama-3-8B-Instruct), "then we randomly sample reference answers from
three lists to form R for each grade". Section 4.2.2: LINKAGE-1GT's one
ground truth is drawn from the question's highest grade
(:func:`nfeval.linkage.references.single_reference`).

What is the release's, what is the project's:

* Degraded answers: the release's ``prompt/create_multi_step_answer.txt``
  (Figure 9; registry name ``linkage/create_multi_step_answer``), slots
  ``#question`` and ``#ground`` (the golden answer) filled as the judges fill
  theirs (:func:`nfeval.linkage.judges.fill_slots`). It asks for
  ``Answer1:``, ``Answer2:``, ``Answer3:``, best first; they become the
  references of grades 2, 1 and 0 under the golden answer's grade 3, so a
  complete list has the pattern ``"3210"``. The release published no parser
  for this output: :func:`parse_degraded` is the project's.
* Golden answer: Figure 8's prompt was never released. The project's
  stand-ins are ``prompts/linkage_golden_1gt.txt`` (question and the one
  ground truth) and ``prompts/linkage_golden_0gt.txt`` (question only).
* Decoding: the paper gives temperature 0.8 for all experiments; we use
  0.8 with top_p 0.95 (the judges' decoding), a seed per question, stage and
  attempt, so a question's references do not depend on which other
  questions are in the run.
* Failures are kept visible: an output without three parseable answers is
  retried with the next attempt's seed (``attempts``); if every attempt
  fails, the attempt that gave the most answers is kept and the missing
  grades are recorded (:attr:`GeneratedReferences.missing`). An empty golden
  answer after every attempt leaves the question without references
  (:attr:`GeneratedReferences.ok` is False); the notebooks skip and count it.

Every output is cached on disk (:class:`nfeval.runcache.RunCache`), keyed by
the model, the prompt text, the decoding, the seed and the attempts, so
reruns regenerate nothing.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nfeval.errors import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.hashing import derived_seed, sha256_text
from nfeval.linkage.file_format import DEFAULT_MODELS
from nfeval.linkage.judges import fill_slots
from nfeval.linkage.references import ReferenceSplit
from nfeval.linkage.settings import GenerationSettings
from nfeval.models.base import LanguageModel
from nfeval.models.window import fit_text
from nfeval.prompts import prompt_text
from nfeval.runcache import RunCache

__all__ = [
    "DEGRADE_PROMPT",
    "GENERATORS",
    "GOLDEN_PROMPTS",
    "GeneratedReferences",
    "GeneratorSpec",
    "clean_golden",
    "degrade_prompt",
    "example_answers",
    "generate_reference_lists",
    "generated_split",
    "golden_prompt",
    "parse_degraded",
    "parse_generator",
]

MODES = ("1gt", "0gt")
#: The project's golden-answer prompts (``prompts/``), by setting.
GOLDEN_PROMPTS = {"1gt": "linkage_golden_1gt", "0gt": "linkage_golden_0gt"}
#: The release's prompt for the three degraded answers (paper Figure 9).
DEGRADE_PROMPT = "linkage/create_multi_step_answer"
DECODING = {"temperature": 0.8, "top_p": 0.95}
N_DEGRADED = 3


@dataclass(frozen=True)
class GeneratorSpec:
    """A model that writes references, and the backend that runs it."""

    name: str
    backend: str = "hf"  # "hf" | "llama" | "openai"

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}"


def parse_generator(text: str) -> GeneratorSpec:
    """``"llama:qwen2.5-coder-0.5b-instruct"`` -> GeneratorSpec; no backend prefix means hf."""
    backend, sep, name = text.strip().partition(":")
    if not sep:
        return GeneratorSpec(text.strip(), "hf")
    if backend not in ("hf", "llama", "openai"):
        return GeneratorSpec(text.strip(), "hf")  # a colon inside a name
    return GeneratorSpec(name.strip(), backend)


#: Reference writers per profile: (golden-answer model, degraded-answer models).
#: embedded: the profile's judge model (Qwen2.5-Coder-1.5B; the paper writes references with its
#: judges' own models), through llama.cpp (fast generation on CPU). paper: Section 4.4's models.
GENERATORS: dict[str, tuple[GeneratorSpec, tuple[GeneratorSpec, ...]]] = {
    "embedded": (GeneratorSpec(DEFAULT_MODELS["judge"], "llama"),
                 (GeneratorSpec(DEFAULT_MODELS["judge"], "llama"),)),
    "paper": (GeneratorSpec("gpt-4-1106-preview", "openai"),
              (GeneratorSpec("mistralai/Mistral-7B-Instruct-v0.2", "hf"),
               GeneratorSpec("gpt-3.5-turbo-16k", "openai"),
               GeneratorSpec("meta-llama/Meta-Llama-3-8B-Instruct", "hf"))),
}


# --------------------------------------------------------------------------- prompts

def golden_prompt(question: str, ground_truth: str | None = None) -> str:
    """The project's golden-answer prompt: 1GT with ``ground_truth``, 0GT without."""
    mode = "0gt" if ground_truth is None else "1gt"
    return fill_slots(prompt_text(GOLDEN_PROMPTS[mode]),
                      {"question": question, "ground": ground_truth})


def degrade_prompt(question: str, golden: str, template: str | None = None) -> str:
    """The release's Figure 9 prompt, stripped, with the question and the golden answer."""
    if template is None:
        from nfeval.data import load_prompt

        template = load_prompt(DEGRADE_PROMPT)
    return fill_slots(template.strip(), {"question": question, "ground": golden})


# --------------------------------------------------------------------------- parsers

_LABEL = re.compile(r"^\s*(?:\*\*|__)?\s*(?:golden\s+|better\s+|high[- ]quality\s+)?answer\s*:"
                    r"\s*(?:\*\*|__)?", re.IGNORECASE)
_MARKER = re.compile(
    r"(?:^|\n)[ \t>#*_-]*(?:answer|response)[ \t]*#?[ \t]*([1-9])[ \t]*(?:\*\*|__)?[ \t]*[:.)\-]"
    r"(?:[ \t]*(?:\*\*|__))?", re.IGNORECASE)
_NUMBERED = re.compile(r"(?:^|\n)[ \t]*(?:\*\*)?([1-9])[.)](?:\*\*)?[ \t]+")
_WRAP = " \t\n\r{}\"'`*_"


def _strip(text: str) -> str:
    return text.strip(_WRAP).strip()


def clean_golden(text: str) -> str:
    """A generated golden answer without a leading ``Answer:`` label or wrapping braces/quotes."""
    t = text.strip()
    t = _LABEL.sub("", t, count=1)
    return _strip(t)


def _segments(text: str, pattern: re.Pattern) -> dict[int, str]:
    marks = list(pattern.finditer(text))
    out: dict[int, str] = {}
    for m, nxt in zip(marks, marks[1:] + [None]):
        k = int(m.group(1))
        seg = _strip(text[m.end():nxt.start() if nxt else len(text)])
        if k not in out and seg:
            out[k] = seg
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def parse_degraded(text: str | None, n: int = N_DEGRADED, exclude: Sequence[str] = ()
                   ) -> dict[int, str]:
    """The numbered answers 1..n of a Figure 9 output, ``{number: text}``.

    Markers ``Answer1:``, ``Answer 2:``, ``**Answer 3:**``, ``Response 1.``
    (case-insensitive, at the start of a line); if none is found, a numbered
    list ``1.`` / ``2)``. The first occurrence of a number wins; a segment
    runs to the next marker; braces, quotes and markdown emphasis around it
    are removed; empty segments and numbers outside 1..n are dropped. A
    complete parse has all n numbers. A segment equal (up to case and
    spacing) to one of ``exclude`` is dropped: the release prompt's own
    example answers, which a small model may copy instead of writing its own.
    """
    t = (text or "").replace("\r\n", "\n")
    found = _segments(t, _MARKER)
    if not found:
        found = _segments(t, _NUMBERED)
    banned = {_norm(e) for e in exclude}
    return {k: v for k, v in sorted(found.items()) if 1 <= k <= n and _norm(v) not in banned}


def example_answers(template: str) -> tuple[str, ...]:
    """The example answers shown in the Figure 9 prompt (its ``Answer1:`` ... lines)."""
    head = template.split("Below are", 1)[0]
    return tuple(parse_degraded(head).values())


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class GeneratedReferences:
    """One question's generated reference list (best first) and how it was obtained."""

    qid: str
    mode: str  # "1gt" | "0gt"
    golden: str  # "" when every attempt failed
    degraded: dict[int, str]  # grade (2, 1, 0) -> text; missing grades absent
    sources: dict[int, str]  # grade -> model that wrote it
    ground_truth_id: str | None = None  # 1GT: the human answer the golden one was built on
    golden_attempts: int = 1
    degraded_outputs: int = 0  # degrader outputs generated (all models, all attempts)
    degraded_failures: int = 0  # of those, outputs without all three answers
    #: tokens cut from the end of the ground truth (1GT) and of the golden answer (degrading)
    #: so that each prompt fits its model's window (nfeval.models.window.fit_text)
    cut_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """A golden answer exists (the list has at least its grade-3 reference)."""
        return bool(self.golden)

    @property
    def missing(self) -> tuple[int, ...]:
        """Grades of the full ``"3210"`` list that are absent."""
        have = set(self.degraded) | ({3} if self.golden else set())
        return tuple(g for g in (3, 2, 1, 0) if g not in have)

    @property
    def complete(self) -> bool:
        return not self.missing

    def references(self) -> tuple[GradedAnswer, ...]:
        """The list as graded answers, best first (grade 3 = golden)."""
        out = []
        if self.golden:
            out.append(GradedAnswer(f"gen-{self.mode}:{self.qid}:3", self.golden, 3, None,
                                    self.sources.get(3)))
        for g in (2, 1, 0):
            if g in self.degraded:
                out.append(GradedAnswer(f"gen-{self.mode}:{self.qid}:{g}", self.degraded[g], g,
                                        None, self.sources.get(g)))
        return tuple(out)


def generated_split(question: GradedQuestion, refs: GeneratedReferences,
                    candidates: Sequence[GradedAnswer], seed: int = 0) -> ReferenceSplit:
    """A :class:`ReferenceSplit` whose references are the generated list."""
    r = refs.references()
    return ReferenceSplit(qid=question.qid, pattern="".join(str(a.grade) for a in r) or "-",
                          seed=seed, references=r, candidates=tuple(candidates),
                          missing=refs.missing)


# --------------------------------------------------------------------------- generation

def _item_seed(seed: int, qid: str, stage: str, attempt: int) -> int:
    return derived_seed(f"refgen/{seed}/{qid}/{stage}/{attempt}")



def _generate(model: LanguageModel, user: str, max_tokens: int, seed: int) -> tuple[str, int]:
    g = model.generate(model.chat_prompt(user), temperature=DECODING["temperature"],
                       top_p=DECODING["top_p"], max_tokens=max_tokens, seed=seed)
    return g.text, int(g.n_tokens or 0)


def _golden(model: LanguageModel, cache: RunCache | None, qid: str, user: str, *,
            seed: int, attempts: int, max_tokens: int) -> dict[str, Any]:
    hit = cache.get(qid, user) if cache is not None else None
    if hit is not None:
        return hit
    raws, text, tokens = [], "", 0
    for a in range(attempts):
        raw, n = _generate(model, user, max_tokens, _item_seed(seed, qid, "golden", a))
        raws.append(raw)
        tokens += n
        text = clean_golden(raw)
        if text:
            break
    res = {"golden": text, "attempts": len(raws), "raw": raws, "tokens": tokens}
    if cache is not None:
        cache.put(qid, user, res)
    return res


def _degraded(model: LanguageModel, cache: RunCache | None, qid: str, user: str, *,
              seed: int, attempts: int, max_tokens: int, exclude: Sequence[str]
              ) -> dict[str, Any]:
    hit = cache.get(qid, user) if cache is not None else None
    if hit is not None:
        return hit
    raws, best, failures, tokens = [], {}, 0, 0
    for a in range(attempts):
        raw, n = _generate(model, user, max_tokens, _item_seed(seed, qid, "degraded", a))
        raws.append(raw)
        tokens += n
        parsed = parse_degraded(raw, exclude=exclude)
        if len(parsed) > len(best):
            best = parsed
        if len(parsed) == N_DEGRADED:
            break
        failures += 1
    res = {"answers": {str(k): v for k, v in best.items()}, "outputs": len(raws),
           "failures": failures, "raw": raws, "tokens": tokens}
    if cache is not None:
        cache.put(qid, user, res)
    return res


def generate_reference_lists(
    golden_model: LanguageModel,
    degraders: Sequence[LanguageModel],
    questions: Sequence[GradedQuestion],
    ground_truths: Mapping[str, GradedAnswer] | None = None,
    *,
    seed: int = 0,
    generation: GenerationSettings = GenerationSettings(),
    use_cache: bool = True,
    progress: bool = True,
) -> list[GeneratedReferences]:
    """Generated reference lists for ``questions``, in order.

    ``ground_truths`` (qid -> the one human answer) selects LINKAGE-1GT: the
    golden answer is rewritten from it; ``None`` is LINKAGE-0GT (question
    only). Each of ``degraders`` writes three degraded answers from the
    golden one; with several degraders, each grade's reference is drawn
    at random (seeded by ``seed``, question and grade) among the models
    whose output has that grade, as the paper samples from its three lists.
    ``generation``: the attempts per output, the token budgets and the degrading prompt
    (:class:`~nfeval.linkage.settings.GenerationSettings`).
    """
    from tqdm.auto import tqdm

    attempts = generation.attempts
    golden_tokens, degraded_tokens = generation.golden_tokens, generation.degraded_tokens
    degrade_template = generation.degrade_template

    if not degraders:
        raise NfevalError("generate_reference_lists needs at least one degrader model.")
    if attempts < 1:
        raise NfevalError(f"attempts must be >= 1, got {attempts}.")
    mode = "0gt" if ground_truths is None else "1gt"
    if degrade_template is None:
        from nfeval.data import load_prompt

        degrade_template = load_prompt(DEGRADE_PROMPT)
    gold_template = prompt_text(GOLDEN_PROMPTS[mode])
    examples = example_answers(degrade_template)
    common = {"seed": int(seed), "attempts": int(attempts), **DECODING}
    g_cache = RunCache("linkage-golden", {
        "model": golden_model.info.cache_fields(), "mode": mode, "max_tokens": int(golden_tokens),
        "prompt_sha256": sha256_text(gold_template), **common}, model=golden_model) if use_cache else None
    d_caches = [RunCache("linkage-degraded", {
        "model": m.info.cache_fields(), "max_tokens": int(degraded_tokens),
        "prompt_sha256": sha256_text(degrade_template), **common}, model=m) if use_cache else None
        for m in degraders]
    out: list[GeneratedReferences] = []
    for q in tqdm(questions, desc=f"references ({mode})", unit="question", disable=not progress):
        gt = None
        if ground_truths is not None:
            gt = ground_truths.get(q.qid)
            if gt is None:
                raise NfevalError(f"question {q.qid}: no ground truth given for 1GT.")
        source, cut = None, 0
        if gt is not None:  # the ground truth is cut to fit, never the instructions
            source, cut = fit_text(golden_model, lambda t: golden_model.chat_prompt(
                golden_prompt(q.question, t)), gt.text, reserve=golden_tokens,
                what="the ground-truth answer")
        gold = _golden(golden_model, g_cache, q.qid, golden_prompt(q.question, source),
                       seed=seed, attempts=attempts, max_tokens=golden_tokens)
        raw: dict[str, Any] = {"golden": gold["raw"], "degraded": []}
        degraded: dict[int, str] = {}
        sources: dict[int, str] = {3: golden_model.info.name} if gold["golden"] else {}
        outputs = failures = 0
        if gold["golden"]:
            per_model = []
            for m, cache in zip(degraders, d_caches):
                golden, c = fit_text(m, lambda t, m=m: m.chat_prompt(degrade_prompt(
                    q.question, t, degrade_template)), gold["golden"],
                    reserve=degraded_tokens, what="the golden answer")
                cut += c
                user = degrade_prompt(q.question, golden, degrade_template)
                d = _degraded(m, cache, q.qid, user, seed=seed, attempts=attempts,
                              max_tokens=degraded_tokens, exclude=examples)
                outputs += d["outputs"]
                failures += d["failures"]
                raw["degraded"].append({"model": m.info.name, "raw": d["raw"]})
                per_model.append((m.info.name, {int(k): v for k, v in d["answers"].items()}))
            for number in range(1, N_DEGRADED + 1):
                grade = N_DEGRADED - number  # Answer1 -> 2, Answer2 -> 1, Answer3 -> 0
                have = [(name, ans[number]) for name, ans in per_model if number in ans]
                if have:
                    name, text = (have[0] if len(have) == 1 else
                                  random.Random(f"refgen/{seed}/{q.qid}/pick/{grade}")
                                  .choice(have))
                    degraded[grade] = text
                    sources[grade] = name
        out.append(GeneratedReferences(
            qid=q.qid, mode=mode, golden=gold["golden"], degraded=degraded, sources=sources,
            ground_truth_id=gt.doc_id if gt else None, golden_attempts=gold["attempts"],
            degraded_outputs=outputs, degraded_failures=failures, cut_tokens=cut, raw=raw))
    return out
