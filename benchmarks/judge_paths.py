"""Which way of computing the 1.5B judge is fastest without changing what it judges.

Kernel ``judge_path`` of ``python benchmarks/bench.py``. Two real workloads,
each judged by every candidate path in one run, same threads, nothing else
running:

* ``linkage`` -- LINKAGE 0-shot, ``prob`` mode, on the first
  ``--path-questions`` ANTIQUE questions of lk_t02's draw (seed 0, 8 random
  candidates each): the instructions, question and references are one shared
  prefix per question, each candidate a suffix, the ranks 1..m+1 (then ``]]``)
  the labels. An item is one candidate judged.
* ``da`` -- D.A., ``prob`` mode, on the first ``--path-answers`` answers of
  the project's DebateQA-format sample (its four written answer sets, in
  turn): the few-shot demonstrations are a shared prefix, each question and
  answer a suffix, ``0`` / ``1`` the labels. An item is one answer judged.

Paths (``--paths``): ``hf-float32`` (today's: transformers in float32 on the
dequantized weights); ``llama-q4km`` (llama.cpp on the GGUF as it ships,
:class:`nfeval.models.llama_kernel.LlamaScorer`: one sequence per candidate
and label sharing the prefix's KV cells, logits only at the label
positions); ``hf-int8`` (torch dynamic int8 quantization of every Linear
layer but the output head, per-tensor activation scales, per-channel weight
scales); ``hf-bfloat16`` (transformers in bfloat16; only where the CPU has
native bf16). Every path scores the same token ids (the model's transformers
tokenizer).

Each row: items/s, tokens/s and the speed-up over ``hf-float32`` of the same
run, and the agreement with ``hf-float32``: the largest difference of an
item's expected label (LINKAGE: the expected rank; D.A.: P("1")), the
largest difference of a label probability, and (LINKAGE) the per-question
Spearman correlation with the human grades: its largest difference and the
questions whose sign changed. ``agrees`` is ``yes`` where the expected labels
are within ``EXPECTED_TOL`` and every Spearman keeps its sign and is within
``SPEARMAN_TOL``. The limit row (``path`` ``limit``) puts today's float32
speed against the float32 matrix-multiply peak measured in the same run: the
most any float32 path could gain.
"""

from __future__ import annotations

import gc
import math
import time
from pathlib import Path
from nfeval.models.registry import DEFAULT_JUDGE

PATHS = ("hf-float32", "llama-q4km", "hf-int8", "hf-bfloat16")
EXPECTED_TOL = 0.02
SPEARMAN_TOL = 0.05
JUDGE = DEFAULT_JUDGE
#: weights a token is multiplied by (all but the embedding; the output head runs only at labels)
NON_EMBEDDING = {DEFAULT_JUDGE: 1.31e9, "qwen2.5-coder-0.5b-instruct": 0.36e9}


def _spearman(grades, scores) -> float:
    from scipy.stats import spearmanr

    if len(set(grades)) < 2 or len(set(scores)) < 2:
        return math.nan
    return float(spearmanr(grades, scores).statistic)


def linkage_work(model, n_questions: int):
    """(prefix ids, suffix ids, label ids, grades) per question of lk_t02's ANTIQUE draw."""
    from nfeval.data import load_linkage
    from nfeval.linkage import judges as J
    from nfeval_repro.linkage.same_items import judged_items

    questions = load_linkage("antique")
    by_qid = {q.qid: q for q in questions}
    sample = judged_items(questions, "antique", seed=0, limit=n_questions, max_candidates=8)
    cfg = J.JudgeConfig(method="linkage", mode="prob", seed=0)
    work = []
    for s in sample.judged[:n_questions]:
        prompts = J.judge_prompts(model, by_qid[s.qid], s.references, s.candidates, cfg)
        labels = [lab + J.LABEL_CLOSE for lab in J.judge_labels(cfg, len(s.references))]
        work.append((model.encode_context(prompts[0].prefix),
                     [model.encode_continuation(p.suffix) for p in prompts],
                     [model.encode_continuation(lab) for lab in labels],
                     [c.grade for c in s.candidates]))
    return work


