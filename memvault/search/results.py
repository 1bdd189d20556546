"""What a search takes and gives: SearchOptions, Hit, SearchResult (plain named tuples, no logic).

memvault.records, not typing.NamedTuple or dataclasses: importing `typing` alone cost ~2.3 ms of every search's
start-up, and no module a search imports needs it (tests/cli/test_startup_cost.py); nor collections.namedtuple,
whose eval of each __new__ cost ~0.4 M instructions a record. Field types are given in the comments."""

from __future__ import annotations

from memvault.records import _tuple_new, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_OPTIONS = {
    "limit": 10,
    "project": None,  # str | None
    "kind": None,  # str | None
    "include_all": False,
    "hops": 1,
    "episodes": False,
    "snippet_chars": 160,
    "floor": 0.15,
    "episode_floor": 0.1,
    "mode": "bigram",
    "bm25_only": False,  # baseline for eval/: no entity names, no hops, no status or intent rules
    "stat_all_below": 5000,
    "expand": True,  # entity aliases (and with `synonyms`, the synonym table); eval/ measures both
    "synonyms": False,  # search.synonyms: the shipped zh/en synonym groups (off: they cost the old eval set)
    "name_floor": 0.0,  # search.name_floor: share of the query a hit resting on one entity name must cover
    "expansion_floor": 0.0,  # search.expansion_floor: the same for a hit resting on expansions only
    "recency_half_life_days": 0.0,  # search.recency_half_life_days: the recency prior (0 = off)
    "answer_floor": 0.0,  # search.answer_floor: share of a question with unknown words a hit must match (0 = off)
    "embeddings": None,  # search.dense.settings.EmbedSettings when the dense layer is on, else None
}


def _options(_cls, limit=10, project=None, kind=None, include_all=False, hops=1, episodes=False, snippet_chars=160,
             floor=0.15, episode_floor=0.1, mode="bigram", bm25_only=False, stat_all_below=5000, expand=True,
             synonyms=False, name_floor=0.0, expansion_floor=0.0, recency_half_life_days=0.0, answer_floor=0.0,
             embeddings=None):
    return _tuple_new(_cls, (limit, project, kind, include_all, hops, episodes, snippet_chars, floor, episode_floor,
                             mode, bm25_only, stat_all_below, expand, synonyms, name_floor, expansion_floor,
                             recency_half_life_days, answer_floor, embeddings))


SearchOptions = record("SearchOptions", _options)  # fields and defaults: _OPTIONS (a test keeps them equal)


def _hit(_cls, id, kind, title,  # noqa: A002 - str; title None inside ranking until with_details reads it
         project,  # str | None
         status, score, snippet,  # str, float, str (a pending (text, terms) pair inside ranking)
         why,  # tuple[str, ...]
         sources=(),  # episodes a card came from
         refs=(),  # input message ids an episode came from
         created="", session=None, path=None,  # str, str | None, str | None
         rowid=None,  # internal: the index row, for the freshness check; not shown
         world="",  # internal: a card's valid_from (else created), an episode's time; for the recency prior
         weak=False,  # no hit answers the question: the closest hits of the few words that matched
         cover=(0.0, 0.0)):  # internal: (share of the question this hit matched, share beyond the names it names)
    return _tuple_new(_cls, (id, kind, title, project, status, score, snippet, why, sources, refs, created, session,
                             path, rowid, world, weak, cover))


class Hit(record("Hit", _hit)):
    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        del out["rowid"], out["world"], out["cover"]
        out["valid_from"] = self.world or None  # when it was said or became true (a card's valid_from, else created)
        out["score"] = round(self.score, 4)
        out["why"] = list(self.why)
        out["sources"] = list(self.sources)
        out["refs"] = list(self.refs)
        return out


def _result(_cls, query, intent,  # str; intent: current | history
            terms, hits,  # tuple[str, ...], tuple[Hit, ...]
            warnings=(),  # one line each, for stderr (the dense layer fell back to words …); not in JSON
            closest=()):  # tuple[Hit, ...]: no hit answers the question; these come closest (each weak)
    return _tuple_new(_cls, (query, intent, terms, hits, warnings, closest))


class SearchResult(record("SearchResult", _result)):
    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "intent": self.intent, "terms": list(self.terms),
                "count": len(self.hits), "hits": [h.to_json() for h in self.hits],
                "closest": [h.to_json() for h in self.closest]}
