r"""CPU cost per transaction versus load, payload and configuration (statsmodels OLS).

``CostModel().fit(table) -> CostResults``. The response is IBM's CPU cost per transaction,

.. math:: \text{cpu\_ms\_per\_tran} = \frac{\text{CPU\%} \times 10}{\text{TPS}}
          = \frac{\text{cpu\_s}}{\text{interval\_s} \cdot \text{TPS}} \times 1000

(IBM, z/OS Connect EE V3.0 Performance Summary, §9 "CPU cost per transaction"; derived in
``fct_measurements``). Candidate designs — linear, log response, and (with factors) separate slopes
per configuration — are compared by leave-one-out error on the training rows; the winner is refitted
on all of them. CPU % at a load follows as ``cost x tps / 10``.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from kneecap.config import TrainConfig
from kneecap.modeling.base import ALPHA, ModelError, column_or, mape_pct, predict_at, to_jsonable
from kneecap.modeling.family import ResultsBase

FAMILY = "cost_ols"
#: Numeric drivers of cost a table may vary.
NUMERIC_DRIVERS = ("tps", "clients", "req_bytes", "resp_bytes", "n_queues")
#: Categorical drivers.
FACTOR_DRIVERS = ("transport", "pooling", "release", "api", "config")
FORMS = ("linear", "log", "linear_by_factor", "log_by_factor")


def cost_table(table: pd.DataFrame, target: str = "cpu_ms_per_tran") -> pd.DataFrame:
    """Rows with a usable positive ``target``; ``cpu_ms_per_tran`` is derived from CPU % and TPS where missing."""
    out = table.copy()
    if target != "cpu_ms_per_tran":
        values = column_or(out, target, np.nan)
        out[target] = values
        return out[np.isfinite(values) & (values > 0)]
    cost = column_or(out, "cpu_ms_per_tran", np.nan)
    pct = column_or(out, "cpu_total_pct", np.nan)
    tps = column_or(out, "tps", np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        derived = np.where(tps > 0, pct * 10.0 / tps, np.nan)
    out["cpu_ms_per_tran"] = np.where(np.isfinite(cost), cost, derived)
    return out[np.isfinite(out["cpu_ms_per_tran"]) & (out["cpu_ms_per_tran"] > 0)]


def _combined(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """One label per row joining the factor columns (missing cells and columns read as "-")."""
    parts = [frame[c].astype("string").fillna("-").to_numpy(dtype=object) if c in frame.columns
             else np.full(len(frame), "-", dtype=object) for c in columns]
    return np.array([" / ".join(map(str, row)) for row in zip(*parts)], dtype=object) if parts else np.array([])


@dataclass(frozen=True)
class Design:
    """Which columns enter the regression and how (fixed at fit time, reused to predict)."""

    form: str
    numeric: tuple[str, ...]
    factors: dict[str, list[str]]

    def matrix(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The regression's design matrix for ``frame``.

        A constant, a dummy per factor level after the first, and the numeric drivers (bytes logged in a
        ``log`` form); in a ``*_by_factor`` form also each driver times each dummy (a slope per level).
        """
        cols: dict[str, np.ndarray] = {"const": np.ones(len(frame))}
        dummies: dict[str, np.ndarray] = {}
        for name, levels in self.factors.items():
            values = _combined(frame, name.split("+"))
            for level in levels[1:]:
                dummies[f"{name}[{level}]"] = (values == level).astype(float)
        cols.update(dummies)
        for name in self.numeric:
            x = column_or(frame, name, np.nan)
            x = np.log(np.maximum(x, 1e-12)) if self.form.startswith("log") and name.endswith("bytes") else x
            cols[name] = x
            if self.form.endswith("_by_factor"):
                for dname, d in dummies.items():
                    cols[f"{name}:{dname}"] = x * d
        return pd.DataFrame(cols, index=frame.index)

    def to_dict(self) -> dict[str, Any]:
        """The design as plain values (stored with the fit)."""
        return {"form": self.form, "numeric": list(self.numeric), "factors": self.factors}


def _transform(y: np.ndarray, form: str) -> np.ndarray:
    return np.log(y) if form.startswith("log") else y


def _untransform(y: np.ndarray, form: str) -> np.ndarray:
    return np.exp(y) if form.startswith("log") else y


