"""Batches and what a batch shows the engine: batch sizes, plan_batches, an episode as text, the related cards
(BM25F over search's tokeniser) and how they are listed."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memvault.model import Card, Episode, speaker_label


def batch_size(max_output_tokens: int, tokens_per_episode: int) -> int:
    return max(1, int(max_output_tokens) // max(1, int(tokens_per_episode)))


def plan_batches(episodes: list[Episode], *, size: int, input_budget: int,
                 cost: Callable[[Episode], int]) -> list[list[Episode]]:
    """Consecutive batches of one project each, at most `size` episodes and `input_budget` estimated tokens
    (a single episode over the budget still goes alone: its text is already cut to max_episode_chars)."""
    out: list[list[Episode]] = []
    cur: list[Episode] = []
    used = 0
    for ep in episodes:
        c = cost(ep)
        if cur and (len(cur) >= size or used + c > input_budget or ep.project != cur[0].project):
            out.append(cur)
            cur, used = [], 0
        cur.append(ep)
        used += c
    if cur:
        out.append(cur)
    return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" …[cut {len(text) - limit} chars]"


def format_episode(i: int, ep: Episode, max_chars: int, assistant_chars: int | None = None) -> str:
    """An episode as the prompt shows it. `assistant_chars` cuts the assistant's side shorter (0 leaves it out:
    cards come from what the user says, and a small model quotes whatever text it is shown)."""
    user = _cut(ep.user.strip(), max_chars)
    said = ep.speakers
    head = f"[e{i}] {ep.at[:10]}\nUSER{speaker_label(said.get('user'))}: {user}"
    limit = max_chars if assistant_chars is None else min(max_chars, assistant_chars)
    if limit <= 0:
        return head
    return head + f"\nASSISTANT{speaker_label(said.get('assistant'))}: {_cut(ep.assistant.strip(), limit)}"


def format_related(cards: list[Card]) -> str:
    if not cards:
        return "(none)"
    lines = []
    for i, c in enumerate(cards):
        state = f" [{c.subject}.{c.field}={c.value}]" if c.kind == "state" else ""
        body = " ".join(c.body.split())
        body = f" — {body[:140]}" if body else ""
        lines.append(f"[{i}] {c.kind}{state} · {c.title} ({(c.valid_from or c.created)[:10]}){body}")
    return "\n".join(lines)


# Field weights of search's BM25F (eval/REPORT.md): a shared title word says more than a shared body word.
_RELATED_WEIGHTS = {"title": 4.0, "entities": 3.0}


def find_related(batch: list[Episode], candidates: list[Card], names: Mapping[str, str], limit: int) -> list[Card]:
    """Active cards of the batch's project (or personal ones) ranked by BM25F of the batch's words over their
    title and entity names / state subject, with search's tokeniser (CJK bigrams, light stemming) and field
    weights. Ties go to the newest card. Deterministic."""
    from memvault.search import bm25
    from memvault.search import tokenize

    if limit <= 0:
        return []
    project = batch[0].project
    words = set(tokenize.tokens(" ".join(f"{e.user} {e.assistant}" for e in batch)))
    docs: dict[str, dict[str, list[str]]] = {}
    by_id: dict[str, Card] = {}
    for c in candidates:
        if c.status != "active" or (c.project not in (project, None)):
            continue
        doc = {"title": tokenize.tokens(c.title),
               "entities": tokenize.tokens(" ".join([c.subject or "", *(names.get(s, s) for s in c.entities)]))}
        if words.isdisjoint(doc["title"]) and words.isdisjoint(doc["entities"]):
            continue
        docs[c.id] = doc
        by_id[c.id] = c
    shared = sorted({t for d in docs.values() for f in d.values() for t in f} & words)
    ranked = bm25.rank(shared, docs, _RELATED_WEIGHTS)
    ranked.sort(key=lambda r: (-round(r[1].score, 9), _neg(by_id[r[0]].created), r[0]))
    return [by_id[cid] for cid, _ in ranked[:limit]]


def _neg(s: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in s)
