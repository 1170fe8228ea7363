"""Committed per-item outputs: every model call of an artefact, keyed by its inputs.

A table is only as reproducible as the model outputs under it. Greedy or
sampled text from a quantized model can diverge between SIMD kernels, and a
float computed on one CPU can tie-break a ranking differently on another.
So every model output a notebook uses -- each label distribution of a
judge, each continuation score of P.D., each generated text -- is written,
as it is computed, to ``results/<artefact>/items/`` and committed. A rerun
(``make reproduce``, any machine) reads them back instead of recomputing,
and gets the committed tables; only what is missing is computed (and then
written too). ``make evidence`` fills the store at the evidence sizes,
item by item, so killing it loses at most the calls in flight.

How it works: a notebook calls :func:`use_store` with its artefact id; from
then on every model the reproduction loads (:meth:`nfeval_repro.profiles.Profile.load`,
or :func:`stored` around :func:`nfeval.models.load_model`) is wrapped in a
:class:`StoredModel`. The wrapper answers each call per item (a prompt, a
context and continuation, a generation request) from the store, computes
the missing items in one call to the real model, and appends them. The
real model's weights are loaded only when something is missing
(:class:`nfeval.models.hf.HFModel` loads them lazily). Lookups read every
artefact's folder, so an artefact that reuses another's judgments (lk_t09
reusing lk_t02's draw 0) finds them.

One file per model and kind of call, ``<model>@<model-key>.<kind>.jsonl``;
the model key hashes what decides the numbers (name, source, checksum,
dtype, backend, chat template, window). Each line is
``{"k": <hash of the inputs>, "v": <value>, "m": <machine class>, "s": <seconds>}``;
a line cut short by a kill is ignored. Values are what the metrics use:
label log-probabilities, the summed log-probability and token count of a
continuation (not every token's), the generated text.

``NFEVAL_STORE=off`` switches the store off (every call computed, nothing
written); ``NFEVAL_STORE=<folder>`` writes there instead of the output
folder's ``results/<artefact>/items/`` (the committed folders are still
read, unless ``NFEVAL_STORE_READ=own``: then only that folder is, so every
item is recomputed there, e.g. to compare another machine's run with the
committed one). ``NFEVAL_STORE_READ=texts`` is ``own`` for every number but
reads the committed generated texts: every score is recomputed on the
committed answers (greedy text may diverge between SIMD kernels, so ``own``
would score other texts, and spends its time generating them).

Why this file is long: the store's files (their format, reader and appender), the store
itself and the wrapper that answers every method of a model from it are one mechanism;
split, each part would reach into the others' private keys and files.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nfeval.errors import NfevalError
from nfeval.hashing import sha256_text
from nfeval.itemfile import RecordFile as _File
from nfeval.itemfile import read_records
from nfeval.itemfile import record_key as _key
from nfeval.models.base import Generation, LanguageModel, Message, TokenLogprobs, normalize
from nfeval_repro.paths import RESULTS, ROOT

STORE_ENV = "NFEVAL_STORE"
STORE_READ_ENV = "NFEVAL_STORE_READ"
ITEMS = "items"
GEN = "gen"  # the kind of generated texts (``<model>@<key>.gen.jsonl``)

__all__ = ["ItemStore", "StoredModel", "active_store", "close_store", "cached_steps",
           "read_records", "recorded_costs", "stored", "use_store"]


class ItemStore:
    """The per-item outputs of one artefact (written) and of every artefact (read)."""

    def __init__(self, artefact: str, write_dir: Path | None, read_dirs: Sequence[Path],
                 text_dirs: Sequence[Path] = ()):
        self.artefact = artefact
        self.write_dir = write_dir
        self.read_dirs = list(dict.fromkeys(Path(d) for d in read_dirs))
        if write_dir is not None and Path(write_dir) not in self.read_dirs:
            self.read_dirs.append(Path(write_dir))
        #: folders read for generated texts only (``NFEVAL_STORE_READ=texts``)
        self.text_dirs = [Path(d) for d in text_dirs if Path(d) not in self.read_dirs]
        self._files: dict[str, _File] = {}
        self.hits = 0
        self.misses = 0

    def file(self, name: str) -> _File:
        f = self._files.get(name)
        if f is None:
            dirs = self.read_dirs + (self.text_dirs if name.endswith(f".{GEN}.jsonl") else [])
            f = self._files[name] = _File(name, dirs, self.write_dir)
        return f

    def cached(self, name: str, inputs: Any, compute: Callable[[], Any]) -> Any:
        """A stored value of any JSON-serialisable step (not a model call), computed once."""
        f = self.file(f"step.{name}.jsonl")
        k = _key(inputs)
        v = f.get(k)
        if v is None:
            self.misses += 1
            t = time.time()
            v = compute()
            f.put_many([(k, v)], time.time() - t)
        else:
            self.hits += 1
        return v

    def cached_many(self, name: str, inputs: Sequence[Any],
                    compute: Callable[[list[Any]], list[Any]], *, chunk: int = 512) -> list[Any]:
        """:meth:`cached` for many items: ``compute`` gets the missing inputs, in order,
        ``chunk`` at a time (each chunk is stored before the next is computed)."""
        from tqdm.auto import tqdm

        f = self.file(f"step.{name}.jsonl")
        keys = [_key(x) for x in inputs]
        vals = [f.get(k) for k in keys]
        missing = [i for i, v in enumerate(vals) if v is None]
        self.hits += len(keys) - len(missing)
        todo = sorted({keys[i]: i for i in reversed(missing)}.values())  # once per key
        self.misses += len(todo)
        chunks = [todo[j:j + chunk] for j in range(0, len(todo), chunk)]
        got: dict[str, Any] = {}
        for part in tqdm(chunks, desc=name, unit="chunk", disable=len(chunks) < 2):
            t = time.time()
            new = dict(zip((keys[i] for i in part), compute([inputs[i] for i in part])))
            f.put_many(list(new.items()), time.time() - t)
            got.update(new)
        for i in missing:
            vals[i] = got[keys[i]]
        return vals

    def summary(self) -> str:
        return (f"store {self.artefact}: {self.hits} items read, {self.misses} computed"
                + (f" (written to {display_path(self.write_dir)})" if self.write_dir else ""))


def display_path(path: Path | None) -> str:
    """A path as shown to a user: relative to the repository when inside it."""
    if path is None:
        return "nowhere"
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


_ACTIVE: ItemStore | None = None


def use_store(artefact: str, output_dir: str | os.PathLike | None = "") -> ItemStore | None:
    """Read and write model outputs of ``artefact`` (a notebook's first call; see module doc).

    Writes go to ``<output_dir>/results/<artefact>/items/`` (the repository's
    ``results/`` when ``output_dir`` is empty) or to ``$NFEVAL_STORE``; reads
    come from every ``results/*/items/`` of the repository and of
    ``output_dir``. Returns None (and uses no store) when ``NFEVAL_STORE=off``.
    """
    global _ACTIVE
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", artefact or ""):
        raise NfevalError(f"use_store needs an artefact id such as 'lk_t02', got {artefact!r}.")
    env = os.environ.get(STORE_ENV, "").strip()
    if env.lower() == "off":
        _ACTIVE = None
        return None
    out_results = (Path(output_dir) / RESULTS.relative_to(ROOT)) if output_dir else RESULTS
    write_dir = Path(env) / artefact / ITEMS if env else out_results / artefact / ITEMS
    mode = os.environ.get(STORE_READ_ENV, "").strip().lower()
    if mode not in ("", "own", "texts"):
        raise NfevalError(f"{STORE_READ_ENV}={mode!r}: use 'own' (recompute every item) or "
                          "'texts' (recompute every number on the committed texts), or unset it.")
    if mode and not env:
        raise NfevalError(f"{STORE_READ_ENV}={mode} needs {STORE_ENV}=<folder> to write the "
                          "recomputed items to (the committed ones are not overwritten).")
    committed = sorted(RESULTS.glob(f"*/{ITEMS}"))
    if out_results.resolve() != RESULTS.resolve():
        committed += sorted(out_results.glob(f"*/{ITEMS}"))
    read = [] if mode else committed
    if env:
        read += [p for p in sorted(Path(env).glob(f"*/{ITEMS}")) if p not in read]
    _ACTIVE = ItemStore(artefact, write_dir, read, committed if mode == "texts" else ())
    return _ACTIVE


def active_store() -> ItemStore | None:
    return _ACTIVE


def close_store() -> None:
    """Stop using the active store (tests; a notebook's kernel ends with it)."""
    global _ACTIVE
    _ACTIVE = None


def recorded_costs(artefact: str, output_dir: str | os.PathLike | None = "") -> list[dict]:
    """What computing an artefact's stored items cost: per store file, the items, the
    seconds recorded when they were computed, and the machine classes that computed them.
    """
    out_results = (Path(output_dir) / RESULTS.relative_to(ROOT)) if output_dir else RESULTS
    rows = []
    for path in sorted((out_results / artefact / ITEMS).glob("*.jsonl")):
        n, seconds, machines = 0, 0.0, set()
        for rec in read_records(path):
            n += 1
            seconds += float(rec.get("s") or 0.0)
            machines.add(rec.get("m", "?"))
        rows.append({"file": path.name, "items": n, "seconds": round(seconds, 1),
                     "machines": ", ".join(sorted(machines))})
    return rows


def cached_steps(name: str, inputs: Sequence[Any],
                 compute: Callable[[list[Any]], list[Any]]) -> list[Any]:
    """Values of a deterministic step (embeddings, a topic model's assignments) per input:
    from the active store where it holds them, else computed (and stored when a store
    is active; with none, :func:`_notice_no_store` says so once)."""
    if _ACTIVE is None:
        _notice_no_store(f"step {name!r}")
        return list(compute(list(inputs)))
    return _ACTIVE.cached_many(name, inputs, compute)


_NOTICED = False


def _notice_no_store(what: str) -> None:
    """Say once, on stderr, that no store is active so ``what`` and everything after it is
    computed (an experiment function called from Python before any :func:`use_store`),
    unless ``NFEVAL_STORE=off`` asked for that."""
    global _NOTICED
    if _NOTICED or os.environ.get(STORE_ENV, "").strip().lower() == "off":
        return
    import sys

    _NOTICED = True
    print(f"note: no item store is active, so {what} and every model call are computed and "
          "the committed items under results/*/items/ are not read: call "
          "nfeval_repro.store.use_store('<artefact id>') first, as the notebooks do "
          "(NFEVAL_STORE=off computes everything without this note)", file=sys.stderr,
          flush=True)


def stored(model: LanguageModel, store: ItemStore | None = None) -> LanguageModel:
    """``model`` answered from ``store`` (the active one by default); itself when none
    (:func:`_notice_no_store` says so once)."""
    store = store or _ACTIVE
    if isinstance(model, StoredModel):
        return model
    if store is None:
        _notice_no_store(getattr(getattr(model, "info", None), "name", "the model"))
        return model
    return StoredModel(model, store)


class _Summary(TokenLogprobs):
    """A stored continuation score: the sum and count of its token log-probabilities.

    The store keeps what the metrics read (``total``, ``n``, ``mean_nll``,
    ``perplexity``, ``truncated``), not every token's value."""

    def __init__(self, total: float, n: int, truncated: int):
        super().__init__(token_ids=[], tokens=[], logprobs=[], truncated=int(truncated))
        self._total, self._n = float(total), int(n)

    @property
    def n(self) -> int:  # type: ignore[override]
        return self._n

    @property
    def total(self) -> float:  # type: ignore[override]
        return self._total


def _summary(t: TokenLogprobs) -> list:
    return [float(t.total), int(t.n), int(t.truncated)]


class StoredModel(LanguageModel):
    """A model whose outputs come from an :class:`ItemStore` where they are stored.

    Every scoring and generation method of :class:`~nfeval.models.base.LanguageModel`
    (and the transformers backend's token-id kernels, when the wrapped model has
    them) is answered per item: stored items are read, the missing ones computed
    in one call to the wrapped model and appended. Anything else (``info``,
    templates, tokenization) is the wrapped model's.
    """

    _ID_KERNELS = ("score_ids", "score_labels_ids")
    #: a run cache (:class:`nfeval.runcache.RunCache`) neither reads nor writes for it
    keeps_items = True

    def __init__(self, inner: LanguageModel, store: ItemStore):
        self.inner = inner
        self.store = store
        info = inner.info
        ident = {"name": info.name, "backend": info.backend, "source": info.source,
                 "checksum": info.checksum, "dtype": info.dtype,
                 "chat_template": info.chat_template, "max_length": info.max_length}
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", info.name).strip("_") or "model"
        self._prefix = f"{slug}@{_key(ident)[:10]}"

    @property
    def info(self):  # type: ignore[override]
        return self.inner.info

    @property
    def token_level(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "token_level", False))

    def __repr__(self) -> str:
        return f"StoredModel({self.inner!r}, store={self.store.artefact!r})"

    def __getattr__(self, name: str) -> Any:
        if name in StoredModel._ID_KERNELS:
            getattr(self.inner, name)  # AttributeError when the wrapped model lacks it
            return getattr(self, "_stored_" + name)
        if name in ("inner", "store", "_prefix"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _file(self, kind: str) -> _File:
        return self.store.file(f"{self._prefix}.{kind}.jsonl")

    def _many(self, kind: str, keys: Sequence[str], compute: Callable[[list[int]], list[Any]]
              ) -> list[Any]:
        """Values of ``keys`` in order; ``compute(missing positions)`` gives the others. A key
        asked for twice in one call (the same prompt in two places) is computed once: a batched
        kernel may give its two copies values a few 1e-8 apart, and a rebuild from the store
        reads one value per key, so the run that computes must use that one value too."""
        f = self._file(kind)
        vals = [f.get(k) for k in keys]
        missing = [i for i, v in enumerate(vals) if v is None]
        self.store.hits += len(keys) - len(missing)
        todo = sorted({keys[i]: i for i in reversed(missing)}.values())  # once per key
        if todo:
            self.store.misses += len(todo)
            t = time.time()
            got = dict(zip((keys[i] for i in todo), compute(todo)))
            f.put_many(list(got.items()), time.time() - t)
            for i in missing:
                vals[i] = got[keys[i]]
        return vals

    # -- continuation scores -------------------------------------------------
    def continuation_logprobs(self, context: str, continuations: Sequence[str]
                              ) -> list[TokenLogprobs]:
        if isinstance(continuations, str):
            raise NfevalError("continuations must be a list of strings, not one string.")
        conts = list(continuations)
        ck = sha256_text(context)
        keys = [_key("cont", ck, c) for c in conts]
        vals = self._many("cont", keys, lambda miss: [
            _summary(t) for t in self.inner.continuation_logprobs(context, [conts[i] for i in miss])])
        return [_Summary(*v) for v in vals]

    def batch_continuation_logprobs(self, requests):
        return [self.continuation_logprobs(c, conts) for c, conts in requests]

    def _stored_score_ids(self, context_ids, continuation_ids) -> list[TokenLogprobs]:
        ctx = [int(t) for t in context_ids]
        conts = [[int(t) for t in c] for c in continuation_ids]
        ck = _key(ctx)
        keys = [_key("ids", ck, c) for c in conts]
        vals = self._many("cont-ids", keys, lambda miss: [
            _summary(t) for t in self.inner.score_ids(ctx, [conts[i] for i in miss])])
        return [_Summary(*v) for v in vals]

    # -- label log-probabilities ---------------------------------------------
    def label_logprobs(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        return self.batch_label_logprobs([prompt], labels)[0]

    def label_distribution(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        return normalize(self.label_logprobs(prompt, labels))

    def batch_label_logprobs(self, prompts: Sequence[str], labels: Sequence[str], *,
                             share_with: str | None = None) -> list[dict[str, float]]:
        if isinstance(prompts, str):
            raise NfevalError("prompts must be a list of strings, not one string.")
        prompts, labels = list(prompts), list(labels)
        keys = [_key("whole", p, labels) for p in prompts]

        def compute(miss: list[int]) -> list[list[float]]:
            rows = self.inner.batch_label_logprobs([prompts[i] for i in miss], labels,
                                                   share_with=share_with)
            return [[float(r[lab]) for lab in labels] for r in rows]

        return [dict(zip(labels, v)) for v in self._many("labels", keys, compute)]

    def prefix_label_logprobs(self, prefix: str, suffixes: Sequence[str],
                              labels: Sequence[str]) -> list[dict[str, float]]:
        if isinstance(suffixes, str):
            raise NfevalError("suffixes must be a list of strings, not one string.")
        sfx, labels = list(suffixes), list(labels)
        pk = sha256_text(prefix)
        keys = [_key("split", pk, s, labels) for s in sfx]

        def compute(miss: list[int]) -> list[list[float]]:
            rows = self.inner.prefix_label_logprobs(prefix, [sfx[i] for i in miss], labels)
            return [[float(r[lab]) for lab in labels] for r in rows]

        return [dict(zip(labels, v)) for v in self._many("labels", keys, compute)]

    def _stored_score_labels_ids(self, prefix_ids, suffix_ids, label_ids, **kw
                                 ) -> list[list[float]]:
        pre = [int(t) for t in prefix_ids]
        sfx = [[int(t) for t in s] for s in suffix_ids]
        lab = [[int(t) for t in lb] for lb in label_ids]
        pk = _key(pre)
        keys = [_key("ids", pk, s, lab) for s in sfx]
        return self._many("labels-ids", keys, lambda miss: [
            [float(x) for x in row]
            for row in self.inner.score_labels_ids(pre, [sfx[i] for i in miss], lab, **kw)])

    # -- generation ------------------------------------------------------------
    def generate(self, prompt: str, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 256, seed: int = 0, stop: Sequence[str] = ()) -> Generation:
        key = _key("gen", prompt, float(temperature), float(top_p), int(max_tokens), int(seed),
                   list(stop))

        def compute(_miss: list[int]) -> list[dict]:
            g = self.inner.generate(prompt, temperature=temperature, top_p=top_p,
                                    max_tokens=max_tokens, seed=seed, stop=stop)
            return [{"text": g.text, "finish_reason": g.finish_reason, "n_tokens": g.n_tokens}]

        v = self._many(GEN, [key], compute)[0]
        return Generation(text=v["text"], finish_reason=v.get("finish_reason"),
                          n_tokens=v.get("n_tokens"), extra={"stored": True, "seed": seed})

    def generate_many(self, prompts: Sequence[str], *, concurrency: int | None = None,
                      temperature: float = 0.0, top_p: float = 1.0, max_tokens: int = 256,
                      seed: int | Sequence[int] = 0, stop: Sequence[str] = ()
                      ) -> list[Generation]:
        """:meth:`generate` for many prompts (each stored as :meth:`generate` stores it).

        The missing ones go to the wrapped model's ``generate_many`` when it has
        one (a server backend with bounded concurrency), each stored as it
        completes; otherwise they are generated one by one.
        """
        prompts = list(prompts)
        seeds = ([int(seed)] * len(prompts) if isinstance(seed, int)
                 else [int(x) for x in seed])
        stop = [stop] if isinstance(stop, str) else list(stop)
        keys = [_key("gen", p, float(temperature), float(top_p), int(max_tokens), s, stop)
                for p, s in zip(prompts, seeds)]
        f = self._file(GEN)
        vals = [f.get(k) for k in keys]
        miss = [i for i, v in enumerate(vals) if v is None]
        self.store.hits += len(keys) - len(miss)
        if miss and hasattr(self.inner, "generate_many"):
            self.store.misses += len(miss)
            t0 = time.time()

            def keep(j: int, g: Generation) -> None:  # in the calling thread, as items complete
                v = {"text": g.text, "finish_reason": g.finish_reason, "n_tokens": g.n_tokens}
                f.put_many([(keys[miss[j]], v)], time.time() - t0)
                vals[miss[j]] = v

            self.inner.generate_many([prompts[i] for i in miss], seed=[seeds[i] for i in miss],
                                     concurrency=concurrency, temperature=temperature,
                                     top_p=top_p, max_tokens=max_tokens, stop=stop,
                                     on_result=keep)
        else:
            for i in miss:
                g = self.generate(prompts[i], temperature=temperature, top_p=top_p,
                                  max_tokens=max_tokens, seed=seeds[i], stop=stop)
                vals[i] = {"text": g.text, "finish_reason": g.finish_reason,
                           "n_tokens": g.n_tokens}
        return [Generation(text=v["text"], finish_reason=v.get("finish_reason"),
                           n_tokens=v.get("n_tokens"), extra={"stored": True, "seed": s})
                for v, s in zip(vals, seeds)]

    # -- templates ---------------------------------------------------------------
    def apply_chat_template(self, messages: Sequence[Message], *,
                            add_generation_prompt: bool = True) -> str:
        return self.inner.apply_chat_template(messages, add_generation_prompt=add_generation_prompt)
