"""Validation gate for the marts (the only kneecap package that imports great_expectations).

Each suite is a function named after the table it guards (:mod:`kneecap.validation.suites`).
:func:`validate_tables` runs them and returns a report whose failures name table, row and rule.
great_expectations is imported only when the gate is used (it takes seconds to import).
The gate's tunables are ``params.yaml``'s ``validate`` section, :class:`kneecap.config.ValidationConfig`.
"""

import warnings
from typing import Any

from kneecap.config import ValidationConfig
from kneecap.validation.checks import add_check_columns

# great_expectations imports pyspark whenever it is installed (it is, for the Spark engine), and
# pyspark 4.3 then warns that it does not fully support pandas 3: noise in every DuckDB run, where
# pyspark is never used
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)

_GATE = {"Failure", "TableReport", "ValidationReport", "validate_tables", "quarantine"}


def __getattr__(name: str) -> Any:
    if name in _GATE:
        from kneecap.validation import gate

        return getattr(gate, name)
    raise AttributeError(f"module 'kneecap.validation' has no attribute {name!r}")


__all__ = [
    "Failure",
    "TableReport",
    "ValidationConfig",
    "ValidationReport",
    "add_check_columns",
    "quarantine",
    "validate_tables",
]
