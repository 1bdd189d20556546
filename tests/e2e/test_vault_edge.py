"""The vault's edge (issue 38): links that lead out of the vault — a symlinked month folder, a linked card, a
linked episode month, as a `git pull` can plant — are neither read nor written. `search`, `show`, `export` and
`timeline` do not see what they point to; `doctor --fix`, `forget`, `consolidate`, `distill`, `remember` and
`capture` change no byte outside (a write that would go through such a link is refused, exit 3, naming it);
`doctor` names every such link. Real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from test_distill_offline import TURNS, make_vault, memvault

from memvault.model import Card
from memvault.vault import codec

API_KEY = "sk-proj-" + "Z9" * 16


def outside_tree(base: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(base).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(base.rglob("*")) if p.is_file()}


def put_card(folder: Path, cid: str, title: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    card = Card(id=cid, kind="fact", title=title, body=body, project="demo", entities=("walrus",),
                created="2026-10-01T08:00:00Z", valid_from="2026-10-01", source={"kind": "remember"})
    (folder / f"{cid}.md").write_text(codec.card_to_text(card), encoding="utf-8")


def test_links_out_of_the_vault_are_not_read_not_written_and_doctor_names_them(tmp_path):
    vault = make_vault(tmp_path / "v", TURNS[:8])
    assert memvault(vault, "distill").returncode == 0
    out = tmp_path / "elsewhere"
    put_card(out / "month", "c-20261001-out001", "Walrus colony census", "The walrus count is 41.")
    # a secret in clear out there: doctor --fix once rewrote the outside file to redact it
    put_card(out / "single", "c-20261101-out002", "Walrus feeding times",
             f"Feeding at noon; the key {API_KEY} was pasted here.")
    (out / "ep").mkdir()
    (out / "ep/2026-10-05.jsonl").write_text(json.dumps(
        {"v": 1, "id": "ep-20261005T070000Z-000001", "at": "2026-10-05T07:00:00Z", "project": "demo",
         "session": "s9", "turn": 1, "user": "walrus tusks", "assistant": "ok", "tools": 0,
         "source": {"kind": "jsonl", "host": "h", "ref": "x"}, "hash": "sha256:1"}, sort_keys=True,
        separators=(",", ":")) + "\n", encoding="utf-8")
    os.symlink(out / "month", vault / "cards/2026-10")
    os.symlink(out / "single/c-20261101-out002.md", vault / "cards/2026-11/c-20261101-out002.md")
    os.symlink(out / "ep", vault / "episodes/2026/10")
    os.symlink(out / "month", vault / "cards/2026-12")  # where a card written in December would go
    (out / "harbour.md").write_text("---\nname: Harbour\naliases: []\nkind: null\n---\n", encoding="utf-8")
    os.symlink(out / "harbour.md", vault / "entities/harbour.md")
    before = outside_tree(out)

    # reading: nothing from outside
    assert memvault(vault, "search", "walrus").returncode == 1
    assert memvault(vault, "show", "c-20261001-out001").returncode == 1
    bundle = memvault(vault, "export")
    assert bundle.returncode == 0 and "walrus" not in bundle.stdout.lower()
    assert "walrus" not in memvault(vault, "timeline").stdout.lower()
    assert "walrus" not in memvault(vault, "context", "walrus").stdout.lower()

    # doctor names each link; --fix redacts nothing out there and still reports them
    doc = memvault(vault, "doctor", "--json")
    report = json.loads(doc.stdout)
    assert doc.returncode == 3
    named = [p for p in report["problems"] if "a link out of the vault" in p]
    assert sorted(p.split(":")[0] for p in named) == ["cards/2026-10", "cards/2026-11/c-20261101-out002.md",
                                                     "cards/2026-12", "entities/harbour.md", "episodes/2026/10"]
    assert not any("secret in clear" in p for p in report["problems"])
    fixed = memvault(vault, "doctor", "--fix", "--json")
    assert fixed.returncode == 3 and not any("out002" in f for f in json.loads(fixed.stdout)["fixed"])

    # writing: forget, consolidate, distill, capture change nothing outside
    (card,) = json.loads(memvault(vault, "search", "Jellyfin", "--json", "--cards-only", "--limit", "1").stdout)["hits"]
    assert memvault(vault, "forget", card["id"], "--purge", "--with-episodes").returncode == 0
    assert memvault(vault, "consolidate", extra_env={"MEMVAULT_NOW": "2027-06-01T08:00:00Z"}).returncode == 0
    assert memvault(vault, "capture", "--format", "text", input="User: the walrus moved\nAssistant: ok\n").returncode == 0
    assert memvault(vault, "distill").returncode == 0
    # a card that would be written through a link is refused, naming it
    refused = memvault(vault, "remember", "Walrus watch in December", extra_env={"MEMVAULT_NOW": "2026-12-05T08:00:00Z"})
    assert refused.returncode == 3 and "cards/2026-12" in refused.stderr and "outside the vault" in refused.stderr
    page = memvault(vault, "remember", "Harbour opens at six", "-e", "harbour")  # its page is a link out
    assert page.returncode == 3 and "entities/harbour.md" in page.stderr and "outside the vault" in page.stderr
    assert outside_tree(out) == before  # not one byte, not one mtime
    assert memvault(vault, "search", "walrus").returncode in (0, 1)
    assert "out00" not in memvault(vault, "search", "walrus", "--json").stdout
