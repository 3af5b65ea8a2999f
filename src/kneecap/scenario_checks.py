"""A scenario's numbers checked before any model is loaded or solved (:func:`check_scenario`).

:func:`kneecap.forecasting.forecast_scenarios` refuses a scenario whose numbers are not numbers or
are out of :data:`SCENARIO_RANGES` with one line naming the scenario and the key; the names are
re-exported from :mod:`kneecap.forecasting`, where callers read them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kneecap import peak_load, schema
from kneecap.limits import short_repr
from kneecap.modeling import ModelError

__all__ = ["MAX_CLIENTS", "MAX_TPS", "SCENARIO_RANGES", "check_scenario", "scenario_value_problem"]

#: Most clients a scenario may ask for (:data:`kneecap.schema.MAX_SCENARIO_CLIENTS`).
MAX_CLIENTS = schema.MAX_SCENARIO_CLIENTS
#: Most transactions per second an open-workload scenario may ask for (a z/OS LPAR runs thousands
#: to tens of thousands; more is a unit error).
MAX_TPS = 1_000_000
#: ``(low, high, whole number)`` of each numeric scenario key.
SCENARIO_RANGES: dict[str, tuple[float, float, bool]] = {
    "clients": (1, MAX_CLIENTS, False),
    "current_clients": (0, MAX_CLIENTS, False),
    "tps": (0, MAX_TPS, False),
    "n_gcp": (1, schema.MAX_ENGINES, True),
    "n_ziip": (0, schema.MAX_ENGINES, True),
    "think_time_ms": (0, schema.MAX_VALUES["think_time_ms"], False),
    "slo_resp_ms": (0, schema.MAX_VALUES["resp_ms"], False),
    "req_bytes": (0, schema.MAX_VALUES["req_bytes"], False),
    "resp_bytes": (0, schema.MAX_VALUES["resp_bytes"], False),
    "n_queues": (0, schema.MAX_VALUES["n_queues"], False),
    "growth_pct_per_year": (-100, 10_000, False),
    "current_tps": (0, MAX_TPS, False),
    "bg_load_factor": (0, 1_000, False),
    "gcp_speed": (0, 1_000, False),
    "ziip_speed": (0, 1_000, False),
    "ziip_mt": (1, 2, True),
    "ziip_mt_capacity": (0, 2, False),
}


def scenario_value_problem(key: str, value: Any) -> str | None:
    """What is wrong with one numeric scenario value, or None (see :data:`SCENARIO_RANGES`).

    YAML 1.1 reads ``1e12`` as a string, so numeric strings count as numbers.

    Examples
    --------
    >>> scenario_value_problem("clients", [1, 2])
    'clients must be a number, got [1, 2]'
    >>> scenario_value_problem("clients", "1e12")
    'clients must be between 1 and 50,000, got 1e+12'
    >>> scenario_value_problem("n_ziip", 3) is None
    True
    """
    low, high, whole = SCENARIO_RANGES[key]
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        return f"{key} must be a number, got {short_repr(value)}"
    if not math.isfinite(number):
        return f"{key} must be a finite number, got {short_repr(value)}"
    bounds = f"between {low:,.0f} and {high:,.0f}"
    if whole and not (number.is_integer() and low <= number <= high):
        return f"{key} must be a whole number {bounds}, got {number:g}"
    if not low <= number <= high:
        return f"{key} must be {bounds}, got {number:g}"
    return None


def check_scenario(scenario: Mapping[str, Any], label: str | None = None) -> None:
    """Reject a scenario whose numbers are not numbers or are out of range, before any solve.

    Parameters
    ----------
    scenario : mapping
        One scenario (see the module docstring).
    label : str, optional
        How errors name the scenario; default its ``name``.

    Raises
    ------
    ModelError
        ``scenario 'NAME': KEY must be ...`` for the first bad key (the bounds are
        :data:`SCENARIO_RANGES`: at most :data:`MAX_CLIENTS` clients, :data:`MAX_TPS` tps and
        :data:`kneecap.schema.MAX_ENGINES` engines per pool).
    """
    label = label if label is not None else repr(str(scenario.get("name", "")))
    for key in SCENARIO_RANGES:
        if scenario.get(key) is not None and not (key == "tps" and peak_load.asks_for_peak(scenario)):
            problem = scenario_value_problem(key, scenario[key])
            if problem:
                raise ModelError(f"scenario {label}: {problem}")
