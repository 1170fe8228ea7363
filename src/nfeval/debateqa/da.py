"""Dispute Awareness (DebateQA, EACL 2026, Section 4.3): kernel, variants, baseline.

What it computes, where it departs from the release and why:
``docs/debateqa.md`` (Dispute Awareness).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nfeval.errors import NfevalError
from nfeval.models.base import LanguageModel

__all__ = [
    "ACKNOWLEDGE_PHRASES_FILE",
    "DA_MODES",
    "DA_PROMPT",
    "DAResult",
    "acknowledge_baseline",
    "acknowledge_patterns",
    "da_metrics",
    "da_prob_batch",
    "da_prob_fitted",
    "da_prompt",
    "da_score",
    "da_scores",
    "first_binary_digit",
    "zero_shot_template",
]

DA_PROMPT = "debateqa/dispute_awareness_fewshot"  # registry name of the release template
DA_MODES = ("prob", "generate", "official")
LABELS = ("0", "1")
# the released script's generation budget (official mode only generates when the
# prompt itself holds no 0/1, see da_score)
OFFICIAL_MAX_NEW_TOKENS = 2048

_DIGIT = re.compile(r"[01]")
PROB_CHUNK = 8  # answers scored together on the shared prefix (progress and caching step)


# --------------------------------------------------------------------------- prompts

def _template(template: str | None) -> str:
    if template is not None:
        return template
    from nfeval.data import load_prompt

    return load_prompt(DA_PROMPT)


def zero_shot_template(template: str | None = None) -> str:
    """The D.A.-ZS template: the few-shot template minus its demonstrations.

    The block from "Examples:" up to (not including) "Instruction:" is removed;
    the task sentence, the instruction lines and the question/answer slots stay
    exactly as released.
    """
    t = _template(template)
    i = t.find("Examples:")
    j = t.find("Instruction:", i + 1) if i >= 0 else -1
    if i < 0 or j < 0:
        raise NfevalError("The D.A. template has no 'Examples:' ... 'Instruction:' block; "
                          "cannot derive the zero-shot prompt from it. Pass zero_shot=False "
                          "or a template in the release's layout.")
    return t[:i] + t[j:]


def braced_slots(template: str) -> tuple[str, bool]:
    """A D.A. prompt of one's own with ``#question`` / ``#answer`` (the LINKAGE release's
    spelling, accepted as an alias) turned into nfeval's ``{question}`` / ``{answer}``; and
    whether the alias was used."""
    if "{question}" in template or "{answer}" in template:
        return template, False
    used = "#question" in template or "#answer" in template
    return template.replace("#question", "{question}").replace("#answer", "{answer}"), used


def check_template(template: str, *, zero_shot: bool = False) -> str:
    """``template`` when it can serve as a D.A. prompt, else an error naming what it lacks:
    the ``{question}`` and ``{answer}`` slots (and, for ``zero_shot``, the
    "Examples:" ... "Instruction:" block)."""
    missing = [s for s in ("{question}", "{answer}") if s not in template]
    if missing:
        raise NfevalError(f"the D.A. prompt lacks the slot(s) {', '.join(missing)}: a D.A. "
                          "prompt holds {question} and {answer}, where the question and the "
                          "answer are filled in")
    if zero_shot:
        zero_shot_template(template)
    return template


def da_prompt(question: str, answer: str, *, zero_shot: bool = False,
              template: str | None = None) -> str:
    """The release's D.A. prompt with ``{question}`` and ``{answer}`` filled.

    ``template`` defaults to the release template (``load_prompt``). Slots are
    filled with ``str.replace`` (not ``str.format``), so braces in answers are
    kept literally; the question is filled first, the answer last, so text
    inside the answer is never mistaken for a slot.
    """
    t = zero_shot_template(template) if zero_shot else _template(template)
    if "{question}" not in t or "{answer}" not in t:
        raise NfevalError("The D.A. template must contain the {question} and {answer} slots.")
    # split on the answer slot first so that a "{answer}" inside the question is kept
    head, _, tail = t.partition("{answer}")
    return head.replace("{question}", question) + answer + tail.replace("{question}", question)


# --------------------------------------------------------------------------- scoring

@dataclass
class DAResult:
    """One D.A. judgment.

    ``score``: P("1") in ``prob`` mode, 1.0/0.0 when a digit was parsed (or
    by the Acknowledge rule), NaN when no digit was found. ``label``: 1/0, or
    None when unparsed. ``raw``: the judge's reply (``generate``), the text
    around the deciding digit (``official``) or the matched phrase
    (``acknowledge``). ``p_one``: P("1") where computed. ``cut_tokens``: the tokens cut
    from the answer's end so that the prompt fits the judge's window (``prob`` and
    ``generate``; :func:`nfeval.models.window.fit_text`).
    """

    id: Hashable
    score: float
    label: int | None
    mode: str
    raw: str | None = None
    p_one: float | None = None
    cut_tokens: int = 0


def _fit_answer(judge, question: str, answer: str, *, zero_shot: bool, template: str | None,
                reserve: int) -> tuple[str, int]:
    """The answer cut from its end where the judge's chat prompt would not fit its window."""
    from nfeval.models.window import fit_text

    return fit_text(judge, lambda t: judge.chat_prompt(
        da_prompt(question, t, zero_shot=zero_shot, template=template)), answer,
        reserve=reserve, what="the answer")


