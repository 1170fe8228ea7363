"""Write the tokenizer packs of the embedded models (``data/tokenizers/<name>/``).

A pack holds what the item store's keys and the prompts need of a model -- the
tokenizer (``tokenizer.json``, xz-compressed), its config, the chat template and
the model config -- taken from the model's converted folder
(:func:`nfeval.models.registry.prepare`, which converts the GGUF once), with a
manifest of sha256 sums of the unpacked files and the sha256 of the GGUF it came
from. :func:`nfeval.models.registry.tokenizer_dir` unpacks and checks it.

Run it after a model's GGUF or the pinned transformers changes:

    .venv/bin/python scripts/pack_tokenizers.py [NAME ...]   (default: every embedded LM)
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from nfeval.hashing import sha256_file  # noqa: E402
from nfeval.models import registry  # noqa: E402

FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "config.json")
COMPRESSED = ("tokenizer.json",)


def pack(name: str, out: Path) -> Path:
    import transformers

    spec = registry.get_spec(name)
    source = registry.prepare(spec.name)
    target = out / spec.name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    files = {}
    for f in FILES:
        if not (source / f).is_file():
            continue
        files[f] = sha256_file(source / f)
        if f in COMPRESSED:  # preset 9, one thread: the same bytes on every machine
            (target / (f + ".xz")).write_bytes(
                lzma.compress((source / f).read_bytes(), preset=9))
        else:
            shutil.copyfile(source / f, target / f)
    man = {"name": spec.name, "gguf_file": spec.gguf_name, "gguf_sha256": spec.sha256,
           "made_from": "the converted folder of nfeval.models.registry.prepare",
           "transformers": transformers.__version__, "files": files}
    (target / registry.PACK_MANIFEST).write_text(json.dumps(man, indent=2) + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="embedded model names (default: every embedded LM)")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "tokenizers")
    args = ap.parse_args(argv)
    names = args.names or [s.name for s in registry.list_models() if s.kind == "embedded-gguf"]
    for name in names:
        t = pack(name, args.out)
        size = sum(p.stat().st_size for p in t.iterdir())
        print(f"{name}: {t.relative_to(ROOT) if t.is_relative_to(ROOT) else t} "
              f"({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
