"""Choosing the growth model: every candidate scored at rolling origins, the least error kept."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from kneecap.growth._candidates import (
    CANDIDATES,
    CV_STEPS,
    MAX_ORIGINS,
    MIN_POINTS,
    MIN_SEASONAL_POINTS,
    MIN_TRAIN,
    MIN_TRAIN_SEASONAL,
    SEASONAL_CANDIDATES,
    TIE_RELATIVE,
    did_not_converge,
    fit_candidate,
    point_forecast,
    quiet_single_thread,
)
from kneecap.growth._results import GrowthResults
from kneecap.growth._series import freq_label, is_daily, regular_freq


def rolling_origins(n: int, min_train: int) -> list[int]:
    """Training-window lengths at which to score.

    At most :data:`MAX_ORIGINS`, evenly spread, always including the latest (n - 1, which scores one
    step).
    """
    if n <= min_train:
        return []
    spread = np.linspace(min_train, n - 1, num=min(MAX_ORIGINS, n - min_train))
    return sorted({int(round(origin)) for origin in spread})


def rolling_origin_mape(method: str, y: np.ndarray, observed: np.ndarray,
                        origins: list[int]) -> tuple[float, int]:
    """Pooled MAPE (%) over every scored forecast and the number of errors pooled.

    Raises whatever the candidate's fit raises; a non-finite forecast raises FloatingPointError.
    """
    abs_pct_errors: list[np.ndarray] = []
    for origin in origins:
        steps = min(CV_STEPS, len(y) - origin)
        fitted = fit_candidate(method, y[:origin])
        forecast = point_forecast(method, fitted, origin, steps)
        if not np.all(np.isfinite(forecast)):
            raise FloatingPointError(f"non-finite forecast from origin {origin}")
        actual = y[origin:origin + steps]
        # Interpolated gaps are not data, and an APE is undefined at a zero actual.
        scored = observed[origin:origin + steps] & (actual > 0)
        abs_pct_errors.append(np.abs(actual[scored] - forecast[scored]) / actual[scored])
    pooled = np.concatenate(abs_pct_errors) if abs_pct_errors else np.array([])
    if pooled.size == 0:
        return math.nan, 0
    return 100.0 * float(pooled.mean()), int(pooled.size)


def fit_growth(
    peaks: pd.Series,
    *,
    alpha: float = 0.05,
    candidates: tuple[str, ...] | None = None,
    seed: int = 0,
) -> GrowthResults:
    r"""Fit competing growth models to a peak series and keep the best forecaster.

    Candidates (see the module docstring; ``h`` is the look-ahead, :math:`\ell` level,
    :math:`b` trend, :math:`s` season, :math:`m = 7`):

    - ``linear``: OLS of peak tps on the period number, :math:`\hat y_{T+h} = \hat\beta_0 +
      \hat\beta_1 (T+h)`; always fitted, whatever ``candidates`` says, as the naive baseline.
    - ``ets_trend``, Holt's linear trend (FPP3 §8.2): :math:`\hat y_{t+h|t} = \ell_t + h b_t`,
      :math:`\ell_t = \alpha y_t + (1-\alpha)(\ell_{t-1} + b_{t-1})`,
      :math:`b_t = \beta^*(\ell_t - \ell_{t-1}) + (1-\beta^*) b_{t-1}`.
    - ``ets_damped``, damped trend (FPP3 §8.2): :math:`\hat y_{t+h|t} = \ell_t +
      (\phi + \phi^2 + \dots + \phi^h) b_t`, :math:`\ell_t = \alpha y_t + (1-\alpha)(\ell_{t-1}
      + \phi b_{t-1})`, :math:`b_t = \beta^*(\ell_t - \ell_{t-1}) + (1-\beta^*)\phi b_{t-1}`;
      growth levels off instead of continuing for ever.
    - ``ets_weekly``, additive Holt-Winters (FPP3 §8.3): :math:`\hat y_{t+h|t} = \ell_t + h b_t
      + s_{t+h-m(k+1)}`.
    - ``sarimax_weekly``: :math:`(1-B)(1-B^7) y_t = (1+\theta B)(1+\Theta B^7)\varepsilon_t`
      (FPP3 §9.9).

    The ETS models are statsmodels ``ETSModel`` with additive errors, fitted by maximum
    likelihood with estimated initial states. The two weekly candidates are offered only on a
    daily series of at least 21 periods (three full weeks); otherwise they are listed in
    ``competitors`` as not offered.

    Selection is by rolling-origin time-series cross-validation (FPP3 §5.10) with an expanding
    window and up to :data:`CV_STEPS`-step-ahead forecasts: at each origin ``k`` every candidate
    is refitted on periods ``0..k-1`` and forecasts periods ``k..k+6`` (fewer near the end); the
    absolute percentage errors of all those forecasts are pooled into one MAPE,
    :math:`100 \cdot \mathrm{mean}\,|y - \hat y| / |y|`. Origins start after 3 periods (14 when a
    weekly candidate is offered, so every candidate is scored on the same forecasts) and are
    thinned to at most :data:`MAX_ORIGINS`, evenly spread and always including the latest. The
    lowest MAPE wins; a tie (within 0.01 % of the best MAPE, i.e. optimiser noise) goes to the
    simpler candidate (earlier in :data:`CANDIDATES`).

    A candidate whose final fit raises, does not converge, or whose refits raise or forecast
    non-finite values is dropped and the reason is recorded in ``competitors.note``.

    Interior missing periods (NaN, e.g. from :func:`peak_series`) are linearly interpolated for
    fitting but never scored; leading and trailing NaN are dropped.

    Parameters
    ----------
    peaks : pandas.Series
        Peak tps on a regular daily or weekly :class:`pandas.DatetimeIndex` of period starts,
        as :func:`peak_series` returns.
    alpha : float
        Forecasts carry (1 - alpha) prediction intervals.
    candidates : tuple of str, optional
        Subset of :data:`CANDIDATES` to consider (default: all). ``linear`` is always added.
    seed : int
        Random state of :meth:`GrowthResults.simulate`. Every candidate's forecast interval here
        is closed-form and does not depend on it.

    Returns
    -------
    GrowthResults

    Raises
    ------
    ValueError
        Fewer than 4 observed periods, an irregular index, an unknown candidate or a bad alpha.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"fit_growth: alpha must be in (0, 1), got {alpha!r}")
    requested = CANDIDATES if candidates is None else tuple(dict.fromkeys(candidates))
    unknown = [name for name in requested if name not in CANDIDATES]
    if unknown:
        raise ValueError(
            f"fit_growth: unknown candidate(s) {unknown}; known: {', '.join(CANDIDATES)}"
        )
    if "linear" not in requested:
        requested = ("linear", *requested)
    requested = tuple(name for name in CANDIDATES if name in requested)

    if not isinstance(peaks.index, pd.DatetimeIndex):
        raise ValueError(
            "fit_growth: peaks need a DatetimeIndex of period starts (see peak_series)"
        )
    values = pd.to_numeric(peaks, errors="coerce").astype(float)
    n_observed = int(values.notna().sum())
    if n_observed < MIN_POINTS:
        raise ValueError(
            f"fit_growth needs at least {MIN_POINTS} observed periods to fit a trend, "
            f"got {n_observed}"
        )
    values = values[~values.index.duplicated(keep="last")].sort_index()
    freq = regular_freq(values.index)
    first, last = values.first_valid_index(), values.last_valid_index()
    regular_index = pd.date_range(first, last, freq=freq, name=peaks.index.name or "period_start")
    if not values.index[values.notna().to_numpy()].isin(regular_index).all():
        raise ValueError("fit_growth: peaks' dates do not fall on one regular grid of periods")
    history = values.reindex(regular_index)
    history.name = peaks.name or "peak_tps"
    observed = history.notna().to_numpy()
    y = history.interpolate(method="linear").to_numpy(float)
    n = len(y)

    seasonal_ok = is_daily(freq) and n >= MIN_SEASONAL_POINTS
    offered = [name for name in requested if seasonal_ok or name not in SEASONAL_CANDIDATES]
    any_seasonal = any(name in SEASONAL_CANDIDATES for name in offered)
    min_train = MIN_TRAIN_SEASONAL if any_seasonal else MIN_TRAIN
    origins = rolling_origins(n, min_train)

    rows: list[dict[str, Any]] = []
    final_fits: dict[str, Any] = {}
    with quiet_single_thread():
        for method in requested:
            row: dict[str, Any] = {"method": method, "rolling_origin_mape_pct": math.nan,
                                   "chosen": False, "note": ""}
            rows.append(row)
            if method not in offered:
                row["note"] = (f"not offered: weekly seasonality needs a daily series of at least "
                               f"{MIN_SEASONAL_POINTS} periods (3 full weeks); have {n} "
                               f"{freq_label(freq)} periods")
                continue
            try:
                final = fit_candidate(method, y)
                if did_not_converge(final):
                    row["note"] = "dropped: optimiser did not converge on the full history"
                    continue
                mape_pct, n_errors = rolling_origin_mape(method, y, observed, origins)
            except Exception as exc:  # noqa: BLE001
                if method == "linear":
                    raise  # the baseline failing means the data, not the model, is broken
                # statsmodels' optimisers and linear algebra raise many exception types
                # (ValueError, LinAlgError, IndexError, ...); any of them only drops a candidate.
                row["note"] = f"dropped: {type(exc).__name__}: {exc}"
                continue
            final_fits[method] = final
            row["rolling_origin_mape_pct"] = mape_pct
            row["note"] = (f"expanding window, {len(origins)} origin(s), "
                           f"up to {CV_STEPS}-step-ahead, {n_errors} scored forecast(s)")

    competitors = pd.DataFrame(rows,
                               columns=["method", "rolling_origin_mape_pct", "chosen", "note"])
    scored = competitors[competitors["method"].isin(list(final_fits))]
    finite = scored[np.isfinite(scored["rolling_origin_mape_pct"].astype(float))]
    if finite.empty:
        method = "linear"
    else:
        # Rows are in CANDIDATES order, so the first within noise of the best is the simplest
        # (a noiseless line scores ~1e-14 % for several models).
        best_pct = float(finite["rolling_origin_mape_pct"].min())
        near_best = finite["rolling_origin_mape_pct"] <= best_pct * (1 + TIE_RELATIVE) + 1e-9
        method = str(finite.loc[near_best, "method"].iloc[0])
    competitors.loc[competitors["method"] == method, "chosen"] = True
    if finite.empty:
        competitors.loc[competitors["method"] == method, "note"] += (
            "; chosen by default (nothing scored)"
        )

    return GrowthResults(method=method, competitors=competitors, history=history,
                         alpha=float(alpha), freq=freq, fitted=final_fits[method],
                         fitted_values=y, seed=seed, candidate_fits=final_fits)