def first_binary_digit(text: str) -> int | None:
    """The first '0' or '1' character of ``text`` as an int, or None (release parser)."""
    m = _DIGIT.search(text or "")
    return int(m.group()) if m else None


def _from_digit(id, digit: int | None, mode: str, raw: str | None) -> DAResult:
    if digit is None:
        return DAResult(id=id, score=math.nan, label=None, mode=mode, raw=raw)
    return DAResult(id=id, score=float(digit), label=digit, mode=mode, raw=raw)


def da_score(judge: LanguageModel | None, question: str, answer: str, *, mode: str = "prob",
             zero_shot: bool = False, id: Hashable = None, max_tokens: int = 8,
             template: str | None = None) -> DAResult:
    """D.A. of one answer (module docstring: the three modes).

    ``max_tokens`` bounds greedy generation (``generate`` and, where it
    generates at all, ``official``).

    ``official`` departs from the release in cost only: the release decodes
    the prompt together with up to 2,048 generated tokens and takes the first
    '0'/'1' of the whole text. Here the prompt text is searched first; when it
    holds a 0/1 (always, for the release template) that digit is the result,
    identical to the release's whatever the judge would have generated, and
    nothing is generated (``judge`` may then be None). Only a prompt without
    any 0/1 (a custom template) makes the judge generate, up to
    ``max_tokens`` tokens instead of 2,048, with no chat template.
    """
    if mode not in DA_MODES:
        raise NfevalError(f"Unknown D.A. mode {mode!r}; use one of {', '.join(DA_MODES)}.")
    prompt = da_prompt(question, answer, zero_shot=zero_shot, template=template)

    if mode == "official":
        m = _DIGIT.search(prompt)
        if m:
            raw = "[prompt] ..." + prompt[max(0, m.start() - 40): m.end()]
            return _from_digit(id, int(m.group()), mode, raw)
        if judge is None:
            raise NfevalError("official D.A. needs a judge when the prompt holds no 0/1 digit.")
        gen = judge.generate(prompt, temperature=0.0, max_tokens=max_tokens)
        return _from_digit(id, first_binary_digit(gen.text), mode, gen.text)

    if judge is None:
        raise NfevalError(f"D.A. mode {mode!r} needs a judge model.")
    answer, cut = _fit_answer(judge, question, answer, zero_shot=zero_shot, template=template,
                              reserve=1 if mode == "prob" else max_tokens)
    chat = judge.chat_prompt(da_prompt(question, answer, zero_shot=zero_shot, template=template))
    if mode == "prob":
        dist = judge.label_distribution(chat, list(LABELS))
        p1 = float(dist["1"])
        return DAResult(id=id, score=p1, label=int(p1 >= 0.5), mode=mode, p_one=p1,
                        cut_tokens=cut)

    # generate: parse the reply only, never the prompt
    gen = judge.generate(chat, temperature=0.0, max_tokens=max_tokens)
    res = _from_digit(id, first_binary_digit(gen.text), mode, gen.text)
    res.cut_tokens = cut
    return res


