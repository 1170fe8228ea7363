"""nfeval.data: registry, resolution (explicit > mirror > cache > download), loaders.

Fixtures under tests/fixtures/data/ are tiny files in each release format,
laid out like the mirror folder. Tests that need the real release copies are
marked ``mirror`` and find them only through ``$NFEVAL_MIRROR``. Downloads run
against a real HTTP server on 127.0.0.1; nothing touches the real cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import http.server
import os
import shutil
import socket
import statistics
import threading
import warnings
from pathlib import Path

import pytest

from nfeval import NfevalError, hashing
from nfeval.data import (
    ChecksumWarning,
    extract_python_string,
    fetch,
    load_answers,
    load_debateqa,
    load_linkage,
    load_prompt,
    load_webglm,
    registry,
    resolve,
    status,
    verify_all,
)

FIX = Path(__file__).parent / "fixtures" / "data"
REAL_MIRROR = os.environ.get("NFEVAL_MIRROR")
needs_mirror = pytest.mark.skipif(
    not (REAL_MIRROR and Path(REAL_MIRROR).is_dir()),
    reason="NFEVAL_MIRROR is not set to the offline release copies")


def sha(p: Path | bytes) -> str:
    data = p if isinstance(p, bytes) else p.read_bytes()
    return hashlib.sha256(data).hexdigest()


# Which fixture the fake HTTP server serves for each release path.
RELEASE_FIXTURE = {"scripts/eval_DA.py": FIX / "release" / "eval_DA.py"}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Every test: own cache, no mirror, downloads allowed, no base URL, fresh hashes."""
    monkeypatch.setenv("NFEVAL_CACHE", str(tmp_path / "cache"))
    for var in ("NFEVAL_MIRROR", "NFEVAL_OFFLINE", "NFEVAL_BASE_URL", "NFEVAL_LFS_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    fetch.clear_hash_cache()
    yield
    fetch.clear_hash_cache()


@pytest.fixture
def fake_registry(monkeypatch):
    """Registry entries whose sums are those of the fixtures (for entries with a fixture)."""
    for name, entry in list(registry.REGISTRY.items()):
        f = FIX / entry.relpath
        if f.is_file():
            new = dataclasses.replace(
                entry, sha256=sha(f) if entry.sha256 is not None else None)
            monkeypatch.setitem(registry.REGISTRY, name, new)
    return registry.REGISTRY


@pytest.fixture
def fixture_mirror(monkeypatch, fake_registry):
    monkeypatch.setenv("NFEVAL_MIRROR", str(FIX))
    return FIX


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@contextlib.contextmanager
def serving(handler):
    """A real HTTP server on 127.0.0.1 with ``handler``; yields its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving tmp_path/www; yields (base URL, root)."""
    root = tmp_path / "www"
    root.mkdir()
    with serving(functools.partial(_Quiet, directory=str(root))) as base:
        yield base, root


def publish(root: Path, entry: registry.ReleaseFile, data: bytes | None = None,
            media: bool = False) -> Path:
    """Put a file where the server serves ``entry`` (its fixture unless ``data``)."""
    if data is None:
        src = RELEASE_FIXTURE.get(entry.path, FIX / entry.relpath)
        data = src.read_bytes()
    dest = root / ("media" if media else "") / entry.repo / entry.commit / entry.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


def cache_files(tmp_path: Path) -> list[Path]:
    c = tmp_path / "cache"
    return sorted(p for p in c.rglob("*") if p.is_file()) if c.exists() else []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- registry

def test_registry_entries_are_pinned_and_consistent():
    regs = registry.REGISTRY
    assert {"antique", "trec-dl-nf", "webglm", "linkage/LINKAGE", "linkage/no_ref_point_score",
            "linkage/with_ref_point_score", "linkage/pairwise_comparison",
            "linkage/create_multi_step_answer", "debateqa/test", "debateqa/dev",
            "debateqa/answers_demo", "debateqa/dispute_awareness_fewshot"} == set(regs)
    assert len({e.relpath for e in regs.values()}) == len(regs)
    for e in regs.values():
        assert e.url == f"https://raw.githubusercontent.com/{e.repo}/{e.commit}/{e.path}"
        assert len(e.commit) == 40
        assert e.sha256 is None or len(e.sha256) == 64
    assert regs["antique"].url.endswith(
        "LINKAGE-Listwise-NFQA-Evaluation/097fdc5f0d0a589570f3737c098e063a0eeae5bf/dataset/ANTIQUE.json")
    assert regs["debateqa/answers_demo"].path == "scripts/input_file_demo.jsonl"
    assert regs["debateqa/dispute_awareness_fewshot"].path == "scripts/eval_DA.py"
    assert regs["debateqa/dispute_awareness_fewshot"].sha256.startswith("8c5d60ca")
    assert regs["debateqa/test"].sha256 is None and regs["debateqa/dev"].sha256 is None
    with pytest.raises(NfevalError, match="unknown release file 'nope'.*antique"):
        registry.get("nope")


def test_base_url_env_overrides_download_host(monkeypatch):
    e = registry.get("webglm")
    monkeypatch.setenv("NFEVAL_BASE_URL", "http://h:1/raw/")
    assert e.url_for() == f"http://h:1/raw/{e.repo}/{e.commit}/dataset/WEBGLM_50.json"
    assert e.url.startswith("https://raw.githubusercontent.com/")


# --------------------------------------------------------------------------- loaders (fixtures)

def test_antique_labels_1_to_4_become_grades_0_to_3(fixture_mirror):
    qs = load_linkage("antique")
    assert [q.qid for q in qs] == ["0", "1"]
    q = qs[0]
    assert q.question == "how do i focus?"
    assert q.grades == [3, 2, 1, 0, 3]
    assert [a.raw_label for a in q.answers] == [4, 3, 2, 1, 4]
    assert q.answers[0].doc_id == "100_0" and q.answers[0].text.startswith("Remove")
    assert q.grade_counts() == {3: 2, 2: 1, 1: 1, 0: 1}
    by = q.by_grade()
    assert list(by) == [3, 2, 1, 0] and [a.doc_id for a in by[3]] == ["100_0", "100_4"]
    assert qs[1].grade_counts() == {3: 1, 2: 0, 1: 0, 0: 1}


def test_trec_labels_kept_and_both_id_keys_accepted(fixture_mirror):
    (q,) = load_linkage("trec-dl-nf")
    assert q.grades == [3, 2, 1, 0]
    assert [a.doc_id for a in q.answers] == ["1901879", "4511144", "5172684", "42"]


def test_webglm_grades_models_and_references(fixture_mirror):
    qs = load_webglm()
    assert len(qs) == 2 and all(len(q.answers) == 3 for q in qs)
    q = qs[0]
    assert q.grades == [3, 1, 2] and [a.raw_label for a in q.answers] == [3, 1, 2]
    assert [a.model for a in q.answers] == ["mistral", "gpt", "llama"]
    assert [a.doc_id for a in q.answers] == ["0", "1", "2"]
    assert list(q.references) == [0, 1, 2, 3]
    assert q.best_reference().startswith("Rinse the rice")
    assert list(qs[1].references) == [0, 1, 2, 3, 4]
    assert qs[1].best_reference() == "Draw on paper, cover with tape, cut."


def test_unknown_linkage_name():
    with pytest.raises(NfevalError, match="unknown LINKAGE dataset 'webglm'"):
        load_linkage("webglm")  # type: ignore[arg-type]


def test_debateqa_items_and_partial_answer_text(fixture_mirror):
    # debateqa/test has no pinned sum: the mirror copy is taken as is.
    items = load_debateqa("test")
    assert [i.id for i in items] == [1, 2, 5]
    pa = items[0].partial_answers[0]
    assert pa.text == "Monotheism forbids it. Worship is owed to God alone."
    assert items[2].partial_answers == []
    assert load_debateqa(FIX / "debateqa" / "test.jsonl") == items


def test_debateqa_rejects_bad_lines(tmp_path):
    good = (FIX / "debateqa" / "test.jsonl").read_text().splitlines()
    cases = {
        "dup": (good + [good[0]], r"line 4: id 1 already used on line 1"),
        "json": (good[:1] + ['{"id": 9, "question": "x", '], r"line 2: invalid JSON"),
        "pa": (['{"id": 1, "question": "q", "partial_answers": [{"point_of_view": "a"}]}'],
               r"line 1: partial answer 0 needs"),
        "id": (['{"id": "1", "question": "q", "partial_answers": []}'],
               r"id '1' is not an integer"),
    }
    for key, (lines, pattern) in cases.items():
        p = tmp_path / f"{key}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        with pytest.raises(NfevalError, match=pattern) as ei:
            load_debateqa(p)
        assert str(p) in str(ei.value)
    with pytest.raises(NfevalError, match="neither 'test', 'dev' nor an existing file"):
        load_debateqa(tmp_path / "missing.jsonl")


def test_answers_report_problems_and_keep_valid_lines():
    s = load_answers(FIX / "debateqa" / "answers_bad.jsonl")
    assert s.answers == {1: "First answer.", 7: "Last good."}
    assert len(s) == 2 and 7 in s and s[1] == "First answer." and list(s) == [1, 7]
    got = {p.line: p.reason for p in s.problems}
    assert set(got) == {2, 3, 4, 5, 6, 7, 8}
    assert got[2].startswith("invalid JSON")
    assert got[3] == "blank line"
    assert got[4] == "duplicate id 1 (first on line 1, kept)"
    assert got[5] == "empty generation for id 3"
    assert got[6] == "no id"
    assert got[7] == "id '4' is not an integer"
    assert got[8].startswith("expected a JSON object")
    assert not s.ok and "2 answers, 7 line(s) left out" in s.summary()


def test_answers_strict_raises_on_first_problem():
    p = FIX / "debateqa" / "answers_bad.jsonl"
    with pytest.raises(NfevalError, match=r"answers_bad\.jsonl, line 2: invalid JSON"):
        load_answers(p, strict=True)
    ok = load_answers(FIX / "debateqa" / "answers_demo.jsonl", strict=True)
    assert ok.ok and ok.answers[5] == "This is debated."


def test_answers_missing_file(tmp_path):
    with pytest.raises(NfevalError, match="does not exist"):
        load_answers(tmp_path / "nope.jsonl")


def test_malformed_json_names_file_line_and_column(tmp_path):
    p = tmp_path / "ANTIQUE.json"
    p.write_text('{"q": [\n  {"doc_id": "1", "passage": "x", "label": 4},\n  oops\n]}')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChecksumWarning)
        with pytest.raises(NfevalError,
                           match=r"ANTIQUE\.json is not valid JSON: .* line 3, column 3"):
            load_linkage("antique", path=p)


