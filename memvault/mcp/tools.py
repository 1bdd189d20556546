"""The MCP reading tools and resources, free of the SDK (the writing tools: memvault.mcp.writes): each checks its
arguments (guard), makes the same service call as the CLI command of the same name (memvault/cli/commands/*.py),
redacts the result, and returns it twice: `data`, the shape the CLI prints with --json with every memory text
field marked as quoted data (guard.mark), and `text`, a short readable rendering fenced as quoted data.
Parameters carry the MCP argument names (`id`, `all`), which shadow builtins here on purpose.

A `Ctx` holds what every call shares: the vault folder, the environment, the project scope, and the vault's
settings (read again when memvault.yaml changes).
"""

from __future__ import annotations

import datetime
import os
from urllib.parse import quote
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from memvault.errors import NoMatch
from memvault.model import sourceless_label
from memvault.mcp import guard
from memvault.mcp.guard import ToolRefused


class Reply(NamedTuple):
    data: dict[str, Any]
    text: str


class Ctx:
    """What the tools of one server share. `vault_dir` is the --vault option (None: the usual search)."""

    def __init__(self, vault_dir: str | os.PathLike | None, env: Mapping[str, str], project: str | None = None):
        self.vault_dir = vault_dir
        self.env = env
        self.project = project
        self._vault = None
        self._stamp: tuple | None = None
        self._resources: tuple[str, list] | None = None  # (index generation, resource_list's answer)

    def vault(self):
        """The open Vault, opened again when memvault.yaml changed (its redaction rules may have)."""
        from memvault.vault.store import Vault

        if self._vault is None:
            self._vault = Vault.open(self.vault_dir, self.env)
        stamp = _stamp(self._vault.root / "memvault.yaml")
        if stamp != self._stamp:
            self._vault = Vault.open(self._vault.root, self.env)
            self._stamp = stamp
        return self._vault

    def mode(self) -> str:
        return str(self.vault().config.section("search").get("chinese", "bigram"))

    def now(self):
        from memvault.vault.config import clock_from_env

        return clock_from_env(self.env)


def _stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _reply(ctx: Ctx, data: dict[str, Any], lines: list[str], memory: bool = True) -> Reply:
    rules = ctx.vault().rules
    text = guard.clean_text(rules, "\n".join(lines))
    return Reply(guard.mark(data), guard.fence(text)) if memory else Reply(data, text)


def _in_scope(ctx: Ctx, project: str | None, what: str) -> None:
    if ctx.project is not None and project != ctx.project:
        raise NoMatch(f"no such {what} in project {ctx.project!r}")


# ------------------------------------------------------------------ reading


