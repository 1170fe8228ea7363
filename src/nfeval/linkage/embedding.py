"""LINKAGE's embedding baselines: BERTScore F1 and the release's [CLS] cosine (Table 2).

What each computes and where it departs from the release: ``docs/linkage.md``
(Lexical and embedding baselines). :mod:`nfeval.linkage.lexical` re-exports both.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from nfeval.errors import NfevalError
from nfeval.models.registry import DEFAULT_EMBEDDER

__all__ = ["bertscore_f1", "cls_cosine", "resolve_embedder", "resolve_name"]


def resolve_embedder(embedder: str | None) -> tuple[str, str]:
    """(name to record, local path or hub id to load) for an embedder name.

    ``None`` and :data:`~nfeval.models.registry.DEFAULT_EMBEDDER` (``"minilm-l6"``) mean
    the embedded all-MiniLM-L6-v2.
    """
    if resolve_name(embedder) == DEFAULT_EMBEDDER:
        from nfeval.models.registry import minilm_path

        return DEFAULT_EMBEDDER, str(minilm_path())
    return str(embedder), str(embedder)


def _device(device: str | None) -> str:
    from nfeval.runtime import resolve_device

    return resolve_device(device)


@lru_cache(maxsize=2)
def _bert_scorer(path: str, num_layers: int | None, batch_size: int, device: str):
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=num_layers, idf=False,
                      rescale_with_baseline=False, batch_size=batch_size, device=device)


def bertscore_f1(candidates: Sequence[str], references: Sequence[str], *,
                 embedder: str | None = None, num_layers: int | None = 6,
                 batch_size: int = 64, device: str | None = None) -> list[float]:
    """BERTScore F1 of each (candidate, reference) pair; no idf, no rescaling.

    ``num_layers`` is the layer whose token vectors are matched (6 = the last of
    MiniLM-L6); ``None`` lets bert-score pick its tuned layer for known hub models.
    """
    if len(candidates) != len(references):
        raise NfevalError(f"{len(candidates)} candidates but {len(references)} references")
    if not candidates:
        return []
    _, path = resolve_embedder(embedder)
    scorer = _bert_scorer(path, num_layers, batch_size, _device(device))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, f1 = scorer.score(list(candidates), list(references), batch_size=batch_size)
    return [float(x) for x in f1]


@lru_cache(maxsize=2)
def _encoder(path: str, device: str = "cpu"):
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).to(device)
    model.eval()
    return tok, model


def _release_ids(tok, text: str, max_length: int) -> list[int]:
    """Ids as the release builds them: ``[CLS] + ([CLS] text [SEP])[:max-2] + [SEP]``."""
    inner = tok(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return [tok.cls_token_id] + inner[: max_length - 2] + [tok.sep_token_id]


def _cls_vectors(texts: Sequence[str], path: str, max_length: int, batch_size: int,
                 device: str) -> np.ndarray:
    import torch

    tok, model = _encoder(path, device)
    ids = [_release_ids(tok, t, max_length) for t in texts]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # batch similar lengths
    out = np.zeros((len(ids), model.config.hidden_size), dtype=np.float32)
    pad = tok.pad_token_id or 0
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        width = max(len(ids[i]) for i in idx)
        batch = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            batch[row, : len(ids[i])] = torch.tensor(ids[i])
            mask[row, : len(ids[i])] = 1
        with torch.no_grad():
            hidden = model(input_ids=batch.to(device),
                           attention_mask=mask.to(device)).last_hidden_state
        out[idx] = hidden[:, 0, :].float().cpu().numpy()
    return out


def cut_tokens(texts: Sequence[str], method: str, *, embedder: str | None = None,
               max_length: int = 512) -> list[int]:
    """Per text, the tokens the embedding method leaves out at its window's end: BERTScore
    (``bertscore``) encodes at most the tokenizer's ``model_max_length`` tokens (bert-score's
    own truncation), the release's [CLS] cosine (``bertscore-cls``) ``max_length``. Neither
    scores the rest; this says how much of each answer that is."""
    _, path = resolve_embedder(embedder)
    tok = _tokenizer(path)
    window = tok.model_max_length if method == "bertscore" else max_length
    return [max(0, len(tok(t.strip(), add_special_tokens=True, truncation=False,
                           verbose=False)["input_ids"]) - window) for t in texts]


@lru_cache(maxsize=2)
def _tokenizer(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def cls_cosine(candidates: Sequence[str], references: Sequence[str], *,
               embedder: str | None = None, max_length: int = 512,
               batch_size: int = 32, device: str | None = None) -> list[float]:
    """The release's "BERTScore": cosine of the last layer's [CLS] vectors, per pair.

    Each distinct text is encoded once.
    """
    if len(candidates) != len(references):
        raise NfevalError(f"{len(candidates)} candidates but {len(references)} references")
    if not candidates:
        return []
    _, path = resolve_embedder(embedder)
    texts = list(dict.fromkeys([*candidates, *references]))
    where = {t: i for i, t in enumerate(texts)}
    vecs = _cls_vectors(texts, path, max_length, batch_size, _device(device))
    norms = np.linalg.norm(vecs, axis=1)
    norms[norms == 0] = 1.0
    vecs = vecs / norms[:, None]
    return [float(vecs[where[c]] @ vecs[where[r]]) for c, r in zip(candidates, references)]


def resolve_name(embedder: str | None) -> str:
    """The name under which an embedder is recorded (``None`` -> ``"minilm-l6"``, the
    default)."""
    return DEFAULT_EMBEDDER if embedder in (None, DEFAULT_EMBEDDER) else str(embedder)


def _embedder_source(name: str) -> str:
    if name == DEFAULT_EMBEDDER:
        from nfeval.models.registry import get_spec

        return get_spec(name).source
    return name
