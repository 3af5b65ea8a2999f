"""Open load: the residence with the help cycle taken in, over loads and over measured intervals."""

from __future__ import annotations

import numba
import numpy as np

from kneecap.modeling.dispatch._help_cycle import (
    Cycle,
    cycle_waits_raised_to_peak,
    cycle_weight,
    monotone_cycle_waits,
    tabulate_cycle_least_waits,
)
from kneecap.modeling.dispatch._memo import forget
from kneecap.modeling.dispatch._open_queues import queue_residence
from kneecap.modeling.dispatch._rules import Rules


@numba.njit(cache=True)
def open_residence(lam, d, f, rules, memo):
    """Residence, spill, busy per engine and waits at ``lam`` tran/ms.

    ``lam`` transactions/ms of ``d`` ms CPU, a share ``f`` zIIP-eligible, on the LPAR and rules of
    ``rules`` (:class:`Rules`). ``memo`` (:class:`LparMemo`) keeps what is found once per LPAR
    and class (the help cycle's least waits, the pool rule's peaks), so a caller solving many loads
    of one LPAR finds it once.

    Returns (residence ms, spill, zIIP busy per engine, GCP busy per engine, eligible wait ms,
    GCP-only wait ms). The waits are per transaction: eligible bursts queued for a zIIP (until a
    zIIP or a helping GCP takes them) and GCP-only bursts queued for a GCP (with no zIIP online all
    of it, eligible work included, is GCP wait).
    """
    k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s, rho = rules
    resid, spill, ziip_busy, gcp_busy, wait_e, wait_g = queue_residence(lam, d, f, rules, memo)
    ke = k_e if f > 0.0 else 0
    if not (honor and pool and ke > 0 and n_z > 0 and d > 0.0 and resid < np.inf):
        return resid, spill, ziip_busy, gcp_busy, wait_e, wait_g
    a_g = gcp_busy * n_g
    # where the zIIPs cannot keep up, help comes in cycles (see _help_cycle_wait): the smaller
    # response of the two, in proportion to the cycle's weight
    kg = k_g if f < 1.0 else 0
    a_bg_g = bg_g * n_g
    a_z = lam * f * d + bg_z * n_z
    s_e = f * d / ke
    c_z = n_z * (1.0 - bg_z)
    weight = cycle_weight(c_z, tau, s_e)
    if weight > 0.0:
        cyc = Cycle(s_e, ke, kg, c_z, n_g, (1.0 - f) * d, a_bg_g, bg_s, tau, rho)
        if memo.cycle[0] < 0.0:  # the same for every load of one LPAR and class: found once (callers keep it)
            memo.cycle[0], memo.cycle[1], memo.cycle[2] = tabulate_cycle_least_waits(cyc, memo.cycle_table)
            memo.cycle_peak = -1.0  # found when first needed (cycle_waits_raised_to_peak)
        e_c, g_c, spill_c = monotone_cycle_waits(lam, cyc, memo)
        e_c, g_c = cycle_waits_raised_to_peak(e_c, g_c, d, f, resid, rules, weight, memo)
        if d + e_c + g_c < resid:
            resid -= weight * (resid - d - e_c - g_c)
            wait_e += weight * (e_c - wait_e)
            wait_g += weight * (g_c - wait_g)
        if spill_c > spill:
            moved = weight * (spill_c - spill)
            spill += moved
            a_g += moved * a_z * rho
            ziip_busy -= moved * a_z / n_z
    if a_g >= n_g:
        return np.inf, spill, ziip_busy, a_g / n_g, np.inf, np.inf
    return resid, spill, ziip_busy, a_g / n_g, wait_e, wait_g


@numba.njit(cache=True)
def open_kernel(lams, ds, r0s, f, rules, memo):
    """:func:`open_residence` at every load of ``lams`` (tran/ms) for every demand of ``ds``, delay ``r0s`` added.

    ``memo`` is an :data:`LPAR_MEMO` record the caller owns, used afresh for each demand.
    """
    b = ds.shape[0]
    m = lams.shape[0]
    x = np.empty((b, m))
    resp = np.empty((b, m))
    spill = np.empty((b, m))
    zb = np.empty((b, m))
    gb = np.empty((b, m))
    sat = np.zeros((b, m), dtype=np.bool_)
    for i in range(b):
        forget(memo)  # each parameter set's own (its demand sets the burst size)
        for j in range(m):
            r, s, z, g, _, _ = open_residence(lams[j], ds[i], f, rules, memo)
            x[i, j] = lams[j]
            resp[i, j] = r0s[i] + r
            spill[i, j] = s
            zb[i, j] = z
            gb[i, j] = g
            sat[i, j] = not np.isfinite(r)
    return x, resp, spill, zb, gb, sat


@numba.njit(cache=True)
def rows_kernel(lams, d, f, rules, n_gs, n_zs, bg_gs, bg_zs, memo):
    """:func:`open_residence` at load ``lams[j]`` on the LPAR state of row ``j`` (engines, other classes' busy).

    ``memo`` is an :data:`LPAR_MEMO` record the caller owns, used afresh for each LPAR state.
    """
    m = lams.shape[0]
    resp = np.empty(m)
    spill = np.empty(m)
    zb = np.empty(m)
    gb = np.empty(m)
    wz = np.empty(m)
    wg = np.empty(m)
    for j in range(m):
        if j == 0 or n_gs[j] != n_gs[j - 1] or n_zs[j] != n_zs[j - 1] or bg_gs[j] != bg_gs[j - 1] \
                or bg_zs[j] != bg_zs[j - 1]:
            forget(memo)  # another LPAR state: its own least-wait rate (a curve's rows share one)
        row = Rules(rules.k_e, rules.k_g, n_gs[j], n_zs[j], rules.honor, rules.tau, rules.pool, bg_gs[j], bg_zs[j],
                    rules.bg_s, rules.rho)
        resp[j], spill[j], zb[j], gb[j], wz[j], wg[j] = open_residence(lams[j], d, f, row, memo)
    return resp, spill, zb, gb, wz, wg
