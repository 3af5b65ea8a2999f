"""Random search for the dispatch model's response moving the wrong way, with other classes' work beside the class.

Per seed, 2,500 open draws (D 0.1-3 ms, f 0.05-1, 1-8 GCPs, 1-4 zIIPs, ZIIPAWMT 1 / 3.2 / 10 ms,
1-6 eligible bursts, 1-97 % of capacity, other classes at 0 / 10 / 30 / 60 % of the GCPs and
0 / 10 / 30 % of the zIIPs) and 200 closed ones (D 0.2-2 ms, R0 0-1 ms, f 0.3-0.95, 1-8 + 1-8
engines, think time 50 / 200 / 1000 ms, 10-150 % of N*, background 0 / 10 / 30 %), the draws of
issue #10's search. A violation: response falling with load (open: 2 % more tps; closed: any
population), a GCP added raising it, or a zIIP added raising it where the zIIPs keep up
(``Dispatch.ziips_fall_behind``); an engine added keeps the other classes' busy per engine, as
the search did. ``--wide`` draws as the property tests do instead: honor YES / NO, pool / burst
rule, ZIIPAWMT 0-10 ms, f 0-1, 0-4 zIIPs open, up to 16 + 16 closed, background 0-60 % / 0-30 %
continuous, an added engine keeping the other classes' load in engines.

    python benchmarks/stress_dispatch_background.py --seeds 1 2 3 [--wide]
"""

from __future__ import annotations

import argparse
import collections
import math

import numpy as np

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open


def _open_draw(rng, wide: bool):
    d = rng.uniform(0.1, 3)
    f = rng.uniform(0, 1) if wide else rng.uniform(0.05, 1)
    g = int(rng.integers(1, 9))
    z = int(rng.integers(0, 5)) if wide else int(rng.integers(1, 5))
    honor = bool(rng.integers(0, 2)) if wide else True
    tau = float(rng.choice([0, 1, 3.2, 10])) if wide else float(rng.choice([1, 3.2, 10]))
    k = int(rng.integers(1, 7))
    share = rng.uniform(0.01, 0.97)
    rule = str(rng.choice(["pool", "burst"])) if wide else "pool"
    if wide:
        bgg, bgz = rng.uniform(0, 60), (rng.uniform(0, 30) if z else 0.0)
    else:
        bgg, bgz = float(rng.choice([0, 10, 30, 60])), float(rng.choice([0, 10, 30]))
    return d, f, g, z, honor, tau, k, share, rule, bgg, bgz


def _closed_draw(rng, wide: bool):
    d, r0, f = rng.uniform(0.2, 2), rng.uniform(0, 1), rng.uniform(0.3, 0.95)
    top = 17 if wide else 9
    g, z = int(rng.integers(1, top)), int(rng.integers(1, top))
    think = float(rng.choice([50, 200, 1000]))
    share = rng.uniform(0.1, 1.5)
    k = int(rng.integers(1, 7))
    rule = str(rng.choice(["pool", "burst"])) if wide else "pool"
    if wide:
        bgg, bgz = rng.uniform(0, 60), rng.uniform(0, 30)
    else:
        bgg, bgz = float(rng.choice([0, 10, 30])), float(rng.choice([0, 10, 30]))
    return d, r0, f, g, z, think, share, k, rule, bgg, bgz


def search(seed: int, wide: bool, show: int) -> collections.Counter:
    rng = np.random.default_rng(seed)
    bad: collections.Counter = collections.Counter()

    def note(kind, case, *values):
        bad[kind] += 1
        if sum(bad.values()) <= show:
            print(kind, case, *values)

    for _ in range(2500):
        d, f, g, z, honor, tau, k, share, rule, bgg, bgz = case = _open_draw(rng, wide)

        def of(gg, zz):
            return Dispatch(gg, zz, honor_priority=honor, help_wait_ms=tau, eligible_bursts=k, help_rule=rule,
                            bg_gcp_busy_pct=bgg * g / gg if wide else bgg,
                            bg_ziip_busy_pct=(bgz * z / zz if wide else bgz) if zz else 0.0)

        dispatch = of(g, z)
        tps = share * dispatch.max_tps(d, f)
        if not math.isfinite(tps) or tps <= 0:
            continue
        try:
            base = solve_open(np.array([tps, tps * 1.02]), d, 0.2, f, dispatch).resp_ms[0]
            if not base[0] <= base[1] * (1 + 1e-9):
                note("open-load", case, base)
            more_gcp = solve_open(tps, d, 0.2, f, of(g + 1, z)).resp_ms[0, 0]
            if not more_gcp <= base[0] * (1 + 1e-9):
                note("open-gcp", case, base[0], more_gcp)
            if z:
                more_ziip = solve_open(tps, d, 0.2, f, of(g, z + 1)).resp_ms[0, 0]
                if not (more_ziip <= base[0] * (1 + 1e-9) or dispatch.ziips_fall_behind(tps, d, f)):
                    note("open-ziip", case, base[0], more_ziip)
        except Exception as exc:  # noqa: BLE001 - a search counts every failure
            note("open-error", case, type(exc).__name__)
    for _ in range(200):
        d, r0, f, g, z, think, share, k, rule, bgg, bgz = case = _closed_draw(rng, wide)

        def of(gg, zz):
            return Dispatch(gg, zz, eligible_bursts=k, help_rule=rule, bg_gcp_busy_pct=bgg * g / gg if wide else bgg,
                            bg_ziip_busy_pct=bgz * z / zz if wide else bgz)

        dispatch = of(g, z)
        n = min(max(int(share * (d + r0 + think) * dispatch.max_tps(d, f) / 1000), 2), 5000 if wide else 4000)
        try:
            sol = solve_closed(d, r0, f, dispatch, think_time_ms=think, n_max=n)
            base = sol.resp_ms[0]
            if not (np.all(np.isfinite(base)) and np.all(np.diff(base) >= -1e-9 * base[1:])):
                note("closed-load", case, np.nanmin(np.diff(base)))
            more_gcp = solve_closed(d, r0, f, of(g + 1, z), think_time_ms=think, n_max=n).resp_ms[0, -1]
            more_ziip = solve_closed(d, r0, f, of(g, z + 1), think_time_ms=think, n_max=n).resp_ms[0, -1]
            if not more_gcp <= base[-1] * (1 + 1e-9):
                note("closed-gcp", case, base[-1], more_gcp)
            if not (more_ziip <= base[-1] * (1 + 1e-9) or dispatch.ziips_fall_behind(sol.tps[0, -1], d, f)):
                note("closed-ziip", case, base[-1], more_ziip)
        except Exception as exc:  # noqa: BLE001 - a search counts every failure
            note("closed-error", case, type(exc).__name__)
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--wide", action="store_true", help="the property tests' draws")
    parser.add_argument("--show", type=int, default=5, help="violations printed per seed")
    args = parser.parse_args()
    total = 0
    for seed in args.seeds:
        bad = search(seed, args.wide, args.show)
        total += sum(bad.values())
        print(f"seed {seed}: {sum(bad.values())} violations {dict(sorted(bad.items()))}", flush=True)
    print(f"{total} violations over {len(args.seeds)} seed(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
