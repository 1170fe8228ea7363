"""POV extraction and explanation expansion (DebateQA Section 3.2, Table 11, Algorithm 1).

DebateQA collects partial answers in two LLM stages over each question's 3-5
trusted documents:

1. **POV extraction** (prompt p_POV): the question and the concatenated,
   numbered documents go in; "a list of diverse POVs along with the
   corresponding document indexes where each specific POV is originated"
   comes out. Questions with fewer than three POVs are dropped (Appendix
   A.2: 2,982 -> 2,941 questions).
2. **Explanation expansion** (prompt p_Explan): for each POV, the question,
   the POV and only the documents it came from go in; an explanation
   "anchored" to those documents comes out.

The paper used GPT-4 and the texts of its two prompts are not printed in the paper's text;
the project's prompts (``prompts/pov_extraction.txt``,
``prompts/pov_explanation.txt``) are written from the paper's description.
What the project adds, because small models do not follow a format
reliably:

* :func:`parse_povs` reads numbered or bulleted lists, ``POV: ...`` labels
  and document references written in several ways (``[docs: 1, 3]``,
  ``(Documents 1 and 3)``, ``[1][3]``, ``Sources: 1-2``); a POV given without
  document numbers keeps an empty index list, and its explanation then sees
  all of the question's documents (the paper does not say what it did);
* :func:`dedup_povs` merges near-identical POVs (the prompt asks for
  non-overlapping ones, as the paper's did; small models repeat themselves);
* every LLM call is kept: in a notebook, the model comes from
  :meth:`nfeval_repro.profiles.Profile.load` while an item store is active
  (:func:`nfeval_repro.store.use_store`), so each generation is stored in
  ``results/<artefact>/items/`` and a rerun on any machine reads the committed
  text (greedy output of a quantized model can differ between CPUs); without
  a store, the on-disk :class:`nfeval.runcache.RunCache` keeps them, so reruns
  and interrupted runs generate nothing twice. Decoding is greedy by default
  (the paper does not give GPT-4's settings).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from nfeval.errors import NfevalError
from nfeval.hashing import derived_seed, sha256_text
from nfeval.prompts import prompt_text
from nfeval.runcache import RunCache

__all__ = [
    "EXPLANATION_PROMPT",
    "ExtractionSettings",
    "MIN_POVS",
    "POV_PROMPT",
    "Pov",
    "PovExtraction",
    "dedup_povs",
    "expand_explanation",
    "explanation_prompt",
    "extract_povs",
    "filter_min_povs",
    "number_documents",
    "parse_povs",
    "pov_prompt",
]

POV_PROMPT = "pov_extraction"
EXPLANATION_PROMPT = "pov_explanation"
#: Appendix A.2: "we filter out questions with fewer than three perspectives".
MIN_POVS = 3


@dataclass(frozen=True)
class Pov:
    """One point of view and the (1-based) numbers of the documents it comes from."""

    text: str
    doc_indexes: tuple[int, ...] = ()


@dataclass
class PovExtraction:
    """The parsed POVs of one question, with the raw model output behind them."""

    povs: list[Pov]
    raw: str
    parsed: int  # POVs the parser read, before deduplication
    n_tokens: int = 0
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- prompts

def number_documents(texts: Sequence[str], indexes: Sequence[int] | None = None,
                     max_chars: int = 0) -> str:
    """``Document 1:\\n<text>\\n\\nDocument 2: ...``; ``indexes`` gives the numbers to print
    (default 1..n). ``max_chars`` > 0 cuts each text to that many characters at a word
    boundary (the paper truncated the concatenation at 120K tokens for GPT-4's window)."""
    indexes = list(range(1, len(texts) + 1)) if indexes is None else list(indexes)
    if len(indexes) != len(texts):
        raise NfevalError(f"{len(indexes)} document numbers for {len(texts)} documents")
    blocks = []
    for i, text in zip(indexes, texts):
        text = " ".join(str(text).split()) if max_chars > 0 else str(text).strip()
        if max_chars > 0 and len(text) > max_chars:
            cut = text[:max_chars]
            text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " ..."
        blocks.append(f"Document {i}:\n{text}")
    return "\n\n".join(blocks)


def pov_prompt(question: str, documents: Sequence[str], *, max_chars: int = 0,
               template: str | None = None) -> str:
    """The user turn of p_POV: the question and the numbered documents."""
    if not documents:
        raise NfevalError("POV extraction needs at least one document.")
    template = prompt_text(POV_PROMPT) if template is None else template
    return template.format(question=question.strip(),
                           documents=number_documents(documents, max_chars=max_chars))


def explanation_prompt(question: str, pov: str, documents: Sequence[str],
                       indexes: Sequence[int] | None = None, *, max_chars: int = 0,
                       template: str | None = None) -> str:
    """The user turn of p_Explan: question, POV and the POV's documents (with their numbers)."""
    if not documents:
        raise NfevalError("explanation expansion needs at least one document.")
    template = prompt_text(EXPLANATION_PROMPT) if template is None else template
    return template.format(question=question.strip(), pov=pov.strip(),
                           documents=number_documents(documents, indexes, max_chars=max_chars))


# --------------------------------------------------------------------------- parsing

# An item starts with "1." "1)" "(1)" "-" "*" "•", or a label "POV 2:" / "Perspective:".
_ITEM = re.compile(
    r"^\s*(?:#{1,4}\s*)?(?:\*\*)?(?:"
    r"\(?\d{1,2}[.):](?!\d)"
    r"|[-*\u2022\u2013](?=\s)"
    r"|(?:pov|point of view|point-of-view|perspective|viewpoint|view)\s*\d{0,2}\s*[:.)\-\u2013]"
    r")", re.IGNORECASE)
_LABEL = re.compile(
    r"^(?:\*\*)?(?:pov|point of view|point-of-view|perspective|viewpoint|view)\s*\d{0,2}"
    r"\s*(?:\*\*)?\s*[:.)\-\u2013]\s*", re.IGNORECASE)
_NUM_LIST = r"\d{1,3}(?:\s*(?:,|;|&|/|\band\b|-|\u2013|\bto\b)\s*(?:(?:docs?|documents?|d)\.?\s*)?#?\d{1,3})*"
# Bracketed references: [docs: 1, 3] (Documents 1 and 3) [Doc 2] [1][3] (1, 2)
_BRACKET = re.compile(
    r"[\[(]\s*(?P<kw>(?:docs?|documents?|sources?|d)\b\.?\s*(?:nos?\.?|#)?\s*:?\s*)?"
    r"(?:from\s+)?#?(?P<nums>" + _NUM_LIST + r")\s*[\])]", re.IGNORECASE)
# Unbracketed references: "Documents: 1, 3", "from documents 1 and 2", "Source: Document 4"
_KEYWORD = re.compile(
    r"(?:\b(?:from|in|see|per|according to)\s+)?"
    r"\b(?:docs?|documents?|sources?)\b\.?\s*(?:nos?\.?|#)?\s*:?\s*(?:(?:docs?|documents?)\s*)?"
    r"#?(?P<nums>" + _NUM_LIST + r")", re.IGNORECASE)
_STOP_AT = re.compile(r"\s(?:explanation|reason|evidence|because of documents?)\s*:", re.IGNORECASE)
_RANGE = re.compile(r"(\d{1,3})\s*(?:-|\u2013|\bto\b)\s*(?:(?:docs?|documents?|d)\.?\s*)?(\d{1,3})",
                    re.IGNORECASE)
# Items that restate the task or the question instead of taking a position.
_META = re.compile(r"^(?:the|these|this|all)\s+(?:\w+\s+)?(?:question|documents?|points? of view|"
                   r"povs?|task)\b", re.IGNORECASE)
_HEADERS = re.compile(r"^(?:question|documents?\s*\d*|points? of view|povs?|answer|explanation)"
                      r"\s*:?\s*$", re.IGNORECASE)


def _numbers(spec: str) -> list[int]:
    out: list[int] = []
    for a, b in _RANGE.findall(spec):
        a, b = int(a), int(b)
        if a <= b <= a + 20:
            out.extend(range(a, b + 1))
    spec = _RANGE.sub(" ", spec)
    out.extend(int(n) for n in re.findall(r"\d{1,3}", spec))
    return out


def _doc_refs(text: str, n_docs: int | None) -> tuple[str, list[int]]:
    """Document numbers referenced in ``text`` and the text without those references.

    A bracket of bare numbers, such as ``(2018)``, counts only when every number
    is a valid document number; keyword references always count (invalid
    numbers are then dropped)."""
    found: list[int] = []

    def ok(n: int) -> bool:
        return n >= 1 and (n_docs is None or n <= n_docs)

    def bracket(m: re.Match) -> str:
        nums = _numbers(m.group("nums"))
        if not m.group("kw") and not all(ok(n) for n in nums):
            return m.group(0)
        found.extend(n for n in nums if ok(n))
        return " "

    def keyword(m: re.Match) -> str:
        found.extend(n for n in _numbers(m.group("nums")) if ok(n))
        return " "

    text = _BRACKET.sub(bracket, text)
    text = _KEYWORD.sub(keyword, text)
    return text, found


# "The question: X", "The documents: The documents argue that X" -> "X"
_FRAME = re.compile(r"^(?:(?:the\s+)?(?:question|documents?|answer|position)\s*\d{0,2}\s*:\s*)?"
                    r"(?:(?:the\s+)?(?:documents?|authors?|sources?|texts?)(?:\s+\d{1,2})?\s+"
                    r"(?:argue|argues|say|says|state|states|claim|claims|suggest|suggests|hold|"
                    r"holds|believe|believes)\s+that\s+)?", re.IGNORECASE)


def _clean(text: str) -> str:
    text = text.replace("**", "").replace("__", "")
    text = _STOP_AT.split(" " + text, maxsplit=1)[0]
    text = _LABEL.sub("", text.strip())
    framed = _FRAME.sub("", text, count=1)
    if framed != text and framed:
        text = framed[0].upper() + framed[1:]
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    text = text.strip(" \t-\u2013\u2014:;,|\"'`\u201c\u201d\u2018\u2019")
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text).strip()
    text = re.sub(r"(?:\b(?:from|in|see|per|according to|based on)\s*)+$", "", text,
                  flags=re.IGNORECASE).strip(" ,;:-")
    return text


