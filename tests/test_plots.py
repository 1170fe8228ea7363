"""Figure helpers (nfeval.plots)."""

from nfeval.plots import short_names


def test_short_names_are_distinct_and_keep_what_tells_two_sizes_apart():
    names = ["qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma3-270m",
             "qwen2.5-coder-1.5b-instruct", "acknowledge_rule", "smollm2-135m-instruct"]
    got = short_names(names)
    assert got == {"qwen2.5-coder-0.5b-instruct": "qwen2.5 0.5b", "smollm2-135m-instruct": "smollm2",
                   "gemma3-270m": "gemma3", "qwen2.5-coder-1.5b-instruct": "qwen2.5 1.5b",
                   "acknowledge_rule": "acknowledge_rule"}
    assert len(set(got.values())) == len(got)