def candidate_designs(train: pd.DataFrame, target: str = "cpu_ms_per_tran") -> list[Design]:
    """Designs a table supports: drivers that vary in it, with enough rows left for residuals."""
    numeric = tuple(c for c in NUMERIC_DRIVERS
                    if c != target and c in train.columns and pd.to_numeric(train[c], errors="coerce").notna().all()
                    and pd.to_numeric(train[c], errors="coerce").nunique() > 1)
    varying = [c for c in FACTOR_DRIVERS if c in train.columns and train[c].nunique(dropna=False) > 1]
    # one combined factor: a configuration is the combination of its labels, and labels that
    # move together (api "console" <-> config "queue_widget") must not become collinear dummies
    encodings = [{"+".join(varying): sorted(set(_combined(train, varying)))}] if varying else [{}]
    if len(varying) > 1:
        # main effects too (transport, pooling, release each shift the level): leave-one-out decides
        additive: dict[str, list[str]] = {}
        for c in varying:
            trial = {**additive, c: sorted(set(_combined(train, [c])))}
            # a factor the others already determine (config "-" <=> transport != MQ) would make the
            # design singular: keep the earlier, more general ones
            if _identifiable(train, Design("linear", (), trial)):
                additive = trial
        if len(additive) > 1:
            encodings.append(additive)
    designs = []
    for factors in encodings:
        for form in FORMS:
            by_factor = form.endswith("_by_factor")
            if by_factor and not (factors and numeric):
                continue
            for k in range(len(numeric), 0 if by_factor else -1, -1):
                for subset in itertools.combinations(numeric, k):
                    design = Design(form, subset, factors)
                    if design.matrix(train).shape[1] <= len(train):
                        designs.append(design)
    if not designs:
        designs.append(Design("linear", (), {}))
    return designs


def _loo_mape(train: pd.DataFrame, design: Design, target: str = "cpu_ms_per_tran") -> float:
    r"""Leave-one-out MAPE of an OLS design, on the target's own scale.

    Without refitting: the OLS prediction of row ``i`` from the other rows is
    :math:`\hat y_{(i)} = y_i - e_i / (1 - h_{ii})` (residual ``e`` and leverage ``h`` of the full
    fit), exact for least squares; a fold without full rank, where ``h_ii = 1`` (a factor level seen
    only in row ``i``) or fewer rows than columns, scores NaN as a refit could not be estimated. A
    month of 15-minute RMF intervals is thousands of rows: one fit instead of thousands.

    References
    ----------
    Cook, R. D. and Weisberg, S. (1982), *Residuals and Influence in Regression*, §2.2.
    """
    y = train[target].to_numpy(dtype=float)
    if len(train) < 2:
        return float("nan")
    x = design.matrix(train)
    xm = x.to_numpy(dtype=float)
    if xm.shape[1] > len(train) - 1 or np.linalg.matrix_rank(xm) < xm.shape[1]:
        return float("nan")
    yt = _transform(y, design.form)
    fit = sm.OLS(yt, x).fit()
    leverage = fit.get_influence().hat_matrix_diag
    if np.any(leverage > 1.0 - 1e-9):
        return float("nan")
    pred = _untransform(yt - np.asarray(fit.resid) / (1.0 - leverage), design.form)
    return float(np.mean(np.abs(pred - y) / y) * 100.0)


def _time_holdout_mape(train: pd.DataFrame, design: Design, target: str = "cpu_ms_per_tran") -> float:
    """MAPE on the last quarter of the rows in time order, the design fitted on the first three.

    For an interval history (RMF/SMF intervals, ``interval_start_at``) leave-one-out scores each
    interval from its neighbours on both sides and rewards designs that follow the day's drift; a
    forecast is of later intervals only (Tashman, L. J. (2000), "Out-of-sample tests of
    forecasting accuracy", *Int. J. Forecasting* 16). NaN when a fit cannot be estimated.
    """
    order = np.argsort(pd.to_datetime(train["interval_start_at"], utc=True).to_numpy(), kind="stable")
    cut = int(round(0.75 * len(train)))
    fit_rows, test_rows = train.iloc[order[:cut]], train.iloc[order[cut:]]
    x_fit, x_test = design.matrix(fit_rows), design.matrix(test_rows)
    xm = x_fit.to_numpy(dtype=float)
    if (list(x_fit.columns) != list(x_test.columns) or xm.shape[1] > len(fit_rows) - 1
            or np.linalg.matrix_rank(xm) < xm.shape[1]):
        return float("nan")
    fit = sm.OLS(_transform(fit_rows[target].to_numpy(dtype=float), design.form), x_fit).fit()
    pred = _untransform(x_test.to_numpy(dtype=float) @ np.asarray(fit.params), design.form)
    y = test_rows[target].to_numpy(dtype=float)
    return float(np.mean(np.abs(pred - y) / y) * 100.0)


