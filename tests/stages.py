"""The DVC stage scripts of ``pipelines/stages`` as modules, for tests that call their ``main``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

STAGES = Path(__file__).resolve().parents[1] / "pipelines" / "stages"


def load_stage(name: str) -> ModuleType:
    """``pipelines/stages/<name>.py`` loaded as a module (the stages are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"stage_{name}", STAGES / f"{name}.py")
    assert spec is not None and spec.loader is not None, STAGES / f"{name}.py"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
