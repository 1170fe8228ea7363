"""The paper profile's GPU path, checked against the CPU (``make gpu-check``).

No model weights travel to a lent GPU machine, so this builds tiny models from
a config there: the Qwen2 and Llama architectures, two layers, random weights
from a fixed seed, and a byte-level BPE tokenizer trained on this file's own
sentences, with a chat template. On each model it runs the project's kernels
through their public functions:

* ``shared-context`` -- :meth:`HFModel.batch_continuation_logprobs` (the
  context's KV cache shared by its continuations);
* ``pd`` -- DebateQA P.D. (:func:`nfeval.debateqa.pd.pd_scores`);
* ``linkage-prob`` -- the LINKAGE judge in ``prob`` mode
  (:func:`nfeval.linkage.judges.judge_candidates`: shared prefix, label tree);
* ``da`` -- D.A. in ``prob`` mode (:func:`nfeval.debateqa.da.da_prob_batch`);

on the CPU in float32 (the reference) and on each other device and dtype
(default ``cuda`` in float32 and bfloat16), and prints one table: the largest
difference from the CPU float32 numbers per kernel (absolute, relative for
numbers above 1: P.D. is a perplexity, a continuation's log-probability a sum),
and whether it is within ``--tol`` (float32 only; bfloat16 differences are
reported, not judged). Exit status 0 when every float32 row passes (or, with no GPU, after
saying so), 1 otherwise.

    python scripts/gpu_check.py                  # cuda float32 + bfloat16 vs cpu
    python scripts/gpu_check.py --devices cpu    # the same on the CPU alone (self-check)
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

CORPUS = [
    "Should cities ban cars from their centres? Some argue it cleans the air and "
    "makes streets safer; others say it hurts shops and people who cannot walk far.",
    "Is nuclear power a good answer to climate change? It emits little carbon, but "
    "waste, cost and accidents worry many people.",
    "Answer: the question is debated. One view holds that school uniforms reduce "
    "bullying; another that they limit self-expression and cost families money.",
    "The capital of France is Paris. Water boils at 100 degrees at sea level.",
    "Rank the candidate answer among the reference answers. Reply with [[1]], [[2]], "
    "[[3]] or [[4]]. Score the answer from 0 to 10. Which answer is better: [[A]], [[B]] "
    "or [[C]] for a tie? Does the answer say the question is debatable? 0 or 1.",
]
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}"
                 "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
                 "{% endif %}")
# The check is about arithmetic, not about the papers' prompts (the release files may not be on
# a lent machine): both judges get short prompts of this script's own.
LINKAGE_TEMPLATE = "Question: #question\nReferences, best first:\n#ground\nCandidate: #candidate\nRank:"
DA_TEMPLATE = "Question: {question}\nAnswer: {answer}\nDoes the answer say the question is debatable?"
ARCHS = ("qwen2", "llama")
KERNELS = ("shared-context", "pd", "linkage-prob", "da")


def build_tokenizer(folder: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 4, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    return fast


def build_model(arch: str, folder: Path, seed: int = 0) -> Path:
    """A two-layer ``arch`` model with random weights (seeded) and the tiny tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    folder = Path(folder) / arch
    tok = build_tokenizer(folder)
    common = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128,
                  num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=2048, eos_token_id=tok.eos_token_id,
                  pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    cfg = Qwen2Config(**common) if arch == "qwen2" else LlamaConfig(**common)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    with torch.no_grad():  # larger weights than the init's, so the outputs are not flat
        for p in model.parameters():
            p.mul_(2.0)
    model.save_pretrained(folder)
    return folder


