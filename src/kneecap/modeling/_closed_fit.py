"""Fitting the closed MVA model: its training table read and checked, and its parameters fitted.

``(R0, D)`` is fitted by projected Levenberg-Marquardt on log residuals of response and throughput,
many problems at once (the structures screened, the bootstrap refits); :func:`structure_draws`
spreads the bootstrap over the dispatch structures by their weights. Used by
:class:`kneecap.modeling.closed.ClosedMVAModel`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from kneecap.modeling.base import MIN_STRUCTURE_WEIGHT, ModelError, column_or, structure_weights
from kneecap.modeling.cost import cost_table
from kneecap.modeling.dispatch import HELP_RULES, Dispatch, solve_closed

#: Levenberg-Marquardt steps that screen a structure before it is fitted in full
SCREEN_ITERATIONS = 40

def base_configuration(rows: pd.DataFrame) -> dict[str, float]:
    """The configuration most of a workload's points were measured in (n_gcp, n_ziip, think)."""
    cols = {"n_gcp": 1.0, "n_ziip": 0.0, "think_time_ms": 0.0}
    frame = pd.DataFrame({c: pd.to_numeric(rows[c], errors="coerce").fillna(d) if c in rows else d
                          for c, d in cols.items()}, index=rows.index)
    top = frame.value_counts().index[0]
    return {"n_gcp": int(top[0]), "n_ziip": int(top[1]), "think_time_ms": float(top[2])}



def centre(values: np.ndarray) -> np.ndarray:
    """The values less their mean (the residuals a bootstrap resamples); empty stays empty."""
    return values - values.mean() if len(values) else values


def training_design(table: pd.DataFrame) -> dict[str, np.ndarray]:
    """The training table's columns the fit reads, checked: clients and GCPs of at least one on every row."""
    clients = column_or(table, "clients", np.nan)
    if np.any(~np.isfinite(clients)) or np.any(clients < 1):
        raise ModelError("the closed MVA model needs clients >= 1 on every training row")
    n_gcp = column_or(table, "n_gcp", np.nan)
    if np.any(~np.isfinite(n_gcp)) or np.any(n_gcp < 1):
        raise ModelError("the closed MVA model needs n_gcp >= 1 on every training row")
    return {
        "clients": clients.round().astype(int),
        "n_gcp": n_gcp.astype(int),
        "n_ziip": column_or(table, "n_ziip", 0.0).astype(int),
        "think_time_ms": column_or(table, "think_time_ms", 0.0),
        "resp_ms": column_or(table, "resp_ms", np.nan),
        "tps": column_or(table, "tps", np.nan),
    }


def eligible_fraction(table: pd.DataFrame, assumed: float) -> tuple[float, str]:
    """The zIIP-eligible share of CPU the table measures, else ``assumed``; with its source."""
    if {"ziip_eligible_pct", "cpu_total_pct"} <= set(table.columns):
        elig = pd.to_numeric(table["ziip_eligible_pct"], errors="coerce")
        total = pd.to_numeric(table["cpu_total_pct"], errors="coerce")
        ok = elig.notna() & total.notna() & (total > 0)
        if ok.any():
            return float(np.clip(elig[ok].sum() / total[ok].sum(), 0.0, 1.0)), "measured"
    return float(assumed), "assumed"


def measured_demand(table: pd.DataFrame) -> float | None:
    """The median measured CPU per transaction, ms, or None when the table measures no CPU.

    ``cpu_ms_per_tran``, or where a row lacks it IBM's ``APPL% x 10 / TPS`` from ``cpu_total_pct``
    and ``tps`` (:func:`kneecap.modeling.cost.cost_table`, the cost model's own reading): a table
    that measures CPU fixes ``D``. Fitted to response and throughput alone below saturation, ``D``
    and ``R0`` trade against each other (a simulated 2 GCPs + 1 zIIP curve fitted at 50-200
    clients: ``D`` 0.782 ms and ``R0`` 0.337 against the true 0.8 and 0.3), and the eligible work
    spilled onto GCPs past the zIIP's capacity, the small difference of two large ones, inherits
    that error three times over (IIPCP 8.5 % low at 300 clients).
    """
    cost = cost_table(table)["cpu_ms_per_tran"] if {"cpu_ms_per_tran", "cpu_total_pct"} & set(table.columns) \
        else pd.Series(dtype=float)
    return float(cost.median()) if len(cost) else None


def observations(data: dict[str, np.ndarray]) -> np.ndarray:
    """The positive measured responses, then the positive throughputs (the order of the residuals)."""
    ok_r = np.isfinite(data["resp_ms"]) & (data["resp_ms"] > 0)
    ok_x = np.isfinite(data["tps"]) & (data["tps"] > 0)
    return np.concatenate([data["resp_ms"][ok_r], data["tps"][ok_x]])


