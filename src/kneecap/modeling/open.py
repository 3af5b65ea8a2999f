"""Open workloads (only arrival rate and response time): M/M/c with fitted servers and demand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize

from kneecap.modeling.base import (
    column_or,
    mape_pct,
    positive_pairs,
    require_columns,
    to_jsonable,
    widen_beyond_trained,
)
from kneecap.modeling.queueing import mmc_resp_ms_array

FAMILY = "open_mmc"


def _resp(tps: np.ndarray, delay_ms: float, service_ms: float, n_servers: int) -> np.ndarray:
    return delay_ms + mmc_resp_ms_array(np.asarray(tps, dtype=float), service_ms, n_servers)


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

    Notes
    -----
    .. math:: R = R_0 + S + \frac{C(c, a)\, S}{c (1 - \rho)}, \quad a = \lambda S,\ \rho = a / c

    References
    ----------
    Kleinrock (1975), *Queueing Systems Vol. 1*, §3.5; PDQ ``ErlangR``.
    """

    max_servers: int = 1024
    n_boot: int = 100
    alpha: float = 0.05
    seed: int = 0

    def fit(self, table: pd.DataFrame) -> OpenMMcResults:
        """Fit ``R0`` and ``S`` for each candidate server count, keep the best ``c``, and bootstrap the band."""
        x, r, ok = positive_pairs(table, "tps", "resp_ms", "the open M/M/c model")
        servers = _constant(table, "n_gcp", ok)
        measured_s = _measured_service_ms(table, ok)
        best: tuple[int, np.ndarray, float] | None = None
        for c in ([int(servers)] if servers else server_counts(self.max_servers)):
            theta, cost = _fit(x, r, c, None, measured_s)
            if best is None or cost < best[2] - 1e-12:
                best = (c, theta, cost)
        assert best is not None  # at least one server count is always tried
        c, theta, _ = best
        resid = np.log(_resp(x, theta[0], theta[1], c) / r)
        resid = resid - resid.mean()
        rng = np.random.default_rng(self.seed)
        boot = []
        for _ in range(self.n_boot):
            fake = _resp(x, theta[0], theta[1], c) * np.exp(-rng.choice(resid, size=len(resid)))
            boot.append(_fit(x, fake, c, theta, measured_s)[0])
        return OpenMMcResults(n_servers=c, delay_ms=float(theta[0]), service_ms=float(theta[1]),
                              boot_params=np.array(boot).reshape(-1, 2), residuals=resid,
                              alpha=self.alpha, seed=self.seed,
                              train_mape={"resp_ms": mape_pct(r, _resp(x, theta[0], theta[1], c))},
                              n_train=int(ok.sum()), max_tps_trained=float(np.max(x)),
                              service_source="measured" if measured_s is not None else "fitted",
                              train_points={"tps": x.tolist(), "resp_ms": r.tolist()})


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


@dataclass
class OpenMMcResults:
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
    targets: tuple[str, ...] = ("resp_ms",)
    #: log-error spread per unit of log load ratio beyond ``max_tps_trained`` (see
    #: :func:`kneecap.modeling.base.widen_beyond_trained`); None: not measured
    extrapolation_spread: dict[str, float] | None = None
    max_tps_trained: float | None = None
    #: the training rows by column (``tps``, ``resp_ms``): what the model can be checked against
    #: (:func:`kneecap.forecasting.band_check`); None in fits stored before they were kept
    train_points: dict[str, list[float]] | None = None

    @property
    def max_tps(self) -> float:
        """Throughput at which the ``c`` servers are full, ``1000 c / S``."""
        return 1000.0 * self.n_servers / self.service_ms

    def capacity_tps(self) -> tuple[float, float, float]:
        """Throughput at which the ``c`` servers are full, ``1000 c / S``, with its bootstrap band."""
        point = self.max_tps
        if not len(self.boot_params):
            return point, point, point
        draws = 1000.0 * self.n_servers / self.boot_params[:, 1]
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
        out["resp_ms"] = _resp(x, self.delay_ms, self.service_ms, self.n_servers)
        out["saturated"] = ~np.isfinite(out["resp_ms"].to_numpy())
        out["capacity_tps"], out["capacity_tps_lo"], out["capacity_tps_hi"] = self.capacity_tps()
        rng = np.random.default_rng(self.seed + 1)
        draws = np.array([_resp(x, d, s, self.n_servers) for d, s in self.boot_params])
        if len(draws):
            draws = draws * np.exp(rng.choice(self.residuals, size=draws.shape))
            with np.errstate(invalid="ignore"):
                out["resp_ms_lo"] = np.minimum(np.quantile(draws, self.alpha / 2, axis=0), out["resp_ms"])
                out["resp_ms_hi"] = np.maximum(np.quantile(draws, 1 - self.alpha / 2, axis=0), out["resp_ms"])
        else:
            out["resp_ms_lo"] = out["resp_ms_hi"] = out["resp_ms"]
        return widen_beyond_trained(out, x, self.max_tps_trained, self.extrapolation_spread)

    def summary(self) -> str:
        """Server count, service time, delay, capacity and training error in one line."""
        return (f"Open M/M/c: c = {self.n_servers}, service {self.service_ms:.4g} ms ({self.service_source}), "
                f"delay {self.delay_ms:.4g} ms; "
                f"saturates at {self.max_tps:.0f} tps; train MAPE resp {self.train_mape['resp_ms']:.1f} %")

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
                            **({"train_points": self.train_points} if self.train_points is not None else {})})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpenMMcResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        d["boot_params"] = np.array(d["boot_params"], dtype=float).reshape(-1, 2)
        d["residuals"] = np.array(d["residuals"], dtype=float)
        return cls(**d)

