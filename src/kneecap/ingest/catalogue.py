"""The decoded tables the warehouse SQL binds by name, and their empty forms.

``data/interim/smf/<table>/*.parquet`` holds what ``kneecap ingest`` (and the ``decode_smf`` stage)
decoded. Every table listed here is bound for the SQL even when nothing of that kind was ingested:
an empty frame with the decoder's own columns and types, so the pipeline runs the same with or
without SMF and RMF data. It names the tables of both decoders, so it lives beside the store that
holds them rather than in either (:mod:`kneecap.smf` does not import :mod:`kneecap.rmf`).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from kneecap.rmf import postprocessor
from kneecap.smf import type70, type70_capacity, type72


def _smf72_dtype(column: str) -> str:
    """The type the SMF reader gives a ``smf72_workload`` column.

    It is explicit because Spark, unlike DuckDB, will not cast an empty float column to the timestamp or flag the
    staging SQL makes of it.
    """
    if column in ("system_id", "sysplex", "class_name", "workload_name", "goal_type"):
        return "object"
    if column == "interval_start_at":
        return "datetime64[us]"
    if column == "is_report_class":
        return "bool"
    if column in ("period", "importance", "ended", "goal_percentile") or column.endswith(("_samples", "_count")):
        return "int64"
    return "float64"


def _empty_smf72() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=_smf72_dtype(c)) for c in type72.COLUMNS})


#: table name -> factory of its empty frame
DECODED_TABLES: dict[str, Callable[[], pd.DataFrame]] = {
    type70.TABLE: lambda: type70.finalize(pd.DataFrame()),
    type70_capacity.TABLE: lambda: pd.DataFrame(type70_capacity.empty_columns()),
    type72.TABLE: _empty_smf72,
    "rmf_cpu": lambda: postprocessor.empty_table(postprocessor.CPU_COLUMNS),
    "rmf_partition": lambda: postprocessor.empty_table(postprocessor.PARTITION_COLUMNS),
    "rmf_workload": lambda: postprocessor.empty_table(postprocessor.WORKLOAD_COLUMNS),
}
