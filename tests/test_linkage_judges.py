"""LINKAGE judges: parsers, policies, pairwise positions and weights, few-shot, prob kernel.

The ``prob`` mode is checked against a brute-force computation on the tiny
GPT-2 (each label scored by a plain forward pass over the whole prompt); the
rest uses a scripted judge whose replies are fixed by the test.
"""

from __future__ import annotations

import math
import re

import pytest

from nfeval import NfevalError
from nfeval.data.loaders import GradedAnswer, GradedQuestion
from nfeval.linkage import judges as J
from nfeval.models.base import Generation, LanguageModel, ModelInfo, normalize
from testkit import needs

torch = needs("torch")

# short templates in the release's layout: the tiny GPT-2 has a 160-token window
TEMPLATES = {
    "linkage": "Rank it.\nQuestion:{#question}\nReference answer list:{#ground}\n"
               "Candidate answer:{#candidate}",
    "pointwise": "Score it.\nQuestion:{#question}\nReference answer list:{#ground}\n"
                 "Candidate answer:{#candidate}",
    "pointwise-ref": "Score it.\nQuestion:{#question}\nReference answer list:{#ground}\n"
                     "Candidate answer:{#candidate}",
    "pairwise": "Which? [Question]:{#question}\nA:{#answer_a}\nB:{#answer_b}",
}
QUESTION = "Is animal research cruel?"


def ga(doc_id: str, text: str, grade: int) -> GradedAnswer:
    return GradedAnswer(doc_id, text, grade, grade + 1)


REFS = [ga("r1", "Animal research saves lives.", 3), ga("r2", "Voting should be mandatory.", 1)]
CANDS = [ga("c1", "Alternatives exist.", 2), ga("c2", "Cell cultures and computer models.", 0),
         ga("c3", "Sentient beings should not suffer.", 1)]


class ScriptedJudge(LanguageModel):
    """A judge whose replies (``reply(prompt)``) and label log-probs (``logps``) are given."""

    info = ModelInfo(name="scripted", backend="test", source="test")

    def __init__(self, reply=None, logps=None):
        self.reply = reply or (lambda prompt: "")
        self.logps = logps
        self.prompts: list[str] = []
        self.seeds: list[int] = []

    def continuation_logprobs(self, context, continuations):
        raise NotImplementedError

    def label_logprobs(self, prompt, labels):
        self.prompts.append(prompt)
        return self.logps(prompt, labels)

    def label_distribution(self, prompt, labels):
        return normalize(self.label_logprobs(prompt, labels))

    def generate(self, prompt, *, temperature=0.0, top_p=1.0, max_tokens=256, seed=0, stop=()):
        """The scripted reply to the prompt, or the rest of it when the prompt is a
        scripted prompt followed by the reply so far; cut at the first stop string."""
        self.prompts.append(prompt)
        self.seeds.append(seed)
        replies = self.__dict__.setdefault("_replies", {})
        base = next((b for b in replies if prompt.startswith(b) and prompt != b), None)
        if base is None:
            full = replies[prompt] = self.reply(prompt)
            rest = full
        else:
            rest = replies[base][len(prompt) - len(base):]
        cuts = [rest.find(x) for x in stop if x in rest]
        if cuts:
            return Generation(rest[:min(cuts)], "stop", len(rest[:min(cuts)].split()))
        return Generation(rest, "stop", len(rest.split()))

    def apply_chat_template(self, messages, *, add_generation_prompt=True):
        return "<user>" + "".join(m.content for m in messages) + "<assistant>"


# --------------------------------------------------------------------------- parsers

@pytest.mark.parametrize("text, m, release, expected", [
    ("[[3]]", 8, False, 3),
    ("The candidate ranks [[2]]. Final: [[5]]", 8, False, 2),  # several: the first decides
    ("I would rank it second.", 8, False, None),  # missing
    ("", 8, False, None),
    (None, 8, False, None),
    ("[[9]]", 8, False, 9),  # m + 1 is allowed
    ("[[10]]", 8, False, None),  # out of range
    ("[[0]]", 8, False, None),
    ("[[ 4 ]]", 8, False, 4),
    ("[[4]]", None, False, 4),
    ("[[ 4 ]]", 8, True, None),  # the release's regular expression takes digits only
    ("[[12]]", 8, True, 12),  # ... and checks no range
    ('format: "[[2]]" and [[7]]', 8, False, 2),
])
def test_parse_rank(text, m, release, expected):
    assert J.parse_rank(text, m, release=release) == expected