def search(ctx: Ctx, query: Any, project: Any = None, kind: Any = None, all: Any = False,  # noqa: A002
           episodes: Any = False, limit: Any = None, cards_only: Any = False) -> Reply:
    from memvault.search import service as svc

    query = guard.text("query", query)
    project = guard.scoped("project", project, ctx.project)
    kind = guard.text("kind", kind, "name", required=False)
    limit = guard.number("limit", limit, 1, guard.MAX_LIMIT)
    include_all, episodes = guard.flag("all", all), guard.flag("episodes", episodes)
    episodes = False if guard.flag("cards_only", cards_only) else (episodes or None)  # None: search.episodes
    vault = ctx.vault()
    cfg = svc.settings(vault.root, ctx.env)
    opts = svc.options_from(cfg["search"], cfg["kinds"], limit=limit, project=project, kind=kind,
                            include_all=include_all, episodes=episodes, embeddings=cfg.get("embeddings"))
    try:
        result = svc.run_search(vault.root, query, opts, deny=cfg["deny"], env=ctx.env)
        data = result.to_json()
        warnings = result.warnings
    except NoMatch as exc:
        found = getattr(exc, "result", None)
        data = found.to_json() if found is not None else {"query": query, "intent": None, "terms": [], "count": 0,
                                                          "hits": [], "closest": []}
        warnings = getattr(exc, "warnings", ())
    if warnings:  # the dense layer fell back to words, or cards have no vector yet (the CLI's stderr lines)
        data["warnings"] = list(dict.fromkeys(warnings))
    # run_search has redacted what a hit shows (title, snippet) with the vault's rules, as for the CLI; the
    # readable text is redacted once more below. (A second pass over the data would cost ~10 % of a call.)
    lines = [f"{data['count']} hits for the query"]
    if data.get("closest"):
        lines[0] = "no match: nothing answers the query; closest (weak, not an answer):"
    for h in data["hits"] or data.get("closest", []):
        said = (h.get("valid_from") or h.get("created") or "")[:10]
        if h["kind"] == "episode":  # a raw turn: when it was said, in which session; `show` reads it whole
            where = " · ".join(x for x in (h.get("project"), f"said {said}" if said else "", h.get("session"))
                               if x)
            lines.append(f"- {h['id']}  [turn] {h['title']}  ({where})")
        else:
            where = " · ".join(x for x in (h.get("project"), h.get("status"), f"since {said}" if said else "")
                               if x)
            lines.append(f"- {h['id']}  [{h['kind']}] {h['title']}  ({where})")
        if h.get("why"):
            lines.append(f"  why: {'; '.join(h['why'])}")
        if h.get("snippet"):
            lines.append(f"  {h['snippet']}")
    lines += [f"warning: {w}" for w in data.get("warnings", [])]
    return _reply(ctx, data, lines)


def show(ctx: Ctx, id: Any, sources: Any = True) -> Reply:  # noqa: A002
    data, lines = _show(ctx, guard.ident("id", id), True if sources is None else guard.flag("sources", sources))
    return _reply(ctx, data, lines)


def _show(ctx: Ctx, ident: str, with_sources: bool) -> tuple[dict[str, Any], list[str]]:
    from memvault.views.show import show as svc_show

    vault = ctx.vault()
    try:
        data = svc_show(vault, ident, ctx.mode(), with_sources=with_sources)
    except NoMatch:
        raise NoMatch("no card, turn or entity by that id or name") from None
    if data["type"] in ("card", "episode"):
        _in_scope(ctx, data["project"], data["type"])
    elif ctx.project is not None:
        data["cards"] = [c for c in data["cards"] if c["project"] == ctx.project]
    data = guard.clean(vault.rules, data)
    if data["type"] == "episode":
        lines = [f"{data['id']}  turn {data['turn'] or '?'} of {data['project'] or '-'}/{data['session'] or '-'}"
                 f" · said {data['at'] or '?'} · {data['status']}"]
        if data["user"] is not None:
            lines += ["", f"user: {data['user']}", "", f"assistant: {data['assistant']}"]
        lines += [f"card from this turn: {c['id']} [{c['kind']}] {c['title']} ({c['status']})"
                  for c in data["cards"]]
    elif data["type"] == "card":
        lines = [f"{data['id']}  [{data['kind']}] {data['title']}",
                 f"project {data['project'] or '-'} · status {data['status']} · created {data['created']}"
                 f" · valid {data['valid_from'] or '?'} .. {data['valid_to'] or 'now'}"]
        if data["entities"]:
            lines.append(f"entities: {', '.join(data['entities'])}")
        lines += ["", data["body"], ""]
        for ep in data.get("source_episodes") or []:
            lines.append(f"source {ep['id']} {ep.get('at') or ''} ({ep['status']})")
            if ep.get("user") is not None:
                lines += [f"  user: {_flat(ep['user'])}", f"  assistant: {_flat(ep['assistant'])}"]
        if not data.get("source_episodes"):
            lines.append(f"sources: {', '.join(data['sources']) or sourceless_label(data.get('source'))}")
        lines += [f"chain: {s['created'][:10]} {s['id']} {s['status']}" for s in data["chain"] if len(data["chain"]) > 1]
    else:
        lines = [f"{data['name']}  ({data['kind'] or 'entity'})  aliases: {', '.join(data['aliases']) or '-'}"]
        if data["prose"]:
            lines.append(data["prose"])
        lines += [f"- {c['created'][:10]}  {c['id']}  [{c['kind']}] {c['title']}  ({c['status']})" for c in data["cards"]]
    return data, lines