_NUMBERED = re.compile(r"^\s*(?:#{1,4}\s*)?(?:\*\*)?\(?\d{1,2}[.):](?!\d)")
_BULLET = re.compile(r"^\s*[-*\u2022\u2013]\s+")
_BARE_NUMBERS = re.compile(r"^\s*(?:[-*\u2022\u2013]\s*)?(\d{1,2}(?:\s*(?:,|and|&)\s*\d{1,2})*)\s*\.?\s*$")


def _continuation(line: str) -> str:
    """A line inside an item: bare numbers ("- 1, 3") become a document reference."""
    m = _BARE_NUMBERS.match(line)
    if m:
        return f"[docs: {m.group(1)}]"
    return _BULLET.sub("", line).strip()


def _items(text: str) -> list[str]:
    """The list items of a model output: item lines with their continuation lines.

    In a numbered list, indented bullets continue the current item (small
    models put "- Documents: 1, 2" under each point)."""
    lines = [ln.rstrip() for ln in text.replace("\r", "").split("\n")]
    lines = [ln for ln in lines if not ln.strip().startswith("```")]
    numbered = any(_NUMBERED.match(ln) for ln in lines)
    starts = [i for i, ln in enumerate(lines)
              if (_NUMBERED.match(ln) if numbered and (ln[:1].isspace() and _BULLET.match(ln))
                  else _ITEM.match(ln))]
    if not starts:  # no list markers: every non-blank line is a candidate
        return [ln for ln in lines if ln.strip() and not ln.strip().endswith(":")]
    items: list[str] = []
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body = [_ITEM.sub("", lines[s], count=1)]
        blank = False
        for ln in lines[s + 1:end]:
            if not ln.strip():
                blank = True
                continue
            part = _continuation(ln)
            # After a blank line only a bare document reference still belongs to the item.
            if blank and not _KEYWORD.match(part) and not _BRACKET.match(part):
                break
            body.append(part)
        items.append(" ".join(body))
    return items