@pytest.mark.parametrize("text, expected", [
    ("[[8]]", 8), ("[[10]]", 10), ("[[0]]", 0), ("[[11]]", None), ("[[7.5]]", None),
    ("Score: 7", None), ("[[3]] then [[9]]", 3), ("", None),
])
def test_parse_score(text, expected):
    assert J.parse_score(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("[[A]]", "A"), ("Assistant B is better. [[B]]", "B"), ("tie [[C]] [[A]]", "C"),
    ("[[D]]", None), ("[[a]]", None), ("A is better", None), ("", None), ("[[ B ]]", "B"),
])
def test_parse_verdict(text, expected):
    assert J.parse_verdict(text) == expected


# --------------------------------------------------------------------------- unparsed policies

@pytest.mark.parametrize("unparsed, expected", [
    ("drop", [-1.0, math.nan, math.nan]),
    ("release", [-1.0, -2.0, -2.0]),  # unparsed = rank 2 ...
    (3, [-1.0, -3.0, -3.0]),
])
def test_unparsed_policies_linkage(unparsed, expected):
    replies = {"Alternatives exist.": "[[1]]", "Cell cultures and computer models.": "none",
               "Sentient beings should not suffer.": "[[7]]"}  # 7 > m + 1 = 3

    def reply(prompt):
        return next(v for k, v in replies.items() if k in prompt)

    res = J.judge_candidates(ScriptedJudge(reply), QUESTION, REFS, CANDS, mode="sample",
                             unparsed=unparsed, templates=TEMPLATES)
    if unparsed == "release":  # ... and the release accepts any parsed number
        expected = [-1.0, -2.0, -7.0]
    assert res.scores == pytest.approx(expected, nan_ok=True)
    assert res.n_unparsed == (1 if unparsed == "release" else 2)
    assert res.n_outputs == 3
    assert res.n_nan == (2 if unparsed == "drop" else 0)


def test_release_policy_is_linkage_only():
    with pytest.raises(NfevalError, match="linkage"):
        J.JudgeConfig(method="pairwise", unparsed="release")
    with pytest.raises(NfevalError):
        J.JudgeConfig(unparsed="zero")


def test_sample_mode_uses_paper_decoding_and_seeds():
    seen = {}

    class Recording(ScriptedJudge):
        def generate(self, prompt, **kw):
            seen.setdefault("kw", []).append(kw)
            return Generation("[[2]]")

    j = Recording()
    J.judge_candidates(j, QUESTION, REFS, CANDS, mode="sample", templates=TEMPLATES)
    first = seen.pop("kw")
    assert {(k["temperature"], k["top_p"], k["max_tokens"]) for k in first} == {(0.8, 0.95, 512)}
    assert len({k["seed"] for k in first}) == 3  # one seed per output
    J.judge_candidates(j, QUESTION, REFS, CANDS, mode="sample", templates=TEMPLATES)
    assert [k["seed"] for k in seen["kw"]] == [k["seed"] for k in first]  # deterministic


# --------------------------------------------------------------------------- pairwise

def test_positions_balanced_and_deterministic():
    flags = [J.candidate_first(0, str(q), f"c{i}", f"r{j}")
             for q in range(20) for i in range(10) for j in range(10)]
    share = sum(flags) / len(flags)
    assert 0.47 < share < 0.53, share
    again = [J.candidate_first(0, str(q), f"c{i}", f"r{j}")
             for q in range(20) for i in range(10) for j in range(10)]
    assert flags == again
    other = [J.candidate_first(1, str(q), f"c{i}", f"r{j}")
             for q in range(20) for i in range(10) for j in range(10)]
    assert flags != other


