"""The c-server closed MVA family: one multi-server station and a fixed delay (no zIIP pools).

``MultiServerMVAModel().fit(table) -> MultiServerMVAResults``; imported by
:mod:`kneecap.modeling.closed`, where the registry and the selection find it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, stats

from kneecap.modeling.base import (
    ALPHA,
    ModelError,
    column_or,
    mape_pct,
    require_columns,
    to_jsonable,
    widen_beyond_trained,
)
from kneecap.modeling.family import ResultsBase
from kneecap.modeling.open import server_counts
from kneecap.modeling.queueing import multiserver_mva

#: The family name of :class:`MultiServerMVAResults` in stored documents.
SERVERS_FAMILY = "closed_mva_c"


def servers_delay_curve(n_max: int, demand_ms: float, delay_ms: float, n_servers: int,
                        think_time_ms: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Throughput (tps) and response (ms, without think time) at ``1..n_max`` clients.

    One station of ``c`` identical servers with demand ``D`` per transaction, plus a pure delay
    ``R0`` (network, locks, I/O not modelled as a queue), solved by exact multi-server MVA
    (:func:`kneecap.modeling.queueing.multiserver_mva`). Throughput rises as
    :math:`N / (D + R_0 + Z)` while servers are free and bends onto the ceiling
    :math:`X_{max} = c / D`; it never falls, so this family cannot draw a retrograde curve.
    """
    sol = multiserver_mva((float(demand_ms),), (int(n_servers),), delay_ms=float(delay_ms),
                          think_time_ms=float(think_time_ms), n_max=int(n_max))
    return sol.tps, sol.resp_ms


@dataclass
class MultiServerMVAModel:
    r"""Closed MVA with ``c`` servers and a delay, fitted to ``(clients, tps)`` and, if measured, ``resp_ms``.

    The family of a load test without zIIP pools: one multi-server CPU station and a fixed delay,
    the textbook alternative to the USL for throughput against concurrency (Gunther, *Guerrilla
    Capacity Planning*, 2007, ch. 4-5, compares the two). ``c`` is the table's ``n_gcp`` when it
    gives one constant count (the machine's processors), else chosen among
    :func:`kneecap.modeling.open.server_counts` up to the largest trained population (beyond
    it the training rows cannot tell counts apart). For each ``c`` the demand ``D`` and delay
    ``R0`` are fitted by least squares on log residuals of throughput and response (relative
    errors, as :class:`ClosedMVAModel`), in log parameters so both stay positive.

    Notes
    -----
    .. math:: \min_{\log D, \log R_0} \sum_i \Big[\log \frac{X(N_i)}{X_i}\Big]^2
              + \Big[\log \frac{R(N_i)}{R_i}\Big]^2

    The band is the delta method on the log scale, as the USL's:
    :math:`\log \hat X \pm t_{dof}\sqrt{g^\top \Sigma g + s^2}` with :math:`\Sigma = s^2 (J^\top J)^{-1}`
    and ``dof`` the observations less the fitted parameters (``c`` counts when it was chosen).

    References
    ----------
    Reiser, M. and Lavenberg, S. S. (1980), "Mean-value analysis of closed multichain queuing
    networks", *J. ACM* 27(2). Menascé, Almeida and Dowdy (2004), *Performance by Design*, ch. 14.
    """

    alpha: float = ALPHA

    def fit(self, table: pd.DataFrame) -> MultiServerMVAResults:
        """Fit ``D`` and ``R0`` for each candidate ``c``; keep the ``c`` with the smallest log residual cost."""
        require_columns(table, ("clients",), "the c-server MVA model")
        n = column_or(table, "clients", np.nan)
        x = column_or(table, "tps", np.nan)
        r = column_or(table, "resp_ms", np.nan)
        ok_n = np.isfinite(n) & (n >= 1)
        ok_x, ok_r = ok_n & np.isfinite(x) & (x > 0), ok_n & np.isfinite(r) & (r > 0)
        if len(np.unique(n[ok_x | ok_r])) < 3:
            raise ModelError("the c-server MVA model needs (clients, tps or resp_ms) at 3 or more populations")
        think = float(np.nanmedian(column_or(table, "think_time_ms", 0.0)))
        ns_x, ns_r = np.round(n[ok_x]).astype(int), np.round(n[ok_r]).astype(int)
        n_max = int(max(ns_x.max(initial=1), ns_r.max(initial=1)))
        obs = np.log(np.concatenate([x[ok_x], r[ok_r]]))

        def fun(q: np.ndarray, c: int) -> np.ndarray:
            tps, resp = servers_delay_curve(n_max, math.exp(q[0]), math.exp(q[1]), c, think)
            return np.log(np.maximum(np.concatenate([tps[ns_x - 1], resp[ns_r - 1]]), 1e-300)) - obs

        gcp = column_or(table, "n_gcp", np.nan)[ok_x | ok_r]
        measured_c = bool(np.isfinite(gcp).all() and len(np.unique(gcp)) == 1 and gcp[0] >= 1)
        counts = [int(gcp[0])] if measured_c else server_counts(n_max)
        # start: the first point's cycle time N / X splits into D and R0, the ceiling c / D from the top tps
        first = int(np.argmin(n[ok_x])) if ok_x.any() else None
        cycle = (1000.0 * n[ok_x][first] / x[ok_x][first] - think) if first is not None else float(np.min(r[ok_r]))
        cycle = max(cycle, 1e-6)
        best: tuple[float, int, Any] | None = None
        for c in counts:
            d0 = min(1000.0 * c / float(np.max(x[ok_x])), 0.9 * cycle) if ok_x.any() else 0.5 * cycle
            q0 = np.log([max(d0, 1e-9 * cycle), max(cycle - d0, 1e-3 * cycle)])
            fit = optimize.least_squares(fun, q0, args=(c,), bounds=([-np.inf, math.log(1e-9 * cycle)], np.inf))
            if best is None or fit.cost < best[0] - 1e-12:
                best = (float(fit.cost), c, fit)
        assert best is not None  # at least one count is always tried
        _, c, fit = best
        n_obs = len(obs)
        dof = max(n_obs - 2 - (0 if measured_c else 1), 1)
        s2 = float(2.0 * fit.cost / dof)
        cov = np.linalg.pinv(fit.jac.T @ fit.jac) * s2
        tps, resp = servers_delay_curve(n_max, math.exp(fit.x[0]), math.exp(fit.x[1]), c, think)
        return MultiServerMVAResults(
            n_servers=c, demand_ms=float(math.exp(fit.x[0])), delay_ms=float(math.exp(fit.x[1])),
            think_time_ms=think, cov=cov, s2=s2, dof=dof, alpha=self.alpha,
            servers_source="measured" if measured_c else "fitted",
            train_mape={"tps": mape_pct(x[ok_x], tps[ns_x - 1]), "resp_ms": mape_pct(r[ok_r], resp[ns_r - 1])},
            n_train=int((ok_x | ok_r).sum()), max_clients=float(n_max))


