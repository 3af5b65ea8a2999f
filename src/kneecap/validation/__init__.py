"""Validation gate for the marts (the only kneecap package that imports great_expectations).

Each suite is a function named after the table it guards (:mod:`kneecap.validation.suites`).
:func:`validate_tables` runs them and returns a report whose failures name table, row and rule.
"""

from kneecap.validation.checks import ValidationConfig, add_check_columns
from kneecap.validation.gate import Failure, TableReport, ValidationReport, validate_tables

__all__ = [
    "Failure",
    "TableReport",
    "ValidationConfig",
    "ValidationReport",
    "add_check_columns",
    "validate_tables",
]