def _is_interval_history(train: pd.DataFrame) -> bool:
    return (len(train) >= 8 and "interval_start_at" in train.columns
            and bool(train["interval_start_at"].notna().all()))


@dataclass
class CostModel:
    """Choose and fit the cost regression.

    ``alpha`` sets the prediction-interval level; ``max_cv_error_pct`` is the leave-one-out error
    above which a shared-slope design is judged wrong when separate slopes per configuration
    cannot be cross-validated. An interval history (``interval_start_at`` on every row, 8 rows or
    more) is scored on its last quarter in time order instead (:func:`_time_holdout_mape`).
    """

    alpha: float = ALPHA
    max_cv_error_pct: float = TrainConfig.max_cv_error_pct
    target: str = "cpu_ms_per_tran"

    def fit(self, table: pd.DataFrame) -> CostResults:
        """Score every candidate design on the table's cost rows and fit the chosen one (see the class notes)."""
        train = cost_table(table, self.target)
        if len(train) < 1:
            if self.target == "cpu_ms_per_tran":
                raise ModelError("the cost model needs cpu_ms_per_tran, or cpu_total_pct with tps > 0")
            raise ModelError(f"the regression needs positive {self.target} values")
        scored = []
        score_of = _time_holdout_mape if _is_interval_history(train) else _loo_mape
        for design in candidate_designs(train, self.target):
            scored.append((design, score_of(train, design, self.target)))
        finite = [s for s in scored if np.isfinite(s[1])]
        # fewest parameters breaks ties: the simpler model when LOO cannot tell them apart
        chosen = min(finite, key=lambda s: (round(s[1], 6), design_size(s[0], train)))[0] if finite else None
        note = ("chosen on the last quarter of the intervals in time order" if score_of is _time_holdout_mape
                else "chosen by leave-one-out")
        best_cv = min((s[1] for s in finite), default=float("inf"))
        richer = [d for d, score in scored if not np.isfinite(score) and d.numeric and _identifiable(train, d)]
        if richer and best_cv > self.max_cv_error_pct:
            # the designs that could be cross-validated miss badly, and the ones that follow the
            # drivers have too few rows to leave one out: take the richest identifiable one
            chosen = richer[0]
            note = (f"{chosen.form} in {', '.join(chosen.numeric)}, not cross-validated (too few rows); "
                    f"designs that could be had LOO MAPE >= {best_cv:.1f} %")
        elif chosen is None:
            chosen = scored[0][0]
            note = "not cross-validated (too few rows)"
        score_column = "holdout_mape_pct" if score_of is _time_holdout_mape else "loo_mape_pct"
        competitors = pd.DataFrame([{"form": d.form, "numeric": ",".join(d.numeric) or "-",
                                     "factors": ",".join(d.factors) or "-", score_column: s}
                                    for d, s in scored])
        return CostResults(design=chosen, train=train[_keep_columns(train, self.target)].reset_index(drop=True),
                           alpha=self.alpha, competitors=competitors, selection_note=note,
                           target=self.target)


def _identifiable(train: pd.DataFrame, design: Design) -> bool:
    x = design.matrix(train)
    return bool(np.linalg.matrix_rank(x.to_numpy(dtype=float)) == x.shape[1])


def design_size(design: Design, train: pd.DataFrame) -> int:
    """Number of regression columns ``design`` has on ``train`` (fewer wins a tie in cross-validated error)."""
    return int(design.matrix(train).shape[1])


def _keep_columns(train: pd.DataFrame, target: str) -> list[str]:
    wanted = ((target, "cpu_ms_per_tran", "ziip_eligible_pct", "cpu_total_pct", "think_time_ms")
              + NUMERIC_DRIVERS + FACTOR_DRIVERS)
    return list(dict.fromkeys(c for c in wanted if c in train.columns))


