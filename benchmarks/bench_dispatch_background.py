"""The zIIP/GCP model against the dispatcher simulation with other classes' work beside the class.

``bench_dispatch.py`` and ``bench_dispatch_holdout.py`` simulate the class alone. Here other
classes load the pools (``bg_gcp_busy_pct``, ``bg_ziip_busy_pct``: Poisson streams of exponential
bursts of ``bg_burst_ms``, FCFS beside the class's bursts, their zIIP work helped like the
class's), as in an RMF interval history (``open_dispatch``). The LPARs mix the class's bursts
with background bursts of other sizes: eligible bursts of 0.02 ms beside 0.2 ms background (issue
#10's reproducer, 5 GCPs + 1 zIIP), of the same size (the simulated SMF days' class, 2 + 2), and
larger (1 ms), with GCPs helping or not, open load at 10-85 % of capacity and closed load (think
time 50 ms) at 30-85 % of N*. Each point is simulated (4 x 20,000 transactions, 95 % interval,
seed fixed per point) and solved by the model; beside response the table gives each pool's wait
per transaction, simulated (the class's delay states by Little's law) and modelled (open load).

    python benchmarks/bench_dispatch_background.py [--jobs J] [--save table.csv] [--sim-from table.csv]

``--sim-from`` takes the simulated columns of a saved table and recomputes only the model. The
reference, ``benchmarks/reference/dispatch_background_sim.csv``, was made by ``--jobs 2 --save``
(173 s on two cores shared with other jobs), its model columns since rewritten by
``--sim-from benchmarks/reference/dispatch_background_sim.csv --save`` (the same file) with the
model they score.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open_rows
from kneecap.simulation import SimScenario, simulate

# (n_gcp, n_ziip, D ms, f, eligible bursts, GCP bursts, bg GCP %, bg zIIP %, bg burst ms, honor)
LPARS = [
    (5, 1, 0.795, 0.0977, 4, 1, 0.0, 30.0, 0.2, False),  # issue #10's reproducer
    (5, 1, 0.795, 0.0977, 4, 1, 0.0, 30.0, 0.2, True),
    (8, 2, 0.533, 0.698, 1, 1, 30.0, 30.0, 0.2, True),  # issue #10's closed reproducer
    (2, 2, 0.8, 0.9, 4, 1, 30.0, 10.0, 0.2, True),  # the simulated SMF days' LPAR and class
    (2, 2, 0.8, 0.9, 4, 1, 30.0, 10.0, 0.2, False),
    (4, 2, 0.3, 0.7, 2, 1, 60.0, 10.0, 0.2, True),
    (4, 2, 0.3, 0.7, 2, 1, 60.0, 10.0, 0.2, False),
    (1, 1, 2.0, 0.5, 1, 1, 30.0, 30.0, 0.2, True),
    (1, 1, 2.0, 0.5, 1, 1, 30.0, 30.0, 0.2, False),
    (3, 1, 0.5, 0.3, 6, 2, 30.0, 30.0, 1.0, True),
    (3, 1, 0.5, 0.3, 6, 2, 30.0, 30.0, 1.0, False),
    (8, 4, 0.2, 0.5, 3, 1, 30.0, 30.0, 0.2, False),
    (2, 1, 0.1, 0.6, 4, 1, 60.0, 30.0, 0.2, False),
    (4, 0, 0.6, 0.5, 4, 1, 30.0, 0.0, 0.2, True),  # no zIIP: every burst on the GCPs
]
OPEN_SHARES = (0.1, 0.3, 0.6, 0.85)
# closed load on these LPARs (indices into LPARS), think time and delay as the closed reproducer
CLOSED = (0, 2, 3, 6, 9, 13)
CLOSED_SHARES = (0.3, 0.6, 0.85)
THINK_MS, DELAY_MS = 50.0, 0.376
REPLICATIONS, TRANSACTIONS = 4, 20000
# the columns a point's simulation gives the table (--sim-from reads them back)
SIM_COLUMNS = ("sim_tps", "sim_resp_ms", "sim_lo", "sim_hi", "sim_hw_pct", "sim_ziip_wait_ms", "sim_gcp_wait_ms",
               "gcp_busy_pct", "ziip_busy_pct", "sim_spill_pct", "sim_cpu_s")


def points():
    for i, lpar in enumerate(LPARS):
        for share in OPEN_SHARES:
            yield i, lpar, "open", share
    for i in CLOSED:
        for share in CLOSED_SHARES:
            yield i, LPARS[i], "closed", share


def _dispatch(lpar) -> Dispatch:
    n_gcp, n_ziip, _, _, k_e, k_g, bg_g, bg_z, bg_s, honor = lpar
    return Dispatch(n_gcp, n_ziip, honor_priority=honor, eligible_bursts=k_e, gcp_bursts=k_g, bg_gcp_busy_pct=bg_g,
                    bg_ziip_busy_pct=bg_z, bg_burst_ms=bg_s)


def _scenario(lpar, load, share) -> tuple[SimScenario, float]:
    n_gcp, n_ziip, d, f, k_e, k_g, bg_g, bg_z, bg_s, honor = lpar
    x_max = _dispatch(lpar).max_tps(d, f)
    common = dict(n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=d, ziip_eligible_fraction=f, delay_ms=DELAY_MS,
                  honor_priority=honor, eligible_bursts=k_e, gcp_bursts=k_g, bg_gcp_busy_pct=bg_g,
                  bg_ziip_busy_pct=bg_z, bg_burst_ms=bg_s)
    if load == "open":
        tps = share * x_max
        return SimScenario(tps=tps, **common), tps
    clients = max(int(share * (d + DELAY_MS + THINK_MS) * x_max / 1000.0), 1)
    return SimScenario(clients=clients, think_time_ms=THINK_MS, **common), float(clients)


def simulate_point(args) -> dict:
    seed, (i, lpar, load, share) = args
    scenario, _ = _scenario(lpar, load, share)
    start = time.process_time()
    row = simulate(scenario, replications=REPLICATIONS, transactions=TRANSACTIONS, seed=seed).iloc[0]
    tps = float(row["tps"])
    return {"sim_tps": tps, "sim_resp_ms": float(row["resp_ms"]), "sim_lo": float(row["resp_ms_lo"]),
            "sim_hi": float(row["resp_ms_hi"]),
            "sim_hw_pct": 100.0 * (float(row["resp_ms_hi"]) - float(row["resp_ms_lo"])) / 2 / float(row["resp_ms"]),
            "sim_ziip_wait_ms": float(row["n_ziip_delay"]) / tps * 1000.0,
            "sim_gcp_wait_ms": float(row["n_gcp_delay"]) / tps * 1000.0,
            "gcp_busy_pct": float(row["gcp_busy_pct"]), "ziip_busy_pct": float(row["ziip_busy_pct"]),
            "sim_spill_pct": float(row["ziip_eligible_on_gcp_share_pct"]), "sim_cpu_s": time.process_time() - start}


def model_columns(lpar, load, share, sim_tps: float) -> dict:
    """The model's response at the point (open: also its waits per transaction)."""
    n_gcp, n_ziip, d, f, *_ = lpar
    dispatch = _dispatch(lpar)
    _, level = _scenario(lpar, load, share)
    if load == "open":
        sol = solve_open_rows(np.array([level]), d, f, n_gcp=n_gcp, n_ziip=n_ziip,
                              bg_gcp_busy_pct=dispatch.bg_gcp_busy_pct, bg_ziip_busy_pct=dispatch.bg_ziip_busy_pct,
                              dispatch=dispatch)
        return {"model_resp_ms": DELAY_MS + float(sol.resp_ms[0, 0]),
                "model_ziip_wait_ms": float(sol.ziip_wait_ms[0, 0]), "model_gcp_wait_ms": float(sol.gcp_wait_ms[0, 0])}
    sol = solve_closed(d, DELAY_MS, f, dispatch, think_time_ms=THINK_MS, n_max=int(level))
    return {"model_resp_ms": float(sol.resp_ms[0, -1]), "model_ziip_wait_ms": np.nan, "model_gcp_wait_ms": np.nan}


