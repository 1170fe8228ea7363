"""The chat backend and the shared HTTP transport, offline: replies of a hosted API.

Every request goes to an ``httpx.MockTransport`` that answers with the
replies in ``fixtures/chat/openai_replies.json`` (OpenAI's chat completion
object with and without log-probs, a 429 with ``Retry-After``, a 500, a 400,
vLLM's reply to an assistant prefill). Waits between retries are recorded,
not slept. The same backend against a real llama.cpp server is tested in
``test_openai_backend.py``.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import threading
import time
from pathlib import Path

import pytest
from testkit import needs

httpx = needs("httpx")  # before the modules below: nfeval.models.transport imports it

from nfeval import NfevalError  # noqa: E402
from nfeval.models.base import Message
from nfeval.models.chat_backend import (
    ChatModel,
    ChatRequest,
    first_token_top,
    is_chat_prompt,
    parse_chat_prompt,
    serialize_messages,
)
from nfeval.models.transport import (HTTPOptions, Transport, bounded_map, http_options,
                                     parse_retry_after)

FIX = json.loads((Path(__file__).parent / "fixtures" / "chat" / "openai_replies.json")
                 .read_text(encoding="utf-8"))
URL = "https://api.example.test/v1"
SECRET = "sk-test-7Qx3NfevalSecretKeyDoNotLeak9Zp"


def reply(name: str) -> httpx.Response:
    r = FIX[name]
    return httpx.Response(r["status"], headers=r["headers"], content=json.dumps(r["body"]).encode())


class Server:
    """A scripted server: ``script`` is a list of reply names (then ``default``) or a function."""

    def __init__(self, script=(), default="chat_plain", fn=None):
        self.script = list(script)
        self.default = default
        self.fn = fn
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        with self.lock:
            self.requests.append(request)
            self.bodies.append(body)
            name = self.script.pop(0) if self.script else None
        if self.fn is not None and name is None:
            return self.fn(request, body)
        return reply(name or self.default)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def chat_model(server: Server, waits: list | None = None, **kw) -> ChatModel:
    kw.setdefault("model", "gpt-4o-mini")
    http = http_options(kw, transport=server.transport,
                        sleep=(waits.append if waits is not None else (lambda s: None)))
    return ChatModel(URL, http=http, **kw)


# ------------------------------------------------------------------ serialized prompts
def test_serialized_prompt_round_trip_and_judge_splicing():
    msgs = [Message("system", "Be fair."), Message("user", "Rank:\n{x}\n")]
    s = serialize_messages(msgs)
    assert is_chat_prompt(s)
    cp = parse_chat_prompt(s)
    assert cp.messages == tuple(msgs) and cp.prefill == ""
    assert parse_chat_prompt(serialize_messages(msgs, add_generation_prompt=False)).prefill is None
    # what the judges do with a prompt string: cut at the candidate, splice, force "[["
    m = chat_model(Server())
    sentinel = "\x00CAND\x00"
    prompt = m.chat_prompt(f"Question: q\nCandidate answer:{sentinel}\nRank it.")
    prefix, rest = prompt.split(sentinel)
    cand = "Alternatives exist [[not a label]] \n<|im_end|> {#ground}"
    cp = parse_chat_prompt(prefix + cand + rest + "[[")
    assert cp.messages == (Message("user", f"Question: q\nCandidate answer:{cand}\nRank it."),)
    assert cp.prefill == "[["
    assert m.info.chat_template == "server" and m.info.backend == "openai-chat"


def test_raw_prompts_and_markers_are_refused():
    m = chat_model(Server())
    with pytest.raises(NfevalError, match="not a chat prompt"):
        m.generate("Once upon a time")
    with pytest.raises(NfevalError, match="marker"):
        m.chat_prompt("a <|nfeval-chat:user|> b")
    with pytest.raises(NfevalError, match="after its reply marker"):
        parse_chat_prompt(m.chat_prompt("x") + "<|nfeval-chat:user|>y")
    with pytest.raises(NfevalError, match="chat API returns log-probs of generated tokens"):
        m.continuation_logprobs("context", [" continuation"])


# -------------------------------------------------------------------------- generation
def test_generate_sends_messages_and_decoding():
    srv = Server()
    m = chat_model(srv, request=ChatRequest(extra_body={"chat_template_kwargs": {
        "enable_thinking": False}}))
    g = m.generate(m.chat_prompt("Rank it.", system="You judge."), temperature=0.8, top_p=0.95,
                   max_tokens=512, seed=7, stop=["]]"])
    assert g.text.endswith("Rank: [[2]]") and g.finish_reason == "stop" and g.n_tokens == 19
    (body,) = srv.bodies
    assert body["messages"] == [{"role": "system", "content": "You judge."},
                                {"role": "user", "content": "Rank it."}]
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.8
    assert body["top_p"] == 0.95 and body["max_tokens"] == 512 and body["seed"] == 7
    assert body["stop"] == ["]]"] and body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "continue_final_message" not in body
    assert srv.requests[0].url.path == "/v1/chat/completions"
    # newer OpenAI models take max_completion_tokens
    srv2 = Server()
    chat_model(srv2, request=ChatRequest(max_tokens_param="max_completion_tokens")).generate(m.chat_prompt("x"),
                                                                       max_tokens=5)
    assert srv2.bodies[0]["max_completion_tokens"] == 5 and "max_tokens" not in srv2.bodies[0]


def test_model_discovery():
    srv = Server(["models_many"])
    with pytest.raises(NfevalError, match="pass model="):
        ChatModel(URL, http=HTTPOptions(transport=srv.transport))
    one = Server(fn=lambda r, b: httpx.Response(200, json={"data": [{"id": "served"}]}))
    assert ChatModel(URL, http=HTTPOptions(transport=one.transport)).model == "served"


# ----------------------------------------------------------------------- retry policy
def test_429_retry_after_then_200():
    srv, waits = Server(["rate_limited"]), []
    m = chat_model(srv, waits, backoff=0.5)
    g = m.generate(m.chat_prompt("x"))
    assert g.text and len(srv.requests) == 2
    assert waits == [2.0]  # Retry-After: 2 beats the 0.25-0.5 s backoff
    assert m.retries == {"HTTP 429": 1}


def test_500_then_200_backoff_is_capped_jittered_and_seeded():
    def run(seed):
        srv, waits = Server(["server_error", "server_error", "server_error"]), []
        m = chat_model(srv, waits, backoff=1.0, max_backoff=3.0, seed=seed, max_retries=5)
        assert m.generate(m.chat_prompt("x")).text
        assert len(srv.requests) == 4
        return waits

    w = run(0)
    assert len(w) == 3
    for attempt, x in enumerate(w, start=1):
        cap = min(3.0, 1.0 * 2 ** (attempt - 1))
        assert cap / 2 <= x <= cap
    assert run(0) == w  # same seed, same waits
    assert run(1) != w


def test_retries_exhausted_and_non_retryable():
    srv, waits = Server(["server_error"] * 10), []
    m = chat_model(srv, waits, max_retries=2, backoff=0.01)
    with pytest.raises(NfevalError, match="kept failing after 3 attempts.*HTTP 500"):
        m.generate(m.chat_prompt("x"))
    assert len(waits) == 2
    srv, waits = Server(["bad_request"]), []
    m = chat_model(srv, waits)
    with pytest.raises(NfevalError, match="HTTP 400.*top_logprobs"):
        m.generate(m.chat_prompt("x"))
    assert waits == [] and len(srv.requests) == 1


def test_long_retry_after_fails_at_once():
    def fn(r, b):
        return httpx.Response(429, headers={"retry-after": "3600"}, json={"error": {}})

    srv, waits = Server(fn=fn), []
    m = chat_model(srv, waits, max_retry_after=60)
    with pytest.raises(NfevalError, match="asks to wait 3600 s"):
        m.generate(m.chat_prompt("x"))
    assert waits == [] and len(srv.requests) == 1


def test_connection_errors_are_retried():
    calls = []

    def fn(request, body):
        calls.append(1)
        if len(calls) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        if len(calls) == 2:
            raise httpx.ReadTimeout("timed out", request=request)
        return reply("chat_plain")

    waits = []
    m = chat_model(Server(fn=fn), waits)
    assert m.generate(m.chat_prompt("x")).text
    assert len(waits) == 2 and m.retries == {"ConnectError": 1, "ReadTimeout": 1}


def test_parse_retry_after():
    now = 1_700_000_000.0
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == \
        pytest.approx(30, abs=1)
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


# ---------------------------------------------------------------------------- API key
def test_api_key_env_name_and_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-other")
    seen = []

    def fn(request, body):
        seen.append(request.headers.get("authorization"))
        return reply("chat_plain")

    m = ChatModel(URL, model="m", http=HTTPOptions(
        api_key_env="MY_JUDGE_KEY", transport=httpx.MockTransport(lambda r: fn(r, None))))
    m.generate(m.chat_prompt("x"))
    m2 = ChatModel(URL, model="m",
                   http=HTTPOptions(transport=httpx.MockTransport(lambda r: fn(r, None))))
    m2.generate(m2.chat_prompt("x"))
    assert seen == ["Bearer sk-other", None]  # no key: no header at all


def test_credentials_in_url_are_not_shown():
    m = ChatModel("https://user:pa55word@api.example.test/v1", model="m",
                  http=HTTPOptions(transport=Server().transport))
    assert "pa55word" not in m.info.source and "pa55word" not in repr(m)


# ---------------------------------------------------------------------- concurrency
def test_bounded_map_order_bound_and_errors():
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def work(x):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.02 * (5 - x % 5))
        with lock:
            state["now"] -= 1
        return x * x

    seen = []
    assert bounded_map(work, range(10), 3, on_result=lambda i, r: seen.append(i)) == \
        [x * x for x in range(10)]
    assert state["max"] <= 3 and sorted(seen) == list(range(10))

    def boom(x):
        if x == 2:
            raise ValueError("item 2")
        return x

    got = []
    with pytest.raises(ValueError, match="item 2"):
        bounded_map(boom, range(20), 2, on_result=lambda i, r: got.append(i))
    assert 2 not in got and len(got) < 20  # stopped starting new items


def test_generate_many_order_and_bound():
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def fn(request, body):
        k = int(body["messages"][-1]["content"][1:])
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.01 * (k % 4))
        with lock:
            state["now"] -= 1
        out = FIX["chat_plain"]["body"] | {}
        out = json.loads(json.dumps(out))
        out["choices"][0]["message"]["content"] = f"reply {k}"
        return httpx.Response(200, json=out)

    m = chat_model(Server(fn=fn), concurrency=3)
    prompts = [m.chat_prompt(f"q{k}") for k in range(12)]
    got = m.generate_many(prompts, seed=list(range(12)))
    assert [g.text for g in got] == [f"reply {k}" for k in range(12)]
    assert 2 <= state["max"] <= 3


def test_generate_many_with_runcache(tmp_path):
    from nfeval.runcache import RunCache

    srv = Server()
    m = chat_model(srv, concurrency=2)
    prompts = [m.chat_prompt(f"q{k}") for k in range(4)]
    cache = RunCache("judge", {"model": m.info.as_dict()}, directory=tmp_path)
    m.generate_many(prompts[:2], cache=cache, temperature=0.8, seed=3)
    assert len(srv.requests) == 2
    cache2 = RunCache("judge", {"model": m.info.as_dict()}, directory=tmp_path)  # a rerun
    got = m.generate_many(prompts, cache=cache2, temperature=0.8, seed=3)
    assert len(srv.requests) == 4 and all(g.text for g in got)
    assert got[0].extra == {"cached": True}
    m.generate_many(prompts[:1], cache=cache2, temperature=0.8, seed=4)  # other seed: new item
    assert len(srv.requests) == 5


def test_several_servers_share_the_load():
    hosts = []

    def fn(request, body):
        hosts.append(request.url.host)
        time.sleep(0.01)
        return reply("chat_plain")

    m = ChatModel(["http://a.test:8000", "http://b.test:8001/v1"], model="m", concurrency=4,
                  http=HTTPOptions(transport=httpx.MockTransport(lambda r: fn(r, None))))
    m.generate_many([m.chat_prompt(f"q{k}") for k in range(8)])
    assert set(hosts) == {"a.test", "b.test"} and abs(hosts.count("a.test") - 4) <= 2
    assert m.info.source == "http://a.test:8000/v1,http://b.test:8001/v1"


# --------------------------------------------------------------------------- prob mode
def test_first_token_top_reads_text_bytes_and_skips_placeholder():
    top = first_token_top(FIX["chat_logprobs"]["body"])
    assert top["1"] == pytest.approx(-0.31326166) and top["0"] == pytest.approx(-1.3132617)
    assert top["\u2019"] == -7.25  # decoded from its bytes
    assert "Yes" not in top  # -9999.0 means "outside the top 20", not a value
    assert first_token_top(FIX["chat_plain"]["body"]) is None


def test_label_logprobs_single_token_labels():
    srv = Server(default="chat_logprobs")
    m = chat_model(srv, top_logprobs=20)
    p = m.chat_prompt("Is there a dispute? Reply 1 or 0.")
    lp = m.label_logprobs(p, ["0", "1"])
    assert lp == {"0": pytest.approx(-1.3132617), "1": pytest.approx(-0.31326166)}
    body = srv.bodies[0]
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    assert body["max_tokens"] == 1 and body["temperature"] == 0.0
    assert m.label_distribution(p, ["0", "1"])["1"] == pytest.approx(1 / (1 + math.exp(-1)))
    # outside the top-k: an error by default, -inf when asked, an error if no label is seen
    with pytest.raises(NfevalError, match="not among the top 20"):
        m.label_logprobs(p, ["1", "Yes"])
    m_inf = chat_model(srv, missing_label="-inf")
    assert m_inf.label_logprobs(p, ["1", "Yes"])["Yes"] == -math.inf
    assert m_inf.label_distribution(p, ["1", "Yes"]) == {"1": 1.0, "Yes": 0.0}
    with pytest.raises(NfevalError, match="not among the top"):
        m_inf.label_logprobs(p, ["Yes", "No"])
    # a multi-token label needs the reply continued: not on a server without prefill
    with pytest.raises(NfevalError, match="needs assistant prefill"):
        m.label_logprobs(p, ["Then"])
    # a server that ignores logprobs
    with pytest.raises(NfevalError, match="no log-probabilities"):
        chat_model(Server()).label_logprobs(p, ["0", "1"])


def test_da_prob_mode_through_the_chat_backend():
    from nfeval.debateqa.da import da_prob_batch, da_score

    srv = Server(default="chat_logprobs")
    m = chat_model(srv, concurrency=2)
    tpl = "Is the answer aware of a dispute?\nQuestion: {question}\nAnswer: {answer}\nReply 1 or 0."
    r = da_score(m, "Should zoos exist?", "It is debated.", mode="prob", template=tpl)
    assert r.p_one == pytest.approx(1 / (1 + math.exp(-1)))
    assert srv.bodies[0]["messages"][0]["content"].startswith("Is the answer aware")
    p1s = da_prob_batch(m, [("Q1?", "A1."), ("Q2?", "A2."), ("Q3?", "A3.")], template=tpl)
    assert p1s == pytest.approx([1 / (1 + math.exp(-1))] * 3)
    sent = sorted(b["messages"][0]["content"].split("Answer: ")[1][:3] for b in srv.bodies[1:])
    assert sent == ["A1.", "A2.", "A3."]


TEMPLATES = {"linkage": "Rank it.\nQuestion:{#question}\nReference answer list:{#ground}\n"
                        "Candidate answer:{#candidate}"}


def _linkage_inputs():
    from nfeval.data.loaders import GradedAnswer

    refs = [GradedAnswer("r1", "Animal research saves lives.", 3, 4),
            GradedAnswer("r2", "Voting should be mandatory.", 1, 2)]
    cands = [GradedAnswer("c1", "Alternatives exist.", 2, 3),
             GradedAnswer("c2", "Cell cultures and computer models.", 0, 1)]
    return "Is animal research cruel?", refs, cands


def test_linkage_sample_mode_works_and_prob_mode_needs_prefill():
    from nfeval.linkage import judges as J

    q, refs, cands = _linkage_inputs()
    srv = Server()
    m = chat_model(srv)
    res = J.judge_candidates(m, q, refs, cands, method="linkage", mode="sample",
                             templates=TEMPLATES)
    assert res.scores == [-2.0, -2.0]  # "... Rank: [[2]]"
    body = srv.bodies[0]
    assert body["temperature"] == 0.8 and body["top_p"] == 0.95 and body["stop"] == ["]]"]
    assert [x["role"] for x in body["messages"]] == ["user"]
    assert "Candidate answer:{Alternatives exist.}" in body["messages"][0]["content"]
    with pytest.raises(NfevalError, match="pre-fills the start of the assistant's reply"):
        J.judge_candidates(m, q, refs, cands, method="linkage", mode="prob", templates=TEMPLATES)


def test_linkage_prob_mode_with_vllm_prefill():
    from nfeval.linkage import judges as J

    def fn(request, body):
        last = body["messages"][-1]
        assert last["role"] == "assistant"
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        return reply("vllm_prefill_step1" if last["content"] == "[[" else "vllm_prefill_step2")

    q, refs, cands = _linkage_inputs()
    srv = Server(fn=fn)
    m = chat_model(srv, model="Qwen/Qwen2.5-7B-Instruct",
                   assistant_prefill="continue_final_message")
    res = J.judge_candidates(m, q, refs, cands, method="linkage", mode="prob", templates=TEMPLATES)
    lp = {1: -1.2 - 0.01, 2: -0.4 - 0.01, 3: -2.9 - 0.01}
    z = sum(math.exp(v) for v in lp.values())
    expected = sum(k * math.exp(v) / z for k, v in lp.items())
    assert res.scores == pytest.approx([-expected, -expected])
    assert res.judgments[0].dist["2"] == pytest.approx(math.exp(lp[2]) / z)
    # per candidate: the first token once, then "]]" after each of the 3 label digits
    assert len(srv.bodies) == 2 * 4
    assert sorted(b["messages"][-1]["content"] for b in srv.bodies) == \
        ["[[", "[[", "[[1", "[[1", "[[2", "[[2", "[[3", "[[3"]
    # a label whose first token is outside the top-k is not scored
    with pytest.raises(NfevalError, match="not among the top"):
        m.label_logprobs(m.chat_prompt("x") + "[[", ["4]]"])


def test_trailing_assistant_prefill():
    srv = Server(default="vllm_prefill_step2")
    m = chat_model(srv, assistant_prefill="trailing-assistant")
    g = m.generate(m.chat_prompt("Rank it.") + "Rank: [[2")
    assert g.text
    body = srv.bodies[0]
    assert body["messages"][-1] == {"role": "assistant", "content": "Rank: [[2"}
    assert "continue_final_message" not in body


# --------------------------------------------------------- completions backend transport
def test_completions_backend_uses_the_transport(monkeypatch):
    from nfeval.models.openai_backend import OpenAIModel

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    calls = []

    def handler(request):
        calls.append(request.url.path)
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": "toy"}]})
        if len(calls) == 2:
            return reply("server_error")
        return httpx.Response(200, json={"choices": [{"text": " Rome.", "finish_reason": "stop"}],
                                         "usage": {"completion_tokens": 2}})

    m = OpenAIModel(URL, chat_template="none", http=HTTPOptions(
        max_retries=3, backoff=0.001, transport=httpx.MockTransport(handler)))
    g = m.generate("The capital of Italy is", max_tokens=3)
    assert g.text == " Rome." and calls == ["/v1/models", "/v1/completions", "/v1/completions"]
    assert SECRET not in repr(m) and SECRET not in json.dumps(m.info.as_dict())
    assert not hasattr(m, "api_key")
    with pytest.raises(NfevalError, match="one server"):
        OpenAIModel("http://a:1/v1,http://b:2/v1", model="x")


def test_transport_repr_and_scrub():
    t = Transport(URL, HTTPOptions(api_key=SECRET, transport=Server().transport))
    assert SECRET not in repr(t) and "key=set" in repr(t)
    assert t.scrub(f"bad key {SECRET}!") == "bad key ***!"
