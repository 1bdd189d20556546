"""Every command starts cheaply: commands load from their own module on demand, and option values are coerced
without pydantic (memvault.cli.coerce). Speed itself is measured in bench/startup.py; these tests check the
mechanisms, which a change could silently undo."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time

import typer.main
from conftest import DATA

from memvault.cli.app import COMMANDS, app

# A search's process, and that of a command that only reads, ends in os._exit (memvault.__main__.leave); a probe
# that looks at the process afterwards turns that into the SystemExit it catches.
STAY = "import os\nos._exit = lambda code: (_ for _ in ()).throw(SystemExit(code))\n"

# Runs the entry point on the command line after its first argument, then names the modules loaded of those that
# first argument lists: a name is that module and its submodules; a name ending in "." its submodules only.
PROBE = (
    STAY +
    "import sys, runpy\n"
    "watch = sys.argv[1].split()\n"
    "sys.argv = ['memvault'] + sys.argv[2:]\n"
    "try:\n    runpy.run_module('memvault', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "mods = [m for m in sys.modules if any(m.startswith(w) if w.endswith('.') else m == w or m.startswith(w + '.')\n"
    "                                      for w in watch)]\n"
    "sys.stderr.write('LOADED ' + ' '.join(sorted(mods)) + '\\n')\n"
)


def loaded(args, cwd, stdin=b"", watch=("pydantic", "rich", "yaml", "memvault.cli.commands.")):
    done = subprocess.run([sys.executable, "-c", PROBE, " ".join(watch), *args], input=stdin, capture_output=True,
                          cwd=cwd)
    return done.stderr.decode().strip().splitlines()[-1].split()[1:]


def test_help_loads_no_command_module_and_stats_only_its_own(vault, tmp_path):
    old = time.time() - 3600  # settings unchanged for an hour: their parse is cached after the first command
    os.utime(vault / "memvault.yaml", (old, old))
    assert "yaml" in loaded(["--vault", str(vault), "stats"], tmp_path)  # the first parse
    assert loaded(["--help"], tmp_path) == []
    assert loaded(["--vault", str(vault), "stats"], tmp_path) == ["memvault.cli.commands.upkeep"]
    assert loaded(["--vault", str(vault), "show", "c-nothing"], tmp_path) == ["memvault.cli.commands.read"]


# What --help, stats and timeline must not import at their start-up (issue 37: each within 8x bare python,
# bench/startup.py): the vault's card and episode code with memvault.model's dataclasses, hashlib, yaml, the
# dense layer, the command modules they do not run.
DEFERRED = ("memvault.model", "memvault.vault.store", "memvault.vault.episodes", "memvault.vault.codec", "hashlib", "yaml",
         "memvault.search.dense", "memvault.search.service", "memvault.distill.cards", "memvault.cli.commands.",
         "json", "sqlite3", "memvault.views", "memvault.search", "memvault.redact")


def test_help_stats_and_timeline_leave_the_heavy_modules_out(vault, tmp_path):
    """Each import deferred for their start-up stays deferred: a module imported at the top again fails here."""
    sys.path.insert(0, str(os.path.join(os.path.dirname(__file__), "..", "services")))
    from search_helpers import card, write

    write(vault, card("c-20250101-aaaa", "Move the shop database to Postgres", "Mail ops@example.com first."))
    old = time.time() - 3600  # settings unchanged for an hour: the first command caches their parse
    os.utime(vault / "memvault.yaml", (old, old))
    v = ["--vault", str(vault)]
    assert "yaml" in loaded(v + ["stats"], tmp_path, watch=DEFERRED)  # the first parse, and the index built
    assert loaded(["--help"], tmp_path, watch=DEFERRED) == []
    stats = loaded(v + ["stats"], tmp_path, watch=DEFERRED)
    assert "memvault.cli.commands.upkeep" in stats and "memvault.vault.store" in stats  # what stats does use
    assert not {"hashlib", "yaml", "memvault.search.dense", "memvault.search.service", "memvault.distill.cards",
                "memvault.redact.engine", "memvault.cli.commands.read"} & set(stats), stats
    timeline = loaded(v + ["timeline", "--limit", "5"], tmp_path, watch=DEFERRED)
    assert "memvault.views.timeline" in timeline and "memvault.redact.engine" in timeline  # its output is redacted
    assert not {"memvault.model", "memvault.vault.store", "memvault.vault.episodes", "memvault.vault.codec",
                "hashlib", "yaml", "memvault.search.service", "memvault.cli.commands.upkeep"} & set(timeline), timeline


def test_help_and_capture_import_neither_jieba_nor_httpx(tmp_path, vault):
    capture = (["--vault", str(vault), "capture"], (DATA / "formats" / "jsonl-en.jsonl").read_bytes())
    for args, stdin in ((["--help"], b""), capture):
        assert loaded(args, tmp_path, stdin, watch=("jieba", "httpx")) == [], args


def test_table_and_modules_name_the_same_commands():
    by_module: dict[str, set[str]] = {}
    for name, (module, _) in COMMANDS.items():
        by_module.setdefault(module, set()).add(name)
    for module, names in by_module.items():
        sub = importlib.import_module(f"memvault.cli.commands.{module}").app
        assert set(typer.main.get_group(sub).commands) == names, module


def test_plain_coercion_keeps_typer_errors_and_values(run, vault):
    bad = run("search", "postgres", "-n", "abc", code=2)
    assert "'abc' is not a valid integer" in bad.stderr
    assert run("search", "nothing-like-this", "-n", "3", code=1).stdout == ""
    group = typer.main.get_command(app)
    ctx = group.make_context("memvault", ["--vault", str(vault), "stats"])
    assert str(ctx.params["vault"]) == str(vault) and type(ctx.params["vault"]).__name__.endswith("Path")


def test_settings_cache_follows_the_file(run, vault):
    old = time.time() - 3600
    os.utime(vault / "memvault.yaml", (old, old))
    assert run.json("stats")["llm"]["model"] == "qwen2.5:7b-instruct"
    assert (vault / ".memvault" / "settings.json").exists()
    text = (vault / "memvault.yaml").read_text(encoding="utf-8").replace("qwen2.5:7b-instruct", "llama3.3:70b")
    (vault / "memvault.yaml").write_text(text + "bogus_key: 1\n", encoding="utf-8")
    changed = run("stats", "--json")
    assert '"model": "llama3.3:70b"' in changed.stdout
    assert "memvault.yaml" in changed.stderr and "bogus_key" in changed.stderr


COMPILED = (
    STAY +
    "import re, sys, runpy\n"
    "sys.argv = ['memvault'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('memvault', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "cjk = any(isinstance(k[1], str) and k[1].startswith('[\\u3040') for k in re._cache)\n"
    "sys.stderr.write(f'CJK {cjk} STRING {\"string\" in sys.modules} PEM {any(\"PRIVATE KEY\" in str(k[1]) for k in re._cache)}\\n')\n"
)


def test_an_english_search_compiles_only_what_it_uses(vault, tmp_path):
    """The CJK character class (~2.5 ms to compile), the redaction rules whose keywords a hit does not hold, and
    string.Template's pattern are compiled on first use: an English search with a hit to redact needs none, and
    a Chinese query (short: its CJK runs are found by a loop) needs no CJK class either."""
    sys.path.insert(0, str(os.path.join(os.path.dirname(__file__), "..", "services")))
    from search_helpers import card, write

    write(vault, card("c-20250101-aaaa", "Move the shop database to Postgres", "Mail ops@example.com first."),
          card("c-20250102-bbbb", "数据库迁移到 Postgres", "周末做。"))
    args = ["--vault", str(vault), "search", "shop", "database"]
    done = subprocess.run([sys.executable, "-c", COMPILED, *args], capture_output=True, cwd=tmp_path)
    assert "c-20250101-aaaa" in done.stdout.decode()
    assert done.stderr.decode().strip().splitlines()[-1] == "CJK False STRING False PEM False"
    chinese = ["--vault", str(vault), "search", "数据库"]
    done = subprocess.run([sys.executable, "-c", COMPILED, *chinese], capture_output=True, cwd=tmp_path)
    assert "c-20250102-bbbb" in done.stdout.decode()
    assert done.stderr.decode().strip().splitlines()[-1].startswith("CJK False")
    # The probe sees the class when it is compiled: a query longer than tokenize.SHORT_TEXT uses the regex.
    long_query = ["--vault", str(vault), "search", "数据库迁移 " * 90]
    done = subprocess.run([sys.executable, "-c", COMPILED, *long_query], capture_output=True, cwd=tmp_path)
    assert done.stderr.decode().strip().splitlines()[-1].startswith("CJK True")


LIGHT = (
    STAY +
    "import sys, runpy\n"
    "sys.argv = ['memvault'] + sys.argv[1:]\n"
    "try:\n    runpy.run_module('memvault', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "heavy = ('memvault.model', 'dataclasses', 'typing', 'yaml', 'pathlib', 'urllib.parse', *sys.argv[-1:0])\n"
    "sys.stderr.write('HEAVY ' + ' '.join(m for m in heavy if m in sys.modules) + '\\n')\n"
)


def test_a_search_of_cards_and_turns_imports_neither_dataclasses_nor_typing(run, vault, tmp_path):
    """memvault.model's dataclasses cost ~20 ms at every start-up and `typing` ~2.3 ms: the search path (cards,
    turns and their speakers) reads turns through memvault.voices, and its records are collections.namedtuple.
    Nor pathlib (~17 M instructions with urllib.parse and ipaddress): the search path uses os.path strings."""
    sys.path.insert(0, str(os.path.join(os.path.dirname(__file__), "..", "services")))
    from search_helpers import card, write

    write(vault, card("c-20250101-bbbb", "Anna moved the shop database to Postgres", "During the spring sale."))
    log = '{"role": "user", "name": "Anna", "content": "the shop database runs on postgres now"}\n'
    run("capture", "--format", "jsonl", input=log)
    old = time.time() - 3600  # settings unchanged for an hour: the first search caches them, the next reads no yaml
    os.utime(vault / "memvault.yaml", (old, old))
    args = ["--vault", str(vault), "search", "shop", "database"]
    subprocess.run([sys.executable, "-c", LIGHT, *args], capture_output=True, cwd=tmp_path, check=True)
    done = subprocess.run([sys.executable, "-c", LIGHT, *args], capture_output=True, cwd=tmp_path)
    out = done.stdout.decode()
    assert "c-20250101-bbbb" in out and "[episode]" in out
    assert done.stderr.decode().strip().splitlines()[-1] == "HEAVY"


def test_reading_commands_that_skip_the_tear_down_keep_their_output_and_exit_codes(vault, tmp_path):
    """--help, stats and timeline end in os._exit (memvault.__main__.leave): what they wrote into a pipe arrives
    whole, --help reads as the app's own, and an exit code other than 0 stays."""
    def memvault(*args):
        return subprocess.run([sys.executable, "-m", "memvault", *args], capture_output=True, text=True, cwd=tmp_path)

    v = ["--vault", str(vault)]
    empty = memvault(*v, "timeline")
    assert empty.returncode == 1 and empty.stdout == "" and "no cards" in empty.stderr
    helped = memvault("--help")
    plain = subprocess.run([sys.executable, "-c", "from memvault.cli.app import app\napp(prog_name='memvault')",
                            "--help"], capture_output=True, text=True, cwd=tmp_path)  # the app, its tear-down too
    assert helped.returncode == 0 and helped.stdout == plain.stdout and "Commands" in plain.stdout
    sys.path.insert(0, str(os.path.join(os.path.dirname(__file__), "..", "services")))
    from search_helpers import many_cards

    many_cards(vault, 1500)  # --json output of ~600 KB: many times a pipe's buffer
    timeline = memvault(*v, "timeline", "--json")
    assert timeline.returncode == 0 and len(json.loads(timeline.stdout)["entries"]) == 1500
    stats = memvault(*v, "stats", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["cards"] == 1500
    assert memvault(*v, "stats", "--bogus").returncode == 2
