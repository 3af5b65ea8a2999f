"""Universal Scalability Law for throughput versus concurrency (load tests without think time)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, stats

from kneecap import config
from kneecap.modeling.base import (
    ALPHA,
    N_BOOT,
    SEED,
    FitReport,
    ModelError,
    column_or,
    mape_pct,
    positive_pairs,
    require_columns,
    to_jsonable,
    widen_beyond_trained,
)
from kneecap.modeling.family import ResultsBase

FAMILY = "usl"
#: How :class:`USLModel` fits: ``nls`` as R's ``usl`` package (absolute errors, fixed start,
#: ``gamma`` fitted); ``field`` as Gunther fits it by hand (``X(1)`` normalisation where
#: measured, the quadratic-regression start, relative errors)
USL_METHODS = config.USL_METHODS
#: Fewer distinct loads than this and a fit is flagged ``few_points``: its band comes from
#: refits to the points perturbed by :data:`FEW_POINTS_NOISE` (:meth:`USLModel.fit`), not from
#: residuals three points cannot measure
FEW_POINTS = 4
#: Relative measurement noise (standard deviation of the log throughput) assumed where the
#: points cannot measure it: the median of the relative residual scatter of the USL fitted to
#: each whole public curve bundled in ``data/backtest`` (Cisco 2.3 %, 32 loads; ray tracer
#: 5.7 %, 11; SPEC SDM91 16 %, 7), which holds measurement noise and the curve's departure
#: from the USL together
FEW_POINTS_NOISE = 0.057


def usl_tps(clients: np.ndarray, alpha: float | np.ndarray, beta: float | np.ndarray,
            gamma: float | np.ndarray) -> np.ndarray:
    r"""Gunther's USL throughput.

    .. math:: X(N) = \frac{\gamma N}{1 + \alpha (N - 1) + \beta N (N - 1)}

    References
    ----------
    Gunther, N. J. (2007), *Guerrilla Capacity Planning*, eq. 4.31.
    """
    n = np.asarray(clients, dtype=float)
    return gamma * n / (1.0 + alpha * (n - 1.0) + beta * n * (n - 1.0))


def naive_usl_params(clients: np.ndarray, tps: np.ndarray) -> np.ndarray | None:
    """The baseline every USL claim is measured against: an unweighted, unbounded ``curve_fit``.

    ``scipy.optimize.curve_fit`` of :func:`usl_tps` from ``alpha = 0.01``, ``beta = 1e-4``,
    ``gamma = X_1 / N_1`` (the first point's throughput per client), as a capacity planner would
    write it in a notebook. ``(alpha, beta, gamma)``, or None when it does not converge.
    """
    n, x = np.asarray(clients, dtype=float), np.asarray(tps, dtype=float)
    order = np.argsort(n)
    try:
        params, _ = optimize.curve_fit(usl_tps, n, x, p0=[0.01, 1e-4, x[order[0]] / n[order[0]]], maxfev=20000)
    except (RuntimeError, ValueError, optimize.OptimizeWarning):
        return None
    return params if np.all(np.isfinite(params)) else None


@dataclass
class USLModel:
    """Bounded non-linear least squares fit of the USL to ``(clients, tps)``.

    Bounds ``0 <= alpha <= 1``, ``0 <= beta <= 1``, ``gamma >= 0``, start ``gamma = max(X/N)``,
    ``alpha = 0.01``, ``beta = 1e-4`` (as R's ``usl`` package). Standard errors from the Jacobian,
    ``sqrt(diag((J'J)^-1) s^2)``. Response time follows from Little's law with the table's think
    time: ``R = N / X - Z``.

    ``coherency=False`` fixes ``beta = 0``: Amdahl's law, the USL's two-parameter special case
    (Gunther, *Guerrilla Capacity Planning*, 2007, ch. 4: with no coherency delay the curve
    rises towards the ceiling ``gamma / alpha`` and never turns down). The coherency term is
    what makes the USL forecast a peak and a retrograde fall the data may never have measured;
    the nested model without it is the parsimonious alternative a combination can weigh against
    it. The parameter vector and covariance keep the USL's three slots, ``beta``'s row and
    column zero.

    ``method="field"`` fits as Gunther does by hand (*Guerrilla Capacity Planning*, ch. 5-6):
    ``gamma`` is the measured ``X(1)`` where the table has one client (its row and column of the
    covariance zero), the start is :func:`_quadratic_start`'s regression of the deviation from
    linearity, and the residuals are relative, ``(X_fit - X) / X``, so every load weighs alike
    (the band is then the relative scatter times the throughput). Held out on the bundled public
    curves it does worse than the default overall (docs/backtests.md).
    """

    alpha: float = ALPHA
    coherency: bool = True
    method: str = config.TrainConfig.usl_method
    n_boot: int = N_BOOT
    seed: int = SEED
    few_points_noise: float = FEW_POINTS_NOISE

    def __post_init__(self) -> None:
        if self.method not in USL_METHODS:
            raise ValueError(f"USL method must be one of {', '.join(USL_METHODS)}, got {self.method!r}")

    def fit(self, table: pd.DataFrame) -> USLResults:
        r"""Fit ``(alpha, beta, gamma)`` (``beta = 0`` without coherency) to the table's ``(clients, tps)`` pairs.

        With fewer than :data:`FEW_POINTS` distinct loads the fit is flagged ``few_points``: three
        points determine the USL exactly (two Amdahl's law), leaving no residual to make a band
        from. Its band is then the spread of ``n_boot`` refits to the points each multiplied by
        :math:`e^{\sigma z}`, :math:`z \sim N(0, 1)`, :math:`\sigma` = ``few_points_noise``
        (the parameter sets consistent with the points within that noise; a parametric bootstrap,
        Efron and Tibshirani 1993, *An Introduction to the Bootstrap*, §6.5), each draw's
        prediction scattered again by the same noise for a new measured point.
        """
        n, x, ok = positive_pairs(table, "clients", "tps", "the USL model",
                                  min_points=3 if self.coherency else 2)
        field = self.method == "field"
        single = np.flatnonzero(n == 1.0)
        # the field's normalisation: with X(1) measured, gamma is that throughput, not a parameter
        gamma_x1 = float(np.mean(x[single])) if field and len(single) else None
        free = [0, 1, 2] if self.coherency else [0, 2]
        if gamma_x1 is not None:
            free = free[:-1]
        start = _quadratic_start(n, x, gamma_x1, self.coherency) if field else np.array([0.01, 1e-4, np.max(x / n)])
        res = _least_squares(n, x, free, gamma_x1, field, start[free])
        params = _full(res.x, free, gamma_x1)
        dof = max(len(x) - len(free), 1)
        s2 = float(np.sum(res.fun**2) / dof)
        cov = np.zeros((3, 3))
        try:
            cov[np.ix_(free, free)] = np.linalg.pinv(res.jac.T @ res.jac) * s2
        except np.linalg.LinAlgError:  # pragma: no cover - pinv does not raise in practice
            cov = np.full((3, 3), np.nan)
        think = float(np.nanmedian(column_or(table, "think_time_ms", 0.0)))
        few = len(np.unique(n)) < FEW_POINTS
        draws = None
        if few:
            if not self.few_points_noise > 0:
                raise ModelError(f"few_points_noise must be > 0, got {self.few_points_noise}")
            rng = np.random.default_rng(self.seed)
            perturbed = x * np.exp(self.few_points_noise * rng.standard_normal((self.n_boot, len(x))))
            draws = np.array([_linearised_fit(n, xb, gamma_x1, self.coherency, field) for xb in perturbed])
            draws = draws.reshape(-1, 3)[np.all(np.isfinite(draws.reshape(-1, 3)), axis=1)]
        return USLResults(params=params, cov=cov, s2=s2, dof=dof, alpha=self.alpha,
                          think_time_ms=think,
                          train_mape={"tps": mape_pct(x, usl_tps(n, *params))}, n_train=int(ok.sum()),
                          max_clients=float(np.max(n)), coherency=self.coherency, relative_errors=field,
                          few_points_draws=draws, few_points_noise=self.few_points_noise if few else None,
                          seed=self.seed,
                          train_points={"clients": n.tolist(), "think_time_ms": [think] * len(n), "tps": x.tolist()})


def _full(q: np.ndarray, free: list[int], gamma_x1: float | None) -> np.ndarray:
    """``(alpha, beta, gamma)`` from the free parameters (the rest zero, or ``gamma = X(1)``)."""
    p = np.zeros(3)
    p[free] = q
    if gamma_x1 is not None:
        p[2] = gamma_x1
    return p


def _least_squares(n: np.ndarray, x: np.ndarray, free: list[int], gamma_x1: float | None, field: bool,
                   x0: np.ndarray) -> optimize.OptimizeResult:
    """The bounded fit of the free parameters: ``0 <= alpha, beta <= 1``, ``gamma >= 0``."""

    def fun(q: np.ndarray) -> np.ndarray:
        # relative errors in the field's fit: every load counts alike, not the largest throughputs
        return (usl_tps(n, *_full(q, free, gamma_x1)) - x) / x if field else usl_tps(n, *_full(q, free, gamma_x1)) - x

    lower, upper = np.zeros(3)[free], np.array([1.0, 1.0, np.inf])[free]
    return optimize.least_squares(fun, x0=np.clip(x0, lower, upper), bounds=(lower, upper), x_scale="jac")


def _linearised_fit(n: np.ndarray, x: np.ndarray, gamma_x1: float | None, coherency: bool,
                    relative: bool) -> np.ndarray:
    r"""``(alpha, beta, gamma)`` by non-negative least squares on the USL's linear form.

    .. math:: N / X = a + b (N - 1) + c N (N - 1), \quad a = 1 / \gamma,\ b = \alpha / \gamma,
              \ c = \beta / \gamma

    (``c = 0`` without coherency, ``a`` fixed by a measured ``X(1)`` = ``gamma_x1``). Each row is
    weighted so its residual is, to first order, the fit's own: relative, ``(N/X)^{-1}``, or
    absolute in ``X``, ``X^2 / N``. Where the points determine the curve exactly within the
    bounds this is the same interpolant as the non-linear fit, found in microseconds; elsewhere the
    non-negativity keeps ``alpha`` and ``beta`` in range (``alpha``, ``beta`` then clipped to 1).
    NaNs when ``gamma`` is not finite. What :meth:`USLModel.fit` refits its few-point draws with.
    """
    y = n / x
    cols = [n - 1.0] + ([n * (n - 1.0)] if coherency else [])
    if gamma_x1 is None:
        cols.insert(0, np.ones_like(n))
    else:
        y = y - 1.0 / gamma_x1
    weight = x / n if relative else x**2 / n
    theta, _ = optimize.nnls(np.column_stack(cols) * weight[:, None], y * weight)
    a = 1.0 / gamma_x1 if gamma_x1 is not None else theta[0]
    bc = theta[1:] if gamma_x1 is None else theta
    if not a > 0:
        return np.full(3, np.nan)
    gamma = 1.0 / a
    alpha = min(bc[0] * gamma, 1.0)
    beta = min(bc[1] * gamma, 1.0) if coherency else 0.0
    return np.array([alpha, beta, gamma])


def _quadratic_start(n: np.ndarray, x: np.ndarray, gamma_x1: float | None, coherency: bool) -> np.ndarray:
    r"""Gunther's start for the USL: the quadratic regression of the deviation from linearity.

    With the relative capacity :math:`C(N) = X(N) / \gamma` (``gamma`` the measured ``X(1)``, else
    the largest ``X / N``), :math:`N / C(N) - 1 = \beta (N - 1)^2 + (\alpha + \beta)(N - 1)`: a
    quadratic through the origin in :math:`N - 1`, fitted by least squares; ``alpha`` and ``beta``
    clipped to ``[0, 1]`` (``beta = 0`` without coherency: the slope alone). Returns
    ``(alpha, beta, gamma)``.

    References
    ----------
    Gunther, N. J. (2007), *Guerrilla Capacity Planning*, ch. 5-6 (the transformation and the
    regression through the origin); R ``usl`` before 2.0.0, whose default method it was.
    """
    gamma = gamma_x1 if gamma_x1 is not None else float(np.max(x / n))
    lin = n - 1.0
    dev = n * gamma / x - 1.0
    keep = lin > 0
    if coherency and keep.sum() >= 2:
        (b, a_plus_b), *_ = np.linalg.lstsq(np.c_[lin[keep] ** 2, lin[keep]], dev[keep], rcond=None)
    elif keep.any():
        b, a_plus_b = 0.0, float(np.sum(lin[keep] * dev[keep]) / np.sum(lin[keep] ** 2))
    else:
        b, a_plus_b = 1e-4, 0.01 + 1e-4
    beta = float(np.clip(b, 0.0, 1.0))
    return np.array([float(np.clip(a_plus_b - b, 0.0, 1.0)), beta, gamma])


@dataclass
class USLResults(ResultsBase):
    """A fitted :class:`USLModel`: ``params`` ``(alpha, beta, gamma)`` with covariance; ``alpha`` is the band level."""

    params: np.ndarray  # alpha (contention), beta (coherency), gamma (tps at one client)
    cov: np.ndarray
    s2: float
    dof: int
    alpha: float
    think_time_ms: float
    train_mape: dict[str, float]
    n_train: int
    family: str = FAMILY
    load_unit: ClassVar[str] = "clients"
    targets: tuple[str, ...] = ("tps", "resp_ms")
    #: log-error spread per unit of log load ratio beyond ``max_clients`` (see
    #: :func:`kneecap.modeling.base.widen_beyond_trained`); None: not measured
    extrapolation_spread: dict[str, float] | None = None
    max_clients: float | None = None
    #: False: fitted with ``beta = 0`` (Amdahl's law, :class:`USLModel` ``coherency=False``)
    coherency: bool = True
    #: True: ``s2`` is the variance of relative errors (``method="field"``), scaled by the mean
    relative_errors: bool = False
    #: fewer than :data:`FEW_POINTS` loads: ``(alpha, beta, gamma)`` refitted to the points
    #: perturbed by the relative noise ``few_points_noise`` (:meth:`USLModel.fit`); None otherwise
    few_points_draws: np.ndarray | None = None
    few_points_noise: float | None = None
    seed: int = SEED
    #: the training rows (``clients``, ``think_time_ms``, measured ``tps``): what the band can be
    #: checked against (:func:`kneecap.forecasting.band_check`); None in fits stored before
    train_points: dict[str, list[float]] | None = None

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any = None) -> FitReport:
        """How the USL was fitted (``usl_method``), logged beside it."""
        return FitReport(params={"usl_method": getattr(config, "usl_method", None)})

    @property
    def flags(self) -> tuple[str, ...]:
        """``("few_points",)`` when fitted to fewer than :data:`FEW_POINTS` loads, else empty."""
        return ("few_points",) if self.few_points_draws is not None else ()

    @property
    def peak_clients(self) -> float:
        """``N* = sqrt((1 - alpha) / beta)`` (infinite when ``beta = 0``)."""
        a, b, _ = self.params
        return math.sqrt((1.0 - a) / b) if b > 0 else math.inf

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``tps`` and ``resp_ms`` (Little's law) with delta-method prediction intervals."""
        require_columns(frame, ("clients",), "USL prediction")
        n = column_or(frame, "clients", np.nan)
        think = column_or(frame, "think_time_ms", self.think_time_ms)
        mean = usl_tps(n, *self.params)
        eps = 1e-7
        grad = np.empty((len(n), 3))
        for i in range(3):
            step = np.array(self.params, dtype=float)
            h = eps * max(abs(step[i]), 1e-6)
            step[i] += h
            grad[:, i] = (usl_tps(n, *step) - mean) / h
        noise = self.s2 * mean**2 if self.relative_errors else self.s2
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad, self.cov, grad) + noise, 0.0))
        t = stats.t.ppf(1 - self.alpha / 2, self.dof)
        out = pd.DataFrame(index=frame.index)
        out["tps"] = mean
        out["tps_lo"] = np.maximum(mean - t * se, 0.0)
        out["tps_hi"] = mean + t * se
        if self.few_points_draws is not None and len(self.few_points_draws):
            # few points: the refits' spread, each scattered by the noise a new measurement has
            d = self.few_points_draws
            sigma = float(self.few_points_noise or 0.0)
            draws = usl_tps(n[None, :], d[:, :1], d[:, 1:2], d[:, 2:3])
            rng = np.random.default_rng(self.seed + 1)
            draws = draws * np.exp(sigma * rng.standard_normal(draws.shape))
            with np.errstate(invalid="ignore"):
                lo, hi = np.quantile(draws, [self.alpha / 2, 1 - self.alpha / 2], axis=0)
            out["tps_lo"] = np.fmin(np.fmin(out["tps_lo"].to_numpy(), lo), mean)
            out["tps_hi"] = np.fmax(np.fmax(out["tps_hi"].to_numpy(), hi), mean)
        with np.errstate(divide="ignore"):
            out["resp_ms"] = n / mean * 1000.0 - think
            out["resp_ms_lo"] = np.maximum(n / out["tps_hi"] * 1000.0 - think, 0.0)
            out["resp_ms_hi"] = np.where(out["tps_lo"] > 0, n / out["tps_lo"] * 1000.0 - think, np.inf)
        return widen_beyond_trained(out, n, self.max_clients, self.extrapolation_spread)

    def summary(self) -> str:
        """Contention, coherency, per-client throughput, peak and training error in one line."""
        a, b, g = self.params
        if not self.coherency:
            return (f"Amdahl (USL with beta = 0): alpha {a:.4g} (contention), gamma {g:.4g} tps/client; "
                    f"ceiling {g / a if a > 0 else math.inf:.4g} tps; train MAPE tps {self.train_mape['tps']:.1f} %"
                    + self._few_points_note())
        return (f"USL: alpha {a:.4g} (contention), beta {b:.4g} (coherency), gamma {g:.4g} tps/client; "
                f"peak at N* = {self.peak_clients:.1f} clients; train MAPE tps {self.train_mape['tps']:.1f} %"
                + self._few_points_note())

    def _few_points_note(self) -> str:
        if self.few_points_draws is None:
            return ""
        return (f"; few points ({self.n_train}): band from refits to the points within "
                f"{100 * float(self.few_points_noise or 0.0):.1f} % noise")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by :meth:`from_dict`)."""
        return to_jsonable({"family": self.family, "params": self.params, "cov": self.cov,
                            "s2": self.s2, "dof": self.dof, "alpha": self.alpha,
                            "think_time_ms": self.think_time_ms, "train_mape": self.train_mape,
                            "n_train": self.n_train,
                            **({"extrapolation_spread": self.extrapolation_spread, "max_clients": self.max_clients}
                               if self.extrapolation_spread is not None else {}),
                            **({"coherency": False} if not self.coherency else {}),
                            **({"relative_errors": True} if self.relative_errors else {}),
                            **({"few_points_draws": self.few_points_draws, "few_points_noise": self.few_points_noise,
                                "seed": self.seed} if self.few_points_draws is not None else {}),
                            **({"train_points": self.train_points} if self.train_points is not None else {})})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> USLResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        d["params"] = np.array(d["params"], dtype=float)
        d["cov"] = np.array(d["cov"], dtype=float)
        if d.get("few_points_draws") is not None:
            d["few_points_draws"] = np.array(d["few_points_draws"], dtype=float).reshape(-1, 3)
        return cls(**d)
