"""MCP over stdio without the SDK: newline-delimited JSON-RPC 2.0 on stdin/stdout (the transport every agent
launches), answered by memvault.mcp.protocol.Dispatcher.

Why not the SDK here: importing it costs ~1 s of CPU (measured: bench/mcp.py), 90 % of the start-up an agent waits
for (Codex gives a server 10 s by default, on a loaded machine that is close). The stdio framing is small: one JSON
object per line each way, requests answered by id, notifications answered by nothing.

- Tool calls, prompts and resource reads run on worker threads (a long distill leaves the server answering other
  calls, and a second distill is refused at once by the vault's lock); everything else is answered in line.
  Answers are written whole, one line each, under a lock.
- A line that is not JSON gets a parse error (id null); one that is not a request gets "invalid request"; a line
  over MAX_LINE bytes is refused without being read into memory whole.
- Anything a library prints to stdout would break the framing: sys.stdout points at stderr while serving.
- A batch (a JSON array, protocol version 2025-03-26) is answered as an array.
- notifications/cancelled drops the answer of that request if it has not been sent yet.
- End of input: the calls under way finish, then the server exits.
"""

from __future__ import annotations

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

from memvault.mcp.protocol import INTERNAL, INVALID_REQUEST, PARSE_ERROR, Dispatcher, RpcError

MAX_LINE = 16 * 1024 * 1024
SLOW = frozenset({"tools/call", "prompts/get", "resources/read", "resources/list"})
WORKERS = 4


def serve(dispatcher: Dispatcher, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    stdin = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    saved, sys.stdout = sys.stdout, sys.stderr  # stray prints go to stderr, never into the protocol
    lock = threading.Lock()
    cancelled: set[Any] = set()
    pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="mcp")

    def send(message: Any) -> None:
        try:
            line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate somewhere: \u-escape everything instead
            line = json.dumps(message, separators=(",", ":")).encode("ascii")
        with lock:
            out.write(line + b"\n")
            out.flush()

    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
        """The response to one message (None for a notification or a cancelled request)."""
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return _error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST, "invalid request")
        method = msg.get("method")
        if "id" not in msg:  # a notification
            if method == "notifications/cancelled" and isinstance(msg.get("params"), dict):
                cancelled.add(msg["params"].get("requestId"))
            return None
        if method is None:  # a response: this server sends no requests, so there is nothing to match it to
            return None
        rid = msg["id"]
        try:
            result = {"jsonrpc": "2.0", "id": rid, "result": dispatcher.handle(method, msg.get("params"))}
        except RpcError as exc:
            result = _error(rid, exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001 - one line naming the type, never its text; the server stays up
            result = _error(rid, INTERNAL, f"internal error: {type(exc).__name__}")
        if rid in cancelled:
            cancelled.discard(rid)
            return None
        return result

    def run(msg: Any) -> None:
        reply = answer(msg)
        if reply is not None:
            send(reply)

    def run_batch(batch: list) -> None:
        replies = [r for r in (answer(m) for m in batch) if r is not None]
        if replies:
            send(replies)

    try:
        while True:
            line = stdin.readline(MAX_LINE + 1)
            if not line:
                break
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of the line without keeping it
                    line = stdin.readline(1 << 20)
                send(_error(None, INVALID_REQUEST, f"message too large (over {MAX_LINE} bytes)"))
                continue
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                send(_error(None, PARSE_ERROR, "parse error: a line is not a JSON object"))
                continue
            if isinstance(msg, list):
                if not msg:
                    send(_error(None, INVALID_REQUEST, "empty batch"))
                else:
                    pool.submit(run_batch, msg)
            elif isinstance(msg, dict) and msg.get("method") in SLOW and "id" in msg:
                pool.submit(run, msg)
            else:
                run(msg)
    finally:
        pool.shutdown(wait=True)
        sys.stdout = saved


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
