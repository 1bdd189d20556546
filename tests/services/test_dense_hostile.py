"""The dense layer against hostile inputs found by trying it as a new user would: a purged card's vector, a
damaged key list or matrix file, a base_url with a password in it, servers that answer too much or too slowly.
Real HTTP servers on 127.0.0.1 (tests/fake_embed.py, or a raw one here), real files, the real CLI."""

from __future__ import annotations

import glob
import json
import secrets
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memvault.errors import NoMatch
from services.search_helpers import card, write
from services.test_dense_search import configure, search, stored
from services.test_dense_search import fake, hybrid  # noqa: F401 - the same fixtures

numpy = pytest.importorskip("numpy")


def _matrix(root: Path) -> "numpy.ndarray":
    (name,) = glob.glob(str(root / ".memvault" / "vectors-card*.f32"))
    return numpy.fromfile(name, dtype=numpy.float32).reshape(-1, 256)


def _local_bytes(root: Path) -> bytes:
    return b"".join(Path(p).read_bytes() for p in sorted(glob.glob(str(root / ".memvault" / "vectors*"))))


def test_purge_erases_the_cards_vector_and_every_trace_of_it_in_the_vector_files(hybrid, run, fake):
    word = "zq" + secrets.token_hex(6)
    write(hybrid, card("c-261106-ffff", f"the vault code is {word}", f"{word} opens the back door"))
    run("embed")
    with sqlite3.connect(hybrid / ".memvault" / "vectors.sqlite") as db:
        slot, text_hash = db.execute("SELECT slot, text_hash FROM vectors WHERE key = 'c-261106-ffff'").fetchone()
    secret_row = _matrix(hybrid)[slot].copy()
    assert numpy.linalg.norm(secret_row) > 0.5
    run("forget", "c-261106-ffff", "--purge")
    rows = _matrix(hybrid)
    assert not any(numpy.allclose(r, secret_row, atol=1e-6) for r in rows), "the purged card's vector is on disk"
    assert rows.shape[0] == 5
    blob = _local_bytes(hybrid)
    assert b"c-261106-ffff" not in blob and text_hash.encode() not in blob
    assert stored(hybrid) == 5
    try:
        hits = search(hybrid, f"vault code {word} back door").hits
    except NoMatch:
        hits = ()
    assert all(h.id != "c-261106-ffff" for h in hits)
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"  # the other vectors still work


def test_purge_with_episodes_erases_their_vectors_too(hybrid, run, fake):
    word = "zq" + secrets.token_hex(6)
    run("capture", input=json.dumps({"role": "user", "content": f"remember the door code {word}", "session": "s"})
        + "\n" + json.dumps({"role": "assistant", "content": "noted", "session": "s"}) + "\n")
    run("embed", "--episodes")
    assert stored(hybrid, "episode") == 1
    with sqlite3.connect(hybrid / ".memvault" / "vectors.sqlite") as db:
        (ep,) = db.execute("SELECT key FROM vectors WHERE space = 'episode'").fetchone()
    write(hybrid, card("c-261107-abab", "door code", f"code {word}", source={"kind": "llm", "episodes": [ep]}))  # as distill writes it
    run("embed")
    run("forget", "c-261107-abab", "--purge", "--with-episodes")
    assert stored(hybrid, "episode") == 0
    assert ep.encode() not in _local_bytes(hybrid)


def test_a_garbage_key_list_never_fails_a_search_and_embed_starts_it_over(hybrid, run, fake):
    run("embed")
    keys = hybrid / ".memvault" / "vectors.sqlite"
    for side in ("-wal", "-shm"):
        Path(str(keys) + side).unlink(missing_ok=True)
    keys.write_bytes(b"this is not a database " * 200)
    result = search(hybrid, "Postgres orders")
    assert result.hits[0].id == "c-261103-cccc"
    assert any("vectors.sqlite" in w and "memvault embed" in w for w in result.warnings), result.warnings
    res = run("search", "Postgres orders", "--json")
    assert json.loads(res.stdout)["hits"][0]["id"] == "c-261103-cccc"
    assert any("vectors.sqlite is damaged" in w for w in run.json("doctor")["warnings"])
    res = run("embed")
    assert "vectors.sqlite" in res.stderr and "embedded 5 cards" in res.stdout
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"
    assert "5 card vectors" in run("stats").stdout