def parse_povs(text: str | None, n_docs: int | None = None, *, max_words: int = 60,
               min_words: int = 3, question: str | None = None) -> list[Pov]:
    """The POVs of a model output, in order (not yet deduplicated; see :func:`dedup_povs`).

    Items with fewer than ``min_words`` or more than ``max_words`` words (an
    echoed document, not "a concise statement"), headers, the question itself,
    and items that talk about the task rather than take a position ("The
    documents above take different points of view...", "The question is
    whether...") are dropped. Document numbers outside ``1..n_docs`` are dropped.
    """
    if not text or not text.strip():
        return []
    qnorm = _norm(question) if question else None
    out: list[Pov] = []
    for item in _items(text):
        rest, docs = _doc_refs(item.replace("**", "").replace("__", ""), n_docs)
        pov = _clean(rest)
        if not pov or _HEADERS.match(pov):
            continue
        if pov.lower().startswith(("question:", "documents:", "document ")) or _META.match(pov):
            continue
        words = len(pov.split())
        if words < min_words or words > max_words:
            continue
        if qnorm is not None and _norm(pov) == qnorm:
            continue
        if pov[-1] not in ".!?":
            pov += "."
        out.append(Pov(pov, tuple(sorted(set(docs)))))
    return out


# --------------------------------------------------------------------------- dedup

