"""Row-level derived checks the suites assert on (pure pandas; no great_expectations here)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kneecap import schema


def littles_law_rel_err(frame: pd.DataFrame) -> pd.Series:
    r"""Relative Little's-law gap of closed-workload rows; NaN where a term is missing.

    Notes
    -----
    For a closed system with N clients, throughput X and response time R plus think time Z,
    Little's law applied to the whole loop gives

    .. math:: N = X \, (R + Z), \qquad \text{err} = \frac{|N - X (R + Z)|}{N}.

    References
    ----------
    Lazowska, Zahorjan, Graham, Sevcik, *Quantitative System Performance* (1984), §3.2
    (the response time law).
    """
    n = frame["clients"]
    think_ms = frame["think_time_ms"].fillna(0.0) if "think_time_ms" in frame else 0.0
    predicted_n = frame["tps"] * (frame["resp_ms"] + think_ms) / 1000.0
    err = (n - predicted_n).abs() / n
    return err.where(n > 0)


def pct_headroom(frame: pd.DataFrame, column: str, engines: tuple[str, ...]) -> pd.Series:
    """``100 × engines − pct``: negative when an APPL% exceeds what the engines can deliver."""
    capacity = sum((frame[e] for e in engines), start=pd.Series(0.0, index=frame.index))
    return (100.0 * capacity - frame[column]).astype("float64")


#: Columns :func:`add_check_columns` appends to ``fct_measurements``, in order.
CHECK_COLUMNS: tuple[str, ...] = ("check_littles_law_rel_err",) + tuple(
    f"check_{column}_headroom" for column in schema.PCT_BOUNDS
)


def add_check_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with ``check_*`` columns the measurement suite bounds.

    ``check_littles_law_rel_err`` for closed rows and ``check_<pct>_headroom`` for every APPL%
    column whose engine counts are known (NaN elsewhere, which the suites skip).
    """
    out = frame.copy()
    if {"clients", "tps", "resp_ms"} <= set(out.columns):
        out["check_littles_law_rel_err"] = littles_law_rel_err(out)
    for column, engines in schema.PCT_BOUNDS.items():
        if column in out.columns and set(engines) <= set(out.columns):
            out[f"check_{column}_headroom"] = pct_headroom(out, column, engines)
    return out.replace([np.inf, -np.inf], np.nan)
