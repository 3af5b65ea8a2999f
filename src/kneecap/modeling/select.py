"""Which model a table gets, chosen by cross-validation on its training rows.

* clients vary (closed workload): exact MVA (:mod:`~kneecap.modeling.closed`). With zero think
  time and no zIIPs, the USL, Amdahl's law (the USL with no coherency term) and closed MVA with
  c servers + delay are combined, weighted by their rolling-origin error on the training rows
  (:mod:`~kneecap.modeling.combine`); at fewer than four loads, the simplest family the points
  determine (the USL at three, Amdahl at two), flagged ``few_points`` with a band from the
  stated measurement noise. With zero think time and zIIPs the USL competes with the dispatch
  model and leave-one-out error decides. Where the table lacks what MVA needs (``n_gcp``) the
  USL answers alone.
* no clients, only ``tps`` and ``resp_ms`` (open workload, e.g. a WLM class's RMF intervals): the
  open dispatch model (:mod:`~kneecap.modeling.open_dispatch`) where APPL% CP and the GCP count are
  measured, competing with M/M/c and M/M/c with a capacity of its own (``open_mmc_capacity``,
  :mod:`~kneecap.modeling.open`) on the last quarter of the intervals in time order (fitted on
  the first three quarters): a forecast is always of later load. With too few rows to hold out,
  the two M/M/c families are chosen by AICc.
* clients constant, configurations differ (e.g. transports): OLS of ``tps`` on the factors, response
  by Little's law.
* CPU cost: :class:`~kneecap.modeling.cost.CostModel` (its own leave-one-out choice of design).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import LeaveOneOut

from kneecap.config import TrainConfig
from kneecap.modeling import combine
from kneecap.modeling.base import (
    ALPHA,
    N_BOOT,
    SEED,
    ModelError,
    band_scores,
    calibration_quantile,
    column_or,
    mape_pct,
    widen_beyond_trained,
)
from kneecap.modeling.closed import ClosedMVAModel, ClosedMVAResults, MultiServerMVAModel
from kneecap.modeling.combine import CombinedModel
from kneecap.modeling.cost import CostModel, cost_table
from kneecap.modeling.dispatch import HELP_RULES
from kneecap.modeling.open import OpenMMcModel, OpenMMcResults
from kneecap.modeling.open_dispatch import OpenDispatchModel, OpenDispatchResults, has_interval_cpu
from kneecap.modeling.usl import FEW_POINTS, USLModel, USLResults

RESPONSE_TARGETS = ("resp_ms", "tps")
COST_TARGETS = ("cpu_ms_per_tran", "cpu_total_pct")


@dataclass(frozen=True)
class ModelingConfig:
    """Knobs every fit shares (from params.yaml ``common`` and ``train``)."""

    alpha: float = ALPHA
    seed: int = SEED
    n_boot: int = N_BOOT
    ziip_eligible_fraction: float = ClosedMVAModel.ziip_eligible_fraction
    honor_priority: bool = ClosedMVAModel.honor_priority
    help_wait_ms: float = ClosedMVAModel.help_wait_ms
    help_rule: str = ClosedMVAModel.help_rule
    eligible_bursts: int = ClosedMVAModel.eligible_bursts
    gcp_bursts: int = ClosedMVAModel.gcp_bursts
    max_cv_error_pct: float = CostModel.max_cv_error_pct
    open_min_transactions: float = OpenDispatchModel.min_transactions
    open_hours: tuple[int, int] | None = None
    open_help_rules: tuple[str, ...] = HELP_RULES
    #: each help rule's prior weight where a WLM class's intervals cannot tell the rules apart
    open_help_rule_prior: tuple[tuple[str, float], ...] = ()
    #: the dispatcher structures a closed table's champion weighs (help rule x eligible bursts);
    #: the cross-validation and rolling-origin refits use ``help_rule`` / ``eligible_bursts`` alone
    closed_help_rules: tuple[str, ...] = HELP_RULES
    closed_eligible_bursts: tuple[int, ...] = TrainConfig.closed_eligible_bursts
    combine_min_loads: int = combine.MIN_LOADS
    combine_weight_power: float = combine.WEIGHT_POWER
    usl_method: str = USLModel.method


@dataclass
class Choice:
    """The chosen model plus the cross-validated table of every candidate."""

    family: str
    results: Any
    competitors: pd.DataFrame


def response_kind(train: pd.DataFrame) -> str:
    """``closed``, ``open`` or ``configurations`` from the columns and values present."""
    clients = column_or(train, "clients", np.nan)
    has_clients = np.isfinite(clients).any()
    if has_clients and len(np.unique(clients[np.isfinite(clients)])) >= 2:
        return "closed"
    if has_clients:
        return "configurations"
    if np.isfinite(column_or(train, "tps", np.nan)).any() and np.isfinite(column_or(train, "resp_ms", np.nan)).any():
        return "open"
    raise ModelError("no response model fits this table: it needs clients, or tps with resp_ms")


def _closed(config: ModelingConfig, n_boot: int | None = None, *, structures: bool = False) -> ClosedMVAModel:
    # the champion weighs every structure; the many refits that score a family (leave-one-out,
    # rolling origins) keep the configured one, each structure costing a fit of its own
    return ClosedMVAModel(ziip_eligible_fraction=config.ziip_eligible_fraction,
                          honor_priority=config.honor_priority, help_wait_ms=config.help_wait_ms,
                          help_rule=config.help_rule, eligible_bursts=config.eligible_bursts,
                          gcp_bursts=config.gcp_bursts,
                          help_rules=tuple(config.closed_help_rules) if structures else None,
                          burst_options=tuple(config.closed_eligible_bursts) if structures else None,
                          n_boot=config.n_boot if n_boot is None else n_boot,
                          alpha=config.alpha, seed=config.seed)


def _open_dispatch(config: ModelingConfig, n_boot: int | None = None) -> OpenDispatchModel:
    # eligible dispatches are chosen by the fit: RMF intervals spanning a day's load say more about
    # them than the seed tables behind the configured count
    return OpenDispatchModel(honor_priority=config.honor_priority, help_wait_ms=config.help_wait_ms,
                             help_rule=config.help_rule, help_rules=config.open_help_rules,
                             help_rule_prior=dict(config.open_help_rule_prior) or None,
                             eligible_bursts=None, gcp_bursts=config.gcp_bursts,
                             min_transactions=config.open_min_transactions, hours=config.open_hours,
                             n_boot=config.n_boot if n_boot is None else n_boot, alpha=config.alpha,
                             seed=config.seed)


def _holdout(train: pd.DataFrame, make) -> float:
    """Response MAPE on the last quarter of the rows in time order, fitted on the rest.

    NaN when there are too few rows or the fit fails; ``inf`` when the fit calls a held-out load
    it was measured carrying past its capacity (a saturated prediction is refuted by the
    measurement, and leaving the row out would score the family on the rows it got right).
    """
    if len(train) < 8:
        return float("nan")
    order = (np.argsort(pd.to_datetime(train["interval_start_at"]).to_numpy(), kind="stable")
             if "interval_start_at" in train and train["interval_start_at"].notna().all() else np.arange(len(train)))
    cut = int(round(0.75 * len(train)))
    fit_rows, test_rows = train.iloc[order[:cut]], train.iloc[order[cut:]]
    try:
        res = make().fit(fit_rows)
        pred = res.predict(test_rows.drop(columns=["resp_ms"]))
    except ModelError:
        return float("nan")
    actual = test_rows["resp_ms"].to_numpy(dtype=float)
    got = pred["resp_ms"].to_numpy(dtype=float)
    if np.any(np.isfinite(actual) & np.isinf(got)):
        return float("inf")
    ok = np.isfinite(actual) & np.isfinite(got)
    return mape_pct(actual[ok], got[ok]) if ok.sum() else float("nan")


def _aicc(train: pd.DataFrame, make) -> float:
    r"""Small-sample AIC of an open family's fit of log response on all the rows.

    .. math:: \mathrm{AIC_c} = n \log(\mathrm{RSS} / n) + 2k + \frac{2k(k + 1)}{n - k - 1}

    with ``k`` the fitted parameters plus the server count; ``inf`` where ``n <= k + 1`` or the
    fit fails. What chooses between nested open families with too few rows for a holdout
    (Hurvich, C. M. and Tsai, C.-L. (1989), "Regression and time series model selection in small
    samples", *Biometrika* 76(2); Burnham, K. P. and Anderson, D. R. (2002), *Model Selection
    and Multimodel Inference*, 2nd ed., §2.4).
    """
    try:
        res = make().fit(train)
        pred = res.predict(train.drop(columns=["resp_ms"]))["resp_ms"].to_numpy(dtype=float)
    except ModelError:
        return float("inf")
    actual = column_or(train, "resp_ms", np.nan)
    ok = np.isfinite(actual) & np.isfinite(pred) & (actual > 0) & (pred > 0)
    n, k = int(ok.sum()), int(res.n_params)
    if n <= k + 1:
        return float("inf")
    rss = max(float(np.sum(np.log(pred[ok] / actual[ok]) ** 2)), 1e-300)
    return n * np.log(rss / n) + 2 * k + 2 * k * (k + 1) / (n - k - 1)


#: Where the rolling origin cuts the training loads (share of the distinct loads fitted on): three
#: refits, each predicting the loads above its cut, as a forecast predicts beyond the data.
EXTRAPOLATION_ORIGINS = (0.5, 0.67, 0.83)


def extrapolation_spread(train: pd.DataFrame, make, load: str, targets: tuple[str, ...]) -> dict[str, float] | None:
    r"""How fast a family's error grows with extrapolation, measured on its own training rows.

    Each origin fits ``make()`` on the rows at or below a cut of the distinct loads
    (:data:`EXTRAPOLATION_ORIGINS`) and predicts the rows above it, at load ratio
    :math:`x = L / L_{cut} > 1`, keeping the absolute log errors :math:`e = |\log(\hat y / y)|`.
    With :math:`e` half-normal of standard deviation :math:`s \log x`, least squares through
    the origin gives :math:`\hat s = \sqrt{\pi / 2} \, \sum e \log x / \sum (\log x)^2`, the
    spread :func:`kneecap.modeling.base.widen_beyond_trained` widens the band by past the data,
    per target (throughput extrapolates far better than response). None with fewer than four
    distinct loads; a target with fewer than two scored points is left out (its band not widened).

    The rolling origin is the forecaster's own evaluation of extrapolation (Tashman 2000,
    "Out-of-sample tests of forecasting accuracy", *Int. J. Forecasting* 16); measuring it on the
    training rows alone keeps held-out data out of the band.
    """
    if load not in train:
        return None
    values = pd.to_numeric(train[load], errors="coerce").to_numpy(dtype=float)
    loads = np.unique(values[np.isfinite(values)])
    if len(loads) < 4:
        return None
    log_x: dict[str, list[float]] = {t: [] for t in targets}
    err: dict[str, list[float]] = {t: [] for t in targets}
    for share in EXTRAPOLATION_ORIGINS:
        cut = float(loads[max(int(np.ceil(share * len(loads))) - 1, 2)])
        fit_rows, test_rows = train[values <= cut], train[values > cut]
        if test_rows.empty:
            continue
        try:
            pred = make().fit(fit_rows).predict(test_rows.drop(columns=[t for t in targets if t in test_rows]))
        except ModelError:
            continue
        ratio = values[values > cut] / cut
        for target in targets:
            if target not in test_rows or target not in pred:
                continue
            actual = pd.to_numeric(test_rows[target], errors="coerce").to_numpy(dtype=float)
            got = pred[target].to_numpy(dtype=float)
            ok = np.isfinite(actual) & np.isfinite(got) & (actual > 0) & (got > 0)
            log_x[target].extend(np.log(ratio[ok]))
            err[target].extend(np.abs(np.log(got[ok] / actual[ok])))
    spread = {}
    for target in targets:
        lx, e = np.array(log_x[target]), np.array(err[target])
        if len(e) >= 2:
            spread[target] = float(np.sqrt(np.pi / 2) * np.sum(lx * e) / np.sum(lx * lx))
    return spread or None


#: Bootstrap refits behind each rolling origin's band when a table's band is scored.
COVERAGE_BOOT = 40


def band_coverage(train: pd.DataFrame, make, load: str, *, target: str = "resp_ms",
                  alpha: float = ALPHA, spread: dict[str, float] | None = None) -> dict[str, Any]:
    r"""The band held out on the table's own rows: how often it held the loads it was not fitted on.

    At each rolling origin (:func:`kneecap.modeling.combine.rolling_origin_predictions`: fitted
    on the rows at or below a distinct load, from the third) ``make()``, a model with a bootstrap
    band, predicts every row above the cut; a point is inside when its measured ``target`` lies in
    that origin's band. The score of a point is how far outside it fell on the log scale,
    :math:`\max(\log(lo / y), \log(y / hi))`, and ``q_log`` the conformal quantile of the scores
    (:func:`kneecap.modeling.base.calibration_quantile`): the widening that would have made the
    origins' bands cover at ``1 - alpha``.

    The champion's band is wider than a bootstrap band past its largest trained load, by
    :func:`kneecap.modeling.base.widen_beyond_trained` with the table's extrapolation ``spread``.
    Given that spread, each origin's band is widened the same way past its own cut and scored
    again: ``inside_widened`` and ``coverage_pct`` say how the band as the champion draws it held,
    and ``q_log_widened``, the conformal quantile of those scores, is what the champion's band past
    its trained load is widened by further (:meth:`kneecap.modeling.closed.ClosedMVAResults.predict`),
    so it would have covered the origins' points. The spread is measured on the same rows (no
    held-out rows are left for it), which this cannot correct: the widened coverage is an
    optimistic reading where the raw one is a pessimistic one (origins fitted on fewer points
    extrapolate further than the champion).

    Returns
    -------
    dict
        ``{}`` when no origin can be scored, else ``origins``, ``points``, ``inside``,
        ``coverage_raw_pct``, ``q_log``, ``x_max`` (the farthest held-out load over its cut) and,
        with ``spread``, ``inside_widened``, ``coverage_pct``, ``q_log_widened``.
    """
    values = pd.to_numeric(train[load], errors="coerce").to_numpy(dtype=float)
    scores, inside, ratio, widened, origins = [], [], [], [], 0
    for cut, actual, pred in combine.rolling_origin_predictions(train, make, load=load, target=target,
                                                                hide=RESPONSE_TARGETS):
        score, within, ok = band_scores(actual, pred[f"{target}_lo"], pred[f"{target}_hi"])
        if not ok.any():
            continue
        origins += 1
        scores.append(score)
        inside.append(within)
        ratio.append(values[values > cut][ok] / cut)
        if spread:
            wide = widen_beyond_trained(pred[[target, f"{target}_lo", f"{target}_hi"]].copy(),
                                        values[values > cut], cut, {target: spread[target]} if target in spread
                                        else None)
            widened.append(band_scores(actual, wide[f"{target}_lo"], wide[f"{target}_hi"])[0])
    if not origins:
        return {}
    score, within = np.concatenate(scores), np.concatenate(inside)
    out = {"origins": origins, "points": int(len(score)), "inside": int(within.sum()),
           "coverage_raw_pct": 100.0 * float(within.mean()), "q_log": calibration_quantile(score, alpha),
           "x_max": float(np.concatenate(ratio).max())}
    if spread:
        wide_score = np.concatenate(widened)
        out.update(inside_widened=int((wide_score <= 0).sum()),
                   coverage_pct=100.0 * float((wide_score <= 0).mean()),
                   q_log_widened=calibration_quantile(wide_score, alpha))
    return out


def _with_spread(res: Any, train: pd.DataFrame, make, load: str, targets: tuple[str, ...]) -> Any:
    spread = extrapolation_spread(train, make, load, targets)
    if spread is not None:
        res.extrapolation_spread = spread
    return res


def _loo(train: pd.DataFrame, make, targets: tuple[str, ...]) -> float:
    """Mean over targets of the leave-one-out MAPE; NaN when a fold cannot be fitted."""
    errors: dict[str, list[float]] = {t: [] for t in targets}
    for fit_rows, (i,) in LeaveOneOut().split(train):
        fold = train.iloc[fit_rows]
        try:
            res = make().fit(fold)
        except ModelError:
            return float("nan")
        pred = res.predict(train.iloc[[i]])
        for t in targets:
            if t in pred.columns and t in train.columns and np.isfinite(train[t].iloc[i]):
                errors[t].append(mape_pct(train[t].iloc[[i]].to_numpy(), pred[t].to_numpy()))
    per_target = [float(np.mean(v)) for v in errors.values() if v]
    return float(np.mean(per_target)) if per_target else float("nan")


def choose_response_model(train: pd.DataFrame, config: ModelingConfig) -> Choice:
    """Fit the response-time/throughput model the table supports, choosing by leave-one-out CV."""
    kind = response_kind(train)
    if kind == "open":
        # intervals that ended a handful of transactions (a batch class, a quiet night) say nothing
        # about queueing: both candidates fit the same busy intervals
        ended = column_or(train, "tps", np.nan) * column_or(train, "interval_s", np.nan)
        train = train[~(np.isfinite(ended) & (ended < config.open_min_transactions))]
        if len(train) < 3:
            raise ModelError(f"fewer than 3 intervals ended {config.open_min_transactions:g} transactions or more: "
                             "no response model")
        # M/M/c, and M/M/c with a capacity of its own: the second reads the capacity from a rise
        # that M/M/c, its capacity tied to its service time, can only draw as a pole at the data
        makers: dict[str, Callable[[], OpenMMcModel | OpenDispatchModel]] = {
            "open_mmc": lambda: OpenMMcModel(n_boot=0, alpha=config.alpha),
            "open_mmc_capacity": lambda: OpenMMcModel(n_boot=0, alpha=config.alpha, fit_capacity=True)}
        if has_interval_cpu(train):
            makers["open_dispatch"] = lambda: _open_dispatch(config, n_boot=0)
        comp = pd.DataFrame([{"family": fam, "holdout_mape_pct": _holdout(train, make)}
                             for fam, make in makers.items()])
        finite = comp[np.isfinite(comp["holdout_mape_pct"])]
        if len(finite):
            family = str(finite.sort_values("holdout_mape_pct", kind="stable")["family"].iloc[0])
        elif "open_dispatch" in makers:
            # with no score to compare, the model that uses the measured CPU split and LPAR busy wins
            family = "open_dispatch"
        else:
            # too few rows to hold any out: the nested M/M/c families by AICc (M/M/c on a tie)
            comp["aicc"] = [_aicc(train, makers[f]) for f in comp["family"]]
            family = str(comp.sort_values("aicc", kind="stable")["family"].iloc[0])
        comp["chosen"] = comp["family"] == family
        res: OpenDispatchResults | OpenMMcResults
        if family == "open_dispatch":
            res = _open_dispatch(config).fit(train)
        else:
            mmc = OpenMMcModel(n_boot=min(config.n_boot, 100), alpha=config.alpha, seed=config.seed,
                               fit_capacity=family == "open_mmc_capacity")
            res = _with_spread(mmc.fit(train), train, makers[family], "tps", ("resp_ms",))
        return Choice(family, res, comp)
    if kind == "configurations":
        model = CostModel(alpha=config.alpha, target="tps", max_cv_error_pct=config.max_cv_error_pct)
        cost = model.fit(train)
        comp = cost.competitors.assign(family="factor_ols", chosen=False)
        return Choice("factor_ols", cost, comp)
    think = column_or(train, "think_time_ms", 0.0)
    zero_think = bool(np.all(think == 0) and np.isfinite(column_or(train, "tps", np.nan)).sum() >= 4)
    if np.all(think == 0) and not np.any(column_or(train, "n_ziip", 0.0) > 0):
        if len(_measured_loads(train)) < FEW_POINTS:
            return _few_points_closed(train, config)
        if zero_think:
            return _combined_closed(train, config)
    candidates: dict[str, Callable[[], ClosedMVAModel | USLModel]] = {"closed_mva": lambda: _closed(config, n_boot=0)}
    if zero_think:
        candidates["usl"] = lambda: _usl(config, n_boot=0)
    rows = []
    for family, make in candidates.items():
        score = _loo(train, make, RESPONSE_TARGETS) if len(candidates) > 1 and len(train) >= 4 else float("nan")
        rows.append({"family": family, "loo_mape_pct": score})
    comp = pd.DataFrame(rows)
    finite = comp[np.isfinite(comp["loo_mape_pct"])]
    first = str(finite.sort_values("loo_mape_pct")["family"].iloc[0]) if len(finite) else "closed_mva"
    # the USL needs only (clients, tps): where the table lacks what MVA needs (n_gcp, or a point
    # per parameter) it still answers, so the case does not fail for a column one family wants
    fitters: dict[str, Callable[[], ClosedMVAModel | USLModel]] = {
        "closed_mva": lambda: _closed(config, structures=True), "usl": lambda: _usl(config)}
    reasons = []
    for family in [first] + [f for f in fitters if f != first]:
        try:
            closed: ClosedMVAResults | USLResults = fitters[family]().fit(train)
        except ModelError as exc:
            reasons.append(f"{family}: {exc}")
            continue
        if family not in set(comp["family"]):
            comp = pd.concat([comp, pd.DataFrame([{"family": family, "loo_mape_pct": float("nan")}])],
                             ignore_index=True)
        comp["chosen"] = comp["family"] == family
        make = candidates.get(family, lambda: _usl(config, n_boot=0))
        closed = _with_spread(closed, train, make, "clients", RESPONSE_TARGETS)
        if isinstance(closed, ClosedMVAResults):
            closed.calibration = band_coverage(train, lambda: _closed(config, n_boot=COVERAGE_BOOT), "clients",
                                               alpha=config.alpha, spread=closed.extrapolation_spread)
        return Choice(family, closed, comp)
    raise ModelError("no closed-workload model fits this table (" + "; ".join(reasons) + ")")


def _usl(config: ModelingConfig, *, coherency: bool = True, n_boot: int | None = None) -> USLModel:
    return USLModel(alpha=config.alpha, coherency=coherency, method=config.usl_method,
                    n_boot=config.n_boot if n_boot is None else n_boot, seed=config.seed)


def _measured_loads(train: pd.DataFrame) -> np.ndarray:
    """The distinct client counts with a measured throughput."""
    clients, tps = column_or(train, "clients", np.nan), column_or(train, "tps", np.nan)
    return np.unique(clients[np.isfinite(clients) & np.isfinite(tps)])


def _few_points_closed(train: pd.DataFrame, config: ModelingConfig) -> Choice:
    """A zero-think curve at fewer loads than a rolling origin can score: the simplest family they determine.

    Three loads determine the USL's three parameters exactly, two loads Amdahl's law's two
    (the USL with ``beta = 0``); either fit is flagged ``few_points`` and its band is the spread
    of refits to the points within the stated measurement noise
    (:data:`kneecap.modeling.usl.FEW_POINTS_NOISE`, :meth:`~kneecap.modeling.usl.USLModel.fit`),
    never the zero width an exactly determined fit's residuals give. MVA with ``c`` servers has
    more parameters than the points; no rolling origin can weigh families on so few loads.
    """
    loads = _measured_loads(train)
    family = "usl" if len(loads) >= 3 else "amdahl"
    res = _usl(config, coherency=family == "usl").fit(train)
    comp = pd.DataFrame([{"family": family, "n_loads": len(loads), "chosen": True}])
    return Choice(family, res, comp)


def _combined_closed(train: pd.DataFrame, config: ModelingConfig) -> Choice:
    """A zero-think load test without zIIP pools: USL, Amdahl and closed MVA with c servers + delay, combined.

    The families draw throughput against concurrency, and they part beyond the trained range
    (the USL may turn down, Amdahl's law - the USL with ``beta = 0`` - and MVA cannot), which is
    where a forecast is asked: each is scored by rolling origin on the training rows and weighted
    (:class:`~kneecap.modeling.combine.CombinedModel`). Amdahl is a member because a USL fitted
    to the first few loads of a curve often finds a coherency term from a plateau the curve
    later climbs out of, and then forecasts a fall that never comes; whether the nested
    two-parameter curve extrapolates better is for the rolling origins to say.
    The zIIP dispatch model is not a member: without zIIPs it is MVA with ``n_gcp`` servers, the
    second member. Each member's band widens past the data by its own measured spread.
    """
    members: dict[str, Callable[[], USLModel | MultiServerMVAModel]] = {
        "usl": lambda: _usl(config),
        "amdahl": lambda: _usl(config, coherency=False),
        "closed_mva_c": lambda: MultiServerMVAModel(alpha=config.alpha)}

    def finish(name: str, res: Any) -> Any:
        return _with_spread(res, train, members[name], "clients", RESPONSE_TARGETS)

    res = CombinedModel(members, load="clients", target="tps", hide=RESPONSE_TARGETS,
                        min_loads=config.combine_min_loads, weight_power=config.combine_weight_power,
                        finish=finish).fit(train)
    comp = res.weights_frame().assign(n_origins=res.n_origins, chosen=True)
    return Choice(res.family, res, comp)


def has_cost_data(table: pd.DataFrame) -> bool:
    """True when the table has a row with a positive CPU cost per transaction (measured or derived)."""
    return len(cost_table(table)) > 0


def choose_cost_model(train: pd.DataFrame, config: ModelingConfig) -> Choice:
    """Fit the cost regression (:class:`CostModel`), which chooses its own design."""
    res = CostModel(alpha=config.alpha, max_cv_error_pct=config.max_cv_error_pct).fit(train)
    return Choice(res.family, res, res.competitors.assign(family=res.family))
