"""YAML for front matter, loaded only when a card or entity page is read or written (yaml costs ~10-30 ms of
start-up, which commands that read only the index, like `stats`, never pay). libyaml's loader and emitter where
present (~5x and ~4x faster), the pure-Python ones where not."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml import YAMLError  # noqa: F401 - what load() raises, for callers that do not import yaml


try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader


_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$")


def load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter is ~4x faster


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Block style at the top, flow style inside (`entities: [a, b]`, `source: {kind: distill, …}`), and our
    top-level timestamps plain (`created: 2026-11-02T07:40:12Z`), as a person would write them."""


class _Top(dict):
    pass


def _represent_top(dumper, data: "_Top"):
    pairs = []
    for key, value in data.items():
        if isinstance(value, str) and _TIMESTAMP.match(value):
            # Tagged as a timestamp so the emitter may write it plain; it loads back as the same string.
            node = yaml.ScalarNode("tag:yaml.org,2002:timestamp", value)
        else:
            node = dumper.represent_data(value)
        pairs.append((dumper.represent_data(key), node))
    return yaml.MappingNode("tag:yaml.org,2002:map", pairs, flow_style=False)


_Dumper.add_representer(_Top, _represent_top)


def dump(meta: dict[str, Any]) -> str:
    """A card's or page's front matter as YAML text (without the `---` lines)."""
    return yaml.dump(
        _Top(meta), Dumper=_Dumper, allow_unicode=True, sort_keys=False, default_flow_style=True, width=10**6
    )
