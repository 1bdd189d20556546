"""Which engine writes a distill run's cards (issue 10): `distill.engine: auto | llm | offline`.

auto is the LLM when an endpoint is configured (llm.base_url set in memvault.yaml or MEMVAULT_LLM_BASE_URL),
else the offline engine, so `memvault distill` makes cards on a machine with no model at all.
"""

from __future__ import annotations

from memvault.errors import UsageError
from memvault.vault.config import Config

ENGINES = ("auto", "llm", "offline")


def resolve(config: Config, override: str | None = None) -> str:
    """"llm" or "offline". Raises UsageError for an unknown engine or `llm` with no endpoint. `override` is a
    command's --engine option, which wins over distill.engine."""
    engine = str(override or config.section("distill").get("engine") or "auto").strip().lower()
    if engine not in ENGINES:
        where = "--engine" if override else "memvault.yaml: distill.engine"
        raise UsageError(f"{where} must be one of {', '.join(ENGINES)}, not {engine!r}")
    endpoint = str(config.llm.get("base_url") or "").strip()
    if engine == "auto":
        return "llm" if endpoint else "offline"
    if engine == "llm" and not endpoint:
        raise UsageError("distill.engine is llm but no endpoint is configured: set llm.base_url in memvault.yaml "
                         "or MEMVAULT_LLM_BASE_URL (or use distill.engine: offline)")
    return engine
