"""Where eligible bursts wait while GCPs help a busy zIIP pool: the simulation, instrumented.

The analytic model (:mod:`kneecap.modeling.dispatch`) takes a class's eligible bursts as
independent arrivals at the zIIP pool. A transaction offers its bursts one after another, and
under the ``pool`` help rule the pool needs help from the moment a queued burst has waited
ZIIPAWMT until a zIIP finds the queue empty. This probe runs the dispatcher simulation with every
eligible burst of the measured class logged (when it was offered, whether the pool needed help at
that moment, how long it waited, where it ran) and prints, per grid point and help rule:

* the simulated and the modelled mean response and spill;
* the share of time the pool needs help, and of bursts offered while it does;
* the mean wait of *fresh* bursts (a transaction's first eligible burst, or one after a GCP-only
  burst) and of *follow-on* bursts (right after an eligible burst of the same transaction),
  split by whether that previous burst was helped;
* ``help_backlog_shape``: the class's transactions in CPU while help is on, on average, between
  their number where help starts (1) and where it stops (0): the shape of the help phase that
  ``dispatch._help_cycle._help_rounds_wait`` derives (a constant 0.75 of the model before it).

It is a diagnostic for the model's help path (README, Benchmarks), not part of ``make bench``::

    python benchmarks/probe_help_phases.py [--point N_GCP N_ZIIP F LOAD SHARE] ...
                                           [--lpar N_GCP N_ZIIP D_MS F ZIIPAWMT_MS BURSTS TPS] ...
                                           [--transactions T] [--bursts K]
"""

from __future__ import annotations

import argparse

import bench_dispatch
import numpy as np
import pandas as pd
from bench_dispatch import D_MS, R0_MS, _model_resp_ms

from kneecap.modeling.dispatch import Dispatch, solve_open
from kneecap.simulation import SimScenario
from kneecap.simulation.dispatcher import LparSimulation, replication_metrics

# the worst points of the grid (open and closed, GCPs helping a busy zIIP pool) and one where the
# model holds (2 GCPs + 2 zIIPs)
DEFAULT_POINTS = [(8, 1, 0.95, "open", 0.6), (8, 2, 0.95, "closed", 0.6), (4, 1, 0.95, "open", 0.6),
                  (8, 1, 0.3, "open", 0.6), (2, 2, 0.95, "open", 0.6)]


class ProbedSimulation(LparSimulation):
    """The dispatcher simulation with the measured class's bursts logged and help time kept."""

    def __init__(self, *args, **kwargs) -> None:
        self.help_ms = 0.0
        self._help_since: float | None = None
        # transactions of the class between submission and completion, integrated while help is on,
        # and counted where help starts and stops (the help phase's backlog, dispatch._help_cycle._help_cycle_wait)
        self.in_cpu = 0
        self._counted_at = 0.0
        self.in_cpu_help_area = 0.0
        self.in_cpu_at_start: list[int] = []
        self.in_cpu_at_stop: list[int] = []
        self.bursts: list[tuple[int, int, bool, float, bool, bool]] = []
        self._offered: dict[int, tuple[bool, float, int, int, bool]] = {}
        self._txn_ids: dict[int, tuple[int, object, list[int]]] = {}
        super().__init__(*args, **kwargs)

    def _help_changed(self, on: bool) -> None:
        now = self.env.now
        self._count()
        if on:
            self._help_since = now
            self.in_cpu_at_start.append(self.in_cpu)
        elif self._help_since is not None:
            self.help_ms += now - self._help_since
            self._help_since = None
            self.in_cpu_at_stop.append(self.in_cpu)

    def _count(self) -> None:
        now = self.env.now
        if self._help_since is not None:
            self.in_cpu_help_area += self.in_cpu * (now - self._counted_at)
        self._counted_at = now

    def _on_submit(self, event) -> None:
        self._count()
        self.in_cpu += 1
        super()._on_submit(event)

    def _complete(self, txn) -> None:
        self._count()
        self.in_cpu -= 1
        super()._complete(txn)

    def help_backlog_shape(self) -> float:
        """Mean transactions in CPU while help is on, between where help starts (1) and stops (0)."""
        if not self.in_cpu_at_start or not self.in_cpu_at_stop or self.help_ms <= 0:
            return float("nan")
        start, stop = np.mean(self.in_cpu_at_start), np.mean(self.in_cpu_at_stop)
        return float((self.in_cpu_help_area / self.help_ms - stop) / (start - stop))

    def _next_burst(self, txn) -> None:
        known = self._txn_ids.get(id(txn))
        if known is None or known[1] is not txn:  # ids are reused once a transaction is gone
            self._txn_ids[id(txn)] = (len(self._txn_ids) + len(self.bursts), txn, [0])
        super()._next_burst(txn)

    def _dispatch(self, burst) -> None:
        if burst.txn is not None:
            tid, _, seq = self._txn_ids[id(burst.txn)]
            seq[0] += 1
            self._offered[id(burst)] = (self.needs_help, self.env.now, tid, seq[0], burst.eligible)
        super()._dispatch(burst)

    def _run_on(self, burst, ledger, on_done) -> None:
        offered = self._offered.pop(id(burst), None)
        if offered is not None:
            helped_at_offer, at, tid, seq, eligible = offered
            # ledger 1 is GCP_ELIGIBLE: an eligible burst running on a GCP
            self.bursts.append((tid, seq, eligible, self.env.now - at, ledger == 1, helped_at_offer))
        super()._run_on(burst, ledger, on_done)


