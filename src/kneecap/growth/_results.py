"""A chosen growth model (:class:`GrowthResults`) and the future peak paths it draws (:class:`PeakPaths`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kneecap.growth._candidates import (
    interval_forecast,
    quiet_single_thread,
    trend_design,
)
from kneecap.growth._series import freq_label

#: Future peak paths :meth:`GrowthResults.simulate` draws by default. The Monte Carlo error of a
#: 5 % or 90 % quantile of 2,000 draws is about 0.5-0.7 percentage points of probability.
N_PATHS = 2000
#: The crossing-time quantile reported as the earliest plausible date (``date_earliest``).
EARLIEST_QUANTILE = 0.05
#: The crossing-time quantile reported as "reached by this date with 90 % probability"
#: (``date_p90``); when more than ``1 - REACHED_BY_QUANTILE`` of the paths never reach the
#: threshold within the horizon it is ``None``.
REACHED_BY_QUANTILE = 0.90
#: Rolling-origin MAPE floor (%) before it is squared and inverted into a weight: a noiseless
#: series scores ~1e-14 % and would otherwise overflow.
WEIGHT_MAPE_FLOOR_PCT = 1e-6


@dataclass
class GrowthResults:
    """A chosen growth model for one class's peak throughput, ready to forecast.

    Attributes
    ----------
    method : str
        The chosen candidate (one of :data:`CANDIDATES`).
    competitors : pandas.DataFrame
        One row per candidate considered: ``method``, ``rolling_origin_mape_pct`` (NaN when the
        candidate was not offered or failed), ``chosen`` and ``note`` (why it was not offered,
        why it failed, or how it was scored).
    history : pandas.Series
        The peaks fitted: the input with leading and trailing NaN removed; interior NaN stay NaN
        here (they were interpolated for fitting only).
    alpha : float
        Prediction intervals are (1 - alpha) intervals.
    freq : pandas.DateOffset
        Spacing of ``history`` and of the forecast periods.
    fitted : object
        The statsmodels results of ``method`` fitted on the whole history.
    fitted_values : numpy.ndarray
        The series the final model saw (``history`` with interior gaps interpolated).
    seed : int
        Random state of :meth:`simulate` (and of simulation-based intervals).
    candidate_fits : dict
        The statsmodels results of every candidate that was fitted and scored on the whole
        history (the chosen one among them), by method.
    """

    method: str
    competitors: pd.DataFrame
    history: pd.Series
    alpha: float
    freq: pd.DateOffset
    fitted: Any = field(repr=False)
    fitted_values: np.ndarray = field(repr=False)
    seed: int = 0
    candidate_fits: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def weights(self) -> pd.Series:
        r"""Each candidate's share of the simulated futures, from its rolling-origin error.

        Inverse squared MAPE, normalised:
        :math:`w_m \propto 1 / \mathrm{MAPE}_m^2`. For zero-mean normal errors the mean absolute
        error is :math:`\sigma \sqrt{2/\pi}`, so these are Bates and Granger's inverse-MSE
        combination weights computed from the score :func:`fit_growth` keeps. Candidates that
        were not offered, failed or were not scored get none; when nothing was scored the chosen
        method gets all.

        A trend candidate earns paths by this score alone, whatever its parameter count
        :math:`k` (``linear`` 2; ``ets_trend`` 4 and ``ets_damped`` 5: smoothing parameters,
        damping and initial states). A count rule was considered and is not applied: forecast's
        ``ets()`` does not estimate a damped trend on :math:`n \le k + 4` points [2]_, and
        Akaike's final prediction error scales a mean squared error by :math:`(n + k) / (n - k)`
        [3]_; on six daily peaks the first leaves the straight line alone and the second
        divides the damped trend's weight relative to the line's by 5.5 (11 against 2). Six
        points cannot tell a line from growth that slows or stops, and the paths must keep both
        forms: without the damped trend a knee that a levelling-off load never reaches is dated
        as if the line went on, and with less of it the 90 % date of a slowing load comes too
        early (measured on synthetic truth in ``tests/test_growth.py``). The cost is that a linear load on six
        points is often answered "may not be reached within the horizon" rather than dated.
        The weekly-seasonal candidates are gated by :data:`MIN_SEASONAL_POINTS`, because their
        seasonal states need whole cycles to be estimated at all.

        References
        ----------
        .. [1] J. M. Bates and C. W. J. Granger, "The combination of forecasts", *Operational
           Research Quarterly* 20 (1969) 451-468.
        .. [2] R. J. Hyndman et al., R package ``forecast``, ``ets()`` (``R/ets.R``: "Not
           enough data to use damping" when ``n <= npars + 4``).
           https://github.com/robjhyndman/forecast
        .. [3] H. Akaike, "Fitting autoregressive models for prediction", *Annals of the
           Institute of Statistical Mathematics* 21 (1969) 243-247.
        """
        fits = self.candidate_fits or {self.method: self.fitted}
        return candidate_weights(self.competitors, fits, self.method)

    def simulate(self, horizon: int, *, n_paths: int = N_PATHS,
                 seed: int | None = None) -> PeakPaths:
        r"""Whole future paths of the peak, from every candidate in proportion to its weight.

        ``n_paths`` are allotted to the candidates by :attr:`weights` (largest remainders), so a
        short history that several trend forms fit about equally well does not yield the one
        straight line of the chosen candidate. Each candidate's paths:

        - ``linear``: the OLS posterior predictive (parameters drawn from the coefficient
          covariance with :math:`\sigma^2` drawn from its scaled inverse chi-square, plus
          residual noise), whose per-step quantiles are the t-based ``obs_ci``;
        - ETS: ``ETSResults.simulate(anchor="end")`` (innovations carried through level, trend
          and season), each path with its own noise scale and its own draw of the initial states,
          as for OLS, given the smoothing parameters at their estimates (:func:`simulate_ets`);
        - ``sarimax_weekly``: ``SARIMAXResults.simulate(anchor="end")`` at the estimated
          parameters.

        Parameters
        ----------
        horizon : int
            Future periods per path (>= 1).
        n_paths : int
            Paths drawn (>= 100).
        seed : int, optional
            Random state; default :attr:`seed`. The same seed gives the same paths.

        Returns
        -------
        PeakPaths

        References
        ----------
        .. [1] R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd
           ed., OTexts, 2021, §5.5 (simulated future sample paths), §8.7 (ETS prediction
           intervals). https://otexts.com/fpp3/
        .. [2] A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013, §14.2
           (the posterior predictive of normal linear regression under a flat prior).
        """
        if int(horizon) != horizon or horizon < 1:
            raise ValueError(f"simulate: horizon must be a whole number >= 1, got {horizon!r}")
        if int(n_paths) != n_paths or n_paths < 100:
            raise ValueError(f"simulate: n_paths must be a whole number >= 100, got {n_paths!r}")
        return simulate_paths(self, int(horizon), int(n_paths), self.seed if seed is None else int(seed))

    def forecast(self, horizon: int) -> pd.DataFrame:
        """Forecast the next ``horizon`` periods after the last observed one.

        Parameters
        ----------
        horizon : int
            Number of future periods (>= 1).

        Returns
        -------
        pandas.DataFrame
            Indexed by future period start (``period_start``), columns ``tps`` (point forecast),
            ``tps_lo`` and ``tps_hi`` (the (1 - alpha) prediction interval: OLS ``obs_ci``, the
            closed-form ETS interval, or the SARIMAX forecast interval). All three are clipped
            at 0 because a throughput cannot be negative.
        """
        if int(horizon) != horizon or horizon < 1:
            raise ValueError(f"forecast: horizon must be a whole number >= 1, got {horizon!r}")
        horizon = int(horizon)
        with quiet_single_thread():
            mean, lower, upper = interval_forecast(
                self.method, self.fitted, len(self.fitted_values), horizon, self.alpha, self.seed
            )
        index = pd.date_range(self.history.index[-1] + self.freq, periods=horizon, freq=self.freq,
                              name="period_start")
        return pd.DataFrame(
            {"tps": np.clip(mean, 0.0, None), "tps_lo": np.clip(lower, 0.0, None),
             "tps_hi": np.clip(upper, 0.0, None)},
            index=index,
        )

    def summary(self) -> str:
        """One line: the chosen method, its error against the baseline's, and the history."""
        errors = self.competitors.set_index("method")["rolling_origin_mape_pct"]
        evaluated = int(errors.notna().sum())
        chosen_error = errors.get(self.method, math.nan)
        baseline = errors.get("linear", math.nan)
        observed = self.history.dropna()
        return (
            f"{self.method} chosen from {evaluated} evaluated candidate(s) "
            f"(rolling-origin MAPE {chosen_error:.2f}% vs linear {baseline:.2f}%) on "
            f"{len(observed)} {freq_label(self.freq)} peaks {self.history.index[0]:%Y-%m-%d}.."
            f"{self.history.index[-1]:%Y-%m-%d}, last peak {observed.iloc[-1]:.1f} tps"
        )



@dataclass(frozen=True)
class PeakPaths:
    """Simulated future peaks: whole paths, drawn from every candidate in proportion to its weight.

    Attributes
    ----------
    paths_tps : numpy.ndarray
        ``(n_paths, horizon)`` simulated peak tps, clipped at 0; row ``i`` is one future.
    times : pandas.DatetimeIndex
        The ``horizon`` forecast period starts (the columns of ``paths_tps``).
    methods : numpy.ndarray
        ``(n_paths,)`` the candidate each path was drawn from.
    weights : pandas.Series
        Candidate weights (:attr:`GrowthResults.weights`) the paths were allotted by.
    history : pandas.Series
        The observed peaks (no NaN) the paths continue from.
    alpha : float
        ``date_lo`` / ``date_hi`` of :func:`crossing_date` are the ``alpha / 2`` and
        ``1 - alpha / 2`` quantiles.
    seed : int
        The random state the paths were drawn with; :func:`crossing_date` draws its threshold
        draws from it too.
    """

    paths_tps: np.ndarray = field(repr=False)
    times: pd.DatetimeIndex
    methods: np.ndarray = field(repr=False)
    weights: pd.Series
    history: pd.Series = field(repr=False)
    alpha: float
    seed: int


def candidate_weights(competitors: pd.DataFrame, fitted: Any, chosen: str) -> pd.Series:
    """Inverse squared rolling-origin MAPE of every candidate that has a final fit, summing to 1."""
    errors = competitors.set_index("method")["rolling_origin_mape_pct"].astype(float)
    usable = [m for m in errors.index if m in fitted and math.isfinite(errors[m])]
    if not usable:
        return pd.Series({chosen: 1.0}, name="weight")
    floor = np.maximum(errors[usable].to_numpy(float), WEIGHT_MAPE_FLOOR_PCT)
    raw = 1.0 / floor**2
    return pd.Series(raw / raw.sum(), index=usable, name="weight")


def allot(n_paths: int, weights: np.ndarray) -> np.ndarray:
    """Whole path counts proportional to ``weights`` (largest remainders), summing to ``n_paths``."""
    exact = n_paths * weights
    counts = np.floor(exact).astype(int)
    short = n_paths - int(counts.sum())
    if short > 0:
        counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def simulate_ols(fitted: Any, n_train: int, steps: int, count: int,
                 rng: np.random.Generator) -> np.ndarray:
    r"""OLS trend paths from the posterior predictive under a flat prior.

    :math:`\sigma^2 = s^2 \nu / \chi^2_\nu` (:math:`\nu` residual degrees of freedom),
    :math:`\beta \sim N(\hat\beta, \sigma^2 (X^\top X)^{-1})`, then
    :math:`y_{T+h} = \beta_0 + \beta_1 (T+h) + \varepsilon`, :math:`\varepsilon \sim N(0,
    \sigma^2)`: each step's marginal is the t-based ``obs_ci`` of :meth:`GrowthResults.forecast`.
    """
    df = float(fitted.df_resid)
    sigma2 = float(fitted.scale) * df / rng.chisquare(df, count)
    root = np.linalg.cholesky(np.asarray(fitted.normalized_cov_params, float))
    sigma = np.sqrt(sigma2)[:, None]
    beta = np.asarray(fitted.params, float) + sigma * (rng.standard_normal((count, 2)) @ root.T)
    mean = beta @ trend_design(n_train, steps).T
    return mean + sigma * rng.standard_normal((count, steps))


def simulate_ets(fitted: Any, steps: int, count: int, rng: np.random.Generator) -> np.ndarray:
    r"""``(count, steps)`` additive-ETS paths with the initial states and the noise scale drawn.

    With additive errors and the smoothing parameters held at their estimates, the one-step
    predictions and the forecasts are affine in the initial states :math:`s` (level, trend,
    seasonal): :math:`\hat y = c + A s`, :math:`\hat y_{T+h} = d + J s`, with :math:`A` and
    :math:`J` found exactly by unit steps. So, as for OLS, :math:`\sigma^2 = s^2 \nu /
    \chi^2_\nu` with :math:`\nu = n - \dim s`, :math:`s \sim N(\hat s, \sigma^2
    (A^\top A)^{-1})`, and statsmodels' ``simulate(anchor="end")`` carries innovations
    :math:`N(0, \sigma^2)` through the states. The smoothing parameters are not drawn: on a short
    history they often sit on a bound (:math:`\alpha \to 0`), where the Hessian is no covariance.
    """
    model = fitted.model
    params = np.asarray(fitted.params, float)
    states = [i for i, name in enumerate(model.param_names) if name.startswith("initial_")]
    at_estimate = model.smooth(params)
    one_step = np.asarray(at_estimate.fittedvalues, float)
    ahead = np.asarray(at_estimate.forecast(steps), float)
    design = np.empty((len(one_step), len(states)))
    jacobian = np.empty((steps, len(states)))
    for column, i in enumerate(states):
        moved = params.copy()
        moved[i] += 1.0
        stepped = model.smooth(moved)
        design[:, column] = np.asarray(stepped.fittedvalues, float) - one_step
        jacobian[:, column] = np.asarray(stepped.forecast(steps), float) - ahead
    resid = np.asarray(model.endog, float).ravel() - one_step
    df = max(len(resid) - len(states), 1)
    sigma = np.sqrt(float(resid @ resid) / df * df / rng.chisquare(df, count))
    _, singular, right = np.linalg.svd(design, full_matrices=False)
    keep = singular > singular.max() * 1e-10
    root = right[keep].T / singular[keep]  # (A'A)^-1 = root root'
    shift = (sigma[:, None] * (rng.standard_normal((count, int(keep.sum()))) @ root.T)) @ jacobian.T
    errors = sigma[None, :] * rng.standard_normal((steps, count))
    simulated = fitted.simulate(steps, anchor="end", repetitions=count, random_errors=errors)
    return np.asarray(simulated, float).reshape(steps, count).T + shift


def simulate_candidate(method: str, fitted: Any, n_train: int, steps: int, count: int,
                       rng: np.random.Generator) -> np.ndarray:
    """``(count, steps)`` simulated future peaks from one fitted candidate."""
    if method == "linear":
        return simulate_ols(fitted, n_train, steps, count, rng)
    if method.startswith("ets"):
        return simulate_ets(fitted, steps, count, rng)
    # SARIMAX: statsmodels' state-space simulation from the last filtered state, at the estimates
    simulated = fitted.simulate(steps, anchor="end", repetitions=count, rng=rng)
    return np.asarray(simulated, float).reshape(steps, count).T


def simulate_paths(results: GrowthResults, horizon: int, n_paths: int, seed: int) -> PeakPaths:
    weights = results.weights
    counts = allot(n_paths, weights.to_numpy(float))
    rng = np.random.default_rng(seed)
    blocks, methods = [], []
    n_train = len(results.fitted_values)
    with quiet_single_thread():
        for method, count in zip(weights.index, counts, strict=True):
            if count:
                blocks.append(simulate_candidate(method, results.candidate_fits[method], n_train,
                                                 horizon, int(count), rng))
                methods.extend([method] * int(count))
    times = pd.date_range(results.history.index[-1] + results.freq, periods=horizon,
                          freq=results.freq, name="period_start")
    return PeakPaths(paths_tps=np.clip(np.vstack(blocks), 0.0, None), times=times,
                     methods=np.array(methods), weights=weights, history=results.history.dropna(),
                     alpha=results.alpha, seed=seed)
