"""Tests of the write protocol (`distill.llm_protocol: write`): their fake models write every card, as models
did before the review protocol (issue 33, distill/review.py) became the default."""

from __future__ import annotations

from pathlib import Path


def use_write(vault: Path) -> Path:
    """Switch a vault to the write protocol (its memvault.yaml's comments are kept when it has the template's
    line)."""
    cfg = Path(vault) / "memvault.yaml"
    text = cfg.read_text(encoding="utf-8")
    if "  llm_protocol: review " in text:
        cfg.write_text(text.replace("  llm_protocol: review ", "  llm_protocol: write  "), encoding="utf-8")
        return vault
    import yaml

    data = yaml.safe_load(text) or {}
    data.setdefault("distill", {})["llm_protocol"] = "write"
    cfg.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return vault