def test_linkage_rejects_labels_out_of_range_and_duplicate_questions(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"q": [{"doc_id": "1", "passage": "x", "label": 0}]}')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ChecksumWarning)
        with pytest.raises(NfevalError, match=r"label 0 is not an integer in 1\.\.4"):
            load_linkage("antique", path=p)
        p.write_text('{"q": [], "q": []}')
        with pytest.raises(NfevalError, match="occurs twice"):
            load_linkage("trec-dl-nf", path=p)


def test_explicit_user_file_with_other_content_warns_not_crashes():
    p = FIX / "linkage" / "ANTIQUE.json"  # not the release file: the real sum differs
    with pytest.warns(ChecksumWarning, match=r"expected 09b89e5a.*got " + sha(p)):
        qs = load_linkage("antique", path=p)
    assert len(qs) == 2
    with pytest.raises(NfevalError, match="not the pinned release file"):
        resolve("antique", p, strict=True)
    with pytest.raises(NfevalError, match="does not exist"):
        resolve("antique", FIX / "nope.json")


def test_prompts_exact_text_and_names(fixture_mirror):
    raw = (FIX / "prompts" / "linkage" / "LINKAGE.txt").read_text()
    assert load_prompt("linkage/LINKAGE") == raw
    assert load_prompt("LINKAGE") == raw
    da = load_prompt("debateqa/dispute_awareness_fewshot")
    assert "{question}" in da and da.endswith("0 or 1.\n\n")
    with pytest.raises(NfevalError, match="unknown prompt 'antique'"):
        load_prompt("antique")


