"""Issue 32's examples, each through the real CLI in real processes with the offline engine: a decision keeps what
it names, a change of state supersedes the old card (and `conflicts` leaves nothing open), a redacted value alone
makes no card, a French project log gives cards for its decisions and instructions, and a two-person chat gives
memories in canonical form (the speaker's name as subject, relative dates absolute), not copied sentences."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import frontmatter

ROOT = Path(__file__).resolve().parents[2]


def cli(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return subprocess.run([sys.executable, "-m", "memvault", "--vault", str(root), *args], input=stdin,
                          capture_output=True, text=True, env=env, cwd=root.parent)


def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    assert cli(root, "init", str(root)).returncode == 0
    return root


def chat(turns: list[tuple[str, str]], **extra) -> str:
    lines = []
    for user, assistant in turns:
        lines.append(json.dumps({"role": "user", "content": user, **extra}, ensure_ascii=False))
        lines.append(json.dumps({"role": "assistant", "content": assistant, **extra}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def cards(root: Path) -> list[frontmatter.Post]:
    return [frontmatter.load(p) for p in sorted((root / "cards").rglob("*.md"))]


def distil(root: Path, text: str, *capture_args: str) -> list[frontmatter.Post]:
    done = cli(root, "capture", "--format", "jsonl", "--project", "shop", *capture_args, stdin=text)
    assert done.returncode == 0, done.stderr
    done = cli(root, "distill", "--json")
    assert done.returncode == 0, done.stderr
    return cards(root)


def test_a_decision_card_names_everything_decided(tmp_path):
    got = distil(vault(tmp_path), chat([("决定了，用 Astro，部署到 Cloudflare Pages。", "好的。")]))
    decisions = [c for c in got if c["kind"] == "decision"]
    assert len(decisions) == 1, [c["title"] for c in got]
    assert "Astro" in decisions[0]["title"] and "Cloudflare Pages" in decisions[0]["title"]
    assert {"astro", "cloudflare-pages"} <= set(decisions[0]["entities"])


def test_now_x_not_y_supersedes_the_old_card_and_conflicts_agrees(tmp_path):
    root = vault(tmp_path)
    first = distil(root, chat([("The deploy target is Fly.io.", "OK.")]))
    assert [c["status"] for c in first] == ["active"] and "Fly.io" in first[0]["title"]
    got = distil(root, chat([("Actually we switched: the deploy target is now Hetzner, not Fly.io.", "Noted.")],
                            session="s2"))
    old = next(c for c in got if c["id"] == first[0]["id"])
    new = next(c for c in got if c["id"] != first[0]["id"])
    assert old["status"] == "superseded" and old["superseded_by"] == [new["id"]]
    assert new["status"] == "active" and "Hetzner" in new["title"] and new["supersedes"] == [old["id"]]
    done = cli(root, "conflicts", "--json")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout or "{}").get("conflicts", []) == []
    hits = json.loads(cli(root, "search", "where do we deploy", "--cards-only", "--json").stdout)["hits"]
    assert hits[0]["id"] == new["id"]


def test_a_redacted_value_alone_makes_no_card(tmp_path):
    got = distil(vault(tmp_path), chat([("我的邮箱是 alice@example.com", "记下了。"),
                                        ("My email is bob@example.org", "Noted.")]))
    assert got == [], [c["title"] for c in got]


def test_a_french_project_log_gives_cards_for_its_decisions_and_instructions(tmp_path):
    root = vault(tmp_path)
    log = ROOT / "eval" / "distill" / "inputs" / "claude-code-projet-fr.jsonl"
    assert cli(root, "capture", str(log)).returncode == 0
    done = cli(root, "distill", "--json")
    assert done.returncode == 0, done.stderr
    titles = " | ".join(c["title"] for c in cards(root))
    for name in ("FastAPI", "PostgreSQL 16", "SQLAlchemy 2", "logging", "Conventional Commits", "300"):
        assert name in titles, (name, titles)
    kinds = {c["kind"] for c in cards(root)}
    assert {"decision", "rule"} <= kinds, kinds


def test_a_two_person_chat_gives_memories_not_copied_sentences(tmp_path):
    turns = [("Hey Mel! Good to see you! How have you been?", "Hey Caroline! Swamped with the kids & work."),
             ("I went to a LGBTQ support group yesterday and it was so powerful.", "Wow, that's cool, Caroline!"),
             ("Thanks Mel! You're so sweet.", "Always here to cheer you on!")]
    lines = []
    for n, (user, assistant) in enumerate(turns):
        for role, who, text in (("user", "Caroline", user), ("assistant", "Melanie", assistant)):
            lines.append(json.dumps({"role": role, "speaker": who, "content": text,
                                     "ts": "2023-05-08T13:56:00", "session": 1, "id": f"D1:{n}"}))
    got = distil(vault(tmp_path), "\n".join(lines) + "\n")
    titles = [c["title"] for c in got]
    assert titles == ["Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful"], titles
    assert str(got[0]["valid_from"]) == "2023-05-07"


def distilled(root, turns):
    """Capture `turns` and distil them: (the run's JSON summary, its stderr)."""
    assert cli(root, "capture", "--format", "jsonl", "--project", "p", stdin=chat(turns)).returncode == 0
    done = cli(root, "distill", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_turns_that_give_nothing_are_counted_and_said_with_their_reason(tmp_path):
    root = vault(tmp_path)
    summary, stderr = distilled(root, [("Merci beaucoup, c'est parfait pour aujourd'hui.", "Avec plaisir."),
                                       ("안녕하세요, 오늘 날씨가 좋네요.", "네, 정말 좋네요."),
                                       ("On part sur FastAPI pour l'API, pas Flask.", "Compris."),
                                       ("Thanks, see you tomorrow!", "Bye!")])
    assert summary["nothing"] == {"unread_language": 2, "no_statement": 1}, summary
    assert summary["cards"]["created"] == 1
    # said even in a pipe (cron's mail): the fix is a setting away
    assert "2 turns are in a language the offline engine does not read" in stderr
    assert "distill --upgrade" in stderr and "llm.base_url" in stderr
    stats = json.loads(cli(root, "stats", "--json").stdout)
    assert stats["episodes_without_cards"] == {"unread_language": 2, "no_statement": 1}
    doctor = cli(root, "doctor")
    assert doctor.returncode == 0 and "2 episodes are in a language the offline engine does not read" in doctor.stderr


def test_a_pack_pins_stated_rules_not_a_persons_likes_and_puts_the_answer_first(tmp_path):
    root = vault(tmp_path)
    rows = []
    for n, (who, text) in enumerate([("Gina", "I love dancing, it's my favourite thing in the world."),
                                     ("Jon", "I really enjoy long walks on the beach with my dog."),
                                     ("Gina", "I also lost my job at DoorDash this month."),
                                     ("Jon", "Sorry to hear that, Gina.")]):
        rows.append(json.dumps({"role": "user" if n % 2 == 0 else "assistant", "speaker": who, "content": text,
                                "ts": "2023-01-20T10:00:00", "session": 1, "id": f"D1:{n}"}))
    distil(root, "\n".join(rows) + "\n")
    assert cli(root, "remember", "Always answer in English", "--kind", "rule").returncode == 0
    likes = [c for c in cards(root) if c["kind"] == "preference"]
    assert likes and all("life" in c["tags"] for c in likes), [(c["title"], c["tags"]) for c in cards(root)]
    done = cli(root, "context", "When did Gina lose her job?", "--json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)["cards"]
    assert "DoorDash" in entries[0]["title"], entries
    pinned = [e for e in entries if e["pinned"]]
    assert [e["title"] for e in pinned] == ["Always answer in English"], pinned


def test_an_entity_page_in_the_flat_layout_of_before_is_a_warning_and_reindex_makes_it_a_profile(tmp_path):
    root = vault(tmp_path)
    distil(root, chat([("The deploy target is Fly.io.", "OK.")]))
    distil(root, chat([("Actually we switched: the deploy target is now Hetzner, not Fly.io.", "Noted.")],
                       session="s2"))
    page = root / "entities" / "fly-io.md"
    text = page.read_text(encoding="utf-8")
    assert "**Now**" in text and "**History**" in text, text
    links = [ln for ln in text.splitlines() if ln.startswith("- [[")]
    assert len(links) == 2 and "· superseded" in text.split("**History**")[1]
    # the layout of before this stop: the same lines, flat
    head, _, rest = text.partition("<!-- memvault:begin -->\n")
    _block, _, tail = rest.partition("<!-- memvault:end -->")
    page.write_text(head + "<!-- memvault:begin -->\n" + "\n".join(links) + "\n<!-- memvault:end -->" + tail,
                    encoding="utf-8")
    done = cli(root, "doctor")
    assert done.returncode == 0 and "previous layout" in done.stderr, done.stderr
    page.write_text(head + "<!-- memvault:begin -->\n" + links[0] + "\n<!-- memvault:end -->" + tail,
                    encoding="utf-8")  # a card missing: damage, as before
    assert cli(root, "doctor").returncode == 3
    assert cli(root, "reindex").returncode == 0
    assert page.read_text(encoding="utf-8") == text


def test_a_korean_and_a_german_log_give_one_card_per_instruction_and_none_for_negations_or_thanks(tmp_path):
    root = vault(tmp_path)
    got = distil(root, chat([
        ("앱은 Kotlin 으로 만들기로 했어요. Java 는 안 써요.", "좋아요."),
        ("대답은 항상 존댓말로 해 주시고, 변수 이름은 영어로 써 주세요.", "네."),
        ("develop 브랜치에 직접 커밋 금지, 무조건 MR 로 올려야 해요.", "알겠습니다."),
        ("Docker 설정 감사합니다!", "천만에요."),
        ("Wir nehmen Caddy als Proxy für alle Dienste. Nginx nutzen wir nicht mehr.", "Alles klar."),
        ("Vielleicht nehmen wir irgendwann Traefik 3.", "Gern."),
    ]))
    by_title = {c["title"]: c["kind"] for c in got}
    assert by_title == {
        "앱은 Kotlin 으로 만들기로 했어요、Java 는 안 써요": "decision",
        "대답은 항상 존댓말로 해 주시고": "preference",
        "변수 이름은 영어로 써 주세요": "preference",
        "develop 브랜치에 직접 커밋 금지、무조건 MR 로 올려야 해요": "rule",
        "Wir nehmen Caddy als Proxy für alle Dienste, Nginx nutzen wir nicht mehr": "decision",
    }, by_title


def test_a_change_of_state_in_japanese_or_spanish_supersedes_the_card_that_held_the_old_value(tmp_path):
    root = vault(tmp_path)
    first = distil(root, chat([("ステージング環境は Heroku で動いています。", "了解です。"),
                               ("El CDN es Cloudflare desde el principio del proyecto.", "Vale.")]))
    assert sorted(c["status"] for c in first) == ["active", "active"], [c["title"] for c in first]
    got = distil(root, chat([("ステージング環境を Heroku から Fly.io に移行しました。", "お疲れさまです。"),
                             ("Dejamos Cloudflare y pasamos el CDN a Bunny por el precio.", "Entendido.")],
                            session="s2"))
    changes = {c["title"]: c for c in got if c["kind"] == "state"}
    assert set(changes) == {"ステージング環境: Fly.io (was Heroku)", "Bunny (was Cloudflare)"}, [c["title"] for c in got]
    for old in first:
        now = next(c for c in got if c["id"] == old["id"])
        assert now["status"] == "superseded" and len(now["superseded_by"]) == 1, now["title"]
        assert changes[next(t for t, c in changes.items() if c["id"] == now["superseded_by"][0])]["supersedes"] == [
            old["id"]]
    done = cli(root, "conflicts", "--json")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout or "{}").get("conflicts", []) == []


def test_turns_in_a_script_no_table_reads_are_counted_as_unread_not_as_saying_nothing(tmp_path):
    """Russian, Arabic or Greek turns give no card offline (no table reads them); the run says why, so a person
    knows a model would read them, instead of 'no statement found'."""
    summary, stderr = distilled(vault(tmp_path), [
        ("Мы решили перейти с MySQL на PostgreSQL в следующем месяце.", "Хорошо, подготовлю план."),
        ("قررنا استخدام PostgreSQL بدلا من MySQL في المشروع.", "حسنا."),
        ("Αποφασίσαμε να χρησιμοποιήσουμε PostgreSQL.", "Εντάξει."),
        ("谢谢你今天陪我聊了这么久，真的很开心，我们明天再聊吧！", "好的，明天见！")])
    assert summary["nothing"] == {"unread_language": 3, "no_statement": 1}, summary
    assert "3 turns are in a language the offline engine does not read" in stderr
