"""The tables' columns (those of the binary SMF tables, so one SQL model serves both sources) and their types."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from kneecap.smf import type70, type72

#: ``smf70_cpu`` grain: one row per system x interval x processor type. Same columns, in the
#: same order, as the binary SMF 70.1 table (:data:`kneecap.smf.type70.COLUMNS`) without its
#: ``n_records`` bookkeeping column; ``sysplex`` is null (the CPU report does not print it).
CPU_COLUMNS: tuple[str, ...] = tuple(c for c in type70.COLUMNS if c != "n_records")


#: ``rmf_partition`` grain: one row per system x interval x partition x processor type
#: (the Partition Data Report; SUM rows are dropped, ``*PHYSICAL*`` is kept and flagged).
PARTITION_COLUMNS: tuple[str, ...] = (
    "system_id",
    "interval_start_at",
    "interval_s",
    "partition_name",
    "is_own_partition",
    "is_physical",
    "partition_status",
    "cpu_type",
    "weight",
    "msu_defined",
    "msu_actual",
    "n_logical",
    "effective_dispatch_s",
    "total_dispatch_s",
    "log_proc_effective_pct",
    "log_proc_total_pct",
    "phys_lpar_mgmt_pct",
    "phys_effective_pct",
    "phys_total_pct",
)


#: ``smf72_workload`` grain: one row per (system or sysplex) x interval x class x period.
#: The first 28 columns are exactly those of the binary SMF 72.3 table
#: (:data:`kneecap.smf.type72.COLUMNS`, checked by a test); the XML-only fields follow.
SMF72_WORKLOAD_COLUMNS: tuple[str, ...] = type72.COLUMNS


WORKLOAD_COLUMNS: tuple[str, ...] = SMF72_WORKLOAD_COLUMNS + (
    "ended_per_s",
    "avg_trans",
    "mpl",
    "exec_ms",
    "queued_ms",
    "resp_std_ms",
    "rct_s",
    "iit_s",
    "hst_s",
    "zaap_s",
    "appl_aapcp_pct",
    "appl_aap_pct",
    "exec_velocity_pct",
    "perf_index",
)


#: One row per interval report that could not be read: its place in the document (from 1) and why.
QUARANTINE_COLUMNS = ("interval", "reason")

_STRING_COLUMNS = {
    "system_id", "sysplex", "cpu_type", "partition_name", "partition_status",
    "class_name", "workload_name",
}


_BOOL_COLUMNS = {"is_own_partition", "is_physical", "is_report_class"}

_INT_COLUMNS = {"n_online", "period"}


def empty_table(columns: tuple[str, ...]) -> pd.DataFrame:
    """A table of these columns (``CPU_COLUMNS``, ``PARTITION_COLUMNS``, ``WORKLOAD_COLUMNS``) with no rows.

    Its columns have the types the reader gives them: it is what the SQL binds when no report was ingested.
    """
    return frame([], columns)


def frame(rows: Iterable[dict[str, object]], columns: tuple[str, ...]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=list(columns))
    for col in columns:
        if col == "interval_start_at":
            df[col] = pd.to_datetime(df[col])
        elif col in _STRING_COLUMNS:
            df[col] = df[col].astype("string")
        elif col in _BOOL_COLUMNS:
            df[col] = df[col].astype(bool)
        elif col in _INT_COLUMNS:
            df[col] = df[col].astype("int64")
        else:
            df[col] = df[col].astype("float64")
    return df