def da_work(model, n_answers: int):
    """(prefix ids, suffix ids, label ids) of D.A. on the sample's answers (one request)."""
    from nfeval.data import load_answers, load_debateqa
    from nfeval.debateqa.da import LABELS, da_prompt
    from nfeval.models.ids import common_prefix_length
    from nfeval_repro.paths import ROOT

    sample = ROOT / "data" / "debateqa_sample"
    items = {it.id: it.question for it in load_debateqa(sample / "questions.jsonl")}
    sets = [load_answers(sample / f"answers_{k}.jsonl").answers
            for k in ("balanced", "one_sided", "off_topic", "short")]
    pairs = []
    for k in sorted(set().union(*sets)):
        for answers in sets:
            if k in answers and k in items and len(pairs) < n_answers:
                pairs.append((items[k], answers[k]))
    ids = [model.encode_context(model.chat_prompt(da_prompt(q, a))) for q, a in pairs]
    cut = min(common_prefix_length(ids), min(len(i) for i in ids) - 1)
    labels = [model.encode_continuation(lab) for lab in LABELS]
    return [(ids[0][:cut], [i[cut:] for i in ids], labels, None)]


def _dist(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    z = sum(e)
    return [x / z for x in e]


def _expected(workload: str, row) -> float:
    p = _dist(row)
    if workload == "da":  # labels "0", "1": P("1")
        return p[1]
    return sum((k + 1) * x for k, x in enumerate(p))  # ranks 1..m+1


def run_stamp() -> str:
    """The UTC minute a bench run started: its rows are kept beside earlier runs' under it."""
    return time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())


def _load(path: str, threads: int, judge: str = JUDGE):
    import torch

    from nfeval.models.hf import HFModel

    if path == "hf-float32":
        return HFModel(judge, dtype="float32", device="cpu")
    if path == "hf-bfloat16":
        return HFModel(judge, dtype="bfloat16", device="cpu")
    if path == "hf-int8":
        m = HFModel(judge, dtype="float32", device="cpu")
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        layers = {name for name, mod in m.model.named_modules()
                  if isinstance(mod, torch.nn.Linear) and not name.endswith("lm_head")}
        # in place: a copy would hold the float32 weights twice (6 GB each for the 1.5B judge)
        m._model = quantize_dynamic(m.model, {n: per_channel_dynamic_qconfig for n in layers},
                                    dtype=torch.qint8, inplace=True)
        return m
    if path == "llama-q4km":
        from nfeval.models.llama_backend import LlamaCppModel

        return LlamaCppModel(judge, n_ctx=8192, score_threads=threads)
    raise ValueError(path)


def _run(model, work):
    rows = []
    for prefix, suffixes, labels, _ in work:
        rows.append(model.score_labels_ids(prefix, suffixes, labels))
    return rows


def matmul_peak(threads: int) -> float:
    """float32 GFLOP/s of one 512 x 1536 x 8960 matrix product (the judge's MLP shape)."""
    import torch

    a, w = torch.randn(512, 1536), torch.randn(8960, 1536)
    a @ w.t()
    t = time.perf_counter()
    for _ in range(5):
        a @ w.t()
    return 2 * 512 * 1536 * 8960 * 5 / (time.perf_counter() - t) / 1e9


