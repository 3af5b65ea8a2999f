"""What every fitted kneecap model shares: prediction frames, serialisation, errors.

Prediction frames carry, for each predicted column ``t``, the point forecast ``t`` and the
``(1 - alpha)`` prediction interval ``t_lo`` / ``t_hi`` (the interval for a new measured point,
parameter uncertainty and measurement scatter together — statsmodels' ``obs_ci_*``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from kneecap.config import CommonConfig, TrainConfig
from kneecap.modeling.knee import Knee

#: Confidence level of every band and interval (95 %), the bootstrap draws behind a banded fit and
#: the seed of its random streams: the defaults of every model, those of ``params.yaml`` ``common``
#: and ``train`` (:mod:`kneecap.config`, where they are written).
ALPHA = CommonConfig.alpha
N_BOOT = TrainConfig.n_boot
SEED = CommonConfig.seed
#: The band's two-sided normal quantile for :data:`ALPHA` (95 %).
Z_BAND = 1.959963984540054


def widen_beyond_trained(out: pd.DataFrame, load: np.ndarray, load_max: float | None,
                         spread: dict[str, float] | None) -> pd.DataFrame:
    r"""Widen each target's band where a row's load lies beyond the largest trained load.

    The bootstrap band is the fit's uncertainty; past the data the model's own form may be wrong
    too, and the more so the further it extrapolates. At load ratio :math:`x = L / L_{max} > 1`
    the band is widened (never narrowed) to

    .. math:: [\hat y \, x^{-z s},\; \hat y \, x^{z s}]

    where :math:`s` (``spread[target]``) is the standard deviation of the target's log error per
    unit of log load ratio, measured by the model's own rolling-origin refits on its training rows
    (:func:`kneecap.modeling.select.extrapolation_spread`), and :math:`z` the 95 % quantile.
    ``out`` is changed in place and returned.
    """
    if not spread or not load_max:
        return out
    ratio = np.asarray(load, dtype=float) / float(load_max)
    over = np.isfinite(ratio) & (ratio > 1.0)
    if not over.any():
        return out
    for target, s in spread.items():
        lo, hi = f"{target}_lo", f"{target}_hi"
        if target not in out or lo not in out or hi not in out or not np.isfinite(s) or s <= 0:
            continue
        factor = np.exp(Z_BAND * float(s) * np.log(np.where(over, ratio, 1.0)))
        mid = out[target].to_numpy(dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[lo] = np.where(over, np.fmin(out[lo].to_numpy(dtype=float), mid / factor), out[lo])
            out[hi] = np.where(over, np.fmax(out[hi].to_numpy(dtype=float), mid * factor), out[hi])
    return out


def split_lognormal(z: np.ndarray, mid: Any, lo: Any, hi: Any, alpha: float) -> np.ndarray:
    r"""Values at standard normal deviates ``z`` of the split log-normal through ``lo``, ``mid``, ``hi``.

    .. math::

        x = m \exp(z \sigma), \qquad
        \sigma = \frac{\log(m / \ell)}{z_{1-\alpha/2}}\ (z < 0), \quad
        \frac{\log(h / m)}{z_{1-\alpha/2}}\ (z \ge 0)

    Its median is ``mid`` and its ``alpha/2`` and ``1 - alpha/2`` quantiles are ``lo`` and ``hi``
    (positive, skewed as the interval is). ``mid``, ``lo``, ``hi`` broadcast against ``z``: one
    interval, or one per row of ``z``.
    """
    from scipy.special import ndtri

    z_end = float(ndtri(1.0 - alpha / 2.0))
    z = np.asarray(z, dtype=float)
    mid = np.asarray(mid, dtype=float)
    scale = np.where(z < 0.0, np.log(mid / lo), np.log(hi / mid)) / z_end
    return mid * np.exp(z * scale)


def band_scores(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""How far each measured point fell outside its band: ``(scores, inside, scored)``.

    The score is :math:`\max(\log(lo / y), \log(y / hi))`, negative inside the band (what
    :func:`calibration_quantile` ranks); ``scored`` marks the points with a positive measurement
    and a finite, positive lower and finite upper end, the only ones scored and returned.
    """
    y, lo, hi = (np.asarray(a, dtype=float) for a in (y, lo, hi))
    scored = np.isfinite(y) & (y > 0) & np.isfinite(lo) & (lo > 0) & np.isfinite(hi)
    y, lo, hi = y[scored], lo[scored], hi[scored]
    return np.maximum(np.log(lo / y), np.log(y / hi)), (lo <= y) & (y <= hi), scored


