"""Benchmark: the closed dispatch solve's speed on its three paths, as ratios to the zIIP path.

A closed solve of 200 parameter sets (bootstrap draws) x 1,500 clients, as the desk's band solves
them: with zIIPs and IIPHONORPRIORITY=YES (GCPs help: the open times solved with the throughput),
with no zIIP and with IIPHONORPRIORITY=NO (exact MVA alone, no help). The two paths without help
do less work per population than the one with it; issue #36 found them twice as slow after the
package split (numba counting references to a NamedTuple of the MVA state's arrays at every
call). Printed: the least of ``--repeat`` runs of each, interleaved so the machine's load falls
on all three alike, and each path's ratio to the zIIP path's (compare ratios within a run).

Usage: python benchmarks/bench_dispatch_closed.py [--repeat 15] [--sets 200] [--clients 1500]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kneecap.modeling.dispatch import Dispatch, solve_closed

PATHS = {
    "zIIPs, IIPHONORPRIORITY=YES (help)": Dispatch(4, 2, eligible_bursts=4, gcp_bursts=2),
    "no zIIP": Dispatch(4, 0, eligible_bursts=4, gcp_bursts=2),
    "zIIPs, IIPHONORPRIORITY=NO": Dispatch(4, 2, honor_priority=False, eligible_bursts=4, gcp_bursts=2),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--clients", type=int, default=1500)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    d = rng.uniform(0.8, 1.2, args.sets)
    r0 = np.full(args.sets, 2.0)
    for dispatch in PATHS.values():  # compiled (or loaded from numba's cache) before timing
        solve_closed(d[:2], r0[:2], 0.5, dispatch, think_time_ms=1000.0, n_max=10)
    times: dict[str, list[float]] = {name: [] for name in PATHS}
    for _ in range(args.repeat):
        for name, dispatch in PATHS.items():
            t0 = time.perf_counter()
            solve_closed(d, r0, 0.5, dispatch, think_time_ms=1000.0, n_max=args.clients)
            times[name].append(time.perf_counter() - t0)
    print(f"== closed solve, {args.sets} sets x {args.clients} clients, D 0.8-1.2 ms, f 0.5, Z 1 s, "
          f"4 GCPs (+ 2 zIIPs); least of {args.repeat} ==")
    base = min(next(iter(times.values())))
    for name, ts in times.items():
        print(f"{name:38s} {min(ts):7.4f} s   ratio to the zIIP path {min(ts) / base:5.2f}")


if __name__ == "__main__":
    main()