def bench_judge_paths(args, csv_path, write_row) -> list[dict]:
    """Time and compare every path on both workloads; write one row per path and workload."""
    import torch

    from nfeval.machine import cpu_model, machine_tag, native_bf16

    threads = torch.get_num_threads()
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = sorted(set(paths) - set(PATHS))
    if unknown:
        raise SystemExit(f"unknown --paths {unknown}; choose from {', '.join(PATHS)}")
    if "hf-float32" in paths:
        paths.remove("hf-float32")
    paths.insert(0, "hf-float32")  # the reference every other path is compared with
    if "hf-bfloat16" in paths and not native_bf16():
        print("hf-bfloat16 skipped: this CPU has no native bf16 (it would be emulated, "
              "several times slower than float32)", flush=True)
        paths.remove("hf-bfloat16")
    run = run_stamp()
    nq = 1 if args.quick else args.path_questions
    na = 2 if args.quick else args.path_answers
    tag = machine_tag()
    ref: dict[str, list] = {}
    ref_s: dict[str, float] = {}
    work: dict[str, list] = {}
    out = []
    for path in paths:
        gc.collect()
        t0 = time.perf_counter()
        model = _load(path, threads, args.path_judge)
        if not work:  # the same token ids for every path
            work = {"linkage": linkage_work(model, nq), "da": da_work(model, na)}
        w0 = work["da"][0]  # warm-up: loads the weights, picks the kernels
        model.score_labels_ids(w0[0][:48], w0[1][:1], w0[2])
        print(f"[judge_path] {path}: loaded in {time.perf_counter() - t0:.0f} s", flush=True)
        for name in ("linkage", "da"):
            wl = work[name]
            n_items = sum(len(s) for _, s, _, _ in wl)
            n_tokens = sum(len(p) + sum(len(x) for x in s) for p, s, _, _ in wl)
            t = time.perf_counter()
            rows = _run(model, wl)
            secs = time.perf_counter() - t
            if path == "hf-float32":
                ref[name], ref_s[name] = rows, secs
            exp_gap = prob_gap = sp_gap = 0.0
            flips = 0
            for q, (r_rows, m_rows) in enumerate(zip(ref[name], rows)):
                for a, b in zip(r_rows, m_rows):
                    exp_gap = max(exp_gap, abs(_expected(name, a) - _expected(name, b)))
                    prob_gap = max(prob_gap, max(abs(x - y) for x, y in zip(_dist(a), _dist(b))))
                grades = wl[q][3]
                if grades is not None:
                    s_ref = _spearman(grades, [-_expected(name, a) for a in r_rows])
                    s_new = _spearman(grades, [-_expected(name, b) for b in m_rows])
                    if not (math.isnan(s_ref) or math.isnan(s_new)):
                        sp_gap = max(sp_gap, abs(s_ref - s_new))
                        flips += (s_ref > 0) != (s_new > 0) and abs(s_ref) + abs(s_new) > 0
            agrees = exp_gap <= EXPECTED_TOL and (name == "da" or (flips == 0
                                                                   and sp_gap <= SPEARMAN_TOL))
            row = {
                "kernel": "judge_path", "model": f"{args.path_judge}/{path}",
                "workload": f"{name}-{'antique-0shot-%dq' % nq if name == 'linkage' else '%danswers' % na}"
                            f"@{tag}",
                "tokens_per_s": f"{n_tokens / secs:.1f}", "seconds": f"{secs:.2f}",
                "items_per_s": f"{n_items / secs:.4f}",
                "speedup_vs_float32": f"{ref_s[name] / secs:.3f}",
                "max_expected_label_diff": f"{exp_gap:.4f}", "max_label_prob_diff": f"{prob_gap:.4f}",
                "max_spearman_diff": "" if name == "da" else f"{sp_gap:.4f}",
                "spearman_sign_changes": "" if name == "da" else str(flips),
                "agrees": "yes" if agrees else "no", "run": run, "cpu": cpu_model(),
            }
            out.append(row)
            print(f"  {name:<8} {n_items:>3} items {secs:>7.1f} s  {n_items / secs:.3f} items/s  "
                  f"{n_tokens / secs:>6.1f} tok/s  x{ref_s[name] / secs:.2f} vs float32  "
                  f"E gap {exp_gap:.4f}  P gap {prob_gap:.4f}"
                  + ("" if name == "da" else f"  Spearman gap {sp_gap:.3f}, {flips} sign changes")
                  + f"  agrees: {row['agrees']}", flush=True)
        del model
    peak = matmul_peak(threads)
    gflop_tok = 2 * NON_EMBEDDING.get(args.path_judge, 1.31e9)  # a multiply-add per weight
    f32 = [r for r in out if r["model"].endswith("/hf-float32")]
    for r in f32:
        achieved = float(r["tokens_per_s"]) * gflop_tok / 1e9
        lim = {"kernel": "judge_path", "model": f"{args.path_judge}/limit",
               "workload": r["workload"], "tokens_per_s": f"{peak * 1e9 / gflop_tok:.1f}",
               "speedup_vs_float32": f"{peak / achieved:.3f}",
               "seconds": "", "items_per_s": "", "agrees": "yes", "run": run,
               "cpu": cpu_model()}
        out.append(lim)
        print(f"  limit    float32 matmul peak {peak:.0f} GFLOP/s = {peak * 1e9 / gflop_tok:.0f} "
              f"tok/s; today's path reaches {achieved:.0f} GFLOP/s on {r['workload'].split('@')[0]}: "
              f"at most x{peak / achieved:.2f} from any float32 path", flush=True)
    if csv_path is not None:
        for r in out:
            write_row(Path(csv_path), r)
        print(f"wrote {csv_path}")
        print(summary_text(summarize(Path(csv_path))), flush=True)
    return out


