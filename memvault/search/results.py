"""What a search takes and gives: SearchOptions, Hit, SearchResult (plain NamedTuples, no logic)."""

# Annotations evaluated (no `from __future__ import annotations`): typing.NamedTuple compiles every string
# annotation into a ForwardRef, ~2.5 ms for these three classes at each search start-up.

from typing import Any, NamedTuple

# NamedTuple, not dataclass: a dataclass costs ~2.5 ms of code generation at import, on every search call.
class SearchOptions(NamedTuple):
    limit: int = 10
    project: str | None = None
    kind: str | None = None
    include_all: bool = False
    hops: int = 1
    episodes: bool = False
    snippet_chars: int = 160
    floor: float = 0.15
    episode_floor: float = 0.1
    mode: str = "bigram"
    bm25_only: bool = False  # baseline for eval/: no entity names, no hops, no status or intent rules
    stat_all_below: int = 5000
    expand: bool = True  # entity aliases (and with `synonyms`, the synonym table); eval/ measures both
    synonyms: bool = False  # search.synonyms: the shipped zh/en synonym groups (off: they cost the old eval set)
    name_floor: float = 0.0  # search.name_floor: share of the query a hit resting on one entity name must cover
    expansion_floor: float = 0.0  # search.expansion_floor: the same for a hit resting on expansions only
    recency_half_life_days: float = 0.0  # search.recency_half_life_days: the recency prior (0 = off)
    embeddings: Any = None  # search.dense.settings.EmbedSettings when the dense layer is on, else None


class Hit(NamedTuple):
    id: str
    kind: str
    title: str
    project: str | None
    status: str
    score: float
    snippet: str
    why: tuple[str, ...]
    sources: tuple[str, ...] = ()  # episodes a card came from
    refs: tuple[str, ...] = ()  # input message ids an episode came from
    created: str = ""
    session: str | None = None
    path: str | None = None
    rowid: int | None = None  # internal: the index row, for the freshness check; not shown
    world: str = ""  # internal: a card's valid_from (else created), an episode's time; for the recency prior
    weak: bool = False  # nothing reached the relevance floor: the best hits of the few words that matched

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        del out["rowid"], out["world"]
        out["valid_from"] = self.world or None  # when it was said or became true (a card's valid_from, else created)
        out["score"] = round(self.score, 4)
        out["why"] = list(self.why)
        out["sources"] = list(self.sources)
        out["refs"] = list(self.refs)
        return out


class SearchResult(NamedTuple):
    query: str
    intent: str  # current | history
    terms: tuple[str, ...]
    hits: tuple[Hit, ...]
    warnings: tuple[str, ...] = ()  # one line each, for stderr (the dense layer fell back to words …); not in JSON

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "intent": self.intent, "terms": list(self.terms),
                "count": len(self.hits), "hits": [h.to_json() for h in self.hits]}