@pytest.mark.parametrize("grade, weight", [(0, 1.0), (1, 2.0), (2, 3.0), (3, 4.0)])
def test_pair_weight(grade, weight):
    assert J.pair_weight(grade) == weight


def _quality_judge():
    """Prefers the answer with the higher 'quality=N' (tie when equal), wherever it stands."""
    def reply(prompt):
        a, b = (int(x) for x in re.findall(r"[AB]:\{quality=(\d)\}", prompt))
        return "[[C]]" if a == b else ("[[A]]" if a > b else "[[B]]")
    return ScriptedJudge(reply)


@pytest.mark.parametrize("positions", ["random", "release", "reference-first"])
def test_pairwise_weighted_score(positions):
    refs = [ga(f"r{g}", f"quality={g}", g) for g in (3, 2, 1, 0)]
    cands = [ga("c2", "quality=2", 2), ga("c0", "quality=0", 0), ga("c3", "quality=3", 3)]
    res = J.judge_candidates(_quality_judge(), QUESTION, refs, cands, method="pairwise",
                             mode="sample", positions=positions, templates=TEMPLATES)
    # c2: loses to 3 (w 4), ties 2 (w 3), beats 1 (w 2) and 0 (w 1): (1.5 + 2 + 1) / 10
    # c0: ties 0 only: 0.5 / 10;  c3: ties 3, beats the rest: (2 + 3 + 2 + 1) / 10
    assert res.scores == pytest.approx([0.45, 0.05, 0.8])
    assert res.n_outputs == 12 and res.n_unparsed == 0
    firsts = [j.candidate_first for j in res.judgments]
    if positions == "release":
        assert all(firsts)
    elif positions == "reference-first":
        assert not any(firsts)
    else:
        assert 0 < sum(firsts) < len(firsts)


def test_pairwise_prob_and_dropped_pairs():
    def logps(prompt, labels):  # P(A), P(B), P(C) = 0.6, 0.3, 0.1 whatever the prompt
        return {lab: math.log(p) for lab, p in zip(labels, (0.6, 0.3, 0.1))}

    res = J.judge_candidates(ScriptedJudge(logps=logps), QUESTION, REFS, CANDS[:1],
                             method="pairwise", positions="release", templates=TEMPLATES)
    assert res.scores == pytest.approx([0.65])  # candidate is A: 0.6 + 0.1 / 2
    # sample mode: an unparsed pair is left out of the weighted mean
    replies = iter(["[[A]]", "no verdict"])
    res = J.judge_candidates(ScriptedJudge(lambda p: next(replies)), QUESTION, REFS, CANDS[:1],
                             method="pairwise", mode="sample", positions="release",
                             templates=TEMPLATES)
    assert res.scores == [1.0] and res.n_unparsed == 1 and res.n_nan == 0


# --------------------------------------------------------------------------- prompts

def test_fill_slots_single_pass():
    t = "Q:{#question} C:{#candidate} G:{#ground}"
    out = J.fill_slots(t, {"question": "q #candidate", "candidate": "c #question"})
    assert out == "Q:{q #candidate} C:{c #question} G:{#ground}"


def test_render_references():
    assert J.render_references(REFS) == ("Answer 1:Animal research saves lives.\n"
                                         "Answer 2:Voting should be mandatory.\n")
    assert J.render_references(REFS, grades=True).splitlines()[0].endswith(" Score:4")
    assert J.render_references(REFS, grades=True).splitlines()[1].endswith(" Score:2")


def test_release_prompts(mirror):
    p = J.linkage_prompt(QUESTION, REFS, "my answer")
    assert "Question:{Is animal research cruel?}" in p
    assert "Reference answer list:{Answer 1:Animal research saves lives.\nAnswer 2:" in p
    assert p.endswith("Candidate answer:{my answer}")
    omit = J.pointwise_prompt(QUESTION, "my answer")
    release = J.pointwise_prompt(QUESTION, "my answer", no_ref_ground="release")
    assert "#ground" not in omit and "Reference answer list" not in omit
    assert "Reference answer list:{#ground}" in release
    graded = J.pointwise_prompt(QUESTION, "my answer", REFS, grades=True)
    assert "Answer 1:Animal research saves lives. Score:4\n" in graded
    pw = J.pairwise_prompt(QUESTION, "first", "second")
    assert "[The Start of Assistant A's Answer]:{first}" in pw
    assert "[The Start of Assistant B's Answer]:{second}" in pw


