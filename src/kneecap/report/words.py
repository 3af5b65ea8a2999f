"""Registered metrics in words: the labels the desk's tables and the capacity report give them.

A metric name is the project's contract (``knee_k_clients``, ``band_coverage_pct``); a person reads
``knee (clients)``. Plain text, no framework: the desk (``app/tables.py``) and
:mod:`kneecap.report` label metrics with the same words.
"""

from __future__ import annotations

import re

__all__ = ["METRIC_LABELS", "metric_label"]

#: A registered metric's label and unit (``knee_k_clients`` -> ``knee``, ``clients``); ``_lo`` and
#: ``_hi`` are the 95 % band's ends of the metric without them.
METRIC_LABELS: dict[str, tuple[str, str]] = {
    "train_mape_resp_ms": ("training error, response", "MAPE %"),
    "train_mape_tps": ("training error, throughput", "MAPE %"),
    "train_mape_cpu_ms_per_tran": ("training error, CPU per transaction", "MAPE %"),
    "loo_mape_pct": ("leave-one-out error", "MAPE %"), "cpu_ms_per_tran": ("CPU per transaction", "ms"),
    "delay_ms": ("fixed delay R0", "ms"), "ziip_eligible_fraction": ("zIIP-eligible share of CPU", ""),
    "eligible_bursts": ("eligible bursts per transaction", ""), "knee_tps": ("knee", "tps"),
    "max_tps": ("saturation throughput", "tps"), "unloaded_resp_ms": ("unloaded response", "ms"),
    "ziip_busy_pct_at_knee": ("zIIP busy at the knee", "%"), "gcp_busy_pct_at_knee": ("GCP busy at the knee", "%"),
    "band_widening": ("band widened by", "x"), "help_rule_pool_weight": ("weight of the pool help rule", ""),
    "band_coverage_raw_pct": ("held-out points inside the band, as fitted", "%"),
    "band_coverage_pct": ("held-out points inside the band, widened", "%"),
    "band_calibration_points": ("points the band was held out on", ""),
    "knee_saturation_clients": ("saturation N*", "clients"), "knee_k_clients": ("knee", "clients"),
    "observed_knee_clients": ("observed knee (Kneedle)", "clients"), "n_rows": ("rows fitted", ""),
}

_METRIC_PATTERNS = (
    (re.compile(r"^knee_tps_(?P<x>.+)_help$"), "knee with {x} help", "tps"),
    (re.compile(r"^combine_weight\.(?P<x>.+)$"), "combination weight, {x}", ""),
    (re.compile(r"^combine_rolling_origin_mape_pct\.(?P<x>.+)$"), "rolling-origin error, {x}", "MAPE %"),
)

_UNIT_SUFFIXES = (("_pct", "%"), ("_ms", "ms"), ("_tps", "tps"), ("_clients", "clients"), ("_bytes", "bytes"),
                  ("_s", "s"))


def _labelled(text: str, unit: str) -> str:
    return f"{text} ({unit})" if unit else text


def _metric_parts(name: str) -> tuple[str, str]:
    if name in METRIC_LABELS:
        return METRIC_LABELS[name]
    for pattern, text, unit in _METRIC_PATTERNS:
        m = pattern.match(name)
        if m:
            return text.format(x=m["x"].replace("_", " ")), unit
    for suffix, unit in _UNIT_SUFFIXES:  # a metric kneecap adds later still reads as words with a unit
        if name.endswith(suffix):
            return name[:-len(suffix)].replace("_", " "), unit
    return name.replace("_", " "), ""


def metric_label(name: str) -> str:
    """A registered metric's name as words with its unit.

    ``knee_saturation_clients_lo`` -> ``'saturation N*, 95% band low (clients)'``.
    """
    for end, words in (("_lo", "95% band low"), ("_hi", "95% band high")):
        if name.endswith(end) and not name.endswith(f"_help{end}"):
            text, unit = _metric_parts(name[:-len(end)])
            return _labelled(f"{text}, {words}", unit)
    return _labelled(*_metric_parts(name))
