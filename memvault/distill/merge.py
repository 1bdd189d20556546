"""How a new card joins the existing ones: its id, near-duplicate merge, state conflicts and supersede links.

Pure: the standard library, rapidfuzz (imported lazily, a pure scoring library) and memvault.model.
Nothing here touches files; distill/remember/forget and vault/synopsis apply what these functions return.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import unicodedata
from typing import Iterable

from memvault.model import Card, supersede, union  # noqa: F401 - re-exported

_LINE = re.compile(r"\s+")


# ---------------------------------------------------------------- ids and time


def card_id(day: str, seed: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """`c-<yyyymmdd>-<hex>` from run-independent data, so a rerun after a crash writes the same ids.

    The hex grows from 6 digits only when another card already holds the id.
    """
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()
    compact = day[:10].replace("-", "")
    for n in range(6, 65):
        cid = f"c-{compact}-{digest[:n]}"
        if cid not in taken:
            return cid
    raise ValueError("card id space exhausted")  # pragma: no cover - needs a SHA-256 collision


# ---------------------------------------------------------------- near-duplicates

_STOP = set(
    "a an the of in on at to for is are was were be been as and or not no instead only all with by from this "
    "that it its we our us use using".split()
) | set("的了是在和与也就都把被")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9.+#_-]*|[^\sa-z0-9]")


@functools.lru_cache(maxsize=1 << 16)
def norm_title(title: str) -> str:
    """NFKC, case-folded, punctuation and symbols dropped, whitespace collapsed. Cached: the conflict scan
    (doctor, conflicts) compares each title with many others (at 3,000 cards it normalised titles 267,000 times,
    6 of the scan's 10 s)."""
    text = unicodedata.normalize("NFKC", title).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text)
    return _LINE.sub(" ", text).strip()


def title_score(a: str, b: str, cutoff: float = 0.0) -> float:
    """How alike two titles are (0-100); with `cutoff`, 0 for a score under it (rapidfuzz stops early)."""
    from rapidfuzz import fuzz

    na, nb = norm_title(a), norm_title(b)
    return max(fuzz.ratio(na, nb, score_cutoff=cutoff), fuzz.token_sort_ratio(na, nb, score_cutoff=cutoff))


def _tokens(title: str) -> set[str]:
    return {w for w in _TOKEN.findall(norm_title(title)) if w not in _STOP}


def _covered(word: str, others: set[str]) -> bool:
    return any(word == o or (len(word) >= 4 and len(o) >= 4 and (word.startswith(o) or o.startswith(word)))
               for o in others)


def is_substitution(a: str, b: str) -> bool:
    """Both titles hold a content word the other lacks: `Use Postgres …` vs `Use SQLite …`, 简洁 vs 详细.

    A near-duplicate only adds or rewords (`plain text` / `plain-text`, `Postgres` / `PostgreSQL`); a swap of
    content words is usually a contradiction, and merging it would hide the change.
    """
    ta, tb = _tokens(a), _tokens(b)
    return any(not _covered(w, tb) for w in ta) and any(not _covered(w, ta) for w in tb)


def is_near_duplicate(a: str, b: str, threshold: float) -> bool:
    return title_score(a, b) >= threshold and not is_substitution(a, b)


def find_duplicate(new: Card, existing: Iterable[Card], threshold: float) -> Card | None:
    """An active card of the same project (never across projects) and kind whose title is a near-duplicate."""
    if new.supersedes or new.kind == "state":
        return None
    best: tuple[float, str, Card] | None = None
    for old in existing:
        if old.status != "active" or old.project != new.project or old.kind != new.kind or old.id == new.id:
            continue
        score = title_score(new.title, old.title)
        if score >= threshold and not is_substitution(new.title, old.title):
            if best is None or (score, old.id) > (best[0], best[1]):
                best = (score, old.id, old)
    return best[2] if best else None