def _classes(tag: str, row: dict) -> tuple[str, ...]:
    """The CPU classes a bench row counts for: its kind (``tag``, every run of the kind) and,
    where the row recorded its CPU model, ``"<kind> on <model>"`` (that model's runs alone,
    the key :func:`nfeval.machine.listwise_judge_default` tries first)."""
    cpu = row.get("cpu")
    return (tag, f"{tag} on {cpu}") if cpu else (tag,)


def summarize(csv_path: Path) -> tuple[list[dict], set[tuple[str, str, str]]]:
    """Every judge_path run in ``csv_path``, per CPU class (a kind, and a kind on one recorded
    CPU model: :func:`_classes`), workload and path: the runs, the
    smallest and largest speed-up over float32, whether every run's items agreed (within
    ``EXPECTED_TOL``: information); and the (CPU class, kind of work, path) triples whose
    tables agree with float32's in every ``judge_table`` run (kind: ``linkage`` for lk_t02's
    table, ``da`` for dq_t03's)."""
    import csv

    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in rows:
        if r.get("kernel") == "judge_path" and r.get("items_per_s"):
            work, _, tag = r["workload"].partition("@")
            for machine in _classes(tag, r):
                groups.setdefault((machine, work, r["model"].rpartition("/")[2]), []).append(r)
    out = []
    for (tag, work, path), rs in sorted(groups.items()):
        speed = [float(r["speedup_vs_float32"]) for r in rs]
        out.append({"machine": tag, "workload": work, "path": path, "runs": len(rs),
                    "speedup_min": min(speed), "speedup_max": max(speed),
                    "items_agree_every_run": all(r.get("agrees") == "yes" for r in rs),
                    "cpus": sorted({r.get("cpu") or "not recorded" for r in rs})})
    from judge_tables import KIND

    verdicts: dict[tuple[str, str, str], list[bool]] = {}
    for r in rows:
        if r.get("kernel") == "judge_table":
            work, _, tag = r["workload"].partition("@")
            kind = KIND.get(work.split("-")[0], work)
            for machine in _classes(tag, r):
                verdicts.setdefault((machine, kind, r["model"].rpartition("/")[2]), []).append(
                    r.get("agrees") == "yes")
    tables = {k for k, v in verdicts.items() if all(v)}
    return out, tables


def choose(summary: list[dict], tables: set[tuple[str, str, str]], machine: str,
           workload: str) -> str:
    """The path for ``workload`` on CPUs of class ``machine``: among the paths measured in at
    least two runs, faster than float32 in every one, and whose tables for that kind of work
    agree with float32's on that class (``tables``), the one with the largest smallest
    speed-up; float32 where none is."""
    best, best_speed = "hf-float32", 1.0
    kind = workload.split("-")[0]
    for s in summary:
        if (s["machine"], s["workload"]) != (machine, workload) or s["path"] == "hf-float32":
            continue
        if (s["runs"] >= 2 and (machine, kind, s["path"]) in tables
                and s["speedup_min"] > best_speed):
            best, best_speed = s["path"], s["speedup_min"]
    return best


def summary_text(summarized: tuple[list[dict], set[tuple[str, str, str]]]) -> str:
    summary, tables = summarized
    lines = ["judge paths over every recorded run (speed-up over float32, smallest-largest; "
             "items within the item tolerance in every run; tables checked):"]
    for s in summary:
        lines.append(f"  {s['machine']:<42} {s['workload']:<26} {s['path']:<12} "
                     f"{s['runs']} run(s)  x{s['speedup_min']:.2f}-{s['speedup_max']:.2f}  "
                     f"items {'yes' if s['items_agree_every_run'] else 'no'}  tables "
                     + ("agree" if (s["machine"], s["workload"].split("-")[0], s["path"])
                        in tables else "not checked or differ"))
    for machine, work in sorted({(s["machine"], s["workload"]) for s in summary}):
        lines.append(f"  use on {machine}, {work}: {choose(summary, tables, machine, work)}")
    return "\n".join(lines)
