"""Chat templates of the local backends (transformers and llama.cpp), without torch: which
convention a tokenizer uses (:func:`template_mode`) and the rendering of chat turns under it
(:func:`render_messages`). The conventions are described in :mod:`nfeval.models.hf`."""

from __future__ import annotations

from collections.abc import Sequence

from nfeval.errors import NfevalError
from nfeval.models.base import Message

__all__ = ["LEGACY_EOS_MODEL_TYPES", "TEMPLATE_MODES", "render_legacy_eos", "render_messages",
           "render_plain", "template_mode"]

# model types whose tokenizer class had the "content + EOS" default template
LEGACY_EOS_MODEL_TYPES = frozenset({"gpt2", "gpt_neo", "gpt_neox", "gptj"})
TEMPLATE_MODES = ("auto", "model", "legacy-eos", "none")


def render_legacy_eos(messages: Sequence[Message], eos_token: str) -> str:
    """GPT-2's 2024 class-default chat template: each content followed by EOS."""
    return "".join(m.content + eos_token for m in messages)


def render_plain(messages: Sequence[Message]) -> str:
    """Fallback for base models with no template: contents joined by a blank line."""
    return "\n\n".join(m.content for m in messages)


def render_messages(tokenizer, mode: str, messages: Sequence[Message], *,
                    add_generation_prompt: bool = True) -> str:
    """Render chat turns under a :func:`template_mode` (``tokenizer`` unused for "none")."""
    msgs = [m if isinstance(m, Message) else Message(m["role"], m["content"]) for m in messages]
    if mode == "model":
        return tokenizer.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in msgs],
            tokenize=False, add_generation_prompt=add_generation_prompt)
    if mode == "legacy-eos":
        return render_legacy_eos(msgs, tokenizer.eos_token or "")
    return render_plain(msgs)


def template_mode(tokenizer, model_type: str | None, requested: str = "auto") -> str:
    """Which template convention a tokenizer/model pair uses (see module doc)."""
    if requested not in TEMPLATE_MODES:
        raise NfevalError(
            f"Unknown chat_template mode {requested!r}; use one of {', '.join(TEMPLATE_MODES)}."
        )
    has_own = bool(getattr(tokenizer, "chat_template", None))
    if requested == "model" and not has_own:
        raise NfevalError(
            "chat_template='model' was asked for but this tokenizer has no chat "
            "template; use 'legacy-eos' (GPT-2 style) or 'none'."
        )
    if requested != "auto":
        return requested
    if has_own:
        return "model"
    if model_type in LEGACY_EOS_MODEL_TYPES:
        return "legacy-eos"
    return "none"