def merge_into(old: Card, new: Card) -> Card:
    """The old card absorbs a near-duplicate: the fuller body wins, sources and entities are unioned."""
    take_new = len(new.body) > len(old.body)
    source = dict(old.source)
    if old.source.get("kind") == "distill" or new.source.get("kind") == "distill":
        eps = list(old.episodes)
        eps += [e for e in new.episodes if e not in eps]
        source["episodes"] = eps
        source.setdefault("kind", new.source.get("kind", "distill"))
    return dataclasses.replace(
        old,
        title=new.title if take_new else old.title,
        body=new.body if take_new else old.body,
        entities=union(old.entities, new.entities),
        tags=union(old.tags, new.tags),
        valid_from=min(filter(None, (old.valid_from, new.valid_from)), default=None),
        source=source,
    )


# ---------------------------------------------------------------- the same fact said again

# Content words of a statement: what it says, not how. Function words, light verbs, time words and the
# speaker's own name are left out; numbers, dates and names are the fact's keys, compared apart.
_FACT_STOP = _STOP | set("""
i me my he him his she her they them their you your is am are was were be been being have has had do does did
will would can could should shall may might must just also too so very really still even about again into over
then than there here now today since last next week month year day days weeks months years ago yesterday
tomorrow recently lately gonna go going got get gets some any much many lot lots more most one thing things
make made take took doing done feel felt want like love loves great good awesome amazing fun
what when where which who how while because but if it's i'm he's she's that's
""".split()) | set("我你他她它们这那个有很都还又年月日号")
_MONTH_WORDS = set("january february march april may june july august september october november december "
                   "jan feb mar apr jun jul aug sep sept oct nov dec".split())
