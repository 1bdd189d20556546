"""Real processes: what `memvault search` imports, and two searches racing to build the index."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "services"))

from search_helpers import card, write  # noqa: E402

CHECK = """
import sys
from memvault.cli.app import app
try:
    app(["--vault", sys.argv[1], "search", "redis"], standalone_mode=False)
except SystemExit:
    pass
print("MODULES:" + ",".join(m for m in ("httpx", "jieba", "yaml", "rich", "snowballstemmer", "rapidfuzz") if m in sys.modules))
"""


def test_search_imports_no_httpx_jieba_yaml(vault):
    write(vault, card("c-20250101-0001", "Cache with redis", "Redis."))
    # the first call caches the settings (that path may read memvault.yaml with yaml)
    subprocess.run([sys.executable, "-c", CHECK, str(vault)], check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", CHECK, str(vault)], check=True, capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("c-20250101-0001")
    assert lines[-1] == "MODULES:"


def test_concurrent_first_searches_both_succeed(vault):
    write(vault, *[card(f"c-20250101-{i:04d}", f"Card {i} about redis", "x") for i in range(200)])
    cmd = [sys.executable, "-m", "memvault", "--vault", str(vault), "search", "redis", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert b'"count": 10' in out
