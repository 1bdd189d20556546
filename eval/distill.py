"""Score a distill engine on the labelled extraction set: `python eval/distill.py --engine llm --fake oracle`.

The set (eval/distill/, see its README) is chat logs in every capture format plus labels.jsonl. This runner

1. makes a throw-away vault (`memvault init`) and captures every input file with the real CLI
   (`memvault capture FILE --project <file stem> --json`, one subprocess per file), which maps each label's
   episode key (`file#turn`, `file#session#turn`) to the episode id capture stored;
2. runs the engine with the real CLI (`memvault distill --json`) and times it;
3. reads the cards the engine wrote and scores them against the labels.

Engines (`--engine`):
  llm      `memvault distill` against an OpenAI-compatible endpoint: `--base-url URL --model NAME` (the key is
           read from the variable `--api-key-env` names), or `--fake MODE` to start tests/fake_llm.py with
           this file's `fake_reply` as its reply function. Modes: `oracle` replays the labels as the model's
           answer (must score 1.0 everywhere: it tests the scorer and the plumbing), `broken` corrupts that
           answer on purpose (drops, wrong kinds, no supersedes, no dates, speakers' names lost, cards on the
           nothing-set), `empty` answers `{"cards": []}`.
  offline, auto   `memvault distill` with `distill.engine` set to the name in the vault's memvault.yaml (for
           the offline engine of issue 10; until it exists these fail and the runner says so).

Matching a produced card to a label (one to one):
  - same episode: the label's episode is among the card's `source.episodes`;
  - same numbers: every digit run of the label's value (Chinese digits 一二三… read as 1 2 3…) occurs in the
    card's title, value or body ("1 minute" never matches "5 minutes", 8080 never matches 8096);
  - same value: strings are NFKC-normalised, case-folded, punctuation turned into spaces; the score is the
    best, over the card's title and (state cards) its value and "subject value", of rapidfuzz
    `token_set_ratio(label value, text)` and `partial_ratio(label value, text)`, and for a mostly-Chinese
    value of 4+ characters the share of its distinct characters found in the text (paraphrases reorder
    Chinese words: "整数存储，单位为分" ~ "金额用整数（分）存储"). A pair matches at >= MATCH_THRESHOLD (70).
  The subject is not scored: two cards of one episode differ in their values, and a shared subject word
  ("sync interval") would let a wrong value match. Pairs are assigned greedily, best score first (ties: label
  id, card id); a card or a label is used once.
Metrics (a ratio whose denominator is 0 is null, printed n/a):
  precision        matched cards / cards produced (all episodes)
  recall           matched labels / labelled cards
  kind_accuracy    matched pairs whose kind is the label's / matched pairs
  supersede_accuracy   labelled pairs (A supersedes B) where A's card lists B's card in `supersedes` (or B's
                   lists A's in `superseded_by`) / labelled pairs
  supersede_precision  produced supersede links between two matched cards that are a labelled pair / produced
                   links (links to unmatched cards count as wrong)
  nothing_false_pct    % of nothing-set episodes that got at least one card (nothing_false_cards: how many)
  episodes_per_s   episodes distilled / wall time of the distill command(s)
  date_accuracy    matched labels that carry `when` (the day the card's fact holds from) whose card's
                   `valid_from` is that day / such matched labels (dated_matched; wrong_date lists the misses)
  speaker_accuracy matched labels whose subject is a speaker the log named (two-person chats, role-play OOC)
                   whose card names that person in its title (or as a state card's subject) / such labels
With labels of several parts selected, `by_part` repeats the figures for each part from the same run; with
several languages, `by_lang` does so for each language and, under its `halves`, each of its tuning halves.

Options: --set DIR (default eval/distill), --files a,b (only these input files), --part old|new|ml|all (the
issue 10 set, the issue 20 set of people's lives, issue 32's multilingual set, or all), --half A|B|tune|held (a
tuning half: A|B of the old and new parts, tune|held of ml), --show (misses and false cards), --json, --keep
(print and keep the vault), --batch-size N (episodes per LLM call; the fake modes default to 1 so a supersede
target is always an existing card), --halves (also score each tuning half of the selection apart, from the
same run).
A real endpoint's settings are flags, written to the throw-away vault's memvault.yaml, because the runner
strips every MEMVAULT_* and OPENAI_* variable of the caller (a stray one must not change a measurement):
--timeout S (llm.timeout), --json-mode json_object|json_schema|text, --max-retries N, --max-output-tokens N,
--protocol review|write (distill.llm_protocol; the fake modes are models that write, and a --replay answers
under the protocol its log was made with: write unless told).
`eval/local_model.py` starts a real small local model and runs this with them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SET_DIR = HERE / "distill"
FAKE_LLM = ROOT / "tests" / "fake_llm.py"
MATCH_THRESHOLD = 70
ORACLE_ENV = "MEMVAULT_EVAL_ORACLE"  # path of the JSON the fake server's reply function reads


# ------------------------------------------------------------------------------------------------ set


# The tuning halves of the issue 10 set, by format (README); the new set's rows carry their own `half`.
OLD_HALF_A = frozenset(("jsonl", "openai", "chatgpt", "claude-code"))


def part_of(row: dict) -> str:
    """"new" for the issue 20 set, "ml" for issue 32's multilingual set (their rows say so), "old" for the issue
    10 set."""
    return row.get("part") or "old"


def half_of(row: dict) -> str:
    if part_of(row) == "old":
        return "A" if row["format"] in OLD_HALF_A else "B"
    return row["half"]


def load_labels(set_dir: Path, files: list[str] | None = None, part: str = "all",
                half: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in (set_dir / "labels.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    if files:
        rows = [r for r in rows if r["file"] in files]
    if part != "all":
        rows = [r for r in rows if part_of(r) == part]
    if half:
        rows = [r for r in rows if half_of(r) == half]
    return rows


def _memvault() -> list[str]:
    """The installed CLI next to this interpreter (a venv's bin/), else `python -m memvault`."""
    exe = Path(sys.executable).with_name("memvault")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]


