"""memvault.yaml read for a command: parsed (settings_file) and merged (config), the parse cached by the file's stat.

Apart from memvault.vault.store so that a command reading only the index and the settings (`timeline`) opens them
without the Vault's card and episode code (memvault.model's dataclasses: ~7 ms of its start-up). store re-exports
read_config.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from memvault.errors import VaultFormatError, VaultMissing
from memvault.vault.config import Config, build_config
from memvault.vault.files import atomic_write, ensure_dir
from memvault.vault.local import derived_dir
from memvault.vault.locate import CONFIG_NAME


def read_config(root: Path, env: Mapping[str, str]) -> Config:
    """memvault.yaml merged with defaults and env; what is wrong in the file goes to Config.problems."""
    path = root / CONFIG_NAME
    cache_dir = derived_dir(root)
    data, problems = _settings(path, cache_dir / SETTINGS_CACHE if cache_dir else None)
    config = build_config(data or {}, env, origin=str(path))
    return dataclasses.replace(config, problems=tuple(problems)) if problems else config


SETTINGS_CACHE = "settings.json"


def _settings(path: Path, cache: Path | None) -> tuple[dict, list]:
    """memvault.yaml parsed (data, problems), from a cache keyed by the file's stat when it holds that stat.

    Trigger: every command reads the settings. Why: parsing them needs yaml, ~10-30 ms of start-up that a command
    reading only the index (`stats`, `timeline`) would not pay otherwise. Outcome: the parse is kept as JSON under
    .memvault/ and used while memvault.yaml's mtime and size are unchanged (JSON-safe settings only).
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise VaultMissing(f"no {CONFIG_NAME} in {path.parent}") from None
    key = f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"
    # A file changed in the last two seconds may change again within the clock's granularity with the same size:
    # such a stat proves nothing ("racy git"), so the file is parsed and the cache neither read nor written (as
    # when no cache folder can be written at all).
    racy = time.time_ns() - st.st_mtime_ns < 2_000_000_000 or cache is None
    try:
        cached = {} if racy else json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            from memvault.vault.config import SettingsProblem

            return cached["data"], [SettingsProblem(*p) for p in cached["problems"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    from memvault.vault.settings_file import load_settings
    import yaml

    try:
        data, problems = load_settings(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VaultMissing(f"no {CONFIG_NAME} in {path.parent}") from None
    except UnicodeDecodeError:
        raise VaultFormatError(str(path), None, "not valid UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise VaultFormatError(str(path), mark.line + 1 if mark else None, "invalid YAML") from None
    try:
        text = json.dumps({"key": key, "data": data, "problems": [list(p) for p in problems]}, ensure_ascii=False)
        if not racy and json.loads(text)["data"] == data:
            ensure_dir(cache.parent)
            atomic_write(cache, text)
    except (TypeError, ValueError, OSError):
        pass  # settings JSON cannot hold (dates, odd keys), or a read-only vault: parse every time
    return data, problems
