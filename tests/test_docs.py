"""The front door: a short README whose generated tables are current and whose links resolve."""

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
