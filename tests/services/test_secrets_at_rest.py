"""Issue 8 item 1: no writer puts a secret on disk, and doctor finds (and --fix redacts) one in any vault file.

Secret-shaped values are built at run time; none is a literal in the repository.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from conftest import ROOT, Runner

NOW = {"MEMVAULT_NOW": "2026-11-02T08:00:00Z"}


def openai_key() -> str:
    rng = random.SystemRandom()
    return "sk-" + "proj-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def github_pat() -> str:
    rng = random.SystemRandom()
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def files_with(root: Path, needle: str) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and needle.encode() in p.read_bytes())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_remember_redacts_every_field_before_writing(run, vault, lang):
    key = openai_key()
    title = f"Token {key} is used for deploys" if lang == "en" else f"部署用的令牌是{key}，别外传"
    out = run.json("remember", title, "--kind", "state", "--body", f"body {key}。", "-e", f"CI,{key}",
                   "--subject", f"svc {key}", "--field", "token", "--value", key, env=NOW)
    assert files_with(vault, key) == []  # card, entity pages, journal: nowhere
    text = (vault / out["path"]).read_text(encoding="utf-8")
    assert text.count("[REDACTED:openai-api-key]") >= 4
    assert all(key not in p.name for p in (vault / "entities").iterdir())
    assert run.json("doctor")["ok"] is True


def test_retract_rewrites_a_hand_edited_card_without_its_secret(run, vault):
    key = github_pat()
    card = run.json("remember", "Deploy notes", "--kind", "fact", "--body", "see wiki", "-e", "deploy", env=NOW)
    path = vault / card["path"]
    path.write_text(path.read_text(encoding="utf-8").replace("see wiki", f"token {key}"), encoding="utf-8")
    run("forget", card["id"], "--retract", "--reason", "old")
    assert files_with(vault, key) == []  # the card and the journal's before-image
    assert "[REDACTED:github-pat]" in path.read_text(encoding="utf-8")


def test_import_redacts_titles_tags_values_and_entity_pages(run, vault, tmp_path):
    key = openai_key()
    card = run.json("remember", "Deploy notes", "--kind", "fact", "-e", "deploy", env=NOW)
    path = vault / card["path"]
    text = path.read_text(encoding="utf-8")
    text = text.replace("title: Deploy notes", f"title: 密钥 {key}").replace("tags: []", f"tags: [ops, '{key}']")
    path.write_text(text, encoding="utf-8")
    page = vault / "entities" / "deploy.md"
    page.write_text(page.read_text(encoding="utf-8").replace("<!-- memvault:begin -->",
                                                             f"Ops key {key}\n\n<!-- memvault:begin -->"),
                    encoding="utf-8")
    bundle = tmp_path / "b.json"
    run("export", "-o", str(bundle), env=NOW)
    other = tmp_path / "other"
    other.mkdir()
    import shutil

    shutil.copytree(ROOT / "vault-template", other / "v")
    res = Runner(other / "v").json("import", str(bundle), env=NOW)
    assert res["imported"] == 1
    assert files_with(other / "v", key) == []
    copied = next((other / "v" / "cards").glob(f"*/{card['id']}.md")).read_text(encoding="utf-8")
    assert "title: 密钥 [REDACTED:openai-api-key]" in copied
    assert "Ops key [REDACTED:openai-api-key]" in (other / "v" / "entities" / "deploy.md").read_text("utf-8")
    # Importing the same bundle again finds the card identical (compared in its redacted form), not a conflict.
    again = Runner(other / "v").json("import", str(bundle), env=NOW)
    assert again["identical"] == 1 and again["conflicts"] == 0


def _plant(vault: Path, key: str, zh_key: str) -> dict[str, int]:
    """A secret in every kind of vault file; returns rel path -> the line it is on."""
    card = vault / "cards" / "2026-11" / "c-20261102-aaaa.md"
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text("---\nid: c-20261102-aaaa\nkind: fact\ntitle: Deploy token\n---\n"
                    f"The deploy token is {key} for now.\n", encoding="utf-8")
    card2 = vault / "cards" / "2026-11" / "c-20261102-bbbb.md"
    card2.write_text(f"---\nid: c-20261102-bbbb\nkind: fact\ntitle: {key} rotated\n---\n轮换了。\n", encoding="utf-8")
    (vault / "entities").mkdir(exist_ok=True)
    (vault / "entities" / "ops.md").write_text(f"---\nname: ops\n---\n运维密钥：{zh_key}\n\n<!-- memvault:begin -->\n"
                                               "<!-- memvault:end -->\n", encoding="utf-8")
    day = vault / "episodes" / "2026" / "11" / "2026-11-02.jsonl"
    day.parent.mkdir(parents=True, exist_ok=True)
    ok = {"v": 1, "type": "episode", "id": "ep-1", "at": "2026-11-02T08:00:00Z", "project": "p", "session": "s",
          "turn": 1, "user": "hello there friend", "assistant": "hi", "hash": "sha256:1"}
    bad = dict(ok, id="ep-2", turn=2, user=f"my key is {key}，记住", hash="sha256:2")
    day.write_text(json.dumps(ok) + "\n" + json.dumps(bad, ensure_ascii=False) + "\n", encoding="utf-8")
    journal = vault / "journal" / "2026-11.jsonl"
    journal.parent.mkdir(exist_ok=True)
    journal.write_text(json.dumps({"v": 1, "type": "note", "at": "2026-11-02T08:00:00Z", "text": zh_key}) + "\n",
                       encoding="utf-8")
    audit = vault / "audit" / "2026-11.log"
    audit.parent.mkdir(exist_ok=True)
    audit.write_text("{}\n" + json.dumps({"at": "x", "note": f"Bearer {key}"}) + "\n", encoding="utf-8")
    cfg = vault / "memvault.yaml"
    lines = cfg.read_text(encoding="utf-8").splitlines()
    cfg.write_text("\n".join(lines) + f"\nnotes: 'ask ops for {key}'\n", encoding="utf-8")
    return {"cards/2026-11/c-20261102-aaaa.md": 6, "cards/2026-11/c-20261102-bbbb.md": 4, "entities/ops.md": 4,
            "episodes/2026/11/2026-11-02.jsonl": 2, "journal/2026-11.jsonl": 1, "audit/2026-11.log": 2,
            "memvault.yaml": len(lines) + 1}


def test_doctor_flags_a_secret_in_every_vault_file_then_fix_redacts_it(run, vault):
    key, zh_key = openai_key(), github_pat()
    where = _plant(vault, key, zh_key)
    res = run("doctor", code=3)
    for rel, line in where.items():
        assert any(p.startswith(f"{rel}:{line}: secret in clear (rule ") for p in res.stdout.splitlines()), rel
    assert key not in res.stdout + res.stderr and zh_key not in res.stdout + res.stderr
    data = json.loads(run("doctor", "--json", code=3).stdout)
    assert key not in json.dumps(data) and len([p for p in data["problems"] if "secret in clear" in p]) == 7
    day = vault / "episodes" / "2026" / "11" / "2026-11-02.jsonl"
    first_line = day.read_bytes().splitlines()[0]
    inode = day.stat().st_ino

    fixed = run("doctor", "--fix", code=0)
    assert files_with(vault, key) == [] and files_with(vault, zh_key) == []
    assert "secret(s) redacted" in fixed.stderr and key not in fixed.stdout + fixed.stderr
    assert run.json("doctor")["ok"] is True  # every file still parses
    lines = day.read_bytes().splitlines()
    assert lines[0] == first_line  # untouched lines keep their bytes
    assert json.loads(lines[1])["user"] == "my key is [REDACTED:openai-api-key]，记住"
    assert day.stat().st_ino != inode  # replaced (temp file + os.replace), not written over in place
    assert not [p for p in vault.rglob("*.tmp")]
    card = (vault / "cards/2026-11/c-20261102-bbbb.md").read_text(encoding="utf-8")
    assert "title: '[REDACTED:openai-api-key] rotated'" in card
    assert run.json("search", "rotated")["hits"]  # the rewritten card is still a card


def test_doctor_fix_quotes_a_yaml_value_that_would_start_with_the_marker(run, vault):
    key = openai_key()
    cfg = vault / "memvault.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + f"secret_note: {key}  # 注释\n", encoding="utf-8")
    run("doctor", code=3)
    run("doctor", "--fix", code=0)
    assert key not in cfg.read_text(encoding="utf-8")
    assert cfg.read_text(encoding="utf-8").endswith("secret_note: '[REDACTED:openai-api-key]'  # 注释\n")
    run("stats")  # the settings file still loads
