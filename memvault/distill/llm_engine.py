"""The LLM engine: a batch's proposals from one model call (plus one retry that names the mistake).

Builds the prompt from prompts/distill.md, the batch and its related cards (fenced, redacted again), calls the
endpoint under --max-calls, detects a cut-off answer (the run splits the batch) and validates the reply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources

from memvault.distill.batching import format_episode, format_related
from memvault.distill.proposals import InvalidOutput, Proposal, output_schema, validate_output
from memvault.distill.run import BatchFailed, Run, StopRun, Truncated
from memvault.errors import LLMError
from memvault.model import Card, Episode
from memvault.vault.store import Vault

_USER_MARK = "=== user ==="


def load_prompt() -> tuple[str, str]:
    """(system, user template) of prompts/distill.md."""
    text = resources.files("memvault.distill").joinpath("prompts/distill.md").read_text(encoding="utf-8")
    system, _, user = text.partition(_USER_MARK)
    return system.strip() + "\n", user.strip() + "\n"


def llm_settings(vault: Vault, env: Mapping[str, str]):
    """The client settings of memvault.yaml (llm:), with the API key read from the env variable it names."""
    from memvault.distill.llm import LLMSettings

    llm = vault.config.llm
    key_env = str(llm.get("api_key_env") or "MEMVAULT_LLM_API_KEY")
    return LLMSettings(
        base_url=str(llm.get("base_url")), model=str(llm.get("model")), api_key=env.get(key_env) or None,
        timeout=float(llm.get("timeout", 120)), temperature=float(llm.get("temperature", 0.0)),
        max_output_tokens=int(llm.get("max_output_tokens", 4096)), json_mode=str(llm.get("json_mode")),
        max_retries=int(llm.get("max_retries", 3)),
    )


def _looks_cut(text: str) -> bool:
    """A reply that stops in the middle of its JSON (some servers report finish_reason "stop" anyway)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[-1].rstrip("`").strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
        return False
    except json.JSONDecodeError as exc:
        return exc.pos >= len(stripped) - 1
    except RecursionError:
        return False


def _call(run: Run, messages: list[dict]):
    """One counted model call; --max-calls stops the run before it."""
    from memvault.distill.llm import LLMFailure

    s = run.summary
    if run.max_calls is not None and s.calls >= run.max_calls:
        raise StopRun()
    s.calls += 1
    try:
        reply = run.client.complete(messages, schema=output_schema(run.kinds))
    except LLMFailure as exc:
        raise BatchFailed("llm_error", exc.message) from None
    except LLMError as exc:  # pragma: no cover - any other endpoint error class
        raise BatchFailed("llm_error", exc.message) from None
    s.prompt_tokens += reply.prompt_tokens
    s.completion_tokens += reply.completion_tokens
    return reply


def _messages(run: Run, batch: list[Episode], related: list[Card]) -> list[dict]:
    from memvault.redact import engine as redact

    max_chars = int(run.settings.get("max_episode_chars", 4000))
    episodes = "\n\n".join(format_episode(i, e, max_chars) for i, e in enumerate(batch))
    # The fence carries a hash of what it encloses, so no episode can contain the closing line.
    fence = "<<<UNTRUSTED-TURNS-" + hashlib.sha256(episodes.encode("utf-8", "surrogatepass")).hexdigest()[:12] + ">>>"
    project = batch[0].project
    user = (run.user_tpl.replace("{{related}}", format_related(related))
            .replace("{{project}}", project).replace("{{fence}}", fence).replace("{{episodes}}", episodes))
    # Defence in depth: episodes were redacted at capture, but rules may have grown since, or a line may
    # have been written by hand. Nothing unredacted leaves the machine.
    user = redact.redact(user, run.rules).text
    return [{"role": "system", "content": run.system.replace("{{project}}", project)},
            {"role": "user", "content": user}]


def propose(run: Run, batch: list[Episode], related: list[Card]) -> tuple[list[Proposal], dict[str, int]]:
    """The model's proposals for one batch and the batch's usage (calls, prompt and completion tokens).

    Raises Truncated when the answer was cut off, BatchFailed (llm_error, invalid_output) or StopRun.
    """
    from memvault.distill.llm import extract_json

    messages = _messages(run, batch, related)
    reply = _call(run, messages)
    calls = 1
    usage = [reply.prompt_tokens, reply.completion_tokens]
    error: str | None = None
    for attempt in range(2):
        if reply.finish_reason == "length" or _looks_cut(reply.text):
            max_out = run.client.settings.max_output_tokens
            raise Truncated(f"episode {batch[0].id}: the model's answer was cut off at "
                            f"llm.max_output_tokens ({max_out}) even for this single episode; raise "
                            "llm.max_output_tokens (or lower distill.max_episode_chars)")
        try:
            data = extract_json(reply.text)
            proposals = validate_output(data, n_episodes=len(batch), n_related=len(related), kinds=run.kinds)
            break
        except (ValueError, InvalidOutput) as exc:
            error = str(exc)
            if attempt == 1:
                raise BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {batch[0].id}: "
                                  f"invalid model output after one retry: {error}") from None
            # Trigger: bad JSON or schema. Why: models usually fix a named mistake. Outcome: one retry that
            # quotes our error (never their reply, which costs tokens and may echo episode text).
            retry = messages + [{"role": "user", "content": (
                f"Your previous reply was invalid: {error}. Reply again with only the JSON object "
                '{"cards": [...]} following the rules.')}]
            reply = _call(run, retry)
            calls += 1
            usage[0] += reply.prompt_tokens
            usage[1] += reply.completion_tokens
    return proposals, {"calls": calls, "prompt_tokens": usage[0], "completion_tokens": usage[1]}
