"""The front door: a short README whose generated tables are current and whose links resolve."""

import json
import re

import pytest

from nfeval.artefacts import ARTEFACTS
from nfeval.paths import ROOT

README = ROOT / "README.md"
PAGES = [README, ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    ids = set(re.findall(r'<a id="([^"]+)"></a>', text))
    for h in re.findall(r"^#+ (.+)$", text, re.M):  # GitHub's heading slugs
        slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        ids.add(slug)
    return ids


def test_the_readme_is_short():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200 and len(text) <= 15_000, (
        len(text.splitlines()), len(text))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page):
    bad = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            bad.append(target)
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            bad.append(target)
    assert not bad, bad


def test_the_generated_blocks_are_current():
    from nfeval.readme import blocks, render

    text = README.read_text(encoding="utf-8")
    assert render(text, blocks()) == text, "run `make readme`"


def test_every_paper_artefact_has_its_reading_in_docs_results():
    for a in ARTEFACTS:
        if a.paper in ("linkage", "debateqa"):
            page = ROOT / "docs" / "results" / f"{a.paper}.md"
            assert f'<a id="{a.id}"></a>' in page.read_text(encoding="utf-8"), a.id


_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10}
_NUM = r"[+\-−]?\d+\.\d+"
_TRIPLE = re.compile(rf"({_NUM})\s*[,(]\s*({_NUM})\s*(?:-|to|–)\s*({_NUM})")
_N_QUOTE = re.compile(r"\bn\s*=\s*(\d+)|\b(\d+|" + "|".join(_WORDS) + r")\s+(?:[A-Z][\w.-]*\s+)?"
                      r"(?:labelled\s+)?(?:questions|answers)\b", re.IGNORECASE)


def _sections(doc: str):
    for sec in re.split(r"\n(?=## )", (ROOT / doc).read_text(encoding="utf-8")):
        m = re.match(r"## (\w+):", sec)
        if m:
            yield m.group(1), sec


@pytest.mark.parametrize("doc", ["docs/results/linkage.md", "docs/results/debateqa.md"])
def test_a_reading_quotes_the_n_of_every_row_it_reads(doc):
    """Where a reading quotes a row (its value and interval, as rounded), the row's n is
    quoted in that artefact's reading too ("n = 9", "nine questions", "120 ANTIQUE
    questions")."""
    import pandas as pd

    def close(a: str, b: float) -> bool:
        return abs(float(a.replace("−", "-")) - b) <= 0.5 * 10 ** -len(a.split(".")[1]) + 1e-9

    wrong = []
    for aid, sec in _sections(doc):
        path = ROOT / "results" / f"{aid}.csv"
        unit = json.loads(path.with_suffix(".json").read_text())["interval"] if path.exists() \
            else "none"
        if unit.startswith("none"):
            continue
        table = pd.read_csv(path)
        quoted = {int(a) if a else (int(b) if b.isdigit() else _WORDS[b.lower()])
                  for a, b in _N_QUOTE.findall(sec)}
        for x, lo, hi in _TRIPLE.findall(sec):
            rows = table[[close(x, r.ours) and close(lo, r.ci_low) and close(hi, r.ci_high)
                          for r in table.itertuples()]]
            ns = {int(v) for v in rows[f"n_{unit}"].dropna()}
            if ns and not ns & quoted:
                wrong.append(f"{aid}: {x} ({lo}, {hi}) is a row of n_{unit} {sorted(ns)}; "
                             f"the reading quotes n {sorted(quoted)}")
    assert wrong == []
