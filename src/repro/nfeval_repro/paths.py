"""The reproduction's folders in the checkout it runs from (it is installed from one,
``pip install -e src/repro``): notebooks, results and their item stores, figures, the
executed notebooks and the papers' values transcribed from their text."""

from __future__ import annotations

from pathlib import Path

#: the checkout (src/repro/nfeval_repro/paths.py is three folders below it)
ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "results"
FIGURES = ROOT / "figures"
EXECUTED = RESULTS / "executed"
#: the papers' values, transcribed from their text
PAPER_VALUES = ROOT / "data" / "paper_values"

__all__ = ["EXECUTED", "FIGURES", "NOTEBOOKS", "PAPER_VALUES", "RESULTS", "ROOT"]
