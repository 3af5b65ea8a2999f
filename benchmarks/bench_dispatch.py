"""Analytic zIIP/GCP dispatch model vs the dispatcher simulation over a grid of LPARs and loads.

For each point the simulation (:mod:`kneecap.simulation`, replications with 95 % intervals) and the
analytic model (:mod:`kneecap.modeling.dispatch`) predict mean response; the table prints the
relative error per point and the summary the goal is stated in: mean |error| and worst |error| for
points whose simulated total busy is <= 85 % (goal 10 %) and <= 95 % (goal 25 %), and beside it
the same scored by the bottleneck pool's busy (the busier of GCPs and zIIPs), for information.

    python benchmarks/bench_dispatch.py [--full] [--transactions T] [--replications R]
                                        [--precision P] [--max-replications M] [--jobs J]
                                        [--save table.csv] [--sim-from table.csv]
                                        [--refine-from table.csv]

``--save`` writes the table; ``--sim-from`` takes the simulated columns from a saved table (same
grid and settings) and recomputes only the model, for changing the model without re-simulating
(with ``--precision`` it also reports the saved half-widths against that target). The full grid's
simulation refined to ``--precision 0.02`` (cap 32 replications) is kept in the repository,
``benchmarks/reference/dispatch_grid_sim.csv``, so a model change is scored against it in seconds:
``python benchmarks/bench_dispatch.py --full --sim-from benchmarks/reference/dispatch_grid_sim.csv
--precision 0.02``. It was made by ``--full --save`` (385 s, one process) then ``--refine-from``
that table (1,317 s, one process, under load). Each point's seed is fixed, so a rerun simulates
the same transactions: its summary matched, to the digit, that of the table an earlier run made.

Precision. Without ``--precision`` each point runs ``R`` replications of ``T`` transactions. With
``--precision P`` a point runs ``R`` first and then adds replications until the 95 % interval of
mean response has a half-width <= ``P`` x the mean, or it has ``M`` replications (default 64,
about 13 CPU s a point at T = 15,000); the table gives each point's half-width (``sim_hw_pct``,
per cent of the mean), replication count (``sim_reps``) and ``sim_capped`` for the points that
reached ``M`` first. After ``n`` replications the next batch brings the count to the smallest
``m`` whose Student-t half-width at the current standard deviation meets ``P``, at most ``4n``.
More replications of the same length, rather than longer ones: at equal CPU (240,000
transactions) 64 x 3,750, 16 x 15,000 and 4 x 60,000 gave half-widths of 12.1 / 13.8 / 15.5 %
(2 GCPs + 2 zIIPs at 95 % zIIP busy, open), 4.7 / 6.0 / 5.6 % and 3.4 / 3.5 / 3.5 % (means of
three seeds), with no sign of warm-up bias in the means (10 % of each replication is discarded).

``--refine-from`` takes a saved table of the same grid and ``T``: its points already within ``P``
are kept, the others get more replications. Point ``i`` uses seed ``i`` and its replication ``k``
the ``k``-th stream of that seed (:func:`kneecap.simulation.replicate`), so the saved replications
are the first ones of the refined point, whose response mean and interval give back their sum
and sum of squares; the refined point is the one a fresh run with as many replications gives,
whatever ``--jobs``. A table saved before ``sim_reps`` existed counts as ``R`` replications; its
pool busy columns are derived from total busy, f and spill.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
import pandas as pd
from scipy import stats

from kneecap.modeling.dispatch import Dispatch, solve_closed, solve_open
from kneecap.simulation import SimScenario, replicate

D_MS, R0_MS, THINK_MS, BURSTS = 0.8, 0.3, 200.0, 4
# columns a replication contributes to the table, averaged over replications
MEANS = {"busy_pct": "busy_pct", "sim_spill_pct": "ziip_eligible_on_gcp_share_pct", "gcp_busy_pct": "gcp_busy_pct",
         "ziip_busy_pct": "ziip_busy_pct"}


def grid(full: bool):
    gcps = (1, 2, 4, 8) if full else (1, 2, 4)
    ziips = (0, 1, 2, 4) if full else (0, 1, 2)
    shares = (0.3, 0.6, 0.85, 0.95) if full else (0.5, 0.85)
    for n_gcp, n_ziip, f, honor, load, share in itertools.product(
            gcps, ziips, (0.3, 0.95), (True, False), ("closed", "open"), shares):
        if n_ziip == 0 and not honor:
            continue  # without zIIPs IIPHONORPRIORITY has nothing to decide
        yield n_gcp, n_ziip, f, honor, load, share


def _model_resp_ms(n_gcp, n_ziip, f, honor, load, share, help_rule: str = "pool"
                   ) -> tuple[float, float, SimScenario]:
    """(model response ms, offered load, simulation scenario) at one grid point."""
    dispatch = Dispatch(n_gcp, n_ziip, honor_priority=honor, help_rule=help_rule, eligible_bursts=BURSTS)
    x_max = dispatch.max_tps(D_MS, f)
    common = dict(n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=D_MS, ziip_eligible_fraction=f, delay_ms=R0_MS,
                  honor_priority=honor, help_rule=help_rule, eligible_bursts=BURSTS, gcp_bursts=1)
    if load == "closed":
        clients = max(int(share * (D_MS + R0_MS + THINK_MS) * x_max / 1000.0), 1)
        model = solve_closed(D_MS, R0_MS, f, dispatch, think_time_ms=THINK_MS, n_max=clients).resp_ms[0, -1]
        return float(model), float(clients), SimScenario(clients=clients, think_time_ms=THINK_MS, **common)
    tps = share * x_max
    model = solve_open(tps, D_MS, R0_MS, f, dispatch).resp_ms[0, 0]
    return float(model), float(tps), SimScenario(tps=tps, **common)


class Replications:
    """Running sums of one point's replications: response for the interval, means of the rest."""

    def __init__(self) -> None:
        self.n, self.resp, self.resp_sq = 0, 0.0, 0.0
        self.sums = dict.fromkeys(MEANS, 0.0)
        self.cpu_s = 0.0

    @classmethod
    def from_saved(cls, row, n_gcp, n_ziip, f, default_reps):
        """The sums behind a saved row: its mean and t half-width over ``sim_reps`` replications."""
        self = cls()
        self.n = int(row["sim_reps"]) if "sim_reps" in row and pd.notna(row["sim_reps"]) else default_reps
        mean, half = float(row["sim_resp_ms"]), (float(row["sim_hi"]) - float(row["sim_lo"])) / 2.0
        sd = half * math.sqrt(self.n) / stats.t.ppf(0.975, self.n - 1) if self.n > 1 else 0.0
        self.resp, self.resp_sq = self.n * mean, (self.n - 1) * sd * sd + self.n * mean * mean
        pools = _pool_busy(row, n_gcp, n_ziip, f)
        for col in MEANS:
            value = float(row[col]) if col in row and pd.notna(row[col]) else pools.get(col, math.nan)
            self.sums[col] = self.n * value
        self.cpu_s = float(row["sim_cpu_s"]) if "sim_cpu_s" in row else math.nan
        return self

    def add(self, run, n_gcp, n_ziip):
        self.n += 1
        self.resp += run["resp_ms"]
        self.resp_sq += run["resp_ms"] ** 2
        busy = (run["gcp_busy_pct"] * n_gcp + np.nan_to_num(run["ziip_busy_pct"]) * n_ziip) / (n_gcp + n_ziip)
        for col, metric in MEANS.items():
            self.sums[col] += busy if col == "busy_pct" else run[metric]

    def mean(self) -> float:
        return self.resp / self.n

    def sd(self) -> float:
        return math.sqrt(max(self.resp_sq - self.n * self.mean() ** 2, 0.0) / (self.n - 1)) if self.n > 1 else math.nan

    def half_width(self) -> float:
        return stats.t.ppf(0.975, self.n - 1) * self.sd() / math.sqrt(self.n) if self.n > 1 else math.nan

    def wanted(self, precision, cap) -> int:
        """Replications the current standard deviation says meet ``precision``, within 4n and ``cap``."""
        goal, sd = precision * self.mean(), self.sd()
        m = self.n + 1
        while m < min(4 * self.n, cap) and stats.t.ppf(0.975, m - 1) * sd / math.sqrt(m) > goal:
            m += 1
        return min(m, 4 * self.n, cap)

    def columns(self, cap, precision=None) -> dict:
        half = self.half_width()
        out = {col: total / self.n for col, total in self.sums.items()}
        out.update(sim_resp_ms=self.mean(), sim_lo=self.mean() - half, sim_hi=self.mean() + half,
                   sim_hw_pct=100.0 * half / self.mean(), sim_reps=self.n,
                   sim_capped=bool(cap is not None and self.n >= cap and half > precision * self.mean()),
                   sim_cpu_s=self.cpu_s)
        return out


