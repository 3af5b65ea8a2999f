"""Validation gate for the marts (the only kneecap package that imports great_expectations).

Each suite is a function named after the table it guards (:mod:`kneecap.validation.suites`).
:func:`validate_tables` runs them and returns a report whose failures name table, row and rule.
great_expectations is imported only when the gate is used (it takes seconds to import, and
``kneecap.config`` needs just :class:`ValidationConfig`).
"""

from typing import Any

from kneecap.validation.checks import ValidationConfig, add_check_columns

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
