"""The defaults of the family contract (:class:`kneecap.modeling.base.Results`).

A results class mixes in :class:`ResultsBase`, defines ``family``, ``targets``, ``load_unit`` and
``predict``, and overrides what it knows more about (a knee, engine pools, a CPU demand, plots).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from kneecap.modeling.answers import predicted_answer
from kneecap.modeling.base import FitReport, ModelError
from kneecap.modeling.knee import Knee


class ResultsBase:
    """The defaults of :class:`Results`: a family that only predicts at a load.

    Its curve is :meth:`predict` on a grid of load; it has no knee, no engine pools, no CPU demand
    for catalogue factors, nothing to log beyond its fit, one plot of a tps-loaded fit. A results
    class mixes this in, defines ``family``, ``targets``, ``load_unit`` and ``predict``, and
    overrides a method where it knows more.
    """

    #: whether answers depend on the zIIP and GCP pools (``n_gcp``, ``n_ziip``): the planner's question
    pools: ClassVar[bool] = False

    def curve(self: Any, *, max_load: float, points: int = 60, max_draws: int | None = None,
              **configuration: Any) -> pd.DataFrame:
        """:meth:`predict` on ``points`` loads up to ``max_load``.

        Clients: whole numbers from 1, with ``think_time_ms`` (0 by default); tps: an even grid
        from ``max_load / points``. ``max_draws`` is not used (the band is not drawn).
        """
        if self.load_unit == "clients":
            grid = np.unique(np.linspace(1, max_load, points).round())
            frame = pd.DataFrame({"clients": grid, "think_time_ms": configuration.get("think_time_ms") or 0.0})
        else:
            frame = pd.DataFrame({"tps": np.linspace(max_load / points, max_load, points)})
        return pd.concat([frame, self.predict(frame)], axis=1)

    def knee(self, *, k: float, max_draws: int | None = None, **configuration: Any) -> Knee | None:
        """None: the family models no knee."""
        return None

    def answer(self: Any, scenario: Mapping[str, Any], policy: Any, *, growth: Any = None) -> dict[str, Any]:
        """Its targets at the scenario's load (:func:`kneecap.modeling.answers.predicted_answer`)."""
        return predicted_answer(self, scenario)

    def factor_demand(self) -> tuple[float, float] | None:
        """None: no CPU demand of its own for catalogue factors to adjust."""
        return None

    def with_demand(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float, ratio: float) -> Any:
        """Never called (:meth:`factor_demand` is None)."""
        raise ModelError(f"a {getattr(self, 'family', type(self).__name__)} model has no CPU demand to adjust")

    def inputs_of(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Measured rows as the family predicts them (their own columns: no state to add)."""
        return rows

    def plot_groups(self: Any, rows: pd.DataFrame) -> list[tuple[str, dict[str, Any], pd.DataFrame]]:
        """``(key, configuration, measured rows)`` of each fit plot: one ``lpar`` plot of a tps load, else none.

        The plot of a tps-loaded fit is of the rows with a measured response, on its base
        configuration.
        """
        if self.load_unit != "tps":
            return []
        measured = rows[np.isfinite(pd.to_numeric(rows["resp_ms"], errors="coerce"))]
        return [] if measured.empty else [("lpar", {}, measured)]

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any) -> FitReport:
        """What the train stage logs beside the fit (nothing beyond its own summary by default)."""
        return FitReport()

    def member_errors(self, frame: pd.DataFrame, actual: np.ndarray, target: str) -> dict[str, Any] | None:
        """Per member of a combination of families, its weight and errors; None for one family."""
        return None
