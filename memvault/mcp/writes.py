"""The MCP tools that write: remember, forget (retract only) and distill, each the same service call as the CLI
command of the same name, its arguments checked by memvault.mcp.guard first. Left out of a --read-only server."""

from __future__ import annotations

from typing import Any

from memvault.errors import NoMatch
from memvault.mcp import guard
from memvault.mcp.tools import Ctx, Reply, _in_scope, _reply


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


def forget(ctx: Ctx, id: Any, reason: Any = "") -> Reply:  # noqa: A002
    """Retract only: purging text is for a person at a terminal (`memvault forget ID --purge`)."""
    from memvault.distill.forget import forget as svc_forget

    cid = guard.card_id("id", id)
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
