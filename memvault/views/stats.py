"""stats: counts per layer and project, newest episode, the configured endpoints (LLM, embeddings) and where
their keys come from, and how many cards have a vector."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from memvault.errors import EmbedError
from memvault.redact.urls import display_url
from memvault.search.index import Index
from memvault.vault.store import Vault


def vault_stats(vault: Vault, env: Mapping[str, str]) -> dict[str, Any]:
    # The turns counted from a per-file cache (memvault.vault.tally), not parsed again: ~270 ms at 21.6k turns.
    turns = vault.tally()
    problems: list = []
    # Card counts come from the search index, refreshed from the files first (a stat per month folder when
    # nothing changed): parsing 100k cards' YAML would take ~12 s.
    with Index(vault.root, str(vault.config.section("search").get("chinese", "bigram"))) as idx:
        problems.extend(idx.refresh().problems)
        statuses = idx.status_counts()
        card_projects = idx.project_counts()
        emb = dict(vault.config.section("embeddings"))
        embeddings: dict[str, Any] = {"base_url": display_url(str(emb.get("base_url") or ""),
                                                              "embeddings.base_url") if emb.get("base_url") else ""}
        try:
            if embeddings["base_url"]:
                from memvault.search.dense.embed import attach  # only with embeddings on (start-up, issue 37)

                attach(idx)
                meta = idx.vec_space("card")
                embeddings.update({
                    "model": emb.get("model"), "stored_model": meta[0] if meta else None,
                    "dimensions": meta[1] if meta else 0, "cards_embedded": idx.vec_count("card"),
                    "cards_missing": idx.vec_missing_card_count(), "episodes_embedded": idx.vec_count("episode"),
                    # The variable the key would come from, and whether it is set; never the key itself.
                    "api_key": (f"env {emb['api_key_env']} ({'set' if env.get(emb['api_key_env']) else 'not set'})"
                                if emb.get("api_key_env") else "none")})
        except EmbedError as exc:
            embeddings.update({"model": emb.get("model"), "problem": exc.message})
        except sqlite3.DatabaseError as exc:
            why = "busy: another memvault is writing it" if isinstance(exc, sqlite3.OperationalError) else "damaged"
            embeddings.update({"model": emb.get("model"),
                               "problem": f".memvault/vectors.sqlite is {why}: run memvault embed"})
    n_cards = sum(statuses.values())
    journal = vault.journal(problems=problems)
    from memvault.distill.journal import distilled_ids, last_distill  # not distill.cards: ~10 ms of imports
    distilled = distilled_ids(journal)
    llm = vault.config.llm
    key_env = str(llm.get("api_key_env") or "MEMVAULT_LLM_API_KEY")
    return {
        "vault": str(vault.root),
        "episodes": turns.episodes,
        "episodes_by_project": turns.by_project,
        "newest_episode": turns.newest,
        "sessions": turns.sessions,
        "cards": n_cards,
        "cards_by_status": dict(sorted(statuses.items())),
        "cards_by_project": dict(sorted(card_projects.items())),
        "entities": len(vault.entity_files()),
        "journal_entries": len(journal),
        "last_distill": last_distill(journal),
        # Episodes the offline engine read and found nothing in, by why (journal lines of issue 32 on).
        "episodes_without_cards": nothing_counts(journal),
        # Derived from the journal (truth), so a vault synced from another machine counts the same.
        "pending_episodes": len(turns.ids - distilled),
        "damaged": turns.damaged + len(problems),
        "settings_problems": [str(p) for p in vault.config.problems],
        "llm": {
            "base_url": (display_url(str(llm["base_url"]), "llm.base_url") if llm.get("base_url")
                         else llm.get("base_url")),
            "model": llm.get("model"),
            "base_url_from": vault.config.sources.get("llm.base_url", "default"),
            # Where the key would come from, and whether it is set; never the key itself.
            "api_key": f"env {key_env} ({'set' if env.get(key_env) else 'not set'})",
        },
        "embeddings": embeddings,
    }


def nothing_counts(journal: list[dict]) -> dict[str, int]:
    """Episodes the offline engine gave no card, by why, summed over the journal's distill lines."""
    out = {"unread_language": 0, "no_statement": 0}
    for rec in journal:
        for reason, n in (rec.get("nothing") or {}).items():
            if reason in out and isinstance(n, int):
                out[reason] += n
    return out