# --------------------------------------------------------------------------- few-shot

def _pool(n: int = 8):
    questions, splits = [], []

    class Split:
        def __init__(self, qid, refs, cands):
            self.qid, self.references, self.candidates = qid, tuple(refs), tuple(cands)

    for q in range(n):
        refs = [ga(f"{q}-r{g}", f"ref {g} of {q}", g) for g in (3, 2, 1, 0)]
        cands = [ga(f"{q}-c{g}", f"cand {g} of {q}", g) for g in (3, 2, 1, 0)]
        questions.append(GradedQuestion(str(q), f"question {q}?", refs + cands))
        splits.append(Split(str(q), refs, cands))
    return questions, splits


@pytest.mark.parametrize("grade, refs, rank", [
    (3, (3, 3, 2, 2, 1, 1, 0, 0), 1), (2, (3, 3, 2, 2, 1, 1, 0, 0), 3),
    (0, (3, 3, 2, 2, 1, 1, 0, 0), 7), (0, (3, 2, 1), 4), (3, (2, 1, 0), 1), (1, (), 1),
])
def test_correct_rank(grade, refs, rank):
    assert J.correct_rank(grade, refs) == rank


def test_demonstrations_exclude_target_and_are_deterministic():
    questions, splits = _pool()
    for target in ("0", "3", "7"):
        for n in (1, 3, 5):
            demos = J.select_demonstrations(target, questions, splits, n, seed=0)
            assert len(demos) == n
            assert target not in [d.qid for d in demos]
            assert len({d.qid for d in demos}) == n
            again = J.select_demonstrations(target, questions, splits, n, seed=0)
            assert demos == again
    d3 = J.select_demonstrations("0", questions, splits, 3, seed=0)
    assert len({d.candidate.grade for d in d3}) == 3  # different grades shown
    assert [d.rank for d in d3] == [J.correct_rank(d.candidate.grade, (3, 2, 1, 0)) for d in d3]
    assert J.select_demonstrations("0", questions, splits, 0) == []
    with pytest.raises(NfevalError, match="demonstrations"):
        J.select_demonstrations("0", questions, splits, 8)


def test_fewshot_prompt():
    questions, splits = _pool()
    tpl = J.load_fewshot_template()
    header = [line for line in J.FEWSHOT_FILE.read_text(encoding="utf-8").splitlines()
              if line.startswith("# ")]
    assert any("stands in for the paper's unreleased few-shot LINKAGE prompt" in line
               for line in header)
    demos = J.select_demonstrations("0", questions, splits, 2, seed=0)
    zero = ("Rank the candidate.\nOutput [[k]].\nBelow are the inputs.\n"
            "Question:{#question}\nReference answer list:{#ground}\nCandidate answer:{#candidate}")
    p = J.linkage_prompt("question 0?", splits[0].references, "CAND", demos, template=zero,
                         fewshot=tpl)
    assert p.startswith("Rank the candidate.\nOutput [[k]].\n")
    assert p.count("Output:[[") == 2 and "Example 2:" in p
    assert f"Candidate answer:{{{demos[0].candidate.text}}}\nOutput:[[{demos[0].rank}]]" in p
    assert p.endswith("Below are the inputs.\nQuestion:{question 0?}\nReference answer list:{"
                      "Answer 1:ref 3 of 0\nAnswer 2:ref 2 of 0\nAnswer 3:ref 1 of 0\n"
                      "Answer 4:ref 0 of 0\n}\nCandidate answer:{CAND}")
    assert "#" not in p.replace("[[", "")


# --------------------------------------------------------------------------- prob mode, tiny GPT-2