_SENTINEL_Q = "\x00NFEVAL_QUESTION\x00"
_SENTINEL_A = "\x00NFEVAL_ANSWER\x00"


def _shared_split(judge: LanguageModel, zero_shot: bool, template: str | None) -> int:
    """Where the judge's chat prompt stops being the same for every answer: the
    start of the "Question:" line that holds the question slot."""
    chat = judge.chat_prompt(da_prompt(_SENTINEL_Q, _SENTINEL_A, zero_shot=zero_shot,
                                       template=template))
    i = chat.find(_SENTINEL_Q)
    if i < 0:
        return 0
    j = chat.rfind("Question:", 0, i)
    return j if j >= 0 else i


def _prob_batch_ids(judge, chats: list[str], zero_shot: bool, template: str) -> list[float]:
    """Shared prefix found on token ids: the tokens every prompt shares with a prompt
    whose question and answer are placeholders. Each prompt is tokenized whole, as
    :meth:`label_distribution` does, so the values are the per-prompt ones exactly."""
    from nfeval.models.base import normalize

    probe = judge.chat_prompt(
        da_prompt(_SENTINEL_Q, _SENTINEL_A, zero_shot=zero_shot, template=template))
    rows = judge.batch_label_logprobs(chats, list(LABELS), share_with=probe)
    return [float(normalize(r)["1"]) for r in rows]


def da_prob_batch(judge: LanguageModel, pairs: Sequence[tuple[str, str]], *,
                  zero_shot: bool = False, template: str | None = None) -> list[float]:
    """``prob``-mode P("1") of many (question, answer) pairs with a shared prefix.

    The chat prompt's instructions and demonstrations are the same for every
    answer; they are encoded once and their KV cache reused. On the
    transformers backend the shared part is found on token ids (each prompt
    tokenized whole), so the values equal :func:`da_score`'s; other backends
    share the text up to the "Question:" line
    (:meth:`LanguageModel.prefix_label_distribution`).
    """
    return da_prob_fitted(judge, pairs, zero_shot=zero_shot, template=template)[0]


def da_prob_fitted(judge: LanguageModel, pairs: Sequence[tuple[str, str]], *,
                   zero_shot: bool = False, template: str | None = None
                   ) -> tuple[list[float], list[int]]:
    """:func:`da_prob_batch`, and the tokens cut from each answer to fit the window."""
    tpl = _template(template)
    fitted = [_fit_answer(judge, q, a, zero_shot=zero_shot, template=tpl, reserve=1)
              for q, a in pairs]
    cuts = [c for _, c in fitted]
    chats = [judge.chat_prompt(da_prompt(q, a, zero_shot=zero_shot, template=tpl))
             for (q, _), (a, _) in zip(pairs, fitted)]
    if not chats:
        return [], []
    if getattr(judge, "token_level", False):
        return _prob_batch_ids(judge, chats, zero_shot, tpl), cuts
    split = _shared_split(judge, zero_shot, tpl)
    prefix = chats[0][:split]
    shares = type(judge).prefix_label_logprobs is not LanguageModel.prefix_label_logprobs
    if not shares or split == 0 or any(not c.startswith(prefix) for c in chats):
        # a backend without a shared-prefix kernel: the full prompts, one by one
        return [float(judge.label_distribution(c, list(LABELS))["1"]) for c in chats], cuts
    dists = judge.prefix_label_distribution(prefix, [c[split:] for c in chats], list(LABELS))
    return [float(d["1"]) for d in dists], cuts


