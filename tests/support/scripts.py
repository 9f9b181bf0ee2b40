"""A script of the repository that is not a package (a benchmark under bench/, an example), loaded as a module
so its pure parts can be tested."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """The module of the script at ``path`` (relative to the repository's root, or absolute), run once."""
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, ROOT / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