def test_a_garbage_matrix_file_gives_no_absurd_cosines_and_embed_repairs_it(hybrid, run, fake):
    run("embed")
    (name,) = glob.glob(str(hybrid / ".memvault" / "vectors-card*.f32"))
    size = Path(name).stat().st_size
    Path(name).write_bytes(numpy.frombuffer(secrets.token_bytes(size), dtype=numpy.uint8).tobytes())
    result = search(hybrid, "Postgres orders")
    for hit in result.hits:
        for why in hit.why:
            if why.startswith("meaning "):
                assert -1.0 <= float(why.split()[1]) <= 1.0, why
    assert result.hits[0].id == "c-261103-cccc"
    assert any("damaged" in w and "memvault embed" in w for w in result.warnings), result.warnings
    res = run("embed")
    assert "embedded 5 cards" in res.stdout
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"


def test_a_password_in_base_url_is_never_shown(hybrid, run, fake):
    pw = "pw" + secrets.token_hex(8)
    url = fake.base_url.replace("http://", f"http://bob:{pw}@")
    configure(hybrid, base_url=url)
    text = (hybrid / "memvault.yaml").read_text(encoding="utf-8")
    (hybrid / "memvault.yaml").write_text(text.replace('base_url: ""', f'base_url: "{url}"', 1), encoding="utf-8")
    fake.status = 503
    res = run("embed", code=5)
    assert "embeddings endpoint http://127.0.0.1:" in res.stderr and pw not in res.stderr + res.stdout
    res = run("search", "Postgres orders")
    assert "embeddings endpoint http://127.0.0.1:" in res.stderr and pw not in res.stderr + res.stdout
    for args in (("stats",), ("stats", "--json")):
        res = run(*args)
        assert "127.0.0.1" in res.stdout and pw not in res.stdout + res.stderr
    fake.status = 200
    run("embed")
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"  # the URL still works as given


