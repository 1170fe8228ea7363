"""The two run profiles every notebook accepts (see REPRODUCTION_MAP).

* ``embedded`` (default): CPU only, models that ship inside PyPI packages,
  release files from a mirror folder, the cache or a download.
* ``paper``: the papers' backbones and judges as hub ids (or an
  OpenAI-compatible server), all questions, on a machine with a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from nfeval import NfevalError


@dataclass(frozen=True)
class Profile:
    name: str
    pd_backbones: tuple[str, ...]  # DebateQA P.D. backbones
    judge: str  # LLM judge (D.A., LINKAGE)
    embedder: str  # sentence embeddings (BERTScore, BERTopic, retrieval)
    judge_mode: str  # "prob" (label distribution) or "sample" (the papers' decoding)
    device: str  # "cpu" or "auto"


PROFILES = {
    "embedded": Profile(
        name="embedded",
        pd_backbones=("smollm2-135m-instruct", "gemma3-270m"),
        judge="qwen2.5-coder-0.5b-instruct",
        embedder="minilm-l6",
        judge_mode="prob",
        device="cpu",
    ),
    "paper": Profile(
        name="paper",
        pd_backbones=("gpt2", "Qwen/Qwen2-0.5B"),
        judge="mistralai/Mistral-7B-Instruct-v0.2",
        embedder="roberta-large",
        judge_mode="sample",
        device="auto",
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise NfevalError(
            f"unknown profile {name!r}; use one of {sorted(PROFILES)}"
        ) from None