# --------------------------------------------------------------------------- extraction

def test_extract_prompt_template_without_executing():
    src = (FIX / "release" / "eval_DA.py").read_bytes()
    text = extract_python_string(src, "prompt_template", origin="eval_DA.py")
    expected = (FIX / "prompts" / "debateqa" / "dispute_awareness_fewshot.txt").read_text(
        encoding="utf-8")
    assert text == expected
    assert text.format(question="Q?", answer="A.").count("Question: Q?\nAnswer: A.") == 1


def test_extract_errors_and_variants():
    assert extract_python_string('x: str = "a" + "b" f"c"', "x") == "abc"
    with pytest.raises(NfevalError, match="never assigned"):
        extract_python_string("y = 'a'", "x", origin="f.py")
    with pytest.raises(NfevalError, match="something other than a string literal"):
        extract_python_string("x = open('f').read()", "x")
    with pytest.raises(NfevalError, match="2 different strings"):
        extract_python_string("x = 'a'\ndef f():\n    x = 'b'\n", "x")
    with pytest.raises(NfevalError, match=r"not valid Python \(line 1\)"):
        extract_python_string("x = (", "x", origin="f.py")


# --------------------------------------------------------------------------- resolve, download

def test_download_lands_in_cache_with_right_bytes(server, fake_registry, tmp_path, monkeypatch):
    base, root = server
    entry = registry.get("antique")
    publish(root, entry)
    monkeypatch.setenv("NFEVAL_BASE_URL", base)
    p = resolve("antique", progress=True)
    assert p == tmp_path / "cache" / "data" / "linkage" / "ANTIQUE.json"
    assert p.read_bytes() == (FIX / entry.relpath).read_bytes()
    assert cache_files(tmp_path) == [p]  # no temp file left behind
    # Second call: served from the cache (the server no longer has it).
    shutil.rmtree(root / entry.repo)
    assert resolve("antique") == p
    assert len(load_linkage("antique")) == 2


