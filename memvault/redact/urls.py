"""URLs safe to show: scheme://host[:port]/path, without the user:password@ or the query (where keys hide).
Used wherever memvault names an endpoint (LLM and embeddings clients, stats)."""

from __future__ import annotations

from urllib.parse import urlsplit


def display_url(url: str, setting: str = "base_url") -> str:
    """scheme://host[:port]/path of a URL, without userinfo, query or fragment, safe to show in a message."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return f"<unparseable {setting}>"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return f"{parts.scheme}://{netloc}{parts.path}"