def calibration_quantile(scores: np.ndarray, alpha: float) -> float:
    r"""The split-conformal widening of a band from held-out scores, never a narrowing.

    A score is how far a held-out point fell outside its band on the log scale,
    :math:`s = \max(\log(lo / y), \log(y / hi))` (negative inside). Widening every band by
    :math:`q` each side (``lo e^{-q}``, ``hi e^{q}``) covers a new point with probability at least
    :math:`1 - \alpha` when the scores are exchangeable, for :math:`q` the
    :math:`\lceil (n + 1)(1 - \alpha) \rceil`-th smallest of the :math:`n` scores (the largest when
    that rank passes ``n``). Clipped at 0: a band the history says is too wide is kept, as it
    also carries the structure's doubt, which a short history cannot score.

    MAPIE's split-conformal regressors conformalise one prefit scikit-learn estimator; these
    scores come from refits of a model at several rolling origins, each scored against its own
    band, so the quantile is taken here (the rule of Romano et al. 2019, eq. 7).

    References
    ----------
    Romano, Patterson & Candes (2019), "Conformalized quantile regression", *NeurIPS*;
    Angelopoulos & Bates (2023), "Conformal prediction: a gentle introduction", sec. 1.
    """
    scores = np.sort(np.asarray(scores, dtype=float)[np.isfinite(scores)])
    if not len(scores):
        return 0.0
    rank = min(math.ceil((len(scores) + 1) * (1.0 - alpha)), len(scores))
    return max(float(scores[rank - 1]), 0.0)


def structure_weights(costs: np.ndarray, n: int, prior: np.ndarray | None = None) -> np.ndarray:
    r"""Akaike weights of dispatcher structures from their fit costs on ``n`` independent units.

    Every structure has the same free parameters (``R0``, and ``D`` where not measured), so with
    Gaussian log residuals of one variance the AIC differences are the log-likelihood's,
    :math:`\Delta_s = n \log(c_s / c_{min})`, and

    .. math::

        w_s = \frac{q_s \exp(-\Delta_s / 2)}{\sum_t q_t \exp(-\Delta_t / 2)}

    with :math:`c_s` the structure's mean squared log error (response, spill share and delay
    samples added, as one residual) and :math:`q_s` its prior weight (``prior``; equal when
    ``None``): the posterior model probability of Bayesian model averaging with
    :math:`\exp(-\Delta_s / 2)` for the evidence. Two structures that fit the history equally
    put weight on each other's forecast in the ratio of their priors however much they differ
    beyond it. ``n`` counts independent units, not residuals: a WLM class's days (its intervals
    within a day share the day's load profile, and a structure's misfit repeats along it), a
    table's measured values. A structure whose cost is 10 % above the best gets ``exp(-0.29)``
    of the best's weight over 6 days (equal priors), and ``exp(-24)`` if its 500 intervals were
    counted as independent.

    References
    ----------
    Burnham & Anderson (2002), *Model Selection and Multimodel Inference*, 2nd ed., sec. 2.9.
    Hoeting, Madigan, Raftery & Volinsky (1999), "Bayesian model averaging: a tutorial",
    *Statistical Science* 14, 382-417 (posterior model probabilities, prior times evidence).
    """
    costs = np.asarray(costs, dtype=float)
    q = np.ones(len(costs)) if prior is None else np.asarray(prior, dtype=float)
    if q.shape != costs.shape or not np.all(np.isfinite(q) & (q > 0)):
        raise ValueError(f"structure priors must be positive, one per structure; got {prior!r}")
    good = np.isfinite(costs) & (costs > 0)
    weights = np.zeros(len(costs))
    if not good.any():
        weights[np.argmin(np.where(np.isfinite(costs), costs, np.inf))] = 1.0
        return weights
    delta = n * np.log(costs[good] / costs[good].min())
    raw = q[good] * np.exp(-0.5 * delta)
    weights[good] = raw / raw.sum()
    return weights


