"""The project's own DebateQA-format sample (``data/debateqa_sample/``).

Written by the project (not the DebateQA release) so P.D. and D.A. can be
demonstrated and checked offline: 40 debatable questions with partial
answers, four answer sets of known character, and D.A. labels assigned by
reading each answer against the D.A. definition (guideline at the top of
``da_labels.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from nfeval.data.loaders import DebateItem, load_answers, load_debateqa
from nfeval.paths import SAMPLE

SAMPLE_DIR = SAMPLE
ANSWER_SETS = ("balanced", "one_sided", "off_topic", "short")


@dataclass
class DebateSample:
    items: dict[int, DebateItem]
    answers: dict[str, dict[int, str]]  # answer set -> question id -> answer
    labels: pd.DataFrame  # id, answer_set, label, note

    def limit(self, n: int) -> "DebateSample":
        """The first ``n`` questions (all when n <= 0), with their answers and labels."""
        if n <= 0:
            return self
        keep = list(self.items)[:n]
        return DebateSample(
            {k: self.items[k] for k in keep},
            {s: {k: a[k] for k in keep if k in a} for s, a in self.answers.items()},
            self.labels[self.labels["id"].isin(keep)].reset_index(drop=True),
        )


def load_sample(folder: str | Path = SAMPLE_DIR) -> DebateSample:
    folder = Path(folder)
    items = {it.id: it for it in load_debateqa(folder / "questions.jsonl")}
    answers = {s: load_answers(folder / f"answers_{s}.jsonl", strict=True).answers
               for s in ANSWER_SETS}
    labels = pd.read_csv(folder / "da_labels.csv", comment="#")
    return DebateSample(items, answers, labels)
