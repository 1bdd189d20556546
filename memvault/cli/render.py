"""Human output of `stats`: a two-column table as plain text. Only cli imports this; --json never goes here.

Plain text, not rich: rich costs ~15 ms of start-up per call and the table needs no colour or wrapping.
"""

from __future__ import annotations

from typing import Any


def stats_lines(data: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, str]] = [("vault", data["vault"]),
                                   ("episodes", f"{data['episodes']} in {data['sessions']} sessions, "
                                                f"newest {data['newest_episode'] or '-'}")]
    rows += [("", f"{project}: {n}") for project, n in data["episodes_by_project"].items()]
    statuses = ", ".join(f"{k} {v}" for k, v in data["cards_by_status"].items()) or "none"
    rows += [("cards", f"{data['cards']} ({statuses})"), ("entities", str(data["entities"])),
             ("journal", f"{data['journal_entries']} entries")]
    for key in ("last_distill", "pending_episodes"):
        if key in data:
            rows.append((key.replace("_", " "), str(data[key] if data[key] is not None else "-")))
    none = data.get("episodes_without_cards") or {}
    if any(none.values()):
        rows.append(("no card from", f"{none.get('no_statement', 0)} episodes with no statement found, "
                                     f"{none.get('unread_language', 0)} in a language the offline engine does not "
                                     "read" + ("" if data["llm"]["base_url"] else
                                               " (set llm.base_url, then `memvault distill --upgrade`)")))
    llm = data["llm"]
    if llm["base_url"]:
        rows.append(("llm", f"{llm['model']} at {llm['base_url']} ({llm['base_url_from']})"))
    else:  # no endpoint: `distill` (engine auto) runs the offline engine
        rows.append(("llm", "no endpoint configured: distill uses the offline engine"))
    rows.append(("api key", llm["api_key"]))
    emb = data.get("embeddings") or {}
    if emb.get("problem"):
        rows.append(("embeddings", f"{emb.get('model')} at {emb['base_url']}: {emb['problem']}"))
    elif emb.get("base_url"):
        rows.append(("embeddings", f"{emb['model']} at {emb['base_url']}: {emb['cards_embedded']} card vectors,"
                                   f" {emb['cards_missing']} cards without one (`memvault embed`)"
                                   + (f"; stored vectors are for {emb['stored_model']}"
                                      if emb["stored_model"] and emb["stored_model"] != emb["model"] else "")))
        rows.append(("embed key", emb["api_key"]))
    else:
        rows.append(("embeddings", "off (search by words only)"))
    if data.get("damaged"):
        rows.append(("damaged", f"{data['damaged']} lines/files (run `memvault doctor`)"))
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {value}" for label, value in rows]
