"""What `distill --auto` does after distilling: for each project whose synopsis rule says so
(auto_synopsis.due: every N new cards or N days), `consolidate` that project with the configured engine and,
with the LLM engine and `synopsis.reflect: true`, `reflect` on it. Each runs under the distill lock with its own
journal line, exactly as the commands do; a project the rule does not name is not touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memvault.vault.store import Vault


def auto_upkeep(vault: Vault, env: Mapping[str, str], *, now: Callable[[], str], project: str | None = None,
                explain: bool = False) -> dict[str, Any]:
    """{"synopsis": [{"project", "run", "reason"}], "consolidate": {...} | None, "reflect": {...} | None}.
    With `explain` only the decisions; nothing runs."""
    from memvault.distill import auto_synopsis, engine as engines
    from memvault.distill.consolidate import consolidate
    from memvault.distill.reflect import reflect

    rules = vault.config.section("synopsis")
    decisions = auto_synopsis.due(vault.cards(problems=[]), rules, now_utc=now(), project=project)
    out: dict[str, Any] = {"synopsis": [{"project": p, **d.to_json()} for p, d in decisions],
                           "consolidate": None, "reflect": None}
    due = [p for p, d in decisions if d.run]
    if explain or not due:
        return out
    engine = engines.resolve(vault.config)
    made: dict[str, Any] = {"engine": engine, "written": [], "unchanged": [], "warnings": []}
    for name in due:
        done = consolidate(vault, now=now, project=name, engine=engine, env=env).to_json()
        for key in ("written", "unchanged", "warnings"):
            made[key] += done[key]
    out["consolidate"] = made
    if engine == "llm" and rules.get("reflect", True):
        thought: dict[str, Any] = {"written": [], "unchanged": [], "dropped": [], "warnings": []}
        for name in due:
            done = reflect(vault, env, now=now, project=name).to_json()
            for key in ("written", "unchanged", "dropped", "warnings"):
                thought[key] += done[key]
        out["reflect"] = thought
    return out
