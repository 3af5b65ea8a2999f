"""Closed workloads (clients with think time): exact multi-server MVA over a zIIP and a GCP pool.

``ClosedMVAModel(...).fit(table) -> ClosedMVAResults``. The fitted parameters are the CPU demand per
transaction ``D`` (ms, CP-equivalent), a fixed non-CPU delay ``R0`` (ms) and the zIIP-eligible
fraction ``f``; think time, engine counts and the dispatching rule come from the table and the
model's options. Parameter uncertainty comes from a residual bootstrap and is carried into every
prediction and into the knee.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from kneecap import schema
from kneecap.config import TrainConfig
from kneecap.modeling._closed_fit import (
    SCREEN_ITERATIONS,
    base_configuration,
    eligible_fraction,
    fit_structures,
    measured_demand,
    observations,
    parameter_bounds,
    residual_bootstrap,
    structure_draws,
    training_design,
)
from kneecap.modeling._closed_metrics import (
    bottleneck_demand_ms,
    point_knee_clients,
    point_metrics,
    pool_busy_pct,
    unloaded_cpu_per_ms,
)
from kneecap.modeling._closed_servers import (
    SERVERS_FAMILY,
    MultiServerMVAModel,
    MultiServerMVAResults,
    servers_delay_curve,
)
from kneecap.modeling.answers import SATURATED, Saturated, extrapolation, latched_help_caveat, saturation_message
from kneecap.modeling.base import (
    ALPHA,
    MIN_STRUCTURE_WEIGHT,
    N_BOOT,
    SEED,
    FitReport,
    ModelError,
    column_or,
    help_rule_weights,
    mape_pct,
    predict_at,
    require_columns,
    structure_sentence,
    to_jsonable,
    widen_beyond_trained,
)
from kneecap.modeling.dispatch import (
    HELP_RULE,
    HELP_RULES,
    HELP_WAIT_MS,
    HONOR_PRIORITY,
    Dispatch,
    DispatchSolution,
    solve_closed,
)
from kneecap.modeling.family import ResultsBase
from kneecap.modeling.knee import KNEE_K, Knee, observed_knee, past_knee

if TYPE_CHECKING:
    from kneecap.modeling.ziip import PlannerPolicy

#: The zIIP-eligible share of CPU assumed when a table measures none (z/OS Connect and Liberty run
#: almost all their work on zIIPs; params.yaml ``train.assumed_ziip_eligible_fraction``).
ASSUMED_ZIIP_ELIGIBLE_FRACTION = TrainConfig.assumed_ziip_eligible_fraction
#: zIIP-eligible dispatches per transaction in the closed model (params.yaml ``train.eligible_bursts``).
ELIGIBLE_BURSTS = TrainConfig.eligible_bursts

FAMILY = "closed_mva"
#: solves a fitted model keeps (:meth:`ClosedMVAResults._solve_all`); the oldest goes first
SOLVES_KEPT = 8
PARAM_NAMES = ("delay_ms", "cpu_ms_per_tran", "ziip_eligible_fraction")

# the c-server family and the helpers live in private modules; these are the names this module offers
__all__ = [
    "ASSUMED_ZIIP_ELIGIBLE_FRACTION",
    "ELIGIBLE_BURSTS",
    "FAMILY",
    "PARAM_NAMES",
    "SCREEN_ITERATIONS",
    "SERVERS_FAMILY",
    "SOLVES_KEPT",
    "ClosedMVAModel",
    "ClosedMVAResults",
    "MultiServerMVAModel",
    "MultiServerMVAResults",
    "base_configuration",
    "bottleneck_demand_ms",
    "servers_delay_curve",
]


@dataclass
class ClosedMVAModel:
    r"""Closed-workload response-time and throughput model.

    Parameters
    ----------
    ziip_eligible_fraction : used when the table has no CPU columns to measure it from
        (``ziip_eligible_pct / cpu_total_pct``); recorded in the results as assumed.
    honor_priority : IIPHONORPRIORITY=YES (eligible work spills to free GCPs).
    help_wait_ms : IEAOPTxx ZIIPAWMT in ms (how long eligible work waits before a GCP helps).
    help_rule : ``"pool"`` or ``"burst"``, when GCPs help (:class:`kneecap.modeling.dispatch.Dispatch`).
    eligible_bursts, gcp_bursts : dispatches per transaction of each kind
        (:class:`kneecap.modeling.dispatch.Dispatch`).
    help_rules, burst_options : the dispatcher structures the fit weighs, every pair of a help
        rule and a count of eligible bursts (params.yaml ``train.closed_help_rules``,
        ``train.closed_eligible_bursts``); None: ``help_rule`` / ``eligible_bursts`` alone.
    n_boot : bootstrap refits behind the intervals.
    alpha : intervals are ``(1 - alpha)``.
    seed : bootstrap random seed.

    Notes
    -----
    Fitted by bounded least squares on log residuals of ``resp_ms`` and ``tps`` (both
    relative, so a 1 ms and a 2000 TPS point weigh alike)::

        min_{R0, D}  sum_i [log R(N_i)/R_i]^2 + [log X(N_i)/X_i]^2

    where ``R(N)``, ``X(N)`` come from :func:`kneecap.modeling.dispatch.solve_closed` (exact MVA with
    GCP help fed back into the queues). When the table
    measures CPU per transaction, ``D`` is fixed at its median (utilisation law) and only ``R0`` is
    fitted.

    No load test prints how the dispatcher cuts a transaction's eligible CPU into bursts, nor
    which GCP-help rule the LPAR follows, and past the trained load they decide the knee. With
    several structures (``help_rules`` x ``burst_options``) each is fitted and given its Akaike
    weight :math:`w_s \propto \exp(-\tfrac n2 \log(c_s / c_{min}))` (every structure has the same
    free parameters; :func:`kneecap.modeling.dispatch.structure_weights`), ``c_s`` its mean squared
    log residual over the ``n`` measured values. The point fit is the best structure's; each
    bootstrap draw takes a structure with probability ``w_s`` (those under
    :data:`MIN_STRUCTURE_WEIGHT` left out) and the best structure's refitted parameter deviation
    about that structure's own fit (:math:`\theta_s + \theta^*_b - \hat\theta`, held in the
    bounds), so the band spans the structures the table cannot tell apart (Burnham & Anderson
    2002, *Model Selection and Multimodel Inference*, sec. 4.3: model-averaged prediction
    intervals) without a bootstrap refit per structure.
    """

    ziip_eligible_fraction: float = ASSUMED_ZIIP_ELIGIBLE_FRACTION
    honor_priority: bool = HONOR_PRIORITY
    help_wait_ms: float = HELP_WAIT_MS
    help_rule: str = HELP_RULE
    eligible_bursts: int = ELIGIBLE_BURSTS
    gcp_bursts: int = TrainConfig.gcp_bursts
    help_rules: tuple[str, ...] | None = None
    burst_options: tuple[int, ...] | None = None
    n_boot: int = N_BOOT
    alpha: float = ALPHA
    seed: int = SEED

    def structures(self) -> list[tuple[str, int]]:
        """The (help rule, eligible bursts) pairs the fit weighs; the configured pair first."""
        rules = tuple(self.help_rules) if self.help_rules else (self.help_rule,)
        bursts = tuple(int(b) for b in self.burst_options) if self.burst_options else (int(self.eligible_bursts),)
        for rule in rules:
            if rule not in HELP_RULES:
                raise ModelError(f"help rule must be one of {', '.join(HELP_RULES)}, got {rule!r}")
        if any(b < 1 for b in bursts):
            raise ModelError(f"eligible bursts must be >= 1, got {bursts}")
        pairs = [(r, b) for r in rules for b in bursts]
        own = (self.help_rule, int(self.eligible_bursts))
        return [own] + [p for p in pairs if p != own] if own in pairs else pairs

    def fit(self, table: pd.DataFrame) -> ClosedMVAResults:
        """Fit ``R0`` (and ``D`` unless measured) to the clients, response and throughput; bootstrap the draws."""
        require_columns(table, ("clients", "n_gcp"), "the closed MVA model")
        data = training_design(table)
        if not (np.isfinite(data["resp_ms"]).any() or np.isfinite(data["tps"]).any()):
            raise ModelError("the closed MVA model needs resp_ms or tps on the training rows")
        n_obs = int(np.isfinite(data["resp_ms"]).sum() + np.isfinite(data["tps"]).sum())
        if n_obs < 2:
            raise ModelError(f"the closed MVA model needs at least 2 measured values, got {n_obs}")
        f, f_source = eligible_fraction(table, self.ziip_eligible_fraction)
        measured_d = measured_demand(table)
        obs = observations(data)
        pairs = self.structures()
        solvers, thetas, costs, weights = fit_structures(data, f, obs, measured_d, pairs, self._dispatch_options())
        best = int(np.argmax(weights))
        solver, theta = solvers[best], thetas[best]
        help_rule, eligible_bursts = pairs[best]
        rng = np.random.default_rng(self.seed)
        centred, boot_arr = residual_bootstrap(solver, theta, obs, measured_d, self.n_boot, rng)
        if self.n_boot > 0 and len(pairs) > 1:
            boot_arr = structure_draws(boot_arr, theta, thetas, weights, pairs, rng,
                                       parameter_bounds(obs, solver.n_resp), measured_d)
        fitted = solver.predict(theta[None, :])
        fitted = (fitted[0][0], fitted[1][0])
        measured_r = solver.ok_r
        train_points = {k: data[k][measured_r].tolist()
                        for k in ("clients", "think_time_ms", "n_gcp", "n_ziip", "resp_ms")}
        train_ranges = {
            "clients": [float(np.nanmin(data["clients"])), float(np.nanmax(data["clients"]))],
            "configs": sorted({(int(g), int(z), float(t)) for g, z, t in
                               zip(data["n_gcp"], data["n_ziip"], data["think_time_ms"])}),
        }
        return ClosedMVAResults(
            delay_ms=float(theta[0]),
            cpu_ms_per_tran=float(theta[1] if measured_d is None else measured_d),
            ziip_eligible_fraction=f,
            ziip_eligible_source=f_source,
            demand_source="measured" if measured_d is not None else "fitted",
            honor_priority=self.honor_priority,
            help_wait_ms=self.help_wait_ms,
            help_rule=help_rule,
            eligible_bursts=eligible_bursts,
            gcp_bursts=self.gcp_bursts,
            alpha=self.alpha,
            boot_params=boot_arr,
            residuals=centred,
            seed=self.seed,
            train_mape={
                "resp_ms": mape_pct(data["resp_ms"], fitted[0]),
                "tps": mape_pct(data["tps"], fitted[1]),
            },
            train_ranges=train_ranges,
            n_train=int(len(table)),
            train_points=train_points,
            structures=[{"help_rule": r, "eligible_bursts": int(b), "cost": c, "weight": float(w),
                         "delay_ms": float(t[0]), "cpu_ms_per_tran": float(t[1])}
                        for (r, b), c, w, t in zip(pairs, costs, weights, thetas)] if len(pairs) > 1 else [],
        )

    def _dispatch_options(self) -> dict[str, Any]:
        return {"honor_priority": self.honor_priority, "help_wait_ms": self.help_wait_ms,
                "help_rule": self.help_rule,
                "eligible_bursts": self.eligible_bursts, "gcp_bursts": self.gcp_bursts}


@dataclass
class ClosedMVAResults(ResultsBase):
    """A fitted :class:`ClosedMVAModel`; see :meth:`predict`, :meth:`knee`, :meth:`curve`."""

    delay_ms: float
    cpu_ms_per_tran: float
    ziip_eligible_fraction: float
    ziip_eligible_source: str
    demand_source: str
    honor_priority: bool
    help_wait_ms: float
    alpha: float
    boot_params: np.ndarray
    residuals: dict[str, np.ndarray]
    seed: int
    train_mape: dict[str, float]
    train_ranges: dict[str, Any]
    n_train: int
    eligible_bursts: int = 1
    gcp_bursts: int = 1
    # results registered before the pool rule existed were fitted with the burst rule
    help_rule: str = "burst"
    family: str = FAMILY
    load_unit: ClassVar[str] = "clients"
    pools: ClassVar[bool] = True
    targets: tuple[str, ...] = ("resp_ms", "tps", "cpu_total_pct", "cpu_ziip_pct", "cpu_gcp_pct",
                                "ziip_eligible_on_gcp_pct", "ziip_eligible_pct")
    #: log-error spread per unit of log load ratio beyond the trained clients (see
    #: :func:`kneecap.modeling.base.widen_beyond_trained`); None: not measured, band not widened
    extrapolation_spread: dict[str, float] | None = None
    #: the training rows with a measured response, by column (``clients``, ``think_time_ms``,
    #: ``n_gcp``, ``n_ziip``, ``resp_ms``): what the model can be checked against
    #: (:func:`kneecap.forecasting.band_check`); None in fits stored before they were kept
    train_points: dict[str, list[float]] | None = None
    #: the band held out on the table's own rows (:func:`kneecap.modeling.select.band_coverage`):
    #: ``origins``, ``points``, ``inside``, ``coverage_raw_pct``, ``q_log``, ``x_max`` and, scored
    #: against the band as widened past the trained load, ``inside_widened``, ``coverage_pct`` and
    #: ``q_log_widened`` (applied past the trained clients by :meth:`predict`); ``{}``: not scored
    calibration: dict[str, Any] = field(default_factory=dict)
    #: the dispatcher structures weighed (:meth:`ClosedMVAModel.fit`): ``help_rule``,
    #: ``eligible_bursts``, ``cost``, ``weight``, ``delay_ms``, ``cpu_ms_per_tran``; ``[]``: one
    #: structure, fixed
    structures: list[dict[str, Any]] = field(default_factory=list)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    #: the LPAR's engines when not all alike (:func:`kneecap.modeling.engines.on_engines`): Dispatch keywords
    _engines: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _structure_knees: dict[Any, dict[str, float]] = field(default_factory=dict, init=False, repr=False,
                                                          compare=False)

    @property
    def params(self) -> pd.Series:
        """The point estimates: ``delay_ms``, ``cpu_ms_per_tran`` and ``ziip_eligible_fraction``."""
        return pd.Series({"delay_ms": self.delay_ms, "cpu_ms_per_tran": self.cpu_ms_per_tran,
                          "ziip_eligible_fraction": self.ziip_eligible_fraction})

    def _thetas(self, max_draws: int | None = None) -> np.ndarray:
        """``(1 + B, 4)``: the point fit then the draws, each ``(R0, D, help rule index, eligible bursts)``."""
        own = (float(HELP_RULES.index(self.help_rule)), float(self.eligible_bursts))
        point = np.array([[self.delay_ms, self.cpu_ms_per_tran, *own]])
        boot = np.asarray(self.boot_params, dtype=float)
        boot = boot.reshape(len(boot), -1) if boot.size else np.empty((0, 2))
        if boot.shape[1] < 4:  # fitted with one structure (or stored before structures were weighed)
            boot = np.hstack([boot[:, :2], np.tile(own, (len(boot), 1))])
        thetas = np.vstack([point, boot])
        if self.demand_source == "measured":
            thetas[:, 1] = self.cpu_ms_per_tran
        return thetas if max_draws is None else thetas[: 1 + max_draws]

    def dispatch(self, n_gcp: int, n_ziip: int, structure: tuple[str, int] | None = None) -> Dispatch:
        """The LPAR ``n_gcp`` + ``n_ziip`` under the dispatching rules of the point fit (or of ``structure``)."""
        rule, bursts = structure if structure is not None else (self.help_rule, self.eligible_bursts)
        return Dispatch(n_gcp=int(n_gcp), n_ziip=int(n_ziip), honor_priority=self.honor_priority,
                        help_wait_ms=self.help_wait_ms, help_rule=rule, eligible_bursts=int(bursts),
                        gcp_bursts=self.gcp_bursts, **self._engines)

    def _solve_draws(self, thetas: np.ndarray, n_gcp: int, n_ziip: int, **solve: Any) -> DispatchSolution:
        """:func:`solve_closed` for every draw under its own structure, the rows in draw order."""
        keys = [(HELP_RULES[int(r)], int(b)) for r, b in thetas[:, 2:4]]
        groups: dict[tuple[str, int], list[int]] = {}
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
        parts = {key: solve_closed(thetas[rows, 1], thetas[rows, 0], self.ziip_eligible_fraction,
                                   self.dispatch(n_gcp, n_ziip, key), **solve) for key, rows in groups.items()}
        if len(parts) == 1:
            return next(iter(parts.values()))
        width = max(p.tps.shape[1] for p in parts.values())

        def optional(name: str, fill: Any) -> np.ndarray | None:
            return None if any(getattr(p, name) is None for p in parts.values()) else merged(name, fill)

        def merged(name: str, fill: Any) -> np.ndarray:
            first = getattr(next(iter(parts.values())), name)
            out = np.full((len(thetas),) + ((width,) if first.ndim == 2 else ()), fill, dtype=first.dtype)
            for key, rows in groups.items():
                arr = getattr(parts[key], name)
                if arr.ndim == 2:
                    out[rows, : arr.shape[1]] = arr
                else:
                    out[rows] = arr
            return out

        return DispatchSolution(tps=merged("tps", np.nan), resp_ms=merged("resp_ms", np.nan),
                                spill_fraction=merged("spill_fraction", np.nan),
                                ziip_busy=merged("ziip_busy", np.nan), gcp_busy=merged("gcp_busy", np.nan),
                                saturated=merged("saturated", False), ziip_wait_ms=optional("ziip_wait_ms", np.nan),
                                gcp_wait_ms=optional("gcp_wait_ms", np.nan), solved=optional("solved", 0))

    def _solve_all(self, n_gcp: int, n_ziip: int, think_ms: float, n_max: int,
                   max_draws: int | None = None, *, knee_k: float = 0.0, n_bound: int = 0) -> DispatchSolution:
        """Every draw's solve in one configuration, from the cache when the cached solve covers the request.

        Every draw is solved to at least ``n_max`` clients; with ``knee_k`` > 0 also until its
        response passes ``knee_k`` times its one-client response, at most to ``n_bound``. A new
        solve also covers what the cached one did, so the knee, the curve and the what-if point of
        one configuration share one solve whichever asks first.
        """
        key = (n_gcp, n_ziip, float(think_ms), max_draws)
        hit = self._cache.get(key)
        n_full, stop, n_cap = max(n_max, 1), float(knee_k), max(n_bound, n_max, 1)
        if hit is not None:
            sol, hit_full, hit_stop, hit_cap = hit
            crossed = knee_k <= 0
            if not crossed:
                # a draw serves the knee once it has crossed, or once it was solved to the bound
                solved = sol.solved if sol.solved is not None else np.full(len(sol.resp_ms), hit_cap)
                crossed = bool(np.all(np.any(past_knee(sol.resp_ms, sol.resp_ms[:, :1], knee_k), axis=1)
                                      | (solved >= n_bound)))
            if hit_full >= n_full and crossed:
                return sol
            n_full, stop, n_cap = max(n_full, hit_full), max(stop, hit_stop), max(n_cap, hit_cap)
        thetas = self._thetas(max_draws)
        if stop <= 0:
            n_cap = n_full
        sol = self._solve_draws(thetas, n_gcp, n_ziip, think_time_ms=think_ms, n_max=n_cap, stop_ratio=stop,
                                n_min=n_full)
        # a few configurations: the cache lets the knee, curve and point of one configuration share
        # a solve (callers such as the desk cache their answers themselves). A solve of 200 draws
        # holds megabytes; kept by the hundred (the bound was 256) they kept the process from
        # reusing memory, and zeroing fresh pages made the desk's served knee solve 65 ms at the
        # median instead of 46 (timed inside the served desk during benchmarks/bench_browser.py)
        self._cache.pop(key, None)
        while len(self._cache) >= SOLVES_KEPT:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = (sol, n_full, stop, n_cap)
        return sol

    def predict(self, frame: pd.DataFrame, *, max_draws: int | None = None) -> pd.DataFrame:
        """Predict every row of ``frame`` (needs ``clients``, ``n_gcp``, ``n_ziip``, ``think_time_ms``).

        Returns ``resp_ms``, ``tps``, CPU APPL% by pool (``cpu_ziip_pct``, ``cpu_gcp_pct`` including
        spilled eligible work, ``ziip_eligible_on_gcp_pct`` = IIPCP, ``ziip_eligible_pct`` = IIP +
        IIPCP, ``cpu_total_pct``), each with
        ``_lo`` / ``_hi`` prediction bounds, plus ``ziip_busy_pct`` / ``gcp_busy_pct`` per engine.
        """
        require_columns(frame, ("clients",), "prediction")
        clients = column_or(frame, "clients", np.nan)
        if np.any(~np.isfinite(clients)) or np.any(clients < 1):
            raise ModelError("prediction needs clients >= 1 on every row")
        n_gcp = column_or(frame, "n_gcp", self._default("n_gcp")).astype(int)
        n_ziip = column_or(frame, "n_ziip", self._default("n_ziip")).astype(int)
        think = column_or(frame, "think_time_ms", self._default("think_time_ms"))
        thetas = self._thetas(max_draws)
        draws = np.empty((len(thetas), len(frame), 8))
        keys = list(zip(n_gcp, n_ziip, think))
        for key in set(keys):
            rows = [i for i, k in enumerate(keys) if k == key]
            ns = np.round(clients[rows]).astype(int)
            sol = self._solve_all(int(key[0]), int(key[1]), float(key[2]), int(ns.max()), max_draws)
            draws[:, rows, :] = point_metrics(sol, ns, thetas[:, 1], self.ziip_eligible_fraction, int(key[1]))
        names = ("resp_ms", "tps", "cpu_total_pct", "cpu_ziip_pct", "cpu_gcp_pct",
                 "ziip_eligible_on_gcp_pct", "ziip_eligible_on_gcp_share_pct", "ziip_eligible_pct")
        columns: dict[str, np.ndarray] = {}
        rng = np.random.default_rng(self.seed + 1)
        lo_q, hi_q = self.alpha / 2, 1 - self.alpha / 2
        for mi, name in enumerate(names):
            mean = columns[name] = draws[0, :, mi]
            boot = draws[1:, :, mi]
            resid = self.residuals.get(name, np.empty(0))
            if len(resid) and len(boot):
                # a new measured point scatters around the model as the training points did; one
                # residual per draw (not per row) so a row's band does not depend on the other rows
                # asked for in the same call: the planner table and the what-if point agree
                boot = boot * np.exp(rng.choice(resid, size=(len(boot), 1), replace=True))
            if len(boot):
                lo, hi = np.quantile(boot, (lo_q, hi_q), axis=0)
                columns[f"{name}_lo"] = np.minimum(lo, mean)
                columns[f"{name}_hi"] = np.maximum(hi, mean)
            else:
                columns[f"{name}_lo"] = mean
                columns[f"{name}_hi"] = mean
        # what the pools run: GCP help is part of the solution, so these never pass 100 %
        columns["ziip_busy_pct"], columns["gcp_busy_pct"] = pool_busy_pct(columns, n_gcp, n_ziip, self._engines)
        out = pd.DataFrame(columns, index=frame.index)
        out = widen_beyond_trained(out, clients, self.train_ranges["clients"][1], self.extrapolation_spread)
        q = float(self.calibration.get("q_log_widened", 0.0)) if self.calibration else 0.0
        beyond = clients > self.train_ranges["clients"][1]
        if q > 0 and beyond.any():
            # the conformal widening the table's own rolling origins asked of the band past the data
            # (select.band_coverage): where the origins' points fell outside it, by the most they did
            out.loc[beyond, "resp_ms_lo"] = out.loc[beyond, "resp_ms_lo"] * math.exp(-q)
            out.loc[beyond, "resp_ms_hi"] = out.loc[beyond, "resp_ms_hi"] * math.exp(q)
        return out

    # the configuration keywords are the family's own, where ResultsBase takes any
    def curve(self, *, max_load: float, points: int = 60, max_draws: int | None = None,  # type: ignore[override]
              n_gcp: int | None = None, n_ziip: int | None = None,
              think_time_ms: float | None = None) -> pd.DataFrame:
        """Predictions on an even grid of clients ``1..max_load`` for one configuration.

        The configuration defaults to :meth:`default_configuration`; ``max_draws`` bounds the
        bootstrap draws behind the band (all of them by default).
        """
        cfg = self.configuration(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms)
        grid = np.unique(np.linspace(1, int(max(max_load, 2)), points).round().astype(int))
        frame = pd.DataFrame({"clients": grid, **cfg})
        return pd.concat([frame, self.predict(frame, max_draws=max_draws)], axis=1)

    def knee(self, *, k: float = KNEE_K, max_draws: int | None = None,  # type: ignore[override]
             solve_to: int = 0, n_gcp: int | None = None, n_ziip: int | None = None,
             think_time_ms: float | None = None) -> Knee:
        """The first population past ``k`` x the one-client response, and saturation ``N*``, with intervals.

        The rule is :func:`kneecap.modeling.knee.past_knee` on each draw's response by clients.
        The intervals come from at most ``max_draws`` bootstrap draws when given. Each draw is
        solved until its response has passed ``k`` times its one-client response, and at least to
        ``solve_to`` clients: a curve or point up to that many clients in the same configuration
        then reuses the solve (the estimate does not depend on it). The configuration defaults to
        :meth:`default_configuration`.
        """
        cfg = self.configuration(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms)
        n_gcp, n_ziip, think_time_ms = int(cfg["n_gcp"]), int(cfg["n_ziip"]), float(cfg["think_time_ms"])
        thetas = self._thetas(max_draws)
        # X_max is capacity / D (Dispatch.max_tps), so D_max scales with each draw's demand
        per_ms = bottleneck_demand_ms(1.0, self.ziip_eligible_fraction, n_gcp, n_ziip, self.honor_priority,
                                      **self._engines)
        d_max, d_cpu = thetas[:, 1] * per_ms, thetas[:, 1] * unloaded_cpu_per_ms(self.ziip_eligible_fraction, n_ziip,
                                                                                 self._engines)
        sats = (d_cpu + thetas[:, 0] + think_time_ms) / d_max
        # the response is at least the bottleneck bound N D_max - Z (throughput never passes
        # 1 / D_max), so it has passed k times the one-client response D + R0 by
        # N = (k (D + R0) + Z) / D_max: solve that far; further only if a draw still has not crossed
        bound = (k * (d_cpu + thetas[:, 0]) + think_time_ms) / d_max
        n_max = int(min(max(math.ceil(float(np.max(bound))) + 1, 50), 50_000))
        while True:
            sol = self._solve_all(n_gcp, n_ziip, think_time_ms, solve_to, max_draws, knee_k=k, n_bound=n_max)
            above = past_knee(sol.resp_ms[:, :n_max], sol.resp_ms[:, :1], k)
            if above.any(axis=1).all() or n_max >= 50_000:
                break
            n_max = min(n_max * 2, 50_000)
        kns = np.where(above.any(axis=1), above.argmax(axis=1) + 1.0, np.inf)
        sat_list, kn_list = list(sats), list(kns)
        lo_q, hi_q = self.alpha / 2, 1 - self.alpha / 2
        sat_b = np.array(sat_list[1:] or sat_list, dtype=float)
        kn_b = np.array(kn_list[1:] or kn_list, dtype=float)
        d_max_point = bottleneck_demand_ms(self.cpu_ms_per_tran, self.ziip_eligible_fraction, n_gcp,
                                           n_ziip, self.honor_priority, **self._engines)
        return Knee(
            load_unit="clients", k=k,
            load=float(kn_list[0]),
            load_lo=float(np.quantile(kn_b, lo_q)),
            load_hi=float(np.quantile(kn_b, hi_q)),
            saturation=float(sat_list[0]),
            saturation_lo=float(np.quantile(sat_b, lo_q)),
            saturation_hi=float(np.quantile(sat_b, hi_q)),
            max_tps=1000.0 / d_max_point if d_max_point > 0 else math.inf,
            unloaded_resp_ms=float(sol.resp_ms[0, 0]),
            configuration={"n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": think_time_ms},
        )

    def _default(self, column: str) -> float:
        configs = self.train_ranges.get("configs") or [(1, 0, 0.0)]
        idx = {"n_gcp": 0, "n_ziip": 1, "think_time_ms": 2}[column]
        return float(configs[0][idx])

    def default_configuration(self) -> dict[str, float]:
        """The first training configuration (n_gcp, n_ziip, think time): what a question starts at."""
        configs = self.train_ranges.get("configs") or [(1, 0, 0.0)]
        g, z, t = configs[0]
        return {"n_gcp": int(g), "n_ziip": int(z), "think_time_ms": float(t)}

    def configuration(self, **given: Any) -> dict[str, Any]:
        """``n_gcp``, ``n_ziip`` (whole engines) and ``think_time_ms``: those given (not None), else the default."""
        base = self.default_configuration()
        cfg = {key: given[key] if given.get(key) is not None else base[key] for key in base}
        return {"n_gcp": int(cfg["n_gcp"]), "n_ziip": int(cfg["n_ziip"]), "think_time_ms": float(cfg["think_time_ms"])}

    def clients_for_tps(self, tps: float, *, n_gcp: int, n_ziip: int, think_time_ms: float) -> int:
        """Fewest clients whose predicted throughput reaches ``tps`` (a closed workload asked by rate).

        Throughput rises with clients towards the pools' capacity, so bisection on whole clients
        finds it; a rate at or past what the configuration can carry (at
        :data:`kneecap.schema.MAX_SCENARIO_CLIENTS` clients) raises :class:`Saturated`.
        """
        most = schema.MAX_SCENARIO_CLIENTS

        def x(n: int) -> float:
            point = {"clients": float(n), "n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": think_time_ms}
            return float(predict_at(self, point, max_draws=0)["tps"])

        if tps <= 0:
            raise ModelError(f"tps must be > 0 to find the clients that give it, got {tps:g}")
        top = x(most)
        if tps >= top:
            raise Saturated(f"{tps:g} tps is more than {n_gcp} GCP + {n_ziip} zIIP carry with think time "
                            f"{think_time_ms:g} ms (at most {top:.4g} tps, at {most:,} clients)",
                            load_tps=tps, capacity_tps=top)
        lo, hi = 1, most
        if x(lo) >= tps:
            return lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if x(mid) >= tps:
                hi = mid
            else:
                lo = mid
        return hi

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any = None) -> FitReport:
        """The fit's demand, the knee of the base configuration, the observed (Kneedle) knee, the band.

        The base configuration is the one most of ``rows`` were measured in; the observed knee is
        Kneedle on its points (:func:`kneecap.modeling.knee.observed_knee`, a diagnostic); the
        structures' knees and help-rule weights, and the band's held-out coverage, are logged
        beside it.
        """
        k = knee_k
        base = base_configuration(rows)
        knee = self.knee(n_gcp=int(base["n_gcp"]), n_ziip=int(base["n_ziip"]), think_time_ms=base["think_time_ms"],
                         k=k)
        in_base = rows[(pd.to_numeric(rows.get("n_ziip"), errors="coerce").fillna(0) == base["n_ziip"])]
        observed = observed_knee(in_base["clients"].to_numpy(dtype=float),
                                 pd.to_numeric(in_base["resp_ms"], errors="coerce").to_numpy(dtype=float)) \
            if "resp_ms" in in_base else None
        metrics = {
            "cpu_ms_per_tran": self.cpu_ms_per_tran, "delay_ms": self.delay_ms,
            "ziip_eligible_fraction": self.ziip_eligible_fraction,
            "knee_saturation_clients": knee.saturation,
            "knee_saturation_clients_lo": knee.saturation_lo,
            "knee_saturation_clients_hi": knee.saturation_hi,
            "knee_k_clients": knee.load,
            "knee_k_clients_lo": knee.load_lo,
            "knee_k_clients_hi": knee.load_hi,
            "max_tps": knee.max_tps,
        }
        if observed is not None:
            metrics["observed_knee_clients"] = observed
        by_structure = self.knee_by_structure(n_gcp=int(base["n_gcp"]), n_ziip=int(base["n_ziip"]),
                                              think_time_ms=base["think_time_ms"], k=k)
        if by_structure:
            # how far apart the structures the table cannot tell apart put the knee, logged with the model
            metrics["knee_k_clients_structure_min"] = min(by_structure.values())
            metrics["knee_k_clients_structure_max"] = max(by_structure.values())
        metrics.update({f"{rule}_help_weight": w for rule, w in help_rule_weights(self.structures).items()})
        if self.calibration:
            # the band held out on the table's own later rows, logged with the model
            metrics["band_coverage_raw_pct"] = self.calibration["coverage_raw_pct"]
            metrics["band_calibration_points"] = float(self.calibration["points"])
            if "coverage_pct" in self.calibration:
                metrics["band_coverage_pct"] = self.calibration["coverage_pct"]
                metrics["band_widening_beyond_trained"] = math.exp(self.calibration["q_log_widened"])
        note = (f"knee ({base['n_gcp']} GCP, {base['n_ziip']} zIIP, Z={base['think_time_ms']:g} ms): "
                f"N* = {knee.saturation:.0f} clients [{knee.saturation_lo:.0f}, "
                f"{knee.saturation_hi:.0f}]; R > {k:g}x unloaded at {knee.load:.0f} clients "
                f"[{knee.load_lo:.0f}, {knee.load_hi:.0f}]; observed (Kneedle) "
                f"{'none' if observed is None else f'{observed:.0f}'}")
        return FitReport(metrics, [note, f"structures: {self.structure_sentence()}",
                                   f"band: {self.calibration_sentence()}"])

    def plot_groups(self, rows: pd.DataFrame) -> list[tuple[str, dict[str, Any], pd.DataFrame]]:
        """One fit plot per measured configuration, keyed ``2gcp_2ziip_z200``."""
        keyed = rows.assign(n_ziip=rows["n_ziip"].fillna(0) if "n_ziip" in rows else 0.0,
                            think_time_ms=rows["think_time_ms"].fillna(0) if "think_time_ms" in rows else 0.0)
        return [(f"{g:g}gcp_{z:g}ziip_z{t:g}", {"n_gcp": int(g), "n_ziip": int(z), "think_time_ms": float(t)}, measured)
                for (g, z, t), measured in keyed.groupby(["n_gcp", "n_ziip", "think_time_ms"])]

    def answer(self, scenario: Mapping[str, Any], policy: PlannerPolicy, *, growth: Any = None) -> dict[str, Any]:
        """Every answer of one scenario: response, knee, structures' knees, zIIP plan, years to the knee.

        The response (with band) is at ``clients``, or at the clients ``tps`` needs; the plan is
        for ``slo_resp_ms``; the years to the knee at ``growth_pct_per_year``. The configuration
        is the scenario's ``n_gcp``, ``n_ziip``, ``think_time_ms``, else the first trained one. A
        rate no population carries is ``saturated``; the knee still answers. ``growth`` is not
        used (a closed fit carries no history of peaks).
        """
        from kneecap.modeling.ziip import plan_ziip, years_to_reach  # the planner imports this module

        cfg = self.configuration(**{key: scenario.get(key) for key in ("n_gcp", "n_ziip", "think_time_ms")})
        row: dict[str, Any] = dict(cfg)
        row["model"] = self.family
        row["demand_ms_per_tran"] = self.cpu_ms_per_tran
        row["ziip_eligible_fraction"] = self.ziip_eligible_fraction
        row.update(band_calibration=self.calibration_sentence(),
                   band_coverage_raw_pct=self.calibration.get("coverage_raw_pct", math.nan),
                   band_coverage_pct=self.calibration.get("coverage_pct", math.nan))
        if scenario.get("clients") is None and scenario.get("tps") is not None:
            try:
                clients_needed = self.clients_for_tps(float(scenario["tps"]), **cfg)
            except Saturated as exc:  # no population gives the rate: the row says so, the knee still answers
                row.update(status=SATURATED, status_message=saturation_message(
                    exc.load_tps, exc.capacity_tps, cfg["n_gcp"], cfg["n_ziip"]))
            else:
                row["clients_for_tps"] = clients_needed
                scenario = {**scenario, "clients": clients_needed}
        if scenario.get("clients") is not None:
            clients = float(scenario["clients"])
            pred = predict_at(self, {**cfg, "clients": clients})
            row.update(clients=clients, **{c: float(pred[c]) for c in (
                "resp_ms", "resp_ms_lo", "resp_ms_hi", "tps", "tps_lo", "tps_hi", "ziip_busy_pct",
                "gcp_busy_pct", "ziip_eligible_on_gcp_share_pct", "ziip_eligible_on_gcp_pct")})
            row.update(extrapolation(self.train_ranges["clients"], clients, "clients",
                                     configuration=(cfg["n_gcp"], cfg["n_ziip"], cfg["think_time_ms"]),
                                     measured=self.train_ranges.get("configs")))
            caveat = latched_help_caveat(self.dispatch(cfg["n_gcp"], cfg["n_ziip"]), self.cpu_ms_per_tran,
                                         self.ziip_eligible_fraction, row["tps"], cfg["think_time_ms"],
                                         row["resp_ms"])
            if caveat is not None:
                row["model_caveat"] = caveat
        est = self.knee(k=policy.knee_k, **cfg)
        row.update(knee_clients=est.load, knee_clients_lo=est.load_lo, knee_clients_hi=est.load_hi,
                   saturation_clients=est.saturation, max_tps=est.max_tps, structures=self.structure_sentence())
        row.update(self.structure_knees(k=policy.knee_k, **cfg))
        if scenario.get("slo_resp_ms") is not None and scenario.get("clients") is not None:
            plan = plan_ziip(self, clients=float(scenario["clients"]), think_time_ms=cfg["think_time_ms"],
                             n_gcp=cfg["n_gcp"], slo_resp_ms=float(scenario["slo_resp_ms"]), policy=policy)
            row.update(slo_resp_ms=float(scenario["slo_resp_ms"]), recommended_n_ziip=plan.n_ziip,
                       recommended_n_gcp=plan.n_gcp_recommended,
                       slo_margin_ms=plan.margin_ms, recommendation=plan.reason,
                       binding_rule=plan.binding_rule, binding_sentence=plan.binding_sentence)
        if scenario.get("current_clients") is not None and scenario.get("growth_pct_per_year") is not None:
            row["years_to_knee"] = years_to_reach(float(scenario["current_clients"]), est.load,
                                                  float(scenario["growth_pct_per_year"]))
        return row

    def factor_demand(self) -> tuple[float, float]:
        """The CPU demand per transaction (ms) and zIIP-eligible share catalogue factors change."""
        return self.cpu_ms_per_tran, self.ziip_eligible_fraction

    def with_demand(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float, ratio: float) -> ClosedMVAResults:
        r"""The fit with the CPU demand :math:`D'` and eligible share a factor adjustment gives.

        Every bootstrap draw :math:`D_b` becomes :math:`D_b \cdot` ``ratio`` (:math:`D'/D`), so the
        band keeps its relative width; the fixed delay is unchanged. The training points are
        dropped: they measured the workload before the adjustment, so nothing holds the adjusted
        model to them.
        """
        d = self.to_dict()
        boot = np.array(self.boot_params, dtype=float).copy()
        boot = boot.reshape(len(boot), -1) if boot.size else np.empty((0, 2))
        boot[:, 1] *= ratio
        d.update(cpu_ms_per_tran=cpu_ms_per_tran, boot_params=boot, ziip_eligible_fraction=ziip_eligible_fraction,
                 train_points=None, ziip_eligible_source=f"{self.ziip_eligible_source}; adjusted by catalogue factors")
        return ClosedMVAResults.from_dict(d)

    def summary(self) -> str:
        """The fitted parameters, dispatch settings and training errors, one per line."""
        lines = [
            "Closed MVA (zIIP + GCP pools, fixed delay, think time)",
            f"  cpu_ms_per_tran        {self.cpu_ms_per_tran:10.4f} ms ({self.demand_source})",
            f"  delay_ms (R0)          {self.delay_ms:10.4f} ms (fitted)",
            f"  ziip_eligible_fraction {self.ziip_eligible_fraction:10.3f} ({self.ziip_eligible_source})",
            f"  honor_priority         {self.honor_priority} (ZIIPAWMT {self.help_wait_ms} ms, "
            f"{self.help_rule} help rule, GCP help fed back)",
            f"  bursts per tran        {self.eligible_bursts} eligible + {self.gcp_bursts} GCP-only",
            f"  train MAPE resp_ms     {self.train_mape.get('resp_ms', float('nan')):8.1f} %",
            f"  train MAPE tps         {self.train_mape.get('tps', float('nan')):8.1f} %",
            f"  structures             {self.structure_sentence()}",
            f"  bootstrap refits       {len(self.boot_params)}",
            f"  band held out          {self.calibration_sentence()}",
        ]
        return "\n".join(lines)

    def structure_sentence(self) -> str:
        """The dispatcher structures the band carries, with their Akaike weights."""
        return structure_sentence(self.structures, self.help_rule, self.eligible_bursts, "the table weighs")

    def knee_by_structure(self, *, n_gcp: int, n_ziip: int, think_time_ms: float, k: float = KNEE_K) -> dict:
        """Each drawn structure's own knee (clients where its point fit's response passes ``k`` x unloaded).

        Keys read ``"<rule> help, <b> bursts"``; only structures the band draws (weight at least
        :data:`MIN_STRUCTURE_WEIGHT`) are solved (:func:`point_knee_clients`), once per configuration
        and ``k``: the scenarios of one ``kneecap forecast`` run share it. Empty for a fit of one structure.
        """
        key = (n_gcp, n_ziip, think_time_ms, k)
        if key not in self._structure_knees:
            rows = [r for r in self.structures if r.get("weight", 0) >= MIN_STRUCTURE_WEIGHT]
            self._structure_knees[key] = {} if len(rows) < 2 else {
                f"{r['help_rule']} help, {r['eligible_bursts']} bursts": point_knee_clients(
                    self.cpu_ms_per_tran if self.demand_source == "measured" else r["cpu_ms_per_tran"],
                    r["delay_ms"], self.ziip_eligible_fraction,
                    self.dispatch(n_gcp, n_ziip, (r["help_rule"], r["eligible_bursts"])),
                    think_time_ms=think_time_ms, k=k, engines=self._engines) for r in rows}
        return dict(self._structure_knees[key])

    def structure_knees(self, *, n_gcp: int, n_ziip: int, think_time_ms: float, k: float) -> dict[str, Any]:
        """The knees of the dispatcher structures the fit draws, as an answer's keys.

        ``knee_clients_structure_lo`` / ``_hi`` (the lowest and highest of the structures' own
        knees, :meth:`knee_by_structure`) and ``knee_clients_by_structure`` (each named); empty
        for a fit of one structure. :data:`kneecap.forecasting.ANSWER_CHECKS` warns when they lie
        more than :data:`kneecap.forecasting.STRUCTURE_DISAGREEMENT` apart.
        """
        by_structure = self.knee_by_structure(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms, k=k)
        if not by_structure:
            return {}
        return {"knee_clients_structure_lo": min(by_structure.values()),
                "knee_clients_structure_hi": max(by_structure.values()),
                "knee_clients_by_structure": "; ".join(f"{name} {x:,.0f}" for name, x in by_structure.items())}

    def calibration_sentence(self) -> str:
        """How often the band held the table's own later rows, refitted without them."""
        c = self.calibration
        if not c:
            return "not scored (needs a measured response at 4 or more client counts)"
        level = f"{100 * (1 - self.alpha):.0f} %"
        head = (f"{c['inside']} of {c['points']} held-out point(s) inside the bootstrap {level} band "
                f"({c['coverage_raw_pct']:.0f} %) at {c['origins']} rolling origin(s) on its own rows (refitted on "
                f"the lower client counts, up to {c['x_max']:.2f}x their largest)")
        if "inside_widened" not in c:
            return (f"{head}; covering them would take x{math.exp(c['q_log']):.2f} each side, which the band is "
                    "not widened by")
        rest = (f"; widened past the trained load as the band is, {c['inside_widened']} of {c['points']} "
                f"({c['coverage_pct']:.0f} %)")
        q = c["q_log_widened"]
        return head + rest + (f", and past the trained load the band is widened x{math.exp(q):.3f} more to cover "
                              "them" if q > 0 else "")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by :meth:`from_dict`)."""
        return to_jsonable({
            "family": self.family,
            "delay_ms": self.delay_ms, "cpu_ms_per_tran": self.cpu_ms_per_tran,
            "ziip_eligible_fraction": self.ziip_eligible_fraction,
            "ziip_eligible_source": self.ziip_eligible_source,
            "demand_source": self.demand_source, "honor_priority": self.honor_priority,
            "help_wait_ms": self.help_wait_ms, "help_rule": self.help_rule,
            "eligible_bursts": self.eligible_bursts, "gcp_bursts": self.gcp_bursts,
            "alpha": self.alpha, "boot_params": self.boot_params, "residuals": self.residuals,
            "seed": self.seed, "train_mape": self.train_mape,
            "train_ranges": self.train_ranges, "n_train": self.n_train,
            **({"extrapolation_spread": self.extrapolation_spread} if self.extrapolation_spread is not None else {}),
            **({"train_points": self.train_points} if self.train_points is not None else {}),
            **({"calibration": self.calibration} if self.calibration else {}),
            **({"structures": self.structures} if self.structures else {}),
        })

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClosedMVAResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        boot = np.array(d["boot_params"], dtype=float)
        d["boot_params"] = boot if boot.ndim == 2 else boot.reshape(-1, 2)
        d["residuals"] = {k: np.array(v, dtype=float) for k, v in d["residuals"].items()}
        d["train_ranges"]["configs"] = [tuple(c) for c in d["train_ranges"]["configs"]]
        d["train_mape"] = {k: (np.nan if v is None else v) for k, v in d["train_mape"].items()}
        return cls(**d)
