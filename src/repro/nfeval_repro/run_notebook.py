"""``python -m nfeval_repro.run_notebook``: papermill's command line, as ``make`` runs each notebook.

The same options and behaviour as the ``papermill`` command (``--help`` prints them). It
starts about a second sooner: papermill validates notebooks with ``jsonschema``, whose
import builds a grammar for IRI strings (``rfc3987_syntax``) whenever that package is
installed (JupyterLab's dependencies install it); notebook validation never checks IRI
formats, so this entry point keeps the grammar from loading. ``make reproduce`` starts one
papermill per notebook, so the second is paid some thirty times.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    # jsonschema imports it inside ``suppress(ImportError)``; None in sys.modules raises that
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    from papermill.cli import papermill

    papermill.main(args=argv, prog_name="python -m nfeval_repro.run_notebook")


if __name__ == "__main__":
    main()
