"""Throughput of the continuation-scoring kernel (``python benchmarks/bench.py``).

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

``judge_path`` measures the 1.5B judge's ways of computing (float32,
llama.cpp on the GGUF, int8, bf16) on a LINKAGE and a D.A. workload, speed
and agreement with float32 in one run: see ``benchmarks/judge_paths.py``. Each
run's rows are kept beside earlier runs' (with the run's time and the CPU's
model), and the bench prints, per CPU class, the path to use: faster than
float32 in at least two runs and with tables that agree. ``judge_table``
(run only when named: ``--kernels judge_table``) recomputes two real tables
with a path and compares them with the committed float32 ones: see
``benchmarks/judge_tables.py``.

Two more kernels measure the HTTP path and a peer tool:

* ``server_rps`` -- requests per second of LLM-judge-like chat requests
  (``--server-requests`` short prompts of ~100 tokens: SmolLM2's system
  prompt, an instruction, a question and a ~40-word candidate; greedy,
  ``--server-max-tokens`` generated tokens) sent by
  :meth:`nfeval.models.chat_backend.ChatModel.generate_many` to llama.cpp
  servers (``python -m llama_cpp.server``, the GGUF of ``--model``) at each
  concurrency in ``--server-concurrency`` (default 1, 2, 4, 8), with the
  server started afresh for each level (one warm-up request per server,
  then ``--server-repeats`` timed passes, the median kept). llama-cpp-python's server has no
  parallel-slots option: one ``Llama`` object serves every request behind a
  global lock (``llama_cpp/server/app.py``), so *c* slots are *c* server
  processes (``replicas``; the machine's ``--server-threads`` threads
  divided among them, at least one each) that the client spreads requests
  over (least busy first), which is also how several vLLM servers are used.
  The ``single`` mode sends the same concurrency to one process, showing
  that concurrency alone does not help a one-slot server. ratio_to_c1 =
  requests/s over that of concurrency 1 in the same run; the printout names
  the level past which the ratio stops growing (>= 10% per step).
* ``peer_lm_eval`` -- the P.D. workload of the ``pd`` kernel (context =
  the answer in the judge's chat prompt, continuations = the partial
  answers) scored by our kernel (``HFModel.batch_continuation_logprobs``)
  and by lm-evaluation-harness's transformers backend (``HFLM.loglikelihood``,
  pinned ``lm_eval``), same weights (the converted folder of ``--model``),
  float32, same torch threads, in the same run. max_abs_diff compares the
  summed log-likelihoods as each tool computes them (lm_eval moves the
  context's trailing whitespace, here the newline after the assistant
  header, into the continuation, so its number also holds that token's
  log-prob); max_abs_diff_same_split compares ours on lm_eval's split.

``--quick`` runs a tiny workload (smoke test) and writes no CSV unless
``--csv`` is given.

Why this file is long: every kernel's benchmark is one function here, so
``make bench`` runs them in one process and prints ratios from one run.
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
from nfeval_repro.paths import RESULTS

COLUMNS = ["kernel", "model", "workload", "tokens_per_s", "ratio_to_limit", "speedup_vs_naive"]
# written only when some row has them (the linkage_prob row does)
OPTIONAL_COLUMNS = ["seconds", "naive_seconds", "tokens_encoded", "naive_tokens_encoded",
                    "requests_per_s", "concurrency", "ratio_to_c1", "peer_seconds",
                    "speedup_vs_peer", "max_abs_diff", "max_abs_diff_same_split",
                    "items_per_s", "speedup_vs_float32", "max_expected_label_diff",
                    "max_label_prob_diff", "max_spearman_diff", "spearman_sign_changes",
                    "max_row_mean_diff", "verdict_changes", "rows_compared", "agrees", "run",
                    "cpu"]
KERNEL = "hf-shared-kv"
#: every kernel, as ``make bench`` runs them (``python benchmarks/bench.py --kernels all``)
BENCH_ALL = "hf-shared-kv,pd,linkage_prob,server_rps,peer_lm_eval,judge_path,guard_screen"

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
    """Update-or-append the row for (kernel, model, workload, run); keep other rows (a kernel
    that records its ``run`` keeps one row per run)."""
    rows: list[dict] = []
    if path.is_file():
        with open(path, newline="") as fh:
            rows = [r for r in csv.DictReader(fh)]
    key = (row["kernel"], row["model"], row["workload"], row.get("run") or "")
    rows = [r for r in rows
            if (r.get("kernel"), r.get("model"), r.get("workload"), r.get("run") or "") != key]
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
    from nfeval_repro.paths import ROOT

    sample = ROOT / "data" / "debateqa_sample"
    items = {it.id: [p.text for p in it.partial_answers]
             for it in load_debateqa(sample / "questions.jsonl")}
    answers = load_answers(sample / "answers_balanced.jsonl").answers
    n = 1 if args.quick else len(answers)
    answers = dict(list(answers.items())[:n])
    if args.quick:
        items = _quick_partials(items)
    _pd_workload(model, args, dtype, csv_path, answers, items,
                 f"pd-paper-sample-balanced-{n}answers" + ("-2partials" if args.quick else ""))
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


def _quick_partials(items: dict[str, list[str]]) -> dict[str, list[str]]:
    """``--quick``: each question's first two partial answers (the smoke test's work)."""
    return {k: v[:2] for k, v in items.items()}


def _pd_workload(model, args, dtype, csv_path, answers, items, workload) -> None:
    import math

    from nfeval.debateqa.pd import pd_context, pd_scores

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


# ----------------------------------------------------------------------------- HTTP
def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServers:
    """``n`` llama-cpp-python servers on free local ports (context manager: their URLs).

    Each gets ``threads`` threads; every process is terminated on exit.
    """

    def __init__(self, gguf: Path, n: int, threads: int, *, n_ctx: int = 2048,
                 ready_timeout: float = 300.0) -> None:
        self.gguf, self.n, self.threads = Path(gguf), int(n), int(threads)
        self.n_ctx, self.ready_timeout = int(n_ctx), float(ready_timeout)
        self.procs: list = []
        self.logs: list = []
        self.urls: list[str] = []

    def __enter__(self) -> list[str]:
        import subprocess
        import tempfile

        import httpx

        try:
            for _ in range(self.n):
                port = _free_port()
                log = tempfile.NamedTemporaryFile("w+", prefix="llama_server_", suffix=".log",
                                                  delete=False)
                cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf),
                       "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx),
                       "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                       "--logits_all", "false", "--seed", "0", "--verbose", "false"]
                self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                   env={**os.environ, "PYTHONUNBUFFERED": "1"}))
                self.logs.append(log)
                self.urls.append(f"http://127.0.0.1:{port}/v1")
            deadline = time.monotonic() + self.ready_timeout
            for proc, log, url in zip(self.procs, self.logs, self.urls):
                while True:
                    if proc.poll() is not None:
                        log.seek(0)
                        raise NfevalError(f"llama_cpp.server exited ({proc.returncode}):\n"
                                          f"{log.read()[-2000:]}")
                    try:
                        if httpx.get(url + "/models", timeout=2).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline:
                        raise NfevalError(f"llama_cpp.server at {url} not ready after "
                                          f"{self.ready_timeout:.0f} s")
                    time.sleep(0.3)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return list(self.urls)

    def __exit__(self, *exc) -> None:
        import subprocess

        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        for log in self.logs:
            log.close()
            try:
                os.unlink(log.name)
            except OSError:
                pass
        self.procs, self.logs = [], []


def judge_requests(n: int, seed: int, words: int = 40) -> list[str]:
    """``n`` short LLM-judge-like user turns (a D.A.-style yes/no question on a candidate)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q = " ".join(rng.choice(_WORDS) for _ in range(8)).capitalize() + "?"
        a = " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."
        out.append(f"Question: {q}\nCandidate answer: {a}\nDoes the candidate answer say that "
                   "the question is disputed? Reply with 1 for yes or 0 for no.")
    return out