#: Akaike weight under which a dispatcher structure is not named (and a closed fit gives it no
#: bootstrap draw): 200 draws cannot resolve it
MIN_STRUCTURE_WEIGHT = 0.01


def structure_sentence(structures: list[dict[str, Any]], help_rule: str, eligible_bursts: int, weighed_by: str) -> str:
    """The dispatcher structures a band carries, with their Akaike weights, for a person to read.

    ``structures``: rows with ``help_rule``, ``eligible_bursts`` and ``weight``
    (:func:`structure_weights`); fewer than two: the fit's one structure, ``help_rule`` with
    ``eligible_bursts``, said to be fixed. ``weighed_by`` opens the sentence: what weighed them,
    with its verb ("the intervals weigh", "the table weighs").
    """
    rows = sorted((r for r in structures if r.get("weight", 0) >= MIN_STRUCTURE_WEIGHT), key=lambda r: -r["weight"])
    if len(structures) < 2 or not rows:
        return f"help rule {help_rule}, {eligible_bursts} eligible burst(s) (fixed)"
    shares = ", ".join(f"{r['help_rule']} help with {r['eligible_bursts']} eligible bursts "
                       f"{100 * r['weight']:.0f} %" for r in rows)
    rest = len(structures) - len(rows)
    priors = {r["help_rule"]: float(r["prior"]) for r in structures if "prior" in r}
    said = (" with the help rules' priors " + " : ".join(f"{rule} {q:g}" for rule, q in priors.items())
            if len(set(priors.values())) > 1 else "")
    return (f"{weighed_by} {shares}" + (f"; {rest} other structure(s) under 1 %" if rest else "")
            + f" (Akaike weights{said})")


def help_rule_weights(structures: list[dict[str, Any]]) -> dict[str, float]:
    """Each GCP-help rule's total Akaike weight over the ``structures`` (rows with ``help_rule``, ``weight``)."""
    return {rule: sum(s["weight"] for s in structures if s["help_rule"] == rule)
            for rule in {s["help_rule"] for s in structures}}


class ModelError(ValueError):
    """A table cannot be fitted by the requested model (too few points, missing columns, ...)."""