def test_corrupted_download_raises_and_leaves_nothing(server, fake_registry, tmp_path):
    base, root = server
    entry = registry.get("webglm")
    bad = (FIX / entry.relpath).read_bytes().replace(b"Boil it.", b"Fry it.")
    publish(root, entry, bad)
    with pytest.raises(NfevalError) as ei:
        resolve("webglm", base_url=base)
    msg = str(ei.value)
    assert f"expected {entry.sha256}, got {sha(bad)}" in msg
    assert entry.repo in msg and entry.commit in msg and "NFEVAL_MIRROR" in msg
    assert cache_files(tmp_path) == []


def test_http_404_and_connection_refused_are_clear(server, fake_registry, tmp_path):
    base, _ = server
    with pytest.raises(NfevalError, match=r"HTTP 404.*It comes from babyyang525/LINKAGE"):
        resolve("trec-dl-nf", base_url=base)
    port = free_port()
    with pytest.raises(NfevalError,
                       match=r"download of http://127\.0\.0\.1:\d+/.*failed: .*refused"):
        resolve("trec-dl-nf", base_url=f"http://127.0.0.1:{port}", timeout=5)
    assert cache_files(tmp_path) == []


class _CutShort(http.server.BaseHTTPRequestHandler):
    """Sends a valid DebateQA split but promises 100 bytes more than it sends."""

    def do_GET(self):
        body = (FIX / "debateqa" / "test.jsonl").read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body) + 100))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_download_cut_short_fails_and_leaves_nothing(fake_registry, tmp_path):
    # The split has no pinned sum and the part that arrives is well formed, so
    # only the transfer itself can notice that bytes are missing.
    with serving(_CutShort) as base, pytest.raises(NfevalError, match=r"download of .*failed"):
        resolve("debateqa/dev", base_url=base)
    assert cache_files(tmp_path) == []
    assert [p.name for p in (tmp_path / "cache" / "data" / "debateqa").iterdir()] == []


def test_offline_mode_fails_clearly(server, fake_registry, monkeypatch, tmp_path):
    base, root = server
    publish(root, registry.get("antique"))
    monkeypatch.setenv("NFEVAL_OFFLINE", "1")
    with pytest.raises(NfevalError) as ei:
        resolve("antique", base_url=base)
    msg = str(ei.value)
    assert "NFEVAL_OFFLINE=1" in msg and "linkage/ANTIQUE.json" in msg
    assert "097fdc5f0d0a589570f3737c098e063a0eeae5bf" in msg and "dataset/ANTIQUE.json" in msg
    assert cache_files(tmp_path) == []
    with pytest.raises(NfevalError, match=r"download=False"):
        monkeypatch.delenv("NFEVAL_OFFLINE")
        resolve("antique", base_url=base, download=False)


