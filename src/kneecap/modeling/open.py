"""Open workloads (only arrival rate and response time): M/M/c with fitted servers and demand.

With ``fit_capacity=True`` the capacity is a parameter of its own instead of ``1000 c / S``:
the response's queued part is stretched by the M/M/c factor at utilisation ``tps / capacity``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import optimize

from kneecap.modeling.base import (
    ALPHA,
    column_or,
    mape_pct,
    positive_pairs,
    require_columns,
    to_jsonable,
    widen_beyond_trained,
)
from kneecap.modeling.family import ResultsBase
from kneecap.modeling.queueing import mmc_resp_ms_array

FAMILY = "open_mmc"


def _resp(tps: np.ndarray, delay_ms: float, service_ms: float, n_servers: int,
          capacity_tps: float | None = None) -> np.ndarray:
    """``R0 + R_MMc``; with ``capacity_tps``, ``R0 + S g_c(tps / capacity)`` (:class:`OpenMMcModel`)."""
    x = np.asarray(tps, dtype=float)
    if capacity_tps is None:
        return delay_ms + mmc_resp_ms_array(x, service_ms, n_servers)
    # the stretch factor g_c(rho) is M/M/c's response over its service time at the same rho
    unit_ms = 1000.0 * n_servers / capacity_tps
    return delay_ms + service_ms * mmc_resp_ms_array(x, unit_ms, n_servers) / unit_ms


def server_counts(max_servers: int) -> list[int]:
    """Server counts an open fit tries: every count to 16, then steps of about 25 % to ``max_servers``.

    A many-server queue (CICS TCBs, Liberty threads, a storage array's back end) stays flat until
    close to its capacity and then rises sharply; only a large ``c`` draws that shape. Its
    response changes little between neighbouring large counts, so a geometric grid loses nothing
    a capacity planner would see while keeping the fit to a few dozen candidates.
    """
    counts = list(range(1, min(16, max_servers) + 1))
    c = 16
    while c < max_servers:
        c = min(max(c + 1, int(round(c * 1.25))), max_servers)
        counts.append(c)
    return counts


@dataclass
class OpenMMcModel:
    r"""``resp_ms = R0 + R_MMc(tps; S, c)``, fitted by bounded least squares on log response.

    For each server count ``c`` of :func:`server_counts` (every count to 16, then about 25 % steps
    to ``max_servers``) the delay ``R0`` and service time ``S`` are fitted (``S < 1000 c / max(tps)``
    keeps every training point below saturation); the ``c`` with the smallest residual sum of
    squares wins. Interval data measures what the curve alone cannot
    separate at low utilisation: with ``n_gcp`` constant it is ``c``, and with ``cpu_gcp_pct`` the
    service time is the GCP CPU per transaction (APPL% CP x 10 / TPS, median over the rows), so
    only ``R0`` is fitted. Intervals come from a residual bootstrap with ``c`` (and a measured
    ``S``) held fixed.

    ``fit_capacity=True`` fits the capacity ``X_max`` as a parameter of its own: the response is
    ``R0 + S g_c(tps / X_max)``, the part ``S`` of the unloaded response that queues stretched by
    the M/M/c factor ``g_c`` at utilisation ``rho = tps / X_max`` (M/M/c itself is the case
    ``X_max = 1000 c / S``). In M/M/c the response can rise only by about ``S`` before the pole,
    and ``S`` fixes the capacity: a curve measured at high throughput whose response doubles
    from low load on (0.7 to 1.4 ms at 205,000 tps) has no M/M/c with its capacity well above
    the data, so the least-squares fit puts the pole just past the largest load (1 % above it,
    train error 13 %) to reach the last points. With its own capacity the curve reads the
    capacity from where the response rises, as ``R = S / (1 - rho)`` reads ``rho = 0.5`` where
    it doubles. Where a server pool is shared with work that grows with this workload (an
    LPAR's engines, a pool of threads), its utilisation is this workload's load over the
    pool's capacity for the whole mix, not ``tps S / c``; the form is also the queueing
    multiplier ``R = R0 + S / (1 - U)`` capacity planners apply to a measured utilisation.

    Notes
    -----
    .. math:: R = R_0 + S + \frac{C(c, a)\, S}{c (1 - \rho)}, \quad a = \lambda S,\ \rho = a / c

    and with a fitted capacity

    .. math:: R = R_0 + S\, g_c(\rho), \quad g_c(\rho) = 1 + \frac{C(c, c\rho)}{c (1 - \rho)},
              \ \rho = \lambda / X_{max}

    References
    ----------
    Kleinrock (1975), *Queueing Systems Vol. 1*, §3.5; PDQ ``ErlangR``. Lazowska, E. D. et al.
    (1984), *Quantitative System Performance*, ch. 6 (open models: residence time ``D / (1 - U)`` at a
    measured utilisation).
    """

    max_servers: int = 1024
    n_boot: int = 100
    alpha: float = ALPHA
    seed: int = 0
    fit_capacity: bool = False

    def fit(self, table: pd.DataFrame) -> OpenMMcResults:
        """Fit ``R0`` and ``S`` for each candidate server count, keep the best ``c``, and bootstrap the band."""
        x, r, ok = positive_pairs(table, "tps", "resp_ms", "the open M/M/c model")
        servers = _constant(table, "n_gcp", ok)
        measured_s = _measured_service_ms(table, ok)
        fit = _fit_capacity if self.fit_capacity else _fit
        best: tuple[int, np.ndarray, float] | None = None
        for c in ([int(servers)] if servers else server_counts(self.max_servers)):
            theta, cost = fit(x, r, c, None, measured_s)
            if best is None or cost < best[2] - 1e-12:
                best = (c, theta, cost)
        assert best is not None  # at least one server count is always tried
        c, theta, _ = best
        capacity = float(theta[2]) if self.fit_capacity else None
        fitted = _resp(x, theta[0], theta[1], c, capacity)
        resid = np.log(fitted / r)
        resid = resid - resid.mean()
        rng = np.random.default_rng(self.seed)
        boot = []
        for _ in range(self.n_boot):
            fake = fitted * np.exp(-rng.choice(resid, size=len(resid)))
            boot.append(fit(x, fake, c, theta, measured_s)[0])
        return OpenMMcResults(n_servers=c, delay_ms=float(theta[0]), service_ms=float(theta[1]),
                              boot_params=np.array(boot).reshape(-1, len(theta)), residuals=resid,
                              alpha=self.alpha, seed=self.seed,
                              train_mape={"resp_ms": mape_pct(r, fitted)},
                              n_train=int(ok.sum()), max_tps_trained=float(np.max(x)),
                              service_source="measured" if measured_s is not None else "fitted",
                              train_points={"tps": x.tolist(), "resp_ms": r.tolist()},
                              fitted_capacity_tps=capacity)


def _constant(table: pd.DataFrame, column: str, rows: np.ndarray) -> float | None:
    values = column_or(table, column, np.nan)[rows]
    values = values[np.isfinite(values)]
    constant = len(values) == rows.sum() and len(values) and np.all(values == values[0]) and values[0] >= 1
    return float(values[0]) if constant else None


def _measured_service_ms(table: pd.DataFrame, rows: np.ndarray) -> float | None:
    """GCP CPU per transaction (IBM: APPL% CP x 10 / TPS): the service time of the engine pool."""
    pct = column_or(table, "cpu_gcp_pct", np.nan)[rows]
    tps = column_or(table, "tps", np.nan)[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_tran = pct * 10.0 / tps
    per_tran = per_tran[np.isfinite(per_tran) & (per_tran > 0)]
    return float(np.median(per_tran)) if len(per_tran) else None


def _fit(x: np.ndarray, r: np.ndarray, c: int, start: np.ndarray | None,
         measured_s: float | None = None) -> tuple[np.ndarray, float]:
    s_max = 1000.0 * c / float(np.max(x)) * (1 - 1e-6)
    if measured_s is not None:
        s_fixed = min(measured_s, s_max)

        def fun1(p: np.ndarray) -> np.ndarray:
            return np.log(np.maximum(_resp(x, p[0], s_fixed, c), 1e-12) / r)

        x0 = np.array([start[0] if start is not None else max(float(np.min(r)) - s_fixed, 0.0)])
        res1 = optimize.least_squares(fun1, x0=np.clip(x0, 0.0, max(float(np.max(r)), 1e-6)),
                                      bounds=([0.0], [max(float(np.max(r)), 1e-6)]))
        return np.array([res1.x[0], s_fixed]), float(res1.cost)

    def fun(p: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(_resp(x, p[0], p[1], c), 1e-12) / r)

    x0 = start if start is not None else np.array([float(np.min(r)) * 0.3, min(float(np.min(r)) * 0.5, s_max * 0.5)])
    x0 = np.clip(x0, [0.0, 1e-9], [float(np.max(r)), s_max * 0.999])
    res = optimize.least_squares(fun, x0=x0, bounds=([0.0, 1e-9], [max(float(np.max(r)), 1e-6), s_max]))
    return res.x, float(res.cost)


#: Highest utilisation a fitted capacity may put the largest trained load at (as ``_fit``'s
#: bound on ``S`` keeps every training point below saturation)
MAX_RHO = 1 - 1e-6
#: Lowest: below it the curve is flat and the capacity unbounded by the data
MIN_RHO = 1e-6


def _fit_capacity(x: np.ndarray, r: np.ndarray, c: int, start: np.ndarray | None,
                  measured_s: float | None = None) -> tuple[np.ndarray, float]:
    """``(R0, S, X_max)`` and the least-squares cost of log response, the capacity fitted.

    Fitted as the utilisation of the largest load, ``u = max(tps) / X_max`` in
    ``[MIN_RHO, MAX_RHO]``, with ``0 <= R0, S <= max(resp_ms)`` (``S`` fixed where measured).
    Without ``start`` it starts from the M/M/c optimum (the same curve, so the fit is never
    worse than M/M/c) and from ``u = 0.5`` with ``S`` lifting the response there to the
    measured one; the better fit is kept.
    """
    top = float(np.max(x))
    r_top = max(float(np.max(r)), 1e-6)
    free = [0, 1, 2] if measured_s is None else [0, 2]
    lower = np.array([0.0, 1e-9, MIN_RHO])[free]
    upper = np.array([r_top, r_top, MAX_RHO])[free]

    def full(q: np.ndarray) -> np.ndarray:
        p = np.array([0.0, measured_s if measured_s is not None else 0.0, 0.5])
        p[free] = q
        return p

    def fun(q: np.ndarray) -> np.ndarray:
        p = full(q)
        return np.log(np.maximum(_resp(x, p[0], p[1], c, top / p[2]), 1e-12) / r)

    def solve(p: np.ndarray) -> optimize.OptimizeResult:
        return optimize.least_squares(fun, x0=np.clip(p[free], lower, upper), bounds=(lower, upper))

    def params(q: np.ndarray) -> np.ndarray:
        p = full(q)
        return np.array([p[0], p[1], top / p[2]])

    if start is not None:
        res = solve(np.array([start[0], start[1], top / start[2]]))
        return params(res.x), float(res.cost)
    starts = []
    theta, _ = _fit(x, r, c, None, measured_s)
    starts.append(np.array([theta[0], theta[1], top * theta[1] / (1000.0 * c)]))
    r_low = float(np.min(r))
    # g_c(0.5) - 1: how far the factor has risen at half the capacity (tiny for many servers)
    stretch = float(mmc_resp_ms_array(np.array([0.5 * c]), 1000.0, c)[0]) / 1000.0 - 1.0
    if stretch > 1e-6:
        s_half = measured_s if measured_s is not None else min(max(float(r[np.argmax(x)]) - r_low, 1e-9) / stretch,
                                                              r_low)
        starts.append(np.array([max(r_low - s_half, 0.0), s_half, 0.5]))
    res = min((solve(p) for p in starts), key=lambda fit: fit.cost)
    return params(res.x), float(res.cost)


@dataclass
class OpenMMcResults(ResultsBase):
    """A fitted :class:`OpenMMcModel`: ``c`` servers, delay ``R0`` and service time ``S`` with bootstrap draws."""

    n_servers: int
    delay_ms: float
    service_ms: float
    boot_params: np.ndarray
    residuals: np.ndarray
    alpha: float
    seed: int
    train_mape: dict[str, float]
    n_train: int
    service_source: str = "fitted"
    family: str = FAMILY
    load_unit: ClassVar[str] = "tps"
    targets: tuple[str, ...] = ("resp_ms",)
    #: log-error spread per unit of log load ratio beyond ``max_tps_trained`` (see
    #: :func:`kneecap.modeling.base.widen_beyond_trained`); None: not measured
    extrapolation_spread: dict[str, float] | None = None
    max_tps_trained: float | None = None
    #: the training rows by column (``tps``, ``resp_ms``): what the model can be checked against
    #: (:func:`kneecap.forecasting.band_check`); None in fits stored before they were kept
    train_points: dict[str, list[float]] | None = None
    #: the capacity where fitted as a parameter of its own (:class:`OpenMMcModel`
    #: ``fit_capacity``; the third column of ``boot_params``); None: ``1000 c / S``
    fitted_capacity_tps: float | None = None

    @property
    def n_params(self) -> int:
        """Parameters fitted: the delay, ``S`` unless measured, the capacity if fitted, and ``c``."""
        return 2 + int(self.service_source != "measured") + int(self.fitted_capacity_tps is not None)

    @property
    def max_tps(self) -> float:
        """Throughput at which the ``c`` servers are full: ``1000 c / S``, or the fitted capacity."""
        if self.fitted_capacity_tps is not None:
            return self.fitted_capacity_tps
        return 1000.0 * self.n_servers / self.service_ms

    def capacity_tps(self) -> tuple[float, float, float]:
        """Throughput at which the ``c`` servers are full (:attr:`max_tps`), with its bootstrap band."""
        point = self.max_tps
        if not len(self.boot_params):
            return point, point, point
        draws = (self.boot_params[:, 2] if self.fitted_capacity_tps is not None
                 else 1000.0 * self.n_servers / self.boot_params[:, 1])
        lo, hi = np.quantile(draws, [self.alpha / 2, 1 - self.alpha / 2])
        return point, float(min(lo, point)), float(max(hi, point))

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``resp_ms`` with its band at each ``tps``.

        ``saturated`` (response ``inf``) at or past the fitted capacity, and ``capacity_tps`` with
        ``_lo`` / ``_hi`` on every row, so a load the model cannot carry is said, not dropped.
        """
        require_columns(frame, ("tps",), "M/M/c prediction")
        x = column_or(frame, "tps", np.nan)
        out = pd.DataFrame(index=frame.index)
        out["resp_ms"] = _resp(x, self.delay_ms, self.service_ms, self.n_servers, self.fitted_capacity_tps)
        out["saturated"] = ~np.isfinite(out["resp_ms"].to_numpy())
        out["capacity_tps"], out["capacity_tps_lo"], out["capacity_tps_hi"] = self.capacity_tps()
        rng = np.random.default_rng(self.seed + 1)
        draws = np.array([_resp(x, p[0], p[1], self.n_servers, p[2] if len(p) > 2 else None)
                          for p in self.boot_params])
        if len(draws):
            draws = draws * np.exp(rng.choice(self.residuals, size=draws.shape))
            # a draw whose capacity is below the load has no finite response: past the fitted
            # capacity the band is [lo, inf) while some draws carry the load, [inf, inf] if none does
            out["resp_ms_lo"] = np.minimum(_quantile(draws, self.alpha / 2), out["resp_ms"])
            out["resp_ms_hi"] = np.maximum(_quantile(draws, 1 - self.alpha / 2), out["resp_ms"])
        else:
            out["resp_ms_lo"] = out["resp_ms_hi"] = out["resp_ms"]
        return widen_beyond_trained(out, x, self.max_tps_trained, self.extrapolation_spread)

    def summary(self) -> str:
        """Server count, service time, delay, capacity and training error in one line."""
        fitted = " (fitted)" if self.fitted_capacity_tps is not None else ""
        busy = (f" ({self.max_tps_trained / self.max_tps:.0%} busy at the largest trained load)"
                if self.max_tps_trained else "")
        return (f"Open M/M/c: c = {self.n_servers}, service {self.service_ms:.4g} ms ({self.service_source}), "
                f"delay {self.delay_ms:.4g} ms; "
                f"saturates at {self.max_tps:.0f} tps{fitted}{busy}; "
                f"train MAPE resp {self.train_mape['resp_ms']:.1f} %")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by :meth:`from_dict`)."""
        return to_jsonable({"family": self.family, "n_servers": self.n_servers, "delay_ms": self.delay_ms,
                            "service_ms": self.service_ms, "boot_params": self.boot_params,
                            "residuals": self.residuals, "alpha": self.alpha, "seed": self.seed,
                            "train_mape": self.train_mape, "n_train": self.n_train,
                            "service_source": self.service_source,
                            **({"extrapolation_spread": self.extrapolation_spread,
                                "max_tps_trained": self.max_tps_trained}
                               if self.extrapolation_spread is not None else {}),
                            **({"train_points": self.train_points} if self.train_points is not None else {}),
                            **({"fitted_capacity_tps": self.fitted_capacity_tps}
                               if self.fitted_capacity_tps is not None else {})})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpenMMcResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        width = 2 if d.get("fitted_capacity_tps") is None else 3
        d["boot_params"] = np.array(d["boot_params"], dtype=float).reshape(-1, width)
        d["residuals"] = np.array(d["residuals"], dtype=float)
        return cls(**d)


def _quantile(draws: np.ndarray, q: float) -> np.ndarray:
    """Per column, the ``q`` quantile of draws that may be ``inf`` (saturated).

    ``np.quantile`` interpolates ``inf - inf`` into NaN. In a column with infinite draws the
    quantile is taken without interpolating, outwards (the draw below it for a lower quantile,
    above it for an upper one), so it is ``inf`` where it falls among them; columns of finite
    draws keep the interpolated quantile.
    """
    finite = np.isfinite(draws)
    if finite.all():
        return np.quantile(draws, q, axis=0)
    outwards = np.quantile(np.where(finite, draws, np.inf), q, axis=0, method="lower" if q < 0.5 else "higher")
    with np.errstate(invalid="ignore"):
        inner = np.quantile(np.where(finite, draws, 0.0), q, axis=0)
    return np.where(finite.all(axis=0), inner, outwards)
