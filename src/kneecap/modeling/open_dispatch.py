"""One WLM class's response on RMF intervals: open arrivals through the zIIP/GCP dispatch model.

A capacity planner's own evidence is a history of RMF intervals: per class (SMF 72.3) the
transactions ended, their mean response and the CPU split by engine type (APPL% CP, IIP, IIPCP);
per LPAR (SMF 70.1) how busy each pool was with every class's work. This module turns that history
into a response model that moves the way the LPAR does: the class's own demand, the other classes'
load on the same engines, and the engine counts, all through :mod:`kneecap.modeling.dispatch`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from kneecap.config import TrainConfig
from kneecap.modeling._open_dispatch_intervals import (
    MIN_USING_SAMPLES,
    base_lpar,
    class_intervals,
    demand_and_eligibility,
    has_interval_cpu,
    other_classes_busy,
    peak_history,
    predicted_appl,
    read_intervals,
)
from kneecap.modeling._open_dispatch_knee import KNEE_DRAWS_PER_REFIT, first_crossing, knee_draws
from kneecap.modeling._open_dispatch_scoring import (
    CPU_DELAY_TOLERANCE,
    MIN_DELAY_SAMPLES,
    MODEL_ERROR_LOG,
    SPILL_FLOOR,
    best_structure,
    bootstrap_draws,
    cpu_delay_check,
    cpu_delay_notes,
    predicted_delay_samples,
    sample_cost,
    spill_cost,
    structure_prior,
    value_counts_text,
)
from kneecap.modeling.answers import SATURATED, extrapolation, no_response, saturation_message
from kneecap.modeling.base import (
    ALPHA,
    N_BOOT,
    SEED,
    FitReport,
    ModelError,
    band_scores,
    calibration_quantile,
    column_or,
    help_rule_weights,
    mape_pct,
    predict_at,
    require_columns,
    structure_sentence,
    to_jsonable,
)
from kneecap.modeling.class_periods import merge_periods
from kneecap.modeling.dispatch import HELP_RULE, HELP_RULES, HELP_WAIT_MS, HONOR_PRIORITY, Dispatch, solve_open_rows
from kneecap.modeling.engines import answering_engines, background_scale, fit_engines, measured_engines_lines
from kneecap.modeling.family import ResultsBase
from kneecap.modeling.knee import KNEE_K, Knee
from kneecap.modeling.percentiles import class_shapes

if TYPE_CHECKING:
    from kneecap.modeling.ziip import PlannerPolicy

#: Transactions an interval must have ended to say something about queueing (params.yaml
#: ``train.open_min_transactions``): a batch class or a quiet night ends a handful.
MIN_TRANSACTIONS = TrainConfig.open_min_transactions

FAMILY = "open_dispatch"
#: Eligible dispatches per transaction the fit chooses among (ZIIPAWMT applies per queued burst,
#: and no RMF field counts them): the one whose residence fits the intervals best. Every bootstrap
#: draw chooses again, so a band carries the doubt about the count: two counts can fit a history
#: almost equally well and still put the knee hundreds of tps apart.
ELIGIBLE_BURST_CANDIDATES = (1, 2, 3, 4, 6, 8)
# points per draw on the load axis when a knee is searched; the crossing is interpolated between
_KNEE_GRID = 801

#: Fewest days of intervals before the bands are calibrated on the class's own history (train on
#: the first days, forecast the next): with 4 days, origins after days 3; with 6, after 3, 4, 5.
MIN_CALIBRATION_DAYS = 4
#: The first rolling origin: trained on at least this many days.
MIN_ORIGIN_DAYS = 3
#: Bootstrap refits behind each rolling origin's band (the final fit keeps ``n_boot``).
CALIBRATION_BOOT = 40
#: The share of each later day's intervals, busiest first, a rolling origin is scored on: the
#: peak hours, where a forecast is read.
CALIBRATION_PEAK_SHARE = 0.1

# the intervals, the structures' scoring and the knee draws live in private modules; these are the
# names this module offers
__all__ = [
    "CALIBRATION_BOOT", "CALIBRATION_PEAK_SHARE", "CPU_DELAY_TOLERANCE", "ELIGIBLE_BURST_CANDIDATES", "FAMILY",
    "KNEE_DRAWS_PER_REFIT", "MIN_CALIBRATION_DAYS", "MIN_DELAY_SAMPLES", "MIN_ORIGIN_DAYS", "MIN_TRANSACTIONS",
    "MIN_USING_SAMPLES", "MODEL_ERROR_LOG", "SPILL_FLOOR", "OpenDispatchModel", "OpenDispatchResults",
    "class_intervals", "cpu_delay_check", "cpu_delay_notes", "demand_and_eligibility", "has_interval_cpu",
    "knee_draws", "other_classes_busy", "peak_history", "sample_cost", "spill_cost"
]


@dataclass
class OpenDispatchModel:
    r"""``resp_ms = R0 + residence(tps)`` per RMF interval, the residence from the dispatch model.

    The class's CPU per transaction ``D`` and eligible share ``f`` are measured (SMF 72.3,
    :func:`demand_and_eligibility`), the other classes' busy per engine on each pool is measured
    per interval (SMF 70.1 LPAR busy minus the class's own APPL%), and every interval is solved on
    its own LPAR state with :func:`kneecap.modeling.dispatch.solve_open_rows` (M/M/c+D zIIP pool
    with GCP help fed back, priority GCP queue). What is fitted is the delay outside the CPU ``R0``
    (I/O, DB2, network), by least squares on log response, and the dispatcher's *structure*: the
    GCP-help rule (among ``help_rules``) and the eligible dispatches per transaction (among
    :data:`ELIGIBLE_BURST_CANDIDATES`), the pair whose response, share of eligible work on GCPs
    (:func:`spill_cost`) and zIIP delay samples (:func:`sample_cost`) fit best. Where the 72.3
    rows say a zIIP runs at another speed than a GCP (R723NFFS != 256, a sub-capacity processor) or
    the zIIPs ran SMT-2 (R723MCFS / 1024 > 1: :func:`~kneecap.modeling.engines.fit_engines`), ``D``
    is CP-equivalent MT-1 ms (APPL% IIP x NFFS / 256 x MCFS / 1024), the intervals are solved on
    those engines (``n_ziip`` cores of two threads in SMT-2) and the results answer on them
    (``measured_engines``).

    Bands carry three doubts. (1) The parameters': a day-block bootstrap (days resampled with
    replacement) repeats the fit, ``D``, ``f``, ``R0``. (2) The structure's: each draw takes a
    structure at random with its Akaike weight (:func:`~kneecap.modeling.base.structure_weights`) and fits it to the
    resample, so structures the history cannot tell apart share the band however far apart they
    put the knee, and one it rules out gets no draw (Buckland et al. 1997; Burnham & Anderson
    2002, ch. 4); ``structures`` lists them with their weights. (3) What both miss: with at least
    :data:`MIN_CALIBRATION_DAYS` days the fit is repeated at rolling origins (trained on the first
    days, forecasting the peak intervals of each later day) and the band is widened by the
    conformal quantile of how far those forecasts fell outside their own bands
    (:func:`calibration_quantile`); ``calibration`` reports the empirical coverage before and
    after.

    Parameters
    ----------
    honor_priority, help_wait_ms, help_rule, gcp_bursts : dispatch rules (:class:`Dispatch`).
    help_rules : the help rules the fit chooses among; ``None`` fixes ``help_rule``.
    help_rule_prior : each help rule's prior weight (``{"pool": 2}``; 1 where not named, ``None``: equal),
        the structures' share of band and point where the intervals cannot tell the rules apart.
    eligible_bursts : ``None`` chooses among the candidates; an int fixes it.
    min_transactions : intervals that ended fewer transactions are left out (their mean response
        is a handful of transactions and their CPU per transaction is mostly overhead).
    hours : ``(first, last)`` hour of day kept, ``[first, last)``; ``None`` keeps all (peak-hour fit).
    n_boot, alpha, seed : bootstrap draws, band level, random stream.
    calibrate : calibrate the band on rolling origins by day (needs ``n_boot > 0``), the percentiles' too.

    Notes
    -----
    .. math::

        R_i = R_0 + D + k_G W_G(X_i) + k_E\big(E[\min(V, \tau)] + \pi W_{help}\big)(X_i)

    (see :func:`kneecap.modeling.dispatch.cpu_residence`). The unloaded response is the
    response as ``X -> 0`` with the other classes still present.

    References
    ----------
    IBM, *z/OS RMF Report Analysis* (Workload Activity, CPU Activity); IBM, *z/OS MVS System
    Management Facilities*, record types 70 and 72; Lazowska et al. (1984), *Quantitative System
    Performance*, ch. 7 (open classes sharing a centre). Buckland, Burnham & Augustin (1997),
    "Model selection: an integral part of inference", *Biometrics* 53, 603-618. Burnham & Anderson
    (2002), *Model Selection and Multimodel Inference*, 2nd ed., Springer. Romano, Patterson
    & Candes (2019), "Conformalized quantile regression", *NeurIPS*.
    """

    honor_priority: bool = HONOR_PRIORITY
    help_wait_ms: float = HELP_WAIT_MS
    help_rule: str = HELP_RULE
    help_rules: tuple[str, ...] | None = None
    help_rule_prior: Mapping[str, float] | None = None
    eligible_bursts: int | None = None
    gcp_bursts: int = 1
    min_transactions: float = MIN_TRANSACTIONS
    hours: tuple[int, int] | None = None
    n_boot: int = N_BOOT
    alpha: float = ALPHA
    seed: int = SEED
    calibrate: bool = True

    def __post_init__(self) -> None:
        for rule in (self.help_rule, *(self.help_rules or ())):
            if rule not in HELP_RULES:
                raise ModelError(f"help rule must be one of {', '.join(HELP_RULES)}, got {rule!r}")

    def structures(self) -> tuple[tuple[int, int], ...]:
        """``(help rule index in HELP_RULES, eligible bursts)`` of every structure the fit tries."""
        rules = tuple(dict.fromkeys(self.help_rules)) if self.help_rules else (self.help_rule,)
        bursts = ELIGIBLE_BURST_CANDIDATES if self.eligible_bursts is None else (int(self.eligible_bursts),)
        return tuple((HELP_RULES.index(rule), int(k)) for rule in rules for k in bursts)

    def _rules(self, structure: tuple[int, int], engines: Mapping[str, Any]) -> Dispatch:
        return Dispatch(n_gcp=1, honor_priority=self.honor_priority, help_wait_ms=self.help_wait_ms,
                        help_rule=HELP_RULES[int(structure[0])], eligible_bursts=int(structure[1]),
                        gcp_bursts=int(self.gcp_bursts), **engines)

    def select_rows(self, table: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
        """The intervals the fit uses, and a note per filter that removed any."""
        rows = class_intervals(table)
        notes = []
        if self.min_transactions > 0:
            ended = column_or(table, "tps", np.nan) * column_or(table, "interval_s", np.nan)
            few = rows & np.isfinite(ended) & (ended < self.min_transactions)
            if few.any():
                notes.append(f"{int(few.sum())} interval(s) ended fewer than {self.min_transactions:g} "
                             "transactions: left out")
            rows &= ~few
        if self.hours is not None and "interval_start_at" in table:
            hour = pd.to_datetime(table["interval_start_at"]).dt.hour.to_numpy()
            off = rows & ~((hour >= self.hours[0]) & (hour < self.hours[1]))
            if off.any():
                notes.append(f"{int(off.sum())} interval(s) outside hours {self.hours[0]}-{self.hours[1]}: left out")
            rows &= ~off
        return rows, notes

    def fit(self, table: pd.DataFrame) -> OpenDispatchResults:
        """Fit ``R0`` and the dispatcher's structure to the intervals (``D``, ``f`` measured); bootstrap days."""
        by_period, table = table, merge_periods(table)  # a class's periods are one stream on the engines
        rows, notes = self.select_rows(table)
        if rows.sum() < 3:
            raise ModelError(f"the open dispatch model needs at least 3 intervals with tps, resp_ms, n_gcp "
                             f"and APPL% CP; {int(rows.sum())} qualify")
        iv, more = read_intervals(table, rows)
        notes += more
        d, f = demand_and_eligibility(iv)
        if not (d > 0 and math.isfinite(d)):
            raise ModelError(f"the class used no CPU in its {len(iv.tps)} intervals: no CPU demand to queue")
        # on the engines the intervals ran on (72.3 NFFS, MCFS), the demand in CP-equivalent MT-1 ms
        structures, engines = self.structures(), fit_engines(table[rows])
        rules = partial(self._rules, engines=engines)
        # the days are the independent units (their intervals share a load profile, a misfit repeats along
        # it): by interval a steep week (pool_4g3z, --ratio 1.4) weighed 3 bursts at 100 %, the knee 17.7 % low
        prior = structure_prior(structures, self.help_rule_prior)
        best, r0, sol, costs, weights = best_structure(iv, d, f, structures, rules, len(np.unique(iv.day)), prior)
        residence = sol.resp_ms[0]
        _, n_sampled = sample_cost(iv, sol.ziip_wait_ms[0], d, f)
        if n_sampled:
            ok, predicted = predicted_delay_samples(iv, sol.ziip_wait_ms[0], d, f)
            some = iv.ziip_delay_samples[ok] > 0
            notes.append(f"zIIP delay samples of {n_sampled} interval(s) chose the structure with the response; "
                         f"predicted vs measured delay samples "
                         f"{mape_pct(iv.ziip_delay_samples[ok][some], predicted[some]):.1f} % "
                         f"MAPE over the {int(some.sum())} with any")
        delay_check = cpu_delay_check(iv, sol.gcp_wait_ms[0])
        notes += cpu_delay_notes(delay_check)
        if not math.isfinite(r0):
            raise ModelError("every interval is beyond the pools' capacity for the measured CPU demand "
                             "and background: the APPL% and LPAR busy do not agree")
        saturated = ~np.isfinite(residence)
        if saturated.any():
            notes.append(f"{int(saturated.sum())} interval(s) carried more than the model's capacity for "
                         "them (measured demand + background): left out of the delay fit")
        fitted = r0 + residence
        ok = np.isfinite(fitted)
        resid = np.log(fitted[ok] / iv.resp_ms[ok])
        resid = resid - resid.mean()
        draws = bootstrap_draws(iv, structures, weights, rules, self.n_boot, self.seed)
        results = OpenDispatchResults(
            cpu_ms_per_tran=d, ziip_eligible_fraction=f, delay_ms=r0, eligible_bursts=int(best[1]),
            gcp_bursts=int(self.gcp_bursts), honor_priority=self.honor_priority,
            help_wait_ms=self.help_wait_ms, help_rule=HELP_RULES[best[0]], boot_params=draws,
            residuals=resid, alpha=self.alpha, seed=self.seed,
            train_mape={"resp_ms": mape_pct(iv.resp_ms[ok], fitted[ok])}, n_train=int(ok.sum()),
            base=base_lpar(iv), train_ranges={"tps_min": float(np.min(iv.tps)), "tps_max": float(np.max(iv.tps)),
                                               "days": int(len(np.unique(iv.day)))},
            history=peak_history(table, rows), notes=notes, cpu_delay=delay_check, measured_engines=engines,
            structures=[{"help_rule": HELP_RULES[rule], "eligible_bursts": int(k_e), "cost": float(cost),
                         "weight": float(w), "prior": float(q)}
                        for (rule, k_e), cost, w, q in zip(structures, costs, weights, prior)],
            response_shape=class_shapes(by_period, table[rows], shift_ms=r0, service_ms=d, alpha=self.alpha,
                                        held_out=self.calibrate and self.n_boot > 0))
        if self.calibrate and self.n_boot > 0:
            results.calibration = self._calibration(table, rows)
        return results

    def _calibration(self, table: pd.DataFrame, rows: np.ndarray) -> dict[str, Any]:
        """Rolling origins by day: refit on the first days, score the band on each later day's peaks.

        Returns ``{}`` with fewer than :data:`MIN_CALIBRATION_DAYS` days, else ``origins``,
        ``points``, ``coverage_raw_pct`` (share of the scored intervals inside the origins' own
        bands), ``q_log`` (:func:`calibration_quantile` of the scores, >= 0), ``coverage_pct`` (the
        same intervals inside their bands widened as :meth:`OpenDispatchResults.widening` widens),
        ``x_max`` (the farthest scored load over its origin's largest trained load) and
        ``scores`` (each point's ``(x, score)``).
        """
        if "interval_start_at" not in table:
            return {}
        day = pd.to_datetime(table["interval_start_at"]).dt.normalize()
        days = np.sort(day[rows].dropna().unique())
        if len(days) < MIN_CALIBRATION_DAYS:
            return {}
        model = replace(self, n_boot=min(self.n_boot, CALIBRATION_BOOT), calibrate=False)
        scores, inside, distance, origins = [], [], [], 0
        for k in range(MIN_ORIGIN_DAYS, len(days)):
            train = table[rows & (day <= days[k - 1]).to_numpy()]
            try:
                fitted = model.fit(train)
            except ModelError:
                continue
            origins += 1
            for later in days[k:]:
                test = table[rows & (day == later).to_numpy()]
                test = test[test["tps"] >= test["tps"].quantile(1.0 - CALIBRATION_PEAK_SHARE)]
                frame = test.drop(columns=["resp_ms"]).assign(**other_classes_busy(test))
                pred = fitted.predict(frame)
                score, within, good = band_scores(test["resp_ms"], pred["resp_ms_lo"], pred["resp_ms_hi"])
                scores.append(score)
                inside.append(within)
                distance.append(test["tps"].to_numpy(float)[good] / fitted.train_ranges["tps_max"])
        if not scores:
            return {}
        score, within, x = np.concatenate(scores), np.concatenate(inside), np.concatenate(distance)
        q = calibration_quantile(score, self.alpha)
        return {"origins": origins, "points": int(len(score)),
                "coverage_raw_pct": 100.0 * float(within.mean()), "q_log": q,
                "coverage_pct": 100.0 * float(np.mean(score <= max(q, MODEL_ERROR_LOG))), "x_max": float(x.max()),
                "scores": np.column_stack([x, score])}