def test_resolution_order_explicit_mirror_cache_download(server, fake_registry, tmp_path,
                                                        monkeypatch):
    base, root = server
    entry = registry.get("antique")
    monkeypatch.setenv("NFEVAL_BASE_URL", base)
    publish(root, entry)
    # download
    cached = resolve("antique")
    assert cached == fetch.cache_path("antique")
    # cache beats download
    shutil.rmtree(root / entry.repo)
    assert resolve("antique") == cached
    # mirror beats cache
    mirror = tmp_path / "mirror"
    (mirror / "linkage").mkdir(parents=True)
    shutil.copy(FIX / entry.relpath, mirror / entry.relpath)
    monkeypatch.setenv("NFEVAL_MIRROR", str(mirror))
    assert resolve("antique") == mirror / entry.relpath
    # explicit beats mirror
    explicit = tmp_path / "mine.json"
    shutil.copy(FIX / entry.relpath, explicit)
    assert resolve("antique", explicit) == explicit
    # a damaged mirror copy is an error, not a silent fall-through to the cache
    (mirror / entry.relpath).write_text('{"q": []}')
    with pytest.raises(NfevalError, match=r"mirror file .*ANTIQUE\.json .* expected "
                                          + entry.sha256 + ", got " + sha(mirror / entry.relpath)):
        resolve("antique")
    # a damaged cache copy too
    monkeypatch.delenv("NFEVAL_MIRROR")
    cached.write_text('{"q": []}')
    with pytest.raises(NfevalError, match=r"cached file .* delete it"):
        resolve("antique")


def test_status_and_verify_all(fixture_mirror, tmp_path, monkeypatch):
    st = {s.name: s for s in status()}
    assert st["antique"].source == "mirror" and st["antique"].verified is True
    assert st["debateqa/test"].source == "mirror" and st["debateqa/test"].verified is None
    assert st["debateqa/dev"].source == "missing" and st["debateqa/dev"].path is None
    assert st["linkage/pairwise_comparison"].source == "missing"
    mine = tmp_path / "mine.json"
    mine.write_text("{}")
    st = {s.name: s for s in status({"antique": mine, "webglm": tmp_path / "nope"})}
    assert st["antique"].source == "explicit" and st["antique"].verified is False
    assert st["webglm"].source == "bad"
    verify_all()
    with pytest.raises(NfevalError, match="debateqa/dev: missing"):
        verify_all(require=True)
    # a damaged cache copy shows up as bad
    monkeypatch.delenv("NFEVAL_MIRROR")
    c = fetch.cache_path("antique")
    c.parent.mkdir(parents=True)
    c.write_text("{}")
    with pytest.raises(NfevalError, match=r"antique: bad \(cache copy: expected"):
        verify_all()


def test_hash_is_memoized_per_file_version(tmp_path, monkeypatch):
    p = tmp_path / "f.txt"
    p.write_text("one")
    two = sha(b"two")
    calls = []
    real = hashlib.sha256
    monkeypatch.setattr(hashing.hashlib, "sha256", lambda *a: calls.append(1) or real(*a))
    h1 = fetch.sha256_file(p)
    assert fetch.sha256_file(p) == h1 and len(calls) == 1
    tmp = tmp_path / "g.txt"
    tmp.write_text("two")
    os.replace(tmp, p)  # a new version: rehashed
    assert fetch.sha256_file(p) == two and len(calls) == 2


def test_dispute_awareness_prompt_downloaded_by_extraction(server, fake_registry, tmp_path):
    base, root = server
    entry = registry.get("debateqa/dispute_awareness_fewshot")
    publish(root, entry)  # serves the fixture .py at scripts/eval_DA.py
    p = resolve(entry.name, base_url=base)
    assert p == tmp_path / "cache" / "data" / entry.relpath
    assert p.read_bytes() == (FIX / entry.relpath).read_bytes()
    assert cache_files(tmp_path) == [p]
    # a changed script at the pinned path: the extracted text no longer matches
    p.unlink()
    src = (FIX / "release" / "eval_DA.py").read_text().replace("one digit", "1 digit")
    publish(root, entry, src.encode())
    with pytest.raises(NfevalError, match=r"'prompt_template' string extracted .* expected "
                                          + entry.sha256):
        resolve(entry.name, base_url=base)
    assert cache_files(tmp_path) == []


