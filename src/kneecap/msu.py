r"""MSU: what general-purpose CPU time costs in millions of service units, and the rolling four-hour average.

Sub-capacity software charges follow the peak of an LPAR's rolling four-hour average (R4HA) of MSU
consumed per hour. The pieces, each a small pure function:

* :func:`msu_per_h` - an APPL% (CPU seconds per interval second x 100) as MSU/h at the interval's MSU
  per CPU second (:mod:`kneecap.smf.type70_capacity`: :math:`16 / A`, ``A`` the physical CPU
  adjustment factor in sixteenths of a microsecond per service unit);
* :func:`class_msu` - per WLM class and RMF interval, the MSU/h of its GCP time (APPL% CP, IIPCP
  included) and of its zIIP-eligible work run on GCPs (APPL% IIPCP);
* :func:`rolling_average` - the trailing four-hour, time-weighted mean of an interval series;
* :func:`hourly_average`, :func:`billing_month`, :func:`monthly_peak`, :func:`combined_peak` - how IBM's
  Sub-Capacity Reporting Tool (SCRT) turns the R4HA into the month's peak;
* :func:`lpar_r4ha` - the LPAR's R4HA from its interval MSU beside the SMF70LAC that WLM recorded.

Notes
-----
For an interval of :math:`T` seconds in which work used :math:`c` seconds of GCP time,

.. math::

    \text{MSU/h} = \frac{c}{T}\cdot 3600 \cdot \frac{16}{A}
                 = \frac{\text{APPL\%}}{100}\cdot 3600 \cdot \frac{16}{A},

and the R4HA at the end :math:`t` of an interval is :math:`\sum_j o_j m_j / \sum_j o_j`, with
:math:`m_j` the MSU/h of interval :math:`j` and :math:`o_j` the seconds it overlaps
:math:`(t - 4\,\text{h}, t]`. Because the average is linear, a class's share of the LPAR's R4HA is
the R4HA of the class's own MSU/h: that is "the class's MSU at the peak". APPL% CP is the class's
CP time over the interval divided by the GCPs' multithreading capacity factor, 1 on GCPs (they do
not run SMT), so it is the CP time here.

SCRT, per IBM: "Within each hour, there are 'n' number of SMF70 records, in each of those records,
SCRT looks at the value in SMF70LAC which is the rolling 4-hour average utilization of the LPAR at the
end of the interval ... SCRT averages together all of the SMF70LAC values within the hour to get the
'rolling 4-hour average utilization' for that hour" (:func:`hourly_average`); "The reporting periods
run from 00:00 on the second calendar day of the month through midnight (23:59) on the first calendar
day of the following month" (:func:`billing_month`); and "The peak interval is the highest utilization
determined from the sum of the utilization for all LPARs in which a particular product ran in a given
hour. It is not the sum of highest utilization for individual LPARs" (:func:`combined_peak`). An hour's
records are those whose interval starts in it (as the EasySMF CombinedLparMSU sample groups them).

Where WLM computes SMF70LAC from five-minute samples and kneecap from RMF intervals, the two differ
by the sampling; :func:`lpar_r4ha` reports both and their difference. A window with less than four
hours of data (the first hours, or a gap) is marked incomplete and left out of the peaks.

References
----------
IBM, *z/OS Planning for Sub-Capacity Pricing* (SA23-2301-00), "How the peak four-hour rolling average
MSU value is determined". IBM, "Sub-Capacity Corner: Technology involved with SCRT and the Rolling
4-Hour Average" and "Sub-Capacity for z/OS" (www-03.ibm.com/systems/z/resources/swprice/subcap/).
IBM SMF Explorer, SMF 70 subtype 1 ``msu_physical``. Black Hill Software, EasySMF sample
``CombinedLparMSU.java``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["WINDOW_H", "CLASS_MSU_COLUMNS", "msu_per_h", "class_msu", "rolling_average", "hourly_average",
           "billing_month", "monthly_peak", "combined_peak", "lpar_r4ha", "peak_hour_value"]

#: The averaging window of the rolling average, hours (the "four-hour" of R4HA).
WINDOW_H = 4.0

#: Columns of :func:`class_msu`.
CLASS_MSU_COLUMNS = ("workload", "system_id", "interval_start_at", "interval_s", "tps", "n_gcp", "n_ziip",
                     "msu_per_cpu_s", "msu_gcp_per_h", "msu_eligible_on_gcp_per_h", "msu_eligible_per_h")


def msu_per_h(appl_pct: np.ndarray | float, msu_per_cpu_s: np.ndarray | float) -> np.ndarray:
    """An APPL% as MSU/h: ``APPL% / 100 x 3600 x msu_per_cpu_s`` (module Notes).

    Examples
    --------
    >>> float(msu_per_h(50.0, 16 / 576))  # half a GCP busy on a machine of 100 MSU/h per GCP
    50.0
    """
    return np.asarray(appl_pct, dtype=float) / 100.0 * 3600.0 * np.asarray(msu_per_cpu_s, dtype=float)


def class_msu(measurements: pd.DataFrame, msu_intervals: pd.DataFrame) -> pd.DataFrame:
    """The MSU/h of each SMF class's GCP time and of its zIIP-eligible work on GCPs, per RMF interval.

    Parameters
    ----------
    measurements : pandas.DataFrame
        ``fct_measurements`` rows (``source_id`` ``smf``: the WLM classes from SMF 72.3), with
        ``workload``, ``system_id``, ``interval_start_at``, ``interval_s``, ``tps``, ``n_gcp``,
        ``n_ziip``, ``cpu_gcp_pct`` (APPL% CP, IIPCP included), ``ziip_eligible_on_gcp_pct``
        (APPL% IIPCP) and ``ziip_eligible_pct`` (APPL% IIP + IIPCP: all the zIIP-eligible work, priced as
        if it ran on GCPs).
    msu_intervals : pandas.DataFrame
        ``fct_msu_intervals``: ``system_id``, ``interval_start_at``, ``msu_per_cpu_s``.

    Returns
    -------
    pandas.DataFrame
        :data:`CLASS_MSU_COLUMNS`, one row per class interval whose system and interval have a
        ``msu_per_cpu_s`` (the others cannot be priced and are left out), in time order.
    """
    rows = measurements[measurements["source_id"] == "smf"] if "source_id" in measurements else measurements
    rate = msu_intervals[["system_id", "interval_start_at", "msu_per_cpu_s"]].dropna()
    joined = rows.merge(rate, on=["system_id", "interval_start_at"], how="inner")
    out = joined[["workload", "system_id", "interval_start_at", "interval_s", "tps", "n_gcp", "n_ziip",
                  "msu_per_cpu_s"]].copy()
    out["msu_gcp_per_h"] = msu_per_h(joined["cpu_gcp_pct"].fillna(0.0), joined["msu_per_cpu_s"])
    out["msu_eligible_on_gcp_per_h"] = msu_per_h(joined["ziip_eligible_on_gcp_pct"].fillna(0.0),
                                                  joined["msu_per_cpu_s"])
    out["msu_eligible_per_h"] = msu_per_h(joined["ziip_eligible_pct"].fillna(0.0), joined["msu_per_cpu_s"])
    return out.sort_values(["workload", "system_id", "interval_start_at"], kind="stable").reset_index(drop=True)


def rolling_average(start_at: Sequence[object] | pd.Series, interval_s: Sequence[float] | np.ndarray,
                    values: Sequence[float] | np.ndarray, *, window_h: float = WINDOW_H) -> pd.DataFrame:
    r"""The trailing ``window_h``-hour, time-weighted mean of an interval series, at each interval's end.

    Parameters
    ----------
    start_at, interval_s, values : array-like
        Each interval's start, length in seconds and value (e.g. MSU/h); intervals must not overlap.
    window_h : float
        The window, hours.

    Returns
    -------
    pandas.DataFrame
        In time order: ``interval_start_at``, ``interval_end_at``, ``value`` (:math:`\sum o_j v_j /
        \sum o_j` over the intervals overlapping ``(end - window, end]``; module Notes), ``covered_s``
        (:math:`\sum o_j`) and ``is_complete`` (``covered_s`` within a second of the window).

    Examples
    --------
    >>> t = pd.date_range("2026-03-02", periods=20, freq="15min")
    >>> r = rolling_average(t, [900.0] * 20, [10.0] * 16 + [50.0] * 4)
    >>> r["value"].iloc[[15, 19]].tolist(), r["is_complete"].iloc[[14, 15]].tolist()
    ([10.0, 20.0], [False, True])
    """
    start = pd.to_datetime(pd.Series(start_at)).to_numpy(dtype="datetime64[us]").astype(np.int64) / 1e6
    length = np.asarray(interval_s, dtype=float)
    vals = np.asarray(values, dtype=float)
    order = np.argsort(start, kind="stable")
    start, length, vals = start[order], length[order], vals[order]
    end = start + length
    window = window_h * 3600.0
    first = np.searchsorted(end, end - window, side="right")
    value = np.full(end.size, np.nan)
    covered = np.zeros(end.size)
    for i in range(end.size):
        j = slice(first[i], i + 1)
        overlap = np.clip(np.minimum(end[j], end[i]) - np.maximum(start[j], end[i] - window), 0.0, None)
        ok = np.isfinite(vals[j])
        covered[i] = overlap[ok].sum()
        if covered[i] > 0:
            value[i] = float(np.dot(overlap[ok], vals[j][ok]) / covered[i])
    stamps = pd.to_datetime((start * 1e6).astype(np.int64), unit="us")
    return pd.DataFrame({"interval_start_at": stamps,
                         "interval_end_at": pd.to_datetime((end * 1e6).astype(np.int64), unit="us"),
                         "value": value, "covered_s": covered, "is_complete": covered >= window - 1.0})


def hourly_average(start_at: Sequence[object] | pd.Series, values: Sequence[float] | np.ndarray) -> pd.Series:
    """SCRT's value per hour: the mean of the values of the intervals that start in the hour (module Notes).

    Examples
    --------
    >>> t = pd.to_datetime(["2026-03-02 10:00", "2026-03-02 10:20", "2026-03-02 10:40", "2026-03-02 11:00"])
    >>> hourly_average(t, [30.0, 33.0, 36.0, 50.0]).tolist()
    [33.0, 50.0]
    """
    frame = pd.DataFrame({"hour": pd.to_datetime(pd.Series(start_at)).dt.floor("h").to_numpy(),
                          "value": np.asarray(values, dtype=float)})
    return frame.dropna().groupby("hour")["value"].mean().rename("value")


def billing_month(stamps: Sequence[object] | pd.Series | pd.DatetimeIndex) -> pd.PeriodIndex:
    """The sub-capacity reporting month of each stamp: day 2 00:00 through day 1 23:59 of the next month.

    Labelled by the month the period starts in.

    Examples
    --------
    >>> [str(p) for p in billing_month(pd.to_datetime(["2026-03-01 23:59", "2026-03-02 00:00"]))]
    ['2026-02', '2026-03']
    """
    return pd.PeriodIndex(pd.DatetimeIndex(pd.to_datetime(stamps)) - pd.Timedelta(days=1), freq="M")


def monthly_peak(hourly: pd.Series) -> pd.DataFrame:
    """The highest hourly value of each reporting month (:func:`billing_month`) and its hour.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``month``: ``peak`` and ``peak_hour`` (the first hour that reaches it).
    """
    clean = hourly.dropna()
    if clean.empty:
        return pd.DataFrame({"peak": pd.Series(dtype=float), "peak_hour": pd.Series(dtype="datetime64[us]")})
    months = billing_month(clean.index)
    rows = {}
    for month in months.unique():
        part = clean[months == month]
        rows[month] = {"peak": float(part.max()), "peak_hour": part.idxmax()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("month")


def combined_peak(hourly_by_lpar: Mapping[str, pd.Series]) -> tuple[float, object]:
    """The peak of the LPARs' summed hourly values and its hour (never the sum of each LPAR's own peak).

    IBM SA23-2301, "How the peak four-hour rolling average MSU value is determined": the peak interval
    is the highest utilization from "the sum of the utilization for all LPARs ... in a given hour".
    An hour missing from an LPAR counts as nothing from it.
    """
    total = pd.concat(hourly_by_lpar, axis=1).fillna(0.0).sum(axis=1)
    return float(total.max()), total.idxmax()


def lpar_r4ha(msu_intervals: pd.DataFrame, system_id: str, *, window_h: float = WINDOW_H) -> pd.DataFrame:
    """One LPAR's interval MSU, its rolling average and the SMF70LAC WLM recorded, per interval.

    Returns
    -------
    pandas.DataFrame
        ``interval_start_at``, ``interval_end_at``, ``interval_s``, ``lpar_msu_per_h``,
        ``r4ha_msu_per_h`` (:func:`rolling_average`), ``is_complete``, ``lac_msu_per_h`` and
        ``r4ha_minus_lac_msu_per_h``.
    """
    rows = msu_intervals[msu_intervals["system_id"] == system_id].sort_values("interval_start_at")
    roll = rolling_average(rows["interval_start_at"], rows["interval_s"], rows["lpar_msu_per_h"], window_h=window_h)
    out = roll[["interval_start_at", "interval_end_at"]].copy()
    out["interval_s"] = rows["interval_s"].to_numpy(dtype=float)
    out["lpar_msu_per_h"] = rows["lpar_msu_per_h"].to_numpy(dtype=float)
    out["r4ha_msu_per_h"] = roll["value"].to_numpy()
    out["is_complete"] = roll["is_complete"].to_numpy()
    out["lac_msu_per_h"] = rows["lac_msu_per_h"].to_numpy(dtype=float)
    out["r4ha_minus_lac_msu_per_h"] = out["r4ha_msu_per_h"] - out["lac_msu_per_h"]
    return out.reset_index(drop=True)


def peak_hour_value(start_at: pd.Series, values: np.ndarray | pd.Series, hour: object) -> float:
    """The mean of ``values`` over the intervals that start in ``hour``: a series' value at a peak hour."""
    hours = pd.to_datetime(pd.Series(start_at)).dt.floor("h").to_numpy()
    chosen = np.asarray(values, dtype=float)[hours == np.datetime64(pd.Timestamp(hour))]
    chosen = chosen[np.isfinite(chosen)]
    return float(chosen.mean()) if chosen.size else float("nan")
