"""`make demo`: a throw-away vault, the sample logs captured, then what memvault can tell about them.

Runs the real `memvault` command line in subprocesses, exactly as a person would type it.
With no LLM endpoint, distill runs the offline engine: capture -> distill -> search -> timeline (a supersede
chain) -> context. Set MEMVAULT_LLM_BASE_URL (and MEMVAULT_LLM_MODEL, MEMVAULT_LLM_API_KEY) to distill with a model.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sh(*args: str, stdin: bytes | None = None, check: bool = True) -> int:
    shown = " ".join(shlex.quote(a) for a in args)
    print(f"\n$ memvault {shown}" + (" < …" if stdin else ""), flush=True)
    done = subprocess.run([sys.executable, "-m", "memvault", *args], input=stdin)
    if check and done.returncode not in (0, 1):
        sys.exit(f"demo step failed with exit code {done.returncode}")
    return done.returncode


def has_command(name: str) -> bool:
    out = subprocess.run([sys.executable, "-m", "memvault", "--help"], capture_output=True, text=True).stdout
    return f" {name} " in out or f" {name}\n" in out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="memvault-demo-") as tmp:
        vault = Path(tmp) / "vault"
        os.environ["MEMVAULT_DIR"] = str(vault)
        sh("init", str(vault), "--git")
        logs = sorted(p for p in HERE.iterdir() if p.suffix in (".jsonl", ".json", ".txt"))
        for log in logs:
            sh("capture", "--project", "tidepool", str(log))
        print("\n# the same logs again: nothing new is stored")
        sh("capture", "--project", "tidepool", *map(str, logs))
        sh("stats")
        if has_command("search"):
            sh("search", "--episodes", "postgres", "--limit", "3")
            sh("search", "--episodes", "任务队列", "--limit", "3")
        if os.environ.get("MEMVAULT_LLM_BASE_URL"):
            print("\n# distill with the LLM at MEMVAULT_LLM_BASE_URL")
        else:
            print("\n# no LLM endpoint set: distill uses the offline engine (what the user stated outright, no network)."
                  "\n# Set MEMVAULT_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) to distill with a model.")
        if sh("distill", check=False) == 5:
            print("# the LLM endpoint failed or answered badly (exit 5); the episodes stay pending")
        print("\n# the cards are searchable, in English and Chinese")
        sh("search", "postgres", "--limit", "3")
        sh("search", "任务队列", "--limit", "3")
        print("\n# the job queue changed its mind: the newer card supersedes the older one")
        sh("timeline", "--project", "tidepool")
        print("\n# a memory pack for the next prompt: pinned preferences and the current state first")
        sh("context", "alert job queue 任务队列", "--project", "tidepool")
        sh("doctor")
        print(f"\n# the vault was {vault}; it is deleted now. Make your own with `memvault init ~/memvault`.")


if __name__ == "__main__":
    main()
