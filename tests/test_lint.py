"""The linters the house style names, run by `make test`: ruff (pyflakes, pycodestyle, isort,
pydocstyle with the numpy convention; config in pyproject.toml), mypy on the library, and
sqlfluff on the pipeline's SQL (config in .sqlfluff). Import-linter runs in test_architecture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*cmd: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / cmd[0]), *cmd[1:]], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_mypy_finds_nothing_in_the_library() -> None:
    result = _run("mypy", "--config-file", "pyproject.toml", "src/kneecap")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout, result.stdout[-2000:]


def test_sqlfluff_finds_nothing_in_the_pipeline_sql() -> None:
    result = _run("sqlfluff", "lint", "pipelines/sql", "--disable-progress-bar")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
