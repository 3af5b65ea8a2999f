"""The desk's tables as a person reads them: labelled columns with units and rounded numbers.

Also the columns a planner reads in each kind of table, and the CSV a download writes (cells a
spreadsheet would run as formulas neutralised, :mod:`kneecap.csvsafe`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from kneecap import csvsafe, schema
from kneecap.report.words import metric_label

#: A column's label with its unit, for every column the desk's tables show. The CSV downloads keep
#: the column names (they are the project's contract); the tables on the page show these.
COLUMN_LABELS: dict[str, str] = {
    # dim_workloads
    "workload": "workload", "source_ids": "sources", "n_points": "points", "n_with_clients": "with clients",
    "n_with_resp": "with response", "n_with_cost": "with CPU cost", "min_clients": "min clients",
    "max_clients": "max clients", "min_n_ziip": "min zIIPs", "max_n_ziip": "max zIIPs",
    "has_response_curve": "response curve", "has_cost": "cost model", "workload_kind": "kind",
    # fct_measurements
    "source_id": "source", "point_id": "point", "clients": "clients", "think_time_ms": "think time (ms)",
    "tps": "throughput (tps)", "resp_ms": "response (ms)", "n_gcp": "GCPs", "n_ziip": "zIIPs",
    "cpu_total_pct": "CPU, all engines (APPL %)", "cpu_gcp_pct": "CPU on GCPs (APPL %)",
    "cpu_ziip_pct": "CPU on zIIPs (APPL %)", "ziip_eligible_pct": "zIIP-eligible CPU (APPL %)",
    "ziip_eligible_on_gcp_pct": "eligible CPU on GCPs (IIPCP, APPL %)", "cpu_s": "CPU (s)",
    "cpu_ms_per_tran": "CPU per transaction (ms)", "req_bytes": "request (bytes)", "resp_bytes": "response (bytes)",
    "interval_s": "interval (s)", "n_queues": "queues", "system_id": "system", "service_class": "WLM class",
    "scope": "PI", "pi_median": "median PI", "pi_max": "largest PI", "missed": "intervals with PI > 1",
    "missed_pct": "intervals with PI > 1 (%)",
    "source_file": "source file", "source_locator": "where in the source", "duplicate_of": "duplicate of",
    "source_line": "line", "interval_start_at": "interval start", "lpar_gcp_busy_pct": "LPAR busy per GCP (%)",
    "lpar_ziip_busy_pct": "LPAR busy per zIIP (%)", "cpu_using_samples": "GCP using samples",
    "cpu_delay_samples": "GCP delay samples", "ziip_using_samples": "zIIP using samples",
    "ziip_on_cp_using_samples": "eligible on GCP using samples", "ziip_delay_samples": "zIIP delay samples",
    # residuals and provenance
    "target": "measure", "measured": "measured", "fitted": "fitted", "lo": "95% band low", "hi": "95% band high",
    "residual_pct": "residual (%)", "bg_gcp_busy_pct": "other classes per GCP (%)",
    "bg_ziip_busy_pct": "other classes per zIIP (%)", "intervals": "intervals",
    "first_interval_start": "first interval", "last_interval_start": "last interval", "days": "days",
    # backtest, competitors, forecaster candidates
    "case": "case", "model": "model", "mape_pct": "held-out error (MAPE %)", "goal_pct": "goal (MAPE %)",
    "meets_goal": "meets goal", "questions_ok": "questions answered", "family": "family",
    "loo_mape_pct": "leave-one-out error (MAPE %)", "method": "method",
    "rolling_origin_mape_pct": "rolling-origin error (MAPE %)", "chosen": "chosen",
    # the zIIP plan
    "resp_ms_lo": "95% band low (ms)", "resp_ms_hi": "95% band high (ms)", "ziip_busy_pct": "zIIP busy (%)",
    "gcp_busy_pct": "GCP busy (%)", "ziip_eligible_on_gcp_share_pct": "eligible work on GCPs (%)",
    "meets_slo": "meets SLO", "meets_policy": "meets policy", "failed_rules": "fails", "verdict": "why",
    "band": "95% band (ms)",
    # the registry and the Data page
    "name": "registered model", "version": "version", "aliases": "aliases", "run_id": "run",
    "created_at": "registered at", "note": "note", "weight": "weight", "table": "table", "rows": "rows",
    "line": "line", "column": "column", "value": "value", "problem": "problem", "rule": "rule",
    "reason": "reason", "file": "file", "measure": "measure",
    # the factor catalogue and the workload-name parser
    "factor_id": "id", "factor": "factor", "effect": "effect", "qualifier": "qualifier", "base_value": "compared with",
    "unit": "unit", "apply_as": "applied as", "cpu_on": "CPU on", "status": "status", "applicable": "applicable",
    "why_not": "why not", "section": "section", "table_or_figure": "table or figure", "pattern": "pattern",
    "meaning": "meaning", "connect_per_tran": "connects per transaction",
}

def column_label(name: str) -> str:
    """A table column's label with its unit (:data:`COLUMN_LABELS`, else the metric rule).

    The registry's ``metric.<name>`` columns read as their metric.
    """
    if name.startswith("metric."):
        return metric_label(name[len("metric."):])
    return COLUMN_LABELS.get(name) or metric_label(name)


def significant(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant digits (869.5603 -> 869.6; 0.000123456 -> 0.0001235)."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value == 0:
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def decimals(frame: pd.DataFrame, digits: int = 3, most: int = 4) -> dict[str, int]:
    """Per float column, the decimals that give its smallest non-zero value ``digits`` significant digits.

    At most ``most``: a residual of 0.00003 % needs no more than 0.0000. None for whole numbers
    (clients, engines): 50, not 50.00.
    """
    out = {}
    for column in frame.select_dtypes("float").columns:
        sizes = frame[column].abs().replace(float("inf"), float("nan"))
        low = sizes[sizes > 0].min()
        whole = bool((sizes.dropna() % 1 == 0).all())
        out[column] = 0 if whole or low != low else min(most, max(0, digits - 1 - math.floor(math.log10(low))))
    return out


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each float column rounded to :func:`decimals`.

    One number of decimals per column, so a column's values line up and compare.
    """
    return frame.round(decimals(frame))


