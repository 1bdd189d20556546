"""What a search takes and gives: SearchOptions, Hit, SearchResult (plain named tuples, no logic), and what a
hit's snippet holds until it is shown (pending).

collections.namedtuple, not typing.NamedTuple or dataclasses: importing `typing` alone cost ~2.3 ms of every
search's start-up, and no module a search imports needs it (tests/cli/test_startup_cost.py). A hand-made copy of
namedtuple (memvault.records, issue 25) saved 1.7 % of a whole search's CPU time, wall time within noise (issue
37: two same-hour A/Bs at 10k cards): not worth its code. Field types are given in the comments."""

from __future__ import annotations

from collections import namedtuple

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


SearchOptions = namedtuple("SearchOptions", list(_OPTIONS), defaults=list(_OPTIONS.values()))  # fields, defaults


_HIT = (
    "id kind title"  # str; title None inside ranking until the shown hits' details are read
    " project"  # str | None
    " status score snippet"  # str, float, str (a pending (text, terms) pair until shown)
    " why"  # tuple[str, ...]
    " sources"  # =(): episodes a card came from
    " refs"  # =(): input message ids an episode came from
    " created session path"  # ="", None, None: str, str | None, str | None
    " rowid"  # =None; internal: the index row, for the freshness check; not shown
    " world"  # ="", internal: a card's valid_from (else created), an episode's time; for the recency prior
    " weak"  # =False: no hit answers the question: the closest hits of the few words that matched
    " cover"  # =(0.0, 0.0), internal: (share of the question this hit matched, share beyond the names it names)
)


class Hit(namedtuple("Hit", _HIT, defaults=((), (), "", None, None, None, "", False, (0.0, 0.0)))):
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


_RESULT = (
    "query intent"  # str; intent: current | history
    " terms hits"  # tuple[str, ...], tuple[Hit, ...]
    " warnings"  # =(): one line each, for stderr (the dense layer fell back to words …); not in JSON
    " closest"  # =(): tuple[Hit, ...]: no hit answers the question; these come closest (each weak)
)


class SearchResult(namedtuple("SearchResult", _RESULT, defaults=((), ()))):
    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "intent": self.intent, "terms": list(self.terms),
                "count": len(self.hits), "hits": [h.to_json() for h in self.hits],
                "closest": [h.to_json() for h in self.closest]}


def pending(text: str, terms: list[str]) -> tuple[str, tuple[str, ...]]:
    """What a hit's snippet will be made from. A search scores a few hundred candidates and shows ten: the
    snippet (a normalisation and a regex per term) is made only for the hits shown (snippets.settle)."""
    return (text, tuple(terms))
