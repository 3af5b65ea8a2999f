"""kneecap's statistics and queueing: response-time, throughput and CPU-cost models, knee, zIIPs.

statsmodels-style pairs: ``Model(...).fit(table) -> Results`` with ``predict(frame)``,
``summary()`` and ``to_dict()``, and what every consumer asks a family (:class:`base.Results`:
``curve``, ``knee``, ``answer``, ``load_unit``, ...); :mod:`kneecap.modeling.serialise` stores any results object as a
JSON document and rebuilds it with kneecap's own classes (how the registered MLflow models are
saved and loaded; no pickles).
"""

from __future__ import annotations

from kneecap.modeling import combine
from kneecap.modeling.base import ModelError, mape_pct
from kneecap.modeling.closed import (
    ClosedMVAModel,
    ClosedMVAResults,
    MultiServerMVAModel,
    MultiServerMVAResults,
)
from kneecap.modeling.combine import CombinedModel, CombinedResults
from kneecap.modeling.cost import CostModel, CostResults
from kneecap.modeling.dispatch import Dispatch, DispatchSolution, cpu_residence, solve_closed, solve_open
from kneecap.modeling.knee import Knee, knee_sentence, observed_knee, past_knee
from kneecap.modeling.open import OpenMMcModel, OpenMMcResults
from kneecap.modeling.open_dispatch import OpenDispatchModel, OpenDispatchResults
from kneecap.modeling.queueing import erlang_c, mmc_resp_ms, multiserver_mva
from kneecap.modeling.select import (
    Choice,
    ModelingConfig,
    choose_cost_model,
    choose_response_model,
    has_cost_data,
    response_kind,
)
from kneecap.modeling.serialise import ModelFormatError, results_from_dict
from kneecap.modeling.usl import USLModel, USLResults, usl_tps
from kneecap.modeling.ziip import PlannerPolicy, ZiipPlan, plan_ziip, years_to_reach

__all__ = [
    "Choice", "ClosedMVAModel", "CombinedModel", "CombinedResults", "MultiServerMVAModel",
    "MultiServerMVAResults", "combine", "Dispatch", "DispatchSolution", "cpu_residence", "solve_closed", "solve_open",
    "ClosedMVAResults", "CostModel", "CostResults", "Knee",
    "ModelError", "ModelFormatError", "ModelingConfig", "OpenMMcModel", "OpenMMcResults", "OpenDispatchModel",
    "OpenDispatchResults", "PlannerPolicy", "USLModel", "USLResults",
    "ZiipPlan", "choose_cost_model", "choose_response_model", "erlang_c", "has_cost_data",
    "knee_sentence", "mape_pct", "mmc_resp_ms", "multiserver_mva", "observed_knee", "past_knee", "plan_ziip",
    "response_kind",
    "results_from_dict", "usl_tps", "years_to_reach",
]