def cycle_sketch(tps: float, point: tuple) -> dict[str, float]:
    """A fluid sketch of the pool rule's help cycle at ``tps``; NaN where the zIIP pool keeps up.

    Per transaction ``k`` eligible bursts of ``s = f D / k`` on ``c`` zIIPs, all after the first
    taken as following an eligible burst (``p = (k - 1) / k``); ``G`` GCPs left by GCP-only work.
    While the pool does without help its queue takes ``A_off = lambda + p c / s`` bursts/ms (a
    transaction waiting offers no more), help starts when the oldest has waited ``tau``, after
    ``T_off = tau / (1 - r)``, ``r = (c / s) / A_off``, with ``B0 = A_off tau`` bursts queued; while
    GCPs help, ``M = (c + G) / s`` bursts/ms are served, ``lambda + p M`` offered, and the backlog
    drains at ``delta = (1 - p) M - lambda`` in ``T_H = B0 / delta``. A burst offered during help
    waits ``B0 / (2 M) + sigma^2 / (2 M delta) + 1 / M`` (the area under a random walk with drift
    ``-delta`` and variance rate ``sigma^2 = lambda + (1 - p) M`` down to 0), one offered before it
    ``tau / 2 + (1 - r) B0 / (2 M)``. Not a kneecap model: a lead for one (README, Benchmarks).
    """
    n_gcp, n_ziip, f, _, _ = point
    lam, k, tau = tps / 1000.0, bench_dispatch.BURSTS, 3.2
    s, p = f * D_MS / k, (k - 1) / k
    mu = n_ziip / s
    a_off = lam + p * mu
    spare = n_gcp - lam * (1 - f) * D_MS
    m = (n_ziip + spare) / s
    delta = (1 - p) * m - lam
    if n_ziip == 0 or a_off <= mu or delta <= 0:
        return dict.fromkeys(("cycle_help_time_pct", "cycle_offered_in_help_pct", "cycle_off_wait_ms",
                              "cycle_in_help_wait_ms", "cycle_resp_ms"), float("nan"))
    r = mu / a_off
    t_off, b0 = tau / (1 - r), a_off * tau
    t_help = b0 / delta
    in_help_wait = b0 / (2 * m) + (lam + (1 - p) * m) / (2 * m * delta) + 1 / m
    off_wait = tau / 2 + (1 - r) * b0 / (2 * m)
    offered_off, offered_help = a_off * t_off, (lam + p * m) * t_help
    theta = offered_help / (offered_off + offered_help)
    burst_wait = (1 - theta) * off_wait + theta * in_help_wait
    return {"cycle_help_time_pct": 100.0 * t_help / (t_off + t_help), "cycle_offered_in_help_pct": 100.0 * theta,
            "cycle_off_wait_ms": off_wait, "cycle_in_help_wait_ms": in_help_wait,
            # GCP-only work waits little beside the helped work below it; left out of the sketch
            "cycle_resp_ms": R0_MS + D_MS + k * burst_wait}


def probe(point: tuple, rule: str, transactions: int, seed: int) -> dict[str, float]:
    """One grid point under one help rule: the figures the module docstring lists."""
    n_gcp, n_ziip, f, load, share = point
    model, _, scenario = _model_resp_ms(n_gcp, n_ziip, f, True, load, share, help_rule=rule)
    row = probe_scenario(scenario, model, transactions, seed)
    if rule == "pool":
        row.update(cycle_sketch(row.pop("tps"), point))
    else:
        row.pop("tps")
    return row


