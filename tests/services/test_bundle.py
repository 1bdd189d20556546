"""export / import: byte-identical round trip, idempotence, conflicts, prose merge, hostile bundles, the lock."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, Runner
from memvault.views.bundle import parse_bundle, safe_slug
from memvault.errors import InputError
from memvault.distill.remember import LOCK_WHAT
from memvault.vault.store import Vault

NOW = {"MEMVAULT_NOW": "2026-11-02T08:00:00Z"}
KINDS = ("decision", "fact", "preference", "rule", "state")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root except the derived .memvault/ folder."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(root).parts}


@pytest.fixture
def source(run, vault):
    """A vault with English and Chinese cards, a supersede chain, a state card and a page with prose."""
    old = run.json("remember", "Use SQLite for the cart", "--kind", "decision", "-e", "sqlite", "-e", "cart",
                   "--project", "shop", "--body", "One file.", env=NOW)["id"]
    run.json("remember", "Use Postgres for the cart", "--kind", "decision", "-e", "PostgreSQL", "-e", "cart",
             "--project", "shop", "--supersedes", old, env={"MEMVAULT_NOW": "2026-11-05T08:00:00Z"})
    run.json("remember", "回答要简洁，用中文", "--kind", "preference", "--body", "用户喜欢简短的回答。", env=NOW)
    run.json("remember", "Alice lives in Berlin", "--kind", "state", "--subject", "alice", "--field", "city",
             "--value", "Berlin", "-e", "Alice", env=NOW)
    run.json("remember", "雾港的灯塔每晚九点亮", "--kind", "fact", "-e", "雾港", "--project", "novel", env=NOW)
    page = vault / "entities" / "postgresql.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("<!-- memvault:begin -->", "Our main database since November.\n\n"
                                 "<!-- memvault:begin -->"), encoding="utf-8")
    return vault


def fresh(tmp_path, name="other") -> Runner:
    target = tmp_path / name
    shutil.copytree(ROOT / "vault-template", target)
    return Runner(target)


def test_round_trip_into_a_fresh_vault_is_byte_identical(source, run, tmp_path):
    out = tmp_path / "bundle.json"
    run("export", "--output", str(out), env=NOW)
    bundle = json.loads(out.read_text(encoding="utf-8"))
    assert bundle["format"] == "memvault-bundle" and bundle["schema"] == 1
    assert [c["id"] for c in bundle["cards"]] == sorted(c["id"] for c in bundle["cards"]) and len(bundle["cards"]) == 5
    assert list(bundle["cards"][0])[:3] == ["id", "kind", "title"] and "body" in bundle["cards"][0]
    pg = next(e for e in bundle["entities"] if e["slug"] == "postgresql")
    assert pg["prose"] == "Our main database since November." and "memvault:begin" not in json.dumps(bundle)
    assert "雾港" in [e["slug"] for e in bundle["entities"]]
    assert run("export", env=NOW).stdout == out.read_text(encoding="utf-8")  # deterministic

    other = fresh(tmp_path)
    summary = other.json("import", str(out), env=NOW)
    assert summary["imported"] == 5 and summary["identical"] == 0 and summary["conflicts"] == 0
    a, b = tree(source), tree(other.vault)
    for rel in [r for r in a if r.startswith(("cards/", "entities/"))]:
        assert b.get(rel) == a[rel], rel
    assert {r for r in b if r.startswith(("cards/", "entities/"))} == {r for r in a if r.startswith(("cards/", "entities/"))}
    journal = [json.loads(ln) for p in sorted((other.vault / "journal").glob("*.jsonl"))
               for ln in p.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in journal] == ["import"] and len(journal[0]["created"]) == 5
    # Search in the new vault finds what was imported.
    hits = other.json("search", "灯塔")["hits"]
    assert hits and hits[0]["title"] == "雾港的灯塔每晚九点亮"

    before = tree(other.vault)
    again = other("import", str(out), env=NOW).stdout
    assert "imported 0, 5 identical, 0 conflicts" in again
    assert tree(other.vault) == before  # nothing written, not even a journal line


def test_conflicts_keep_the_vault_card_and_are_reported(source, run, tmp_path):
    out = tmp_path / "b.json"
    run("export", "-o", str(out), env=NOW)
    other = fresh(tmp_path)
    other("import", str(out), env=NOW)
    card = next((other.vault / "cards").glob("*/*.md"))
    edited = card.read_text(encoding="utf-8").replace("---\n", "---\n", 1) + "A line the other vault added.\n"
    card.write_text(edited, encoding="utf-8")
    res = other("import", str(out), env=NOW)
    assert "imported 0, 4 identical, 1 conflicts" in res.stdout
    assert f"conflict: {card.stem}" in res.stderr
    assert card.read_text(encoding="utf-8") == edited


def test_prose_merges_only_into_pages_without_prose(source, run, tmp_path):
    out = tmp_path / "b.json"
    run("export", "-o", str(out), env=NOW)
    bundle = json.loads(out.read_text(encoding="utf-8"))
    for e in bundle["entities"]:
        e["prose"] = f"Notes about {e['slug']} from the laptop."
    out.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    other = fresh(tmp_path)
    other.json("remember", "Cart totals include VAT", "-e", "cart", env=NOW)
    other.vault.joinpath("entities", "sqlite.md").write_text(
        "---\nname: sqlite\naliases: []\nkind: null\n---\nMine, keep it.\n\n<!-- memvault:begin -->\n"
        "<!-- memvault:end -->\n", encoding="utf-8")
    data = other.json("import", str(out), env=NOW)
    assert "cart" in data["entities"]["merged"] and "sqlite" in data["entities"]["kept"]
    assert "Notes about cart from the laptop." in (other.vault / "entities" / "cart.md").read_text(encoding="utf-8")
    sqlite_page = (other.vault / "entities" / "sqlite.md").read_text(encoding="utf-8")
    assert "Mine, keep it." in sqlite_page and "laptop" not in sqlite_page
    assert "[[" in sqlite_page  # the generated block now lists the imported card


def test_dry_run_writes_nothing(source, run, tmp_path):
    out = tmp_path / "b.json"
    run("export", "-o", str(out), env=NOW)
    other = fresh(tmp_path)
    before = tree(other.vault)
    res = other("import", str(out), "--dry-run", env=NOW)
    assert "would import 5" in res.stdout and tree(other.vault) == before


def test_export_project_takes_only_that_project(source, run):
    data = json.loads(run("export", "--project", "novel", env=NOW).stdout)
    assert [c["project"] for c in data["cards"]] == ["novel"]
    assert [e["slug"] for e in data["entities"]] == ["雾港"] and data["project"] == "novel"


HOSTILE = [
    ("cards", 0, "id", "../../../etc/passwd", "cards[0].id"),
    ("cards", 0, "id", "a/b", "cards[0].id"),
    ("cards", 0, "id", "c-1\x00x", "NUL"),
    ("cards", 0, "created", "..//-../x", "cards[0].created"),
    ("cards", 0, "entities", ["../../outside"], "cards[0].entities"),
    ("cards", 0, "entities", ["a/b"], "cards[0].entities"),
    ("cards", 0, "kind", "malware", "cards[0].kind"),
    ("cards", 0, "status", "deleted", "cards[0].status"),
    ("cards", 0, "supersedes", ["../x"], "cards[0].supersedes"),
    ("cards", 0, "body", "text\x00more", "NUL"),
    ("entities", 0, "slug", "../../evil", "entities[0].slug"),
    ("entities", 0, "slug", "a/b", "entities[0].slug"),
    ("entities", 0, "slug", "x\x00y", "entities[0].slug"),
    ("entities", 0, "slug", "..", "entities[0].slug"),
    ("entities", 0, "slug", "CON", "entities[0].slug"),
    ("entities", 0, "prose", "x\n<!-- memvault:begin -->\n- [[fake]]", "entities[0].prose"),
]


@pytest.mark.parametrize("section,index,key,value,named", HOSTILE)
def test_hostile_bundle_is_refused_and_nothing_is_written(source, run, tmp_path, section, index, key, value, named):
    out = tmp_path / "b.json"
    run("export", "-o", str(out), env=NOW)
    bundle = json.loads(out.read_text(encoding="utf-8"))
    bundle[section][index][key] = value
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps(bundle), encoding="utf-8")
    other = fresh(tmp_path)
    before_vault, before_tmp = tree(other.vault), sorted(p.name for p in tmp_path.iterdir())
    res = other("import", str(evil), env=NOW, code=2)
    assert "refused, nothing written" in res.stderr and named in res.stderr
    for shown in (value if isinstance(value, list) else [value]):
        assert shown not in res.stderr  # problems are named by position, never by the hostile text
    assert tree(other.vault) == before_vault
    assert sorted(p.name for p in tmp_path.iterdir()) == before_tmp


@pytest.mark.parametrize("raw,message", [
    (b"not json", "invalid JSON"),
    (b"\xff\xfe", "not valid UTF-8"),
    (json.dumps({"format": "memvault-bundle", "schema": 2, "cards": []}).encode(), "schema"),
    (json.dumps({"format": "something-else", "schema": 1}).encode(), "not a memvault bundle"),
    (json.dumps({"format": "memvault-bundle", "schema": True}).encode(), "schema"),
    (json.dumps({"format": "memvault-bundle", "schema": 1, "cards": {"id": "x"}}).encode(), "cards must be a list"),
])
def test_malformed_bundles_are_refused(raw, message):
    with pytest.raises(InputError) as exc:
        parse_bundle(raw, "b.json", KINDS)
    assert message in exc.value.message and exc.value.exit_code == 2


def test_duplicate_ids_in_a_bundle_are_refused(source, run):
    bundle = json.loads(run("export", env=NOW).stdout)
    bundle["cards"].append(copy.deepcopy(bundle["cards"][0]))
    with pytest.raises(InputError, match="appears twice"):
        parse_bundle(json.dumps(bundle).encode(), "b.json", KINDS)


def test_safe_slug_follows_slug_rules():
    for good in ("postgres", "雾港", "c-1a2b3c", "con-1a2b3c", "under_score"):
        assert safe_slug(good), good
    for bad in ("", "..", "a/b", "a\\b", "a.b", "x\x00", "con", "Postgres", "a\nb", "-x", 5, None):
        assert not safe_slug(bad), bad


def test_import_takes_the_distill_lock(source, run, tmp_path):
    out = tmp_path / "b.json"
    run("export", "-o", str(out), env=NOW)
    other = fresh(tmp_path)
    before = tree(other.vault)
    with Vault.open(other.vault, os.environ).exclusive("distill", LOCK_WHAT):
        res = other("import", str(out), env=NOW, code=4)
    assert "already running" in res.stderr and tree(other.vault) == before
    assert other.json("import", str(out), env=NOW)["imported"] == 5


def test_import_reads_stdin_and_export_warns_about_flagged_cards(run, vault, tmp_path):
    cid = run.json("remember", "Deploy token location", "--kind", "fact", "--body", "see vault", env=NOW)["id"]
    path = next((vault / "cards").glob(f"*/{cid}.md"))
    key = "ghp" + "_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    path.write_text(path.read_text(encoding="utf-8").replace("see vault", f"token {key}"), encoding="utf-8")
    res = run("export", env=NOW)
    assert f"1 cards hold text the redaction rules flag: {cid}" in res.stderr and key not in res.stderr
    assert key in res.stdout  # a lossless copy: the warning is how the person learns of it
    other = fresh(tmp_path)
    assert other.json("import", "-", input=res.stdout.encode("utf-8"), env=NOW)["imported"] == 1
    # Import redacts before it writes (issue 8 item 1): the copy holds the marker, never the key.
    copied = next((other.vault / "cards").glob(f"*/{cid}.md")).read_text(encoding="utf-8")
    assert key not in copied and "[REDACTED:github-pat]" in copied
    assert copied == path.read_text(encoding="utf-8").replace(key, "[REDACTED:github-pat]")
