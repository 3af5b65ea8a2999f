"""Scoring an open dispatch fit's structures on the intervals: response, spill and delay samples.

Each (help rule, eligible bursts) structure is solved on every interval; its ``R0`` is fitted to the
response, and its cost adds how far the spill onto GCPs and the zIIP delay samples are from RMF's.
The bootstrap resamples days and draws a structure by its weight. Used by
:mod:`kneecap.modeling.open_dispatch`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import optimize

from kneecap.modeling._open_dispatch_intervals import Intervals, demand_and_eligibility
from kneecap.modeling.base import ModelError, structure_weights
from kneecap.modeling.dispatch import HELP_RULES, Dispatch, solve_open_rows

#: How far the measured CPU delay may be from the model's before the fit flags it: a factor of 2 either
#: way. A queue's wait scales with ``(1 + C^2) / 2`` of its service times' squared coefficient of
#: variation ``C^2`` (Pollaczek-Khinchine), so 2 spans bursts from constant (``C^2 = 0``, half the
#: exponential's wait) to very irregular (``C^2 = 3``, twice it); further off, something the model
#: does not have is at work (dispatching priority, a local lock, capping).
CPU_DELAY_TOLERANCE = 2.0
#: Fewest CPU delay samples (measured or predicted, the larger) a comparison needs before it can
#: flag anything: with 100 the Poisson scatter of the sum is 10 %, a factor of 2 is 7 of it.
MIN_DELAY_SAMPLES = 100
#: Floor of the eligible work's share on GCPs in the spill cost (1 point): an interval where
#: neither the model nor RMF has any IIPCP costs nothing, and a few tenths of a point of
#: measurement noise near zero do not outweigh the busy intervals.
SPILL_FLOOR = 0.01
#: The analytic dispatch model's own error against the dispatcher simulation, log scale: the 95th
#: percentile of |log(model / simulated response)| over the 103 points of the LPAR grid with
#: IIPHONORPRIORITY=YES and the busier pool at most 95 % busy (``python benchmarks/bench_dispatch.py
#: --full --sim-from benchmarks/reference/dispatch_grid_sim.csv --precision 0.02 --save t.csv``,
#: measured 2026-11-28: 0.0378; 0.0304 over all 279 such points). No history scores the model near
#: the knee before the load gets there, so every band is at least this wide beyond its parameters'.
MODEL_ERROR_LOG = 0.0378


def solve_intervals(iv: Intervals, d: float, f: float, rules: Dispatch):
    return solve_open_rows(iv.tps, d, f, n_gcp=iv.n_gcp, n_ziip=iv.n_ziip, bg_gcp_busy_pct=iv.bg_gcp_pct,
                           bg_ziip_busy_pct=iv.bg_ziip_pct, dispatch=rules)


def sample_cost(iv: Intervals, ziip_wait_ms: np.ndarray, d: float, f: float) -> tuple[float, int]:
    r"""How far the predicted zIIP waits are from the zIIP delay samples: ``(mean cost, intervals)``.

    WLM samples each unit of work every 250 ms, so by Little's law delay and using samples stand
    in the ratio of the time spent queued for a zIIP to the eligible CPU time, whatever the
    sampling rate. With ``u`` the eligible using samples (on a zIIP or a CP) and ``w_Z`` the
    predicted queued time per transaction, the predicted delay samples are ``u w_Z / (f D)``; the
    cost is the inverse-variance weighted mean of :math:`e^2 = \log^2((\hat n + 1)/(n + 1))` over
    intervals with at least :data:`MIN_USING_SAMPLES` using samples (the 1 keeps an interval with
    no delay finite):

    .. math::

        c = \frac{\sum_i v_i^{-1} e_i^2}{\sum_i v_i^{-1}}, \qquad
        v_i = \frac{1}{n_i + 1} + \sigma_M^2, \qquad \sigma_M = \frac{\epsilon_{95}}{1.96}

    A count of ``n`` Poisson samples scatters by :math:`1/(n + 1)` on the log scale (delta
    method), so a quiet interval with a handful of delay samples says little, and no count says
    more than the model itself can: :math:`\sigma_M` is the analytic model's own log error
    against the dispatcher simulation (:data:`MODEL_ERROR_LOG`, a 95th percentile, as a normal
    standard deviation). Unweighted, the quiet intervals' scatter decided between burst counts:
    on one eligible burst beside 0.5 ms background bursts (``tests/smf/simdays.py`` ``VARIANTS
    ["burst_k1"]``, seeds 101-102) it gave the simulated structure 21-22 % of the weight and the
    second rank, weighted 83 % and the first; on 4 GCPs + 3 zIIPs with a steeper week
    (``bench_smf_class.py --variant pool_4g3z --ratio 1.4``) 24-25 %, weighted 36-38 %, first
    either way; the simulated structure's weight rose on every LPAR and week tried.
    ``(0, 0)`` where fewer than 3 intervals qualify.

    References
    ----------
    McCullagh & Nelder (1989), *Generalized Linear Models*, 2nd ed., ch. 6 (Poisson counts, the
    variance of their log).
    """
    ok, predicted = predicted_delay_samples(iv, ziip_wait_ms, d, f)
    if ok.sum() < 3:
        return 0.0, 0
    measured = iv.ziip_delay_samples[ok]
    precision = 1.0 / (1.0 / (measured + 1.0) + (MODEL_ERROR_LOG / 1.96) ** 2)
    cost = np.log((predicted + 1.0) / (measured + 1.0)) ** 2
    return float(np.sum(precision * cost) / np.sum(precision)), int(ok.sum())


def predicted_delay_samples(iv: Intervals, ziip_wait_ms: np.ndarray, d: float, f: float
                            ) -> tuple[np.ndarray, np.ndarray]:
    """``(intervals with usable samples, their predicted zIIP delay samples u w_Z v_Z / (f D))``.

    ``f D`` is CP-equivalent ms; a zIIP runs it in ``f D / v_Z`` of its own ms (``v_Z`` the
    interval's NFFS / 256), the time the using samples count.
    """
    ok = np.isfinite(iv.ziip_using_samples) & np.isfinite(ziip_wait_ms) & (f * d > 0)
    return ok, (iv.ziip_using_samples[ok] * ziip_wait_ms[ok] * iv.ziip_speed[ok] / (f * d) if ok.any()
                else np.empty(0))


def cpu_delay_check(iv: Intervals, gcp_wait_ms: np.ndarray) -> dict[str, Any]:
    r"""The model's GCP waits against the 72.3 CPU delay samples: a check on the GCP side of the fit.

    WLM samples every unit of work every 250 ms (``R723MTVL``) and counts the class's units
    waiting to be dispatched on a CP in ``R723CCDE`` (CPU delay) and those running on one in
    ``R723CCUS`` (CPU using; zIIP-eligible work running on a CP included, as APPL% CP includes
    IIPCP). A state's samples over an interval of length ``t`` are ``N t / 0.25 s``, ``N`` the
    time-average number of the class's transactions in it, and by Little's law ``N = X w`` with
    ``X`` the tps and ``w`` a transaction's time in the state. So the sampling rate cancels in the
    ratio of the two states, which is the ratio of the times:

    .. math::

        \frac{\mathrm{CCDE}_i}{\mathrm{CCUS}_i} = \frac{w_{G,i}}{D_{CP,i}}, \qquad
        D_{CP,i} = \frac{10\, CP_i}{X_i}\ \text{ms (APPL\% CP, IIPCP included)},
        \qquad \widehat{\mathrm{CCDE}}_i = \mathrm{CCUS}_i\, \frac{\hat w_{G,i}}{D_{CP,i}}

    with ``\hat w_G`` the model's time per transaction with a burst queued for a GCP
    (:class:`~kneecap.modeling.dispatch.DispatchSolution` ``gcp_wait_ms``: GCP-only bursts, and all
    of them without zIIPs; helped eligible work queued for a GCP is zIIP delay, as WLM's
    ``R723SUPD``). Over the history the measured and the model's GCP delay per transaction are

    .. math::

        \bar w_G = \frac{\sum_i \mathrm{CCDE}_i}{\sum_i \mathrm{CCUS}_i}\, \bar D_{CP}, \qquad
        \hat{\bar w}_G = \frac{\sum_i \widehat{\mathrm{CCDE}}_i}{\sum_i \mathrm{CCUS}_i}\, \bar D_{CP},
        \qquad \bar D_{CP} = \frac{10 \sum_i CP_i t_i}{\sum_i X_i t_i}

    (transaction-weighted means, by Little's law again), and their ratio
    ``sum CCDE / sum CCDE-hat`` is the check, overall and over the busiest tenth of the intervals
    by tps (where a knee is read). It is not fitted: the CPU delay hardly depends on the one thing
    the samples could choose, the eligible burst count (on the simulated days of
    ``tests/smf/simdays.py`` every count from 1 to 8 predicts the same GCP delay within 2.4 %,
    leaning to 1, while the predicted zIIP delay samples move 1.8-fold between them; scored beside
    the zIIP delay samples it changed no choice and no figure of ``benchmarks/bench_smf_class.py``),
    and ``D`` and ``f`` are measured. A ratio beyond :data:`CPU_DELAY_TOLERANCE` either way, with at least
    :data:`MIN_DELAY_SAMPLES` samples, is ``flagged``: the GCP side of the model is missing
    something (the class below the other work in dispatching priority, TCBs waiting for the local
    lock, which ``R723CCDE`` also counts, bursts far from exponential), and its GCP waits, and a
    knee the GCPs set, are that far off. CPU capping delay (``R723CCCA``) is not part of
    ``R723CCDE`` and not compared.

    Parameters
    ----------
    iv : the fitted intervals (their ``cpu_using_samples`` / ``cpu_delay_samples`` NaN where absent).
    gcp_wait_ms : the model's GCP wait per transaction in each interval, ms.

    Returns
    -------
    dict
        ``{}`` when fewer than 3 intervals carry the samples or they have no CPU using samples;
        else ``intervals``, ``measured_samples``, ``model_samples``, ``measured_ms_per_tran``,
        ``model_ms_per_tran``, ``ratio`` (measured over model), ``peak_intervals``,
        ``peak_ratio``, ``share_of_resp_pct`` (the measured GCP delay as a share of the measured
        mean response, both per transaction), ``flagged``.

    References
    ----------
    IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3, Service/Report
    Class Period Data Section: ``R723CCUS`` (CPU using samples), ``R723CCDE`` (CPU delay: "a TCB or
    SRB is waiting to be dispatched or a TCB is waiting for local lock"), ``R723CCCA``;
    Workload Manager Control Section ``R723MTVL`` (sample interval). IBM, *z/OS RMF Report
    Analysis*, Workload Activity report (USING% / DELAY% CPU, APPL% CP). Little (1961).
    """
    ok = np.isfinite(iv.cpu_using_samples) & np.isfinite(gcp_wait_ms)
    if ok.sum() < 3 or not np.nansum(iv.cpu_using_samples[ok]) > 0:
        return {}
    using, measured = iv.cpu_using_samples[ok], iv.cpu_delay_samples[ok]
    d_cp = 10.0 * iv.cp_pct[ok] / iv.tps[ok]
    predicted = using * gcp_wait_ms[ok] / d_cp
    ended = iv.tps[ok] * iv.weight_s[ok]
    d_cp_mean = float(np.sum(d_cp * ended) / np.sum(ended))
    peak = iv.tps[ok] >= np.quantile(iv.tps[ok], 0.9)

    def ratio(m: np.ndarray, p: np.ndarray) -> float:
        total_m, total_p = float(m.sum()), float(p.sum())
        return total_m / total_p if total_p > 0 else (math.inf if total_m > 0 else 1.0)

    def off(m: np.ndarray, p: np.ndarray) -> bool:
        r = ratio(m, p)
        return max(float(m.sum()), float(p.sum())) >= MIN_DELAY_SAMPLES and not (
            1.0 / CPU_DELAY_TOLERANCE <= r <= CPU_DELAY_TOLERANCE)

    measured_ms = float(measured.sum() / using.sum()) * d_cp_mean
    share = 100.0 * measured_ms / float(np.sum(iv.resp_ms[ok] * ended) / np.sum(ended))
    return {"intervals": int(ok.sum()), "measured_samples": float(measured.sum()),
            "model_samples": float(predicted.sum()), "measured_ms_per_tran": measured_ms,
            "model_ms_per_tran": float(predicted.sum() / using.sum()) * d_cp_mean,
            "ratio": ratio(measured, predicted), "peak_intervals": int(peak.sum()),
            "peak_ratio": ratio(measured[peak], predicted[peak]), "share_of_resp_pct": share,
            "flagged": bool(off(measured, predicted) or off(measured[peak], predicted[peak]))}


def cpu_delay_notes(check: dict[str, Any]) -> list[str]:
    """The notes a :func:`cpu_delay_check` gives the fit: the comparison, and what a flag means."""
    if not check:
        return []
    notes = [f"CPU delay samples (R723CCDE) of {check['intervals']} interval(s), a check on the GCP side "
             f"(not fitted): model {check['model_ms_per_tran']:.4g} vs measured "
             f"{check['measured_ms_per_tran']:.4g} ms of GCP delay per transaction, measured/model "
             f"{check['ratio']:.2f} ({check['peak_ratio']:.2f} in the busiest {check['peak_intervals']}); "
             f"{check['measured_samples']:.0f} samples measured, {check['model_samples']:.0f} predicted"
             f"; measured, {check['share_of_resp_pct']:.2g} % of the response"]
    if check["flagged"]:
        worst = check["ratio"] if abs(math.log(max(check["ratio"], 1e-12))) >= abs(
            math.log(max(check["peak_ratio"], 1e-12))) else check["peak_ratio"]
        if worst > 1:
            notes.append(f"CPU delay samples contradict the model: measured GCP delay {worst:.3g}x the "
                         "model's. The class waits for a CP longer than the dispatcher model says (lower "
                         "dispatching priority than the other work, TCBs waiting for the local lock, "
                         "irregular bursts): its GCP waits, and a knee the GCPs set, are optimistic")
        else:
            notes.append(f"CPU delay samples contradict the model: measured GCP delay {worst:.3g}x the "
                         "model's. The class waits for a CP less than the dispatcher model says (dispatched "
                         "ahead of the other work, regular bursts): its GCP waits, and a knee the GCPs "
                         "set, are pessimistic")
    return notes


def fit_delay(residence: np.ndarray, resp_ms: np.ndarray) -> tuple[float, float]:
    """``R0 >= 0`` minimising the squared log error of ``R0 + residence`` (finite rows)."""
    ok = np.isfinite(residence)
    if not ok.any():
        return math.nan, math.inf
    c, r = residence[ok], resp_ms[ok]

    def cost(r0: float) -> float:
        return float(np.sum(np.log((r0 + c) / r) ** 2))

    upper = float(np.max(r))
    res = optimize.minimize_scalar(cost, bounds=(0.0, upper), method="bounded",
                                   options={"xatol": 1e-9 * max(upper, 1.0)})
    r0 = float(res.x) if cost(float(res.x)) <= cost(0.0) else 0.0
    return r0, cost(r0) / ok.sum()


def spill_cost(iv: Intervals, spill_fraction: np.ndarray) -> tuple[float, int]:
    r"""How far the predicted share of eligible work on GCPs is from RMF's: ``(mean cost, intervals)``.

    RMF's APPL% IIPCP over IIP + IIPCP is the share of the class's zIIP-eligible work that GCPs
    ran; the dispatch model predicts it (``spill_fraction``). The help rule and the eligible
    burst count move it far more than they move the response below the knee, so it is the
    signal that tells them apart. The cost is the mean of
    :math:`\log^2((\hat s + s_0)/(s + s_0))` over intervals with zIIPs online and eligible work,
    :math:`s_0` = :data:`SPILL_FLOOR`. ``(0, 0)`` with fewer than 3 such intervals.

    References
    ----------
    IBM, *z/OS RMF Report Analysis*, Workload Activity report: APPL% IIP, IIPCP.
    """
    eligible = iv.iip_pct + iv.iipcp_pct
    ok = (iv.n_ziip > 0) & (eligible > 0) & np.isfinite(spill_fraction)
    if ok.sum() < 3:
        return 0.0, 0
    measured = iv.iipcp_pct[ok] / eligible[ok]
    return float(np.mean(np.log((spill_fraction[ok] + SPILL_FLOOR) / (measured + SPILL_FLOOR)) ** 2)), int(ok.sum())




def structure_fit(iv: Intervals, d: float, f: float, structure: tuple[int, int], rules):
    """``(R0, its response cost, the intervals' solution)`` of one structure."""
    sol = solve_intervals(iv, d, f, rules(structure))
    return (*fit_delay(sol.resp_ms[0], iv.resp_ms), sol)


def structure_costs(iv: Intervals, d: float, f: float, structure: tuple[int, int], rules):
    """``(R0, cost, the intervals' solution)`` of one structure: response, spill and delay samples."""
    r0, cost, sol = structure_fit(iv, d, f, structure, rules)
    cost += spill_cost(iv, sol.spill_fraction[0])[0]
    # response confounds the delay outside the CPU with queueing, the samples do not
    cost += sample_cost(iv, sol.ziip_wait_ms[0], d, f)[0]
    return r0, cost, sol


def structure_prior(structures: tuple[tuple[int, int], ...], given: Mapping[str, float] | None) -> np.ndarray:
    """Each structure's prior weight: its help rule's in ``given`` (1 where not named, all 1 for ``None``)."""
    given = dict(given or {})
    for rule, q in given.items():
        if rule not in HELP_RULES or not (math.isfinite(float(q)) and float(q) > 0):
            raise ModelError(f"a help rule's prior weight needs one of {', '.join(HELP_RULES)} and a positive "
                             f"number, got {rule!r}: {q!r}")
    return np.array([float(given.get(HELP_RULES[int(rule)], 1.0)) for rule, _ in structures])


def best_structure(iv: Intervals, d: float, f: float, structures: tuple[tuple[int, int], ...], rules,
                   n_units: int, prior: np.ndarray | None = None):
    """``(structure, R0, the intervals' solution, every structure's cost, their weights)`` of the fit.

    The point is the structure of the highest weight (:func:`structure_weights` over ``n_units``
    independent units with ``prior``): with equal priors the least cost, the first of equals.
    """
    fits = [structure_costs(iv, d, f, structure, rules) for structure in structures]
    costs = [cost for _, cost, _ in fits]
    weights = structure_weights(np.array(costs), n_units, prior)
    best = int(np.argmax(weights))
    return structures[best], fits[best][0], fits[best][2], costs, weights


def bootstrap_draws(iv: Intervals, structures: tuple[tuple[int, int], ...], weights: np.ndarray, rules,
               n_boot: int, seed: int) -> np.ndarray:
    """``(B, 5)`` bootstrap draws of ``(R0, D, f, eligible bursts, help rule index)``.

    Days are resampled with replacement (rows when there are fewer than 5 days); each draw takes a
    structure with its weight and fits ``R0`` to the resample with it.
    """
    rng = np.random.default_rng(seed)
    days = np.unique(iv.day)
    by_day = [np.flatnonzero(iv.day == day) for day in days]
    out = []
    for _ in range(n_boot):
        if len(days) >= 5:
            idx = np.concatenate([by_day[i] for i in rng.integers(0, len(days), len(days))])
        else:
            idx = rng.integers(0, len(iv.tps), len(iv.tps))
        structure = structures[int(rng.choice(len(structures), p=weights))]
        sample = iv.take(idx)
        d, f = demand_and_eligibility(sample)
        r0, _, _ = structure_fit(sample, d, f, structure, rules)
        if math.isfinite(r0):
            out.append((r0, d, f, structure[1], structure[0]))
    return np.array(out, dtype=float).reshape(-1, 5)


def value_counts_text(values: np.ndarray) -> str:
    if not len(values):
        return "-"
    kinds, n = np.unique(values.astype(int), return_counts=True)
    return ", ".join(f"{k}: {c}" for k, c in zip(kinds, n))
