"""The chat backend's calls kept in the reproduction's item store (nfeval_repro.store):
resumed from it, and no API key written to it. The backend's own tests, with the scripted
server these reuse, are the library's tests/test_chat_backend.py."""

from __future__ import annotations

import json
import logging

import pytest
from test_chat_backend import FIX, SECRET, URL, Server, chat_model, httpx, reply

from nfeval import NfevalError


def test_api_key_from_env_sent_and_never_written(monkeypatch, tmp_path, caplog):
    from nfeval.models import load_model
    from nfeval_repro.store import close_store, stored, use_store

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    def fn(request, body):
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        if body and body["messages"][-1]["content"] == "fail":
            # a server that echoes the key in its error text
            return httpx.Response(401, json={"error": {"message": f"Incorrect API key {SECRET}"}})
        return reply("chat_plain")

    srv = Server(fn=fn)
    caplog.set_level(logging.DEBUG)
    store = use_store("chat_key_test", tmp_path)
    try:
        m = stored(load_model("gpt-4o-mini", backend="openai-chat", base_url=URL,
                              transport=srv.transport))
        assert type(m).__name__ == "StoredModel"
        m.generate(m.chat_prompt("hello"), max_tokens=5)
        m.generate_many([m.chat_prompt(f"q{i}") for i in range(3)], concurrency=2)
        with pytest.raises(NfevalError) as ei:
            m.generate(m.chat_prompt("fail"))
        assert SECRET not in str(ei.value) and "***" in str(ei.value)
        written = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert written  # the store wrote the items ...
        for p in written:  # ... and nothing holds the key
            assert SECRET not in p.read_text(encoding="utf-8", errors="replace")
        text = " ".join([repr(m), repr(m.inner), repr(m.inner._http), json.dumps(m.info.as_dict()),
                         store.summary(), caplog.text])
        assert SECRET not in text
        assert not any(SECRET in repr(v) for v in vars(m.inner).values())
    finally:
        close_store()
    assert len(srv.requests) == 5


def test_generate_many_resumes_from_the_item_store(tmp_path):
    from nfeval_repro.store import close_store, stored, use_store

    fail = {"on": True}

    def fn(request, body):
        content = body["messages"][-1]["content"]
        if fail["on"] and content == "q5":
            return reply("bad_request")
        out = json.loads(json.dumps(FIX["chat_plain"]["body"]))
        out["choices"][0]["message"]["content"] = "reply to " + content
        return httpx.Response(200, json=out)

    srv = Server(fn=fn)
    use_store("chat_resume_test", tmp_path)
    try:
        m = stored(chat_model(srv, concurrency=3))
        prompts = [m.chat_prompt(f"q{k}") for k in range(10)]
        with pytest.raises(NfevalError, match="HTTP 400"):
            m.generate_many(prompts, max_tokens=9)  # forwarded to the chat model
        ok_first = sum(1 for b in srv.bodies if b["messages"][-1]["content"] != "q5")
        files = list(tmp_path.rglob("*.gen.jsonl"))
        assert len(files) == 1
        assert len(files[0].read_text().splitlines()) == ok_first  # every finished item kept
        assert 0 < ok_first < 10
        fail["on"] = False
        n_before = len(srv.bodies)
        got = m.generate_many(prompts, max_tokens=9)
        assert [g.text for g in got] == [f"reply to q{k}" for k in range(10)]
        assert len(srv.bodies) - n_before == 10 - ok_first  # only the missing ones
        # the plain per-item path reads the same store entries
        assert m.generate(prompts[0], max_tokens=9).extra.get("stored") is True
        assert len(srv.bodies) - n_before == 10 - ok_first
    finally:
        close_store()
