"""Fault points: the test hook of the crash tests (kill -9 at every step, as SQLite's crash tests do).

Each step of a write that a crash could stop names itself with `crash_point(name)`. Unset in real use, this
costs one environment lookup. Two variables drive it (tests only; documented in docs/development.md):
- MEMVAULT_CRASH_AT=<name> or <name>#<k>: the process kills itself with SIGKILL at the first (or k-th) time it
  reaches that point, exactly as an OOM killer or a power cut would; MEMVAULT_CRASH_SIGNAL=INT sends SIGINT
  instead, as Ctrl-C at that moment does;
- MEMVAULT_FAULT_LOG=<file>: every point reached is appended to that file as `<name>#<k>`, one a line, so a
  test can first list a command's steps and then stop it at each one.
"""

from __future__ import annotations

import os
import signal

_seen: dict[str, int] = {}


def crash_point(name: str) -> None:
    spec = os.environ.get("MEMVAULT_CRASH_AT")
    log = os.environ.get("MEMVAULT_FAULT_LOG")
    if not spec and not log:
        return
    n = _seen[name] = _seen.get(name, 0) + 1
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"{name}#{n}\n")
    if spec and (spec == name and n == 1 or spec == f"{name}#{n}"):
        if os.environ.get("MEMVAULT_CRASH_SIGNAL") == "INT":
            # Ctrl-C reaches a foreground process; a process started in the background by a non-interactive
            # shell (CI under nohup, `cmd &`) inherits SIGINT ignored, so restore Python's handler first.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            os.kill(os.getpid(), signal.SIGINT)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