class Results(Protocol):
    """What every fitted model family offers its consumers; they call these, never test the class.

    ``family`` names it in the registry (:data:`kneecap.modeling.serialise.FAMILIES`),
    ``targets`` are the columns it predicts and ``load_unit`` what its load counts (``clients``
    of a closed workload, ``tps`` of an open one). :class:`kneecap.modeling.family.ResultsBase`
    gives a family that only predicts at a load the rest.
    """

    family: str
    targets: tuple[str, ...]
    pools: bool

    @property
    def load_unit(self) -> str:
        """``clients`` or ``tps``: the column of :meth:`curve`'s grid and of :class:`Knee`'s loads."""

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The ``targets`` (with ``_lo`` / ``_hi`` bands) for each scenario row of ``frame``."""

    def curve(self, *, max_load: float, points: int = 60, max_draws: int | None = None,
              **configuration: Any) -> pd.DataFrame:
        """:meth:`predict` on a grid of ``load_unit`` up to ``max_load``, the grid as the first column.

        ``configuration``: what the family lets a question vary besides the load (engines, think
        time, the other classes' load); the family's defaults otherwise.
        """

    def knee(self, *, k: float, max_draws: int | None = None, **configuration: Any) -> Knee | None:
        """Where the response passes ``k`` x unloaded (:func:`kneecap.modeling.knee.past_knee`).

        None for a family that models no knee.
        """

    def answer(self, scenario: Mapping[str, Any], policy: Any, *, growth: Any = None) -> dict[str, Any]:
        """The family's answers to one scenario, as a forecast row's columns (:mod:`kneecap.modeling.answers`).

        ``policy`` is the :class:`kneecap.modeling.ziip.PlannerPolicy` (knee factor, planner
        limits); ``growth``, for a family that carries a history of peaks, a function
        ``(results, knee, slo_tps) -> columns`` that dates their reach of the knee
        (:func:`kneecap.forecasting.growth_answers`: the trend models are not the families').
        """

    def factor_demand(self) -> tuple[float, float] | None:
        """The CPU demand per transaction (ms) and zIIP-eligible share catalogue factors adjust.

        None for a family whose answers do not go through such a demand.
        """

    def with_demand(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float, ratio: float) -> Any:
        """The fit with its demand adjusted (only called where :meth:`factor_demand` is not None)."""

    def inputs_of(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Measured rows as the family predicts them (a WLM class: each interval on its own LPAR state)."""

    def plot_groups(self, rows: pd.DataFrame) -> list[tuple[str, dict[str, Any], pd.DataFrame]]:
        """``(key, configuration, measured rows)`` of each fit plot (:func:`kneecap.training.fit_plot_tables`)."""

    def fit_report(self, rows: pd.DataFrame, *, knee_k: float, config: Any) -> FitReport:
        """What the train stage logs beside the fit: metrics, notes, params."""

    def member_errors(self, frame: pd.DataFrame, actual: np.ndarray, target: str) -> dict[str, Any] | None:
        """Per member of a combination of families, its weight and errors (the backtest's table)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON document of the fit (read back by the class's ``from_dict``)."""

    def summary(self) -> str:
        """The fitted parameters and training error, for a person to read."""


@dataclass
class FitReport:
    """What the train stage logs beside a fit: ``metrics`` (numbers), ``notes`` (lines), ``params``."""

    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


def predict_at(results: Any, point: Mapping[str, Any], **options: Any) -> pd.Series:
    """``results.predict`` at one point (a scenario's columns), as one row."""
    return results.predict(pd.DataFrame([dict(point)]), **options).iloc[0]


def require_columns(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    """Raise :class:`ModelError` naming the columns ``what`` needs and the frame lacks (or has all-null)."""
    missing = [c for c in columns if c not in frame.columns or frame[c].isna().all()]
    if missing:
        raise ModelError(f"{what} needs column(s) {', '.join(missing)}; the table has none")


def column_or(frame: pd.DataFrame, column: str, default: float) -> np.ndarray:
    """``frame[column]`` as floats with nulls (or a missing column) replaced by ``default``."""
    if column not in frame.columns:
        return np.full(len(frame), float(default))
    return pd.to_numeric(frame[column], errors="coerce").fillna(default).to_numpy(dtype=float)


def positive_pairs(table: pd.DataFrame, x_col: str, y_col: str, what: str,
                   min_points: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows where both columns are positive: ``(x, y, row_mask)``; too few is a :class:`ModelError`."""
    require_columns(table, (x_col, y_col), what)
    x = column_or(table, x_col, np.nan)
    y = column_or(table, y_col, np.nan)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < min_points:
        raise ModelError(f"{what} needs at least {min_points} ({x_col}, {y_col}) points, got {int(ok.sum())}")
    return x[ok], y[ok], ok


def mape_pct(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Mean absolute percentage error, %, over rows with a non-zero actual value."""
    actual = np.asarray(actual, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    ok = np.isfinite(actual) & np.isfinite(predicted) & (actual != 0)
    if not ok.any():
        return float("nan")
    return float(np.mean(np.abs(predicted[ok] - actual[ok]) / np.abs(actual[ok])) * 100.0)


def to_jsonable(value: Any) -> Any:
    """Numbers, arrays and frames as plain JSON types (NaN becomes None)."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if not np.isfinite(v) else v
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    return value