def table_of(sims: list[dict]) -> pd.DataFrame:
    rows = []
    for (i, lpar, load, share), sim in zip(points(), sims, strict=True):
        n_gcp, n_ziip, d, f, k_e, k_g, bg_g, bg_z, bg_s, honor = lpar
        _, level = _scenario(lpar, load, share)
        row = {"lpar": i, "n_gcp": n_gcp, "n_ziip": n_ziip, "d": d, "f": f, "k_e": k_e, "k_g": k_g, "bg_gcp": bg_g,
               "bg_ziip": bg_z, "bg_burst_ms": bg_s, "honor": "YES" if honor else "NO", "load": load,
               "share": share, "offered": round(level, 1)}
        row.update(sim)
        row.update(model_columns(lpar, load, share, sim["sim_tps"]))
        row["err_pct"] = 100.0 * (row["model_resp_ms"] / row["sim_resp_ms"] - 1.0)
        rows.append(row)
    return pd.DataFrame(rows)


def scored_table(doc: str, pts: list, sim_columns, simulate, table_of) -> pd.DataFrame:
    """``table_of`` the points' simulated columns, saved to ``--save`` if given.

    The command line is ``--jobs``, ``--save`` and ``--sim-from``: the simulated columns are read
    back from the ``--sim-from`` table, or ``simulate((seed, point))`` on ``--jobs`` processes.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save")
    parser.add_argument("--sim-from")
    args = parser.parse_args()
    if args.sim_from:
        saved = pd.read_csv(args.sim_from)
        if len(saved) != len(pts):
            raise SystemExit(f"{args.sim_from} has {len(saved)} points, this design {len(pts)}")
        sims = saved[list(sim_columns)].to_dict("records")
    else:
        with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
            sims = list(pool.map(simulate, enumerate(pts)))
    table = table_of(sims)
    if args.save:
        table.to_csv(args.save, index=False)
    return table


def main() -> int:
    start = time.perf_counter()
    table = scored_table(__doc__, list(points()), SIM_COLUMNS, simulate_point, table_of)
    shown = table.drop(columns=["sim_cpu_s", "sim_lo", "sim_hi", "k_g", "bg_burst_ms"])
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.max_columns", 40):
        print(shown.round(3).to_string(index=False))
    err = table["err_pct"].abs()
    busy = table[["gcp_busy_pct", "ziip_busy_pct"]].max(axis=1)
    print(f"\n{len(table)} points, {time.perf_counter() - start:.0f} s")
    for label, sel in (("all", np.ones(len(table), bool)), ("busiest pool <= 85 %", busy <= 85.0),
                       ("open", table["load"] == "open"), ("closed", table["load"] == "closed")):
        e = err[sel]
        finite = e[np.isfinite(e)]  # a model that calls a point saturated the simulation carried: counted apart
        print(f"{label}: {len(e)} points, mean |error| {finite.mean():.1f} %, median {finite.median():.1f} %, "
              f"worst {finite.max():.1f} %, {(e <= 10).sum()} within 10 %, {(e <= 25).sum()} within 25 %, "
              f"{len(e) - len(finite)} the model calls saturated")
    # response against load on each LPAR, load by load: the model should rise wherever the simulation does
    falls = 0
    for _, part in table.groupby(["lpar", "load"]):
        model = part.sort_values("share")["model_resp_ms"].to_numpy()
        falls += int(np.sum(np.diff(model) < 0))
    print(f"model response falling from one load to the next on an LPAR: {falls}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