def da_scores(judge: LanguageModel | None, items: Mapping[Hashable, str],
              answers: Mapping[Hashable, str], *, mode: str = "prob", zero_shot: bool = False,
              progress: bool = True, max_tokens: int = 8,
              template: str | None = None) -> list[DAResult]:
    """D.A. of many answers: ``items`` maps id -> question, ``answers`` id -> answer.

    Results follow the order of ``answers``. As in the released script, answers
    whose id has no question are skipped (with a warning naming how many).
    """
    from tqdm.auto import tqdm

    if mode not in DA_MODES:
        raise NfevalError(f"Unknown D.A. mode {mode!r}; use one of {', '.join(DA_MODES)}.")
    tpl = _template(template)
    ids = [i for i in answers if i in items]
    missing = len(answers) - len(ids)
    if missing:
        warnings.warn(f"{missing} answer(s) have no question in items and were skipped.",
                      stacklevel=2)
    out = []
    bar = tqdm(total=len(ids), desc=f"D.A. ({mode}{', zero-shot' if zero_shot else ''})",
               disable=not progress, unit="answer")
    if mode == "prob":
        if judge is None:
            raise NfevalError("D.A. mode 'prob' needs a judge model.")
        for k in range(0, len(ids), PROB_CHUNK):
            chunk = ids[k:k + PROB_CHUNK]
            p1s, cuts = da_prob_fitted(judge, [(items[i], answers[i]) for i in chunk],
                                    zero_shot=zero_shot, template=tpl)
            out += [DAResult(id=i, score=p, label=int(p >= 0.5), mode=mode, p_one=p,
                             cut_tokens=c) for i, p, c in zip(chunk, p1s, cuts)]
            bar.update(len(chunk))
        bar.close()
        return out
    for i in ids:
        out.append(da_score(judge, items[i], answers[i], mode=mode, zero_shot=zero_shot,
                            id=i, max_tokens=max_tokens, template=tpl))
        bar.update()
    bar.close()
    return out


# --------------------------------------------------------------------------- baseline

def _phrases_file() -> Path:
    from nfeval.paths import PROMPTS

    return PROMPTS / "da_acknowledge_phrases.txt"


ACKNOWLEDGE_PHRASES_FILE = _phrases_file()
_PATTERNS: list[re.Pattern] | None = None


def acknowledge_patterns(path: str | Path | None = None) -> list[re.Pattern]:
    """The Acknowledge rule's regular expressions (case-insensitive), one per line.

    Blank lines and lines starting with ``#`` are ignored. The default file is
    read once and cached.
    """
    global _PATTERNS
    if path is None and _PATTERNS is not None:
        return _PATTERNS
    p = Path(path) if path is not None else ACKNOWLEDGE_PHRASES_FILE
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise NfevalError(f"cannot read the Acknowledge phrase list {p}: {e.strerror or e}.") from e
    pats = []
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            pats.append(re.compile(s, re.IGNORECASE))
        except re.error as e:
            raise NfevalError(f"{p}, line {n}: bad regular expression {s!r}: {e}.") from e
    if not pats:
        raise NfevalError(f"{p} holds no patterns.")
    if path is None:
        _PATTERNS = pats
    return pats


def acknowledge_baseline(answer: str, *, id: Hashable = None,
                         patterns: Sequence[re.Pattern] | None = None) -> DAResult:
    """The Acknowledge baseline: 1 if the answer holds a debate-acknowledging phrase.

    The project's stand-in for DELPHI's Acknowledge metric (DebateQA Table 3),
    not DELPHI's code: any match of a pattern in
    ``prompts/da_acknowledge_phrases.txt`` gives label 1 (score 1.0), else 0.
    Like any phrase rule it cannot tell *what* is called controversial (an
    answer calling another subject contested still scores 1). ``raw`` is the
    first matched text.
    """
    pats = acknowledge_patterns() if patterns is None else patterns
    for pat in pats:
        m = pat.search(answer or "")
        if m:
            return DAResult(id=id, score=1.0, label=1, mode="acknowledge", raw=m.group())
    return DAResult(id=id, score=0.0, label=0, mode="acknowledge")


