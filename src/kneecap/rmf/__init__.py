"""Readers for RMF reports (RMF Distributed Data Server / Postprocessor XML, "ddsml").

The binary SMF records themselves are decoded by :mod:`kneecap.smf`; this package reads the
reports RMF has already formatted, so the same capacity tables can be built from either.
"""

from __future__ import annotations

from kneecap.rmf.postprocessor import (
    CPU_COLUMNS,
    PARTITION_COLUMNS,
    WORKLOAD_COLUMNS,
    DdsMessage,
    DdsReport,
    PostprocessorTables,
    RMFReportError,
    iter_reports,
    read_cpu_report,
    read_postprocessor,
    read_workload_report,
)

__all__ = [
    "CPU_COLUMNS",
    "PARTITION_COLUMNS",
    "WORKLOAD_COLUMNS",
    "DdsMessage",
    "DdsReport",
    "PostprocessorTables",
    "RMFReportError",
    "iter_reports",
    "read_cpu_report",
    "read_postprocessor",
    "read_workload_report",
]
