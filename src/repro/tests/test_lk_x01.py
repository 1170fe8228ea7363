"""lk_x01, the combined evaluator: chosen on training folds only, scored on held-out questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nfeval_repro.linkage import lk_x01
from nfeval.metrics import combine


def _synthetic(n_questions=30, per=6, seed=0):
    """Candidates with grades 0-3 and three methods: one tracks the grade, one is noise, one
    is the grade with noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        grades = rng.integers(0, 4, per)
        for d, g in enumerate(grades):
            rows.append({"dataset": "toy", "qid": str(q), "doc_id": f"{q}_{d}", "grade": g,
                         "good": float(g), "noise": rng.normal(),
                         "mixed": g + rng.normal(scale=1.5)})
    return pd.DataFrame(rows)


METHODS = ["good", "noise", "mixed"]


def test_no_held_out_grade_is_read_while_choosing():
    """Shuffling the grades of one fold's held-out questions leaves the choice made for that
    fold (its best single method, rank average and linear weights) exactly as it was."""
    frame = _synthetic()
    qs = combine.questions_of(frame, METHODS)
    fold = combine.fold_assignments(len(qs), 5, 0, 0, "toy", "lk_x01")
    rng = np.random.default_rng(1)
    shuffled = [combine.Question(q.dataset, q.qid, rng.permutation(q.grades) if fold[i] == 0
                                 else q.grades, q.scores, q.doc_ids)
                for i, q in enumerate(qs)]
    _, before = lk_x01.out_of_sample(qs, METHODS, folds=5, repeats=1, seed=0, key="toy")
    _, after = lk_x01.out_of_sample(shuffled, METHODS, folds=5, repeats=1, seed=0, key="toy")
    assert before[0] == after[0]  # fold 0 held those questions out
    assert before[1:] != after[1:]  # the other folds trained on them, so theirs may move


def test_a_method_that_is_the_grade_is_chosen_and_scores_one_out_of_sample():
    frame = _synthetic()
    qs = combine.questions_of(frame, METHODS)
    per, choices = lk_x01.out_of_sample(qs, METHODS, folds=5, repeats=2, seed=0, key="toy")
    assert {c["best_single"] for c in choices} == {"good"}
    defined = [v for v in per["best single"]["spearman"].values() if np.isfinite(v)]
    assert defined and np.allclose(defined, 1.0)


def test_every_question_is_held_out_once_per_repeat():
    fold = combine.fold_assignments(53, 5, 0, 3, "trec-dl-nf", "lk_x01")
    assert sorted(np.bincount(fold)) == [10, 10, 11, 11, 11]
    assert not np.array_equal(fold, combine.fold_assignments(53, 5, 0, 4, "trec-dl-nf", "lk_x01"))


def test_the_committed_file_gives_rows_with_intervals_and_the_papers_line():
    exp = lk_x01.run(lk_x01.Config(limit=12, repeats=1), progress=False)
    t = exp.table
    oos = t[(t["kind"] == "out of sample") & (t["coefficient"] == "spearman")]
    assert set(oos["dataset"]) == {"antique", "trec-dl-nf"}
    assert (oos["ci_low"] <= oos["ours"]).all() and (oos["ours"] <= oos["ci_high"]).all()
    assert oos["paper"].notna().all()
    assert {"antique -> trec-dl-nf", "trec-dl-nf -> antique"} <= set(t["dataset"])


def test_bad_parameters_are_clear_errors():
    from nfeval import NfevalError

    with pytest.raises(NfevalError, match="unknown methods"):
        lk_x01.run(lk_x01.Config(methods="linkage-0shot,nope,bleu"), progress=False)
    with pytest.raises(NfevalError, match="folds"):
        lk_x01.run(lk_x01.Config(folds=1), progress=False)


def test_the_ridge_fit_is_exact_and_independent_of_the_order_of_the_candidates():
    """The linear combination's weights come from exact sums and a fixed-order solve: the
    same bits for the training candidates in any order (a BLAS sum is not), equal to LAPACK's
    solution to rounding, and equal rows get equal combined scores."""
    import numpy as np

    from nfeval.metrics.combine import linear_score, ridge_weights

    rng = np.random.default_rng(3)
    xs = rng.normal(size=(500, 12))
    ys = xs @ rng.normal(size=12) + rng.normal(size=500)
    w = ridge_weights(xs, ys, 1.0)
    lapack = np.linalg.solve(xs.T @ xs + np.eye(12), xs.T @ ys)
    assert np.allclose(w, lapack, rtol=1e-12, atol=1e-12)
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(500)
        assert ridge_weights(xs[order], ys[order], 1.0) == w  # bit for bit
    z = np.vstack([xs[:3], xs[:3]])
    s = linear_score(z, w)
    assert (s[:3] == s[3:]).all()
    with pytest.raises(ValueError, match="alpha"):
        ridge_weights(xs, ys, 0.0)


def test_a_constant_column_standardizes_to_zero_not_to_rounding_noise():
    import numpy as np

    from nfeval.metrics.combine import _z

    x = np.array([[0.1, 1.0], [0.1, 2.0], [0.1, 3.0]])
    z = _z(x)
    assert (z[:, 0] == 0).all()
    assert z[:, 1].tolist() == pytest.approx([-1.224744871391589, 0.0, 1.224744871391589])
