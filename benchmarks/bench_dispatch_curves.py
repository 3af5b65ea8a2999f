"""The zIIP/GCP model against the dispatcher simulation along whole load curves, and the monotone bound.

``bench_dispatch.py`` scores the grid at 30 / 60 / 85 / 95 % of capacity. Where GCPs help a zIIP
pool that cannot keep up, the simulated response rises to a peak past the zIIPs' capacity and
falls after it, often between those loads. A model that never predicts less for more load cannot
follow the fall: if the simulation gives ``P`` at one load and ``T < P`` at a higher one, every
non-decreasing curve is off by at least ``sqrt(P / T)`` at one of the two (its value at the peak
is at most its value at the trough). This bench simulates open load at 14 loads from 10 % to 85 %
of capacity on eight LPARs of the grid (D 0.8 ms, R0 0.3 ms, 4 eligible bursts, ZIIPAWMT 3.2 ms,
3 x 20,000 transactions a load) and prints, per LPAR, the model's error at each load, its mean
and worst, and that bound from the simulated curve itself (the largest ``sqrt`` of the running
maximum from below over the running minimum from above).

    python benchmarks/bench_dispatch_curves.py [--jobs J] [--save table.csv] [--sim-from table.csv]

``--sim-from benchmarks/reference/dispatch_curves_sim.csv`` re-scores the model against the saved
simulation in a second.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from bench_dispatch_background import scored_table

from kneecap.modeling.dispatch import Dispatch, solve_open
from kneecap.simulation import SimScenario, simulate

D_MS, R0_MS, BURSTS = 0.8, 0.3, 4
LPARS = [(8, 1, 0.95), (8, 2, 0.95), (4, 1, 0.95), (2, 1, 0.95), (4, 2, 0.95), (2, 2, 0.95), (8, 1, 0.3),
         (4, 1, 0.3)]
SHARES = (0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85)
REPLICATIONS, TRANSACTIONS = 3, 20000
SIM_COLUMNS = ("sim_resp_ms", "sim_lo", "sim_hi")


def points():
    for lpar in LPARS:
        for share in SHARES:
            yield lpar, share


def _tps(lpar, share) -> float:
    n_gcp, n_ziip, f = lpar
    return share * Dispatch(n_gcp, n_ziip, eligible_bursts=BURSTS).max_tps(D_MS, f)


def simulate_point(args) -> dict:
    seed, (lpar, share) = args
    n_gcp, n_ziip, f = lpar
    scenario = SimScenario(tps=_tps(lpar, share), n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=D_MS,
                           ziip_eligible_fraction=f, delay_ms=R0_MS, eligible_bursts=BURSTS, gcp_bursts=1)
    row = simulate(scenario, replications=REPLICATIONS, transactions=TRANSACTIONS, seed=seed).iloc[0]
    return {"sim_resp_ms": float(row["resp_ms"]), "sim_lo": float(row["resp_ms_lo"]),
            "sim_hi": float(row["resp_ms_hi"])}


def monotone_bound_pct(resp: np.ndarray) -> float:
    """Least worst relative error (%) any non-decreasing curve has against ``resp`` (in load order)."""
    upper = np.maximum.accumulate(resp)
    lower = np.minimum.accumulate(resp[::-1])[::-1]
    return 100.0 * (float(np.sqrt(upper / lower).max()) - 1.0)


def table_of(sims: list[dict]) -> pd.DataFrame:
    rows = []
    for (lpar, share), sim in zip(points(), sims, strict=True):
        n_gcp, n_ziip, f = lpar
        tps = _tps(lpar, share)
        model = float(solve_open(tps, D_MS, R0_MS, f, Dispatch(n_gcp, n_ziip, eligible_bursts=BURSTS)).resp_ms[0, 0])
        rows.append({"n_gcp": n_gcp, "n_ziip": n_ziip, "f": f, "share": share, "tps": round(tps, 1), **sim,
                     "model_resp_ms": model, "err_pct": 100.0 * (model / sim["sim_resp_ms"] - 1.0)})
    return pd.DataFrame(rows)


def main() -> int:
    start = time.perf_counter()
    table = scored_table(__doc__, list(points()), SIM_COLUMNS, simulate_point, table_of)
    print(f"{len(table)} points, {time.perf_counter() - start:.0f} s")
    for (n_gcp, n_ziip, f), part in table.groupby(["n_gcp", "n_ziip", "f"], sort=False):
        err = part["err_pct"].to_numpy()
        worst = err[np.argmax(np.abs(err))]
        loads = " ".join(f"{s:.3g}:{e:+.0f}" for s, e in zip(part["share"], err, strict=True))
        print(f"{n_gcp}+{n_ziip} f {f}: mean |error| {np.abs(err).mean():.1f} %, worst {worst:+.1f} %, "
              f"monotone bound {monotone_bound_pct(part['sim_resp_ms'].to_numpy()):.1f} %  [{loads}]")
    err = table["err_pct"].abs()
    print(f"all: mean |error| {err.mean():.2f} %, worst {err.max():.1f} %, {(err <= 10).sum()} of {len(err)} "
          f"within 10 %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