def text_widths(frame: pd.DataFrame, columns: list[str], most: int = 20) -> dict[str, int]:
    """Pixels for each column of short words in ``columns`` (at most ``most`` characters): its longest.

    The grid sizes such a column by its label and cut ``open_dispatch`` to ``open_dispa``; longer
    text (names, timestamps) it sizes well itself.
    """
    out = {}
    for c in columns:
        if c in frame and (frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])):
            longest = max([len(column_label(str(c))), *(len(str(v)) for v in frame[c].dropna())])
            if longest <= most:
                out[c] = 18 + 7 * longest
    return out


def column_config(columns, places: dict[str, int] | None = None, times: Iterable[str] = (),
                  widths: dict[str, int] | None = None) -> dict[str, Any]:
    """Labels (and the schema's meaning as help) for the columns of a table on the page.

    ``places``: decimals to print per numeric column (:func:`decimals`), so that 1 prints as 1.000
    beside 0.994; ``times``: timestamp columns, printed to the minute (RMF intervals start on one);
    ``widths``: pixels of text columns (:func:`text_widths`).
    """
    widths = widths or {}
    meanings = {**schema.NUMERIC_COLUMNS, **schema.FACTOR_COLUMNS, **schema.LPAR_COLUMNS, **schema.SAMPLE_COLUMNS}
    places = places or {}
    config = {}
    for c in columns:
        label, meaning = column_label(str(c)), meanings.get(str(c))
        if c in times:
            config[c] = st.column_config.DatetimeColumn(label, help=meaning, format="YYYY-MM-DD HH:mm")
        elif c in places:
            config[c] = st.column_config.NumberColumn(label, help=meaning, format=f"%.{places[c]}f")
        else:  # the sentences get the room; the rest keep their natural width
            config[c] = st.column_config.Column(label, help=meaning, width="large" if c in (
                "verdict", "note", "problem", "reason") else widths.get(c))
    return config


