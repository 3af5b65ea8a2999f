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
    """Keys present and unique; measures non-negative; APPL% within engines; MT factor in [1, 2]; Little's law."""
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
    # R723MCFS / 1024 where the zIIPs ran SMT-2: above 1 by construction, and two threads do at
    # most twice a core's MT-1 work (the dispatch model refuses more)
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="ziip_mt_capacity", min_value=1, max_value=2))
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


def fct_msu_intervals(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per system and interval; MSU per CPU second positive, the MSU/h figures non-negative.

    ``msu_per_cpu_s`` is empty where the record had no adjustment factor (nothing is reckoned then).
    """
    suite = gx.ExpectationSuite(name="fct_msu_intervals")
    suite.add_expectation(gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_MSU_INTERVALS_COLUMNS)))
    _not_null_unique(suite, ["system_id", "interval_start_at"])
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="interval_s", min_value=0, strict_min=True))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="msu_per_cpu_s", min_value=0, strict_min=True))
    for column in ("gcp_dispatch_s", "lpar_msu_per_h", "lac_msu_per_h", "wla_msu_per_h", "model_capacity_msu_per_h"):
        suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0))
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


def fct_rt_buckets(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per class period, interval and bucket 1-14; counts non-negative and cumulative."""
    suite = gx.ExpectationSuite(name="fct_rt_buckets")
    suite.add_expectation(gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_RT_BUCKETS_COLUMNS)))
    _not_null_unique(suite, ["system_id", "interval_start_at", "class_name", "is_report_class", "period", "bucket"])
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="bucket", min_value=1, max_value=14))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="n_transactions", min_value=0))
    suite.add_expectation(gxe.ExpectColumnValuesToNotBeNull(column="min_pct"))
    # a rising map (the decoder refuses any other): each bucket's bound above its lower one
    suite.add_expectation(gxe.ExpectColumnPairValuesAToBeGreaterThanB(
        column_A="max_pct", column_B="min_pct", ignore_row_if="either_value_is_missing"))
    suite.add_expectation(gxe.ExpectColumnPairValuesAToBeGreaterThanB(
        column_A="total_transactions", column_B="cum_transactions", or_equal=True))
    return suite


def fct_performance_index(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per service class period and interval with a goal; PI, velocity and percentile in range."""
    suite = gx.ExpectationSuite(name="fct_performance_index")
    suite.add_expectation(
        gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_PERFORMANCE_INDEX_COLUMNS)))
    _not_null_unique(suite, ["system_id", "interval_start_at", "class_name", "period"])
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(
        column="goal_type", value_set=["percentile", "average", "velocity", "discretionary"]))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="performance_index", min_value=0))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="pi_bucket", min_value=1, max_value=14))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="velocity_pct", min_value=0, max_value=100))
    # a percentile goal's percentile (R723CPCT) is a share of the transactions
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(
        column="goal_percentile", min_value=1, max_value=100, row_condition='goal_type=="percentile"',
        condition_parser="pandas"))
    return suite


def fct_sysplex_performance_index(config: ValidationConfig) -> gx.ExpectationSuite:
    """One row per sysplex, interval start and service class period; systems counted, PI and velocity in range."""
    suite = gx.ExpectationSuite(name="fct_sysplex_performance_index")
    suite.add_expectation(
        gxe.ExpectTableColumnsToMatchOrderedList(column_list=list(FCT_SYSPLEX_PERFORMANCE_INDEX_COLUMNS)))
    _not_null_unique(suite, ["sysplex", "interval_start_at", "class_name", "period"])
    suite.add_expectation(gxe.ExpectColumnValuesToBeInSet(
        column="goal_type", value_set=["percentile", "average", "velocity", "discretionary"]))
    # a row is made by at least one system; a system missing is one the period ran on at other times
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="n_systems", min_value=1))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="n_systems_missing", min_value=0))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="performance_index", min_value=0))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="pi_bucket", min_value=1, max_value=14))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="velocity_pct", min_value=0, max_value=100))
    return suite


FCT_RT_BUCKETS_COLUMNS = ("system_id", "sysplex", "interval_start_at", "interval_s", "class_name", "is_report_class",
                          "period", "goal_type", "bucket", "min_pct", "max_pct", "min_ms", "max_ms",
                          "n_transactions", "cum_transactions", "total_transactions")

FCT_PERFORMANCE_INDEX_COLUMNS = ("system_id", "sysplex", "interval_start_at", "interval_s", "class_name", "period",
                                 "workload_name", "importance", "goal_type", "goal_resp_ms", "goal_percentile",
                                 "goal_velocity_pct", "ended", "resp_ms", "velocity_pct",
                                 "resp_at_goal_percentile_ms", "pi_bucket", "performance_index")

FCT_SYSPLEX_PERFORMANCE_INDEX_COLUMNS = ("sysplex", "interval_start_at", "interval_s", "class_name", "period",
                                         "workload_name", "importance", "goal_type", "goal_resp_ms",
                                         "goal_percentile", "goal_velocity_pct", "is_goal_same_on_every_system",
                                         "n_systems", "n_systems_missing", "ended", "resp_ms", "velocity_pct",
                                         "resp_at_goal_percentile_ms", "pi_bucket", "performance_index",
                                         "min_local_performance_index", "max_local_performance_index")

FCT_RMF_DUPLICATES_COLUMNS = ("table_name", "resource_name", "interval_start_at", "copies", "rows_dropped")

FCT_MSU_INTERVALS_COLUMNS = ("system_id", "sysplex", "interval_start_at", "interval_s", "msu_per_cpu_s", "n_gcp",
                             "gcp_dispatch_s", "lpar_msu_per_h", "lac_msu_per_h", "wla_msu_per_h",
                             "model_capacity_msu_per_h", "is_lac_without_wait")

FCT_CPU_INTERVALS_COLUMNS = ("source_id", "system_id", "interval_start_at", "interval_s", "cpu_type", "n_online",
                             "lpar_busy_pct", "mvs_busy_pct", "busy_engines")

#: Table name -> suite builder; tables without an entry are not published.
SUITES = {
    "fct_measurements": fct_measurements,
    "dim_sources": dim_sources,
    "dim_workloads": dim_workloads,
    "fct_cpu_intervals": fct_cpu_intervals,
    "fct_msu_intervals": fct_msu_intervals,
    "fct_rmf_duplicates": fct_rmf_duplicates,
    "fct_rt_buckets": fct_rt_buckets,
    "fct_performance_index": fct_performance_index,
    "fct_sysplex_performance_index": fct_sysplex_performance_index,
}
