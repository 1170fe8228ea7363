"""The front door: a short README whose generated tables are current and whose links resolve."""

import json
import re
from pathlib import Path

import pytest
from test_api import EXAMPLE, cache  # noqa: F401 -- the library tests' fixture

from nfeval.cli import main
from nfeval_repro.artefacts import ARTEFACTS, by_id
from nfeval_repro.readings import reading

ROOT = Path(__file__).resolve().parents[3]  # the checkout
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
    from nfeval_repro.readme import PAGES, blocks, render

    every = blocks()
    for name, names in PAGES.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        assert render(text, {k: every[k] for k in names}) == text, f"{name}: run `make readme`"


def test_every_paper_artefact_has_its_reading_in_docs_results():
    for a in ARTEFACTS:
        if a.paper in ("linkage", "debateqa"):
            page = ROOT / "docs" / "results" / f"{a.paper}.md"
            assert f'<a id="{a.id}"></a>' in page.read_text(encoding="utf-8"), a.id


_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10}
_NUM = r"[+\-−]?\d+\.\d+"
_TRIPLE = re.compile(rf"({_NUM})\s*[,(]\s*(?:95% (?:CI|interval),?\s*)?({_NUM})\s*(?:-|to|–)\s*({_NUM})")
_N_QUOTE = re.compile(r"\bn\s*=\s*(\d+)|\b(\d+|" + "|".join(_WORDS) + r")\s+(?:[A-Z][\w.-]*\s+)?"
                      r"(?:labelled\s+)?(?:questions|answers)\b", re.IGNORECASE)


def _sections(doc: str):
    for sec in re.split(r"\n(?=## )", (ROOT / doc).read_text(encoding="utf-8")):
        m = re.match(r"## (\w+):", sec)
        if m:
            yield m.group(1), sec


def _quotes_without_their_n(sections) -> list[str]:
    """Rows quoted (value and interval, as rounded) in a text whose n the same text does not
    quote, and quoted values with intervals that match no row of the tables at all (a stale
    quote); ``sections`` yields (text, artefact ids whose tables it reads)."""
    import pandas as pd

    def close(a: str, b: float) -> bool:
        return abs(float(a.replace("−", "-")) - b) <= 0.5 * 10 ** -len(a.split(".")[1]) + 1e-9

    wrong = []
    for name, sec, ids in sections:
        tables = []
        for aid in ids:
            path = ROOT / "results" / f"{aid}.csv"
            unit = json.loads(path.with_suffix(".json").read_text())["interval"] \
                if path.exists() else "none"
            if not unit.startswith("none"):
                tables.append((pd.read_csv(path), unit))
                # its companion tables with an estimate and an interval per row (lk_x05's
                # size.csv: a change between judges), read with the same unit
                for extra in sorted((ROOT / "results" / aid).glob("*.csv")):
                    head = set(pd.read_csv(extra, nrows=0).columns)
                    if {"ci_low", "ci_high", f"n_{unit}"} <= head and head & {"ours", "change"}:
                        frame = pd.read_csv(extra)
                        tables.append((frame if "ours" in head else
                                       frame.rename(columns={"change": "ours"}), unit))
        if not tables:
            continue
        quoted = {int(a) if a else (int(b) if b.isdigit() else _WORDS[b.lower()])
                  for a, b in _N_QUOTE.findall(sec)}
        for x, lo, hi in _TRIPLE.findall(sec):
            ns, matched = set(), False
            for table, unit in tables:
                rows = table[[close(x, r.ours) and close(lo, r.ci_low) and close(hi, r.ci_high)
                              for r in table.itertuples()]]
                matched |= len(rows) > 0
                ns |= {int(v) for v in rows[f"n_{unit}"].dropna()}
            if not matched:  # a stale quote, or a number the table does not carry
                wrong.append(f"{name}: {x} ({lo}, {hi}) matches no row of {ids}")
            elif ns and not ns & quoted:
                wrong.append(f"{name}: {x} ({lo}, {hi}) is a row of n {sorted(ns)}; "
                             f"the reading quotes n {sorted(quoted)}")
    return wrong


def test_every_notebook_renders_its_reading_from_docs_results():
    """One copy of each reading: docs/results. A notebook renders it (nfeval_repro.readings.show)
    and keeps no reading of its own."""
    for nb, ids in _BY_NOTEBOOK.items():
        if nb == "claims.ipynb":  # its reading is the README's summary and docs/claims.md
            continue
        cells = json.loads((ROOT / "notebooks" / nb).read_text(encoding="utf-8"))["cells"]
        md = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "**Reading" not in md, nb
        code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        for aid in ids:
            if by_id(aid).paper in ("linkage", "debateqa") and "**Reading" in reading(aid):
                assert f'show("{aid}")' in code, (nb, aid)


@pytest.mark.parametrize("doc", ["docs/results/linkage.md", "docs/results/debateqa.md"])
def test_a_reading_quotes_the_n_of_every_row_it_reads(doc):
    """Where a reading quotes a row (its value and interval, as rounded), the row's n is
    quoted in that artefact's reading too ("n = 9", "nine questions", "120 ANTIQUE
    questions")."""
    assert _quotes_without_their_n((aid, sec, [aid]) for aid, sec in _sections(doc)) == []