def metrics_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Registered metrics (``metric``, ``value``) as ``measure`` (words and unit) and ``value`` (4 digits)."""
    return pd.DataFrame({"metric": metrics["metric"], "measure": [metric_label(m) for m in metrics["metric"]],
                         "value": [significant(float(v)) for v in metrics["value"]]})


#: The columns a planner reads in the desk's wide tables, in this order; the rest stay in the CSV
#: download. A laptop's browser (1280-1440 px) leaves a table 780-1000 px beside the sidebar.
WORKLOAD_COLUMNS = ["workload", "workload_kind", "n_points", "min_clients", "max_clients", "n_gcp", "min_n_ziip",
                    "max_n_ziip"]
#: a table of runs names its points; RMF intervals are known by their start, and the LPAR's busy
#: says how much room the other classes left
RUN_COLUMNS = ["point_id", "source_id", "clients", "think_time_ms", "tps", "resp_ms", "cpu_ms_per_tran", "n_gcp",
               "n_ziip"]
INTERVAL_COLUMNS = ["interval_start_at", "system_id", "source_id", "tps", "resp_ms", "n_gcp", "n_ziip",
                    "lpar_gcp_busy_pct", "lpar_ziip_busy_pct"]
RESIDUAL_COLUMNS = ["point_id", "interval_start_at", "clients", "tps", "think_time_ms", "n_gcp", "n_ziip",
                    "measured", "fitted", "lo", "hi", "residual_pct"]
BACKTEST_COLUMNS = ["case", "model", "target", "mape_pct", "goal_pct", "meets_goal"]
MODEL_COLUMNS = ["name", "version", "aliases", "metric.train_mape_resp_ms", "metric.knee_k_clients", "metric.knee_tps"]
#: columns the page says above the table when they hold one value (the summary line names the
#: sources, the provenance line the system)
SAID_ABOVE = ("system_id", "source_id")


def planner_columns(frame: pd.DataFrame, wanted: list[str]) -> list[str]:
    """The columns of ``wanted`` that hold a value in ``frame``, in ``wanted``'s order.

    Leaves out a :data:`SAID_ABOVE` column with one value throughout, and a point's id where its
    interval start names it.
    """
    shown = [c for c in wanted if c in frame and frame[c].notna().any()]
    if "interval_start_at" in shown and "point_id" in shown:
        shown.remove("point_id")
    return [c for c in shown if c not in SAID_ABOVE or frame[c].nunique(dropna=False) > 1]


def point_columns(points: pd.DataFrame) -> list[str]:
    """:func:`planner_columns` of a workload's measured points: RMF intervals' or a table of runs'."""
    intervals = "interval_start_at" in points and points["interval_start_at"].notna().any()
    return planner_columns(points, INTERVAL_COLUMNS if intervals else RUN_COLUMNS)


def show_table(frame: pd.DataFrame, key: str, columns: list[str] | None = None, rounded: bool = True) -> None:
    """A table on the page: labelled columns with units, numbers rounded (:func:`readable`).

    ``columns``: those shown (default all); ``rounded`` False shows the numbers as they were read
    (an upload's cells).
    """
    shown = list(frame.columns) if columns is None else [c for c in columns if c in frame]
    places = decimals(frame) if rounded else {}
    st.dataframe(frame.round(places) if rounded else frame, hide_index=True, key=key, column_order=shown,
                 column_config=column_config(shown, places, frame.select_dtypes("datetime").columns,
                                             text_widths(frame, shown)),
                 placeholder="-")


def show_text_table(frame: pd.DataFrame, columns: list[str] | None = None) -> None:
    """A short table whose sentences wrap (st.table), labelled and rounded as :func:`show_table`'s."""
    shown = readable(frame[columns] if columns else frame)
    for column in shown.select_dtypes("bool").columns:
        shown[column] = shown[column].map({True: "yes", False: ""})
    # text throughout: a number column with a dash for a missing value is not a number column to
    # Arrow; an en dash, as st.table reads a cell's '-' as a Markdown list item
    shown = shown.astype(str).where(shown.notna(), "\u2013").rename(columns=lambda c: column_label(str(c)))
    st.table(shown, hide_index=True)


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV for a download, formula-like text cells neutralised (:mod:`kneecap.csvsafe`)."""
    return csvsafe.neutralise_frame(frame).to_csv(index=False)