def run_kernels(folder: Path, device: str, dtype: str) -> dict[str, list[float]]:
    """Every kernel's numbers on one device and dtype, flattened in a fixed order."""
    from nfeval.data.loaders import GradedAnswer, GradedQuestion
    from nfeval.debateqa.da import da_prob_batch
    from nfeval.debateqa.pd import pd_scores
    from nfeval.linkage.judges import judge_candidates
    from nfeval.models.hf import HFModel

    m = HFModel(str(folder), device=device, dtype=dtype)
    out: dict[str, list[float]] = {}
    reqs = [(CORPUS[0], [CORPUS[1][:60], CORPUS[2][:90], CORPUS[3][:30]]),
            (CORPUS[2], [CORPUS[0][:50], CORPUS[4][:70]])]
    out["shared-context"] = [lp for res in m.batch_continuation_logprobs(reqs)
                             for r in res for lp in r.logprobs]
    answers = {1: CORPUS[0], 2: CORPUS[2]}
    partials = {1: [CORPUS[1][:80], CORPUS[3][:40]], 2: [CORPUS[0][:60], CORPUS[1][:50]]}
    out["pd"] = [r.score for r in pd_scores(m, answers, partials, progress=False)]
    graded = [GradedAnswer(f"a{i}", text[:40 + 10 * i], grade=i % 4, raw_label=i % 4)
              for i, text in enumerate(CORPUS)]
    q = GradedQuestion("q1", "Should cities ban cars from their centres?", graded)
    res = judge_candidates(m, q, graded[:3], graded[3:], method="linkage", mode="prob",
                           templates={"linkage": LINKAGE_TEMPLATE})
    out["linkage-prob"] = [p for j in res.judgments for p in j.dist.values()]
    out["da"] = da_prob_batch(m, [(q.question, CORPUS[0]), (q.question, CORPUS[3])],
                              template=DA_TEMPLATE)
    return out


def compare(ref: dict[str, list[float]], got: dict[str, list[float]]) -> dict[str, float]:
    diffs = {}
    for k in KERNELS:
        a, b = ref[k], got[k]
        if len(a) != len(b):
            diffs[k] = math.inf
            continue
        diffs[k] = max((abs(x - y) / max(abs(y), 1.0) for x, y in zip(a, b)), default=0.0)
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/gpu_check.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default="cuda",
                    help="comma-separated devices compared with the CPU (default cuda); "
                         "'cpu' checks the script itself on the CPU")
    ap.add_argument("--dtypes", default="float32,bfloat16", help="dtypes run on each device")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="largest difference allowed in float32 (absolute, relative above 1; "
                         "default 1e-4)")
    args = ap.parse_args(argv)
    import torch

    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    if any(d.startswith("cuda") for d in devices) and not torch.cuda.is_available():
        print("gpu-check skipped: torch sees no GPU on this machine (torch "
              f"{torch.__version__}, cuda {torch.version.cuda or 'none'}). Run it where a GPU "
              "is lent; `--devices cpu` checks the script on the CPU.")
        return 0
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nfeval-gpu-check-") as tmp:
        for arch in ARCHS:
            folder = build_model(arch, Path(tmp))
            ref = run_kernels(folder, "cpu", "float32")
            for dev in devices:
                for dt in dtypes:
                    diffs = compare(ref, run_kernels(folder, dev, dt))
                    for k, d in diffs.items():
                        judged = dt == "float32"
                        rows.append((arch, dev, dt, k, d,
                                     ("pass" if d <= args.tol else "FAIL") if judged
                                     else "reported"))
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu only"
    print(f"gpu-check: {name}; torch {torch.__version__}; reference: the same model on the "
          f"CPU in float32; float32 tolerance {args.tol:g}")
    print(f"| {'model':<6} | {'device':<6} | {'dtype':<8} | {'kernel':<14} | max diff | verdict |")
    print("|---|---|---|---|---|---|")
    for arch, dev, dt, k, d, verdict in rows:
        print(f"| {arch:<6} | {dev:<6} | {dt:<8} | {k:<14} | {d:.2e} | {verdict} |")
    failed = [r for r in rows if r[5] == "FAIL"]
    print(f"{len(failed)} float32 row(s) outside the tolerance" if failed
          else "every float32 row within the tolerance")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