def timeline(ctx: Ctx, entity: Any = None, project: Any = None, since: Any = None, limit: Any = None,
             all: Any = False) -> Reply:  # noqa: A002
    from memvault.search.index import Index
    from memvault.views.timeline import timeline as svc_timeline

    entity = guard.ident("entity", entity) if entity not in (None, "") else None
    project = guard.scoped("project", project, ctx.project)
    since = guard.text("since", since, "name", required=False)
    if since is not None:
        try:
            ok = len(since) == 10 and since[4] == since[7] == "-" and since.replace("-", "").isdigit()
            datetime.date.fromisoformat(since if ok else "x")
        except ValueError:
            raise ToolRefused("since must be a date, YYYY-MM-DD") from None
    limit = guard.number("limit", limit, 1, 10_000)
    include_all = guard.flag("all", all)
    vault = ctx.vault()
    try:
        with Index(vault.root, ctx.mode()) as idx:
            rows = svc_timeline(idx, entity, project, since, limit, include_all)
    except NoMatch as exc:
        if entity is not None and "entity" in exc.message:
            raise
        rows = []
    data = guard.clean(vault.rules, {"entries": rows})
    lines = [f"{len(rows)} cards, oldest first"]
    for r in data["entries"]:
        link = f"  -> {', '.join(r['superseded_by'])}" if r["superseded_by"] else ""
        lines.append(f"{r['date']}  {r['id']}  [{r['kind']}] {r['title']}  ({r['status']}){link}")
    return _reply(ctx, data, lines)


def graph(ctx: Ctx, id: Any, limit: Any = None) -> Reply:  # noqa: A002
    from memvault.search.index import Index
    from memvault.views import graph as svc

    ident = guard.ident("id", id)
    limit = guard.number("limit", limit, 1, guard.MAX_LIMIT) or 20
    vault = ctx.vault()
    with Index(vault.root, ctx.mode()) as idx:
        data = svc.neighbours(idx, ident, limit if ctx.project is None else 0)
    if ctx.project is not None:
        if data["center"]["type"] == "card":
            _in_scope(ctx, data["center"].get("project"), f"card {ident!r}")
        data["neighbours"] = [n for n in data["neighbours"]
                              if n["type"] != "card" or n.get("project") == ctx.project][:limit]
    data = guard.clean(vault.rules, data)
    c = data["center"]
    lines = [f"{c['id']}  {c.get('title') or ''}"]
    for n in data["neighbours"]:
        via = f"  via {', '.join(n['via'])}" if n["via"] else ""
        lines.append(f"  {n['type']:6s} {n['id']}  {n.get('title') or ''}{via}")
    return _reply(ctx, data, lines)


def context(ctx: Ctx, query: Any = None, budget: Any = None, project: Any = None) -> Reply:
    """A pack for `query`; with none, the brief of the project (the server's scope, the one asked, else all)."""
    query = guard.text("query", query, required=False)
    budget = guard.number("budget", budget, 1, guard.MAX_BUDGET)
    project = guard.scoped("project", project, ctx.project)
    vault = ctx.vault()
    if query is None:
        from memvault.views.brief import build_brief

        built = build_brief(vault, project, budget=budget)
    else:
        from memvault.views.context import build_context

        built = build_context(vault, query, budget=budget, project=project)
    data = guard.clean(vault.rules, built.to_json())
    # The pack is already fenced and labelled as reference data by memvault.views.context / brief.
    return Reply(guard.mark(data), data["pack"])


