"""Import boundaries: the core library works without streamlit, mlflow or great_expectations, and
only the modules whose job it is import them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "kneecap"

BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'streamlit', 'mlflow', 'great_expectations'}:
            raise ImportError(f'blocked: {name}')
sys.meta_path.insert(0, Block())
import kneecap.modeling, kneecap.warehouse, kneecap.forecasting, kneecap.backtest, kneecap.training
import kneecap.smf.reader, kneecap.rmf.postprocessor, kneecap.ingest.smf, kneecap.ingest.rmf, kneecap.ingest.cli
import kneecap.cli
print('ok')
"""


def test_core_imports_without_app_tracking_or_validation_stacks():
    result = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def _importers(package: str) -> set[str]:
    pattern = re.compile(rf"^\s*(import|from)\s+{package}\b", re.MULTILINE)
    return {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))}


def test_only_the_owning_modules_import_the_heavy_stacks():
    assert _importers("mlflow") == {"tracking.py"}
    assert {p.split("/")[0] for p in _importers("great_expectations")} == {"validation"}
    assert _importers("streamlit") == set()
    assert _importers("plotly") == {"report/figures.py"}  # the capacity report's charts, shared with the desk