@dataclass
class CostResults(ResultsBase):
    """A fitted :class:`CostModel`: the chosen design, OLS on its training rows, and the competing designs."""

    design: Design
    train: pd.DataFrame
    alpha: float
    competitors: pd.DataFrame = field(default_factory=pd.DataFrame)
    selection_note: str = ""
    target: str = "cpu_ms_per_tran"
    family: str = FAMILY
    #: a cost per transaction is asked at a rate
    load_unit: ClassVar[str] = "tps"

    @property
    def targets(self) -> tuple[str, ...]:
        """The columns :meth:`predict` answers: the target and what follows from it (CPU %, eligible %, response)."""
        if self.target == "cpu_ms_per_tran":
            shares = ("ziip_eligible_pct",) if self.eligible_fraction().get("fraction") is not None else ()
            return ("cpu_ms_per_tran", "cpu_total_pct") + shares
        if self.target == "tps":
            return ("tps", "resp_ms")
        return (self.target,)

    def __post_init__(self) -> None:
        x = self.design.matrix(self.train)
        keep = x.std(ddof=0).gt(0) | (x.columns == "const")
        self._columns = list(x.columns[keep])
        y = _transform(self.train[self.target].to_numpy(dtype=float), self.design.form)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            self.ols = sm.OLS(y, x[self._columns]).fit()

    def curve(self, *, max_load: float, points: int = 60, max_draws: int | None = None,
              **configuration: Any) -> pd.DataFrame:
        """No curve: a regression on its design's drivers has no one load to draw a response along."""
        raise ModelError(f"no response curve for a {self.family} model")

    def plot_groups(self, rows: pd.DataFrame) -> list[tuple[str, dict[str, Any], pd.DataFrame]]:
        """None: no curve to draw beside the points (:meth:`curve`)."""
        return []

    def answer(self, scenario: Mapping[str, Any], policy: Any, *, growth: Any = None) -> dict[str, Any]:
        """The CPU cost per transaction with its band where the scenario gives the design's drivers.

        ``tps`` may come from the response model's answer (the caller puts it in ``scenario``);
        the factor labels the design was fitted with are passed when given. A regression of
        throughput on configurations (``target`` ``tps``) answers as a response model does
        (:func:`kneecap.modeling.answers.predicted_answer`).
        """
        if self.target != "cpu_ms_per_tran":
            return super().answer(scenario, policy, growth=growth)
        needed = set(self.design.numeric)
        if not needed <= set(scenario):
            return {}
        pred = predict_at(self, {**{k: scenario.get(k) for k in needed},
                                 **{k: scenario[k] for k in FACTOR_DRIVERS if k in scenario},
                                 "tps": scenario.get("tps", np.nan)})
        return {"cpu_ms_per_tran": float(pred["cpu_ms_per_tran"]),
                "cpu_ms_per_tran_lo": float(pred["cpu_ms_per_tran_lo"]),
                "cpu_ms_per_tran_hi": float(pred["cpu_ms_per_tran_hi"])}

    @property
    def params(self) -> pd.Series:
        """The OLS coefficients, one per design column."""
        return self.ols.params

    @property
    def loo_mape_pct(self) -> float:
        """Leave-one-out MAPE of the chosen design on the training rows, %."""
        return _loo_mape(self.train, self.design, self.target)

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``cpu_ms_per_tran`` with OLS prediction intervals (``obs_ci``); ``cpu_total_pct`` when tps given."""
        for name in self.design.numeric:
            if name not in frame.columns or frame[name].isna().any():
                raise ModelError(f"cost prediction needs column {name} on every row")
        x = self.design.matrix(frame)[self._columns]
        with warnings.catch_warnings():
            # an exactly determined fit has no residual variance: intervals are NaN, said so below
            warnings.simplefilter("ignore", RuntimeWarning)
            pred = self.ols.get_prediction(x)
        out = pd.DataFrame(index=frame.index)
        mean = np.asarray(pred.predicted_mean, dtype=float)
        if self.ols.df_resid > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                sf = pred.summary_frame(alpha=self.alpha)
            lo, hi = sf["obs_ci_lower"].to_numpy(), sf["obs_ci_upper"].to_numpy()
        else:
            lo = hi = np.full(len(frame), np.nan)
        t = self.target
        out[t] = _untransform(mean, self.design.form)
        out[f"{t}_lo"] = _untransform(lo, self.design.form)
        out[f"{t}_hi"] = _untransform(hi, self.design.form)
        if t == "cpu_ms_per_tran":
            tps = column_or(frame, "tps", np.nan)
            for suffix in ("", "_lo", "_hi"):
                out[f"cpu_total_pct{suffix}"] = out[f"cpu_ms_per_tran{suffix}"] * tps / 10.0
            share = self.eligible_fraction()
            if share.get("fraction") is not None:
                # the eligible share times the CPU, its band from both bands' ends (one eligible
                # share measured everywhere, so the bounds multiply, not add in quadrature)
                out["ziip_eligible_pct"] = share["fraction"] * out["cpu_total_pct"]
                out["ziip_eligible_pct_lo"] = share.get("lo", share["fraction"]) * out["cpu_total_pct_lo"]
                out["ziip_eligible_pct_hi"] = share.get("hi", share["fraction"]) * out["cpu_total_pct_hi"]
        elif t == "tps" and "clients" in frame.columns:
            # Little's law (operational, no model): R = N / X - Z
            n = column_or(frame, "clients", np.nan)
            z = column_or(frame, "think_time_ms", 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                out["resp_ms"] = n / out["tps"] * 1000.0 - z
                out["resp_ms_lo"] = n / out["tps_hi"] * 1000.0 - z
                out["resp_ms_hi"] = n / out["tps_lo"] * 1000.0 - z
        return out

    def eligible_fraction(self) -> dict[str, Any]:
        """zIIP-eligible share of CPU with a t-interval, and whether it drifts with load."""
        if not {"ziip_eligible_pct", "cpu_total_pct"} <= set(self.train.columns):
            return {"fraction": None}
        t = self.train.dropna(subset=["ziip_eligible_pct", "cpu_total_pct"])
        t = t[t["cpu_total_pct"] > 0]
        if t.empty:
            return {"fraction": None}
        frac = (t["ziip_eligible_pct"] / t["cpu_total_pct"]).to_numpy(dtype=float)
        out: dict[str, Any] = {"fraction": float(frac.mean()), "n": int(len(frac))}
        if len(frac) > 1:
            half = stats.t.ppf(1 - self.alpha / 2, len(frac) - 1) * frac.std(ddof=1) / np.sqrt(len(frac))
            out.update(lo=float(frac.mean() - half), hi=float(frac.mean() + half))
        if "tps" in t.columns and t["tps"].nunique() > 2:
            slope = stats.linregress(t["tps"].to_numpy(dtype=float), frac)
            out["varies_with_load"] = bool(slope.pvalue < self.alpha)
            out["slope_per_1000_tps"] = float(slope.slope * 1000.0)
        return out

    def summary(self) -> str:
        """The design, its cross-validated error, how it was chosen, and the coefficients."""
        return (f"OLS of {self.target} ({self.design.form}; drivers: {', '.join(self.design.numeric) or 'none'}; "
                f"factors: {', '.join(self.design.factors) or 'none'}); n = {len(self.train)}, "
                f"LOO MAPE {self.loo_mape_pct:.2f} %; {self.selection_note}\n" + self.ols.params.round(6).to_string())

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document: design and training rows, so a reload refits exactly."""
        # the training rows are few; storing them makes the reload an exact, deterministic refit
        return to_jsonable({"family": self.family, "design": self.design.to_dict(), "alpha": self.alpha,
                            "selection_note": self.selection_note, "target": self.target,
                            "train": self.train.astype(object).where(self.train.notna(), None).to_dict(orient="list")})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CostResults:
        """The fit from its stored document (:meth:`to_dict`), refitted on the stored rows."""
        design = Design(d["design"]["form"], tuple(d["design"]["numeric"]), dict(d["design"]["factors"]))
        train = pd.DataFrame(d["train"])
        for c in train.columns:
            if c not in FACTOR_DRIVERS:
                train[c] = pd.to_numeric(train[c], errors="coerce")
        return cls(design=design, train=train, alpha=d["alpha"], selection_note=d.get("selection_note", ""),
                   target=d.get("target", "cpu_ms_per_tran"))


def cost_mape(results: CostResults, test: pd.DataFrame) -> float:
    """MAPE of the model's target on held-out rows."""
    test = cost_table(test, results.target)
    return mape_pct(test[results.target].to_numpy(), results.predict(test)[results.target].to_numpy())
