"""Faults lose nothing and leave nothing (issue 38): `forget --purge --with-episodes`, `distill`, `consolidate`
and `doctor --fix` are stopped with kill -9 at EVERY step they take, in real processes, as SQLite's crash tests
do. The steps are the fault points the code names (memvault.vault.faults); a first run with MEMVAULT_FAULT_LOG
lists them, then one trial per point sets MEMVAULT_CRASH_AT to it. After each stop the next command and
`doctor` leave no purged text anywhere (cards, pages, episodes, journal, .memvault/ index and vectors, temp
files) and lose nothing else (every other turn and card is still there).

The purged text is a fact said twice (the second time merges into the card: its before-image is in the
journal), with embeddings on (vectors of the card and its turns), an index built by a search, and, for
consolidate, four more old cards about the same person (the fold lists the fact in a folded card's body)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from fake_embed import FakeEmbed  # noqa: E402
from test_conflicts_cli import put  # noqa: E402
from test_distill_offline import TURNS, cards, episode_lines, make_vault, memvault  # noqa: E402

SECRET = b"zebra4417"  # searched for case-blind in every byte of the vault
SAID = "Remember: the storage locker code is ZEBRA4417 and Mia keeps the key."
AGAIN = "Remember: the storage locker code is ZEBRA4417 and Mia keeps the key in the blue box."
LATER = "2027-06-01T08:00:00Z"  # consolidate's clock: every card is older than fold_after_days
API_KEY = "sk-proj-" + "Q7" * 16  # a secret in clear that doctor --fix redacts in the day file of the fact
OUTCOMES: list[tuple[str, int, str]] = []  # (command, trials, outcome) for the table printed at the end


def configure_embeddings(vault: Path, url: str) -> None:
    path = vault / "memvault.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('base_url: ""                   # e.g.', f'base_url: "{url}"  # e.g.', 1)
                    .replace('model: ""                      # model name sent', 'model: "fake"  # model name sent',
                             1), encoding="utf-8")


@pytest.fixture(scope="module")
def embed():
    with FakeEmbed(dim=16) as fake:
        yield fake


@pytest.fixture(scope="module")
def base(tmp_path_factory, embed) -> dict:
    """A distilled vault whose fact card holds SECRET twice merged, with its index and vectors."""
    vault = make_vault(tmp_path_factory.mktemp("base") / "v", [*TURNS[:6], (SAID, "Noted."), *TURNS[6:10]])
    configure_embeddings(vault, embed.base_url)
    assert memvault(vault, "distill").returncode == 0
    with open(vault / "episodes/2026/11/2026-11-02.jsonl", "a", encoding="utf-8") as fh:
        fh.write(episode_lines([(AGAIN, "Noted.")], start=30)[0] + "\n")
    done = memvault(vault, "distill", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["cards"]["merged"] == 1, done.stdout + done.stderr
    (target,) = [c for c in cards(vault) if b"zebra4417" in c.title.lower().encode()]
    assert len(target.episodes) == 2 and any(f.startswith("journal/") for f in leftovers(vault))
    for i in range(4):  # old facts about Mia: consolidate folds them with the target
        put(vault, f"c-20260{i + 3}01-m0000{i}", kind="fact", title=f"Mia waters the plants on day {i}",
            project="demo", entities=("mia",), day=f"2026-0{i + 3}-01")
    assert memvault(vault, "reindex").returncode == 0
    assert memvault(vault, "embed").returncode == 0
    found = memvault(vault, "search", "ZEBRA4417", "--json")
    assert found.returncode == 0 and target.id in found.stdout
    assert (vault / ".memvault/vectors.sqlite").exists()
    # doctor caches only card files older than 2 s (views/parsed.py): on a fast machine they are younger
    old = time.time() - 60
    for path in (vault / "cards").rglob("*.md"):
        os.utime(path, (old, old))
    assert memvault(vault, "doctor").returncode == 0  # its caches (parsed cards, clean files) hold the text too
    assert any(f.startswith(".memvault/doctor-") for f in leftovers(vault))
    return {"vault": vault, "card": target.id, "episodes": set(target.episodes),
            "cards": {c.id for c in cards(vault)}, "turns": turn_ids(vault)}


def leftovers(vault: Path) -> list[str]:
    """Every file (temp files and .memvault/ included) holding SECRET, in any case."""
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")
                  if p.is_file() and SECRET in p.read_bytes().lower())


def temp_files(vault: Path) -> list[str]:
    """Temp files of killed writes in the vault's folders (and of the write-intent: it holds before-images);
    other derived files of .memvault/ hold no text a purge removes."""
    return sorted(p.relative_to(vault).as_posix() for p in vault.rglob(".*.tmp")
                  if ".memvault" not in p.parts or p.name.startswith((".write-intent.json.", ".purges.json.")))


def turn_ids(vault: Path) -> set[str]:
    return {json.loads(line)["id"] for p in (vault / "episodes").rglob("*.jsonl")
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip() and '"type"' not in line}


def card_ids(vault: Path) -> set[str]:
    return {p.stem for p in (vault / "cards").rglob("*.md")}


def purge_line(vault: Path, card: str) -> bool:
    return any(re.search(rf'"card":"{card}".*"mode":"purge"|"mode":"purge".*"card":"{card}"', line)
               for p in (vault / "journal").glob("*.jsonl") for line in p.read_text(encoding="utf-8").splitlines())


def points(vault: Path, tmp: Path, *args: str, env: dict | None = None) -> list[str]:
    """The fault points one run of the command passes, in order (`name#k`, unique)."""
    log = tmp / "points.log"
    run = memvault(vault, *args, extra_env={**(env or {}), "MEMVAULT_FAULT_LOG": str(log)})
    assert run.returncode == 0, run.stderr
    names = log.read_text(encoding="utf-8").split()
    assert len(names) == len(set(names))
    return names


def clean_doctor(vault: Path, env: dict | None = None) -> None:
    doc = memvault(vault, "doctor", "--json", extra_env=env)
    report = json.loads(doc.stdout)
    assert doc.returncode == 0 and report["problems"] == [], doc.stdout + doc.stderr


def purge(vault: Path, card: str, env: dict | None = None):
    return memvault(vault, "forget", card, "--purge", "--with-episodes", "--json", extra_env=env)


def record(command: str, trials: int, outcome: str) -> None:
    OUTCOMES.append((command, trials, outcome))
    sys.stderr.write(f"\nfaults: {command}: {trials} trials: {outcome}\n")


def test_purge_stopped_at_every_step_is_finished_by_the_next_command(base, tmp_path):
    steps = points(shutil.copytree(base["vault"], tmp_path / "probe"), tmp_path, "forget", base["card"],
                   "--purge", "--with-episodes")
    assert {"forget:before-journal#1", "purge:journal#1", "purge:episodes#1", "purge:vectors#1",
            "purge:index#1"} <= set(steps) and any(s.startswith("atomic-write") for s in steps)
    nexts = [("distill",), ("doctor", "--fix"), ("forget", base["card"], "--purge", "--with-episodes"),
             ("capture", "--format", "text"), ("reindex",)]
    committed = 0
    for i, point in enumerate(steps):
        vault = shutil.copytree(base["vault"], tmp_path / f"t{i}")
        stopped = purge(vault, base["card"], {"MEMVAULT_CRASH_AT": point})
        assert stopped.returncode == -signal.SIGKILL, (point, stopped.stderr)
        nxt = nexts[i % len(nexts)]
        if not purge_line(vault, base["card"]):
            # Stopped before the commit point: nothing was purged, nothing is lost; the next card change rolls
            # the half-written change back, and the person's rerun purges.
            assert memvault(vault, *nxt, input="User: hello there\nAssistant: hi\n").returncode == 0
            if nxt[0] != "forget":
                assert base["card"] in card_ids(vault) and turn_ids(vault) >= base["turns"], point
                assert purge(vault, base["card"]).returncode == 0
        else:
            committed += 1
            if nxt == ("doctor", "--fix"):
                doc = memvault(vault, "doctor", "--json")
                if leftovers(vault):  # doctor names what is left before the fix
                    assert doc.returncode == 3 and ("purge of" in doc.stdout or "temp file" in doc.stdout), point
            done = memvault(vault, *nxt, input="User: hello there\nAssistant: hi\n")
            assert done.returncode == 0, (point, nxt, done.stderr)
        assert leftovers(vault) == [] and temp_files(vault) == [], (point, nxt)
        clean_doctor(vault)
        assert card_ids(vault) == base["cards"] - {base["card"]}, point
        assert turn_ids(vault) - {t for t in turn_ids(vault) if t not in base["turns"]} == \
            base["turns"] - base["episodes"], point
        assert memvault(vault, "search", "zebra4417").returncode == 1, point
        assert memvault(vault, "search", "Jellyfin").returncode == 0, point
    record("forget --purge --with-episodes", len(steps),
           f"{len(steps)}/{len(steps)} no purged text left, nothing else lost ({committed} stopped after the "
           "journal line, finished by the next command)")


def prepare(base: dict, where: Path, command: str) -> tuple[Path, dict]:
    """A copy of the base vault with work waiting for `command`, and the env its trials run with."""
    vault = shutil.copytree(base["vault"], where)
    env: dict = {}
    if command == "distill":
        with open(vault / "episodes/2026/11/2026-11-02.jsonl", "a", encoding="utf-8") as fh:
            fh.write("\n".join(episode_lines(TURNS[10:], start=40)) + "\n")
    elif command == "consolidate":
        env = {"MEMVAULT_NOW": LATER}
    else:  # doctor --fix: a secret in clear in the day file of the fact, and an entity page out of date
        day = vault / "episodes/2026/11/2026-11-02.jsonl"
        with open(day, "a", encoding="utf-8") as fh:
            fh.write(episode_lines([(f"my key is {API_KEY}", "ok")], start=50)[0] + "\n")
        page = vault / "entities/mia.md"
        page.write_text(page.read_text(encoding="utf-8").replace("- [[", "- [[c-x]]\n- [[", 1), encoding="utf-8")
    return vault, env


COMMANDS = {"distill": ("distill",), "consolidate": ("consolidate",), "doctor --fix": ("doctor", "--fix")}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_writer_stopped_at_every_step_then_a_purge_leaves_nothing(base, tmp_path, command):
    args = COMMANDS[command]
    probe, env = prepare(base, tmp_path / "probe", command)
    steps = points(probe, tmp_path, *args, env=env)
    assert any(s.startswith("atomic-write") for s in steps) and len(steps) >= 3, steps
    expected_turns = turn_ids(probe) - base["episodes"]
    temps = 0  # stops that left a temp file (removed by the purge's settle)
    for i, point in enumerate(steps):
        vault, _ = prepare(base, tmp_path / f"t{i}", command)
        stopped = memvault(vault, *args, extra_env={**env, "MEMVAULT_CRASH_AT": point})
        assert stopped.returncode == -signal.SIGKILL, (point, stopped.stderr)
        temps += bool(temp_files(vault))
        done = purge(vault, base["card"], env)
        assert done.returncode == 0, (point, done.stderr)
        assert leftovers(vault) == [] and temp_files(vault) == [], (command, point)
        rerun = memvault(vault, *args, extra_env=env)
        assert rerun.returncode == 0, (point, rerun.stderr)
        assert leftovers(vault) == [], (command, point)
        clean_doctor(vault, env)
        assert turn_ids(vault) == expected_turns, point
        assert base["cards"] - {base["card"]} <= card_ids(vault), point
        if command == "doctor --fix":
            assert API_KEY not in "".join(p.read_text(encoding="utf-8") for p in (vault / "episodes").rglob("*.jsonl"))
    record(command, len(steps), f"{len(steps)}/{len(steps)}: the purge after it left no text and no temp file "
           f"({temps} stops had left one), nothing lost")
