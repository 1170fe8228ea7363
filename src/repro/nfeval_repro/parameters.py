"""An artefact's parameters as one value: its experiment module's ``Config``.

Every experiment module (``nfeval_repro.linkage.lk_t02``, ...) holds a frozen ``Config``
dataclass, one field per parameter, each with its default and a ``#:`` comment that says what
it does; ``run(config)`` takes it. The defaults are typed there and nowhere else: the
notebook's parameters cell is written from the class (:func:`cell`; ``python -m
nfeval_repro.artefacts --parameters`` rewrites every notebook's, a test checks them), the
catalogue's two-artefact notebooks override fields of it (:attr:`Artefact.config
<nfeval_repro.artefacts.Artefact.config>`), and a notebook hands what papermill injected back
to ``run`` through :func:`parameters`::

    from nfeval_repro.linkage import lk_t02
    exp = lk_t02.run(lk_t02.Config(limit=30))            # from Python
    exp = lk_t02.run(parameters(lk_t02.Config, globals()))  # inside the notebook
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import textwrap
from collections.abc import Mapping

from nfeval.errors import NfevalError

#: the one parameter every notebook has beside its config's fields (where it writes)
OUTPUT_DIR = ("output_dir", "str", "",
              "folder that receives results/ and figures/ (empty: the repository root)")
_TYPES = {"str": str, "int": int, "float": (int, float), "bool": bool}


def field_docs(cls: type) -> dict[str, str]:
    """Field name -> its ``#:`` comment lines joined (empty where it has none), from the
    class and the dataclasses it extends (a field declared again takes its new comment)."""
    docs: dict[str, str] = {}
    for klass in reversed([k for k in cls.__mro__ if dataclasses.is_dataclass(k)]):
        pending: list[str] = []
        for line in textwrap.dedent(inspect.getsource(klass)).splitlines():
            text = line.strip()
            if text.startswith("#:"):
                pending.append(text[2:].strip())
                continue
            m = re.match(r"^(\w+)\s*:", text)
            if m and not text.startswith(("class ", "def ")):
                docs[m.group(1)] = " ".join(pending)
            pending = []
    return docs


def _literal(value) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def cell(cls: type) -> str:
    """The notebook parameters cell of ``cls``: one ``name: type = default  # comment`` line per
    field, then ``output_dir``."""
    docs = field_docs(cls)
    lines = []
    for f in dataclasses.fields(cls):
        doc = docs.get(f.name, "")
        lines.append(f"{f.name}: {f.type} = {_literal(f.default)}" + (f"  # {doc}" if doc else ""))
    name, kind, default, doc = OUTPUT_DIR
    lines.append(f"{name}: {kind} = {_literal(default)}  # {doc}")
    return "\n".join(lines)


def check(config) -> None:
    """Raise :class:`NfevalError` naming every field whose value is not of its declared type."""
    bad = []
    for f in dataclasses.fields(config):
        want = _TYPES.get(str(f.type))
        value = getattr(config, f.name)
        if want is None:
            continue
        if (isinstance(value, bool) and want is not bool) or not isinstance(value, want):
            bad.append(f"{f.name}={value!r} (want {f.type})")
    if bad:
        raise NfevalError(f"{type(config).__module__}.Config: " + ", ".join(bad))


def parameters(cls: type, namespace: Mapping[str, object]):
    """``cls`` built from the names of ``namespace`` (a notebook's ``globals()`` after papermill
    injected its ``-p`` values), type-checked."""
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in namespace]
    if missing:
        raise NfevalError(f"{cls.__module__}.Config: no value for {', '.join(missing)} (the "
                          "notebook's parameters cell is written by `python -m "
                          "nfeval_repro.artefacts --parameters`)")
    config = cls(**{f.name: namespace[f.name] for f in dataclasses.fields(cls)})
    check(config)
    return config
