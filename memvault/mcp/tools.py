"""The MCP tools, free of the SDK: each checks its arguments (guard), makes the same service call as the CLI
command of the same name (memvault/cli/commands/*.py), redacts the result, and returns it twice: `data`, the shape
the CLI prints with --json, and `text`, a short readable rendering whose memory text is fenced as quoted data.

A `Ctx` holds what every call shares: the vault folder, the environment, the project scope, and the vault's
settings (read again when memvault.yaml changes).
"""

from __future__ import annotations

import datetime
import os
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
    return Reply(data, guard.fence(text) if memory else text)


def _in_scope(ctx: Ctx, project: str | None, what: str) -> None:
    if ctx.project is not None and project != ctx.project:
        raise NoMatch(f"no {what} in project {ctx.project!r}")


# ------------------------------------------------------------------ reading


def search(ctx: Ctx, query: Any, project: Any = None, kind: Any = None, all: bool = False,  # noqa: A002
           episodes: bool = False, limit: Any = None) -> Reply:
    from memvault.search import service as svc

    query = guard.text("query", query)
    project = guard.scoped("project", project, ctx.project)
    kind = guard.text("kind", kind, "name", required=False)
    limit = guard.number("limit", limit, 1, guard.MAX_LIMIT)
    vault = ctx.vault()
    cfg = svc.settings(vault.root, ctx.env)
    opts = svc.options_from(cfg["search"], cfg["kinds"], limit=limit, project=project, kind=kind,
                            include_all=bool(all), episodes=bool(episodes), embeddings=cfg.get("embeddings"))
    try:
        result = svc.run_search(vault.root, query, opts, deny=cfg["deny"], env=ctx.env)
        data = result.to_json()
        warnings = result.warnings
    except NoMatch as exc:
        data = {"query": query, "intent": None, "terms": [], "count": 0, "hits": []}
        warnings = getattr(exc, "warnings", ())
    if warnings:  # the dense layer fell back to words, or cards have no vector yet (the CLI's stderr lines)
        data["warnings"] = list(dict.fromkeys(warnings))
    # run_search has redacted what a hit shows (title, snippet) with the vault's rules, as for the CLI; the
    # readable text is redacted once more below. (A second pass over the data would cost ~10 % of a call.)
    lines = [f"{data['count']} hits for the query"]
    for h in data["hits"]:
        where = " · ".join(x for x in (h.get("project"), h.get("status"), (h.get("created") or "")[:10]) if x)
        lines.append(f"- {h['id']}  [{h['kind']}] {h['title']}  ({where})")
        if h.get("why"):
            lines.append(f"  why: {'; '.join(h['why'])}")
        if h.get("snippet"):
            lines.append(f"  {h['snippet']}")
    lines += [f"warning: {w}" for w in data.get("warnings", [])]
    return _reply(ctx, data, lines)


def show(ctx: Ctx, ident: Any, sources: bool = True) -> Reply:
    from memvault.views.show import show as svc_show

    ident = guard.ident("id", ident)
    vault = ctx.vault()
    data = svc_show(vault, ident, ctx.mode(), with_sources=bool(sources))
    if data["type"] == "card":
        _in_scope(ctx, data["project"], f"card {ident!r}")
    elif ctx.project is not None:
        data["cards"] = [c for c in data["cards"] if c["project"] == ctx.project]
    data = guard.clean(vault.rules, data)
    if data["type"] == "card":
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
    return _reply(ctx, data, lines)


def timeline(ctx: Ctx, entity: Any = None, project: Any = None, since: Any = None, limit: Any = None,
             all: bool = False) -> Reply:  # noqa: A002
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
    vault = ctx.vault()
    try:
        with Index(vault.root, ctx.mode()) as idx:
            rows = svc_timeline(idx, entity, project, since, limit, bool(all))
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


def graph(ctx: Ctx, ident: Any, limit: Any = None) -> Reply:
    from memvault.search.index import Index
    from memvault.views import graph as svc

    ident = guard.ident("id", ident)
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


def context(ctx: Ctx, query: Any, budget: Any = None, project: Any = None) -> Reply:
    from memvault.views.context import build_context

    query = guard.text("query", query)
    budget = guard.number("budget", budget, 1, guard.MAX_BUDGET)
    project = guard.scoped("project", project, ctx.project)
    vault = ctx.vault()
    data = guard.clean(vault.rules, build_context(vault, query, budget=budget, project=project).to_json())
    # The pack is already fenced and labelled as reference data by memvault.views.context.
    return Reply(data, data["pack"])


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
             f"llm {data['llm']['model']} at {data['llm']['base_url']}, key {data['llm']['api_key']}"]
    if ctx.project is not None:
        lines.append(f"scope: project {ctx.project}: episodes {data['episodes_by_project']}, "
                     f"cards {data['cards_by_project']}")
    return _reply(ctx, data, lines, memory=False)


