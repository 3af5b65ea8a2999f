"""The benchmark scripts' modules, for tests that score the model as a bench does."""

import importlib
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def bench(name: str):
    """``benchmarks/<name>.py`` imported (its sibling imports resolve from that folder)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))