def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _near(a: str, b: str, jaccard: float, ratio: float) -> bool:
    na, nb = _norm(a), _norm(b)
    if na == nb:
        return True
    ta, tb = set(na.split()), set(nb.split())
    if ta and tb and len(ta & tb) / len(ta | tb) >= jaccard:
        return True
    return SequenceMatcher(None, na, nb).ratio() >= ratio


def dedup_povs(povs: Sequence[Pov], *, jaccard: float = 0.8, ratio: float = 0.9) -> list[Pov]:
    """Drop POVs that nearly repeat an earlier one, merging their document numbers into it.

    Near-identical: the same words after lower-casing and removing punctuation,
    a word-set Jaccard of at least ``jaccard``, or a character similarity
    (``difflib`` ratio) of at least ``ratio``. Order of first appearance is kept.
    """
    kept: list[Pov] = []
    for p in povs:
        for k, q in enumerate(kept):
            if _near(p.text, q.text, jaccard, ratio):
                kept[k] = Pov(q.text, tuple(sorted(set(q.doc_indexes) | set(p.doc_indexes))))
                break
        else:
            kept.append(p)
    return kept


def filter_min_povs(povs: Mapping[Any, Sequence[Pov]], min_povs: int = MIN_POVS
                    ) -> dict[Any, list[Pov]]:
    """Questions with at least ``min_povs`` POVs (Appendix A.2: fewer than three are dropped)."""
    if min_povs < 0:
        raise NfevalError(f"min_povs must be >= 0, got {min_povs}")
    return {k: list(v) for k, v in povs.items() if len(v) >= min_povs}


# --------------------------------------------------------------------------- LLM calls


def _render(model, user: str) -> str:
    """The prompt sent: the user turn in the model's chat template (plain text for base models)."""
    if getattr(model, "template", "model") == "none":
        return user
    return model.chat_prompt(user)


def _call_seed(seed: int, key: str) -> int:
    return derived_seed(f"curation/{seed}/{key}")


def extraction_cache(model, *, max_tokens: int, temperature: float, seed: int,
                     template: str, max_povs: int = 0) -> RunCache:
    return RunCache("curation-pov", {
        "model": model.info.cache_fields(), "prompt_sha256": sha256_text(template),
        "max_tokens": int(max_tokens), "temperature": float(temperature), "seed": int(seed),
        "max_povs": int(max_povs)}, model=model)


def explanation_cache(model, *, max_tokens: int, temperature: float, seed: int,
                      template: str) -> RunCache:
    return RunCache("curation-explan", {
        "model": model.info.cache_fields(), "prompt_sha256": sha256_text(template),
        "max_tokens": int(max_tokens), "temperature": float(temperature), "seed": int(seed)},
        model=model)


def _generate(model, cache: RunCache | None, key: str, user: str, *, max_tokens: int,
              temperature: float, seed: int, stop: Sequence[str] = ()
              ) -> tuple[dict[str, Any], bool]:
    prompt = _render(model, user)
    hit = cache.get(key, prompt) if cache is not None else None
    if hit is not None:
        return hit, True
    g = model.generate(prompt, temperature=temperature, top_p=1.0, max_tokens=max_tokens,
                       seed=_call_seed(seed, key), stop=list(stop))
    res = {"raw": g.text, "n_tokens": int(g.n_tokens or 0),
           "finish_reason": g.finish_reason,
           "seconds": (g.extra or {}).get("seconds")}
    if cache is not None:
        cache.put(key, prompt, res)
    return res, False


