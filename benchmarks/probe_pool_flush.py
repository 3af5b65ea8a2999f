"""The pool rule's help periods in the dispatcher simulation: what triggers them and what they flush.

Under ``help_rule="pool"`` the zIIP pool needs help from the moment its oldest queued eligible burst
has waited ZIIPAWMT until a zIIP finds the queue empty (:mod:`kneecap.simulation`). This probe runs
an open scenario with every help period logged and prints, per load:

* ``trig_per_s``: help periods (triggers) per second;
* ``q_trig``: the zIIP queue (every eligible burst, other classes' included) when help starts, and
  ``q_trig_over_lam_tau`` that over ``lambda_Z tau`` (the bursts offered in ZIIPAWMT);
* ``helped_per_trig``: bursts GCPs take per help period; ``help_ms``: its mean length, and
  ``help_time_pct`` the share of the time help is on;
* ``wait_ms``: the class's zIIP wait per transaction (WLM zIIP delay; ``model_wait_ms`` the model's);
* ``wait_off_ms`` / ``wait_on_ms``: the mean wait of a class burst offered while the pool does not /
  does need help, and the share offered while it does (``on_pct``);
* ``pending_pct`` / ``wait_pending_ms``: the share of class bursts offered outside help and still
  queued when help starts (the pending phase), and their mean wait;
* ``off_fresh_ms`` / ``off_follow_ms``: the mean wait of the other bursts offered outside help, a
  transaction's first eligible burst and the ones after it.

It is the measurement behind :func:`kneecap.modeling.dispatch._pool_rule.pool_rule_wait` (README,
Models)::

    python benchmarks/probe_pool_flush.py [--tps T ...] [--transactions N] [--seeds K] [--tau MS]
                                          [--lpar N_GCP N_ZIIP D F BURSTS BG_GCP BG_ZIIP]

e.g. ``--lpar 2 2 0.8 0.95 4 0 0 --tps 3000`` with 2, 3 and 6 GCPs gives the help phase's
figures in the README.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from kneecap.modeling.dispatch import Dispatch, solve_open_rows
from kneecap.simulation import SimScenario
from kneecap.simulation.dispatcher import LparSimulation, replication_metrics

# the LPAR of the SMF round trip (tests/smf/simdays.py, issue #11): 2 GCPs + 2 zIIPs
LPAR = dict(n_gcp=2, n_ziip=2, cpu_ms_per_tran=0.8, ziip_eligible_fraction=0.9, delay_ms=1.0, eligible_bursts=4,
            gcp_bursts=1, bg_gcp_busy_pct=30.0, bg_ziip_busy_pct=10.0)


class FlushSimulation(LparSimulation):
    """The dispatcher simulation with each help period and each class burst's wait logged."""

    def __init__(self, *args, **kwargs) -> None:
        self._help_since: float | None = None
        self.periods: list[tuple[int, float, int]] = []  # (queue at start, length ms, bursts helped)
        self._q_start = 0
        self._helped = 0
        # per class burst: offered while help on, when, wait ms, the transaction's first eligible burst
        self.waits: list[tuple[bool, float, float, bool]] = []
        self._offered: dict[int, tuple[bool, float, bool]] = {}
        self.triggers: list[float] = []
        self._seen: dict[int, object] = {}
        super().__init__(*args, **kwargs)

    def _help_changed(self, on: bool) -> None:
        if on:
            self._help_since = self.env.now
            self.triggers.append(self.env.now)
            self._q_start = len(self.ziip_queue)
            self._helped = 0
        elif self._help_since is not None:
            self.periods.append((self._q_start, self.env.now - self._help_since, self._helped))
            self._help_since = None

    def _help(self, burst) -> None:
        self._helped += 1
        super()._help(burst)

    def _dispatch(self, burst) -> None:
        if burst.txn is not None and burst.eligible:
            first = self._seen.get(id(burst.txn)) is not burst.txn  # ids are reused once a transaction is gone
            self._seen[id(burst.txn)] = burst.txn
            self._offered[id(burst)] = (self.needs_help, self.env.now, first)
        super()._dispatch(burst)

    def _run_on(self, burst, ledger, on_done) -> None:
        offered = self._offered.pop(id(burst), None)
        if offered is not None:
            self.waits.append((offered[0], offered[1], self.env.now - offered[1], offered[2]))
        super()._run_on(burst, ledger, on_done)