class _Raw:
    """A raw embeddings server on 127.0.0.1: `flood` sends a 200 whose body is `size` bytes of one JSON
    number list as fast as it can; `trickle` sends an answer that never ends, a few bytes every `gap` seconds
    (far below any read timeout, far below the size bound for hours)."""

    def __init__(self, how: str, size: int = 0, gap: float = 0.0):
        owner = self
        self.how, self.size, self.gap = how, size, gap

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                try:
                    owner.answer(self, len(body["input"]))
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def answer(self, handler, n: int) -> None:
        if self.how == "flood":
            head = b'{"data": [{"index": 0, "embedding": ['
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            piece = b"0.5," * 16384
            sent = 0
            for chunk in (head, *([piece] * (self.size // len(piece))), b"0.5]}]}"):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            handler.wfile.write(b"0\r\n\r\n")
        else:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            chunk = b'{"data": [{"index": 0, "embedding": [1.0'
            while True:  # until the client hangs up (BrokenPipeError, caught by do_POST)
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
                chunk = b", 0.0"
                time.sleep(self.gap)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_endless_answer_is_cut_at_a_bound_not_read_into_memory(hybrid, run):
    raw = _Raw("flood", size=96 * 1024 * 1024)
    try:
        configure(hybrid, base_url=raw.base_url, timeout=20.0, batch_timeout=20.0)
        res = run("embed", code=5)
        assert "larger than" in res.stderr and raw.base_url in res.stderr
        result = search(hybrid, "Postgres orders")
        assert result.hits[0].id == "c-261103-cccc" and any("larger than" in w for w in result.warnings)
    finally:
        raw.close()


def test_a_server_that_trickles_its_answer_is_cut_at_the_timeout(hybrid, run):
    """The answer never ends and each gap is far below the read timeout: only the bound on the whole answer
    ends the request. Real processes, whose own timeout is only a hang guard (no clock is read here)."""
    import subprocess
    import sys

    raw = _Raw("trickle", gap=0.05)
    try:
        configure(hybrid, base_url=raw.base_url, timeout=1.0, batch_timeout=1.0)
        cmd = [sys.executable, "-m", "memvault", "--vault", str(hybrid)]
        res = subprocess.run([*cmd, "embed"], capture_output=True, text=True, timeout=600)
        assert res.returncode == 5 and "timed out" in res.stderr, res.stderr
        res = subprocess.run([*cmd, "search", "Postgres", "orders", "--json"], capture_output=True, text=True,
                             timeout=600)
        assert res.returncode == 0 and "timed out" in res.stderr, res.stderr
        assert json.loads(res.stdout)["hits"][0]["id"] == "c-261103-cccc"
    finally:
        raw.close()


def test_a_secret_or_deny_match_never_reaches_the_embeddings_endpoint(hybrid, run, fake):
    key = "sk-" + "proj-" + secrets.token_hex(16)
    text = (hybrid / "memvault.yaml").read_text(encoding="utf-8")
    (hybrid / "memvault.yaml").write_text(text.replace("deny: []", "deny: ['(?i)falcon']"), encoding="utf-8")
    path = next(hybrid.glob("cards/*/c-261103-cccc.md"))  # a card edited by hand, a key in clear
    path.write_text(path.read_text(encoding="utf-8") + f"\nstaging key {key}, codename Falcon\n", encoding="utf-8")
    run("capture", input=json.dumps({"role": "user", "content": "the falcon team owns billing", "session": "s"})
        + "\n" + json.dumps({"role": "assistant", "content": "ok", "session": "s"}) + "\n")
    run("embed", "--episodes")
    search(hybrid, f"Postgres orders {key} falcon", episodes=True)
    sent = "\n".join(fake.texts)
    assert "staging key" in sent and "billing" in sent and "Postgres" in sent  # the texts did go
    assert key not in sent and "falcon" not in sent.lower()


def test_a_key_list_damaged_past_its_first_pages_never_fails_a_command(hybrid, run, fake):
    turns = "".join(json.dumps({"role": role, "content": f"{role} note {i} about kayak trip {i * 7}",
                                "session": f"s{i // 50}"}) + "\n"
                    for i in range(300) for role in ("user", "assistant"))
    run("capture", input=turns)
    run("embed", "--episodes")
    keys = hybrid / ".memvault" / "vectors.sqlite"
    with sqlite3.connect(keys) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert db.execute("PRAGMA page_count").fetchone()[0] > 10
    raw = bytearray(keys.read_bytes())
    raw[5 * 4096:] = secrets.token_bytes(len(raw) - 5 * 4096)  # the first pages (schema, vmeta) stay sound
    keys.write_bytes(bytes(raw))
    result = search(hybrid, "kayak trip 77", episodes=True)
    assert result.hits and any("vectors.sqlite is damaged" in w for w in result.warnings), result.warnings
    assert "vectors.sqlite is damaged" in run.json("stats")["embeddings"]["problem"]
    assert any("vectors.sqlite is damaged" in w for w in run.json("doctor")["warnings"])
    res = run("embed", "--episodes")
    assert "was damaged" in res.stderr and "embedded 5 cards, 300 episodes" in res.stdout
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"


def test_a_remote_endpoint_goes_through_the_proxy_a_local_one_never_does(hybrid, run, fake, monkeypatch):
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    port = fake.base_url.split(":")[2].split("/")[0]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")  # the fake answers the proxied request itself
    configure(hybrid, base_url="http://embeddings.example.invalid/v1")  # a remote host, reachable only so
    res = run("embed")
    assert "embedded 5 cards" in res.stdout and fake.requests
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    configure(hybrid, base_url=fake.base_url)
    assert search(hybrid, "which vehicle").hits[0].id == "c-261101-aaaa"  # loopback: straight to the server



@pytest.mark.parametrize("key, value, says", [("batch", 0, "embeddings.batch must be at least 1"),
                                              ("base_url", "127.0.0.1:11434/v1", "embeddings.base_url must be an")])
def test_doctor_names_an_embeddings_setting_that_search_refuses(hybrid, run, key, value, says):
    configure(hybrid, **{key: value})
    assert says in run("search", "Postgres orders", code=2).stderr
    data = run.json("doctor")
    assert any(says in w for w in data["warnings"]), data["warnings"]
