"""memvault: long-term memory of LLM conversations in a plain-text vault."""

__version__ = "0.1.0"
