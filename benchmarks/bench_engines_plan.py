"""Knee and zIIP plan of the bundled seed 004 load test on engines not all alike, checked by simulation.

Issue #37's done-when: the closed dispatch model fitted on the seed 004 load test (2 GCPs +
2 zIIPs, equal engines; the same table as ``bench_modeling.py``) answers on the same LPAR with
its GCPs at 40 % of a zIIP's speed (a sub-capacity processor: ``gcp_speed`` 0.4, ``ziip_speed``
1, the fitted demand in full-speed ms) and with its zIIPs in SMT-2 (``ziip_mt`` 2 at an MT
capacity factor given by ``--mt-capacity``, an input, not a published figure). For each it prints
the knee (k = 3) on 2 GCPs + 0, 1, 2 zIIPs and the zIIP plan at ``--clients`` for ``--slo`` ms
under a policy without busy or spill caps (so that the response decides), the plans with the
zIIPs in MT-1 and in SMT-2 under the default policy at ``--mt-slo`` ms, and the simulation
(:mod:`kneecap.simulation`, the same speeds, the point fit's demand, delay and structure) at
each knee and at each plan's mix with one zIIP fewer: the model's error against it.

Usage: python benchmarks/bench_engines_plan.py [--clients 400] [--slo 8] [--mt-capacity 1.3]
                                               [--replications 6] [--transactions 10000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from kneecap import config
from kneecap.modeling import ClosedMVAModel
from kneecap.modeling.engines import on_engines
from kneecap.modeling.ziip import PlannerPolicy, plan_smt, plan_ziip, smt_sentence
from kneecap.simulation import SimScenario, simulate

SEED004 = pd.DataFrame({"clients": [100, 200, 300, 400, 500], "tps": [500, 1000, 1500, 1960, 2420],
                        "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0})
N_GCP, THINK_MS = 2, 200.0
ROOT = Path(__file__).resolve().parents[1]


def simulated(results, n_ziip: int, clients: int, replications: int, transactions: int) -> pd.Series:
    """The simulation of the point fit on ``results``' engines: ``n_ziip`` zIIP cores, ``clients`` clients."""
    d = results.dispatch(N_GCP, n_ziip)
    scenario = SimScenario(clients=clients, think_time_ms=THINK_MS, n_gcp=N_GCP, n_ziip=d.ziip_threads,
                           cpu_ms_per_tran=results.cpu_ms_per_tran,
                           ziip_eligible_fraction=results.ziip_eligible_fraction,
                           delay_ms=results.delay_ms, eligible_bursts=d.eligible_bursts, gcp_bursts=d.gcp_bursts,
                           help_rule=d.help_rule, help_wait_ms=d.help_wait_ms, honor_priority=d.honor_priority,
                           gcp_speed=d.gcp_speed, ziip_speed=d.ziip_thread_speed)
    return simulate(scenario, replications=replications, transactions=transactions, seed=11).iloc[0]


def checked(results, n_ziip: int, clients: int, args) -> str:
    model = float(results.predict(pd.DataFrame({"clients": [clients], "n_gcp": [N_GCP], "n_ziip": [n_ziip],
                                                "think_time_ms": [THINK_MS]}))["resp_ms"].iloc[0])
    row = simulated(results, n_ziip, clients, args.replications, args.transactions)
    return (f"model {model:.3f} ms, simulation {row['resp_ms']:.3f} ({row['resp_ms_lo']:.3f}-{row['resp_ms_hi']:.3f}), "
            f"error {100.0 * (model / row['resp_ms'] - 1.0):+.1f} %, simulated busy GCP {row['gcp_busy_pct']:.0f} % "
            f"zIIP {row['ziip_busy_pct']:.0f} %")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=400)
    ap.add_argument("--slo", type=float, default=8.0)
    ap.add_argument("--mt-capacity", type=float, default=1.3)
    ap.add_argument("--replications", type=int, default=6)
    ap.add_argument("--transactions", type=int, default=10_000)
    ap.add_argument("--n-boot", type=int, default=40)
    ap.add_argument("--mt-slo", type=float, default=3.0,
                    help="the SLO of the MT-1 against SMT-2 plans, under the default policy")
    args = ap.parse_args()
    fit = ClosedMVAModel(n_boot=args.n_boot, seed=config.load_params(ROOT / "params.yaml").common.seed).fit(SEED004)
    print(f"seed 004 fit: D {fit.cpu_ms_per_tran:.4f} ms, R0 {fit.delay_ms:.4f} ms, f {fit.ziip_eligible_fraction}, "
          f"{fit.help_rule} rule, {fit.eligible_bursts} eligible bursts")
    engines = {"equal engines": {}, "GCP at 40 % of zIIP speed": {"gcp_speed": 0.4, "ziip_speed": 1.0},
               f"zIIPs in SMT-2 (CF {args.mt_capacity:g})": {"ziip_mt": 2, "ziip_mt_capacity": args.mt_capacity}}
    policy = PlannerPolicy(max_ziip_busy_pct=None, max_spill_pct=None, max_n_ziip=8)
    for label, options in engines.items():
        results = on_engines(fit, **options) if options else fit
        print(f"== {label} ==")
        for n_ziip in (0, 1, 2):
            if n_ziip == 0 and options.get("ziip_mt") == 2:
                continue  # no zIIP: SMT-2 changes nothing
            knee = results.knee(n_gcp=N_GCP, n_ziip=n_ziip, think_time_ms=THINK_MS, k=3.0)
            at_knee = checked(results, n_ziip, int(knee.load), args)
            print(f"{N_GCP} GCPs + {n_ziip} zIIP(s): knee {knee.load:.0f} clients "
                  f"({knee.load_lo:.0f}-{knee.load_hi:.0f}), saturation {knee.saturation:.0f}; at the knee {at_knee}")
        plan = plan_ziip(results, clients=args.clients, think_time_ms=THINK_MS, n_gcp=N_GCP, slo_resp_ms=args.slo,
                         policy=policy)
        print(f"plan at {args.clients} clients, SLO {args.slo:g} ms: {plan.n_ziip} zIIP(s); {plan.binding_sentence}")
        if plan.n_ziip:
            for n in sorted({plan.n_ziip - 1, plan.n_ziip}):
                print(f"  {n} zIIP(s) at {args.clients} clients: {checked(results, n, args.clients, args)}")
    # "n zIIPs in MT-1" against "m zIIP cores in SMT-2", under params.yaml's default policy
    plans = plan_smt(fit, mt_capacity=args.mt_capacity, clients=args.clients, think_time_ms=THINK_MS, n_gcp=N_GCP,
                     slo_resp_ms=args.mt_slo, policy=PlannerPolicy(max_n_ziip=8))
    print(f"== MT-1 against SMT-2, {args.clients} clients, SLO {args.mt_slo:g} ms, default policy ==")
    print(smt_sentence(plans, args.mt_capacity))
    for mode, plan in plans.items():
        print(f"{mode}: {plan.binding_sentence}")
        if plan.n_ziip:
            results = on_engines(fit, ziip_mt=2, ziip_mt_capacity=args.mt_capacity) if mode == "mt2" else fit
            print(f"  {plan.n_ziip} zIIP(s) at {args.clients} clients: "
                  f"{checked(results, plan.n_ziip, args.clients, args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
