"""zIIP/GCP dispatch on engines not all alike: sub-capacity GCPs and SMT-2 zIIPs, model vs simulation.

Issue #37 items 1 and 2. Each grid point is an LPAR whose GCPs run at 40 % of a zIIP's speed
(a sub-capacity processor: ``gcp_speed`` 0.4, ``ziip_speed`` 1, demand in full-speed ms), or whose
zIIPs run in SMT-2 (``ziip_mt`` 2: two logical zIIPs a core, each at ``CF / 2`` of the core's MT-1
speed, with the MT capacity factor ``CF`` an input here, ``--mt-capacity``, not a published
figure), at 30 / 60 / 85 % of the pools' capacity, open and closed, IIPHONORPRIORITY=YES (and NO
on a few). The simulation (:mod:`kneecap.simulation`, the same speeds) and the analytic model
(:mod:`kneecap.modeling.dispatch`) predict mean response; the summary is the same-speed grid's
(``bench_dispatch.py``): mean and worst |error| of the points whose simulated busy (both pools'
engines together) is <= 85 %, goal 10 %, and <= 95 %.

    python benchmarks/bench_dispatch_speeds.py [--replications R] [--transactions T] [--jobs J]
                                               [--precision P] [--max-replications M]
                                               [--save table.csv] [--sim-from table.csv]

Each point runs ``R`` replications of ``T`` transactions; with ``--precision`` a point whose 95 %
interval of mean response is wider than ``P`` x the mean is simulated again with as many
replications as the first run's standard deviation says meet it, at most ``M`` (point ``i``
replication ``k`` is the ``k``-th stream of seed ``i``, so the first ``R`` are the same). The
simulated grid is kept in ``benchmarks/reference/dispatch_speeds_sim.csv`` (``--save``; made by
``--jobs 2 --precision 0.03 --max-replications 36``), scored by ``tests/modeling/test_engines.py``
and by ``--sim-from`` without simulating again.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open
from kneecap.simulation import SimScenario, simulate

D_MS, R0_MS, THINK_MS, BURSTS = 1.0, 0.2, 50.0, 4
#: (label, Dispatch keywords): the engines each point runs on
ENGINES = {"sub40": {"gcp_speed": 0.4, "ziip_speed": 1.0}, "mt2": {"ziip_mt": 2}}
KEYS = ["engines", "n_gcp", "n_ziip", "f", "honor", "load", "share"]


def grid():
    for engines, n_gcp, n_ziip, f, load, share in itertools.product(
            ENGINES, (2, 4), (1, 2), (0.3, 0.9), ("open", "closed"), (0.3, 0.6, 0.85)):
        yield engines, n_gcp, n_ziip, f, True, load, share
    for engines, load, share in itertools.product(ENGINES, ("open", "closed"), (0.3, 0.6, 0.85)):
        yield engines, 4, 2, 0.6, False, load, share


def dispatch_of(engines: str, n_gcp: int, n_ziip: int, honor: bool, mt_capacity: float) -> Dispatch:
    options = dict(ENGINES[engines])
    if options.get("ziip_mt") == 2:
        options["ziip_mt_capacity"] = mt_capacity
    return Dispatch(n_gcp, n_ziip, honor_priority=honor, eligible_bursts=BURSTS, **options)


def model_point(p, mt_capacity: float) -> tuple[float, float, SimScenario]:
    """(model response ms, offered load, the simulation's scenario) at grid point ``p``."""
    engines, n_gcp, n_ziip, f, honor, load, share = p
    dispatch = dispatch_of(engines, n_gcp, n_ziip, honor, mt_capacity)
    x_max = dispatch.max_tps(D_MS, f)
    # the simulation counts logical zIIPs, each at a thread's speed
    common = dict(n_gcp=n_gcp, n_ziip=dispatch.ziip_threads, cpu_ms_per_tran=D_MS, ziip_eligible_fraction=f,
                  delay_ms=R0_MS, honor_priority=honor, eligible_bursts=BURSTS, gcp_speed=dispatch.gcp_speed,
                  ziip_speed=dispatch.ziip_thread_speed)
    if load == "closed":
        clients = max(int(share * (D_MS + R0_MS + THINK_MS) * x_max / 1000.0), 1)
        model = solve_closed(D_MS, R0_MS, f, dispatch, think_time_ms=THINK_MS, n_max=clients).resp_ms[0, -1]
        return float(model), float(clients), SimScenario(clients=clients, think_time_ms=THINK_MS, **common)
    tps = share * x_max
    return float(solve_open(tps, D_MS, R0_MS, f, dispatch).resp_ms[0, 0]), float(tps), SimScenario(tps=tps, **common)


def simulate_point(args) -> dict:
    p, seed, replications, transactions, mt_capacity = args
    scenario = model_point(p, mt_capacity)[2]
    start = time.process_time()
    row = simulate(scenario, replications=replications, transactions=transactions, seed=seed).iloc[0]
    n_g, n_z = scenario.n_gcp, scenario.n_ziip
    # the engines' busy together, as the same-speed grid scores it (bench_dispatch.py)
    busy = (row["gcp_busy_pct"] * n_g + np.nan_to_num(row["ziip_busy_pct"]) * n_z) / (n_g + n_z)
    return {"busy_pct": busy, "gcp_busy_pct": row["gcp_busy_pct"], "ziip_busy_pct": row["ziip_busy_pct"],
            "sim_spill_pct": row["ziip_eligible_on_gcp_share_pct"], "sim_resp_ms": row["resp_ms"],
            "sim_lo": row["resp_ms_lo"], "sim_hi": row["resp_ms_hi"], "sim_reps": replications,
            "sim_cpu_s": time.process_time() - start}


def score(table: pd.DataFrame, mt_capacity: float) -> pd.DataFrame:
    """``table`` (the simulated columns) with the model's response and its error, % of the simulation's."""
    out = table.copy()
    out["model_resp_ms"] = [model_point(tuple(r[k] for k in KEYS), mt_capacity)[0]
                            for r in out[KEYS].to_dict(orient="records")]
    out["err_pct"] = 100.0 * (out["model_resp_ms"] / out["sim_resp_ms"] - 1.0)
    return out


def summary(table: pd.DataFrame) -> list[str]:
    lines = []
    err = table["err_pct"].abs()
    for limit in (85.0, 95.0):
        sel = table["busy_pct"] <= limit
        bottleneck = table[["gcp_busy_pct", "ziip_busy_pct"]].max(axis=1) <= limit
        lines.append(f"busy <= {limit:.0f} %: {int(sel.sum())} points, mean |error| {err[sel].mean():.2f} %, "
                     f"worst {err[sel].max():.2f} %, within 10 %: {int((err[sel] <= 10.0).sum())}; "
                     f"by the busier pool: {int(bottleneck.sum())} points, worst {err[bottleneck].max():.2f} %")
    for engines in ENGINES:
        sel = (table["engines"] == engines) & (table["busy_pct"] <= 85.0)
        lines.append(f"  {engines}: {int(sel.sum())} points <= 85 % busy, mean |error| {err[sel].mean():.2f} %, "
                     f"worst {err[sel].max():.2f} %")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=6)
    ap.add_argument("--transactions", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--mt-capacity", type=float, default=1.3,
                    help="the zIIPs' MT-2 capacity factor the mt2 points run at (an input, not a published figure)")
    ap.add_argument("--precision", type=float)
    ap.add_argument("--max-replications", type=int, default=36)
    ap.add_argument("--save")
    ap.add_argument("--sim-from")
    args = ap.parse_args()
    points = list(grid())
    if args.sim_from:
        table = pd.read_csv(args.sim_from)
    else:
        work = [(p, i, args.replications, args.transactions, args.mt_capacity) for i, p in enumerate(points)]
        with ProcessPoolExecutor(args.jobs) as pool:
            sims = list(pool.map(simulate_point, work))
            if args.precision:
                again = {}
                for i, sim in enumerate(sims):
                    rel = (sim["sim_hi"] - sim["sim_lo"]) / 2.0 / sim["sim_resp_ms"] / args.precision
                    if rel > 1.0:  # the half-width falls as 1 / sqrt(replications)
                        again[i] = min(args.max_replications, math.ceil(args.replications * rel * rel))
                redone = pool.map(simulate_point, [(points[i], i, reps, args.transactions, args.mt_capacity)
                                                   for i, reps in again.items()])
                for i, sim in zip(again, redone, strict=True):
                    sims[i] = sim
        table = pd.DataFrame([dict(zip(KEYS, p, strict=True), **s) for p, s in zip(points, sims, strict=True)])
    table = score(table, args.mt_capacity)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table[[*KEYS, "busy_pct", "gcp_busy_pct", "ziip_busy_pct", "sim_resp_ms", "sim_lo", "sim_hi",
                     "model_resp_ms", "err_pct"]].round(3).to_string(index=False))
    print("\n".join(summary(table)))
    if args.save:
        table.drop(columns=["model_resp_ms", "err_pct"]).to_csv(args.save, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
