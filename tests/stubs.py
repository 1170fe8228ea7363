"""Model stand-ins shared by several test files (importable as ``stubs``: pytest puts
tests/ on the path)."""

from __future__ import annotations

from nfeval.models.base import LanguageModel, ModelInfo, normalize


class LengthJudge(LanguageModel):
    """A judge that prefers label "1" more the longer the prompt (no model)."""

    def __init__(self, name):
        self.info = ModelInfo(name=name, backend="test", source="test")

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        return {lab: (len(prompt) / 100.0 if lab.startswith("1") else 0.0) for lab in labels}

    def label_distribution(self, prompt, labels):
        return normalize(self.label_logprobs(prompt, labels))

    def generate(self, prompt, **kwargs):
        raise NotImplementedError

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "\n".join(m.content for m in messages)
