"""Forecast combination: several model families fitted to one table, weighted by rolling-origin error.

Where more than one family describes a curve (the USL and closed MVA with ``c`` servers + delay
for throughput against concurrency), picking one throws away what the others know, and beyond
the trained range the pick is a guess. ``CombinedModel(members).fit(table) -> CombinedResults``
fits every member, scores each by rolling-origin backtests on the training rows alone
(:func:`rolling_origin_errors`), turns the scores into weights (:func:`combination_weights`) and
predicts the weighted mean with a band that spans every member's band (:func:`combine_frames`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap.config import TrainConfig
from kneecap.modeling.base import FitReport, ModelError, mape_pct, to_jsonable
from kneecap.modeling.family import ResultsBase

FAMILY = "combined"
#: What the weights are built from: mean held-out MAPE over the rolling origins.
SCORE = "rolling_origin_mape_pct"
#: Prefixes of the run metrics a combination is logged with (:func:`run_metrics`), one per member.
WEIGHT_METRIC = "combine_weight."
SCORE_METRIC = "combine_rolling_origin_mape_pct."
#: Fewest distinct loads a rolling origin trains on (params.yaml ``train.combine_min_loads``):
#: three is the least the three-parameter USL can be fitted to.
MIN_LOADS = TrainConfig.combine_min_loads
#: Exponent of the inverse-error weights (params.yaml ``train.combine_weight_power``): 2 is Bates
#: and Granger's inverse mean squared error, 0 the simple average.
WEIGHT_POWER = TrainConfig.combine_weight_power


def rolling_origin_errors(train: pd.DataFrame, make: Callable[[], Any], *, load: str, target: str,
                          hide: tuple[str, ...], min_loads: int = MIN_LOADS) -> dict[float, float]:
    r"""Held-out MAPE of one family at each rolling origin of its training rows.

    The distinct loads :math:`L_1 < \dots < L_m` of ``train`` give origins
    :math:`k = \text{min\_loads}, \dots, m - 1`; origin ``k`` fits ``make()`` on the rows with
    load at most :math:`L_k` and predicts ``target`` on every row above it (the ``hide`` columns,
    the targets, removed from the inputs). Its error is the mean absolute percentage error of
    that held-out part:

    .. math:: e_k = \frac{100}{|T_k|} \sum_{i \in T_k} \frac{|\hat y_i - y_i|}{y_i}

    MAPE because it is scale-free (a 20 tps and a 2000 tps curve weigh alike) and it is the
    metric the backtest goals are stated in; held-out rows above the origin because what a
    combination is for is the load beyond the data. Returns ``{L_k: e_k}``; an origin the family
    cannot be fitted at (too few points for its parameters) is left out.

    References
    ----------
    Tashman, L. J. (2000), "Out-of-sample tests of forecasting accuracy: an analysis and review",
    *Int. J. Forecasting* 16. Hyndman, R. J. and Athanasopoulos, G. (2021), *Forecasting:
    Principles and Practice*, 3rd ed., §5.10 (time series cross-validation, "evaluation on a
    rolling forecasting origin").
    """
    errors: dict[float, float] = {}
    for cut, actual, pred in rolling_origin_predictions(train, make, load=load, target=target, hide=hide,
                                                        min_loads=min_loads):
        error = mape_pct(actual, pred[target].to_numpy(dtype=float))
        if np.isfinite(error):
            errors[cut] = error
    return errors


def rolling_origin_predictions(train: pd.DataFrame, make: Callable[[], Any], *, load: str, target: str,
                               hide: tuple[str, ...], min_loads: int = MIN_LOADS
                               ) -> Iterator[tuple[float, np.ndarray, pd.DataFrame]]:
    """``(cut, measured target, prediction frame)`` of each rolling origin (:func:`rolling_origin_errors`).

    An origin whose held-out rows measure no ``target``, or that the family cannot be fitted at,
    is skipped.
    """
    values = pd.to_numeric(train[load], errors="coerce").to_numpy(dtype=float)
    loads = np.unique(values[np.isfinite(values)])
    for k in range(max(min_loads, 1), len(loads)):
        cut = float(loads[k - 1])
        fit_rows, test_rows = train[values <= cut], train[values > cut]
        actual = pd.to_numeric(test_rows[target], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(actual).any():
            continue
        try:
            pred = make().fit(fit_rows).predict(test_rows.drop(columns=[c for c in hide if c in test_rows]))
        except ModelError:
            continue
        yield cut, actual, pred


def combination_weights(scores: Mapping[str, float], *, power: float = WEIGHT_POWER) -> dict[str, float]:
    r"""Weights from each member's rolling-origin error: inverse error to the power ``p``, normalised.

    .. math:: w_i = \frac{e_i^{-p}}{\sum_j e_j^{-p}}

    With :math:`p = 2` and :math:`e_i` read as the scale of member ``i``'s error this is Bates and
    Granger's inverse-variance weighting with the error correlation set to zero (their method
    (i) simplified; with a handful of origins a correlation cannot be estimated). :math:`p = 0`
    is the simple average. A member with no score (NaN: it could not be scored) gets weight 0
    while another has one; when none has, all weigh alike, the simple average that forecast
    combination studies find hard to beat. A zero error takes all the weight (the limit).

    References
    ----------
    Bates, J. M. and Granger, C. W. J. (1969), "The combination of forecasts", *Operational
    Research Quarterly* 20(4). Hyndman and Athanasopoulos (2021), *Forecasting: Principles and
    Practice*, 3rd ed., §13.4 (forecast combinations).

    Examples
    --------
    >>> combination_weights({"usl": 20.0, "closed_mva_c": 10.0})
    {'usl': 0.2, 'closed_mva_c': 0.8}
    >>> combination_weights({"usl": float("nan"), "closed_mva_c": 10.0})
    {'usl': 0.0, 'closed_mva_c': 1.0}
    """
    if not scores:
        raise ValueError("no members to weigh")
    if not power >= 0:
        raise ValueError(f"weight power must be >= 0, got {power}")
    names = list(scores)
    e = np.array([scores[n] for n in names], dtype=float)
    scored = np.isfinite(e) & (e >= 0)
    if not scored.any():
        return {n: 1.0 / len(names) for n in names}
    if np.any(scored & (e == 0)):
        raw = (scored & (e == 0)).astype(float)
    else:
        raw = np.where(scored, np.power(np.where(scored, e, 1.0), -power), 0.0)
    w = raw / raw.sum()
    return {n: float(v) for n, v in zip(names, w)}


def combine_frames(frames: Mapping[str, pd.DataFrame], weights: Mapping[str, float],
                   targets: tuple[str, ...]) -> pd.DataFrame:
    r"""The weighted mean of the members' predictions, with a band spanning every member's band.

    .. math:: \hat y = \sum_i w_i \hat y_i, \qquad
              [\min_i \ell_i,\ \max_i u_i] \text{ over members with } w_i > 0

    A convex combination keeps what its members share: where every member's curve rises with
    load, so does the combination, and it lies between the lowest and highest member. The band
    is the union of the members' bands, so it covers both the families' disagreement and each
    one's own uncertainty (a member's point always lies inside its own band). A member's
    missing band (no ``_lo`` / ``_hi``) counts as its point. ``frames`` share one index.
    """
    names = [n for n in frames if weights.get(n, 0.0) > 0]
    if not names:
        raise ValueError("no member has a positive weight")
    index = frames[names[0]].index
    out = pd.DataFrame(index=index)
    # normalised before use: scaling the products afterwards can leave the members' range when a
    # weight is tiny enough to round
    w = np.array([weights[n] for n in names], dtype=float)
    w = (w / w.sum())[:, None]
    for target in targets:
        points = np.vstack([frames[n][target].to_numpy(dtype=float) for n in names])
        out[target] = np.sum(w * points, axis=0)
        lows = np.vstack([frames[n].get(f"{target}_lo", frames[n][target]).to_numpy(dtype=float) for n in names])
        highs = np.vstack([frames[n].get(f"{target}_hi", frames[n][target]).to_numpy(dtype=float) for n in names])
        with np.errstate(invalid="ignore"):
            out[f"{target}_lo"] = np.fmin(np.min(np.vstack([lows, points]), axis=0), out[target])
            out[f"{target}_hi"] = np.fmax(np.max(np.vstack([highs, points]), axis=0), out[target])
    return out


@dataclass
class CombinedModel:
    """Fit every member family, weigh each by its rolling-origin error on the training rows.

    Parameters
    ----------
    members : family name to a maker of an unfitted model (``make().fit(table)``); each maker is
        called for every rolling origin and once for the full table.
    load : the column the rolling origin orders by (``clients`` for closed curves).
    target : the column scored (``tps``: what a zero-think load test measures).
    hide : columns removed from the held-out rows before predicting (the table's targets).
    min_loads : fewest distinct loads an origin trains on.
    weight_power : ``p`` of :func:`combination_weights`.
    finish : applied to each member fitted on the full table (e.g. measuring how its band should
        widen past the data) before it is combined.

    Notes
    -----
    Every origin is scored for every member on the same held-out rows: a member that cannot be
    fitted at some origin is compared with the others only on the origins all of them reached.
    """

    members: Mapping[str, Callable[[], Any]]
    load: str = "clients"
    target: str = "tps"
    hide: tuple[str, ...] = ("tps", "resp_ms")
    min_loads: int = MIN_LOADS
    weight_power: float = WEIGHT_POWER
    finish: Callable[[str, Any], Any] | None = None

    def fit(self, table: pd.DataFrame) -> CombinedResults:
        """Fit and score every member; members that cannot be fitted on ``table`` are left out."""
        if not self.members:
            raise ModelError("a combination needs at least one member family")
        fitted: dict[str, Any] = {}
        reasons = []
        for name, make in self.members.items():
            try:
                res = make().fit(table)
            except ModelError as exc:
                reasons.append(f"{name}: {exc}")
                continue
            fitted[name] = self.finish(name, res) if self.finish is not None else res
        if not fitted:
            raise ModelError("no member of the combination fits this table (" + "; ".join(reasons) + ")")
        per_origin = {name: rolling_origin_errors(table, self.members[name], load=self.load, target=self.target,
                                                  hide=self.hide, min_loads=self.min_loads) for name in fitted}
        common = set.intersection(*(set(e) for e in per_origin.values()))
        scores = {name: float(np.mean([e[o] for o in common])) if common else float("nan")
                  for name, e in per_origin.items()}
        weights = combination_weights(scores, power=self.weight_power)
        targets = tuple(t for t in next(iter(fitted.values())).targets
                        if all(t in res.targets for res in fitted.values()))
        values = pd.to_numeric(table[self.load], errors="coerce")
        return CombinedResults(members=fitted, weights=weights, scores=scores, n_origins=len(common),
                               load=self.load, target=self.target, weight_power=self.weight_power,
                               min_loads=self.min_loads, targets=targets,
                               max_load=float(values.max()) if values.notna().any() else None)


@dataclass
class CombinedResults(ResultsBase):
    """A fitted :class:`CombinedModel`: the fitted members, their rolling-origin scores and weights."""

    members: dict[str, Any]
    weights: dict[str, float]
    scores: dict[str, float]  # mean rolling-origin MAPE, %, on the training rows; NaN: not scored
    n_origins: int
    load: str
    target: str
    weight_power: float
    min_loads: int
    targets: tuple[str, ...]
    max_load: float | None = None
    family: str = FAMILY

    @property
    def load_unit(self) -> str:
        """What the members' load counts (``clients`` or ``tps``)."""
        return self.load

    @property
    def label(self) -> str:
        """``combined:usl+closed_mva_c``: the family and its members, for tables."""
        return f"{self.family}:{'+'.join(self.members)}"

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any = None) -> FitReport:
        """The members' weights and rolling-origin scores (:func:`run_metrics`), and how they were combined."""
        return FitReport(run_metrics(self), [], {
            "combine_members": ",".join(self.members), "combine_weight_power": self.weight_power,
            "combine_min_loads": self.min_loads, "combine_origins": self.n_origins,
            "combine_weights": ",".join(f"{n}={w:.4f}" for n, w in self.weights.items()),
            "usl_method": getattr(config, "usl_method", None)})

    def member_errors(self, frame: pd.DataFrame, actual: np.ndarray, target: str) -> dict[str, Any]:
        """Per member: weight, rolling-origin score on the training rows, MAPE against ``actual``.

        The MAPE of each member on held-out rows is for the reader only: the weights never see them.
        """
        preds = self.member_predictions(frame)
        return {name: {"weight": self.weights[name], "rolling_origin_mape": self.scores[name],
                       "mape": mape_pct(actual, preds[name][target].to_numpy(dtype=float))}
                for name in self.members}

    def member_predictions(self, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
        """Each member's own prediction frame for ``frame`` (index reset to ``frame``'s)."""
        return {name: res.predict(frame).set_axis(frame.index) for name, res in self.members.items()}

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The weighted mean of the members' ``targets`` with a band spanning theirs (:func:`combine_frames`)."""
        return combine_frames(self.member_predictions(frame), self.weights, self.targets)

    def weights_frame(self) -> pd.DataFrame:
        """One row per member: ``family``, ``rolling_origin_mape_pct``, ``weight``."""
        return pd.DataFrame([{"family": name, SCORE: self.scores.get(name, float("nan")),
                              "weight": self.weights.get(name, 0.0)} for name in self.members])

    def summary(self) -> str:
        """The weights and scores, then each member's own summary."""
        head = (f"Combination of {len(self.members)} families (weights from inverse rolling-origin MAPE^"
                f"{self.weight_power:g} on the training rows, {self.n_origins} origins, {self.target} by {self.load}):")
        lines = [head] + [f"  {n}: weight {self.weights[n]:.3f}, rolling-origin MAPE {self.scores[n]:.2f} %"
                          for n in self.members]
        return "\n".join(lines + [f"  {res.summary()}" for res in self.members.values()])

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document: the combination's fields and each member's own document."""
        return to_jsonable({"family": self.family, "members": {n: r.to_dict() for n, r in self.members.items()},
                            "weights": self.weights, "scores": self.scores, "n_origins": self.n_origins,
                            "load": self.load, "target": self.target, "weight_power": self.weight_power,
                            "min_loads": self.min_loads, "targets": list(self.targets),
                            "max_load": self.max_load})

    @classmethod
    def from_dict(cls, d: dict[str, Any],
                  member_from_dict: Callable[[dict[str, Any]], Any] | None = None) -> CombinedResults:
        """The fit from its stored document; each member is rebuilt by ``member_from_dict``.

        :func:`kneecap.modeling.serialise.results_from_dict` passes itself, so a member goes through
        the same checked table of kneecap's own results classes as every stored model. That table
        includes this class, so the rebuilder is an argument rather than an import; without one
        this refuses (a member has no class of its own to be rebuilt by here).

        Raises
        ------
        ModelError
            No ``member_from_dict``.
        """
        if member_from_dict is None:
            raise ModelError("a combination's members are stored results: rebuild it with "
                             "kneecap.modeling.serialise.results_from_dict")
        d = dict(d)
        d.pop("family", None)
        d["members"] = {n: member_from_dict(m) for n, m in d["members"].items()}
        d["scores"] = {n: (np.nan if v is None else float(v)) for n, v in d["scores"].items()}
        d["targets"] = tuple(d["targets"])
        return cls(**d)


def run_metrics(results: CombinedResults) -> dict[str, float]:
    """The weights and the members' rolling-origin MAPE as run metrics, one of each per member.

    ``combine_weight.<family>`` and ``combine_rolling_origin_mape_pct.<family>`` (NaN scores are
    left to the logger to drop); :func:`registered_weights` reads them back.
    """
    out = {f"{WEIGHT_METRIC}{n}": float(w) for n, w in results.weights.items()}
    out.update({f"{SCORE_METRIC}{n}": float(s) for n, s in results.scores.items()})
    return out


def registered_weights(registered: pd.DataFrame) -> pd.DataFrame:
    """Combination weights of registered model versions, from their runs' metrics.

    ``registered`` has one row per version with ``metric.<name>`` columns (as
    :func:`kneecap.tracking.registered_models` lists them). Returns one row per version and
    member: ``name``, ``version``, ``aliases``, ``family`` (the member), ``weight`` and
    ``rolling_origin_mape_pct``; empty when no version is a combination.
    """
    columns = ["name", "version", "aliases", "family", "weight", SCORE]
    prefix = f"metric.{WEIGHT_METRIC}"
    weight_cols = [c for c in registered.columns if c.startswith(prefix)]
    rows = []
    for _, version in registered.iterrows():
        for col in weight_cols:
            weight = version[col]
            if pd.isna(weight):
                continue
            member = col[len(prefix):]
            rows.append({"name": version.get("name"), "version": version.get("version"),
                         "aliases": version.get("aliases"), "family": member, "weight": float(weight),
                         SCORE: version.get(f"metric.{SCORE_METRIC}{member}", np.nan)})
    return pd.DataFrame(rows, columns=columns)
