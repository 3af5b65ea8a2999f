"""The open residence the queues give, before the help cycle: M/M/c+D or the pool rule, Cobham's GCPs."""

from __future__ import annotations

import numba
import numpy as np

from kneecap.modeling.dispatch._pool_rule import ZiipPool, pool_wait_held_at_peaks, ziip_spill_and_wait
from kneecap.modeling.dispatch._queues import erlang_c, gcp_priority_waits, rejoining_bursts, residual_ratio, ziip_queue
from kneecap.modeling.dispatch._rules import on_gcps


@numba.njit(cache=True)
def queue_residence(lam, d, f, rules, memo):
    """:func:`open_residence` before the help cycle: the M/M/c+D or pool rule's queues alone.

    Returns what :func:`open_residence` does; ``memo``'s pool rule peaks as there.
    """
    k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s, rho = rules
    inf = np.inf
    ke = k_e if f > 0.0 else 0
    kg = k_g if f < 1.0 else 0
    a_bg_g = bg_g * n_g
    if d <= 0.0:
        return 0.0, 0.0, bg_z, bg_g, 0.0, 0.0
    if n_z == 0:
        d, f = on_gcps(d, f, rho)  # eligible work at GCP speed
        a = lam * d + a_bg_g
        rate = lam * (ke + kg) + a_bg_g / bg_s
        if a >= n_g:
            return inf, 1.0 if f > 0.0 else 0.0, np.nan, a / n_g, inf, inf
        wait = 0.0
        if rate > 0.0:
            # every burst on one FCFS pool: GCP-only and eligible bursts of different sizes mix
            mix = residual_ratio(lam * kg, (1.0 - f) * d / kg if kg > 0 else 0.0, lam * ke,
                                  f * d / ke if ke > 0 else 0.0, a_bg_g / bg_s, bg_s,
                                  lam * rejoining_bursts(kg, ke, 1.0))
            wait = erlang_c(n_g, a) * (a / rate) / (n_g - a) * mix
        return d + (ke + kg) * wait, 1.0 if f > 0.0 else 0.0, np.nan, a / n_g, 0.0, (ke + kg) * wait
    # zIIP pool
    a_e = lam * f * d
    a_bz = bg_z * n_z
    rate_z = lam * ke + a_bz / bg_s
    a_z = a_e + a_bz
    spill = 0.0
    wait_z = 0.0
    if rate_z > 0.0 and a_z > 1e-12:  # a vanishing eligible share has no zIIP queue to speak of
        # beside other classes' bursts of another size, one exponential burst whose M/M/c wait is
        # the class's (the load kept); the helped work's own rate stays rate_z (the GCP pool's)
        rate_q, s_z = ziip_queue(lam, a_e, f * d / ke if ke > 0 else 0.0, ke, n_z, a_bz, bg_s)
        if honor:
            # the share of the pool's bursts a transaction offers as its previous one there ends
            # (other classes' work offers none): of the bursts offered, rate_z, not the queue's rate_q
            chain = lam * (ke - 1.0) / rate_z if ke > 0 else 0.0
            spill, wait_z, _ = ziip_spill_and_wait(rate_q, s_z, n_z, tau, pool, 1.0,
                                                   (n_g - lam * (1.0 - f) * d - a_bg_g) / rho, chain)
            if ke > 0:
                # past the zIIPs' capacity the wait may fall as the load rises: held at its first
                # peak beyond it (found once per LPAR and class, callers keep it)
                zp = ZiipPool(f * d / ke, ke, a_bz / bg_s, a_bz, n_z, tau, n_g / rho, a_bg_g / rho, (1.0 - f) * d / rho)
                wait_z = pool_wait_held_at_peaks(wait_z, lam, zp, pool, memo)
        else:
            if a_z >= n_z:
                return inf, 0.0, 1.0, (lam * (1.0 - f) * d + a_bg_g) / n_g, inf, inf
            wait_z = erlang_c(n_z, a_z) * s_z / (n_z - a_z)
    ziip_busy = a_z * (1.0 - spill) / n_z
    # helped work on the GCPs at GCP speed: rho times the zIIP engines it would have taken
    w_hi, w_lo, a_g = gcp_priority_waits(lam, d, f, kg, n_g, a_bg_g, bg_s, spill * a_z * rho, spill * rate_z,
                                         spill * a_bz * rho)
    if a_g >= n_g:
        return inf, spill, ziip_busy, a_g / n_g, inf, inf
    # the helped bursts run rho times their zIIP time
    return (d + spill * f * d * (rho - 1.0) + kg * w_hi + ke * (wait_z + spill * w_lo), spill, ziip_busy, a_g / n_g,
            ke * (wait_z + spill * w_lo), kg * w_hi)
