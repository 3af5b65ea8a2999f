"""The knee of an open dispatch fit: the crossing on a load grid and the draws that keep its structures.

Used by :meth:`kneecap.modeling.open_dispatch.OpenDispatchResults.knee`.
"""

from __future__ import annotations

import numpy as np

from kneecap.modeling.base import split_lognormal
from kneecap.modeling.knee import knee_response_ms, past_knee


def first_crossing(grid: np.ndarray, resp: np.ndarray, unloaded_ms: float, k: float, sat: float,
                   side: str = "") -> float:
    """The load where ``resp`` first passes ``k`` x ``unloaded_ms`` (:func:`past_knee`), interpolated on ``grid``.

    ``sat`` when the grid (which stops short of saturation) never passes it. ``side`` ``"lo"`` /
    ``"hi"``: the grid point before / after the crossing instead, for an interval's ends. Near
    saturation the curve is steep and convex, where the chord crosses early: an interpolated
    upper end lay up to a grid step (a 1/800th of saturation) inside what the curve allows, and
    fell 0.1 tps short of the simulated knee on a pool-rule LPAR (bench_smf_class seed 72).
    """
    above = np.flatnonzero(past_knee(resp, unloaded_ms, k))
    if len(above) == 0:
        return float(sat)
    j = int(above[0])
    if j == 0:
        return float(grid[0])
    if side:
        return float(grid[j - 1] if side == "lo" else grid[j])
    r_lo, r_hi = resp[j - 1], resp[j]
    target = knee_response_ms(unloaded_ms, k)
    return float(grid[j] if not np.isfinite(r_hi)
                 else grid[j - 1] + (grid[j] - grid[j - 1]) * (target - r_lo) / (r_hi - r_lo))


#: Draws of the knee per bootstrap draw in :func:`knee_draws`.
KNEE_DRAWS_PER_REFIT = 10


def knee_draws(knees: np.ndarray, early: np.ndarray, late: np.ndarray, alpha: float, seed: int) -> tuple[float, ...]:
    r"""Draws of the knee that keep the refits' mixture of structures, each widened as its interval is.

    Refit ``i`` crossed at ``knees[i]``, at ``early[i]`` with its curve widened up and at
    ``late[i]`` widened down (:meth:`OpenDispatchResults.knee`). Each refit gives
    :data:`KNEE_DRAWS_PER_REFIT` draws from a split log-normal whose ``alpha/2`` and
    ``1 - alpha/2`` quantiles are those ends:

    .. math::

        k = k_i \exp\big(z\, \sigma_i(z)\big), \qquad
        \sigma_i = \frac{\log(k_i / e_i)}{z_{1-\alpha/2}}\ (z < 0), \quad
        \frac{\log(\ell_i / k_i)}{z_{1-\alpha/2}}\ (z \ge 0), \qquad z \sim N(0, 1)

    A knee date drawn from these (:func:`kneecap.growth.crossing_date`) keeps what a split
    log-normal through the interval's ends loses: where structures the history cannot tell apart
    put the knee far apart the draws are two humps, and the later one holds a real share of the
    dates. On 4 GCPs + 3 zIIPs with a steep week (``bench_smf_class.py --variant pool_4g3z
    --ratio 1.48``) the interval, 3,527-4,968 tps, held the simulated 4,786, but the best
    structure's 3,872 as its median left the simulated crossing a day past the 90 % date on
    every seed.
    """
    knees, early, late = (np.asarray(a, dtype=float) for a in (knees, early, late))
    ok = np.isfinite(knees) & np.isfinite(early) & np.isfinite(late) & (early > 0) & (knees > 0)
    if not ok.any():
        return ()
    k, e, ell = knees[ok], np.minimum(early[ok], knees[ok]), np.maximum(late[ok], knees[ok])
    z = np.random.default_rng(seed).standard_normal((len(k), KNEE_DRAWS_PER_REFIT))
    return tuple(float(v) for v in split_lognormal(z, k[:, None], e[:, None], ell[:, None], alpha).ravel())
