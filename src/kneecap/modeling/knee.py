r"""The knee of a response curve: the rule every model family applies, its estimate, its sentence.

The *model knee* is the first load at which the predicted response breaks away from the unloaded
one, by the rule

.. math:: R(L) > k \, R_0

with :math:`R_0` the response with (almost) no load of the class: one client for a closed
workload, the arrival rate going to zero for an open one, the other classes still present.
:func:`past_knee` is the rule, written once: every family's ``knee()`` applies it to its curve
(:meth:`kneecap.modeling.closed.ClosedMVAResults.knee` on clients,
:meth:`kneecap.modeling.open_dispatch.OpenDispatchResults.knee` on tps), and the closed solver
stops a population's recursion once it holds (``stop_ratio`` of
:func:`kneecap.modeling.dispatch.solve_closed`). :class:`Knee` is the one estimate they return,
and :func:`knee_sentence` the one sentence the desk prints of it.

The *observed knee* (:func:`observed_knee`) is a diagnostic beside it: Kneedle on the measured
points, which can only fall on a measured point and cannot extrapolate; with 5-10 points it is a
sanity check on the model's knee, never a forecast (docs/results.md puts the two side by side).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kneecap.config import TrainConfig

#: What a knee's load counts: clients of a closed workload, or transactions per second of an open one.
#: The knee rule's ``k`` where a caller gives none: params.yaml ``train.knee_k``'s default
#: (:class:`kneecap.config.TrainConfig`, where it is written).
KNEE_K = TrainConfig.knee_k
LOAD_UNITS = ("clients", "tps")


def past_knee(resp_ms: Any, unloaded_resp_ms: Any, k: float) -> Any:
    r"""Whether a response has broken away: :math:`R > k R_0` (the knee rule).

    Plain arithmetic on floats or numpy arrays (broadcast), so a compiled solver can apply the
    same rule inside its recursion: ``numba.njit(past_knee)`` compiles it for floats. A response
    that is no number (a population not solved) is not past the knee; an infinite one (a pool
    full) is.

    Examples
    --------
    >>> past_knee(3.1, 1.0, 3.0), past_knee(3.0, 1.0, 3.0)
    (True, False)
    """
    return resp_ms > k * unloaded_resp_ms


def knee_response_ms(unloaded_resp_ms: float, k: float) -> float:
    """The response at which the knee rule fires: ``k`` times the unloaded response (:func:`past_knee`)."""
    return k * unloaded_resp_ms


@dataclass(frozen=True)
class Knee:
    """A model knee with its interval: where the response passes ``k`` x unloaded, and saturation.

    One estimate for every model family; ``load_unit`` says what the loads count (``clients`` or
    ``tps``). ``load`` is the point fit's knee, ``load_lo`` / ``load_hi`` the ``alpha/2`` and
    ``1 - alpha/2`` quantiles over the bootstrap draws (infinite: a draw that never passes within
    reach). ``saturation`` is the load at which the CPU pools saturate (Kleinrock's
    :math:`N^* = (D + R_0 + Z) / D_{max}` for clients, the pools' capacity for tps) with its
    interval; ``max_tps`` the throughput there. ``configuration`` is where the knee was asked
    (engines, think time or the other classes' busy). A family fills what it knows besides:
    ``draws`` (knees to draw a crossing date from), ``by_help_rule`` (the median knee of the draws
    under each GCP-help rule) and ``busy_pct_at_knee`` (each pool's busy per engine there, keyed
    ``ziip`` and ``gcp``).
    """

    load_unit: str
    k: float
    load: float
    load_lo: float
    load_hi: float
    saturation: float
    saturation_lo: float
    saturation_hi: float
    max_tps: float
    unloaded_resp_ms: float
    configuration: dict[str, float] = field(default_factory=dict)
    draws: tuple[float, ...] = ()
    by_help_rule: dict[str, float] = field(default_factory=dict)
    busy_pct_at_knee: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.load_unit not in LOAD_UNITS:
            raise ValueError(f"a knee's load is one of {LOAD_UNITS}, got {self.load_unit!r}")

    @property
    def reached(self) -> bool:
        """Whether the point fit's response passes the rule at a finite load."""
        return math.isfinite(self.load)


def _load_words(x: float, unit: str) -> str:
    return f"{x:.0f}" if unit == "clients" else f"{x:.4g}"


def knee_sentence(knee: Knee, measured_max: float | None = None) -> str:
    """One sentence a planner can paste into a report; ``measured_max``: the largest load measured.

    Examples
    --------
    >>> knee = Knee("tps", 3.0, 812.4, 760.0, 860.2, 1100.0, 1100.0, 1100.0, 1100.0, 1.234)
    >>> knee_sentence(knee, 640.0)  # doctest: +NORMALIZE_WHITESPACE
    'Response time breaks away (> 3x unloaded, 1.23 ms) at about 812.4 tps (95% band 760-860.2);
     the pools saturate at 1100 tps. Measured up to 640 tps.'
    """
    unit = knee.load_unit
    unloaded = f", {knee.unloaded_resp_ms:.3g} ms" if math.isfinite(knee.unloaded_resp_ms) else ""
    words = (f"Response time breaks away (> {knee.k:g}x unloaded{unloaded}) at about "
             f"{_load_words(knee.load, unit)} {unit} (95% band {_load_words(knee.load_lo, unit)}-"
             f"{_load_words(knee.load_hi, unit)}); ")
    if unit == "clients":
        words += (f"the CPU pools saturate at N* = {knee.saturation:.0f} clients, {knee.max_tps:.0f} tps.")
    else:
        words += f"the pools saturate at {knee.max_tps:.4g} tps."
    if measured_max is not None:
        words += f" Measured up to {_load_words(measured_max, unit)} {unit}."
    return words


def observed_knee(load: np.ndarray, resp_ms: np.ndarray, *, sensitivity: float = 1.0) -> float | None:
    """The observed knee: Kneedle on measured points, a diagnostic beside the model's :class:`Knee`.

    The knee of an increasing, convex response-time curve, or ``None`` when there is none. It can
    only fall on a measured point.

    Parameters
    ----------
    load : clients (or TPS) of each measured point.
    resp_ms : measured response times.
    sensitivity : Kneedle's ``S``.

    References
    ----------
    Satopää, V., Albrecht, J., Irwin, D. and Raghavan, B. (2011), "Finding a 'Kneedle' in a
    Haystack: Detecting Knee Points in System Behavior", ICDCS Workshops. Implementation: ``kneed``.
    """
    from kneed import KneeLocator

    x = np.asarray(load, dtype=float)
    y = np.asarray(resp_ms, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(np.unique(x)) < 3:
        return None
    order = np.argsort(x)
    locator = KneeLocator(x[order], y[order], S=sensitivity, curve="convex", direction="increasing",
                          online=False)
    return None if locator.knee is None else float(locator.knee)
