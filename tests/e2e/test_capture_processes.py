"""capture with real processes: 16 at once, kill -9 mid-capture, a 50 MB line, invalid UTF-8."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

MEMVAULT = [sys.executable, "-m", "memvault"]


def make_log(path: Path, session: str, turns: int, seed: int) -> None:
    rnd = random.Random(seed)
    words_en = "cache postgres deploy queue budget release sqlite docker backup schema index token".split()
    words_zh = ["数据库", "部署", "缓存", "备份", "预算", "发布", "队列", "索引", "小说", "角色"]
    with open(path, "w", encoding="utf-8") as fh:
        for t in range(turns):
            day = 1 + (t % 3)  # three day files, so processes append to the same files concurrently
            ts = f"2026-11-0{day}T{(t // 60) % 24:02d}:{t % 60:02d}:00Z"
            words = rnd.sample(words_en, 4) + rnd.sample(words_zh, 3)
            fh.write(json.dumps({"role": "user", "content": f"{session} turn {t}: " + " ".join(words),
                                 "session": session, "ts": ts}, ensure_ascii=False) + "\n")
            fh.write(json.dumps({"role": "assistant", "content": "回答 answer " + " ".join(reversed(words)) * 3,
                                 "session": session}, ensure_ascii=False) + "\n")


def episode_lines(vault: Path) -> list[dict]:
    out = []
    for f in sorted((vault / "episodes").rglob("*.jsonl")):
        data = f.read_bytes()
        assert data.endswith(b"\n"), f"{f} does not end in a newline"
        out.extend(json.loads(line) for line in data.decode("utf-8").splitlines())
    return out


def test_sixteen_concurrent_captures_store_every_turn_once(vault, tmp_path):
    logs = []
    for i in range(16):
        log = tmp_path / f"log{i}.jsonl"
        make_log(log, f"proc-{i}", 500, seed=i)
        logs.append(log)
    procs = [subprocess.Popen([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for log in logs]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
        assert json.loads(out)["new"] == 500
    lines = episode_lines(vault)
    assert len(lines) == 8000
    assert len({e["id"] for e in lines}) == 8000
    assert len({(e["session"], e["turn"]) for e in lines}) == 8000
    # and a second round of the same logs, again concurrently, adds nothing
    procs = [subprocess.Popen([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for log in logs[:4]]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and json.loads(out)["new"] == 0, err.decode()
    assert len(episode_lines(vault)) == 8000


def test_kill_9_during_capture_then_rerun_stores_everything_once(vault, tmp_path):
    log = tmp_path / "big.jsonl"
    make_log(log, "killed", 3000, seed=7)
    proc = subprocess.Popen([*MEMVAULT, "--vault", str(vault), "capture", str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.8)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # Whatever the kill left (nothing, some files, a torn line), a rerun completes the capture.
    done = subprocess.run([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(log)],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    lines = episode_lines(vault)
    assert sorted(e["turn"] for e in lines) == list(range(1, 3001))
    doctor = subprocess.run([*MEMVAULT, "--vault", str(vault), "doctor"], capture_output=True)
    assert doctor.returncode == 0, doctor.stdout.decode()


# The measured process is started by a small launcher, not by pytest: a child forked from a big process starts
# with the parent's pages in its peak RSS (ru_maxrss survives exec), so a late, fat pytest would be measured too.
_LAUNCHER = """import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:])
_pid, status, usage = os.wait4(proc.pid, 0)
sys.stderr.write("\\npeak-kib %d\\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _run_measured(args: list[str], stdin_path: Path) -> tuple[int, str, str, int]:
    """Run a process and return (exit code, stdout, stderr, peak RSS in KiB) of that process alone."""
    with open(stdin_path, "rb") as stdin:
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, *args], stdin=stdin, capture_output=True)
    err, _, peak = done.stderr.decode().rpartition("\npeak-kib ")
    return done.returncode, done.stdout.decode(), err, int(peak)


def test_a_50_mb_line_is_skipped_with_bounded_memory(vault, tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.write(json.dumps({"role": "user", "content": "before the huge line, a question", "session": "h"}).encode()
                 + b"\n")
        fh.write(b'{"role": "assistant", "session": "h", "content": "')
        block = b"x" * (1024 * 1024)  # written in pieces: the test process itself stays small
        for _ in range(50):
            fh.write(block)
        fh.write(b'"}\n')
        fh.write(json.dumps({"role": "assistant", "content": "after the huge line, an answer", "session": "h"}).encode()
                 + b"\n")
    code, out, err, peak_kib = _run_measured([*MEMVAULT, "--vault", str(vault), "capture", "--json"], path)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["new"] == 1
    assert any(p.startswith("<stdin>:2: line longer than") for p in summary["problems"])
    assert "<stdin>:2:" in err  # the warning names input and line on stderr too
    (ep,) = episode_lines(vault)
    assert ep["assistant"] == "after the huge line, an answer"
    assert peak_kib < 150 * 1024, f"peak RSS {peak_kib} KiB for a 50 MB line"


def test_invalid_utf8_input_keeps_the_rest(vault, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes("User: 我们用哪个数据库？\nAssistant: 用 Postgres。\n".encode()
                     + b"User: caf\xe9 latin-1 bytes in a question\nAssistant: still answered\n")
    done = subprocess.run([*MEMVAULT, "--vault", str(vault), "capture", "--json", str(path)], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    summary = json.loads(done.stdout)
    assert summary["new"] == 2
    assert any(":3:" in p and "UTF-8" in p for p in summary["problems"])
    texts = [e["user"] for e in episode_lines(vault)]
    assert "我们用哪个数据库？" in texts and any(t.startswith("caf\ufffd") for t in texts)
