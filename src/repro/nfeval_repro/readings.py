"""Each artefact's reading, kept once: in ``docs/results/<paper>.md``, under its id.

A notebook shows its reading by rendering that section (:func:`show`), so the notebook and
the docs cannot say different things; the docs tests check every number a reading quotes
against the artefact's table.

    from nfeval_repro.readings import show
    show("lk_t05")   # the section of docs/results/linkage.md, as Markdown
"""

from __future__ import annotations

import re

from nfeval.errors import NfevalError
from nfeval_repro.paths import ROOT

__all__ = ["reading", "show"]

DOCS = ROOT / "docs" / "results"


def reading(artefact: str) -> str:
    """The text of ``artefact``'s section in ``docs/results`` (from its ``## <id>:`` heading
    to the next section)."""
    from nfeval_repro.artefacts import by_id

    art = by_id(artefact)
    path = DOCS / f"{art.paper}.md"
    if not path.is_file():
        raise NfevalError(f"{path} is missing: the readings live there.")
    text = path.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(artefact)}:.*?(?=^<a id=|^## |\Z)", text, re.M | re.S)
    if not m:
        raise NfevalError(f"{path} has no section '## {artefact}:'.")
    return m.group(0).strip() + "\n"


def show(artefact: str):
    """Display ``artefact``'s reading in a notebook (returns the Markdown object)."""
    from IPython.display import Markdown, display

    md = Markdown(reading(artefact))
    display(md)
    return md