@dataclass
class MultiServerMVAResults(ResultsBase):
    """A fitted :class:`MultiServerMVAModel`: ``c`` servers, demand ``D`` and delay ``R0`` (ms)."""

    n_servers: int
    demand_ms: float
    delay_ms: float
    think_time_ms: float
    cov: np.ndarray  # of (log D, log R0)
    s2: float  # log-residual variance
    dof: int
    alpha: float
    servers_source: str
    train_mape: dict[str, float]
    n_train: int
    max_clients: float
    family: str = SERVERS_FAMILY
    load_unit: ClassVar[str] = "clients"
    targets: tuple[str, ...] = ("tps", "resp_ms")
    #: log-error spread per unit of log load ratio beyond ``max_clients``
    #: (:func:`kneecap.modeling.base.widen_beyond_trained`); None: not measured
    extrapolation_spread: dict[str, float] | None = None

    @property
    def max_tps(self) -> float:
        """The throughput ceiling ``1000 c / D``."""
        return 1000.0 * self.n_servers / self.demand_ms

    def _log_tps(self, ns: np.ndarray, q: np.ndarray, think: float) -> np.ndarray:
        tps, _ = servers_delay_curve(int(ns.max()), math.exp(q[0]), math.exp(q[1]), self.n_servers, think)
        return np.log(tps[ns - 1])

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``tps`` and ``resp_ms`` (without think time) with delta-method bands at each row's clients."""
        require_columns(frame, ("clients",), "c-server MVA prediction")
        clients = column_or(frame, "clients", np.nan)
        if np.any(~np.isfinite(clients)) or np.any(clients < 1):
            raise ModelError("prediction needs clients >= 1 on every row")
        ns = np.round(clients).astype(int)
        think = column_or(frame, "think_time_ms", self.think_time_ms)
        q = np.log([self.demand_ms, self.delay_ms])
        out = pd.DataFrame(index=frame.index)
        t = stats.t.ppf(1 - self.alpha / 2, self.dof)
        for z in np.unique(think):
            rows = think == z
            mean = self._log_tps(ns[rows], q, float(z))
            grad = np.empty((int(rows.sum()), 2))
            for i in range(2):
                step = q.copy()
                step[i] += 1e-6
                grad[:, i] = (self._log_tps(ns[rows], step, float(z)) - mean) / 1e-6
            se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", grad, self.cov, grad) + self.s2, 0.0))
            out.loc[rows, "tps"] = np.exp(mean)
            out.loc[rows, "tps_lo"] = np.exp(mean - t * se)
            out.loc[rows, "tps_hi"] = np.exp(mean + t * se)
        # Little's law, as the USL: the response a closed population of N sees at throughput X
        out["resp_ms"] = clients / out["tps"] * 1000.0 - think
        out["resp_ms_lo"] = np.maximum(clients / out["tps_hi"] * 1000.0 - think, 0.0)
        out["resp_ms_hi"] = clients / out["tps_lo"] * 1000.0 - think
        return widen_beyond_trained(out, clients, self.max_clients, self.extrapolation_spread)

    def summary(self) -> str:
        """Servers, demand, delay, ceiling and training error in one line."""
        return (f"Closed MVA, c servers + delay: c = {self.n_servers} ({self.servers_source}), "
                f"demand {self.demand_ms:.4g} ms, delay {self.delay_ms:.4g} ms; ceiling {self.max_tps:.4g} tps; "
                f"train MAPE tps {self.train_mape.get('tps', float('nan')):.1f} %")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by :meth:`from_dict`)."""
        return to_jsonable({"family": self.family, "n_servers": self.n_servers, "demand_ms": self.demand_ms,
                            "delay_ms": self.delay_ms, "think_time_ms": self.think_time_ms, "cov": self.cov,
                            "s2": self.s2, "dof": self.dof, "alpha": self.alpha,
                            "servers_source": self.servers_source, "train_mape": self.train_mape,
                            "n_train": self.n_train, "max_clients": self.max_clients,
                            **({"extrapolation_spread": self.extrapolation_spread}
                               if self.extrapolation_spread is not None else {})})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MultiServerMVAResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        d["cov"] = np.array(d["cov"], dtype=float).reshape(2, 2)
        d["train_mape"] = {k: (np.nan if v is None else v) for k, v in d["train_mape"].items()}
        return cls(**d)
