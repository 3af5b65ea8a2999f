"""The pipeline's SQL stays in the subset DuckDB and Spark SQL share: each file translates to one
Spark statement, and none uses the DuckDB constructs that sqlglot passes through but Spark cannot
run. (Running them on Spark is tests/integration/test_spark_marts.py, which needs Java.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kneecap import spark_engine, warehouse

REPO = Path(__file__).resolve().parents[2]
FILES = warehouse.sql_files(REPO / "pipelines" / "sql")

#: DuckDB syntax sqlglot writes into Spark SQL unchanged, which Spark then refuses (found running
#: the marts on Spark 4.3); the comment in each file says what it uses instead.
NOT_IN_SPARK = {
    r"\bunion\s+(all\s+)?by\s+name\b": "UNION BY NAME (Spark has none): union by position",
    r"\*\s*replace\s*\(": "SELECT * REPLACE (Spark has none): name the columns",
}


def _body(path: Path) -> str:
    """The SQL without its ``--`` comments (which describe what is no longer there)."""
    return "\n".join(line.split("--", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())


def _literal_letters_in_formats(sql: str) -> list[str]:
    """strftime formats with letters that are not %-directives: sqlglot copies them into Spark's
    date_format pattern, where a letter is a pattern letter ('T' is refused)."""
    formats = re.findall(r"strftime\([^,]+,\s*'([^']*)'", sql)
    return [f for f in formats if re.search(r"[A-Za-z]", re.sub(r"%[A-Za-z]", "", f))]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_sql_file_translates_to_one_spark_statement(path: Path) -> None:
    spark_sql = spark_engine.transpile(path.read_text(encoding="utf-8"), where=str(path))
    assert spark_sql.lstrip().upper().startswith(("WITH", "SELECT", "/*"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_sql_file_uses_nothing_spark_lacks(path: Path) -> None:
    body = _body(path)
    found = [why for pattern, why in NOT_IN_SPARK.items() if re.search(pattern, body, re.IGNORECASE)]
    found += [f"strftime format {f!r} has literal letters: concatenate them outside the format"
              for f in _literal_letters_in_formats(body)]
    assert not found, f"{path.name}: {found}"


def test_the_checks_catch_what_they_name() -> None:
    assert _literal_letters_in_formats("strftime(t, '%Y-%m-%dT%H:%M:%S')") == ["%Y-%m-%dT%H:%M:%S"]
    assert _literal_letters_in_formats("strftime(t, '%Y-%m-%d') || 'T' || strftime(t, '%H:%M')") == []
    assert re.search(next(iter(NOT_IN_SPARK)), "select 1 union all by name select 2", re.IGNORECASE)


def test_an_untranslatable_file_is_named() -> None:
    with pytest.raises(ValueError, match="x.sql: a pipeline SQL file holds one select, found 2"):
        spark_engine.transpile("select 1; select 2", where="x.sql")