_BY_NOTEBOOK: dict[str, list[str]] = {}
for _a in ARTEFACTS:
    _BY_NOTEBOOK.setdefault(_a.notebook, []).append(_a.id)


@pytest.mark.parametrize("notebook", sorted(_BY_NOTEBOOK))
def test_a_notebook_cell_quotes_the_n_of_every_row_it_reads(notebook):
    """The same check on each markdown cell of a notebook, against the tables it writes: a
    notebook's reading is a second copy of docs/results' and goes stale the same way."""
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    assert _quotes_without_their_n(
        (f"{notebook} cell {i}", "".join(c["source"]), _BY_NOTEBOOK[notebook])
        for i, c in enumerate(cells) if c["cell_type"] == "markdown") == []


#: How a reading names a judge model.
_JUDGE_NAMES = {"qwen2.5-coder-1.5b-instruct": ("1.5B",), "qwen2.5-coder-0.5b-instruct": ("0.5B",),
                "smollm2-135m-instruct": ("SmolLM2",), "gemma3-270m": ("Gemma",)}


@pytest.mark.parametrize("paper", ["linkage", "debateqa"])
def test_a_reading_names_the_judge_its_table_was_judged_by(paper):
    """The judge a table's record names (parameters.judge) is the one its reading names: a
    reading still about another judge fails here."""
    wrong = []
    for a in ARTEFACTS:
        if a.paper != paper:
            continue
        path = ROOT / "results" / f"{a.id}.json"
        judge = json.loads(path.read_text())["parameters"].get("judge") if path.exists() else None
        if not isinstance(judge, str) or judge not in _JUDGE_NAMES:
            continue
        text = reading(a.id)
        if not any(name in text for name in _JUDGE_NAMES[judge]):
            wrong.append(f"{a.id}: judged by {judge}, its reading never names it")
    assert wrong == []


def test_what_we_found_quotes_rows_of_the_claims_table():
    """Every value with an interval in the README's "What we found" is a row of
    results/claims.csv (as rounded), and the row's n is quoted beside it."""
    import pandas as pd

    text = README.read_text(encoding="utf-8")
    section = text.split("## What we found")[1].split("\n## ")[0]
    claims = pd.read_csv(ROOT / "results" / "claims.csv", keep_default_na=False, na_values=[""])

    def close(a, b):
        return abs(float(a) - b) <= 0.5 * 10 ** -len(a.split(".")[1]) + 1e-9

    quotes = _TRIPLE.findall(section)
    assert len(quotes) >= 5
    ns = {int(n) for n in re.findall(r"n = (\d+)", section)}
    for x, lo, hi in quotes:
        rows = claims[[close(x, r.ours) and close(lo, r.ci_low) and close(hi, r.ci_high)
                       for r in claims.itertuples()]]
        assert len(rows), f"{x} ({lo} to {hi}) is no row of results/claims.csv"
        assert set(rows["n"]) & ns, f"{x} ({lo} to {hi}): its n is not quoted"


_JUDGED_BY = re.compile(r"judged by (Qwen2\.5-Coder-[\d.]+B|SmolLM2|Gemma)", re.I)
_SIZES = {"qwen2.5-coder-1.5b-instruct": "1.5B", "qwen2.5-coder-0.5b-instruct": "0.5B"}


def test_a_notebooks_markdown_names_the_judge_its_result_records():
    """A notebook whose result JSON records a judge (parameters.judge) names it in its
    markdown, and never says its rows were "judged by" another model."""
    wrong = []
    for a in ARTEFACTS:
        path = ROOT / "results" / f"{a.id}.json"
        judge = json.loads(path.read_text())["parameters"].get("judge") if path.exists() else None
        if not isinstance(judge, str) or judge not in _JUDGE_NAMES:
            continue
        nb = json.loads(a.path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        if not any(name in text for name in _JUDGE_NAMES[judge]):
            wrong.append(f"{a.id}: records judge {judge}, its markdown never names it")
        for said in _JUDGED_BY.findall(text):
            size = _SIZES.get(judge, "")
            if size and size not in said:
                wrong.append(f"{a.id}: records judge {judge}, its markdown says judged by {said}")
    assert wrong == []


# ------------------------------------------- docs/usage.md (from tests/test_api.py: it reads docs/)

def test_the_usage_guide_summary_sample_is_what_the_command_writes(cache):
    assert main(["linkage", "--answers", str(EXAMPLE), "--method", "rougeL", "--no-progress",
                 "--summary", "s.json"]) == 0
    got = json.loads((cache / "s.json").read_text())
    text = (ROOT / "docs" / "usage.md").read_text()
    sample = re.search(r"```json\n(.*?)```", text, flags=re.S).group(1)
    doc = json.loads(sample)
    for key in ("mean", "ci_low", "ci_high", "n", "unit", "lower_is_better", "warning"):
        want = doc["score"][key]
        assert (round(got["score"][key], 3) if isinstance(want, float) else
                got["score"][key]) == want, key
    for key, value in doc["items"].items():
        assert got["items"][key] == value, key
    assert set(doc) <= set(got) and got["signature"].startswith("metric:rougeL|")
