"""dq_t01 -- DebateQA Table 1: one dataset entry, printed as the paper prints it.

The question, then each partial answer's point of view (POV) and its explanation,
cut to ``explanation_chars`` characters at a word boundary as the paper's Table 1
truncates them "for space issues". The entries come from the DebateQA split where it
is reachable, else from the project's own DebateQA-format sample (the table's
``source`` column says which). No model is involved.
"""

from __future__ import annotations

from dataclasses import dataclass

import textwrap

import numpy as np
import pandas as pd

from nfeval.errors import NfevalError
from nfeval_repro.tables import Experiment, Signature

__all__ = ["Config", "run"]


def _entries(split: str, progress: bool):
    """(items, source name, question file) of the split, or of the sample where the split
    is not reachable (said when ``progress``)."""
    from nfeval.data import load_debateqa
    from nfeval_repro.debateqa.systems import load_questions
    from nfeval.debateqa.scoring import question_file

    try:
        return load_debateqa(split), f"DebateQA {split} split", question_file(split)
    except NfevalError as exc:
        if progress:
                print(f"The DebateQA {split} split is not reachable here:\n"
                  f"{textwrap.shorten(str(exc), 300)}")
        return (load_questions("sample"), "project sample (not DebateQA)",
                question_file("sample"))


def _rows(item, explanation_chars: int) -> list[dict]:
    rows = [{"question_id": item.id, "pov_index": 0, "field": "question",
             "ours": item.question, "chars": len(item.question)}]
    for k, pa in enumerate(item.partial_answers, 1):
        cut = textwrap.shorten(pa.explanation, explanation_chars, placeholder=" ...")
        rows += [{"question_id": item.id, "pov_index": k, "field": "point_of_view",
                  "ours": pa.point_of_view, "chars": len(pa.point_of_view)},
                 {"question_id": item.id, "pov_index": k, "field": "explanation", "ours": cut,
                  "chars": len(pa.explanation)}]
    return rows


@dataclass(frozen=True)
class Config:
    """The parameters of :func:`run`, one per field, with their defaults; the parameters
    cell of ``dq_t01_dataset_entry.ipynb`` is written from them."""

    #: run profile (no model here: only recorded)
    profile: str = "embedded"
    #: random seed that draws the entries
    seed: int = 0
    #: entries to print (drawn with seed), 0 for all
    limit: int = 1
    #: DebateQA split to read (test or dev); the sample when it is not reachable
    split: str = "test"
    #: id of the entry to print; 0 draws with seed
    question_id: int = 0
    #: characters of each explanation kept (the paper truncates)
    explanation_chars: int = 200


def run(config: Config = Config(), *, progress: bool = True) -> Experiment:
    """``limit`` entries drawn with ``seed`` (0: all), or the entry ``question_id`` names.

    ``extra``: ``chosen`` (the entries, in id order of the draw) and ``source``.
    ``profile`` is only checked (no model here); ``progress``: print what was read.
    """
    from nfeval.data import sha256_file
    from nfeval_repro.profiles import get_profile

    get_profile(config.profile)
    items, source, path = _entries(config.split, progress)
    by_id = {it.id: it for it in items}
    if config.question_id:
        if config.question_id not in by_id:
            raise NfevalError(f"question_id {config.question_id} is not in the {source} "
                              f"({len(items)} questions, ids {min(by_id)}-{max(by_id)}).")
        chosen = [by_id[config.question_id]]
    else:
        rng = np.random.default_rng(config.seed)
        picks = rng.choice(len(items), size=min(config.limit,
                                                len(items)) if config.limit else len(items),
                           replace=False)
        chosen = [items[i] for i in sorted(picks)]
    if progress:
        print(f"{len(items)} questions from the {source}; printing id(s) "
              f"{[it.id for it in chosen]}")
    table = pd.DataFrame([r for it in chosen for r in _rows(it, config.explanation_chars)]
                         ).assign(source=source)
    return Experiment(
        id="dq_t01", table=table, id_columns=["question_id", "pov_index", "field"],
        interval="none: the text of one dataset entry, printed as it is (no estimate)",
        signatures=[Signature(metric="dataset_entry", variant=source, n=len(chosen),
                              seed=config.seed, extra={"questions_sha256": sha256_file(path)})],
        notes=f"Entries from the {source}; explanations truncated to {config.explanation_chars} "
              "characters as the paper's Table 1 truncates them.",
        extra={"chosen": chosen, "source": source})
