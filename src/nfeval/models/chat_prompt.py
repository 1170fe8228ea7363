"""Chat prompts as text: the messages and the assistant prefill that
:class:`nfeval.models.chat_backend.ChatModel` sends to ``/v1/chat/completions``, and
reading a label distribution from a response's first token."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from nfeval.errors import NfevalError
from nfeval.models.base import Message

ROLES = ("system", "developer", "user", "assistant")
#: OpenAI writes -9999.0 for a token outside its top 20 ("very unlikely"): not a value
UNLIKELY = -9999.0
_MARK = "<|nfeval-chat:{}|>"
REPLY = _MARK.format("reply")
_MARK_RE = re.compile(r"<\|nfeval-chat:(system|developer|user|assistant|reply)\|>")


@dataclass(frozen=True)
class ChatPrompt:
    """A parsed chat prompt: the messages, and the assistant prefill.

    ``prefill`` is None when the prompt has no reply marker (the messages are
    sent as they are), ``""`` for a plain generation prompt, else the
    beginning of the assistant's reply.
    """

    messages: tuple[Message, ...]
    prefill: str | None = ""

    def payload_messages(self) -> list[dict]:
        return [{"role": m.role, "content": m.content} for m in self.messages]


def serialize_messages(messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
    """The string form of ``messages`` (module docstring); see :func:`parse_chat_prompt`."""
    out = []
    for m in messages:
        role = getattr(m, "role", None)
        content = getattr(m, "content", None)
        if role not in ROLES:
            raise NfevalError(f"chat message role must be one of {ROLES}, got {role!r}.")
        if not isinstance(content, str):
            raise NfevalError("chat message content must be a string, got "
                              f"{type(content).__name__}.")
        if _MARK_RE.search(content) or "<|nfeval-chat:" in content:
            raise NfevalError("a chat message contains the marker '<|nfeval-chat:'; it cannot be "
                              "serialized unambiguously.")
        out.append(_MARK.format(role) + content)
    if not out:
        raise NfevalError("a chat prompt needs at least one message.")
    return "".join(out) + (REPLY if add_generation_prompt else "")


def is_chat_prompt(text: str) -> bool:
    return isinstance(text, str) and _MARK_RE.match(text) is not None


def parse_chat_prompt(text: str) -> ChatPrompt:
    """Messages and prefill of a serialized chat prompt (raises on anything else)."""
    if not is_chat_prompt(text):
        raise NfevalError(
            "ChatModel: the prompt is not a chat prompt built by this model (it must come "
            "from model.chat_prompt(...) or model.apply_chat_template(...)); a chat API takes "
            f"messages, not raw text (prompt starts {str(text)[:60]!r}). For a base model's raw "
            "prompt use the completions backend (backend='openai').")
    parts = _MARK_RE.split(text)
    # parts: ["", role, content, role, content, ...]
    msgs: list[Message] = []
    prefill: str | None = None
    for j in range(1, len(parts), 2):
        role, content = parts[j], parts[j + 1]
        if prefill is not None:
            raise NfevalError("ChatModel: a chat prompt has text markers after its reply marker; "
                              "a candidate or reply contains '<|nfeval-chat:'.")
        if role == "reply":
            prefill = content
        else:
            msgs.append(Message(role, content))
    if not msgs:
        raise NfevalError("ChatModel: the chat prompt has no message.")
    return ChatPrompt(tuple(msgs), prefill)


def _token_text(entry: dict) -> str:
    b = entry.get("bytes")
    if isinstance(b, list) and b:
        try:
            return bytes(int(x) for x in b).decode("utf-8")
        except (UnicodeDecodeError, ValueError, TypeError):
            pass
    return str(entry.get("token", ""))


def first_token_top(response: dict) -> dict[str, float] | None:
    """Top log-probs of the first generated token of a chat completion, by token text.

    None when the response carries no log-probs (the server ignores
    ``logprobs``). The generated token itself is included; where several
    entries share a text the largest log-prob is kept; OpenAI's ``-9999``
    placeholder ("outside the top 20") is left out.
    """
    choices = response.get("choices") or []
    if not choices:
        return None
    lp = choices[0].get("logprobs") or {}
    content = lp.get("content") if isinstance(lp, dict) else None
    if not content:
        return None
    first = content[0]
    out: dict[str, float] = {}
    for e in list(first.get("top_logprobs") or []) + [first]:
        if not isinstance(e, dict) or e.get("logprob") is None:
            continue
        t, v = _token_text(e), float(e["logprob"])
        if v <= UNLIKELY:  # OpenAI's "very unlikely" placeholder, not a measured value
            continue
        if t not in out or v > out[t]:
            out[t] = v
    return out or None