def stats(ctx: Ctx) -> Reply:
    from memvault.views.stats import vault_stats

    vault = ctx.vault()
    data = vault_stats(vault, ctx.env)
    if ctx.project is not None:
        data["scope"] = ctx.project
        for key in ("episodes_by_project", "cards_by_project"):
            data[key] = {k: v for k, v in data[key].items() if k == ctx.project}
    data = guard.clean(vault.rules, data)
    lines = [f"vault {data['vault']}", f"episodes {data['episodes']} ({data['pending_episodes']} pending), "
             f"sessions {data['sessions']}, newest {data['newest_episode'] or '-'}",
             f"cards {data['cards']} {data['cards_by_status']}, entities {data['entities']}",
             f"last distill {data['last_distill'] or '-'}, damaged files {data['damaged']}",
             (f"llm {data['llm']['model']} at {data['llm']['base_url']} ({data['llm']['base_url_from']}), "
              f"key {data['llm']['api_key']}" if data["llm"]["base_url"] else
              "llm: no endpoint configured (distill uses the offline engine)")]
    if ctx.project is not None:
        lines.append(f"scope: project {ctx.project}: episodes {data['episodes_by_project']}, "
                     f"cards {data['cards_by_project']}")
    return _reply(ctx, data, lines, memory=False)


# ------------------------------------------------------------------ resources


def card_markdown(ctx: Ctx, cid: Any) -> str:
    """The card's file, redacted and fenced as memory."""
    cid = guard.card_id("id", cid)
    vault = ctx.vault()
    path = vault.find_card_path(cid)
    if path is None:
        raise NoMatch(f"no card {cid!r}")
    _in_scope(ctx, vault.read_card(path).project, f"card {cid!r}")
    return guard.fence(guard.clean_text(vault.rules, vault.read_text(path)))


def entity_markdown(ctx: Ctx, slug: Any) -> str:
    """An entity as markdown (name, aliases, its page's prose, its cards, within the scope), fenced as memory."""
    data, _lines = _show(ctx, guard.slug("slug", slug), False)
    if data["type"] != "entity":
        raise NoMatch("no entity by that name")
    lines = [f"# {data['name']}", ""]
    if data["kind"] or data["aliases"]:
        lines += [f"kind: {data['kind'] or '-'} · aliases: {', '.join(data['aliases']) or '-'}", ""]
    if data["prose"]:
        lines += [data["prose"].strip(), ""]
    lines += ["## Cards", ""] + [f"- {c['created'][:10]} [{c['kind']}] {c['title']} ({c['id']}, {c['status']})"
                                 for c in data["cards"]]
    return guard.fence(guard.clean_text(ctx.vault().rules, "\n".join(lines)))


def resource_list(ctx: Ctx) -> list[dict[str, Any]]:
    """Every entity, then every card that is not retracted (newest first), as resources: named by slug or id
    and described by kind and date only, so a listing carries no memory text. Within the server's scope, only
    its project's cards and the entities they name. Built once per state of the index (its generation changes
    with every card or turn written, by any process): an agent paging through 100k cards asks for it 1,000 times."""
    from memvault.search.index import Index

    vault = ctx.vault()
    with Index(vault.root, ctx.mode()) as idx:
        idx.refresh()
        generation = idx.generation()
        if generation and ctx._resources is not None and ctx._resources[0] == generation:
            return ctx._resources[1]
        rows = idx.timeline_rows(None, ctx.project, None, None, False)
        mine = {r[0] for r in rows}
        slugs = sorted({e for cid, e in idx.card_entity_pairs() if ctx.project is None or cid in mine})
    out = [{"uri": f"memvault://entity/{quote(slug, safe='')}", "name": slug, "title": f"entity {slug}",
            "mimeType": "text/markdown"} for slug in slugs]
    for cid, kind, _title, project, status, created, valid_from, *_rest in rows:
        when = (valid_from or created or "")[:10]
        out.append({"uri": f"memvault://card/{cid}", "name": cid, "mimeType": "text/markdown",
                    "title": " · ".join(x for x in (kind, when, project, status) if x)})
    ctx._resources = (generation, out)
    return out


def _flat(text: str) -> str:
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
