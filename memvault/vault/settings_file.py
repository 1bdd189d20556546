"""memvault.yaml as a file: parse it with line numbers and list what is wrong in it, never silently.

A duplicate key (PyYAML keeps the later one: a second `llm:` block resets model and URL), an unknown key, a
value of the wrong type, and a key or secret that does not belong in a file meant for git each become a
`SettingsProblem` naming `memvault.yaml:<line>`. `stats` and `doctor` print them; a secret is an error in
`doctor` (exit 3). Messages name keys and types, never values (a value may be the secret).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from memvault.vault.config import DEFAULTS, ENV_OVERRIDES, SettingsProblem  # noqa: F401 - re-exported

# Keys whose value is a credential. `api_key_env` (the NAME of a variable) is the right way and is allowed.
_SECRET_KEY = re.compile(r"(?i)^(?:api[_-]?key|apikey|.*[_-](?:api[_-]?key|token|secret|password)|token|secret|"
                         r"password|passwd|access[_-]?key)$")
_FLOAT_KEYS = {(section, key) for section, key, kind in ENV_OVERRIDES.values() if kind is float}
_KIND_KEYS = {"pinned": bool}




class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps, for every key, the line it is on, and the duplicates PyYAML would drop."""

    def __init__(self, stream):
        super().__init__(stream)
        self.key_lines: dict[tuple[str, ...], int] = {}
        self.duplicates: list[tuple[int, str, int]] = []  # (line, dotted key, first line)
        # Seen while parsing, not in the result: a credential in a block a duplicate later drops is still on disk.
        self.credentials: list[tuple[int, str]] = []
        self._paths: dict[int, tuple[str, ...]] = {}

    def construct_mapping(self, node, deep=False):
        prefix = self._paths.get(id(node), ())
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            path = (*prefix, str(key_node.value))
            line = key_node.start_mark.line + 1
            if path in self.key_lines:
                self.duplicates.append((line, ".".join(path), self.key_lines[path]))
            else:
                self.key_lines[path] = line
            if _SECRET_KEY.match(path[-1]) and not (isinstance(value_node, yaml.ScalarNode) and (
                    value_node.value in ("", "~", "null") or value_node.value.startswith("[REDACTED:"))):
                self.credentials.append((line, ".".join(path)))
            if isinstance(value_node, yaml.MappingNode):
                self._paths[id(value_node)] = path
        return super().construct_mapping(node, deep=True)


def load_settings(text: str) -> tuple[Any, list[SettingsProblem]]:
    """Parse memvault.yaml's text; raises yaml.YAMLError as yaml.safe_load would."""
    loader = _Loader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    problems = [SettingsProblem(line, f"duplicate key '{key}' (first at line {first}): the later one wins and "
                                      "replaces the earlier one whole")
                for line, key, first in loader.duplicates]
    problems += [SettingsProblem(line, f"'{key}' holds a credential: memvault.yaml is meant for git; put the key "
                                       "in the environment variable named by llm.api_key_env and delete this line",
                                 error=True) for line, key in loader.credentials]
    if isinstance(data, Mapping):
        _check(data, (), DEFAULTS, loader.key_lines, problems, {k for _, k in loader.credentials})
    problems.sort(key=lambda p: (p.line or 0, p.message))
    return data, problems


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    return {bool: "true/false", int: "a whole number", float: "a number", str: "text", list: "a list",
            dict: "a mapping"}.get(type(value), type(value).__name__)


def _fits(value: Any, default: Any, path: tuple[str, ...]) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float) or (isinstance(default, int) and tuple(path[-2:]) in _FLOAT_KEYS):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, list):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if isinstance(default, dict):
        return isinstance(value, Mapping)
    return True


def _check(data: Mapping[str, Any], path: tuple[str, ...], spec: Mapping[str, Any],
           lines: Mapping[tuple[str, ...], int], problems: list[SettingsProblem], credentials: set[str]) -> None:
    for key, value in data.items():
        here = (*path, str(key))
        line = lines.get(here)
        dotted = ".".join(here)
        if dotted in credentials:
            continue  # reported while parsing (see _Loader.credentials)
        if here == ("kinds",):
            _check_kinds(value, here, lines, problems)
            continue
        if key not in spec:
            problems.append(SettingsProblem(line, f"unknown setting '{dotted}' (ignored; see FORMAT.md)"))
            continue
        default = spec[key]
        if not _fits(value, default, here):
            want = "a list of text" if isinstance(default, list) else _type_name(default)
            problems.append(SettingsProblem(line, f"'{dotted}' should be {want}, not {_type_name(value)}"))
            continue
        if isinstance(default, dict):
            _check(value, here, default, lines, problems, credentials)


def _check_kinds(value: Any, path: tuple[str, ...], lines, problems: list[SettingsProblem]) -> None:
    if not isinstance(value, Mapping):
        problems.append(SettingsProblem(lines.get(path), f"'kinds' should be a mapping, not {_type_name(value)}"))
        return
    for kind, spec in value.items():
        here = (*path, str(kind))
        if spec is None:
            continue
        if not isinstance(spec, Mapping):
            problems.append(SettingsProblem(lines.get(here), f"'kinds.{kind}' should be a mapping, "
                                                             f"not {_type_name(spec)}"))
            continue
        for key, v in spec.items():
            sub = (*here, str(key))
            if key not in _KIND_KEYS:
                problems.append(SettingsProblem(lines.get(sub), f"unknown setting '{'.'.join(sub)}' (ignored)"))
            elif not isinstance(v, _KIND_KEYS[key]):
                problems.append(SettingsProblem(lines.get(sub), f"'{'.'.join(sub)}' should be true/false, "
                                                               f"not {_type_name(v)}"))
