"""Analytic zIIP/GCP dispatch model vs the dispatcher simulation over a grid of LPARs and loads.

For each point the simulation (:mod:`kneecap.simulation`, replications with 95 % intervals) and the
analytic model (:mod:`kneecap.modeling.dispatch`) predict mean response; the table prints the
relative error per point and the summary the goal is stated in: mean |error| and worst |error| for
points whose simulated total busy is <= 85 % (goal 10 %) and <= 95 % (goal 25 %).

    python benchmarks/bench_dispatch.py [--full] [--transactions T] [--replications R]
                                        [--save table.csv] [--sim-from table.csv]

``--save`` writes the table; ``--sim-from`` takes the simulated columns from a saved table (same
grid and settings) and recomputes only the model, for changing the model without re-simulating.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open
from kneecap.simulation import SimScenario, simulate

D_MS, R0_MS, THINK_MS, BURSTS = 0.8, 0.3, 200.0, 4


def grid(full: bool):
    gcps = (1, 2, 4, 8) if full else (1, 2, 4)
    ziips = (0, 1, 2, 4) if full else (0, 1, 2)
    shares = (0.3, 0.6, 0.85, 0.95) if full else (0.5, 0.85)
    for n_gcp, n_ziip, f, honor, load, share in itertools.product(
            gcps, ziips, (0.3, 0.95), (True, False), ("closed", "open"), shares):
        if n_ziip == 0 and not honor:
            continue  # without zIIPs IIPHONORPRIORITY has nothing to decide
        yield n_gcp, n_ziip, f, honor, load, share


def _model_resp_ms(n_gcp, n_ziip, f, honor, load, share) -> tuple[float, float, object]:
    """(model response ms, offered load, simulation scenario) at one grid point."""
    dispatch = Dispatch(n_gcp, n_ziip, honor_priority=honor, eligible_bursts=BURSTS)
    x_max = dispatch.max_tps(D_MS, f)
    common = dict(n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=D_MS, ziip_eligible_fraction=f, delay_ms=R0_MS,
                  honor_priority=honor, eligible_bursts=BURSTS, gcp_bursts=1)
    if load == "closed":
        clients = max(int(share * (D_MS + R0_MS + THINK_MS) * x_max / 1000.0), 1)
        model = solve_closed(D_MS, R0_MS, f, dispatch, think_time_ms=THINK_MS, n_max=clients).resp_ms[0, -1]
        return float(model), float(clients), SimScenario(clients=clients, think_time_ms=THINK_MS, **common)
    tps = share * x_max
    model = solve_open(tps, D_MS, R0_MS, f, dispatch).resp_ms[0, 0]
    return float(model), float(tps), SimScenario(tps=tps, **common)


def point(n_gcp, n_ziip, f, honor, load, share, transactions, replications, seed, cached=None):
    model, offered, scen = _model_resp_ms(n_gcp, n_ziip, f, honor, load, share)
    row = {"n_gcp": n_gcp, "n_ziip": n_ziip, "f": f, "honor": "YES" if honor else "NO", "load": load,
           "share": share, "offered": round(offered, 1)}
    if cached is None:
        sim = simulate(scen, replications=replications, transactions=transactions, seed=seed).iloc[0]
        busy = (sim["gcp_busy_pct"] * n_gcp + np.nan_to_num(sim["ziip_busy_pct"]) * n_ziip) / (n_gcp + n_ziip)
        row.update({"busy_pct": float(busy), "sim_resp_ms": float(sim["resp_ms"]),
                    "sim_lo": float(sim["resp_ms_lo"]), "sim_hi": float(sim["resp_ms_hi"]),
                    "sim_spill_pct": float(sim["ziip_eligible_on_gcp_share_pct"])})
    else:
        row.update({k: float(cached[k]) for k in ("busy_pct", "sim_resp_ms", "sim_lo", "sim_hi", "sim_spill_pct")})
    row["model_resp_ms"] = model
    row["err_pct"] = 100.0 * (model / row["sim_resp_ms"] - 1.0)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="n_gcp 1-8, n_ziip 0-4, four load levels")
    parser.add_argument("--transactions", type=int, default=15000)
    parser.add_argument("--replications", type=int, default=3)
    parser.add_argument("--save", help="write the table to this CSV")
    parser.add_argument("--sim-from", help="reuse the simulated columns of a table saved with --save")
    args = parser.parse_args()
    start = time.perf_counter()
    points = list(grid(args.full))
    cached = [None] * len(points)
    if args.sim_from:
        saved = pd.read_csv(args.sim_from)
        if len(saved) != len(points):
            raise SystemExit(f"{args.sim_from} has {len(saved)} points, this grid {len(points)}: "
                             "save it with the same --full setting")
        cached = [row for _, row in saved.iterrows()]
    rows = [point(*p, args.transactions, args.replications, seed=i, cached=c)
            for i, (p, c) in enumerate(zip(points, cached, strict=True))]
    table = pd.DataFrame(rows)
    if args.save:
        table.to_csv(args.save, index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        print(table.round(2).to_string(index=False))
    print(f"\n{len(table)} points, {time.perf_counter() - start:.0f} s "
          f"({args.replications} replications x {args.transactions} transactions each)")
    for limit, goal in ((85.0, 10.0), (95.0, 25.0)):
        sel = table[table["busy_pct"] <= limit]
        err = sel["err_pct"].abs()
        print(f"total busy <= {limit:.0f} %: {len(sel)} points, mean |error| {err.mean():.1f} %, "
              f"worst {err.max():.1f} % (goal: every point within {goal:.0f} %), "
              f"{int((err <= goal).sum())}/{len(sel)} within goal")
    for keys, part in table[table["busy_pct"] <= 95.0].groupby(["load", "honor"]):
        print(f"  {keys[0]:6s} honor {keys[1]:3s}: mean |error| {part['err_pct'].abs().mean():.1f} %, "
              f"worst {part['err_pct'].abs().max():.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
