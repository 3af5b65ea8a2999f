"""The zIIP/GCP model against the dispatcher simulation on LPARs the grid and its tuning never saw.

``bench_dispatch.py`` scores a fixed grid (4 eligible bursts, ZIIPAWMT 3.2 ms, D 0.8 ms); the
help cycle's one constant (``HELP_CYCLE_BURSTS``) was set on the grid and on probes of it. These
points vary what the grid holds fixed: burst counts 3, 5 and 6,
ZIIPAWMT 2.4 and 5 ms, CPU per transaction 0.5-1.5 ms, eligible shares 0.7-1.0, engine mixes
outside the grid, closed and open load, GCPs helping or not. Each point is simulated (6 x 20,000
transactions, 95 % interval) and solved by the model; the table gives the error and whether the
class's zIIPs fall behind (``Dispatch.ziips_fall_behind``: the regime of the help cycle).

    python benchmarks/bench_dispatch_holdout.py
"""

from __future__ import annotations

import time

import pandas as pd

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open
from kneecap.simulation import SimScenario, simulate

# (n_gcp, n_ziip, D ms, f, ZIIPAWMT ms, eligible bursts, load, level): level is tps for open load,
# clients for closed load (think time 100 ms, delay 0.2 ms)
POINTS = [
    (6, 2, 1.0, 0.85, 3.2, 3, "open", 1500.0),
    (6, 2, 1.0, 0.85, 3.2, 3, "open", 3000.0),
    (6, 2, 1.0, 0.85, 3.2, 3, "open", 5000.0),
    (5, 1, 0.6, 0.7, 2.4, 5, "open", 4000.0),
    (5, 1, 0.6, 0.7, 2.4, 5, "open", 7000.0),
    (3, 3, 1.5, 0.9, 5.0, 6, "open", 1800.0),
    (3, 3, 1.5, 0.9, 5.0, 6, "open", 2400.0),
    (3, 3, 1.5, 0.9, 5.0, 6, "open", 3400.0),
    (10, 2, 0.5, 1.0, 3.2, 5, "open", 3500.0),
    (10, 2, 0.5, 1.0, 3.2, 5, "open", 8000.0),
    (10, 2, 0.5, 1.0, 3.2, 5, "open", 16000.0),
    (2, 1, 0.8, 0.8, 5.0, 3, "open", 1200.0),
    (2, 1, 0.8, 0.8, 5.0, 3, "open", 2000.0),
    (2, 1, 0.8, 0.8, 5.0, 3, "open", 3000.0),
    (6, 2, 1.0, 0.85, 3.2, 3, "closed", 400.0),
    (5, 1, 0.6, 0.7, 2.4, 5, "closed", 600.0),
]
THINK_MS, DELAY_MS = 100.0, 0.2


def point(p) -> dict:
    n_gcp, n_ziip, d, f, tau, bursts, load, level = p
    common = dict(n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=d, ziip_eligible_fraction=f, delay_ms=DELAY_MS,
                  help_wait_ms=tau, eligible_bursts=bursts, gcp_bursts=1)
    dispatch = Dispatch(n_gcp, n_ziip, help_wait_ms=tau, eligible_bursts=bursts)
    if load == "open":
        scenario = SimScenario(tps=level, **common)
        model = float(solve_open(level, d, DELAY_MS, f, dispatch).resp_ms[0, 0])
    else:
        scenario = SimScenario(clients=int(level), think_time_ms=THINK_MS, **common)
        model = float(solve_closed(d, DELAY_MS, f, dispatch, think_time_ms=THINK_MS,
                                   n_max=int(level)).resp_ms[0, -1])
    row = simulate(scenario, replications=6, transactions=20000, seed=11).iloc[0]
    return {"lpar": f"{n_gcp}+{n_ziip}", "D": d, "f": f, "ziipawmt": tau, "bursts": bursts, "load": load,
            "level": level, "tps": round(float(row["tps"]), 1), "ziip_busy_pct": round(float(row["ziip_busy_pct"]), 1),
            "gcp_busy_pct": round(float(row["gcp_busy_pct"]), 1),
            # f D X > c_Z (Dispatch.ziips_fall_behind), written out so the bench runs on older code
            "behind": f * d * float(row["tps"]) / 1000.0 > n_ziip,
            "sim_resp_ms": float(row["resp_ms"]),
            "sim_hw_pct": 100.0 * (float(row["resp_ms_hi"]) - float(row["resp_ms_lo"])) / 2 / float(row["resp_ms"]),
            "model_resp_ms": model, "err_pct": 100.0 * (model / float(row["resp_ms"]) - 1.0)}


def main() -> int:
    start = time.perf_counter()
    table = pd.DataFrame([point(p) for p in POINTS])
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.round(3).to_string(index=False))
    err = table["err_pct"].abs()
    print(f"{len(table)} points in {time.perf_counter() - start:.0f} s: mean |error| {err.mean():.1f} %, "
          f"worst {err.max():.1f} %, {(err <= 10).sum()} within 10 %, {(err <= 25).sum()} within 25 %")
    behind = table["behind"]
    if behind.any():
        print(f"  zIIPs falling behind (the help cycle's regime): {behind.sum()} points, mean |error| "
              f"{err[behind].mean():.1f} %, worst {err[behind].max():.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
