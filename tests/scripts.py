"""Load one of the repository's scripts (eval/, bench/) as a module, for tests that call its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(name: str, path: Path):
    """The script at `path` (absolute, or relative to the repository root) run as the module `name`; registered
    in sys.modules first, as dataclasses look their module up while a class is built."""
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