def _brute_force(lm, prompt: str, labels: list[str]) -> dict[str, float]:
    """log P(label | prompt): the whole prompt + label through a plain forward pass."""
    ids = lm.encode_context(prompt)
    out = {}
    for lab in labels:
        li = lm.encode_continuation(lab)
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(torch.tensor([ids + li])).logits[0].float(), -1)
        out[lab] = sum(float(lp[len(ids) + k - 1, li[k]]) for k in range(len(li)))
    return out


@pytest.mark.parametrize("method", ["linkage", "pointwise", "pointwise-ref-graded", "pairwise"])
def test_prob_mode_equals_brute_force(tiny_gpt2, method):
    lm = tiny_gpt2
    res = J.judge_candidates(lm, QUESTION, REFS, CANDS, method=method, templates=TEMPLATES)
    for jd in res.judgments:
        c = CANDS[jd.candidate].text
        if method == "linkage":
            user = J.linkage_prompt(QUESTION, REFS, c, template=TEMPLATES["linkage"])
            labels = ["1", "2", "3"]
        elif method == "pairwise":
            r = REFS[jd.reference].text
            a, b = (c, r) if jd.candidate_first else (r, c)
            user = J.pairwise_prompt(QUESTION, a, b, template=TEMPLATES["pairwise"])
            labels = ["A", "B", "C"]
        else:
            refs = None if method == "pointwise" else REFS
            user = J.pointwise_prompt(QUESTION, c, refs, grades=True,
                                      template=TEMPLATES["pointwise" if refs is None
                                                         else "pointwise-ref"])
            labels = [str(k) for k in range(11)]  # "10]]" shares its first token with "1]]"
        prompt = lm.chat_prompt(user) + "[["
        brute = normalize(_brute_force(lm, prompt, [lab + "]]" for lab in labels]))
        assert list(jd.dist) == labels
        for lab in labels:
            assert jd.dist[lab] == pytest.approx(brute[lab + "]]"], abs=1e-4)
    if method == "linkage":
        assert res.scores == pytest.approx(
            [-sum(int(k) * p for k, p in j.dist.items()) for j in res.judgments])


def test_shared_prefix_kernel_matches_fallback(tiny_gpt2):
    lm = tiny_gpt2
    prefix = "Rank it. Candidate answer:{"
    suffixes = ["Alternatives exist.}<|endoftext|>[[", "", "Voting}<|endoftext|>[[",
                "Animal research " * 40]  # the last does not fit the window: full prompt
    labels = [f"{k}]]" for k in range(11)] + ["A]]"]
    got = lm.prefix_label_logprobs(prefix, suffixes, labels)
    ctx = lm.encode_context(prefix)
    for s, row in zip(suffixes, got):
        ids = lm.encode_continuation(s)
        ref = lm.score_ids(ctx + ids, [lm.encode_continuation(lab) for lab in labels])
        assert [row[lab] for lab in labels] == pytest.approx([r.total for r in ref], abs=1e-4)
    # several packed passes (the cache reused pass after pass) give the same numbers
    sfx_ids = [lm.encode_continuation(s) for s in suffixes]
    lab_ids = [lm.encode_continuation(lab) for lab in labels]
    one = lm.score_labels_ids(ctx, sfx_ids, lab_ids, pack_tokens=1)
    assert [x for r in one for x in r] == pytest.approx(
        [row[lab] for row in got for lab in labels], abs=1e-4)
    # the generic fallback (one full prompt per suffix) agrees where tokenization does
    base = LanguageModel.prefix_label_logprobs(lm, prefix, suffixes[:3], labels)
    for a, b in zip(got, base):
        assert [a[lab] for lab in labels] == pytest.approx([b[lab] for lab in labels], abs=1e-4)


def test_sample_mode_tiny_gpt2(tiny_gpt2):
    kw = {"method": "linkage", "mode": "sample", "max_tokens": 6, "templates": TEMPLATES}
    a = J.judge_candidates(tiny_gpt2, QUESTION, REFS, CANDS, **kw)
    b = J.judge_candidates(tiny_gpt2, QUESTION, REFS, CANDS, **kw)
    assert [j.text for j in a.judgments] == [j.text for j in b.judgments]
    assert a.n_outputs == 3
    assert a.n_nan == a.n_unparsed  # random weights: whatever did not parse is NaN
    r = J.judge_candidates(tiny_gpt2, QUESTION, REFS, CANDS, unparsed="release", **kw)
    assert all(not math.isnan(s) for s in r.scores)