@dataclass(frozen=True)
class ExtractionSettings:
    """How :func:`extract_povs` runs p_POV and reads its output; the generation settings
    (all but ``max_words``) are part of the run cache's key."""

    #: generation budget; when generation stops there, the unfinished last line of the
    #: output is not parsed
    max_tokens: int = 256
    #: decoding temperature, 0 for greedy
    temperature: float = 0.0
    #: seed of the generations (each call's is derived from it and the question's key)
    seed: int = 0
    #: > 0: each document is cut to this many characters at a word boundary; 0: whole
    max_chars: int = 0
    #: longest POV kept, in words (a longer item is an echoed document; :func:`parse_povs`)
    max_words: int = 60
    #: > 0: generation stops where item ``max_povs + 1`` would start (greedy small models
    #: otherwise repeat one line until ``max_tokens``); 0: no stop
    max_povs: int = 6


def extract_povs(model, question: str, documents: Sequence[str],
                 settings: ExtractionSettings = ExtractionSettings(), *, key: str | int = "q",
                 cache: RunCache | None = None, use_cache: bool = True) -> PovExtraction:
    """Run p_POV on one question as ``settings`` say and parse, deduplicate its POVs.

    ``model`` needs ``info``, ``chat_prompt(user)`` and ``generate(prompt, ...)``
    (any :class:`nfeval.models.LanguageModel`; the ``llama`` backend for the
    embedded models). ``key`` names the question in the cache; ``cache`` (None: the
    :func:`extraction_cache` of ``model`` and ``settings``, when ``use_cache``) keeps the
    generations.
    """
    template = prompt_text(POV_PROMPT)
    max_tokens, temperature, seed = settings.max_tokens, settings.temperature, settings.seed
    max_povs = settings.max_povs
    if cache is None and use_cache:
        cache = extraction_cache(model, max_tokens=max_tokens, temperature=temperature,
                                 seed=seed, template=template, max_povs=max_povs)
    user = pov_prompt(question, documents, max_chars=settings.max_chars, template=template)
    stop = [f"\n{max_povs + 1}.", f"\n{max_povs + 1})"] if max_povs > 0 else []
    res, cached = _generate(model, cache, str(key), user, max_tokens=max_tokens,
                            temperature=temperature, seed=seed, stop=stop)
    text = res["raw"]
    if res.get("finish_reason") == "length" and "\n" in text.strip():
        text = text.rstrip().rsplit("\n", 1)[0]  # the last line was cut by max_tokens
    parsed = parse_povs(text, len(documents), max_words=settings.max_words, question=question)
    return PovExtraction(povs=dedup_povs(parsed), raw=res["raw"], parsed=len(parsed),
                         n_tokens=res.get("n_tokens", 0), cached=cached,
                         extra={"finish_reason": res.get("finish_reason"),
                                "seconds": res.get("seconds")})


_EXPL_LABEL = re.compile(r"^\s*(?:\*\*)?(?:explanation|answer)\s*(?:\*\*)?\s*:\s*", re.IGNORECASE)


def clean_explanation(text: str | None) -> str:
    """The explanation without a leading ``Explanation:`` label, quotes or extra blank lines."""
    if not text:
        return ""
    text = _EXPL_LABEL.sub("", text.strip())
    text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
    if len(text) > 1 and text[0] in "\"\u201c" and text[-1] in "\"\u201d":
        text = text[1:-1].strip()
    return text


def expand_explanation(model, question: str, pov: Pov, documents: Sequence[str], *,
                       key: str = "q/1", max_tokens: int = 200, temperature: float = 0.0,
                       seed: int = 0, max_chars: int = 0, cache: RunCache | None = None,
                       use_cache: bool = True) -> dict[str, Any]:
    """Run p_Explan for one POV over the documents it comes from (all when it names none).

    ``documents`` are the question's documents in their numbered order. Returns
    ``{"explanation", "raw", "doc_indexes", "n_tokens", "cached"}``.
    """
    template = prompt_text(EXPLANATION_PROMPT)
    if cache is None and use_cache:
        cache = explanation_cache(model, max_tokens=max_tokens, temperature=temperature,
                                  seed=seed, template=template)
    idx = [i for i in pov.doc_indexes if 1 <= i <= len(documents)] or \
        list(range(1, len(documents) + 1))
    user = explanation_prompt(question, pov.text, [documents[i - 1] for i in idx], idx,
                              max_chars=max_chars, template=template)
    res, cached = _generate(model, cache, key, user, max_tokens=max_tokens,
                            temperature=temperature, seed=seed)
    return {"explanation": clean_explanation(res["raw"]), "raw": res["raw"],
            "doc_indexes": idx, "n_tokens": res.get("n_tokens", 0), "cached": cached}
