"""lk_x03's claims-style summary: which manipulation moves which method."""

from __future__ import annotations

import pandas as pd

from nfeval_repro.linkage import lk_x03


def _row(method, guard, statistic, manipulation, ours, lo, hi, n=12):
    return {"dataset": "antique", "method": method, "guard": guard, "statistic": statistic,
            "manipulation": manipulation, "ours": ours, "ci_low": lo, "ci_high": hi,
            "n_questions": n, "n_items": 2 * n}


def test_the_summary_reads_each_change_beyond_the_control_on_the_side_it_aims_for():
    t = pd.DataFrame([
        _row("linkage-0shot", "off", "effect", "control", -0.3, -0.5, -0.1),
        _row("linkage-0shot", "off", "effect", "instruction", 0.9, 0.7, 1.1),
        _row("linkage-0shot", "off", "beyond control", "instruction", 1.2, 0.9, 1.5),
        _row("linkage-0shot", "strip", "effect", "control", -0.3, -0.5, -0.1),
        _row("linkage-0shot", "strip", "effect", "instruction", -0.2, -0.4, 0.1),
        _row("linkage-0shot", "strip", "beyond control", "instruction", 0.1, -0.1, 0.3),
        # P.D.: lower is better, so a drop is what the manipulation aims for
        _row("pd", "none", "effect", "control", 2.0, 1.0, 3.0),
        _row("pd", "none", "beyond control", "self-praise", -2.5, -4.0, -1.0),
        _row("pd", "none", "beyond control", "instruction", -2.5, -4.0, -1.0, n=8),
    ])
    s = lk_x03.summary(t).set_index(["method", "guard", "manipulation"])
    assert s.loc[("linkage-0shot", "off", "instruction"), "verdict"] == "lifts the score"
    assert not s.loc[("linkage-0shot", "off", "instruction"), "inside_control_interval"]
    assert s.loc[("linkage-0shot", "strip", "instruction"), "verdict"] == "cannot tell at n"
    assert s.loc[("linkage-0shot", "strip", "instruction"), "inside_control_interval"]
    assert s.loc[("pd", "none", "self-praise"), "verdict"] == "lifts the score"
    assert s.loc[("pd", "none", "instruction"), "verdict"] == "too few questions"
    assert s.loc[("pd", "none", "self-praise"), "inside_control_interval"] is None
    # against the plain answer: the stripped instruction lifts nothing (its interval holds 0)
    strip = s.loc[("linkage-0shot", "strip", "instruction")]
    assert (strip["over_plain"], strip["over_plain_low"], strip["over_plain_high"]) == \
        (-0.2, -0.4, 0.1)
    assert strip["plain_verdict"] == "cannot tell at n"
    assert s.loc[("linkage-0shot", "off", "instruction"), "plain_verdict"] == "lifts the score"
    assert pd.isna(s.loc[("pd", "none", "self-praise"), "plain_verdict"])