def test_judge_questions_and_correlation_inputs(tiny_gpt2, tmp_path, monkeypatch):
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path))
    questions, splits = _pool(3)
    kw = {"progress": False}
    # short prompts for the tiny window: patch the release template lookup
    import nfeval.linkage.prompts as P

    monkeypatch.setattr(P, "release_template", lambda method: TEMPLATES[method])
    first = J.judge_questions(tiny_gpt2, questions, splits, use_cache=True, **kw)
    again = J.judge_questions(tiny_gpt2, questions, splits, use_cache=True, **kw)
    assert [r.scores for r in first] == [r.scores for r in again]  # read back from the cache
    assert len(list((tmp_path / "runs").glob("linkage-judge-*.jsonl"))) == 1
    grades, scores = J.correlation_inputs(first, splits)
    assert grades["0"] == [3.0, 2.0, 1.0, 0.0] and len(scores["0"]) == 4
    from nfeval.metrics.correlation import question_correlations

    summary = question_correlations(grades, scores)
    assert summary["kendall"].n_used + summary["kendall"].n_skipped == 3


# --------------------------------------------------------------------------- sampling stops at the label

def test_sample_reply_stops_at_the_deciding_label_and_goes_past_others():
    from nfeval.linkage.judges import JudgeConfig, parse_rank, sample_reply

    cfg = JudgeConfig(method="linkage", mode="sample")
    j = ScriptedJudge(reply=lambda p: "Reasoning [[A]] more text [[3]] and then [[5]] tail")
    text = sample_reply(j, "P:", cfg, 1, lambda t: parse_rank(t, 8))
    assert text == "Reasoning [[A]] more text [[3]]"
    assert len(j.prompts) == 2 and j.prompts[1] == "P:Reasoning [[A]]"
    assert j.seeds[0] == 1 and j.seeds[1] != 1  # a continuation is a fresh draw


def test_sample_reply_without_label_returns_the_whole_reply():
    from nfeval.linkage.judges import JudgeConfig, parse_rank, sample_reply

    cfg = JudgeConfig(method="linkage", mode="sample")
    j = ScriptedJudge(reply=lambda p: "I cannot rank this answer.")
    assert sample_reply(j, "P:", cfg, 0, lambda t: parse_rank(t, 8)) == \
        "I cannot rank this answer."
    assert len(j.prompts) == 1


def test_the_byte_bound_keeps_what_tokenizing_keeps(tiny_gpt2, monkeypatch):
    """A candidate whose prompt fits the window by its bytes is kept without tokenizing; the
    tokenized fitting decides only where the bytes do not fit."""
    from nfeval.linkage.judges import JudgeConfig, _fit_candidates

    lm = tiny_gpt2
    cfg = JudgeConfig(method="linkage")
    long = "Animal research " * 60  # 960 bytes, about 120 tokens
    texts = ["short answer", long, "x"]
    builders = [lambda t: f"Question? References: one, two. Candidate: {t} Rank:"]
    calls = []
    encode = type(lm).encode_continuation

    def counted(self, text):
        calls.append(text)
        return encode(self, text)

    monkeypatch.setattr(type(lm), "encode_continuation", counted)
    cut = {}
    for window in (160, 400, 100_000):
        monkeypatch.setattr(lm, "max_length", window)
        calls.clear()
        got, cuts = _fit_candidates(lm, cfg, texts, builders, 2)
        assert got[0] == "short answer" and got[2] == "x" and cuts[0] == cuts[2] == 0
        cut[window] = (cuts[1], bool(calls))
    assert cut[100_000] == (0, False)  # fits by its bytes: nothing tokenized
    assert cut[400] == (0, True)  # too many bytes, few enough tokens: kept, after tokenizing
    assert cut[160][0] > 0  # too many tokens: cut from its end