def _run(args: list[str], env: dict, what: str, ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run([*_memvault(), *args], capture_output=True, text=True, env=env)
    if proc.returncode not in ok:
        raise SystemExit(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()[:500]}")
    return proc.stdout


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "OPENAI_"))}
    env["PYTHONUTF8"] = "1"
    return env


def read_episodes(vault: Path) -> dict[str, dict]:
    from memvault.vault import codec

    out: dict[str, dict] = {}
    for path in sorted((vault / "episodes").glob("*/*/*.jsonl")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            rec = codec.parse_record_line(line, str(path), lineno)
            if hasattr(rec, "user"):
                out[rec.id] = {"id": rec.id, "session": rec.session, "turn": rec.turn, "user": rec.user,
                               "assistant": rec.assistant, "project": rec.project, "at": rec.at,
                               "speakers": dict(rec.speakers or {})}
    return out


def capture_set(vault: Path, set_dir: Path, labels: list[dict], env: dict) -> dict[str, dict]:
    """Capture each input file; return label episode key -> stored episode. Every key must resolve and every
    card's evidence must be in its episode's text of the side that said it (`who`: the user's unless the label
    says "assistant"), else the set (or capture) is broken: stop."""
    ids_by_file: dict[str, list[str]] = {}
    greetings: dict[str, int] = {}
    for name in sorted({r["file"] for r in labels}):
        out = json.loads(_run(["-V", str(vault), "capture", str(set_dir / "inputs" / name), "--project",
                               Path(name).stem, "--json"], env, f"capture {name}"))
        ids_by_file[name] = out["episodes"]
        greetings[name] = out["skipped_by_reason"].get("greeting", 0)
    episodes = read_episodes(vault)
    keyed: dict[str, dict] = {}
    for row in labels:
        # The labels were frozen when capture stored a SillyTavern greeting as turn 1; since issue 35 it is no
        # turn. Its label (nothing to extract) has no episode left to score; later turns move up by one.
        turn = row["turn"] - (greetings[row["file"]] if row["session"] is None else 0)
        if turn < 1:
            if row["cards"]:
                raise SystemExit(f"labels.jsonl: {row['episode']}: a greeting capture skips carries cards")
            continue
        eps = [episodes[i] for i in ids_by_file[row["file"]]]
        hits = [e for e in eps
                if e["turn"] == turn and (row["session"] is None or e["session"] == row["session"])]
        if row["session"] is None and len({e["session"] for e in eps}) > 1:
            raise SystemExit(f"labels.jsonl: {row['episode']}: the file holds several sessions; name one")
        if len(hits) != 1:
            raise SystemExit(f"labels.jsonl: {row['episode']}: capture stored no such turn")
        for card in row["cards"]:
            side = card.get("who", "user")
            if card["evidence"] not in hits[0][side]:
                raise SystemExit(f"labels.jsonl: {card['id']}: evidence is not in the episode's {side} text")
        keyed[row["episode"]] = hits[0]
    return keyed


# ------------------------------------------------------------------------------------------------ engines


def _set_config(vault: Path, updates: dict[str, dict]) -> None:
    import yaml

    path = vault / "memvault.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for section, values in updates.items():
        data.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _start_fake(workdir: Path, mode: str, labels: list[dict], keyed: dict[str, dict], env: dict,
                replay: str | None = None):
    context = workdir / "oracle.json"
    replies = {}
    if replay:
        for line in Path(replay).read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if "content" in rec and rec.get("key"):
                replies[rec["key"]] = rec["content"]
    context.write_text(json.dumps({"mode": mode, "labels": labels, "replies": replies,
                                   "episodes": {k: {"user": e["user"], "assistant": e["assistant"],
                                                    "speakers": e.get("speakers") or {}}
                                                for k, e in keyed.items()}}, ensure_ascii=False),
                       encoding="utf-8")
    fenv = {**env, ORACLE_ENV: str(context)}
    proc = subprocess.Popen([sys.executable, str(FAKE_LLM), "--port", "0",
                             "--log", str(workdir / "requests.jsonl"),
                             "--default-fn", f"{Path(__file__).resolve()}:fake_reply"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=fenv)
    line = proc.stdout.readline().strip()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"fake LLM server did not start: {proc.stderr.read()[:500]}")
    return proc, line.split(" ", 1)[1]


def run_engine(args, vault: Path, workdir: Path, labels: list[dict], keyed: dict[str, dict],
               env: dict) -> dict:
    """Run `memvault distill` once with the chosen engine; return its JSON summary plus `seconds`."""
    denv = dict(env)
    fake = None
    batch = args.batch_size
    if args.engine == "llm":
        if args.fake or args.replay:
            mode = "replay" if args.replay else args.fake
            fake, base_url = _start_fake(workdir, mode, labels, keyed, env, args.replay)
            denv["MEMVAULT_LLM_BASE_URL"] = base_url
            denv["MEMVAULT_LLM_MODEL"] = args.model or "fake-" + mode
            denv["MEMVAULT_LLM_MAX_RETRIES"] = "0"
            batch = batch or 1
            # The fake modes answer as a model that writes every card (the labels are the cards); a replay
            # answers under the protocol it was logged with (--protocol; the stored replays are write logs).
            _set_config(vault, {"distill": {"llm_protocol": args.protocol or "write"}})
        elif args.base_url:
            denv["MEMVAULT_LLM_BASE_URL"] = args.base_url
            if args.model:
                denv["MEMVAULT_LLM_MODEL"] = args.model
            if args.api_key_env:
                denv["MEMVAULT_LLM_API_KEY_ENV"] = args.api_key_env
        else:
            raise SystemExit("--engine llm needs --base-url URL (a real endpoint) "
                             "or --fake oracle|broken|empty")
        # The caller's MEMVAULT_* variables are stripped (a stray one must not change a measurement), so the
        # endpoint settings a slow local model needs are explicit flags, written to the vault's memvault.yaml.
        llm = {k: v for k, v in (("timeout", args.timeout), ("json_mode", args.json_mode),
                                  ("max_retries", args.max_retries)) if v is not None}
        if llm:
            _set_config(vault, {"llm": llm})
        if args.protocol and not (args.fake or args.replay):
            _set_config(vault, {"distill": {"llm_protocol": args.protocol}})
    else:
        _set_config(vault, {"distill": {"engine": args.engine}})
        # Trigger: a memvault without that engine ignores the key and calls an LLM.
        # Why: scoring that failure as "0 cards" would look like a (terrible) measurement.
        # Outcome: the LLM points at a closed port, and calls made (below) stop the run.
        denv["MEMVAULT_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"
        denv["MEMVAULT_LLM_MAX_RETRIES"] = "0"
    if batch:
        # batch size = llm.max_output_tokens // distill.tokens_per_episode (memvault/distill.py)
        max_out = args.max_output_tokens or 4096
        _set_config(vault, {"llm": {"max_output_tokens": max_out},
                            "distill": {"tokens_per_episode": max(1, max_out // batch)}})
    elif args.max_output_tokens:
        _set_config(vault, {"llm": {"max_output_tokens": args.max_output_tokens}})
    try:
        t0 = time.perf_counter()
        # exit 5: some batches failed (bad replies); they stay pending and count as giving no card
        out = _run(["-V", str(vault), "distill", "--json", "--max-episodes", str(len(keyed) + 10)], denv,
                   f"distill --engine {args.engine}", ok=(0, 5))
        seconds = time.perf_counter() - t0
    finally:
        if fake is not None:
            fake.terminate()
            fake.wait(timeout=10)
    summary = json.loads(out) if out.strip() else {}
    if args.engine != "llm" and summary.get("calls"):
        raise SystemExit(f"--engine {args.engine}: distill called an LLM instead; this memvault has no "
                         f"distill.engine {args.engine!r} yet")
    summary["seconds"] = seconds
    return summary


# ------------------------------------------------------------------------------------------------ oracle

_EPISODE_HEAD = re.compile(r"\[e(\d+)\] \d{4}-\d{2}-\d{2}\n")
_RELATED_LINE = re.compile(r"^\[(\d+)\] \S+(?: \[[^\]\n]*\])? · (.*?) \(\d{4}-\d{2}-\d{2}\)(?: — .*)?$", re.M)
_ORACLE_CACHE: dict[str, dict] = {}


def _oracle_context() -> dict:
    path = os.environ[ORACLE_ENV]
    if path not in _ORACLE_CACHE:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data["by_key"] = {r["episode"]: r for r in data["labels"]}
        data["cards"] = {c["id"]: c for r in data["labels"] for c in r["cards"]}
        _ORACLE_CACHE[path] = data
    return _ORACLE_CACHE[path]


def prompt_key(messages: list[dict]) -> str:
    """eval/local_model/server.mjs's key of a prompt: sha256 of role \\x1f content, messages joined by \\x1e."""
    import hashlib

    joined = "\x1e".join(f"{m.get('role')}\x1f{m.get('content') or ''}" for m in messages)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def fake_reply(body: dict) -> str | dict:
    """tests/fake_llm.py --default-fn: answer a distill request from the labels (see --fake), or with a real
    model's recorded answer to the same prompt (--replay)."""
    ctx = _oracle_context()
    if ctx["mode"] == "replay":
        content = ctx["replies"].get(prompt_key(body.get("messages", [])))
        # A prompt the model never saw (the prompt or the episode format changed): not a measurement.
        return content if content is not None else "(prompt not recorded)"  # an invalid reply: the batch fails
    prompt = "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user")
    related = {title: int(i) for i, title in _RELATED_LINE.findall(prompt.split("Turns to distil", 1)[0])}
    project = re.search(r'Turns to distil \(project "([^"]*)"\)', prompt)
    cards: list[dict] = []
    from memvault.model import speaker_label

    for key, ep in ctx["episodes"].items():
        said = ep.get("speakers") or {}
        user_line = f"USER{speaker_label(said.get('user'))}: {ep['user'].strip()}"
        pos = prompt.find(f"{user_line}\nASSISTANT{speaker_label(said.get('assistant'))}: {ep['assistant'].strip()}")
        if pos < 0:  # a prompt that shows only the user's side (distill.assistant_chars 0)
            pos = prompt.find(user_line + "\n")
        if pos < 0:
            continue
        heads = list(_EPISODE_HEAD.finditer(prompt, 0, pos))
        if not heads:
            continue
        ref = f"e{heads[-1].group(1)}"
        row = ctx["by_key"][key]
        cards.extend(_oracle_cards(ctx, row, ref, related, project.group(1) if project else None))
    return json.dumps({"cards": cards}, ensure_ascii=False)


def _oracle_cards(ctx: dict, row: dict, ref: str, related: dict[str, int], project: str | None) -> list[dict]:
    mode = ctx["mode"]
    if mode == "empty":
        return []
    out = []
    if not row["cards"] and mode == "broken" and row["turn"] % 2 == 0:
        # a false card on the nothing-set, made of the episode's own words
        text = ctx["episodes"][row["episode"]]["user"].strip().splitlines()[0][:60] or "noise"
        out.append(_card("create", None, "decision", text, text, [], project, ref))
    for n, label in enumerate(row["cards"]):
        k = row["turn"] + n
        if mode == "broken" and k % 3 == 0:
            continue  # dropped
        kind = label["kind"]
        if mode == "broken" and k % 4 == 1:
            kind = "fact" if kind != "fact" else "preference"
        action, target, replaced = "create", None, None
        if label["supersedes"] and not (mode == "broken"):
            old = ctx["cards"][label["supersedes"]]
            if old["title"] in related:  # a prompt that lists the existing cards: name the one replaced
                action, target = "supersede", related[old["title"]]
            else:  # the facts protocol: say the old value, memvault finds its card
                replaced = old["value"]
        title = label["title"]
        said = ctx["episodes"][row["episode"]].get("speakers")
        if mode == "broken" and k % 2 == 0 and _is_speaker(label["subject"], said):
            title = "the user: " + label["value"]  # the speaker's name lost
        card = _card(action, target, kind, title, label["evidence"], label["entities"], project, ref)
        if mode != "broken":  # a broken model never dates a card: it gets the turn's day
            card["valid_from"] = label.get("when")
        if kind == "state":
            card.update(subject=label["subject"], field="value", value=label["value"])
        if replaced:
            card.update(old=replaced, quote=label["evidence"])
        out.append(card)
    return out


def _card(action, target, kind, title, body, entities, project, ref) -> dict:
    return {"action": action, "target": target, "kind": kind, "title": title, "body": body,
            "entities": list(entities), "project": project, "valid_from": None, "confidence": "user_stated",
            "subject": None, "field": None, "value": None, "tags": [], "episodes": [ref]}


# ------------------------------------------------------------------------------------------------ scoring


def read_cards(vault: Path) -> list[dict]:
    from memvault.vault import codec

    cards = []
    for path in sorted((vault / "cards").glob("*/*.md")):
        c = codec.parse_card(path.read_text(encoding="utf-8"), str(path))
        cards.append({"id": c.id, "kind": c.kind, "title": c.title, "body": c.body, "subject": c.subject,
                      "field": c.field, "value": c.value, "status": c.status, "valid_from": c.valid_from,
                      "episodes": list(c.source.get("episodes") or []), "project": c.project,
                      "supersedes": list(c.supersedes), "superseded_by": list(c.superseded_by)})
    return cards


def norm(text: str | None) -> str:
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PSZ" else ch for ch in text)
    return " ".join(text.split())


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_DIGITS = str.maketrans("〇零一二两三四五六七八九", "001223456789")


def _numbers_agree(label_value: str, card_text: str) -> bool:
    """Every number of the label's value (Chinese digits read as digits) appears in the card."""
    want = re.findall(r"\d+", unicodedata.normalize("NFKC", label_value).translate(_CJK_DIGITS))
    have = unicodedata.normalize("NFKC", card_text).translate(_CJK_DIGITS)
    return all(n in have for n in want)


def _char_containment(value: str, text: str) -> float:
    """Share of the value's distinct characters (spaces aside) found in text: tolerant of reordered Chinese."""
    chars = set(value.replace(" ", ""))
    return 100.0 * len(chars & set(text)) / len(chars) if chars else 0.0


def match_score(label: dict, card: dict) -> float:
    """0-100: how well a produced card says the label's value (see the module docstring)."""
    from rapidfuzz import fuzz

    card_text = " ".join(str(card.get(k) or "") for k in ("title", "value", "body"))
    if not _numbers_agree(label["value"], card_text):
        return 0.0
    value = norm(label["value"])
    texts = [norm(card["title"])]
    if card.get("value"):
        texts += [norm(str(card["value"])), norm(f"{card.get('subject') or ''} {card['value']}")]
    cjk = len(_CJK.findall(value)) * 2 >= len(value.replace(" ", ""))
    best = 0.0
    for text in texts:
        best = max(best, fuzz.token_set_ratio(value, text))
        if len(value.replace(" ", "")) >= 2:
            best = max(best, fuzz.partial_ratio(value, text))
        if cjk and len(value.replace(" ", "")) >= 4:
            best = max(best, _char_containment(value, text))
    return best


def score(labels: list[dict], keyed: dict[str, dict], cards: list[dict], seconds: float) -> dict:
    ep_to_key = {e["id"]: k for k, e in keyed.items()}
    label_cards = {c["id"]: (row["episode"], c) for row in labels for c in row["cards"]}
    # candidate pairs: same episode, score over the threshold
    pairs = []
    for card in cards:
        keys = {ep_to_key[e] for e in card["episodes"] if e in ep_to_key}
        for lid, (key, label) in label_cards.items():
            if key in keys:
                s = match_score(label, card)
                if s >= MATCH_THRESHOLD:
                    pairs.append((-s, lid, card["id"]))
    pairs.sort()
    label_to_card: dict[str, str] = {}
    card_to_label: dict[str, str] = {}
    for _, lid, cid in pairs:
        if lid not in label_to_card and cid not in card_to_label:
            label_to_card[lid] = cid
            card_to_label[cid] = lid
    by_id = {c["id"]: c for c in cards}
    kind_ok = sum(1 for lid, cid in label_to_card.items()
                  if label_cards[lid][1]["kind"] == by_id[cid]["kind"])
    sup_pairs = [(lid, label["supersedes"]) for lid, (_, label) in label_cards.items() if label["supersedes"]]
    sup_ok = 0
    for new, old in sup_pairs:
        a, b = label_to_card.get(new), label_to_card.get(old)
        if a and b and (b in by_id[a]["supersedes"] or a in by_id[b]["superseded_by"]):
            sup_ok += 1
    labelled = set(sup_pairs)
    links = [(c["id"], old) for c in cards for old in c["supersedes"]]
    links_ok = sum(1 for new, old in links if (card_to_label.get(new), card_to_label.get(old)) in labelled)
    # dates: matched labels that carry `when`, and whether their card's valid_from says that day
    dated = [lid for lid in label_to_card if label_cards[lid][1].get("when")]
    date_wrong = sorted(lid for lid in dated
                        if (by_id[label_to_card[lid]].get("valid_from") or "")[:10] != label_cards[lid][1]["when"])
    # speakers: matched labels whose subject is a name the episode's log gave, and whether the card names them
    named = [lid for lid in label_to_card
             if _is_speaker(label_cards[lid][1]["subject"], keyed.get(label_cards[lid][0], {}).get("speakers"))]
    unnamed = sorted(lid for lid in named if not _names(by_id[label_to_card[lid]], label_cards[lid][1]["subject"]))
    nothing = {row["episode"] for row in labels if not row["cards"]}
    nothing_hit: dict[str, int] = {}
    for card in cards:
        for e in card["episodes"]:
            if ep_to_key.get(e) in nothing:
                nothing_hit[ep_to_key[e]] = nothing_hit.get(ep_to_key[e], 0) + 1

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None  # nothing to measure (no cards, no matches, no links)

    return {
        "episodes": len(labels), "labelled_cards": len(label_cards), "produced_cards": len(cards),
        "matched": len(label_to_card),
        "precision": ratio(len(card_to_label), len(cards)),
        "recall": ratio(len(label_to_card), len(label_cards)),
        "kind_accuracy": ratio(kind_ok, len(label_to_card)),
        "supersede_pairs": len(sup_pairs), "supersede_correct": sup_ok,
        "supersede_accuracy": ratio(sup_ok, len(sup_pairs)),
        "supersede_links": len(links), "supersede_precision": ratio(links_ok, len(links)),
        "dated_labels": sum(1 for _, label in label_cards.values() if label.get("when")),
        "dated_matched": len(dated), "date_accuracy": ratio(len(dated) - len(date_wrong), len(dated)),
        "speaker_matched": len(named), "speaker_accuracy": ratio(len(named) - len(unnamed), len(named)),
        "nothing_episodes": len(nothing), "nothing_false_episodes": len(nothing_hit),
        "nothing_false_cards": sum(nothing_hit.values()),
        "nothing_false_pct": round(100.0 * len(nothing_hit) / len(nothing), 2) if nothing else 0.0,
        "seconds": round(seconds, 3),
        "episodes_per_s": round(len(labels) / seconds, 1) if seconds > 0 else None,
        "misses": sorted(set(label_cards) - set(label_to_card)),
        "false_cards": sorted(c["id"] for c in cards if c["id"] not in card_to_label),
        "wrong_kind": sorted(lid for lid, cid in label_to_card.items()
                             if label_cards[lid][1]["kind"] != by_id[cid]["kind"]),
        "wrong_date": date_wrong, "speaker_unnamed": unnamed,
    }


def _is_speaker(subject: str, speakers: dict | None) -> bool:
    return any(norm(subject) == norm(n) for names in (speakers or {}).values() for n in names)


def _names(card: dict, name: str) -> bool:
    """The card names the person: in its title, or as a state card's subject."""
    return norm(name) in norm(card["title"]) or norm(card.get("subject")) == norm(name)


# ------------------------------------------------------------------------------------------------ main


def _score_part(labels: list[dict], keyed: dict[str, dict], cards: list[dict], seconds: float,
                half: str) -> dict | None:
    """The scores of one tuning half's files (half_of), from the same run's cards (a card belongs to its
    capture project)."""
    rows = [r for r in labels if half_of(r) == half]
    if not rows:
        return None
    stems = {Path(r["file"]).stem for r in rows}
    part = score(rows, {k: v for k, v in keyed.items() if k in {r["episode"] for r in rows}},
                 [c for c in cards if c.get("project") in stems], seconds)
    return {k: v for k, v in part.items() if k not in ("seconds", "episodes_per_s")}


_SUBSET_DROP = ("seconds", "episodes_per_s", "misses", "false_cards", "wrong_kind", "wrong_date", "speaker_unnamed")


def _subset(labels: list[dict], keyed: dict[str, dict], cards: list[dict], keep) -> dict:
    """The figures of the rows `keep` selects, from the same run: the cards that cite one of their episodes."""
    rows = [r for r in labels if keep(r)]
    sub_keyed = {k: e for k, e in keyed.items() if k in {r["episode"] for r in rows}}
    ids = {e["id"] for e in sub_keyed.values()}
    sub = score(rows, sub_keyed, [c for c in cards if ids & set(c["episodes"])], 0.0)
    return {k: v for k, v in sub.items() if k not in _SUBSET_DROP}


def _halves(rows) -> list[str]:
    """The tuning halves present among rows, in README order (A, B of the old and new parts; tune, held of ml)."""
    present = {half_of(r) for r in rows}
    return [h for h in ("A", "B", "tune", "held") if h in present]


def evaluate(args) -> dict:
    set_dir = Path(args.set).resolve()
    files = [f for f in (args.files or "").split(",") if f] or None
    labels = load_labels(set_dir, files, args.part, args.half)
    if not labels:
        raise SystemExit("no labelled episodes selected")
    env = _clean_env()
    workdir = Path(tempfile.mkdtemp(prefix="memvault-distill-eval-"))
    try:
        env["HOME"] = str(workdir)  # no user config, no ~/memvault
        vault = workdir / "vault"
        _run(["init", str(vault)], env, "init")
        keyed = capture_set(vault, set_dir, labels, env)
        labels = [r for r in labels if r["episode"] in keyed]  # a greeting's label: no turn to score
        summary = run_engine(args, vault, workdir, labels, keyed, env)
        cards = read_cards(vault)
        result = score(labels, keyed, cards, summary["seconds"])
        parts = sorted({part_of(r) for r in labels})
        if len(parts) > 1:  # the same run scored per part (speed is the whole run's)
            result["by_part"] = {part: _subset(labels, keyed, cards, lambda r, p=part: part_of(r) == p)
                                 for part in parts}
        langs = sorted({r["lang"] for r in labels})
        if len(langs) > 1:  # per language, and each language's tuning halves, from the same run
            result["by_lang"] = {}
            for lang in langs:
                sub = _subset(labels, keyed, cards, lambda r, x=lang: r["lang"] == x)
                sub["halves"] = {h: _subset(labels, keyed, cards, lambda r, x=lang, y=h: r["lang"] == x
                                            and half_of(r) == y)
                                 for h in _halves(r for r in labels if r["lang"] == lang)}
                result["by_lang"][lang] = sub
        result["engine"] = args.engine + (f" (fake {args.fake})" if args.fake else "") + (
            f" (replay of {Path(args.replay).name})" if args.replay else "")
        result["distill"] = {k: summary[k] for k in ("calls", "cards", "episodes_distilled", "failures",
                                                      "repairs", "errors", "prompt_tokens", "completion_tokens")
                             if k in summary}
        if args.halves:
            result["halves"] = {name: _score_part(labels, keyed, cards, summary["seconds"], name)
                                for name in _halves(labels)}
        if args.keep:
            result["vault"] = str(vault)
        return result
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def parse_args(argv: list[str] | None = None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--engine", choices=("llm", "offline", "auto"), default="llm")
    p.add_argument("--fake", choices=("oracle", "broken", "empty"),
                   help="llm engine against tests/fake_llm.py")
    p.add_argument("--base-url", help="llm engine: OpenAI-compatible endpoint")
    p.add_argument("--replay", help="LOG of eval/local_model.py --server-log --log-replies: answer each prompt "
                   "with the real model's recorded reply (memvault's own code re-scored; an unrecorded prompt "
                   "fails its batch)")
    p.add_argument("--model")
    p.add_argument("--api-key-env", help="NAME of the environment variable holding the endpoint's key")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--protocol", choices=("review", "write"),
                   help="distill.llm_protocol of a real endpoint (default: the vault's, review)")
    p.add_argument("--timeout", type=float, help="llm.timeout (s) for a real endpoint (a slow local model)")
    p.add_argument("--json-mode", choices=("json_object", "json_schema", "text"), help="llm.json_mode")
    p.add_argument("--max-retries", type=int, help="llm.max_retries (HTTP attempts after the first)")
    p.add_argument("--max-output-tokens", type=int, help="llm.max_output_tokens (default 4096)")
    p.add_argument("--halves", action="store_true", help="also score each tuning half (README) apart")
    p.add_argument("--set", default=str(SET_DIR))
    p.add_argument("--files", help="comma-separated input file names (default: all)")
    p.add_argument("--part", choices=("all", "old", "new", "ml"), default="all",
                   help="old: the issue 10 set; new: the issue 20 set (people's lives); ml: the issue 32 set "
                   "(French, German, Spanish, Japanese, Korean); default all")
    p.add_argument("--half", choices=("A", "B", "tune", "held"),
                   help="only this tuning half (README): A|B of the old and new parts, tune|held of ml")
    p.add_argument("--show", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", action="store_true")
    return p.parse_args(argv)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else format(x, ".3f")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = evaluate(args)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print(f"engine {result['engine']}: {result['episodes']} episodes, "
          f"{result['labelled_cards']} labelled cards, "
          f"{result['produced_cards']} produced, {result['matched']} matched")
    for k in ("precision", "recall", "kind_accuracy", "supersede_accuracy", "supersede_precision"):
        print(f"  {k:20} {'n/a' if result[k] is None else format(result[k], '.3f')}")
    print(f"  {'nothing_false_pct':20} {result['nothing_false_pct']:.2f} % "
          f"({result['nothing_false_episodes']}/{result['nothing_episodes']} episodes, "
          f"{result['nothing_false_cards']} cards)")
    print(f"  {'episodes_per_s':20} {result['episodes_per_s']} ({result['seconds']} s for distill)")
    for k, n in (("date_accuracy", "dated_matched"), ("speaker_accuracy", "speaker_matched")):
        print(f"  {k:20} {'n/a' if result[k] is None else format(result[k], '.3f')} (of {result[n]} matched)")
    for part, r in (result.get("by_part") or {}).items():
        print(f"  part {part}: {r['episodes']} episodes, precision {_fmt(r['precision'])}, recall {_fmt(r['recall'])}, "
              f"kind {_fmt(r['kind_accuracy'])}, supersede {_fmt(r['supersede_accuracy'])}, "
              f"date {_fmt(r['date_accuracy'])}, speaker {_fmt(r['speaker_accuracy'])}, "
              f"nothing false {r['nothing_false_pct']:.2f} % ({r['nothing_false_episodes']}/{r['nothing_episodes']})")
    if result.get("by_lang"):
        print("  by language (precision / recall, nothing-set false; then each tuning half):")
    for lang, r in (result.get("by_lang") or {}).items():
        halves = "; ".join(f"{h} {_fmt(x['precision'])} / {_fmt(x['recall'])} ({x['episodes']} ep, "
                           f"{x['labelled_cards']} cards)" for h, x in r["halves"].items())
        print(f"    {lang}: {r['episodes']} episodes, {r['labelled_cards']} cards, {r['produced_cards']} produced: "
              f"{_fmt(r['precision'])} / {_fmt(r['recall'])}, false {r['nothing_false_episodes']}/"
              f"{r['nothing_episodes']}; {halves}")
    failures = {k: v for k, v in (result["distill"].get("failures") or {}).items() if v}
    if failures:
        print(f"  distill failures (their episodes gave no card): {failures}")
    repairs = {k: v for k, v in (result["distill"].get("repairs") or {}).items() if v}
    if repairs:
        print(f"  repairs of the model's replies: {repairs}")
    for name, part in (result.get("halves") or {}).items():
        if part:
            print(f"  half {name}: {part['episodes']} episodes, precision {part['precision']}, recall "
                  f"{part['recall']}, supersede {part['supersede_accuracy']}, nothing-set false "
                  f"{part['nothing_false_pct']} %")
    if args.show:
        for k in ("misses", "wrong_kind", "wrong_date", "speaker_unnamed", "false_cards"):
            print(f"{k}: {', '.join(result[k]) or '-'}")
    if args.keep:
        print(f"vault kept at {result['vault']}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