# ------------------------------------------------------------------ writing


def remember(ctx: Ctx, title: Any, kind: Any = "fact", body: Any = "", entities: Any = None, project: Any = None,
             supersedes: Any = None) -> Reply:
    from memvault.distill.remember import remember as svc_remember

    title = guard.text("title", title)
    kind = guard.text("kind", kind or "fact", "name")
    body = guard.text("body", body or "", required=False) or ""
    names = guard.names("entities", entities)
    project = guard.scoped("project", project, ctx.project)
    old = [guard.card_id("supersedes", x) for x in guard.names("supersedes", supersedes)]
    vault = ctx.vault()
    if ctx.project is not None:
        for cid in old:
            path = vault.find_card_path(cid)
            if path is not None:
                _in_scope(ctx, vault.read_card(path).project, f"card {cid!r}")
    result = svc_remember(vault, title, now=ctx.now(), kind=kind, body=body, entities=names, project=project,
                          supersedes=old)
    data = guard.clean(vault.rules, result.to_json())
    lines = [f"remembered {data['id']} ({data['path']})"] + [f"supersedes {x}" for x in data["superseded"]]
    return _reply(ctx, data, lines, memory=False)


def forget(ctx: Ctx, card: Any, mode: Any = "retract", reason: Any = "") -> Reply:
    from memvault.distill.forget import forget as svc_forget

    cid = guard.card_id("id", card)
    if mode != "retract":
        raise ToolRefused("only mode 'retract' is offered over MCP; to purge a card's text, a person runs "
                          f"`memvault forget {cid} --purge` in a terminal")
    reason = guard.text("reason", reason or "", required=False) or ""
    vault = ctx.vault()
    path = vault.find_card_path(cid)
    if path is None:
        raise NoMatch(f"no card {cid!r}")
    _in_scope(ctx, vault.read_card(path).project, f"card {cid!r}")
    result = svc_forget(vault, cid, mode="retract", now=ctx.now(), reason=reason)
    data = guard.clean(vault.rules, result.to_json())
    line = f"retracted {cid}" if data["changed"] else f"{cid} was already retracted"
    return _reply(ctx, data, [line], memory=False)


def distill(ctx: Ctx, max_calls: Any = None, max_episodes: Any = None, project: Any = None) -> Reply:
    """Raises Busy ("distill already running ...") at once when another distill holds the vault's lock."""
    from memvault.distill import service as svc

    max_calls = guard.number("max_calls", max_calls, 0, 10_000)
    max_episodes = guard.number("max_episodes", max_episodes, 0, 1_000_000)
    project = guard.scoped("project", project, ctx.project)
    vault = ctx.vault()
    summary = svc.distill(vault, ctx.env, max_calls=max_calls, max_episodes=max_episodes, project=project,
                          now=ctx.now())
    data = guard.clean(vault.rules, summary.to_json())
    c = data["cards"]
    lines = [f"{data['episodes_distilled']} episodes in {data['batches']} batches: {c['created']} cards created, "
             f"{c['merged']} merged, {c['updated']} updated, {c['superseded']} superseded; "
             f"{data['pending_after']} pending; {data['calls']} calls"] + list(data["errors"])
    if data["stopped"] == "max_calls":
        lines.append(f"stopped at max_calls; {data['pending_after']} episodes still pending")
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
    data = show(ctx, guard.slug("slug", slug), sources=False).data
    if data["type"] != "entity":
        raise NoMatch(f"no entity {data['id']!r}")
    lines = [f"# {data['name']}", ""]
    if data["kind"] or data["aliases"]:
        lines += [f"kind: {data['kind'] or '-'} · aliases: {', '.join(data['aliases']) or '-'}", ""]
    if data["prose"]:
        lines += [data["prose"].strip(), ""]
    lines += ["## Cards", ""] + [f"- {c['created'][:10]} [{c['kind']}] {c['title']} ({c['id']}, {c['status']})"
                                 for c in data["cards"]]
    return guard.fence(guard.clean_text(ctx.vault().rules, "\n".join(lines)))


def _flat(text: str) -> str:
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
