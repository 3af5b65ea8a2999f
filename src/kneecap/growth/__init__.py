r"""When, at our growth rate, a class's peak load reaches its knee.

Pure functions over a history of RMF interval throughput (no file I/O, no tracking, no UI):

1. :func:`peak_series` turns interval rows (``interval_start_at``, ``tps``) into one peak value per
   calendar day or week;
2. :func:`fit_growth` fits competing trend models to those peaks and keeps the one with the lowest
   rolling-origin (time-series cross-validation) mean absolute percentage error;
3. :meth:`GrowthResults.simulate` draws whole future paths of the peak from every candidate,
   in proportion to its rolling-origin weight, and :func:`crossing_date` reads off the
   distribution of when they reach a threshold such as a fitted knee's throughput (itself
   uncertain); :func:`round_to_periods` puts those dates on period starts.

Candidates (all from statsmodels):

``linear``
    OLS trend :math:`y_t = \beta_0 + \beta_1 t + \varepsilon_t`, the naive baseline, always
    present.
``ets_trend``
    ETS(A,A,N), Holt's linear trend with additive errors.
``ets_damped``
    ETS(A,Ad,N), Gardner-McKenzie damped trend with additive errors.
``ets_weekly``
    ETS(A,A,A), additive Holt-Winters with period 7 (daily series only).
``sarimax_weekly``
    SARIMA(0,1,1)(0,1,1)\ :sub:`7`, the "airline" model with period 7 (daily series only).

References
----------
.. [1] R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd ed.,
   OTexts, 2021. §5.10 (time-series cross-validation), ch. 7 (linear trend regression), ch. 8
   (exponential smoothing: §8.2 trend methods, §8.3 Holt-Winters, §8.5 ETS state space models,
   §8.7 prediction intervals), §9.9 (seasonal ARIMA). https://otexts.com/fpp3/
.. [2] statsmodels 0.15 documentation: ``statsmodels.tsa.exponential_smoothing.ets.ETSModel``,
   ``statsmodels.tsa.statespace.sarimax.SARIMAX``, ``statsmodels.regression.linear_model.OLS``
   (``get_prediction(...).summary_frame``). https://www.statsmodels.org/
"""

# the peaks, the candidates, the choice, the paths and the crossing live in private modules; these
# are the names this package offers
from kneecap.growth._candidates import (
    CANDIDATES,
    CV_STEPS,
    MAX_ORIGINS,
    MIN_POINTS,
    MIN_SEASONAL_POINTS,
    SEASONAL_CANDIDATES,
    WEEKLY_PERIOD,
)
from kneecap.growth._crossing import crossing_date, round_to_periods
from kneecap.growth._fit import fit_growth
from kneecap.growth._results import EARLIEST_QUANTILE, N_PATHS, REACHED_BY_QUANTILE, GrowthResults, PeakPaths
from kneecap.growth._series import peak_series

__all__ = [
    "CANDIDATES",
    "CV_STEPS",
    "EARLIEST_QUANTILE",
    "MAX_ORIGINS",
    "MIN_POINTS",
    "MIN_SEASONAL_POINTS",
    "N_PATHS",
    "REACHED_BY_QUANTILE",
    "SEASONAL_CANDIDATES",
    "WEEKLY_PERIOD",
    "GrowthResults",
    "PeakPaths",
    "crossing_date",
    "fit_growth",
    "peak_series",
    "round_to_periods",
]
