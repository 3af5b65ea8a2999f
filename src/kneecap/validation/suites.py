"""Expectation suites, one function per table they guard; each returns a GX 1.x suite."""

from __future__ import annotations

import great_expectations as gx
from great_expectations import expectations as gxe

from kneecap import schema
from kneecap.config import ValidationConfig
from kneecap.validation.checks import CHECK_COLUMNS


def _not_null_unique(suite: gx.ExpectationSuite, key: list[str]) -> None:
    for column in key:
        suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=column))
    if len(key) == 1:
        suite.add_expectation(gxe.ExpectColumnValuesToBeUnique(column=key[0]))
    else:
        suite.add_expectation(gxe.ExpectCompoundColumnsToBeUnique(column_list=key))


def fct_measurements(config: ValidationConfig) -> gx.ExpectationSuite:
    """Keys present and unique; measures non-negative; APPL% within engines; Little's law."""
    suite = gx.ExpectationSuite(name="fct_measurements")
    suite.add_expectation(
        gxe.ExpectTableColumnsToMatchOrderedList(column_list=[*schema.FCT_MEASUREMENTS_COLUMNS, *CHECK_COLUMNS])
    )
    _not_null_unique(suite, list(schema.KEY_COLUMNS))
    for column in schema.NON_NEGATIVE_COLUMNS:
        suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0))
    for column in schema.PCT_BOUNDS:
        suite.add_expectation(
            gxe.ExpectColumnValuesToBeBetween(column=f"check_{column}_headroom", min_value=0)
        )
    for column in schema.LPAR_COLUMNS:  # per engine: a pool cannot be more than fully busy
        suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0, max_value=100))
    for column in schema.SAMPLE_COLUMNS:
        suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0))
    suite.add_expectation(
        gxe.ExpectColumnValuesToBeBetween(
            column="check_littles_law_rel_err", min_value=0, max_value=config.littles_law_rel_tol
        )
    )
    return suite


def dim_sources(config: ValidationConfig) -> gx.ExpectationSuite:
    """Every bundled table is cited (seed file and locator) and has units."""
    suite = gx.ExpectationSuite(name="dim_sources")
    _not_null_unique(suite, ["source_id"])
    for column in ("source_file", "table_or_figure", "units"):
        suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column=column))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="n_points", min_value=1))
    return suite


def dim_workloads(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per workload with a known kind."""
    suite = gx.ExpectationSuite(name="dim_workloads")
    _not_null_unique(suite, ["workload"])
    suite.add_expectation(
        gxe.ExpectColumnValuesToBeInSet(
            column="workload_kind", value_set=["closed", "closed_zero_think", "open", "cost"]
        )
    )
    return suite


def fct_cpu_intervals(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per system, interval and engine type; busy within 0-100 per engine."""
    suite = gx.ExpectationSuite(name="fct_cpu_intervals")
    suite.add_expectation(gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_CPU_INTERVALS_COLUMNS)))
    _not_null_unique(suite, ["source_id", "system_id", "interval_start_at", "cpu_type"])
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="interval_s", min_value=0, strict_min=True))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="n_online", min_value=0))
    for column in ("lpar_busy_pct", "mvs_busy_pct"):
        # a hair over 100 is RMF rounding; more is a decoding error
        suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0, max_value=100.5))
    return suite


def fct_rmf_duplicates(config: ValidationConfig) -> gx.ExpectationSuite:
    """RMF intervals stored more than once: a count, never a failure (the staging models kept one row per key).

    Only the table's shape is held: its rows are the report of what the pipeline left out, not
    data that can be wrong.
    """
    suite = gx.ExpectationSuite(name="fct_rmf_duplicates")
    suite.add_expectation(gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_RMF_DUPLICATES_COLUMNS)))
    _not_null_unique(suite, ["table_name", "resource_name", "interval_start_at"])
    return suite


FCT_RMF_DUPLICATES_COLUMNS = ("table_name", "resource_name", "interval_start_at", "copies", "rows_dropped")

FCT_CPU_INTERVALS_COLUMNS = ("source_id", "system_id", "interval_start_at", "interval_s", "cpu_type", "n_online",
                             "lpar_busy_pct", "mvs_busy_pct", "busy_engines")

#: Table name -> suite builder; tables without an entry are not published.
SUITES = {
    "fct_measurements": fct_measurements,
    "dim_sources": dim_sources,
    "dim_workloads": dim_workloads,
    "fct_cpu_intervals": fct_cpu_intervals,
    "fct_rmf_duplicates": fct_rmf_duplicates,
}
