"""Client for any OpenAI-compatible /chat/completions endpoint (Ollama, llama.cpp, vLLM, DeepSeek, OpenAI).

Modules: settings (LLMSettings, Completion, LLMFailure), tokens (estimate_tokens), protocol (reading what an
endpoint sends), client (HTTP, retries, capped reads), jsonfix (extract_json from a chatty reply). Every name
stays importable from `memvault.distill.llm`.

Knows nothing of cards or prompts. httpx is imported only inside functions, so importing this package (or
`memvault --help`) never pays for it. Nothing here prints or reads the environment: the caller hands over the
key. Error messages name the endpoint and the HTTP status, never the key, the prompt or the reply text.
"""

from __future__ import annotations

from memvault.distill.llm.client import Client
from memvault.distill.llm.jsonfix import extract_json
from memvault.distill.llm.protocol import display_endpoint, parse_retry_after
from memvault.distill.llm.settings import (
    DEFAULT_MAX_RESPONSE_BYTES,
    JSON_MODES,
    Completion,
    LLMFailure,
    LLMSettings,
)
from memvault.distill.llm.tokens import estimate_tokens

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES", "JSON_MODES", "Client", "Completion", "LLMFailure", "LLMSettings",
    "display_endpoint", "estimate_tokens", "extract_json", "parse_retry_after",
]
