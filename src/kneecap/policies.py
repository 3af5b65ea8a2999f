"""The planner's and the growth reading's policies, built from their ``params.yaml`` sections.

:mod:`kneecap.config` types the sections and knows nothing of the models; these turn them into
the objects the forecasts take, so the backtest, ``kneecap forecast`` and the desk read the same
file the same way (:func:`kneecap.training.modeling_config` does it for the fits).
"""

from __future__ import annotations

from dataclasses import asdict

from kneecap.config import Params
from kneecap.forecasting import GrowthPolicy
from kneecap.modeling.ziip import PlannerPolicy


def planner_policy(params: Params) -> PlannerPolicy:
    """The one planner policy every caller uses (backtest, forecast, desk), from ``planner`` and ``train.knee_k``."""
    return PlannerPolicy(**asdict(params.planner), knee_k=params.train.knee_k)


def growth_policy(params: Params) -> GrowthPolicy:
    """How every caller (forecast, desk) reads a class's growth, from ``params.yaml`` ``growth``."""
    return GrowthPolicy(**asdict(params.growth))
