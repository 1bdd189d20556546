"""Issue 3's end-to-end promise: secrets planted in a chat reach no vault file, no LLM request and no output.

Every positive case of the redaction table (40+ kinds, English and Chinese) goes through real `memvault`
processes: capture, distill against a real HTTP server speaking the OpenAI protocol, search and show.
"""

from __future__ import annotations

import pytest
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))

from redact_cases import positive_cases  # noqa: E402

# Their fake models write every card: the write protocol (tests/write_protocol.py).
pytestmark = pytest.mark.usefixtures("write_protocol")

MEMVAULT = [sys.executable, "-m", "memvault"]


def _parrot(body: dict) -> str:
    """A careless model: one card per turn whose body repeats the turn, plus a key of its own invention."""
    prompt = body["messages"][1]["content"]
    cards = []
    for n, text in re.findall(r"^\[e(\d+)\] .*\nUSER: (.*)$", prompt, re.M):
        cards.append({"action": "create", "kind": "fact", "title": f"note {n}", "project": "demo",
                      "body": (text + " and the key sk-ant-api03-" + "Zx9" * 30 + "AA")[:900],
                      "entities": ["secrets"], "valid_from": None, "confidence": "user_stated",
                      "episodes": [f"e{n}"]})
    return json.dumps({"cards": cards}, ensure_ascii=False)


def test_no_secret_reaches_disk_requests_or_output(vault, fake_llm, tmp_path):
    cases = positive_cases()
    secrets = {s for case in cases for s in case.secrets if len(s) >= 8}
    secrets.add("sk-ant-api03-" + "Zx9" * 30 + "AA")
    chat = tmp_path / "chat.jsonl"
    with open(chat, "w", encoding="utf-8") as fh:
        for i, case in enumerate(cases):
            fh.write(json.dumps({"role": "user", "content": case.text, "session": "leaky",
                                 "ts": f"2026-11-{1 + i % 28:02d}T10:00:00Z"}, ensure_ascii=False) + "\n")
            fh.write(json.dumps({"role": "assistant", "content": f"Got it: {case.text}", "session": "leaky"},
                                ensure_ascii=False) + "\n")
    env_key = "sk-live-" + "Q" * 40
    env = {"MEMVAULT_DIR": str(vault), "MEMVAULT_LLM_BASE_URL": fake_llm.base_url, "MEMVAULT_LLM_API_KEY": env_key,
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    fake_llm.set_default(_parrot)

    def mv(*args: str, code: int = 0) -> str:
        done = subprocess.run([*MEMVAULT, *args], capture_output=True, env=env, timeout=600)
        assert done.returncode == code, (args, done.stderr.decode()[-2000:])
        out = done.stdout.decode() + done.stderr.decode()
        leaked = [s for s in secrets if s in out]
        assert not leaked, f"`memvault {' '.join(args)}` printed a secret ({len(leaked)} of them)"
        return out

    mv("capture", "--project", "demo", str(chat))
    mv("distill", "--json")
    assert fake_llm.requests, "distill sent nothing"
    mv("search", "--episodes", "--all", "key", "--limit", "50")
    mv("search", "--episodes", "密钥", "--limit", "50")
    mv("search", "note", "--json", "--limit", "50")
    first_card = next((vault / "cards").rglob("*.md")).stem
    mv("show", first_card)
    mv("stats")
    mv("doctor")

    for req in fake_llm.requests:
        raw = req["raw"].decode("utf-8", errors="replace")
        assert env_key not in raw.replace(f"Bearer {env_key}", "")
        leaked = [s for s in secrets if s in raw]
        assert not leaked, f"a request to the LLM carried {len(leaked)} secrets"
    files = [p for p in vault.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in files) and any(p.suffix == ".log" for p in files)
    for path in files:
        data = path.read_bytes().decode("utf-8", errors="replace")
        leaked = [s for s in secrets if s in data]
        assert not leaked, f"{path.relative_to(vault)} holds {len(leaked)} secrets"
        assert env_key not in data
