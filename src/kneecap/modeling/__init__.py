"""kneecap's statistics and queueing: response-time, throughput and CPU-cost models, knee, zIIPs.

statsmodels-style pairs: ``Model(...).fit(table) -> Results`` with ``predict(frame)``,
``summary()`` and ``to_dict()``; :func:`results_from_dict` rebuilds any results object (how the
registered MLflow models are loaded).
"""

from __future__ import annotations

from typing import Any

from kneecap.modeling.base import ModelError, mape_pct
from kneecap.modeling.closed import ClosedMVAModel, ClosedMVAResults, KneeEstimate
from kneecap.modeling.cost import CostModel, CostResults
from kneecap.modeling.knee import observed_knee
from kneecap.modeling.open import OpenMMcModel, OpenMMcResults
from kneecap.modeling.dispatch import Dispatch, DispatchSolution, cpu_residence, solve_closed, solve_open
from kneecap.modeling.queueing import erlang_c, mmc_resp_ms, multiserver_mva
from kneecap.modeling.select import (Choice, ModelingConfig, choose_cost_model,
                                     choose_response_model, has_cost_data, response_kind)
from kneecap.modeling.usl import USLModel, USLResults, usl_tps
from kneecap.modeling.ziip import PlannerPolicy, ZiipPlan, plan_ziip, years_to_reach

_FAMILIES = {
    "closed_mva": ClosedMVAResults,
    "usl": USLResults,
    "open_mmc": OpenMMcResults,
    "cost_ols": CostResults,
}


def results_from_dict(d: dict[str, Any]) -> Any:
    """Rebuild a results object from its ``to_dict()`` form."""
    family = d.get("family")
    if family not in _FAMILIES:
        raise ModelError(f"unknown model family {family!r}; known: {sorted(_FAMILIES)}")
    return _FAMILIES[family].from_dict(d)


__all__ = [
    "Choice", "ClosedMVAModel", "Dispatch", "DispatchSolution", "cpu_residence", "solve_closed", "solve_open", "ClosedMVAResults", "CostModel", "CostResults", "KneeEstimate",
    "ModelError", "ModelingConfig", "OpenMMcModel", "OpenMMcResults", "PlannerPolicy", "USLModel", "USLResults",
    "ZiipPlan", "choose_cost_model", "choose_response_model", "erlang_c", "has_cost_data",
    "mape_pct", "mmc_resp_ms", "multiserver_mva", "observed_knee", "plan_ziip", "response_kind",
    "results_from_dict", "usl_tps", "years_to_reach",
]
