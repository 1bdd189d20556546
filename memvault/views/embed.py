"""embed: fill the dense layer's vectors (`memvault embed`), and the best-effort embedding after distill and
remember. The work is search.dense.embed's; this module opens the index, refreshes it, and turns settings
into the run. Services never print: the CLI shows progress and warnings."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from memvault.errors import UsageError
from memvault.search.dense.embed import EmbedReport, embed_missing
from memvault.search.dense.settings import from_section
from memvault.search.index import Index
from memvault.vault.store import Vault


def embed_vault(vault: Vault, env: Mapping[str, str], *, episodes: bool = False, rebuild: bool = False,
                on_progress: Callable[[str, int, int], None] | None = None) -> EmbedReport:
    """Embed every card (and with `episodes` every live turn) that has no vector for its current text."""
    settings = from_section(vault.config.section("embeddings"), vault.config.section("redact").get("deny") or ())
    if settings is None:
        raise UsageError("embeddings are off: set embeddings.base_url and embeddings.model in memvault.yaml")
    mode = str(vault.config.section("search").get("chinese", "bigram"))
    with Index(vault.root, mode) as idx:
        idx.refresh(episodes=episodes)
        return embed_missing(idx, settings, env, ("card", "episode") if episodes else ("card",),
                             rebuild=rebuild, on_progress=on_progress)


def embed_new_cards(vault: Vault, env: Mapping[str, str]) -> str | None:
    """After distill or remember: embed the cards that have no vector, best effort. None when done or when
    embeddings are off; else one warning line (a failure here never fails the command that wrote the cards)."""
    try:
        settings = from_section(vault.config.section("embeddings"), vault.config.section("redact").get("deny") or ())
        if settings is None:
            return None
        mode = str(vault.config.section("search").get("chinese", "bigram"))
        with Index(vault.root, mode) as idx:
            idx.refresh()
            embed_missing(idx, settings, env, ("card",))
    except Exception as exc:  # noqa: BLE001 - best effort by design: the cards are written either way
        return f"new cards not embedded ({getattr(exc, 'message', type(exc).__name__)}): run memvault embed"
    return None
