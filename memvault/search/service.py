"""search service: the entry point of a search. Settings (cached so that a search reads no YAML), options,
and run_search: open and refresh the index, run the pipeline (pipeline.py: analyse -> candidates -> score ->
hops -> order -> fuse -> present, each stage once), re-check the freshness of what it found, and redact what is
shown. Kept cheap to import for the search fast path (cli/fast.py): no module-level yaml, rapidfuzz,
snowballstemmer or jieba; redact is imported at use. Re-exports the names other packages import from here
(run_search, options_from, settings, SearchOptions, Hit, SearchResult, snippet, open_root, CARD_WEIGHTS,
analyse, search_index).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # typing's own constant, without importing typing (~2.3 ms of every search's start-up)
if TYPE_CHECKING:
    from pathlib import Path  # annotations only: a search's process imports no pathlib (vault.local)
    from typing import Any

from memvault.choices import check_choice
from memvault.errors import NoMatch, UsageError
from memvault.search import tokenize
from memvault.search.candidates import CARD_WEIGHTS, POOL
from memvault.search.index import Index, find_root
from memvault.search.pipeline import search_index
from memvault.search.query import Query, analyse
from memvault.search.results import Hit, SearchOptions, SearchResult
from memvault.search.scoring import EPISODE_WEIGHTS
from memvault.search.snippets import snippet
from memvault.vault.local import derived_path
from memvault.vault.locate import locate_root

__all__ = ["CARD_WEIGHTS", "EPISODE_WEIGHTS", "POOL", "Hit", "Query", "SearchOptions", "SearchResult", "analyse",
           "open_root", "options_from", "run_search", "search_index", "settings", "snippet"]


# ---------------------------------------------------------------- settings


def settings(root: str | os.PathLike, env: Mapping[str, str]) -> dict[str, Any]:
    """The `search` and `redact.deny` settings, cached in the index keyed by memvault.yaml's stat so that a
    search does not import yaml. Any change to the file re-reads it through the normal config path. The cache
    is JSON: marshal, which spares a search importing json, saved 3-4 % of a whole search's CPU time (~1.2 ms;
    issue 37: three same-hour A/Bs at 10k cards; wall p50 -0.1 % in two, +8 % in one on a loaded machine),
    under the 5 % that would pay for a format of its own. Derived, like the rest of .memvault/."""
    cfg_path = os.path.join(root, "memvault.yaml")
    st = os.stat(cfg_path)
    key = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
    local = derived_path(root)
    cache = os.path.join(local or os.path.join(root, ".memvault"), "search-settings.json")
    racy = time.time_ns() - st.st_mtime_ns < 2_000_000_000  # as vault.store._settings: a fresh stat proves nothing
    try:
        if not racy:
            with open(cache, "rb") as fh:
                data = json.loads(fh.read())
            if data.get("key") == key and data.get("v") == 3:
                return data
    except (OSError, ValueError, EOFError, TypeError, AttributeError):
        pass  # none yet, another version's, or damaged: read memvault.yaml
    from pathlib import Path  # slow path: yaml, once per change of the file

    from memvault.vault.store import atomic_write, read_config

    cache = Path(cache)
    cfg = read_config(Path(root), env)
    deny = list(cfg.section("redact").get("deny") or [])
    # The embeddings section carries redact.deny too: what goes to the embeddings endpoint is redacted with it.
    data = {"v": 3, "key": key, "search": dict(cfg.section("search")), "deny": deny, "kinds": list(cfg.kinds),
            "embeddings": {**dict(cfg.section("embeddings")), "deny": deny}}
    try:
        if not racy:
            atomic_write(cache, json.dumps(data).encode())
    except (OSError, ValueError, TypeError):
        pass  # a read-only vault still searches; a value JSON cannot write (a YAML date) is read each time
    return data


# The shipped default of search.recency_half_life_days. Measured (docs/search.md, "Recency"): 365 days, on questions that
# say "now", changes neither the own eval nor LoCoMo's temporal questions; 30 and 90 cost LoCoMo temporal
# session R@5 (0.903 -> 0.896) and 30 the own eval; on every question without a history word, all cost a lot.
RECENCY_HALF_LIFE_DAYS = 365.0


# The shipped default of search.answer_floor, which applies from order.UNKNOWN_SHARE of a question's IDF mass in
# words the vault has never seen. Measured (docs/search.md, "No match"): the own eval's negative questions
# answered 32/48 -> 4/48; see there what it costs.
ANSWER_FLOOR = 0.55


def options_from(cfg: Mapping[str, Any], kinds: Sequence[str] | None = None, **overrides: Any) -> SearchOptions:
    """Search settings with the command's overrides. With `kinds` (the vault's card kinds), --kind must be one."""
    if kinds is not None:
        check_choice("kind", overrides.get("kind"), kinds)
    base = {
        "limit": int(cfg.get("limit", 10)), "hops": int(cfg.get("hops", 1)),
        "snippet_chars": int(cfg.get("snippet_chars", 160)), "floor": float(cfg.get("floor", 0.15)),
        "episode_floor": float(cfg.get("episode_floor", 0.1)), "mode": str(cfg.get("chinese", "bigram")),
        "stat_all_below": int(cfg.get("stat_all_below", 5000)), "synonyms": bool(cfg.get("synonyms", False)),
        "name_floor": float(cfg.get("name_floor", 0.0)), "expansion_floor": float(cfg.get("expansion_floor", 0.0)),
        "recency_half_life_days": float(cfg.get("recency_half_life_days", RECENCY_HALF_LIFE_DAYS)),
        "episodes": bool(cfg.get("episodes", True)),
        "answer_floor": float(cfg.get("answer_floor", ANSWER_FLOOR)),
    }
    emb = overrides.pop("embeddings", None)
    if emb is not None and not isinstance(emb, tuple):  # the `embeddings:` section (a tuple: already parsed)
        if emb.get("base_url"):
            from memvault.search.dense.settings import from_section  # only when the dense layer is on

            emb = from_section(emb)
        else:
            emb = None
    base["embeddings"] = emb
    base.update({k: v for k, v in overrides.items() if v is not None})
    if base["mode"] not in tokenize.MODES:
        raise UsageError(f"search.chinese must be one of {', '.join(tokenize.MODES)}")
    if base["limit"] < 1:
        raise UsageError("--limit must be at least 1")
    if base["hops"] < 0:
        raise UsageError("--hops must be 0 or more")
    if base["recency_half_life_days"] < 0:
        raise UsageError("search.recency_half_life_days must be 0 (off) or more")
    return SearchOptions(**base)


def run_search(root: str | os.PathLike, query: str, opts: SearchOptions, deny: list[str] | None = None,
               env: Mapping[str, str] | None = None) -> SearchResult:
    """Open (and refresh) the index of the vault at `root`, search, and redact what is shown. With
    `opts.embeddings` the dense layer joins in (its key comes from `env`, default os.environ); what it has to
    say (fell back to words, cards without vectors) comes back in `warnings`, also with NoMatch."""
    if not query.strip():
        raise UsageError("empty query")
    env = os.environ if env is None else env
    with Index(root, opts.mode, opts.stat_all_below) as idx:
        idx.refresh(episodes=opts.episodes)
        result = search_index(idx, query, opts, env)
        # A hit whose file changed since the index saw it (edited in place): re-index and search again, once.
        rowids = [h.rowid for h in (*result.hits, *result.closest) if h.rowid is not None]
        if rowids and not idx.verify_cards(rowids):
            result = search_index(idx, query, opts, env)
    result = result._replace(hits=tuple(_redacted(h, deny or []) for h in result.hits),
                             closest=tuple(_redacted(h, deny or []) for h in result.closest))
    if not result.hits:
        # Exit 1 like grep; what came closest (if anything) travels with the error for the reader to show.
        exc = NoMatch("no match")
        exc.warnings = result.warnings  # type: ignore[attr-defined]
        exc.result = result  # type: ignore[attr-defined]
        raise exc
    return result


def _redacted(hit: Hit, deny: list[str]) -> Hit:
    """Defence in depth: what search shows passes the same filter as capture."""
    from memvault.redact import engine as redact

    rules = _rules(tuple(deny))
    return hit._replace(title=redact.redact(hit.title, rules).text, snippet=redact.redact(hit.snippet, rules).text)


_RULES: dict[tuple[str, ...], Any] = {}


def _rules(deny: tuple[str, ...]):
    from memvault.redact import engine as redact

    if deny not in _RULES:
        _RULES[deny] = redact.compile_rules(list(deny))
    return _RULES[deny]


def open_root(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> Path:
    return find_root(explicit, env)


def root_path(explicit: str | os.PathLike | None, env: Mapping[str, str]) -> str:
    """open_root as a string path (the search's fast path does without pathlib)."""
    return locate_root(explicit, env)
