"""`stats` counts the raw layer from a per-file cache (memvault.vault.tally) instead of parsing every line of
every day file: its answer is still exactly what parsing every line gives (Vault.episodes(), as stats computed
it before), on a vault of several projects, English and Chinese, with a doubled line, a revoke and a damaged
line; and it stays so after capture appends to a day file the cache holds, after hand edits (in place, of the
same size, with the old mtime put back; by rename; a day file deleted) and after `forget --purge
--with-episodes`. The day files are dated a day back first ("written yesterday"), so that the cache keeps
them: a file changed in the last 2 seconds is read again at every call anyway."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from memvault.distill.journal import distilled_ids
from memvault.model import Episode, Revoke
from memvault.vault import codec
from memvault.vault.store import Vault

EPISODE_FIELDS = ("episodes", "episodes_by_project", "newest_episode", "sessions", "pending_episodes", "damaged")


def parsed(vault_path: Path) -> dict:
    """The episode fields of stats as stats computed them before the cache: every line parsed."""
    vault = Vault.open(vault_path, {})
    problems: list = []
    eps = vault.episodes(problems=problems)
    journal = vault.journal(problems=problems)
    distilled = distilled_ids(journal)
    return {"episodes": len(eps), "episodes_by_project": dict(sorted(Counter(e.project for e in eps).items())),
            "newest_episode": eps[-1].at if eps else None, "sessions": len({e.session for e in eps}),
            "pending_episodes": sum(1 for e in eps if e.id not in distilled), "damaged": len(problems)}


def counted(run) -> dict:
    data = run.json("stats")
    return {k: data[k] for k in EPISODE_FIELDS}


def age(vault_path: Path) -> None:
    """Every day file dated a day back, as if written yesterday."""
    day_ago = time.time() - 86400
    for path in (vault_path / "episodes").rglob("*.jsonl"):
        os.utime(path, (day_ago, day_ago))


def cached(vault_path: Path) -> set[str]:
    """The day files the cache holds."""
    return set(marshal.loads((vault_path / ".memvault" / "tally.cache").read_bytes())["files"])


def day_files(vault_path: Path) -> set[str]:
    return {p.relative_to(vault_path).as_posix() for p in (vault_path / "episodes").rglob("*.jsonl")}


def ep(n: int, day: str, project: str, session: str, user: str) -> Episode:
    return Episode(id=f"ep-{day.replace('-', '')}T08{n:02d}00Z-{n:04x}", at=f"{day}T08:{n:02d}:00Z",
                   project=project, session=session, turn=n, user=user, assistant="ok", hash=f"h{n}")


@pytest.fixture
def several(vault) -> Path:
    """Three projects over two day files; a line doubled by a union merge (under another project: the first
    line counts), a turn revoked, a damaged line; a journal whose one batch consumed three turns."""
    first = [ep(1, "2026-11-01", "shop", "s1", "the NAS runs TrueNAS"),
             ep(2, "2026-11-01", "shop", "s1", "deploys only on weekdays"),
             ep(3, "2026-11-01", "小说", "s2", "小说用第一人称"),
             ep(4, "2026-11-01", "小说", "s2", "主角叫林晚")]
    second = [ep(5, "2026-11-02", "home", "s3", "the router is in the hall"),
              ep(6, "2026-11-02", "home", "s3", "路由器的密码换过了")]
    doubled = codec.episode_to_line(dataclasses.replace(first[0], project="home"))
    revoke = codec.revoke_to_line(Revoke(ids=(first[1].id,), reason="history-edit", at="2026-11-02T09:00:00Z"))
    damaged = '{"id": "ep-x",'
    for day, lines in (("2026-11-01", [codec.episode_to_line(e) for e in first]),
                       ("2026-11-02", [codec.episode_to_line(e) for e in second] + [doubled, revoke, damaged])):
        path = vault / "episodes" / "2026" / "11" / f"{day}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (vault / "journal").mkdir(exist_ok=True)
    (vault / "journal" / "2026-11.jsonl").write_text(json.dumps(
        {"v": 1, "type": "distill", "at": "2026-11-02T10:00:00Z", "batch": "b-1", "run": "r-1",
         "episodes": [first[0].id, first[2].id, second[0].id], "created": [], "updated": [], "superseded": []})
        + "\n", encoding="utf-8")
    return vault


def test_stats_json_is_the_same_as_parsing_every_line_cold_and_warm(run, several):
    expected = {"episodes": 5, "episodes_by_project": {"home": 2, "shop": 1, "小说": 2},
                "newest_episode": "2026-11-02T08:06:00Z", "sessions": 3, "pending_episodes": 2, "damaged": 1}
    assert parsed(several) == expected
    cold = run.json("stats")
    assert {k: cold[k] for k in EPISODE_FIELDS} == expected
    assert not (several / ".memvault" / "tally.cache").exists() or not cached(several)  # just written: not kept
    age(several)
    assert run.json("stats") == cold  # the day files read, and kept this time
    assert cached(several) == day_files(several)
    assert run.json("stats") == cold  # from the cache
    (several / ".memvault" / "tally.cache").write_bytes(b"\x00garbage")
    assert run.json("stats") == cold  # a damaged cache is read past


def test_capture_appending_to_a_cached_day_file_is_counted(run, several):
    now = {"MEMVAULT_NOW": "2026-11-03T08:00:00Z"}
    run("capture", "--format", "text", "--project", "garage", input="User: the opener takes a CR2032\n"
        "Assistant: noted\n", env=now)
    age(several)
    assert counted(run) == parsed(several)
    assert cached(several) == day_files(several)
    today = several / "episodes" / "2026" / "11" / "2026-11-03.jsonl"
    size = today.stat().st_size
    run("capture", "--format", "text", "--project", "车库", input="User: 车库门遥控器换了电池\n"
        "Assistant: 好的\n", env=now)
    assert today.stat().st_size > size  # appended to the cached file, no new one
    after = counted(run)
    assert after == parsed(several)
    assert after["episodes_by_project"]["车库"] == 1 and after["episodes"] == 7


def test_hand_edits_of_day_files_are_counted(run, several):
    age(several)
    assert counted(run) == parsed(several)
    day1 = several / "episodes" / "2026" / "11" / "2026-11-01.jsonl"
    # In place, same size, and the old times put back (what `cp -p` or `rsync -t` leave): only ctime moves.
    st = day1.stat()
    data = day1.read_bytes()
    with open(day1, "r+b") as fh:
        fh.write(data.replace(b'"project":"shop"', b'"project":"shoq"'))
    os.utime(day1, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (day1.stat().st_size, day1.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    edited = counted(run)
    assert edited == parsed(several) and "shoq" in edited["episodes_by_project"]
    # An editor's save: a new file renamed over the old one, a line fewer.
    age(several)
    counted(run)
    lines = day1.read_text(encoding="utf-8").splitlines(keepends=True)
    tmp = day1.with_name(".edit.tmp")
    tmp.write_text("".join(lines[:-1]), encoding="utf-8")
    os.replace(tmp, day1)
    age(several)
    assert counted(run) == parsed(several)
    # A day file deleted: its turns go, and the revoke it held no longer withdraws anything.
    (several / "episodes" / "2026" / "11" / "2026-11-02.jsonl").unlink()
    gone = counted(run)
    assert gone == parsed(several) and gone["damaged"] == 0 and "home" not in gone["episodes_by_project"]


def test_forget_purge_with_episodes_is_counted(run, vault):
    run("capture", "--format", "text", "--project", "homelab", input="User: Quick context: the NAS IP is "
        "192.168.1.40 and it runs TrueNAS Scale.\nAssistant: Noted.\nUser: 记住：服务器端口是 8080。\n"
        "Assistant: 记下了。\n", env={"MEMVAULT_NOW": "2026-11-03T08:00:00Z"})
    run("distill", env={"MEMVAULT_NOW": "2026-11-03T09:00:00Z"})
    port = next(c["id"] for c in run.json("timeline")["entries"] if "8080" in c["title"])
    age(vault)
    before = counted(run)
    assert before == parsed(vault) and before["episodes"] == 2 and before["pending_episodes"] == 0
    assert cached(vault) == day_files(vault)
    run("forget", port, "--purge", "--with-episodes")  # its turn leaves the day file; a revoke line is added
    after = counted(run)
    assert after == parsed(vault) and after["episodes"] == 1