def test_split_without_sum_checks_format_records_and_prints_sum(server, fake_registry, tmp_path,
                                                               capsys):
    base, root = server
    entry = registry.get("debateqa/test")
    data = (FIX / entry.relpath).read_bytes()
    publish(root, entry)
    with pytest.warns(UserWarning, match="has 3 records; the release documents 1000"):
        p = resolve("debateqa/test", base_url=base)
    assert p.read_bytes() == data
    assert sha(data) in capsys.readouterr().err
    side = p.with_name("test.jsonl.sha256")
    assert side.read_text().split()[0] == sha(data)
    assert [i.id for i in load_debateqa("test")] == [1, 2, 5]
    # the recorded sum protects the cached copy from later changes
    p.write_bytes(data.replace(b"homework", b"housework"))
    fetch.clear_hash_cache()
    with pytest.raises(NfevalError, match=r"cached file .* expected " + sha(data)):
        load_debateqa("test")


def test_split_without_sum_rejects_wrong_format(server, fake_registry, tmp_path):
    base, root = server
    publish(root, registry.get("debateqa/dev"), b"<html>rate limited</html>\n")
    with pytest.raises(NfevalError, match=r"line 1: invalid JSON.*not a DebateQA split"):
        resolve("debateqa/dev", base_url=base)
    assert cache_files(tmp_path) == []


def test_split_in_git_lfs_is_verified_against_the_pointer(server, fake_registry, tmp_path):
    base, root = server
    entry = registry.get("debateqa/test")
    data = (FIX / entry.relpath).read_bytes()
    pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha(data)}\n"
               f"size {len(data)}\n").encode()
    publish(root, entry, pointer)
    publish(root, entry, data, media=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no format-only fallback here
        p = resolve("debateqa/test", base_url=base)
    assert p.read_bytes() == data
    assert p.with_name("test.jsonl.sha256").read_text().split()[0] == sha(data)
    # LFS content that does not match the pointer: error, nothing kept
    for f in cache_files(tmp_path):
        f.unlink()
    publish(root, entry, data + b"\n", media=True)
    with pytest.raises(NfevalError, match="does not match its Git LFS pointer"):
        resolve("debateqa/test", base_url=base)
    assert cache_files(tmp_path) == []


# --------------------------------------------------------------------------- real release copies

@pytest.fixture
def real_mirror(monkeypatch):
    monkeypatch.setenv("NFEVAL_MIRROR", REAL_MIRROR or "")
    monkeypatch.setenv("NFEVAL_OFFLINE", "1")


def _mean_counts(qs):
    counts = [q.grade_counts() for q in qs]
    return ([round(statistics.mean(c[g] for c in counts), 1) for g in (3, 2, 1, 0)],
            round(statistics.mean(len(q.answers) for q in qs), 1))


@pytest.mark.mirror
@needs_mirror
def test_mirror_table1_antique(real_mirror):
    qs = load_linkage("antique")
    assert len(qs) == 500
    assert _mean_counts(qs) == ([5.8, 4.5, 6.5, 3.6], 20.4)
    assert {a.grade for q in qs for a in q.answers} == {0, 1, 2, 3}


@pytest.mark.mirror
@needs_mirror
def test_mirror_table1_trec_dl_nf(real_mirror):
    qs = load_linkage("trec-dl-nf")
    assert len(qs) == 55
    assert _mean_counts(qs) == ([9.6, 18.1, 24.9, 48.0], 100.7)


@pytest.mark.mirror
@needs_mirror
def test_mirror_webglm(real_mirror):
    qs = load_webglm()
    assert len(qs) == 100 and all(len(q.answers) == 3 for q in qs)
    assert all({0, 1, 2, 3} <= set(q.references) for q in qs)
    assert {a.grade for q in qs for a in q.answers} == {1, 2, 3}
    assert {a.model for q in qs for a in q.answers} == {"mistral", "gpt", "llama"}


@pytest.mark.mirror
@needs_mirror
def test_mirror_answers_demo_and_prompts(real_mirror):
    s = load_answers("debateqa/answers_demo")
    assert len(s) == 1000 and s.ok
    da = load_prompt("debateqa/dispute_awareness_fewshot")
    assert da.count("{question}") == 1 and da.count("{answer}") == 1
    assert "#candidate" in load_prompt("LINKAGE")
    assert "#answer_a" in load_prompt("pairwise_comparison")


@pytest.mark.mirror
@needs_mirror
def test_mirror_every_pinned_file_verifies(real_mirror):
    st = {s.name: s for s in verify_all()}
    for name, entry in registry.REGISTRY.items():
        if entry.sha256 is not None:
            assert st[name].source == "mirror" and st[name].verified is True, name