def _pool_busy(row, n_gcp, n_ziip, f) -> dict:
    """Per-engine GCP and zIIP busy from total busy, eligible share and spill (no background)."""
    work = float(row["busy_pct"]) * (n_gcp + n_ziip)  # class CPU, per cent of one engine
    spill = float(row["sim_spill_pct"]) / 100.0 if n_ziip else 1.0
    return {"gcp_busy_pct": work * ((1 - f) + f * spill) / n_gcp,
            "ziip_busy_pct": work * f * (1 - spill) / n_ziip if n_ziip else math.nan}


def simulate_point(args):
    """Simulate one grid point (or extend ``reps``) to ``precision`` or ``cap`` replications."""
    p, seed, transactions, replications, precision, cap, reps = args
    n_gcp, n_ziip = p[0], p[1]
    scen = _model_resp_ms(*p)[2]
    reps = reps if reps is not None else Replications()
    start = time.process_time()
    target = replications if reps.n == 0 else reps.n
    while True:
        if target > reps.n:
            for run in replicate(scen, range(reps.n, target), transactions=transactions, seed=seed):
                reps.add(run, n_gcp, n_ziip)
        if precision is None or reps.n >= cap or (reps.n > 1 and reps.half_width() <= precision * reps.mean()):
            break
        target = reps.wanted(precision, cap) if reps.n > 1 else 2
    reps.cpu_s = np.nan_to_num(reps.cpu_s) + time.process_time() - start
    return reps.columns(cap if precision is not None else None, precision)