@dataclass
class OpenDispatchResults(ResultsBase):
    """A fitted :class:`OpenDispatchModel`: predictions, knee and bands for one WLM class."""

    cpu_ms_per_tran: float
    ziip_eligible_fraction: float
    delay_ms: float
    eligible_bursts: int
    gcp_bursts: int
    honor_priority: bool
    help_wait_ms: float
    help_rule: str
    boot_params: np.ndarray
    residuals: np.ndarray
    alpha: float
    seed: int
    train_mape: dict[str, float]
    n_train: int
    base: dict[str, float]
    train_ranges: dict[str, float]
    history: list[list[Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: :func:`cpu_delay_check` of the fit: the model's GCP waits against the 72.3 CPU delay
    #: samples (empty where the intervals carry none)
    cpu_delay: dict[str, Any] = field(default_factory=dict)
    #: every dispatcher structure the fit tried: ``help_rule``, ``eligible_bursts``, ``cost`` on the whole
    #: history, ``prior`` (its help rule's) and ``weight`` (its Akaike weight with that prior,
    #: :func:`~kneecap.modeling.base.structure_weights`: the share of the bootstrap draws that take it)
    structures: list[dict[str, Any]] = field(default_factory=list)
    #: :meth:`OpenDispatchModel._calibration`'s result (``{}``: not calibrated)
    calibration: dict[str, Any] = field(default_factory=dict)
    #: :func:`kneecap.modeling.percentiles.class_shapes` of the intervals' 72.3 buckets (per period)
    response_shape: dict[str, Any] = field(default_factory=dict)
    #: the engines the intervals ran on where not alike or in SMT-2 (:func:`kneecap.modeling.engines.fit_engines`)
    measured_engines: dict[str, float] = field(default_factory=dict)
    family: str = FAMILY
    #: the LPAR's engine speeds when not all alike (:func:`kneecap.modeling.engines.on_engines`)
    _engines: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    load_unit: ClassVar[str] = "tps"
    pools: ClassVar[bool] = True
    targets: tuple[str, ...] = ("resp_ms", "cpu_total_pct", "cpu_gcp_pct", "cpu_ziip_pct",
                                "ziip_eligible_on_gcp_pct", "ziip_eligible_pct")

    def rules(self, eligible_bursts: int | None = None, help_rule: str | None = None) -> Dispatch:
        """The fitted dispatch rules (help, ZIIPAWMT, bursts) on a placeholder one-GCP LPAR."""
        return Dispatch(n_gcp=1, honor_priority=self.honor_priority, help_wait_ms=self.help_wait_ms,
                        help_rule=self.help_rule if help_rule is None else help_rule,
                        eligible_bursts=int(self.eligible_bursts if eligible_bursts is None else eligible_bursts),
                        gcp_bursts=self.gcp_bursts, **self.engines)

    @property
    def engines(self) -> dict[str, Any]:
        """The engines it answers on: the measured ones, and over them those :func:`on_engines` gave."""
        return answering_engines(self.measured_engines, self._engines)

    def dispatch(self, n_gcp: float, n_ziip: float, bg_gcp_busy_pct: float, bg_ziip_busy_pct: float) -> Dispatch:
        """The LPAR as a :class:`Dispatch` (the fitted burst count; capacity does not depend on it)."""
        # engine counts come as floats from :meth:`lpar`'s columns; Dispatch takes whole engines
        r = self.rules()
        return Dispatch(n_gcp=int(n_gcp), n_ziip=int(n_ziip), honor_priority=r.honor_priority,
                        help_wait_ms=r.help_wait_ms, help_rule=r.help_rule, eligible_bursts=r.eligible_bursts,
                        gcp_bursts=r.gcp_bursts, bg_gcp_busy_pct=float(bg_gcp_busy_pct),
                        bg_ziip_busy_pct=float(bg_ziip_busy_pct) if n_ziip > 0 else 0.0, **self.engines)

    def _thetas(self, max_draws: int | None = None) -> np.ndarray:
        point = np.array([[self.delay_ms, self.cpu_ms_per_tran, self.ziip_eligible_fraction, self.eligible_bursts,
                           HELP_RULES.index(self.help_rule)]])
        boot = self.boot_params if max_draws is None else self.boot_params[:max_draws]
        return np.vstack([point, boot]) if len(boot) else point

    def lpar(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        """Engines and the other classes' busy per engine for each row of ``frame``.

        Absent columns take the fitted base LPAR. The other classes are a load in engines, not a
        percentage: ``bg_gcp_busy_pct x n_gcp / 100`` busy GCPs at the base, times
        ``bg_load_factor`` (their growth, 1 by default), spread over the row's engines, so adding
        an engine lowers everyone's busy per engine; with no zIIP their zIIP-eligible work runs
        on GCPs, as the class's own does. On engines other than the measured ones it is the same work
        at their speeds, per zIIP thread in SMT-2 (:func:`~kneecap.modeling.engines.background_scale`).
        A row that gives ``bg_*_busy_pct`` itself is taken as is.
        """
        n = len(frame)
        given = {c: column_or(frame, c, np.nan) for c in
                 ("n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct", "bg_load_factor")}
        n_gcp = np.where(np.isfinite(given["n_gcp"]), given["n_gcp"], float(self.base["n_gcp"]))
        n_ziip = np.where(np.isfinite(given["n_ziip"]), given["n_ziip"], float(self.base["n_ziip"]))
        if np.any(n_gcp < 1) or np.any(n_ziip < 0):
            raise ModelError("prediction needs n_gcp >= 1 and n_ziip >= 0 on every row")
        factor = np.where(np.isfinite(given["bg_load_factor"]), given["bg_load_factor"], 1.0)
        if np.any(factor < 0):
            raise ModelError("bg_load_factor (the other classes' load relative to the base) must be >= 0")
        s_g, s_z, z_on_g = background_scale(self.measured_engines, self.engines)  # (1, 1, CF): as measured
        eng_g = factor * self.base["bg_gcp_busy_pct"] / 100.0 * self.base["n_gcp"] * s_g
        eng_z = factor * self.base["bg_ziip_busy_pct"] / 100.0 * self.base["n_ziip"] * np.ones(n)
        eng_g = eng_g + np.where(n_ziip > 0, 0.0, eng_z * z_on_g)
        bg_g = np.where(np.isfinite(given["bg_gcp_busy_pct"]), given["bg_gcp_busy_pct"], 100.0 * eng_g / n_gcp)
        bg_z = np.where(n_ziip > 0, np.where(np.isfinite(given["bg_ziip_busy_pct"]), given["bg_ziip_busy_pct"],
                                             100.0 * eng_z * s_z / np.maximum(n_ziip, 1)), 0.0)
        if np.any(bg_g < 0) or np.any(bg_z < 0):
            raise ModelError("bg_gcp_busy_pct and bg_ziip_busy_pct must be >= 0")
        return {"n_gcp": n_gcp, "n_ziip": n_ziip, "bg_gcp_busy_pct": bg_g, "bg_ziip_busy_pct": bg_z}

    def _solve(self, tps: np.ndarray, lpar: dict[str, np.ndarray], theta: np.ndarray):
        # other classes that fill a pool leave the class nothing: infinite response there
        full = (lpar["bg_gcp_busy_pct"] >= 100.0) | (lpar["bg_ziip_busy_pct"] >= 100.0)
        sol = solve_open_rows(tps, theta[1], theta[2], n_gcp=lpar["n_gcp"], n_ziip=lpar["n_ziip"],
                              bg_gcp_busy_pct=np.where(full, 0.0, lpar["bg_gcp_busy_pct"]),
                              bg_ziip_busy_pct=np.where(full, 0.0, lpar["bg_ziip_busy_pct"]),
                              dispatch=self.rules(int(theta[3]), HELP_RULES[int(theta[4])]))
        if full.any():
            sol.resp_ms[0][full] = np.inf
            sol.saturated[0][full] = True
        return sol

    def predict(self, frame: pd.DataFrame, *, max_draws: int | None = None) -> pd.DataFrame:
        """Predict each row of ``frame`` (``tps``; optional ``n_gcp``, ``n_ziip``, ``bg_*_busy_pct``).

        Returns ``resp_ms`` with ``_lo`` / ``_hi`` prediction bounds (bootstrap draws, each with a
        dispatcher structure drawn by its weight and scaled by one training residual, as a new
        interval would scatter; then widened by the calibration's ``exp(q_log)`` each side), the
        class's APPL% ``cpu_gcp_pct`` (IIPCP included), ``cpu_ziip_pct``, ``ziip_eligible_on_gcp_pct``,
        ``cpu_total_pct``,
        ``ziip_eligible_on_gcp_share_pct``, and per-engine busy of each pool with the other classes included
        (``ziip_busy_pct``, ``gcp_busy_pct``); ``saturated`` where the load exceeds a pool the
        class needs (response ``inf``).
        """
        require_columns(frame, ("tps",), "open dispatch prediction")
        tps = column_or(frame, "tps", np.nan)
        if np.any(~np.isfinite(tps)) or np.any(tps < 0):
            raise ModelError("prediction needs a finite tps >= 0 on every row")
        lpar = self.lpar(frame)
        thetas = self._thetas(max_draws)
        sols = [self._solve(tps, lpar, th) for th in thetas]
        resp = np.array([th[0] + s.resp_ms[0] for th, s in zip(thetas, sols)])
        point, d, f = sols[0], thetas[0, 1], thetas[0, 2]
        spill = point.spill_fraction[0]
        out = pd.DataFrame(index=frame.index)
        out["tps"] = tps
        out["resp_ms"] = resp[0]
        boot = resp[1:]
        if len(boot):
            if len(self.residuals):
                rng = np.random.default_rng(self.seed + 1)
                boot = boot * np.exp(rng.choice(self.residuals, size=(len(boot), 1), replace=True))
            widen = self.widening()
            with np.errstate(invalid="ignore"):
                out["resp_ms_lo"] = np.minimum(np.quantile(boot, self.alpha / 2, axis=0), out["resp_ms"]) / widen
                out["resp_ms_hi"] = np.maximum(np.quantile(boot, 1 - self.alpha / 2, axis=0), out["resp_ms"]) * widen
        else:
            out["resp_ms_lo"] = out["resp_ms_hi"] = out["resp_ms"]
        # APPL%: CPU ms per second / 10, zIIP time at the zIIPs' speed
        for col, value in predicted_appl(tps * d / 10.0, f, spill, lpar["n_ziip"], self.engines).items():
            out[col] = value
        out["ziip_busy_pct"] = np.where(lpar["n_ziip"] > 0, 100.0 * point.ziip_busy[0], np.nan)
        out["gcp_busy_pct"] = 100.0 * point.gcp_busy[0]
        out["saturated"] = point.saturated[0]
        for col in ("n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct"):
            out[col] = lpar[col]
        return out

    def max_tps(self, *, n_gcp: int | None = None, n_ziip: int | None = None,
                bg_gcp_busy_pct: float | None = None, bg_ziip_busy_pct: float | None = None,
                bg_load_factor: float | None = None) -> float:
        """Class tps at which a pool it needs is full (:meth:`Dispatch.max_tps`).

        0 when the other classes fill it.
        """
        lp = self._lpar_args(n_gcp, n_ziip, bg_gcp_busy_pct, bg_ziip_busy_pct, bg_load_factor)
        return self._max_tps(lp, self.cpu_ms_per_tran, self.ziip_eligible_fraction)

    def _max_tps(self, lp: dict[str, float], d: float, f: float) -> float:
        if lp["bg_gcp_busy_pct"] >= 100.0 or lp["bg_ziip_busy_pct"] >= 100.0:
            return 0.0
        return self.dispatch(**lp).max_tps(d, f)

    def _lpar_args(self, n_gcp, n_ziip, bg_gcp_busy_pct, bg_ziip_busy_pct, bg_load_factor=None) -> dict[str, float]:
        given = {"n_gcp": n_gcp, "n_ziip": n_ziip, "bg_gcp_busy_pct": bg_gcp_busy_pct,
                 "bg_ziip_busy_pct": bg_ziip_busy_pct, "bg_load_factor": bg_load_factor}
        row = self.lpar(pd.DataFrame([{k: (np.nan if v is None else float(v)) for k, v in given.items()}]))
        return {k: float(v[0]) for k, v in row.items()}

    def curve(self, *, max_load: float | None = None, points: int = 60, max_draws: int | None = None,
              **lpar: Any) -> pd.DataFrame:
        """Predictions on an even tps grid from near zero to ``max_load`` (95 % of saturation by default).

        ``lpar``: ``n_gcp``, ``n_ziip``, ``bg_gcp_busy_pct``, ``bg_ziip_busy_pct``, ``bg_load_factor``
        (:meth:`lpar`; the base LPAR where not given).
        """
        unknown = sorted(set(lpar) - {"n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct", "bg_load_factor",
                                      "think_time_ms"})
        if unknown:  # a misspelt keyword would otherwise leave the curve on the base LPAR, silently
            raise TypeError(f"curve() got unexpected keyword(s) {', '.join(unknown)}")
        lp = self._lpar_args(*(lpar.get(k) for k in ("n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct",
                                                      "bg_load_factor")))
        top = max_load if max_load is not None else 0.95 * self._max_tps(lp, self.cpu_ms_per_tran,
                                                                           self.ziip_eligible_fraction)
        if not top > 0:
            raise ModelError("the other classes fill a pool this class needs: no load can be carried")
        grid = np.linspace(top / points, top, points)
        frame = pd.DataFrame({"tps": grid, **{k: v for k, v in lp.items()}})
        return self.predict(frame, max_draws=max_draws)

    # the LPAR keywords are the family's own, where ResultsBase takes any
    def knee(self, *, k: float = KNEE_K, max_draws: int | None = None,  # type: ignore[override]
             n_gcp: int | None = None, n_ziip: int | None = None, bg_gcp_busy_pct: float | None = None,
             bg_ziip_busy_pct: float | None = None, bg_load_factor: float | None = None) -> Knee:
        r"""Class tps at which response first exceeds ``k`` x its unloaded response, with an interval.

        For each parameter draw the response is solved on a grid of ``801`` loads up to that draw's
        saturation tps and the first crossing of ``k R(0)`` (:func:`past_knee`) is interpolated
        linearly; ``R(0)`` is the response as the class's load goes to zero with the other classes
        still present. The point is the fitted parameters' crossing; ``load_lo`` / ``load_hi`` the
        ``alpha/2`` and ``1 - alpha/2`` quantiles over the bootstrap draws (each with its own
        dispatcher structure) of the crossings of each draw's curve times and divided by
        :meth:`widening` (the response as far off as the calibration or the model's own error
        allow, the unloaded response held). ``by_help_rule`` gives the knee of each help rule's
        bootstrap draws (median), where the structures disagree; ``draws`` the refits' knees as a
        sample for a knee date (:func:`knee_draws`). ``saturation`` and ``max_tps`` are the tps at
        which a pool the class needs is full (the interval over the draws), ``busy_pct_at_knee``
        each pool's busy per engine at the knee, from the fitted parameters; ``configuration`` the
        LPAR asked (engines and the other classes' busy per engine).
        """
        if not k > 1:
            raise ModelError(f"the knee factor k must be > 1, got {k}")
        lp = self._lpar_args(n_gcp, n_ziip, bg_gcp_busy_pct, bg_ziip_busy_pct, bg_load_factor)
        if self._max_tps(lp, self.cpu_ms_per_tran, self.ziip_eligible_fraction) <= 0:
            raise ModelError("the other classes fill a pool this class needs: there is no knee to find")
        lpar_rows = {key: np.array([float(v)]) for key, v in lp.items()}
        knees, early, late, unloaded, sats = [], [], [], [], []
        at_knee = (math.nan, math.nan)
        widen = self.widening()
        thetas = self._thetas(max_draws)
        for i, th in enumerate(thetas):
            sat = self._max_tps(lp, th[1], th[2])
            grid = sat * np.linspace(0.0, 1.0, _KNEE_GRID)[:-1]
            grid[0] = sat * 1e-9
            rows = {key: np.repeat(v, len(grid)) for key, v in lpar_rows.items()}
            sol = self._solve(grid, rows, th)
            resp = th[0] + sol.resp_ms[0]
            x = first_crossing(grid, resp, resp[0], k, sat)
            knees.append(x)
            # the draw's curve as far off as the model's error allows, its unloaded response held
            early.append(first_crossing(grid, resp * widen, resp[0], k, sat, side="lo"))
            late.append(first_crossing(grid, resp / widen, resp[0], k, sat, side="hi"))
            unloaded.append(float(resp[0]))
            sats.append(float(sat))
            if i == 0:
                near = int(np.argmin(np.abs(grid - x)))
                at_knee = (100.0 * float(sol.ziip_busy[0][near]), 100.0 * float(sol.gcp_busy[0][near]))
        boot = np.array(knees[1:] or knees)
        rule_of = thetas[1:, 4] if len(thetas) > 1 else thetas[:, 4]
        by_rule = {HELP_RULES[int(r)]: float(np.median(boot[rule_of == r])) for r in np.unique(rule_of)}
        sat_b = np.array(sats[1:] or sats)
        return Knee(load_unit="tps", k=k, load=knees[0],
                    load_lo=float(np.quantile(early[1:] or early, self.alpha / 2)),
                    load_hi=float(np.quantile(late[1:] or late, 1 - self.alpha / 2)),
                    saturation=sats[0], saturation_lo=float(np.quantile(sat_b, self.alpha / 2)),
                    saturation_hi=float(np.quantile(sat_b, 1 - self.alpha / 2)),
                    max_tps=sats[0], unloaded_resp_ms=unloaded[0], configuration=lp,
                    draws=knee_draws(boot, np.array(early[1:] or early), np.array(late[1:] or late),
                                     self.alpha, self.seed + 2),
                    by_help_rule=by_rule,
                    busy_pct_at_knee={"ziip": at_knee[0] if lp["n_ziip"] > 0 else math.nan, "gcp": at_knee[1]})

    def slo_tps(self, slo_resp_ms: float, *, lpar: Mapping[str, Any] | None = None, tol: float = 1e-4) -> float:
        """The class tps at which the predicted response reaches ``slo_resp_ms`` on the LPAR ``lpar``.

        Found by bisection; NaN when even the unloaded response is over it.
        """
        lpar = dict(lpar or {})

        def resp(x: float) -> float:
            return float(predict_at(self, {**lpar, "tps": x}, max_draws=0)["resp_ms"])

        top = self.max_tps(**{k: lpar[k] for k in ("n_gcp", "n_ziip", "bg_load_factor") if k in lpar})
        lo, hi = 1e-9 * top, top * (1 - 1e-9)
        if not top > 0 or resp(lo) > slo_resp_ms:
            return math.nan
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if resp(mid) <= slo_resp_ms:
                lo = mid
            else:
                hi = mid
            if hi - lo <= tol * top:
                break
        return lo

    def answer(self, scenario: Mapping[str, Any], policy: PlannerPolicy, *, growth: Any = None) -> dict[str, Any]:
        """A WLM class's answers: response at ``tps``, knee in tps, zIIP plan, years and dates to the knee.

        The LPAR is the class's base (engines most intervals had, the other classes' load at the
        class's peak) unless the scenario gives ``n_gcp`` / ``n_ziip``; ``bg_load_factor`` scales
        the other classes' load (1.2: they grow 20 %). With a history and ``growth`` (a function
        ``(results, knee, slo_tps) -> columns``, :func:`kneecap.forecasting.growth_answers`), the
        dates its peaks reach the knee and the SLO's load.
        """
        from kneecap.modeling.ziip import plan_ziip, years_to_reach  # the planner imports the closed family

        lpar = {k: scenario[k] for k in ("n_gcp", "n_ziip", "bg_load_factor") if scenario.get(k) is not None}
        lp = self.lpar(pd.DataFrame([lpar]) if lpar else pd.DataFrame(index=[0]))
        row: dict[str, Any] = {"model": self.family, "n_gcp": int(lp["n_gcp"][0]), "n_ziip": int(lp["n_ziip"][0]),
                               "bg_gcp_busy_pct": float(lp["bg_gcp_busy_pct"][0]),
                               "bg_ziip_busy_pct": float(lp["bg_ziip_busy_pct"][0]),
                               "demand_ms_per_tran": self.cpu_ms_per_tran,
                               "ziip_eligible_fraction": self.ziip_eligible_fraction}
        if scenario.get("clients") is not None:
            raise ModelError(f"{self.family} models a WLM class's arrival rate: give tps, not clients")
        saturated = False
        if scenario.get("tps") is not None:
            pred = predict_at(self, {**lpar, "tps": float(scenario["tps"])})
            row.update(**{c: float(pred[c]) for c in ("tps", "resp_ms", "resp_ms_lo", "resp_ms_hi", "ziip_busy_pct",
                                                        "gcp_busy_pct", "ziip_eligible_on_gcp_share_pct",
                                                        "ziip_eligible_on_gcp_pct")})
            trained = (self.train_ranges["tps_min"], self.train_ranges["tps_max"])
            row.update(extrapolation(trained, float(scenario["tps"]), "tps"))
            saturated = bool(pred["saturated"]) or not math.isfinite(row["resp_ms"])
        est = self.knee(k=policy.knee_k, **{k: lpar[k] for k in lpar})
        if saturated:  # the plan below may still find engines that carry it
            row.update(no_response(), status=SATURATED, status_message=saturation_message(
                float(scenario["tps"]), est.max_tps, row["n_gcp"], row["n_ziip"]))
        row.update(knee_tps=est.load, knee_tps_lo=est.load_lo, knee_tps_hi=est.load_hi,
                   max_tps=est.max_tps, unloaded_resp_ms=est.unloaded_resp_ms,
                   ziip_busy_pct_at_knee=est.busy_pct_at_knee["ziip"],
                   gcp_busy_pct_at_knee=est.busy_pct_at_knee["gcp"])
        row.update(structures=self.structure_sentence(), band_calibration=self.calibration_sentence(),
                   band_coverage_raw_pct=self.calibration.get("coverage_raw_pct", math.nan),
                   band_coverage_pct=self.calibration.get("coverage_pct", math.nan),
                   **{f"knee_tps_{rule}_help": value for rule, value in est.by_help_rule.items()})
        if scenario.get("slo_resp_ms") is not None and scenario.get("tps") is not None:
            plan = plan_ziip(self, tps=float(scenario["tps"]), n_gcp=row["n_gcp"],
                             slo_resp_ms=float(scenario["slo_resp_ms"]), policy=policy,
                             lpar={k: lpar[k] for k in ("bg_load_factor",) if k in lpar})
            row.update(slo_resp_ms=float(scenario["slo_resp_ms"]), recommended_n_ziip=plan.n_ziip,
                       recommended_n_gcp=plan.n_gcp_recommended, slo_margin_ms=plan.margin_ms,
                       recommendation=plan.reason, binding_rule=plan.binding_rule,
                       binding_sentence=plan.binding_sentence)
        if scenario.get("current_tps") is not None and scenario.get("growth_pct_per_year") is not None:
            row["years_to_knee"] = years_to_reach(float(scenario["current_tps"]), est.load,
                                                  float(scenario["growth_pct_per_year"]))
        if self.history and growth is not None:
            at_slo = (self.slo_tps(float(scenario["slo_resp_ms"]), lpar=lpar)
                      if scenario.get("slo_resp_ms") is not None else None)
            row.update(growth(self, est, at_slo))
        return row

    def inputs_of(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Each measured interval on its own LPAR state: the other classes it competed with.

        (:func:`other_classes_busy`.)
        """
        return rows.assign(**other_classes_busy(rows))

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any = None) -> FitReport:
        """Knee of the class on its base LPAR (engines and other classes' busy at the class's peak), the band."""
        k = knee_k
        knee = self.knee(k=k)
        metrics = {"cpu_ms_per_tran": self.cpu_ms_per_tran, "delay_ms": self.delay_ms,
                   "ziip_eligible_fraction": self.ziip_eligible_fraction,
                   "eligible_bursts": float(self.eligible_bursts),
                   "knee_tps": knee.load, "knee_tps_lo": knee.load_lo, "knee_tps_hi": knee.load_hi,
                   "max_tps": knee.max_tps, "unloaded_resp_ms": knee.unloaded_resp_ms,
                   "ziip_busy_pct_at_knee": knee.busy_pct_at_knee["ziip"],
                   "gcp_busy_pct_at_knee": knee.busy_pct_at_knee["gcp"],
                   **{f"knee_tps_{rule}_help": value for rule, value in knee.by_help_rule.items()},
                   "band_widening": self.widening(),
                   **{f"help_rule_{rule}_weight": w for rule, w in help_rule_weights(self.structures).items()}}
        if self.calibration:
            # the empirical coverage of the band on the class's own later days, logged with the model
            metrics.update(band_coverage_raw_pct=self.calibration["coverage_raw_pct"],
                           band_coverage_pct=self.calibration["coverage_pct"],
                           band_calibration_points=float(self.calibration["points"]))
        lpar = knee.configuration
        note = (f"knee ({lpar['n_gcp']:g} GCP, {lpar['n_ziip']:g} zIIP, other classes "
                f"{lpar['bg_gcp_busy_pct']:.0f} % / {lpar['bg_ziip_busy_pct']:.0f} % busy)"
                f": R > {k:g}x unloaded ({knee.unloaded_resp_ms:.3g} ms) at "
                f"{knee.load:.4g} tps [{knee.load_lo:.4g}, {knee.load_hi:.4g}]; saturation "
                f"{knee.max_tps:.4g} tps; measured up to {self.train_ranges['tps_max']:.4g} tps")
        return FitReport(metrics, [note, f"structures: {self.structure_sentence()}",
                                   f"band: {self.calibration_sentence()}"])

    def factor_demand(self) -> tuple[float, float] | None:
        """None: catalogue factors adjust a closed fit's demand, not a class's measured one."""
        return None

    def with_demand(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float, ratio: float) -> Any:
        """Never called (:meth:`factor_demand` is None)."""
        raise ModelError("a WLM class's CPU demand is measured: catalogue factors do not adjust it")

    def summary(self) -> str:
        """The measured and fitted parameters, base LPAR and training errors, one per line."""
        b = self.base
        lines = [
            "Open dispatch model (one WLM class on RMF intervals; zIIP + GCP pools with the other classes)",
            f"  cpu_ms_per_tran        {self.cpu_ms_per_tran:10.4f} ms (measured, SMF 72.3)",
            f"  ziip_eligible_fraction {self.ziip_eligible_fraction:10.3f} (measured: (IIP + IIPCP) / (CP + IIP))",
            f"  delay_ms (R0)          {self.delay_ms:10.4f} ms (fitted)",
            f"  eligible bursts        {self.eligible_bursts} per transaction (chosen by fit) + "
            f"{self.gcp_bursts} GCP-only",
            f"  base LPAR              {b['n_gcp']} GCP + {b['n_ziip']} zIIP; other classes at peak "
            f"{b['bg_gcp_busy_pct']:.1f} % per GCP, {b['bg_ziip_busy_pct']:.1f} % per zIIP",
            f"  intervals              {self.n_train} over {self.train_ranges.get('days', 0)} day(s), "
            f"{self.train_ranges['tps_min']:.4g}-{self.train_ranges['tps_max']:.4g} tps",
            f"  train MAPE resp_ms     {self.train_mape.get('resp_ms', float('nan')):8.1f} %",
            f"  bootstrap refits       {len(self.boot_params)} (days resampled; burst counts chosen "
            f"{value_counts_text(self.boot_params[:, 3])})",
            f"  structures             {self.structure_sentence()}",
            *measured_engines_lines(self.measured_engines),
            f"  band calibration       {self.calibration_sentence()}",
        ]
        c = self.cpu_delay
        if c:
            lines.append(f"  CPU delay (R723CCDE)   model {c['model_ms_per_tran']:.4g} vs measured "
                         f"{c['measured_ms_per_tran']:.4g} ms/tran over {c['intervals']} interval(s), measured/model "
                         f"{c['ratio']:.2f} (busiest tenth {c['peak_ratio']:.2f})"
                         + ("; CONTRADICTS the model (note below)" if c["flagged"] else "; a check, not fitted"))
        return "\n".join(lines + [f"  note: {n}" for n in self.notes])

    def widening(self) -> float:
        """The factor each band is widened by on each side: the calibration's or the model's own error.

        ``exp(max(q_log, MODEL_ERROR_LOG))``: the history's rolling origins score the forecasts
        at the loads it reached (:meth:`OpenDispatchModel._calibration`); the dispatch model's error
        against its simulation (:data:`MODEL_ERROR_LOG`) stands for the loads it has not reached.
        """
        return math.exp(max(self.calibration.get("q_log", 0.0), MODEL_ERROR_LOG))

    def structure_sentence(self) -> str:
        """The dispatcher structures the band carries, with their Akaike weights."""
        return structure_sentence(self.structures, self.help_rule, self.eligible_bursts, "the intervals weigh")

    def calibration_sentence(self) -> str:
        """How the band was calibrated on the class's own history, and what it covered."""
        c = self.calibration
        if not c:
            return (f"not calibrated (needs {MIN_CALIBRATION_DAYS} days of intervals): the band carries the "
                    f"parameters' and the structure's doubt, widened x{self.widening():.3f} for the dispatch "
                    "model's own error against its simulation")
        return (f"{c['points']} peak interval(s) of later days forecast from {c['origins']} rolling origin(s) "
                f"(up to {c['x_max']:.2f}x the trained load): {c['coverage_raw_pct']:.0f} % inside the "
                f"uncalibrated {100 * (1 - self.alpha):.0f} % band, {c['coverage_pct']:.0f} % after widening it "
                f"x{math.exp(c['q_log']):.3f} each side; the band is widened x{self.widening():.3f} (at least "
                f"the dispatch model's own error against its simulation)")

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by :meth:`from_dict`)."""
        return to_jsonable({
            "family": self.family, "cpu_ms_per_tran": self.cpu_ms_per_tran,
            "ziip_eligible_fraction": self.ziip_eligible_fraction, "delay_ms": self.delay_ms,
            "eligible_bursts": self.eligible_bursts, "gcp_bursts": self.gcp_bursts,
            "honor_priority": self.honor_priority, "help_wait_ms": self.help_wait_ms,
            "help_rule": self.help_rule, "boot_params": self.boot_params, "residuals": self.residuals,
            "alpha": self.alpha, "seed": self.seed, "train_mape": self.train_mape, "n_train": self.n_train,
            "base": self.base, "train_ranges": self.train_ranges, "history": self.history,
            "notes": self.notes, "cpu_delay": self.cpu_delay, "structures": self.structures,
            "calibration": self.calibration, "response_shape": self.response_shape,
            **({"measured_engines": self.measured_engines} if self.measured_engines else {}),
        })

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpenDispatchResults:
        """The fit from its stored document (:meth:`to_dict`)."""
        d = dict(d)
        d.pop("family", None)
        boot = np.array(d["boot_params"], dtype=float)
        if boot.size and boot.reshape(len(boot), -1).shape[1] == 4:  # stored before the help rule was drawn
            boot = np.column_stack([boot, np.full(len(boot), HELP_RULES.index(d["help_rule"]))])
        d["boot_params"] = boot.reshape(-1, 5)
        if "scores" in d.get("calibration", {}):
            scores = np.array(d["calibration"]["scores"], dtype=float).reshape(-1, 2)
            d["calibration"] = {**d["calibration"], "scores": scores}
        d["residuals"] = np.array(d["residuals"], dtype=float)
        d["train_mape"] = {k: (np.nan if v is None else v) for k, v in d["train_mape"].items()}
        return cls(**d)
