"""Fit one text of a prompt into the model's window, never the rest of the prompt.

A judge's prompt is instructions, references and one answer; a generator's
is instructions and one source text. When the whole does not fit the model's
window, the backends keep the prompt's *last* tokens, which drops the
instructions first: the model then judges without being told what to do,
and nothing says so. :func:`fit_text` cuts the one text that may be cut (the
candidate answer, the ground truth a reference list is written from) from
its end instead, so that the prompt built around it fits with room for the
output, and says how many of its tokens it dropped.

Only models that expose their tokenizer and window (``token_level``: the
transformers and llama.cpp backends) can be fitted; with a server the text
is sent whole and the server refuses a prompt that is too long.
"""

from __future__ import annotations

from collections.abc import Callable

from nfeval.errors import NfevalError

#: Tokens kept free beyond the count: the text's tokens can merge differently with the
#: prompt around it than on their own.
MARGIN = 4


def fits(model) -> bool:
    """Whether ``model`` exposes what fitting needs (its tokenizer ids and window)."""
    return bool(getattr(model, "token_level", False)) and getattr(model, "max_length", None)


def fit_text(model, build: Callable[[str], str], text: str, *, reserve: int,
             what: str = "the answer") -> tuple[str, int]:
    """``text`` cut from its end so that ``build(text)`` plus ``reserve`` tokens fit the
    window of ``model``; returns (text, tokens cut). ``build`` renders the whole prompt
    around a text; ``reserve``: the tokens the output needs (labels, a generation budget).

    A text that fits comes back unchanged (0 cut). When the prompt without the text
    leaves no room for it, the error says so (cutting the instructions is never an
    option).
    """
    if not fits(model) or not text:
        return text, 0
    window = int(model.max_length)
    other = len(model.encode_context(build("")))
    ids = model.encode_continuation(text)
    room = window - int(reserve) - other - MARGIN
    if len(ids) <= room:
        return text, 0
    if room < 1:
        raise NfevalError(
            f"The prompt without {what} takes {other} tokens and its output {reserve}: no room "
            f"is left for {what} in the model's {window}-token window. Use a model with a "
            "larger window, or shorter references.")
    keep = room
    while True:
        cut = model.tokenizer.decode(ids[:keep])
        over = len(model.encode_context(build(cut))) + int(reserve) - window
        if over <= 0 or keep <= 1:
            return cut, len(ids) - keep
        keep = max(1, keep - over)