def probe(tps: float, transactions: int, seed: int, lpar: dict) -> dict[str, float]:
    scenario = SimScenario(tps=tps, **lpar)
    sim = FlushSimulation(scenario, transactions=transactions, warmup=transactions // 10,
                          seed=np.random.SeedSequence(seed))
    sim.run()
    metrics = replication_metrics(sim)
    periods = pd.DataFrame(sim.periods, columns=["q", "ms", "helped"])
    waits = pd.DataFrame(sim.waits, columns=["on", "at", "wait", "first"])
    # offered outside help, and still waiting when help started: the pending phase
    trig = np.asarray(sim.triggers)
    nxt = np.searchsorted(trig, waits["at"].to_numpy())
    nxt_t = np.where(nxt < len(trig), trig[np.minimum(nxt, len(trig) - 1)], np.inf)
    waits["pending"] = ~waits["on"] & (nxt_t <= waits["at"] + waits["wait"])
    off = waits[~waits["on"] & ~waits["pending"]]
    lam_z = (tps / 1000.0 * lpar["eligible_bursts"]
             + lpar["bg_ziip_busy_pct"] / 100.0 * lpar["n_ziip"] / scenario.bg_burst_ms)
    tau = scenario.help_wait_ms
    return {"tps": tps, "zb_pct": metrics["ziip_busy_pct"], "spill_pct": metrics["ziip_eligible_on_gcp_share_pct"],
            "trig_per_s": 1000.0 * len(periods) / sim.env.now,
            "q_trig": periods["q"].mean(), "q_trig_over_lam_tau": periods["q"].mean() / (lam_z * tau),
            "helped_per_trig": periods["helped"].mean(), "help_ms": periods["ms"].mean(),
            "help_time_pct": 100.0 * periods["ms"].sum() / sim.env.now,
            "wait_ms": metrics["n_ziip_delay"] / metrics["tps"] * 1000.0,
            "wait_off_ms": waits.loc[~waits["on"], "wait"].mean(), "wait_on_ms": waits.loc[waits["on"], "wait"].mean(),
            "on_pct": 100.0 * waits["on"].mean(), "pending_pct": 100.0 * waits["pending"].mean(),
            "wait_pending_ms": waits.loc[waits["pending"], "wait"].mean(),
            "off_fresh_ms": off.loc[off["first"], "wait"].mean(),
            "off_follow_ms": off.loc[~off["first"], "wait"].mean(),
            "resp_ms": metrics["resp_ms"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tps", type=float, nargs="+", default=[2100.0, 2300.0, 2450.0, 2600.0])
    parser.add_argument("--transactions", type=int, default=60000)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--tau", type=float, default=3.2, help="ZIIPAWMT, ms")
    parser.add_argument("--lpar", nargs=7, type=float,
                        metavar=("N_GCP", "N_ZIIP", "D", "F", "BURSTS", "BG_GCP", "BG_ZIIP"),
                        help="another LPAR (percent background per engine); the round trip's by default")
    args = parser.parse_args()
    lpar = dict(LPAR, help_wait_ms=args.tau)
    if args.lpar:
        n_g, n_z, d, f, k, bg_g, bg_z = args.lpar
        lpar.update(n_gcp=int(n_g), n_ziip=int(n_z), cpu_ms_per_tran=d, ziip_eligible_fraction=f,
                    eligible_bursts=int(k), bg_gcp_busy_pct=bg_g, bg_ziip_busy_pct=bg_z)
    rows = []
    for tps in args.tps:
        runs = pd.DataFrame([probe(tps, args.transactions, seed, lpar) for seed in range(args.seeds)])
        row = runs.mean().to_dict()
        d = Dispatch(lpar["n_gcp"], lpar["n_ziip"], eligible_bursts=lpar["eligible_bursts"], help_wait_ms=args.tau)
        sol = solve_open_rows(np.array([tps]), lpar["cpu_ms_per_tran"], lpar["ziip_eligible_fraction"],
                              n_gcp=lpar["n_gcp"], n_ziip=lpar["n_ziip"], bg_gcp_busy_pct=lpar["bg_gcp_busy_pct"],
                              bg_ziip_busy_pct=lpar["bg_ziip_busy_pct"], dispatch=d)
        row["model_wait_ms"] = sol.ziip_wait_ms[0, 0]
        row["model_spill_pct"] = 100.0 * sol.spill_fraction[0, 0]
        rows.append(row)
    with pd.option_context("display.width", 250):
        print(pd.DataFrame(rows).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