class TrainingSolver:
    """Model values at the training points for many parameter sets at once."""

    def __init__(self, data: dict[str, np.ndarray], f: float, options: dict[str, Any]) -> None:
        self.data, self.f, self.options = data, f, options
        self.ok_r = np.isfinite(data["resp_ms"]) & (data["resp_ms"] > 0)
        self.ok_x = np.isfinite(data["tps"]) & (data["tps"] > 0)
        self.n_resp = int(self.ok_r.sum())
        keys = list(zip(data["n_gcp"], data["n_ziip"], data["think_time_ms"]))
        self.groups = {key: np.array([i for i, k in enumerate(keys) if k == key]) for key in set(keys)}

    def predict(self, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b = len(thetas)
        resp = np.empty((b, len(self.data["clients"])))
        tps = np.empty_like(resp)
        for key, rows in self.groups.items():
            ns = self.data["clients"][rows]
            sol = solve_closed(thetas[:, 1], thetas[:, 0], self.f,
                               Dispatch(n_gcp=int(key[0]), n_ziip=int(key[1]), **self.options),
                               think_time_ms=float(key[2]), n_max=int(ns.max()))
            resp[:, rows] = sol.resp_ms[:, ns - 1]
            tps[:, rows] = sol.tps[:, ns - 1]
        return resp, tps

    def fitted(self, thetas: np.ndarray) -> np.ndarray:
        resp, tps = self.predict(thetas)
        return np.concatenate([resp[:, self.ok_r], tps[:, self.ok_x]], axis=1)

    def residuals(self, thetas: np.ndarray, obs: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(self.fitted(thetas), 1e-12) / obs)


def mean_squared_log_residual(solver: TrainingSolver, theta: np.ndarray, obs: np.ndarray) -> float:
    """Mean squared log residual of one parameter set."""
    return float(np.mean(solver.residuals(theta[None, :], obs[None, :])[0] ** 2))


def parameter_bounds(obs: np.ndarray, n_resp: int) -> tuple[np.ndarray, np.ndarray]:
    """Box bounds of ``(R0, D)``, scaled by the smallest measured response."""
    r_min = float(np.min(obs[:n_resp])) if n_resp else 1.0
    return np.array([0.0, 1e-6]), np.array([max(10 * r_min, 1.0), max(100 * r_min, 10.0)])


def levenberg_marquardt(solver: TrainingSolver, obs: np.ndarray, start: np.ndarray, measured_d: float | None,
        iterations: int = 60) -> np.ndarray:
    """Projected Levenberg-Marquardt on ``B`` independent problems at once.

    Minimises ``sum(log(model / obs)^2)`` per row of ``obs`` within box bounds; with a measured
    demand only ``R0`` moves.
    """
    lo, hi = parameter_bounds(obs[0], solver.n_resp)
    theta = np.clip(start.astype(float), lo, hi)
    if measured_d is not None:
        theta[:, 1] = measured_d
    free = [0] if measured_d is not None else [0, 1]
    r = solver.residuals(theta, obs)
    cost = np.sum(r**2, axis=1)
    lam = np.full(len(theta), 1e-3)
    for _ in range(iterations):
        jac = np.empty((len(theta), r.shape[1], len(free)))
        for j, col in enumerate(free):
            h = 1e-6 * np.maximum(np.abs(theta[:, col]), 1e-3)
            bumped = theta.copy()
            bumped[:, col] += h
            jac[:, :, j] = (solver.residuals(bumped, obs) - r) / h[:, None]
        a = np.einsum("bni,bnj->bij", jac, jac)
        g = np.einsum("bni,bn->bi", jac, r)
        diag = np.diagonal(a, axis1=1, axis2=2)[:, :, None]
        damp = a + lam[:, None, None] * (np.eye(len(free))[None] * (diag + 1e-12))
        step = -np.linalg.solve(damp, g[:, :, None])[:, :, 0]
        cand = theta.copy()
        cand[:, free] = theta[:, free] + step
        cand = np.clip(cand, lo, hi)
        rc = solver.residuals(cand, obs)
        cost_c = np.sum(rc**2, axis=1)
        better = cost_c < cost
        moved = np.max(np.abs(cand - theta) / np.maximum(np.abs(theta), 1e-9), axis=1)
        theta[better], r[better], cost[better] = cand[better], rc[better], cost_c[better]
        lam = np.where(better, lam / 3.0, lam * 4.0)
        if np.all((moved < 1e-9) | (lam > 1e8)):
            break
    return theta


def fit_point(solver: TrainingSolver, obs: np.ndarray, measured_d: float | None,
              warm: np.ndarray | None = None) -> np.ndarray:
    """The least-squares ``(R0, D)`` from a grid of starts, or from ``warm`` and two of them."""
    r_min = float(np.min(obs[: solver.n_resp])) if solver.n_resp else 1.0
    starts = np.array([(r_min * a, r_min * b) for a in (0.1, 0.5) for b in (0.2, 0.6, 1.5)])
    if warm is not None:
        starts = np.vstack([np.asarray(warm, dtype=float)[None, :], starts[[1, 4]]])
    fits = levenberg_marquardt(solver, np.repeat(obs[None, :], len(starts), axis=0), starts, measured_d, iterations=200)
    cost = np.sum(solver.residuals(fits, np.repeat(obs[None, :], len(fits), axis=0)) ** 2, axis=1)
    return fits[int(np.argmin(cost))]


def structure_draws(boot: np.ndarray, theta: np.ndarray, thetas: list[np.ndarray], weights: np.ndarray,
                    pairs: list[tuple[str, int]], rng: np.random.Generator,
                    bounds: tuple[np.ndarray, np.ndarray], measured_d: float | None) -> np.ndarray:
    r"""Bootstrap draws ``(R0, D, help rule index, eligible bursts)`` spread over the structures by weight.

    Draw ``b`` takes structure ``s`` with probability ``w_s`` (renormalised over those of at least
    :data:`MIN_STRUCTURE_WEIGHT`) and the parameters :math:`\theta_s + (\theta^*_b - \hat\theta)`:
    that structure's fit moved as the best structure's refit moved, held in the fit's bounds.
    """
    keep = np.where(weights >= MIN_STRUCTURE_WEIGHT, weights, 0.0)
    if not keep.sum() > 0:
        keep = np.eye(len(weights))[int(np.argmax(weights))]
    chosen = rng.choice(len(pairs), size=len(boot), p=keep / keep.sum())
    lo, hi = bounds
    out = np.empty((len(boot), 4))
    shifted = np.stack([thetas[s] for s in chosen]) + (boot - theta[None, :])
    out[:, :2] = np.clip(shifted, lo, hi)
    if measured_d is not None:
        out[:, 1] = measured_d
    out[:, 2] = [HELP_RULES.index(pairs[s][0]) for s in chosen]
    out[:, 3] = [pairs[s][1] for s in chosen]
    return out


def fit_structures(data: dict[str, np.ndarray], f: float, obs: np.ndarray, measured_d: float | None,
                   pairs: list[tuple[str, int]], options: dict[str, Any]
                   ) -> tuple[list[TrainingSolver], list[np.ndarray], list[float], np.ndarray]:
    """Each (help rule, eligible bursts) structure's fitted ``(R0, D)``, its cost and Akaike weight.

    Returns the solvers, the fits and the costs in the order of ``pairs``, and the weights
    (:func:`kneecap.modeling.base.structure_weights`).
    """
    solvers: list[TrainingSolver] = []
    thetas: list[np.ndarray] = []
    costs: list[float] = []
    for rule, bursts in pairs:
        solver = TrainingSolver(data, f, {**options, "help_rule": rule, "eligible_bursts": bursts})
        # the configured structure is fitted from a grid of starts; the others are screened from
        # its fit (neighbouring structures fit nearby), and those the screen leaves any weight
        # refitted from the grid too, so a structure is never kept down by a short search
        theta = (fit_point(solver, obs, measured_d) if not thetas else
                 levenberg_marquardt(solver, obs[None, :], thetas[0][None, :], measured_d,
                                     iterations=SCREEN_ITERATIONS)[0])
        solvers.append(solver)
        thetas.append(theta)
        costs.append(mean_squared_log_residual(solver, theta, obs))
    for i in np.flatnonzero(structure_weights(np.array(costs), len(obs)) >= MIN_STRUCTURE_WEIGHT / 10):
        if i > 0:
            thetas[i] = fit_point(solvers[i], obs, measured_d, warm=thetas[i])
            costs[i] = mean_squared_log_residual(solvers[i], thetas[i], obs)
    return solvers, thetas, costs, structure_weights(np.array(costs), len(obs))


def residual_bootstrap(solver: TrainingSolver, theta: np.ndarray, obs: np.ndarray, measured_d: float | None,
                       n_boot: int, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
    r"""The centred log residuals of the fit ``theta`` and ``n_boot`` refits to its resampled residuals.

    The residuals are scaled by :math:`\sqrt{n / (n - p)}` for the ``p`` fitted parameters; each
    refit starts from ``theta``. With ``n_boot`` 0 the draws are an empty ``(0, 2)`` array.
    """
    resid = solver.residuals(theta[None, :], obs[None, :])[0]
    n_free = 1 if measured_d is not None else 2
    scale = math.sqrt(len(resid) / max(len(resid) - n_free, 1))
    n_r = solver.n_resp
    # resp and tps scatter differently (tps is pinned by Little's law): resample each on its own
    centred = {"resp_ms": centre(resid[:n_r]) * scale, "tps": centre(resid[n_r:]) * scale}
    boot_arr = np.empty((0, 2))
    if n_boot > 0:
        noise = np.concatenate([
            rng.choice(centred[t], size=(n_boot, len(centred[t])), replace=True)
            if len(centred[t]) else np.empty((n_boot, 0)) for t in ("resp_ms", "tps")], axis=1)
        fitted_obs = solver.fitted(theta[None, :])[0]
        fake = fitted_obs[None, :] * np.exp(-noise)
        boot_arr = levenberg_marquardt(solver, fake, np.repeat(theta[None, :], n_boot, axis=0), measured_d)
    return centred, boot_arr
