"""Throughput of the continuation-scoring kernel (``python -m nfeval.bench``).

Workload (P.D.-like, deterministic from ``--seed``): 40 contexts of ~450
tokens, each with 4 continuations of ~150 tokens, made of words drawn from a
fixed list (lengths vary +-10% so batches need padding).

Three measurements in one run, same model object, same threads:

1. **kernel** -- ``HFModel.batch_continuation_logprobs`` over all requests
   (context encoded once, KV cache expanded over the batch of continuations,
   float32 log-softmax of every continuation token).
2. **limit** -- a plain forward pass (``model(input_ids)``, all logits, no
   cache, no log-softmax) over exactly the unique tokens: each context once
   as its own sequence and each request's continuations as one right-padded
   batch *without* the context in front. Every unique token goes through the
   network once and no token attends to more than its own piece, so this is
   a strict lower bound on the work of any method that scores the same tokens
   (it does not even produce the right numbers: continuations do not see their
   context).
3. **naive** -- context + continuation re-encoded for every continuation, one
   pair at a time (plain forward + float32 log-softmax of the continuation
   tokens). It is measured on the first ``--naive-contexts`` requests only
   (default 8) to keep the run short; its time is scaled to the full
   workload by the share of the naive tokens (context + continuation per
   pair) those requests hold.

tokens_per_s = unique tokens (context + continuations, each once) / seconds,
for all three. ratio_to_limit = kernel seconds / limit seconds (target <=
1.5); speedup_vs_naive = naive seconds / kernel seconds, per request (target
>= 2). The kernel's results are also checked against the naive ones.

A third kernel, ``linkage_prob``, times the LINKAGE judge in ``prob`` mode
(:mod:`nfeval.linkage.judges`) on a few ANTIQUE questions (reference pattern
33221100, seed ``--seed``) with the embedded judge (``--judge``): the
instructions, demonstrations, question and reference list encoded once per
question and shared by its candidates, against one full prompt per candidate
(what the release does: every prompt sent whole), both on the same token ids;
the label distributions of the two are compared. One row per number of
demonstrations in ``--linkage-shots`` (default 0 and 3: the release's 0-shot
prompt and the project's 3-shot one). The full prompts are independent, so
only the first ``--linkage-naive-candidates`` of each question are timed and
their time is scaled by the tokens the whole workload sends that way. Each row
also records the tokens each way runs through the model and both wall times.
The tokens ratio bounds the speed-up: with the 0-shot prompt an ANTIQUE
candidate (~65 tokens) follows a ~650-token prefix, so the ratio is about 7.4
on ANTIQUE and 6.3 on TREC-DL-NF; demonstrations lengthen the shared prefix.

``--quick`` runs a tiny workload (smoke test) and writes no CSV unless
``--csv`` is given.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

from nfeval import NfevalError
from nfeval.paths import RESULTS

COLUMNS = ["kernel", "model", "workload", "tokens_per_s", "ratio_to_limit", "speedup_vs_naive"]
# written only when some row has them (the linkage_prob row does)
OPTIONAL_COLUMNS = ["seconds", "naive_seconds", "tokens_encoded", "naive_tokens_encoded"]
KERNEL = "hf-shared-kv"

_WORDS = (
    "the of and to in is that it for was on are as with his they at be this from "
    "have or by one had not but what all were when we there can an your which their "
    "said if do will each about how up out them then she many some so these would "
    "other into has more her two like him see time could no make than first been "
    "its who now people my made over did down only way find use may water long "
    "little very after words called just where most know government policy should "
    "because evidence argue however public research economic social important "
    "benefit risk cost health children education freedom law rights country world "
    "question answer perspective debate support oppose believe reason example"
).split()


def _text(rng: random.Random, tok, n_tokens: int) -> str:
    """Random words totalling about n_tokens tokens under this tokenizer."""
    words: list[str] = []
    n = 0
    while n < n_tokens:
        chunk = [rng.choice(_WORDS) for _ in range(max(1, (n_tokens - n) // 2))]
        words.extend(chunk)
        n = len(tok(" ".join(words), add_special_tokens=False)["input_ids"])
    return " ".join(words)


def make_workload(tok, n_ctx: int, ctx_tokens: int, n_cont: int, cont_tokens: int,
                  seed: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)

    def jitter(n: int) -> int:
        return max(1, int(n * rng.uniform(0.9, 1.1)))

    return [(_text(rng, tok, jitter(ctx_tokens)),
             [_text(rng, tok, jitter(cont_tokens)) for _ in range(n_cont)])
            for _ in range(n_ctx)]


def _limit(model, enc) -> None:
    import torch

    m, pad = model.model, model.pad_id
    with torch.inference_mode():
        for ctx, conts in enc:
            m(input_ids=torch.tensor([ctx]))
            T = max(len(c) for c in conts)
            ids = torch.full((len(conts), T), pad, dtype=torch.long)
            mask = torch.zeros((len(conts), T), dtype=torch.long)
            for r, c in enumerate(conts):
                ids[r, : len(c)] = torch.tensor(c)
                mask[r, : len(c)] = 1
            m(input_ids=ids, attention_mask=mask)


def _naive(model, enc) -> list[list[list[float]]]:
    import torch

    out = []
    with torch.inference_mode():
        for ctx, conts in enc:
            res = []
            for c in conts:
                logits = model.model(input_ids=torch.tensor([ctx + c])).logits[0]
                L = len(ctx)
                lp = torch.log_softmax(logits[L - 1: L - 1 + len(c)].float(), dim=-1)
                res.append(lp.gather(1, torch.tensor(c).unsqueeze(1)).squeeze(1).tolist())
            out.append(res)
    return out


def auto_threads() -> int:
    """Cores minus the load already on them (at least 1).

    With 2 cores shared with other busy processes, 2 OpenMP threads spin on
    barriers while one of them is descheduled: measured here, a request took
    21-26 s with 2 threads against 4.8-5.4 s with 1 under a load average of 3.
    """
    n = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return max(1, min(n, round(n - busy)))


def write_row(path: Path, row: dict) -> None:
    """Update-or-append the row for (kernel, model, workload); keep other rows."""
    rows: list[dict] = []
    if path.is_file():
        with open(path, newline="") as fh:
            rows = [r for r in csv.DictReader(fh)]
    key = (row["kernel"], row["model"], row["workload"])
    rows = [r for r in rows if (r.get("kernel"), r.get("model"), r.get("workload")) != key]
    rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".csv.tmp")
    cols = COLUMNS + [c for c in OPTIONAL_COLUMNS if any(r.get(c) for r in rows)]
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) or "" for k in cols})
    os.replace(tmp, path)


def _naive_tokens(enc) -> int:
    """Tokens the naive way runs through the model: context + continuation, per pair."""
    return sum(len(ctx) + len(c) for ctx, conts in enc for c in conts)


def _measure(model, kernel_name, model_name, dtype, workload, enc, uniq, n_naive, uniq_naive,
             kernel, from_naive, csv_path) -> None:
    """Time kernel / limit / naive on one workload, print the table, write the row.

    ``kernel()`` returns per-request values; ``from_naive(logprobs)`` turns the
    naive per-request log-probs into the same values, for the agreement check.
    """
    t = time.perf_counter()
    got = kernel()
    t_kernel = time.perf_counter() - t
    print(f"kernel {t_kernel:.1f}s", flush=True)
    t = time.perf_counter()
    _limit(model, enc)
    t_limit = time.perf_counter() - t
    print(f"limit  {t_limit:.1f}s", flush=True)
    t = time.perf_counter()
    naive = _naive(model, enc[:n_naive])
    t_naive_sub = time.perf_counter() - t
    print(f"naive  {t_naive_sub:.1f}s on {n_naive} of {len(enc)} requests", flush=True)

    def flat(x):
        return [v for item in x for v in (flat(item) if isinstance(item, (list, tuple)) else [item])]

    maxdiff = max(abs(a - b) for a, b in zip(flat(got[:n_naive]), flat([from_naive(r) for r in naive])))
    # Scaled to the full workload by the tokens the naive way feeds (context + continuation
    # per pair), not by the request count: on real data the first requests are not
    # average-sized (on the sample the first 8 answers carry 4% more than a fifth).
    t_naive = t_naive_sub * _naive_tokens(enc) / _naive_tokens(enc[:n_naive])
    tps = {"kernel": uniq / t_kernel, "limit": uniq / t_limit,
           "naive": uniq_naive / t_naive_sub}
    ratio = t_kernel / t_limit
    speedup = t_naive / t_kernel
    print()
    print(f"[{kernel_name}] {workload}")
    print(f"{'method':<8}{'seconds':>10}{'tokens/s':>11}")
    print(f"{'kernel':<8}{t_kernel:>10.1f}{tps['kernel']:>11.0f}")
    print(f"{'limit':<8}{t_limit:>10.1f}{tps['limit']:>11.0f}")
    print(f"{'naive':<8}{t_naive:>10.1f}{tps['naive']:>11.0f}   "
          f"(measured on {n_naive} requests, scaled)")
    print(f"max |kernel - naive|: {maxdiff:.2e} ({dtype})")
    print(f"ratio_to_limit   {ratio:.2f}  target <= 1.5: {'MET' if ratio <= 1.5 else 'NOT MET'}")
    print(f"speedup_vs_naive {speedup:.2f}  target >= 2:   {'MET' if speedup >= 2 else 'NOT MET'}")
    if csv_path is not None:
        write_row(Path(csv_path), {
            "kernel": kernel_name, "model": f"{model_name}/{dtype}", "workload": workload,
            "tokens_per_s": f"{tps['kernel']:.1f}", "ratio_to_limit": f"{ratio:.3f}",
            "speedup_vs_naive": f"{speedup:.3f}",
        })
        print(f"wrote {csv_path}")
    print(flush=True)


def _bench_pd(model, args, dtype, csv_path) -> None:
    """P.D. (paper variant) on the project's DebateQA-format sample: the shared-context
    kernel against re-encoding the answer for every partial answer (the release's way),
    on the sample's answers and on the lengths of the release's demo answers."""
    from nfeval.data import load_answers, load_debateqa
    from nfeval.paths import ROOT

    sample = ROOT / "data" / "debateqa_sample"
    items = {it.id: [p.text for p in it.partial_answers]
             for it in load_debateqa(sample / "questions.jsonl")}
    answers = load_answers(sample / "answers_balanced.jsonl").answers
    n = 1 if args.quick else len(answers)
    answers = dict(list(answers.items())[:n])
    _pd_workload(model, args, dtype, csv_path, answers, items,
                 f"pd-paper-sample-balanced-{n}answers")
    if args.quick:
        return
    # The sample's answers (~260 words) are shorter than real model answers, and the
    # speed-up of sharing the answer grows with its length. The release's demo answers
    # (real answers to the test questions, ~330 words) give a real run's lengths; their
    # partial answers (test split) are not reachable offline, so each demo answer is
    # paired with a sample question's partial answers. The pairing changes the P.D.
    # values, not the work, and both methods score the same pairs.
    try:
        from nfeval.data.fetch import resolve

        demo = load_answers(resolve("debateqa/answers_demo")).answers
    except NfevalError as exc:
        print(f"pd on demo-answer lengths skipped: {exc}", flush=True)
        return
    qids = sorted(items)
    demo_ids = sorted(demo)[:len(qids)]
    paired = {q: demo[d] for q, d in zip(qids, demo_ids)}
    _pd_workload(model, args, dtype, csv_path, paired, items,
                 f"pd-paper-demo-answers-x-sample-partials-{len(paired)}answers")


def _pd_workload(model, args, dtype, csv_path, answers, items, workload) -> None:
    import math

    from nfeval.metrics.pd import pd_context, pd_scores

    reqs = [(pd_context(model, a), items[k]) for k, a in answers.items()]
    enc = [(model.encode_context(c), [model.encode_continuation(x) for x in conts])
           for c, conts in reqs]
    uniq = sum(len(c) + sum(len(x) for x in xs) for c, xs in enc)
    n_naive = max(1, min(args.naive_contexts, len(enc)))
    uniq_naive = sum(len(c) + sum(len(x) for x in xs) for c, xs in enc[:n_naive])
    print(f"workload {workload}: {uniq} unique tokens", flush=True)

    def kernel():
        return [r.score for r in pd_scores(model, answers, items, progress=False)]

    def from_naive(lps):  # P.D. from the naive per-partial-answer log-probs
        return sum(math.exp(-sum(lp) / len(lp)) for lp in lps)

    _measure(model, "pd", args.model, dtype, workload, enc, uniq, n_naive, uniq_naive,
             kernel, from_naive, csv_path)


def _tree_tokens(label_ids: list[list[int]]) -> int:
    """Label tokens the shared-prefix kernel feeds: distinct leading token prefixes."""
    return len({tuple(lb[:k]) for lb in label_ids for k in range(1, len(lb))})


def _limit_packed(model, enc) -> None:
    """Plain forward passes over the unique tokens: each context alone, then its
    continuations concatenated into sequences of up to ``batch_tokens`` (no padding,
    no context in front, no label tokens): a lower bound on the work."""
    import torch

    with torch.inference_mode():
        for ctx, conts in enc:
            model.model(input_ids=torch.tensor([ctx]), logits_to_keep=1)
            flat = [t for c in conts for t in c]
            for i in range(0, len(flat), model.batch_tokens):
                model.model(input_ids=torch.tensor([flat[i: i + model.batch_tokens]]),
                            logits_to_keep=1)


def _bench_linkage(model, args, csv_path) -> None:
    """LINKAGE prob-mode judge: shared instruction + reference prefix vs one full prompt
    per candidate (the release's way), on the first ``--linkage-questions`` ANTIQUE
    questions, once per number of demonstrations in ``--linkage-shots`` (one row each)."""
    from nfeval.data import load_linkage
    from nfeval.linkage.references import DEFAULT_PATTERN, sample_all

    pattern = DEFAULT_PATTERN["antique"]
    try:
        questions = load_linkage("antique")
    except NfevalError as exc:
        print(f"linkage_prob skipped: {exc}", flush=True)
        return
    by_qid = {q.qid: q for q in questions}
    pool = sample_all(questions, pattern, args.seed).splits  # demonstrations come from here
    n = 1 if args.quick else args.linkage_questions
    splits = pool[:n]
    n_cands = 3 if args.quick else args.linkage_candidates
    if n_cands:
        splits = [replace(s, candidates=s.candidates[:n_cands]) for s in splits]
    n_naive = 0 if args.quick else args.linkage_naive_candidates
    for shots in args.linkage_shots:
        _bench_linkage_shots(model, args, csv_path, questions, by_qid, pool, splits, pattern,
                             n_cands, n_naive, shots)


def _bench_linkage_shots(model, args, csv_path, questions, by_qid, pool, splits, pattern,
                         n_cands, n_naive, shots) -> None:
    from nfeval.linkage import judges as J
    from nfeval.models.base import normalize

    cfg = J.JudgeConfig(method="linkage", mode="prob", seed=args.seed)
    demos = {s.qid: J.select_demonstrations(s.qid, questions, pool, shots, args.seed)
             for s in splits}
    work = []  # per question: (prefix ids, suffix ids per candidate, label ids)
    for s in splits:
        prompts = J.judge_prompts(model, by_qid[s.qid], s.references, s.candidates, cfg,
                                  demonstrations=demos[s.qid])
        labels = [lab + J.LABEL_CLOSE for lab in J.judge_labels(cfg, len(s.references))]
        work.append((model.encode_context(prompts[0].prefix),
                     [model.encode_continuation(p.suffix) for p in prompts],
                     [model.encode_continuation(lab) for lab in labels]))
    n_cand = sum(len(x) for _, x, _ in work)
    uniq = sum(len(c) + sum(len(x) for x in xs) for c, xs, _ in work)
    enc_shared = sum(len(c) + sum(len(x) + _tree_tokens(lab) for x in xs)
                     for c, xs, lab in work)

    def full_tokens(c, xs, lab):  # the release's way: every prompt whole, then its labels
        return sum(len(c) + len(x) + sum(len(lb) for lb in lab) for x in xs)

    enc_full = sum(full_tokens(*w) for w in work)
    prefix_mean = sum(len(c) for c, _, _ in work) / len(work)
    suffix_mean = sum(len(x) for _, xs, _ in work for x in xs) / n_cand
    workload = (f"linkage-antique-{pattern}-seed{args.seed}-{shots}shot-{len(work)}q-"
                f"{n_cand}cands" + (f"-max{n_cands}" if n_cands else ""))
    print(f"workload {workload}: mean prefix {prefix_mean:.0f} tokens, mean candidate "
          f"suffix {suffix_mean:.0f} tokens; tokens ratio (the ceiling of the speed-up) "
          f"{enc_full / enc_shared:.2f}", flush=True)

    model.score_labels_ids(work[0][0][:64], work[0][1][:1], work[0][2])  # warm-up
    t = time.perf_counter()
    got = [J.judge_candidates(model, by_qid[s.qid], s.references, s.candidates, cfg,
                              demonstrations=demos[s.qid]) for s in splits]
    t_kernel = time.perf_counter() - t
    print(f"shared prefix {t_kernel:.1f}s", flush=True)
    t = time.perf_counter()
    _limit_packed(model, [(c, xs) for c, xs, _ in work])
    t_limit = time.perf_counter() - t
    print(f"limit         {t_limit:.1f}s", flush=True)
    # The full prompts are independent of each other, so the first n_naive candidates of
    # each question are timed and the time is scaled by the tokens they hold.
    sub = [(c, xs[:n_naive] if n_naive else xs, lab) for c, xs, lab in work]
    t = time.perf_counter()
    full = []
    for c, xs, lab in sub:  # one whole prompt per candidate, labels batched on its cache
        full.append([[r.total for r in model.score_ids(c + x, lab)] for x in xs])
    t_full_sub = time.perf_counter() - t
    sub_tokens = sum(full_tokens(*w) for w in sub)
    t_full = t_full_sub * enc_full / sub_tokens
    n_sub = sum(len(xs) for _, xs, _ in sub)
    print(f"full prompts  {t_full_sub:.1f}s on {n_sub} of {n_cand} candidates "
          f"-> {t_full:.1f}s scaled by tokens", flush=True)

    maxdiff = 0.0
    for res, rows in zip(got, full):
        for jd, row in zip(res.judgments, rows):
            ref = normalize(dict(zip(jd.dist, row)))
            maxdiff = max(maxdiff, max(abs(jd.dist[k] - ref[k]) for k in ref))
    ratio = t_kernel / t_limit
    speedup = t_full / t_kernel
    print()
    print(f"[linkage_prob] {workload}")
    print(f"{'method':<14}{'seconds':>9}{'tokens encoded':>16}")
    print(f"{'shared prefix':<14}{t_kernel:>9.1f}{enc_shared:>16}")
    print(f"{'full prompts':<14}{t_full:>9.1f}{enc_full:>16}"
          + ("" if n_sub == n_cand else f"   (measured on {n_sub} candidates, scaled)"))
    print(f"tokens ratio {enc_full / enc_shared:.2f}, wall-time speedup {speedup:.2f} "
          f"(target >= 10: {'MET' if speedup >= 10 else 'NOT MET'}), ratio_to_limit {ratio:.2f}")
    print(f"max |P shared - P full| over all labels: {maxdiff:.2e} ({model.info.dtype})")
    if csv_path is not None:
        write_row(Path(csv_path), {
            "kernel": "linkage_prob", "model": f"{args.judge}/{model.info.dtype}",
            "workload": workload, "tokens_per_s": f"{uniq / t_kernel:.1f}",
            "ratio_to_limit": f"{ratio:.3f}", "speedup_vs_naive": f"{speedup:.3f}",
            "seconds": f"{t_kernel:.2f}", "naive_seconds": f"{t_full:.2f}",
            "tokens_encoded": str(enc_shared), "naive_tokens_encoded": str(enc_full),
        })
        print(f"wrote {csv_path}")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nfeval.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--dtype", default="auto",
                    help="auto (bf16 where the CPU has native bf16, else float32), bfloat16, float32")
    ap.add_argument("--quick", action="store_true", help="tiny workload (smoke test)")
    ap.add_argument("--contexts", type=int, default=40)
    ap.add_argument("--ctx-tokens", type=int, default=450)
    ap.add_argument("--conts", type=int, default=4)
    ap.add_argument("--cont-tokens", type=int, default=150)
    ap.add_argument("--naive-contexts", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kernels", default="hf-shared-kv,pd,linkage_prob",
                    help="comma-separated: hf-shared-kv (synthetic workload), pd (P.D. on "
                         "the project's DebateQA-format sample), linkage_prob (LINKAGE "
                         "prob-mode judge on ANTIQUE)")
    ap.add_argument("--judge", default="qwen2.5-coder-0.5b-instruct",
                    help="judge model of the linkage_prob kernel")
    ap.add_argument("--linkage-questions", type=int, default=4,
                    help="ANTIQUE questions in the linkage_prob workload")
    ap.add_argument("--linkage-candidates", type=int, default=0,
                    help="at most this many candidates per question (0: all; --quick: 3)")
    ap.add_argument("--linkage-shots", default="0,3",
                    help="comma-separated numbers of LINKAGE demonstrations, one row each "
                         "(0: the release's 0-shot prompt; n: the project's n-shot prompt)")
    ap.add_argument("--linkage-naive-candidates", type=int, default=2,
                    help="full prompts timed per question (0: all); the release's way "
                         "sends every prompt whole, so its time is scaled by tokens")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads; default: the cores not already busy (1-minute "
                         "load average), at least 1")
    ap.add_argument("--csv", type=Path, default=None,
                    help="default results/bench.csv (none with --quick)")
    args = ap.parse_args(argv)
    if args.quick:
        args.contexts, args.ctx_tokens, args.conts, args.cont_tokens = 3, 40, 2, 12
        args.naive_contexts = 3
    csv_path = args.csv or (None if args.quick else RESULTS / "bench.csv")
    args.kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    try:
        args.linkage_shots = [int(k) for k in args.linkage_shots.split(",") if k.strip()]
    except ValueError:
        ap.error(f"--linkage-shots takes numbers, e.g. 0,3; got {args.linkage_shots!r}")
    if any(k < 0 for k in args.linkage_shots):
        ap.error("--linkage-shots must be >= 0")
    if args.quick:
        args.linkage_shots = args.linkage_shots[:1]

    import torch

    from nfeval.models.hf import HFModel

    if args.threads is None:
        args.threads = auto_threads()
    torch.set_num_threads(args.threads)
    if {"hf-shared-kv", "pd"} & set(args.kernels):
        t0 = time.time()
        model = HFModel(args.model, dtype=args.dtype)
        dtype = model.info.dtype
        print(f"model {args.model} ({dtype}), {args.threads} threads, loaded in "
              f"{time.time() - t0:.1f}s", flush=True)
        reqs = make_workload(model.tokenizer, args.contexts, args.ctx_tokens, args.conts,
                             args.cont_tokens, args.seed)
        enc = [(model.encode_context(c), [model.encode_continuation(x) for x in conts])
               for c, conts in reqs]
        uniq = sum(len(c) + sum(len(x) for x in xs) for c, xs in enc)
        n_naive = max(1, min(args.naive_contexts, len(reqs)))
        uniq_naive = sum(len(c) + sum(len(x) for x in xs) for c, xs in enc[:n_naive])
        ctx_mean = sum(len(c) for c, _ in enc) / len(enc)
        cont_mean = sum(len(x) for _, xs in enc for x in xs) / sum(len(xs) for _, xs in enc)
        workload = (f"pd-synth-{args.contexts}x({args.ctx_tokens}+{args.conts}x"
                    f"{args.cont_tokens})-seed{args.seed}")
        print(f"workload {workload}: {uniq} unique tokens, mean context {ctx_mean:.0f}, "
              f"mean continuation {cont_mean:.0f} tokens", flush=True)

        _limit(model, enc[:1])  # warm-up (kernel selection, allocator)
        model.batch_continuation_logprobs(reqs[:1])

        if "hf-shared-kv" in args.kernels:
            def kernel():
                got = model.batch_continuation_logprobs(reqs)
                return [[r.logprobs for r in res] for res in got]

            _measure(model, KERNEL, args.model, dtype, workload, enc, uniq, n_naive, uniq_naive,
                     kernel, lambda ref: ref, csv_path)
        if "pd" in args.kernels:
            _bench_pd(model, args, dtype, csv_path)
    if "linkage_prob" in args.kernels:
        from nfeval import NfevalError

        t0 = time.time()
        try:
            judge = HFModel(args.judge, dtype=args.dtype)
        except NfevalError as exc:
            print(f"linkage_prob skipped: {exc}", flush=True)
            return 0
        print(f"judge {args.judge} ({judge.info.dtype}), {args.threads} threads, loaded in "
              f"{time.time() - t0:.1f}s", flush=True)
        _bench_linkage(judge, args, csv_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
