"""The trend models :func:`kneecap.growth.fit_growth` chooses among: fitted, forecast, with their intervals."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

#: Every candidate :func:`fit_growth` knows, simplest first (ties in error go to the earlier one).
CANDIDATES = ("linear", "ets_trend", "ets_damped", "ets_weekly", "sarimax_weekly")
#: Candidates that model a weekly cycle; offered only on daily series of at least
#: :data:`MIN_SEASONAL_POINTS` periods.
SEASONAL_CANDIDATES = frozenset({"ets_weekly", "sarimax_weekly"})
#: Days in the weekly cycle of a daily series.
WEEKLY_PERIOD = 7
#: Fewest periods :func:`fit_growth` accepts (a trend plus a residual spread needs more than 3).
MIN_POINTS = 4
#: Fewest daily periods (three full weeks) before a weekly-seasonal candidate is offered.
MIN_SEASONAL_POINTS = 3 * WEEKLY_PERIOD
#: Longest look-ahead, in periods, scored at each rolling origin (one week of daily peaks).
CV_STEPS = 7
#: Most rolling origins scored per candidate; each origin is a refit, and refits dominate run time.
MAX_ORIGINS = 8
#: Shortest training window at a rolling origin: 3 for the trend-only candidates (OLS needs one
#: residual degree of freedom), two full cycles for the seasonal ones (statsmodels' heuristic
#: start values for the seasonal states need them).
MIN_TRAIN = 3
MIN_TRAIN_SEASONAL = 2 * WEEKLY_PERIOD

#: MAPEs within this fraction of the best (plus 1e-9 points) are ties, resolved towards the
#: simpler model: on a short, near-straight history ETS settles on the OLS line and wins by
#: optimiser noise, while OLS' t-based interval is the more honest about parameter uncertainty.
TIE_RELATIVE = 1e-4



@contextlib.contextmanager
def quiet_single_thread() -> Iterator[None]:
    """Silence statsmodels' fit chatter and keep BLAS on one thread, for this block only.

    The matrices in these fits are tiny; on a shared two-core machine OpenBLAS' thread hand-off
    made one SARIMAX fit take seconds instead of a tenth of one.
    """
    from statsmodels.tools.sm_exceptions import (
        ConvergenceWarning,
        EstimationWarning,
        ValueWarning,
    )

    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        for category in (ConvergenceWarning, EstimationWarning, ValueWarning):
            warnings.simplefilter("ignore", category)
        # Optimisers probing extreme smoothing parameters overflow harmlessly on the way.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"statsmodels\.")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"scipy\.")
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        yield


def fit_candidate(method: str, y: np.ndarray) -> Any:
    """Fit one candidate to ``y`` (positions 0..n-1); return the statsmodels results object."""
    if method == "linear":
        # Not statsmodels.api: importing that pulls in every model and costs seconds.
        from statsmodels.regression.linear_model import OLS

        return OLS(y, trend_design(0, len(y))).fit()
    if method in ("ets_trend", "ets_damped", "ets_weekly"):
        from statsmodels.tsa.exponential_smoothing.ets import ETSModel

        seasonal = method == "ets_weekly"
        # A RangeIndex Series, not an ndarray: ETS get_prediction in statsmodels 0.15 needs the
        # predicted mean to carry an index.
        model = ETSModel(
            pd.Series(y),
            error="add",
            trend="add",
            damped_trend=method == "ets_damped",
            seasonal="add" if seasonal else None,
            seasonal_periods=WEEKLY_PERIOD if seasonal else None,
        )
        return model.fit(disp=False)
    if method == "sarimax_weekly":
        from statsmodels.tsa.statespace.sarimax import SARIMAX

        model = SARIMAX(y, order=(0, 1, 1), seasonal_order=(0, 1, 1, WEEKLY_PERIOD))
        return model.fit(disp=False)
    raise ValueError(f"unknown growth method {method!r}; known: {', '.join(CANDIDATES)}")


def trend_design(first: int, count: int) -> np.ndarray:
    """OLS design rows ``[1, t]`` for positions first .. first+count-1."""
    t = np.arange(first, first + count, dtype=float)
    return np.column_stack([np.ones_like(t), t])


def point_forecast(method: str, fitted: Any, n_train: int, steps: int) -> np.ndarray:
    """Point forecasts for positions n_train .. n_train+steps-1."""
    if method == "linear":
        return np.asarray(fitted.predict(trend_design(n_train, steps)), dtype=float)
    return np.asarray(fitted.forecast(steps), dtype=float)


def interval_forecast(
    method: str, fitted: Any, n_train: int, steps: int, alpha: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point forecast and (1 - alpha) prediction interval for the next ``steps`` positions."""
    if method == "linear":
        frame = fitted.get_prediction(trend_design(n_train, steps)).summary_frame(alpha=alpha)
        return (frame["mean"].to_numpy(float), frame["obs_ci_lower"].to_numpy(float),
                frame["obs_ci_upper"].to_numpy(float))
    if method.startswith("ets"):
        # Additive-error ETS has closed-form forecast variances (FPP3 §8.7), which statsmodels
        # uses ("exact"); random_state only matters if it ever falls back to simulation.
        frame = fitted.get_prediction(start=n_train, end=n_train + steps - 1,
                                      random_state=seed).summary_frame(alpha=alpha)
        return (frame["mean"].to_numpy(float), frame["pi_lower"].to_numpy(float),
                frame["pi_upper"].to_numpy(float))
    # SARIMAX forecast intervals include the observation noise, so they are prediction intervals.
    frame = fitted.get_forecast(steps).summary_frame(alpha=alpha)
    return (frame["mean"].to_numpy(float), frame["mean_ci_lower"].to_numpy(float),
            frame["mean_ci_upper"].to_numpy(float))


def did_not_converge(fitted: Any) -> bool:
    retvals = getattr(fitted, "mle_retvals", None)
    return isinstance(retvals, dict) and retvals.get("converged") is False