def probe_lpar(lpar: tuple, rule: str, transactions: int, seed: int) -> dict[str, float]:
    """An LPAR off the grid (``--lpar``), open load: the same figures but the grid's cycle sketch."""
    n_gcp, n_ziip, d, f, tau, bursts, tps = lpar
    dispatch = Dispatch(n_gcp, n_ziip, help_wait_ms=tau, help_rule=rule, eligible_bursts=bursts)
    model = float(solve_open(tps, d, R0_MS, f, dispatch).resp_ms[0, 0])
    scenario = SimScenario(tps=tps, n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=d, ziip_eligible_fraction=f,
                           delay_ms=R0_MS, help_wait_ms=tau, help_rule=rule, eligible_bursts=bursts, gcp_bursts=1)
    row = probe_scenario(scenario, model, transactions, seed)
    row.pop("tps")
    return row


def probe_scenario(scenario: SimScenario, model: float, transactions: int, seed: int) -> dict[str, float]:
    """The instrumented simulation of ``scenario`` beside the model's response ``model``."""
    sim = ProbedSimulation(scenario, transactions=transactions, warmup=transactions // 10,
                           seed=np.random.SeedSequence(seed))
    sim.run()
    sim.needs_help = False  # close the last help period
    metrics = replication_metrics(sim)
    log = pd.DataFrame(sim.bursts, columns=["txn", "seq", "eligible", "wait_ms", "helped", "help_on"])
    log = log.sort_values(["txn", "seq"])
    previous = log.groupby("txn")[["eligible", "helped"]].shift(1)
    log["after_eligible"] = previous["eligible"].eq(True)
    log["after_helped"] = previous["helped"].eq(True)
    eligible = log[log["eligible"]]
    fresh = eligible[~eligible["after_eligible"]]
    after_helped = eligible[eligible["after_eligible"] & eligible["after_helped"]]
    after_ziip = eligible[eligible["after_eligible"] & ~eligible["after_helped"]]
    return {
        "sim_resp_ms": metrics["resp_ms"], "model_resp_ms": model,
        "sim_spill_pct": metrics["ziip_eligible_on_gcp_share_pct"],
        "help_time_pct": 100.0 * sim.help_ms / sim.env.now,
        "offered_in_help_pct": 100.0 * eligible["help_on"].mean(),
        "wait_ms": eligible["wait_ms"].mean(),
        "offered_in_help_wait_ms": eligible.loc[eligible["help_on"], "wait_ms"].mean(),
        "offered_off_wait_ms": eligible.loc[~eligible["help_on"], "wait_ms"].mean(),
        "fresh_wait_ms": fresh["wait_ms"].mean(),
        "after_helped_wait_ms": after_helped["wait_ms"].mean(),
        "after_helped_in_help_pct": 100.0 * after_helped["help_on"].mean(),
        "after_ziip_wait_ms": after_ziip["wait_ms"].mean(),
        "help_backlog_shape": sim.help_backlog_shape(),
        "tps": metrics["tps"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", nargs=5, action="append", metavar=("N_GCP", "N_ZIIP", "F", "LOAD", "SHARE"),
                        help="a grid point (LOAD closed or open, SHARE of the pools' capacity); repeatable")
    parser.add_argument("--lpar", nargs=7, action="append",
                        metavar=("N_GCP", "N_ZIIP", "D_MS", "F", "ZIIPAWMT_MS", "BURSTS", "TPS"),
                        help="an LPAR off the grid, open load (R0 as the grid's); repeatable")
    parser.add_argument("--transactions", type=int, default=30000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bursts", type=int, default=bench_dispatch.BURSTS,
                        help="eligible bursts per transaction (the grid's 4 by default)")
    args = parser.parse_args()
    bench_dispatch.BURSTS = args.bursts  # read by the scenario and model of every point
    lpars = [(int(g), int(z), float(d), float(f), float(tau), int(k), float(tps))
             for g, z, d, f, tau, k, tps in args.lpar or []]
    if args.point:
        points = [(int(g), int(z), float(f), load, float(s)) for g, z, f, load, s in args.point]
    else:
        points = [] if lpars else DEFAULT_POINTS
    rows = []
    for rule in ("pool", "burst"):
        for point in points:
            row = {"point": "{}+{} f{} {} {:.0%}".format(*point), "rule": rule}
            row.update(probe(point, rule, args.transactions, args.seed))
            rows.append(row)
        for lpar in lpars:
            row = {"point": "{}+{} D{} f{} tau{} k{} {:g} tps".format(*lpar), "rule": rule}
            row.update(probe_lpar(lpar, rule, args.transactions, args.seed))
            rows.append(row)
    for row in rows:
        row["err_pct"] = 100.0 * (row["model_resp_ms"] / row["sim_resp_ms"] - 1.0)
    with pd.option_context("display.width", 250):
        print(pd.DataFrame(rows).round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
