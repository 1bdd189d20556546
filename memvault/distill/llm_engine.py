"""The LLM engine: a batch's proposals from one model call (plus one retry that names the mistake).

Builds the prompt from prompts/distill.md and the batch (fenced, redacted again), calls the endpoint under
--max-calls, detects a cut-off answer (the run splits the batch) and validates the reply, repairing harmless
mistakes (proposals.validate_output with a repairs dict). The model proposes facts; distill/decide.py decides
what they do to the existing cards. A reply that is rejected gets one retry that shows the model its reply and
the fix; an empty answer to that retry is a failed batch, never "nothing found".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources

from memvault.distill.batching import format_episode, format_related
from memvault.distill.decide import second_person
from memvault.distill.proposals import InvalidOutput, Proposal, output_schema, validate_output
from memvault.distill.run import BatchFailed, Run, StopRun, Truncated
from memvault.errors import LLMError
from memvault.model import Card, Episode
from memvault.vault.store import Vault

_USER_MARK = "=== user ==="
# The kinds the prompt teaches (a small model does better with five than with every kind a vault knows).
PROMPT_KINDS = ("event", "fact", "preference", "decision", "rule", "state")
_MAX_ECHO = 4000  # characters of a rejected reply shown back to the model in the retry


def prompt_kinds(kinds: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in PROMPT_KINDS if k in kinds) or kinds


def load_prompt(name: str = "distill") -> tuple[str, str]:
    """(system, user template) of prompts/NAME.md (distill: the model writes cards; review: it reviews the
    offline engine's drafts, distill/review.py)."""
    text = resources.files("memvault.distill").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")
    system, _, user = text.partition(_USER_MARK)
    return system.strip() + "\n", user.strip() + "\n"


def llm_settings(vault: Vault, env: Mapping[str, str]):
    """The client settings of memvault.yaml (llm:), with the API key read from the env variable it names."""
    from memvault.distill.llm import LLMSettings

    llm = vault.config.llm
    key_env = str(llm.get("api_key_env") or "MEMVAULT_LLM_API_KEY")
    return LLMSettings(
        base_url=str(llm.get("base_url")), model=str(llm.get("model")), api_key=env.get(key_env) or None,
        timeout=float(llm.get("timeout", 120)), timeout_per_token=float(llm.get("per_token_timeout", 0.25)),
        temperature=float(llm.get("temperature", 0.0)),
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
        # An unterminated string reports where it began: a reply cut inside a statement.
        return exc.pos >= len(stripped) - 1 or exc.msg.startswith("Unterminated string")
    except RecursionError:
        return False


# A compact card is ~35 tokens and a turn gives at most CARDS_PER_EPISODE of them.
ANSWER_TOKENS_PER_EPISODE = 160


def answer_budget(run: Run, n_episodes: int) -> int:
    """Output tokens one call may ask for: room for the most cards a turn may give in the compact reply, under
    distill.tokens_per_episode and llm.max_output_tokens. A small model that loops is cut here (the run splits
    the batch) instead of writing until the server's cap; the call's timeout grows with it."""
    per = min(ANSWER_TOKENS_PER_EPISODE, int(run.settings.get("tokens_per_episode", 320)))
    return max(128, min(run.client.settings.max_output_tokens, per * max(1, n_episodes) + 64))


def _call(run: Run, messages: list[dict], max_tokens: int, schema: dict):
    """One counted model call; --max-calls stops the run before it. A timeout is never retried at full cost:
    the run asks again for half the batch (Truncated), and a single turn that times out fails its batch."""
    from memvault.distill.llm import LLMFailure

    s = run.summary
    if run.max_calls is not None and s.calls >= run.max_calls:
        raise StopRun()
    s.calls += 1
    try:
        reply = run.client.complete(messages, schema=schema, max_tokens=max_tokens)
    except LLMFailure as exc:
        if exc.timed_out:
            raise Truncated(exc.message, kind="llm_error") from None
        raise BatchFailed("llm_error", exc.message) from None
    except LLMError as exc:  # pragma: no cover - any other endpoint error class
        raise BatchFailed("llm_error", exc.message) from None
    s.prompt_tokens += reply.prompt_tokens
    s.completion_tokens += reply.completion_tokens
    return reply


def _messages(run: Run, batch: list[Episode], related: list[Card], drafts: str = "") -> list[dict]:
    """The call's messages: the prompt with the batch's turns (and a review's numbered drafts, `drafts`) inside
    one fence, redacted again."""
    from memvault.redact import engine as redact

    max_chars = int(run.settings.get("max_episode_chars", 4000))
    # Trigger: a 1.5B model shown the assistant's reply quotes it as the user's (issue 22, measured on half A).
    # Outcome: by default the prompt shows only what the user said; distill.assistant_chars shows more.
    # A named second person (a friend in a two-person chat) is shown in full: their words can be cards too.
    shown = int(run.settings.get("assistant_chars", 0))
    episodes = "\n\n".join(format_episode(i, e, max_chars, max_chars if second_person(e) else shown)
                             for i, e in enumerate(batch))
    if drafts:
        episodes += "\n\nDraft cards:\n" + drafts
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


def _retry_messages(run: Run, messages: list[dict], reply_text: str, error: str, fix: str,
                    shape: str = '{"cards": [["e0", "kind", "statement"], ...]}') -> list[dict]:
    """The retry: the model's own reply (cut, redacted) and the exact fix, so it corrects instead of guessing."""
    from memvault.redact import engine as redact

    shown = reply_text.strip()
    if len(shown) > _MAX_ECHO:
        shown = shown[:_MAX_ECHO] + " …"
    shown = redact.redact(shown, run.rules).text or "(empty)"
    return messages + [
        {"role": "assistant", "content": shown},
        {"role": "user", "content": (
            f"That reply was rejected: {error}. Fix: {fix} Keep the cards that were right, drop none because of "
            'this, and reply with the whole corrected JSON object {"cards": [["e0", "kind", "statement"], ...]} '
            "only.")},
    ]


def propose(run: Run, batch: list[Episode], related: list[Card]) -> tuple[list[Proposal], dict[str, int]]:
    """The model's proposals for one batch (the write protocol, prompts/distill.md) and the batch's usage (calls,
    prompt and completion tokens).

    Raises Truncated when the answer was cut off, BatchFailed (llm_error, invalid_output) or StopRun. Repairs
    of the accepted reply are added to the run's summary.
    """
    def parse(data, repairs):
        return validate_output(data, n_episodes=len(batch), n_related=len(related), kinds=run.kinds,
                               repairs=repairs)

    return ask(run, batch, _messages(run, batch, related), answer_budget(run, len(batch)),
               output_schema(prompt_kinds(run.kinds)), parse)


def ask(run: Run, batch: list[Episode], messages: list[dict], budget: int, schema: dict, parse,
        shape: str = '{"cards": [["e0", "kind", "statement"], ...]}', salvage=None):
    """One batch's call under either protocol: (what `parse(data, repairs)` made of the reply, usage). A reply
    that `parse` rejects (ValueError, InvalidOutput) gets one retry showing it and the fix; `salvage(text)`, when
    given, may rescue a cut-off reply (a review's complete keep list) instead of raising Truncated. An empty
    result after a retry is a failure, never "nothing found"."""
    from memvault.distill.llm import extract_json

    first = batch[0].id
    ids = [e.id for e in batch]
    reply = _call(run, messages, budget, schema)
    calls = 1
    usage = [reply.prompt_tokens, reply.completion_tokens]
    for attempt in range(2):
        repairs: dict[str, int] = {}
        cut = reply.finish_reason == "length" or _looks_cut(reply.text)
        rescued = salvage(reply.text, repairs) if cut and salvage is not None else None
        if cut and rescued is None:
            raise Truncated(f"episode {first}: the model's answer was cut off at {budget} tokens "
                            "(distill.tokens_per_episode, under llm.max_output_tokens) even for this single "
                            "episode; raise them (or lower distill.max_episode_chars)")
        try:
            result = rescued if rescued is not None else parse(extract_json(reply.text), repairs)
        except (ValueError, InvalidOutput) as exc:
            error = str(exc)
            if attempt == 1:
                raise BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {first}: "
                                  f"invalid model output after one retry: {error}", ids) from None
            fix = exc.fix if isinstance(exc, InvalidOutput) else \
                f"Write only one JSON object {shape}, with no text or code fence around it."
            # Trigger: bad JSON or schema. Why: models usually fix a named mistake when they see it. Outcome:
            # one retry with their reply and the fix; an empty answer to it is a failure, below.
            reply = _call(run, _retry_messages(run, messages, reply.text, error, fix, shape), budget, schema)
            calls += 1
            usage[0] += reply.prompt_tokens
            usage[1] += reply.completion_tokens
            continue
        if attempt == 1 and not result:
            # Trigger: the reply was rejected, and the retry answers "nothing". Why: small models answer
            # {"cards": []} to any correction; taking that as "nothing to keep" marked turns distilled that no
            # one read. Outcome: the batch fails (exit 5) and its episodes stay pending for the next run.
            raise BatchFailed("invalid_output", f"batch of {len(batch)} episodes from {first}: the model "
                              "answered with no card after its reply was rejected", ids)
        for key, n in repairs.items():
            run.summary.repairs[key] = run.summary.repairs.get(key, 0) + n
        break
    return result, {"calls": calls, "prompt_tokens": usage[0], "completion_tokens": usage[1]}