# --------------------------------------------------------------------------- metrics

def da_metrics(labels: Sequence[int], scores: Sequence[float | DAResult]) -> dict:
    """Paper Table 3's agreement of D.A. scores with human labels (0/1).

    ``scores`` are P("1") or 0/1 (or :class:`DAResult` objects). Items whose
    score is NaN (unparsed replies) are left out of every metric and counted
    in ``n_unparsed``; ``n`` is the number of items given, ``n_scored`` the
    number used. The predicted label is ``score >= 0.5``. Returns accuracy,
    F1 of class 1 (0 where it has no positives), AUROC (from the scores; NaN when only one
    class remains) and MCC (0 where undefined), computed as scikit-learn computes them, to
    the last bit (the tests compare them).
    """
    import numpy as np

    if len(labels) != len(scores):
        raise NfevalError(f"da_metrics: {len(labels)} labels but {len(scores)} scores.")
    ys, ss = [], []
    n_unparsed = 0
    for y, s in zip(labels, scores, strict=True):
        v = s.score if isinstance(s, DAResult) else s
        v = math.nan if v is None else float(v)
        if int(y) not in (0, 1):
            raise NfevalError(f"da_metrics: labels must be 0 or 1, got {y!r}.")
        if math.isnan(v):
            n_unparsed += 1
            continue
        ys.append(int(y))
        ss.append(v)
    out = {"n": len(labels), "n_scored": len(ys), "n_unparsed": n_unparsed}
    if not ys:
        return {"accuracy": math.nan, "f1": math.nan, "auroc": math.nan, "mcc": math.nan, **out}
    y, s = np.asarray(ys, dtype=np.int64), np.asarray(ss, dtype=np.float64)
    pred = (s >= 0.5).astype(np.int64)
    tp = int(np.sum((y == 1) & (pred == 1)))
    fp = int(np.sum((y == 0) & (pred == 1)))
    fn = int(np.sum((y == 1) & (pred == 0)))
    tn = y.size - tp - fp - fn
    # MCC from the confusion matrix's margins (true and predicted class sums)
    t_sum, p_sum = np.array([tn + fp, fn + tp], float), np.array([tn + fn, fp + tp], float)
    n = float(y.size)
    cov_tp = (tp + tn) * n - np.dot(t_sum, p_sum)
    cov_pp_tt = (n ** 2 - np.dot(p_sum, p_sum)) * (n ** 2 - np.dot(t_sum, t_sum))
    return {
        "accuracy": float(np.mean(y == pred)),
        "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
        "auroc": _auroc(y, s) if 0 < tp + fn < y.size else math.nan,
        "mcc": 0.0 if cov_pp_tt == 0 else float(cov_tp / np.sqrt(cov_pp_tt)),
        **out,
    }


def _auroc(y, s) -> float:
    """The area under the ROC curve by the trapezoid rule over its corners (each distinct
    score a threshold, collinear points dropped), in scikit-learn's order of operations."""
    import numpy as np

    order = np.argsort(s, kind="mergesort")[::-1]
    y, s = y[order], s[order]
    last = np.r_[np.where(np.diff(s))[0], y.size - 1]  # the last item of each distinct score
    tps = np.cumsum(y, dtype=np.float64)[last]
    fps = 1 + last - tps
    if len(fps) > 2:
        keep = np.where(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])[0]
        fps, tps = fps[keep], tps[keep]
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    return float(np.trapezoid(tps / tps[-1], fps / fps[-1]))
