"""What a caller hands the LLM client (LLMSettings) and gets back (Completion, or LLMFailure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memvault.errors import LLMError, UsageError

JSON_MODES = ("json_object", "json_schema", "text")

# A 200 reply to one distill batch is a few KiB; anything near this is a broken or hostile server.
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class LLMSettings:
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0
    # Seconds per output token a call may ask for, added to `timeout`: a small model on a CPU writes a few tokens
    # a second, so a call's time grows with the answer it may give (issue 33).
    timeout_per_token: float = 0.25
    temperature: float = 0.0
    max_output_tokens: int = 4096
    json_mode: str = "json_object"
    max_retries: int = 3
    max_retry_wait: float = 60.0
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        if self.json_mode not in JSON_MODES:
            raise UsageError(f"llm.json_mode must be one of {', '.join(JSON_MODES)}, not {self.json_mode!r}")


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    calls: int


class LLMFailure(LLMError):
    """The endpoint could not give us a usable reply (network, HTTP status, protocol, size). `timed_out`: the
    endpoint did not answer in time (never retried: the server may still be computing the same request)."""

    def __init__(self, message: str, *, kind: str = "llm_error", status: int | None = None, attempts: int = 0,
                 timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out
        self.kind = kind
        self.status = status
        self.attempts = attempts
