"""Dataset statistics (LINKAGE Table 1: answers per grade)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

GRADES = (3, 2, 1, 0)


def grade_statistics(dataset: str, questions: Sequence) -> pd.DataFrame:
    """Table 1 rows for one dataset: question count, mean answers per grade, mean total.

    ``questions`` are :class:`nfeval.data.GradedQuestion` with grades 0..3.
    """
    counts = np.array([[sum(a.grade == g for a in q.answers) for g in GRADES]
                       for q in questions], dtype=float).reshape(-1, len(GRADES))
    rows = [("n_questions", float(len(questions)))]
    means = counts.mean(axis=0) if len(questions) else np.full(len(GRADES), np.nan)
    rows += [(f"avg_answers_grade_{g}", float(m)) for g, m in zip(GRADES, means)]
    rows.append(("avg_answers_total", float(counts.sum(axis=1).mean()) if len(questions) else np.nan))
    return pd.DataFrame({"dataset": dataset, "statistic": [r[0] for r in rows],
                         "ours": [r[1] for r in rows]})