_FACT_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+|[,.;:!?，。；：！？]")
_CLAUSE_END = frozenset(",.;:!?，。；：！？")
_NEGATION = frozenset("not no never nor without instead rather 不 没 别 未 非".split())
CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][A-Za-z]+(?:'s)?")
FACT_OVERLAP = 0.75  # measured on LoCoMo tune (eval/facts.py --convs 0,1,2): see docs/distill.md


@functools.lru_cache(maxsize=1)
def _stem():
    """snowball's English stemmer, memoised per word: a same-fact scan reads every title of its group (a call is
    ~45 us in pure Python; uncached, 10k cards took ~4.8 s the first time, against ~0.2 s)."""
    import snowballstemmer  # a pure-Python stemmer, a dependency already (search's episode index)

    return functools.lru_cache(maxsize=1 << 16)(snowballstemmer.stemmer("english").stemWord)


@functools.lru_cache(maxsize=1 << 14)
def fact_words(title: str, speaker: str = "") -> tuple[frozenset[str], frozenset[str], tuple[str, ...],
                                                       frozenset[str]]:
    """(content words, keys, content in order, what it denies) of a statement, the speaker's name left out.
    Words are case-folded and stemmed ("volunteering" = "volunteers"); CJK text gives its characters (word
    order varies more in Chinese than a character pair can follow). Keys: numbers, month names and capitalised
    names, which must agree for two statements to be one fact. Denied: the content after a negation ("not
    SQLite", "不部署") up to the clause's end (three characters in CJK)."""
    text = unicodedata.normalize("NFKC", title).replace("\u2019", "'")
    if speaker:
        text = re.sub(re.escape(speaker) + r"(?:'s)?", " ", text, flags=re.IGNORECASE)
    keys = {m.group().casefold().removesuffix("'s") for m in _NAME.finditer(text)}
    words: set[str] = set()
    seq: list[str] = []
    denied: set[str] = set()
    negated = False
    stem = _stem()
    for w in _FACT_WORD.findall(text):
        low = w.casefold().removesuffix("'s")
        if low in _CLAUSE_END:
            negated = False
        elif low in _NEGATION or low.endswith("n't"):
            negated = True
        elif low.isdigit() or low in _MONTH_WORDS:
            keys.add(low)
        elif CJK_RUN.fullmatch(low):
            seq.extend(ch for ch in low if ch not in _FACT_STOP and ch not in _NEGATION)
            words.update(ch for ch in low if ch not in _FACT_STOP and ch not in _NEGATION)
            denied.update(ch for m in re.finditer(r"[不没别未非]", low) for ch in low[m.end():m.end() + 3])
        elif low not in _FACT_STOP and len(low) > 2 and (root := stem(low)) not in _FACT_STOP:
            words.add(root)
            seq.append(root)
            if negated:
                denied.add(root)
    return frozenset(words), frozenset(keys - _FACT_STOP), tuple(seq), frozenset(denied)


def _swapped(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The two statements are one and the same but for one stretch swapped for another ("a pottery class" /
    "a painting class", 陶艺课 / 绘画课): a different thing in the same frame, not the fact said again."""
    from rapidfuzz.distance import Levenshtein

    gaps: list[list[int]] = []  # [a_start, a_end, b_start, b_end] of each run of edits between equal stretches
    for op in Levenshtein.opcodes(a, b):
        if op.tag == "equal":
            continue
        if gaps and gaps[-1][1] == op.src_start and gaps[-1][3] == op.dest_start:
            gaps[-1][1], gaps[-1][3] = op.src_end, op.dest_end
        else:
            gaps.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    return len(gaps) == 1 and gaps[0][1] > gaps[0][0] and gaps[0][3] > gaps[0][2]


def fact_overlap(a: str, b: str, speaker: str = "") -> float:
    """How far two statements of one speaker say the same: shared content words over the smaller statement's;
    0 when fewer than three are shared, when each holds a number, date or name the other lacks, when one denies
    what the other says, or when one stretch of words is swapped for another (_swapped)."""
    wa, ka, sa, da = fact_words(a, speaker)
    wb, kb, sb, db = fact_words(b, speaker)
    if (ka - kb) and (kb - ka) or da & (set(sb) - db) or db & (set(sa) - da):
        return 0.0
    shared = wa & wb
    if sum(0.5 if CJK_RUN.match(w) else 1 for w in shared) < 3 or _swapped(sa, sb):
        return 0.0  # fewer than three words in common (a CJK character counts half a word)
    return len(shared) / min(len(wa), len(wb))


def find_same_fact(new: Card, existing: Iterable[Card], threshold: float = FACT_OVERLAP) -> Card | None:
    """An active card of the same project, kind and speaker (first entity) that states `new`'s fact again
    (fact_overlap at least `threshold`): the one sharing most (ties: the smallest id). Never a state card (a change
    supersedes) nor one `new` supersedes."""
    if new.supersedes or new.kind == "state":
        return None
    speaker = new.entities[0] if new.entities else ""
    best: tuple[float, str, Card] | None = None
    for old in existing:
        if (old.status != "active" or old.project != new.project or old.kind != new.kind or old.id == new.id
                or (old.entities[:1] or ("",))[0] != speaker):
            continue
        score = fact_overlap(new.title, old.title, speaker)
        if score >= threshold and (best is None or score > best[0] or score == best[0] and old.id < best[1]):
            best = (score, old.id, old)
    return best[2] if best else None


def retell(old: Card, new: Card, limit: int = 1500) -> Card:
    """The old card absorbs its fact told again (find_same_fact): it cites the new episodes too, keeps its
    title unless the new one adds a date, number or name, and its body gains the new telling's first paragraph
    when that says words the body lacks (while the body stays under `limit` characters)."""
    speaker = old.entities[0] if old.entities else ""
    merged = merge_into(old, new)
    body = old.body
    said = new.body.split("\n\n")[0].strip()
    if said and not fact_words(said, speaker)[0] <= fact_words(body, speaker)[0] \
            and len(body) + len(said) + 2 <= limit:
        body = f"{body}\n\n{said}" if body else said
    title = new.title if fact_words(new.title, speaker)[1] > fact_words(old.title, speaker)[1] else old.title
    return dataclasses.replace(merged, title=title, body=body)


# ---------------------------------------------------------------- supersede


def state_key(card: Card) -> tuple[str, str, str] | None:
    if card.kind != "state" or not card.subject or not card.field:
        return None
    return (card.project or "", norm_title(card.subject), norm_title(card.field))


def same_value(a: Card, b: Card) -> bool:
    return norm_title(a.value or "") == norm_title(b.value or "")


def state_conflicts(new: Card, existing: Iterable[Card]) -> list[Card]:
    """Active state cards with the same project, subject and field (never another subject) as `new`."""
    key = state_key(new)
    if key is None:
        return []
    return [c for c in existing if c.status == "active" and c.id != new.id and state_key(c) == key]




# ---------------------------------------------------------------- the card a change replaces

_NORM = re.compile(r"[\W_]+")
_PARTS = re.compile(r"\s*(?:\band\b|\bor\b|[+/、&和与及])\s*", re.I)


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.casefold()).strip()


@functools.lru_cache(maxsize=1 << 18)
def _said(title: str, value: str) -> str:
    """A card's title and value, normalised and padded (` title \0 value `): find_holder reads every card's on
    every call, and the cards are the same from one call to the next (10k cards: 140 ms a call when each text
    was normalised again). Sized for a 100k-card vault: a scan over more texts than an LRU holds misses always."""
    return f" {_norm(title)} \0 {_norm(value)} "


def _needle(key: str) -> tuple[str, str | None]:
    """How a text says the normalised `key`: as whole words, or (CJK, 2+ characters) anywhere."""
    return f" {key} ", key if not key.isascii() and len(key.replace(" ", "")) >= 2 else None


def _share(said: str, key: tuple[str, str | None], parts: list[tuple[str, str | None]]) -> float:
    """How much of the old value a card says (`said`: _said): 1.0 when all of it, else the share of its parts
    ("RQ 和 Redis" -> RQ, Redis); 0 when none."""
    if key[0] in said or (key[1] and key[1] in said):
        return 1.0
    if not parts:
        return 0.0
    return sum(whole in said or bool(loose and loose in said) for whole, loose in parts) / len(parts)


def holds(card: Card, old: str) -> float:
    """How much of the old value this card says (its title, or its value for a state card)."""
    key = _norm(old)
    return _share(_said(card.title, card.value or ""), _needle(key), _parts(old)) if key else 0.0


def _parts(old: str) -> list[tuple[str, str | None]]:
    parts = [_norm(p) for p in _PARTS.split(old) if len(_norm(p)) >= 2]
    return [_needle(p) for p in parts] if len(parts) >= 2 else []


def find_holder(subject: str | None, old: str | None, cards: Iterable[Card], project: str | None) -> Card | None:
    """The active card of the project (or a personal one) that held the old value of a change: one whose
    title says the old value; a state card with the same subject first, then the one sharing most subject
    words, then the newest. The offline engine and the LLM engine's change proposals both link through this."""
    cards = list(cards)
    subj = _norm(subject or "")
    key = _norm(old or "")
    if not key:
        return None
    needle, parts = _needle(key), _parts(old or "")
    held = {c.id: _share(_said(c.title, c.value or ""), needle, parts)
            for c in cards if c.status == "active" and c.project in (project, None)}
    found = [c for c in cards if held.get(c.id, 0.0) >= 0.5]
    if not found:
        return None

    words = set(subj.split())

    def first(c: Card):
        same = bool(subj) and c.kind == "state" and _norm(c.subject or "") == subj
        shared = len(words.intersection(_said(c.title, c.value or "").partition("\0")[0].split())) if subj else 0
        return (-held[c.id], not same, -shared)

    def then(c: Card):  # the newest, then the smallest id (only for the cards tied on `first`)
        return (tuple(-ord(ch) for ch in (c.valid_from or c.created or "")), c.id)

    ranked = [(first(c), c) for c in found]
    best = min(r for r, _ in ranked)
    return min((c for r, c in ranked if r == best), key=then)