def point(p, sim):
    """The table row of grid point ``p`` from its simulated columns ``sim`` and the model."""
    n_gcp, n_ziip, f, honor, load, share = p
    model, offered, _ = _model_resp_ms(*p)
    row = {"n_gcp": n_gcp, "n_ziip": n_ziip, "f": f, "honor": "YES" if honor else "NO", "load": load,
           "share": share, "offered": round(offered, 1)}
    row.update(sim)
    row["model_resp_ms"] = model
    row["err_pct"] = 100.0 * (model / row["sim_resp_ms"] - 1.0)
    return row


def _cached(row, p, default_reps) -> dict:
    """The simulated columns of a saved row; a table saved before sim_reps gets them filled in."""
    n_gcp, n_ziip, f = p[:3]
    reps = Replications.from_saved(row, n_gcp, n_ziip, f, default_reps)
    out = reps.columns(None)
    out.update({k: float(row[k]) for k in ("busy_pct", "sim_resp_ms", "sim_lo", "sim_hi", "sim_spill_pct")})
    out["sim_capped"] = bool(row["sim_capped"]) if "sim_capped" in row else False
    return out


def summary(table: pd.DataFrame) -> list[str]:
    lines = []
    table = table.assign(bottleneck_pct=table[["gcp_busy_pct", "ziip_busy_pct"]].max(axis=1))
    for limit, goal in ((85.0, 10.0), (95.0, 25.0)):
        for label, col in (("total busy", "busy_pct"), ("bottleneck busy", "bottleneck_pct")):
            sel = table[table[col] <= limit]
            err = sel["err_pct"].abs()
            # beyond the interval: the model is off by more than the goal from every value in it
            beyond = ((sel["model_resp_ms"] > (1 + goal / 100) * sel["sim_hi"])
                      | (sel["model_resp_ms"] < (1 - goal / 100) * sel["sim_lo"]))
            lead = f"{label} <= {limit:.0f} %" if col == "busy_pct" else f"  (info) {label} <= {limit:.0f} %"
            lines.append(f"{lead}: {len(sel)} points, mean |error| {err.mean():.1f} %, "
                         f"worst {err.max():.1f} % (goal: every point within {goal:.0f} %), "
                         f"{int((err <= goal).sum())}/{len(sel)} within goal, "
                         f"{int(beyond.sum())} outside it beyond the simulation's 95 % interval, "
                         f"sim half-width median {sel['sim_hw_pct'].median():.1f} % / "
                         f"worst {sel['sim_hw_pct'].max():.1f} %")
    for keys, part in table[table["busy_pct"] <= 95.0].groupby(["load", "honor"]):
        lines.append(f"  {keys[0]:6s} honor {keys[1]:3s}: mean |error| {part['err_pct'].abs().mean():.1f} %, "
                     f"worst {part['err_pct'].abs().max():.1f} %")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="n_gcp 1-8, n_ziip 0-4, four load levels")
    parser.add_argument("--transactions", type=int, default=15000)
    parser.add_argument("--replications", type=int, default=3,
                        help="replications per point (the first batch with --precision)")
    parser.add_argument("--precision", type=float,
                        help="add replications until the response half-width is <= this share of the mean")
    parser.add_argument("--max-replications", type=int, default=64, help="the cap for --precision")
    parser.add_argument("--jobs", type=int, default=1, help="points simulated in parallel processes")
    parser.add_argument("--save", help="write the table to this CSV")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--sim-from", help="reuse the simulated columns of a table saved with --save")
    source.add_argument("--refine-from", help="reuse a saved table's points within --precision, refine the rest")
    args = parser.parse_args()
    if args.refine_from and args.precision is None:
        parser.error("--refine-from needs --precision")
    start = time.perf_counter()
    points = list(grid(args.full))
    saved = None
    if args.sim_from or args.refine_from:
        path = args.sim_from or args.refine_from
        saved = pd.read_csv(path)
        if len(saved) != len(points):
            raise SystemExit(f"{path} has {len(saved)} points, this grid {len(points)}: "
                             "save it with the same --full setting")
        saved = [_cached(row, p, args.replications) for (_, row), p in zip(saved.iterrows(), points, strict=True)]
    sims: list[dict | None] = [None] * len(points)
    tasks = []
    for i, p in enumerate(points):
        if args.sim_from:
            sims[i] = saved[i]
            continue
        extend = None
        if args.refine_from:
            old = saved[i]
            if old["sim_reps"] > 1 and old["sim_hw_pct"] <= 100.0 * args.precision:
                sims[i] = old
                continue
            n_gcp, n_ziip, f = p[:3]
            extend = Replications.from_saved(pd.Series(old), n_gcp, n_ziip, f, args.replications)
        tasks.append((i, (p, i, args.transactions, args.replications, args.precision,
                          args.max_replications, extend)))
    if tasks:
        print(f"simulating {len(tasks)} of {len(points)} points", file=sys.stderr, flush=True)
    with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        futures = {pool.submit(simulate_point, task): i for i, task in tasks}
        for done, future in enumerate(as_completed(futures), start=1):
            sims[futures[future]] = future.result()
            if done % 20 == 0:
                print(f"  {done}/{len(tasks)} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
                if args.save and saved is not None:  # a refinement cut short keeps what it has
                    partial = [sim if sim is not None else old for sim, old in zip(sims, saved, strict=True)]
                    pd.DataFrame([point(p, sim) for p, sim in zip(points, partial, strict=True)]).to_csv(
                        args.save + ".partial", index=False)
    rows = [point(p, sim) for p, sim in zip(points, sims, strict=True)]
    table = pd.DataFrame(rows)
    if args.save:
        table.to_csv(args.save, index=False)
    shown = table.drop(columns=["sim_cpu_s"])
    with pd.option_context("display.width", 250, "display.max_rows", 1000):
        print(shown.round(2).to_string(index=False))
    settings = (f"simulated columns from {args.sim_from}" if args.sim_from else
                f"{args.replications} replications" if args.precision is None else
                f"{args.replications}+ replications to a half-width <= {100 * args.precision:g} % of the mean, "
                f"cap {args.max_replications}")
    print(f"\n{len(table)} points ({len(tasks)} simulated), {time.perf_counter() - start:.0f} s "
          f"({settings}, {args.transactions} transactions each)")
    if args.precision is not None:
        capped = table[table["sim_capped"]]
        print(f"simulation: {int((table['sim_hw_pct'] <= 100 * args.precision).sum())}/{len(table)} points "
              f"within the half-width target, {len(capped)} reached the cap short of it "
              f"(their half-widths {capped['sim_hw_pct'].min():.1f}-{capped['sim_hw_pct'].max():.1f} %), "
              f"{table['sim_reps'].sum():.0f} replications in all")
    for line in summary(table):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
