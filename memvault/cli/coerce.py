"""Plain coercion of command-line values, so that a command's start-up does not pay for pydantic.

Trigger: Typer 0.29 coerces every parameter value through a pydantic TypeAdapter, built on first use in each
process. Importing pydantic and building the adapters costs 40-60 ms per call of any command, more than the rest
of a `stats` or `show` put together (bench/startup.py).
Why: memvault's commands take only str, int, bool and Path values (single or as lists), which need no schema.
Outcome: `install()` gives those annotations a plain coercion with Typer's own error (`'x' is not a valid
integer.`, exit 2) and leaves every other annotation, and parameters with ranges, parsers or path checks, to
Typer. If a Typer release moves the hook this relies on, `install()` does nothing and Typer works as shipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union, get_args, get_origin

_PLAIN = (str, int, bool, Path)


def _inner(annotation: Any) -> tuple[Any, bool] | None:
    """(item type, is a list) for the annotations handled here, else None."""
    if get_origin(annotation) is Union:
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            return None
        annotation = args[0]
    is_list = get_origin(annotation) is list
    if is_list:
        annotation = get_args(annotation)[0]
    return (annotation, is_list) if annotation in _PLAIN else None


def install() -> bool:
    """Route plain annotations to the light coercion; True when the hook was found."""
    try:
        import typer.core as core
        from typer._click.exceptions import BadParameter
        from typer._coercion import RuntimeParam
        from typer._param_types import _path_options_requested
    except ImportError:
        return False
    original = getattr(core, "build_runtime_param", None)
    if original is None or getattr(original, "_memvault", False):
        return original is not None

    class PlainParam(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            item, _ = _inner(self.annotation)
            if isinstance(value, (list, tuple)):
                return type(value)(self._one(item, v, param, ctx) for v in value)
            return self._one(item, value, param, ctx)

        @staticmethod
        def _one(item: Any, value: Any, param: Any, ctx: Any) -> Any:
            if isinstance(value, item) and not (item is int and isinstance(value, bool)):
                return value
            if item is int:
                try:
                    return int(value)
                except (TypeError, ValueError):
                    raise BadParameter(f"{value!r} is not a valid integer.", ctx=ctx, param=param) from None
            if item is bool:
                return bool(value)
            return item(value)

    def build_runtime_param(descriptor: Any) -> Any:
        info = descriptor.parameter_info
        if (descriptor.file_annotation is None and _inner(descriptor.annotation) is not None
                and info.parser is None and info.min is None and info.max is None
                and not _path_options_requested(info)):
            return PlainParam(annotation=descriptor.annotation, parameter_info=info)
        return original(descriptor)

    build_runtime_param._memvault = True  # type: ignore[attr-defined]
    core.build_runtime_param = build_runtime_param
    return True
