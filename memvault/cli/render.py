"""Human output (rich). Only cli imports this; --json output never goes through here."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

_out = Console(highlight=False)


def stats(data: dict[str, Any]) -> None:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("vault", data["vault"])
    table.add_row("episodes", f"{data['episodes']} in {data['sessions']} sessions, newest {data['newest_episode'] or '-'}")
    for project, n in data["episodes_by_project"].items():
        table.add_row("", f"{project}: {n}")
    statuses = ", ".join(f"{k} {v}" for k, v in data["cards_by_status"].items()) or "none"
    table.add_row("cards", f"{data['cards']} ({statuses})")
    table.add_row("entities", str(data["entities"]))
    table.add_row("journal", f"{data['journal_entries']} entries")
    for key in ("last_distill", "pending_episodes"):
        if key in data:
            table.add_row(key.replace("_", " "), str(data[key] if data[key] is not None else "-"))
    llm = data["llm"]
    if llm["base_url"]:
        table.add_row("llm", f"{llm['model']} at {llm['base_url']} ({llm['base_url_from']})")
    else:  # issue 10: no endpoint, so `distill` (engine auto) runs the offline engine
        table.add_row("llm", "no endpoint configured: distill uses the offline engine")
    table.add_row("api key", llm["api_key"])
    if data.get("damaged"):
        table.add_row("damaged", f"{data['damaged']} lines/files (run `memvault doctor`)")
    _out.print(table)