def saturation_level(levels: list[int], rps: list[float], gain: float = 1.10) -> int:
    """The concurrency past which requests/s stop growing by at least ``gain`` per step."""
    for k in range(1, len(levels)):
        if rps[k] < rps[k - 1] * gain:
            return levels[k - 1]
    return levels[-1]


def _bench_server(args, csv_path) -> None:
    from nfeval.models.chat_backend import ChatModel
    from nfeval.models.transport import HTTPOptions
    from nfeval.models.registry import gguf_file

    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("server_rps skipped: llama-cpp-python is not installed", flush=True)
        return
    gguf = gguf_file(args.model)
    quant = gguf.stem.split(".")[-1]
    cores = args.server_threads or os.cpu_count() or 1
    levels = args.server_concurrency
    users = judge_requests(args.server_requests, args.seed)
    warm = judge_requests(max(levels), args.seed + 1)
    for mode in args.server_modes:
        rows = []
        texts0 = None
        for c in levels:
            n_proc = c if mode == "replicas" else 1
            threads = max(1, cores // n_proc)
            t0 = time.perf_counter()
            with LlamaServers(gguf, n_proc, threads) as urls:
                started = time.perf_counter() - t0
                m = ChatModel(urls, concurrency=c,
                              http=HTTPOptions(timeout=600, max_retries=2))
                m.generate_many([m.chat_prompt(u) for u in warm[:n_proc]], max_tokens=1,
                                concurrency=n_proc)
                prompts = [m.chat_prompt(u) for u in users]
                times = []
                for _ in range(args.server_repeats):
                    t = time.perf_counter()
                    gens = m.generate_many(prompts, max_tokens=args.server_max_tokens,
                                           concurrency=c)
                    times.append(time.perf_counter() - t)
                dt = sorted(times)[len(times) // 2]  # the median repeat
            tokens = sum((g.extra.get("usage") or {}).get("total_tokens", 0) for g in gens)
            texts = [g.text for g in gens]
            if texts0 is None:
                texts0 = texts
            same = sum(a == b for a, b in zip(texts, texts0))
            rows.append({"c": c, "procs": n_proc, "threads": threads, "seconds": dt,
                         "rps": len(gens) / dt, "tps": tokens / dt, "same": same,
                         "started": started})
            print(f"[server_rps {mode}] c={c}: {n_proc} process(es) x {threads} thread(s), "
                  f"{len(gens)} requests in {dt:.2f}s (median of {len(times)}) = "
                  f"{len(gens) / dt:.2f} req/s "
                  f"({tokens / dt:.0f} tokens/s); greedy texts equal to the first level's: "
                  f"{same}/{len(gens)} (servers up in {started:.1f}s)", flush=True)
        base = rows[0]["rps"]
        ref = "c1" if levels[0] == 1 else f"c{levels[0]}"
        print(f"\n[server_rps] {mode}: ratio to {ref}: "
              + ", ".join(f"c={r['c']}: {r['rps'] / base:.2f}" for r in rows))
        sat = saturation_level(levels, [r["rps"] for r in rows])
        print(f"[server_rps] {mode}: requests/s stop growing (< +10% per step) past "
              f"concurrency {sat} on this {os.cpu_count()}-core machine\n", flush=True)
        if csv_path is not None:
            for r in rows:
                write_row(Path(csv_path), {
                    "kernel": "server_rps", "model": f"{args.model}/{quant}",
                    "workload": (f"judge-chat-{mode}-{args.server_requests}req-x"
                                 f"{args.server_repeats}-"
                                 f"{args.server_max_tokens}tok-c{r['c']}-{r['procs']}x"
                                 f"{r['threads']}thr-seed{args.seed}"),
                    "tokens_per_s": f"{r['tps']:.1f}", "ratio_to_limit": "",
                    "speedup_vs_naive": "", "seconds": f"{r['seconds']:.2f}",
                    "requests_per_s": f"{r['rps']:.3f}", "concurrency": str(r["c"]),
                    "ratio_to_c1": f"{r['rps'] / base:.3f}",
                })
            print(f"wrote {csv_path}", flush=True)


def _bench_peer(model, args, csv_path) -> None:
    """Our P.D. scoring kernel against lm-evaluation-harness's HFLM.loglikelihood."""
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except ImportError as exc:
        print(f"peer_lm_eval skipped: lm_eval is not installed ({exc})", flush=True)
        return
    import lm_eval

    from nfeval.data import load_answers, load_debateqa
    from nfeval.debateqa.pd import pd_context
    from nfeval.models import registry
    from nfeval_repro.paths import ROOT

    sample = ROOT / "data" / "debateqa_sample"
    items = {it.id: [p.text for p in it.partial_answers]
             for it in load_debateqa(sample / "questions.jsonl")}
    answers = load_answers(sample / "answers_balanced.jsonl").answers
    n = 1 if args.quick else (args.peer_answers or len(answers))
    answers = dict(list(answers.items())[:n])
    if args.quick:
        items = _quick_partials(items)
    reqs = [(pd_context(model, a), items[k]) for k, a in answers.items()]
    flat = [(ctx, c) for ctx, conts in reqs for c in conts]
    uniq = sum(len(model.encode_context(c)) + sum(len(model.encode_continuation(x)) for x in xs)
               for c, xs in reqs)
    print(f"peer_lm_eval: {len(reqs)} answers, {len(flat)} (context, continuation) pairs, "
          f"{uniq} unique tokens; lm_eval {getattr(lm_eval, '__version__', '?')}", flush=True)

    model.batch_continuation_logprobs(reqs[:1])  # warm-up
    t = time.perf_counter()
    ours = [r.total for res in model.batch_continuation_logprobs(reqs) for r in res]
    t_ours = time.perf_counter() - t
    print(f"ours    {t_ours:.1f}s", flush=True)

    folder = registry.prepare(args.model)
    lm = HFLM(pretrained=str(folder), dtype="float32", device="cpu",
              batch_size=args.peer_batch_size)
    insts = [Instance(request_type="loglikelihood", doc={}, arguments=(ctx, c), idx=i)
             for i, (ctx, c) in enumerate(flat)]
    lm.loglikelihood(insts[:1], disable_tqdm=True)  # warm-up
    t = time.perf_counter()
    peer = [float(ll) for ll, _ in lm.loglikelihood(insts, disable_tqdm=True)]
    t_peer = time.perf_counter() - t
    print(f"lm_eval {t_peer:.1f}s (batch_size {args.peer_batch_size})", flush=True)

    diff = max(abs(a - b) for a, b in zip(ours, peer))
    # the same quantity on lm_eval's split: trailing whitespace moved to the continuation
    split = []
    for ctx, c in flat:
        k = len(ctx) - len(ctx.rstrip())
        split.append((ctx[:len(ctx) - k], ctx[len(ctx) - k:] + c) if k else (ctx, c))
    same = [model.continuation_logprobs(a, [b])[0].total for a, b in split]
    diff_same = max(abs(a - b) for a, b in zip(same, peer))
    speedup = t_peer / t_ours
    print(f"\n[peer_lm_eval] ours {t_ours:.1f}s, lm_eval HFLM {t_peer:.1f}s: ours is "
          f"{speedup:.2f}x as fast; max |ours - lm_eval| = {diff:.2e} nats as each computes it, "
          f"{diff_same:.2e} on lm_eval's split\n", flush=True)
    if csv_path is not None:
        write_row(Path(csv_path), {
            "kernel": "peer_lm_eval", "model": f"{args.model}/float32",
            "workload": (f"pd-paper-sample-balanced-{len(reqs)}answers-{len(flat)}pairs-"
                         f"lm_eval{getattr(lm_eval, '__version__', '')}-bs{args.peer_batch_size}"),
            "tokens_per_s": f"{uniq / t_ours:.1f}", "ratio_to_limit": "", "speedup_vs_naive": "",
            "seconds": f"{t_ours:.2f}", "peer_seconds": f"{t_peer:.2f}",
            "speedup_vs_peer": f"{speedup:.3f}", "max_abs_diff": f"{diff:.3e}",
            "max_abs_diff_same_split": f"{diff_same:.3e}",
        })
        print(f"wrote {csv_path}", flush=True)


def _bench_guard_screen(args, csv_path) -> None:
    """What ``--guard screen`` adds per answer: :func:`nfeval.screen.guarded_text` under
    ``screen`` (every sentence embedded, the question and references too) against ``strip``
    (the patterns alone) on the first ``--guard-answers`` candidate answers of ANTIQUE's
    first questions (reference pattern 33221100, seed ``--seed``), answers per second of
    each and their ratio, in one run; the LINKAGE judge's own items per second on the same
    machine are linkage_prob's rows."""
    from nfeval.data import load_linkage
    from nfeval.linkage.references import sample_references
    from nfeval.screen import guarded_text
    from nfeval.machine import cpu_model

    work = []
    for q in load_linkage("antique"):
        split = sample_references(q, "33221100", seed=args.seed, allow_short=True)
        refs = [r.text for r in split.references]
        work += [(c.text, q.question, refs) for c in split.candidates]
        if len(work) >= args.guard_answers:
            break
    work = work[:args.guard_answers]
    guarded_text(work[0][0], "screen", question=work[0][1], references=work[0][2])  # warm-up
    timed = {}
    for mode in ("strip", "screen"):
        t = time.perf_counter()
        changed = sum(guarded_text(a, mode, question=q, references=r) != a
                      for a, q, r in work)
        timed[mode] = (time.perf_counter() - t, changed)
    (strip_s, _), (screen_s, changed) = timed["strip"], timed["screen"]
    print(f"guard_screen: {len(work)} ANTIQUE answers; screen {screen_s:.2f} s "
          f"({1000 * screen_s / len(work):.1f} ms an answer, {changed} changed), strip "
          f"{strip_s:.3f} s; screen / strip {screen_s / max(strip_s, 1e-9):.0f}x", flush=True)
    if csv_path:
        write_row(csv_path, {"kernel": "guard_screen", "model": "all-minilm-l6-v2",
                             "workload": f"antique-{len(work)}answers-seed{args.seed}",
                             "seconds": round(screen_s, 3), "naive_seconds": round(strip_s, 4),
                             "items_per_s": round(len(work) / screen_s, 2),
                             "cpu": cpu_model()})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/bench.py", description=__doc__.split("\n")[0])
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
    ap.add_argument("--kernels", default=BENCH_ALL,
                    help="comma-separated: hf-shared-kv (synthetic workload), pd (P.D. on "
                         "the project's DebateQA-format sample), linkage_prob (LINKAGE "
                         "prob-mode judge on ANTIQUE), server_rps (requests/s against local "
                         "llama.cpp servers), peer_lm_eval (P.D. scored by lm-evaluation-"
                         "harness too), judge_path (the 1.5B judge's ways of computing, "
                         "benchmarks/judge_paths.py); default (and 'all'): every kernel "
                         "above. Also judge_table (a path's tables against the committed "
                         "float32 ones, benchmarks/judge_tables.py; about 20 minutes per path "
                         "on 2 cores, so run only when named)")
    ap.add_argument("--server-concurrency", default="1,2,4,8",
                    help="server_rps: comma-separated concurrency levels (slots)")
    ap.add_argument("--server-requests", type=int, default=32,
                    help="server_rps: requests per level")
    ap.add_argument("--server-repeats", type=int, default=3,
                    help="server_rps: timed passes per level (the median is kept; --quick: 1)")
    ap.add_argument("--server-max-tokens", type=int, default=4,
                    help="server_rps: generated tokens per request (greedy)")
    ap.add_argument("--server-threads", type=int, default=None,
                    help="server_rps: threads shared by the servers of a level (default: cores)")
    ap.add_argument("--server-modes", default="replicas,single",
                    help="server_rps: replicas (c one-slot servers) and/or single (one server)")
    ap.add_argument("--peer-answers", type=int, default=0,
                    help="peer_lm_eval: answers of the P.D. sample (0: all; --quick: 1)")
    ap.add_argument("--peer-batch-size", type=int, default=8,
                    help="peer_lm_eval: lm_eval's batch_size")
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
    ap.add_argument("--paths", default="hf-float32,llama-q4km,hf-int8,hf-bfloat16",
                    help="judge_path: comma-separated ways of computing the 1.5B judge "
                         "(hf-float32 always runs: it is the reference)")
    ap.add_argument("--path-judge", default=None,
                    help="judge_path: the judge (default the 1.5B judge the kernel is for; "
                         "--quick: the --judge model, so the smoke test stays within a few GB)")
    ap.add_argument("--path-questions", type=int, default=3,
                    help="judge_path: ANTIQUE questions of the LINKAGE workload (8 candidates each)")
    ap.add_argument("--path-answers", type=int, default=24,
                    help="judge_path: answers of the D.A. workload")
    ap.add_argument("--table-paths", default="hf-bfloat16",
                    help="judge_table: comma-separated paths whose tables are recomputed "
                         "(hf-bfloat16, hf-float32)")
    ap.add_argument("--table-questions", type=int, default=30,
                    help="judge_table: lk_t02's first judged questions per dataset, at most "
                         "(--quick: 1; 120 takes every judged one)")
    ap.add_argument("--table-answers", type=int, default=0,
                    help="judge_table: dq_t03's labelled answers, 0 for all 160 (--quick: 4)")
    ap.add_argument("--tables", default="lk_t02,dq_t03",
                    help="judge_table: the tables compared (lk_t02, dq_t03; default both)")
    ap.add_argument("--table-datasets", default="",
                    help="judge_table: lk_t02's datasets, comma-separated (antique, "
                         "trec-dl-nf; default both)")
    ap.add_argument("--table-from-store", action="store_true",
                    help="judge_table: read the paths' items from the committed store too "
                         "(those make evidence's bfloat16 stages stored; no weights, seconds) "
                         "instead of computing them; a missing item is an error")
    ap.add_argument("--guard-answers", type=int, default=200,
                    help="guard_screen: ANTIQUE candidate answers screened (--quick: 10)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads; default: the cores not already busy (1-minute "
                         "load average), at least 1")
    ap.add_argument("--csv", type=Path, default=None,
                    help="default results/bench.csv (none with --quick)")
    args = ap.parse_args(argv)
    if args.quick:
        args.contexts, args.ctx_tokens, args.conts, args.cont_tokens = 3, 40, 2, 12
        args.naive_contexts = 3
    if args.path_judge is None:
        from judge_paths import JUDGE

        args.path_judge = args.judge if args.quick else JUDGE
    csv_path = args.csv or (None if args.quick else RESULTS / "bench.csv")
    if args.kernels.strip() == "all":
        args.kernels = BENCH_ALL
    args.kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    unknown = set(args.kernels) - set(BENCH_ALL.split(",")) - {"judge_table"}
    if unknown:
        ap.error(f"unknown kernel(s) {sorted(unknown)}; choose from {BENCH_ALL}")
    try:
        args.server_concurrency = [int(k) for k in args.server_concurrency.split(",") if k.strip()]
    except ValueError:
        ap.error("--server-concurrency takes numbers, e.g. 1,2,4,8; "
                 f"got {args.server_concurrency!r}")
    if not args.server_concurrency or any(k < 1 for k in args.server_concurrency):
        ap.error("--server-concurrency needs levels >= 1")
    args.server_concurrency = sorted(set(args.server_concurrency))
    args.server_modes = [k.strip() for k in args.server_modes.split(",") if k.strip()]
    if not set(args.server_modes) <= {"replicas", "single"}:
        ap.error("--server-modes takes replicas and/or single")
    try:
        args.linkage_shots = [int(k) for k in args.linkage_shots.split(",") if k.strip()]
    except ValueError:
        ap.error(f"--linkage-shots takes numbers, e.g. 0,3; got {args.linkage_shots!r}")
    if any(k < 0 for k in args.linkage_shots):
        ap.error("--linkage-shots must be >= 0")
    if args.quick:
        args.linkage_shots = args.linkage_shots[:1]
        args.server_concurrency = args.server_concurrency[:2]
        args.server_requests = min(args.server_requests, 4)
        args.server_repeats = 1
    args.server_repeats = max(1, args.server_repeats)

    import torch

    from nfeval.models.hf import HFModel

    if args.threads is None:
        args.threads = auto_threads()
    torch.set_num_threads(args.threads)
    model = None
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
    if "peer_lm_eval" in args.kernels:
        peer_model = model
        if peer_model is None or peer_model.info.dtype != "float32":
            t0 = time.time()
            peer_model = HFModel(args.model, dtype="float32")
            print(f"model {args.model} (float32), {args.threads} threads, loaded in "
                  f"{time.time() - t0:.1f}s", flush=True)
        _bench_peer(peer_model, args, csv_path)
        del peer_model
    if "server_rps" in args.kernels:
        _bench_server(args, csv_path)
    if "judge_path" in args.kernels:
        from judge_paths import bench_judge_paths

        bench_judge_paths(args, csv_path, write_row)
    if "judge_table" in args.kernels:
        from judge_tables import bench_judge_tables

        bench_judge_tables(args, csv_path, write_row)
    if "guard_screen" in args.kernels:
        if args.quick:
            args.guard_answers = min(args.guard_answers, 10)
        _bench_guard_screen(args, csv_path)
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
