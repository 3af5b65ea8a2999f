"""Benchmark: what-if recompute speed and the issue #3 accuracy goals on the bundled cases.

* what-if: the closed model's response curve for N = 1..5,000 clients with 16 zIIPs + 16 GCPs
  (one exact multi-server MVA solve, the point curve the desk redraws on every slider move;
  goal <= 50 ms median), and the same curve with its bootstrap band (every stored draw).
* accuracy: `kneecap backtest` on data/backtest with params.yaml, MAPE per case and target
  against the goals in params.yaml `evaluate`.

Usage: python benchmarks/bench_modeling.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pandas as pd

from kneecap import backtest, config
from kneecap.modeling import ClosedMVAModel
from kneecap.modeling.dispatch import Dispatch, solve_closed
from kneecap.training import modeling_config

ROOT = Path(__file__).resolve().parents[1]
SEED004 = pd.DataFrame({"clients": [100, 200, 300, 400, 500], "tps": [500, 1000, 1500, 1960, 2420],
                        "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0})


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    params = config.load_params(ROOT / "params.yaml")

    print("== what-if recompute (N = 1..5000 clients) ==")
    for engines in (2, 8, 16):
        dispatch = Dispatch(engines, engines, eligible_bursts=params.train.eligible_bursts)
        ms = _median_ms(lambda: solve_closed(0.8, 0.3, 0.95, dispatch, think_time_ms=200.0, n_max=5000),
                        args.repeat)
        print(f"point curve, {engines:2d} zIIP + {engines:2d} GCP: median {ms:7.1f} ms (goal <= 50 ms: "
              f"{'met' if ms <= 50 else 'MISSED'})")
    fitted = ClosedMVAModel(n_boot=params.train.n_boot, seed=params.common.seed).fit(SEED004)

    for draws in (50, len(fitted.boot_params)):
        def banded() -> None:
            fitted._cache.clear()
            fitted.curve(n_gcp=16, n_ziip=16, think_time_ms=200.0, max_load=5000, points=80, max_draws=draws)

        ms = _median_ms(banded, max(3, args.repeat // 5))
        print(f"curve with band ({draws} bootstrap draws + point), 16 + 16 engines: median {ms:7.1f} ms")

    print("\n== accuracy on held-out points (data/backtest, params.yaml) ==")
    policy = backtest.PlannerPolicy(params.planner.max_ziip_busy_pct, params.planner.max_spill_pct,
                                    params.planner.max_n_ziip, params.train.knee_k)
    # rolling-origin cases expand into one case per origin, as `kneecap backtest` runs them
    results = backtest.run_cases([str(ROOT / "data" / "backtest")], modeling_config(params), policy)
    print(backtest.format_table(results))
    goals = {"resp_ms": params.evaluate.mape_goal_resp_pct, "tps": params.evaluate.mape_goal_tps_pct,
             "cpu_ms_per_tran": params.evaluate.mape_goal_cost_pct}
    print("\ngoal check:")
    for r in results:
        for target, t in r.targets.items():
            if t["mape"] is None or target not in goals:
                continue
            verdict = "met" if t["mape"] <= goals[target] else f"MISSED by {t['mape'] - goals[target]:.1f} points"
            print(f"  {r.name:28} {target:16} MAPE {t['mape']:7.2f} % vs goal {goals[target]:4.1f} %: {verdict}")


if __name__ == "__main__":
    main()
