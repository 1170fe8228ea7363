"""A page's generated blocks: the text between ``<!-- BEGIN <name> -->`` and
``<!-- END <name> -->``, replaced and nothing else (:mod:`nfeval_repro.readme` writes every
block; :mod:`nfeval_repro.evidence` its cost table when a stage finishes)."""

from __future__ import annotations

import re

from nfeval.errors import NfevalError


def render(text: str, new: dict[str, str]) -> str:
    """``text`` with every block of ``new`` replaced; a block the text lacks is an error."""
    for name, body in new.items():
        pat = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        if not pat.search(text):
            raise NfevalError(f"the page has no block {name!r} (<!-- BEGIN {name} --> ... "
                              f"<!-- END {name} -->)")
        text = pat.sub(lambda m: m.group(1) + body + m.group(2), text)
    return text
