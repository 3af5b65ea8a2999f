"""Ten simulated days of RMF intervals with known truth, from kneecap's own dispatcher simulation.

The test data for per-WLM-class open-workload response models fitted on RMF intervals
(SMF 70.1 + 72.3). Unlike :func:`synth.week_of_intervals` (a crude closed-form stand-in), the
response, the zIIP/GCP split and the pool busy of every interval come from
:mod:`kneecap.simulation` (SimPy, the event-by-event z/OS dispatcher with IIPHONORPRIORITY and
ZIIPAWMT), so a model fitted on these intervals can be checked against the simulation's own knee.

Three layers
------------
1. :data:`CONFIG` (:class:`SimDaysConfig`): one z/OS-Connect-like service class ``ZCONSIM`` on an
   LPAR with 2 GCPs + 2 zIIPs, 0.8 ms CPU per transaction (90 % zIIP-eligible, 4 eligible bursts
   and 1 GCP burst), 1.0 ms non-CPU response, IIPHONORPRIORITY=YES, ZIIPAWMT 3.2 ms, help rule
   ``"pool"``, background work of other classes at 30 % per GCP and 10 % per zIIP. The pools can
   carry ``CONFIG.max_tps`` = 4000 tps (``Dispatch.max_tps``).
2. The grid ``tests/smf/data/simdays_grid.csv``: :func:`kneecap.simulation.simulate` at the open
   loads :data:`GRID_LEVELS` (140 tps, ~5 % class zIIP busy, to 3800 tps, 95 % of the pools'
   capacity), every level with the same seed (common random numbers), 10 replications of
   4 000 - 40 000 transactions (:func:`grid_plan`). Regenerate with
   ``python -m tests.smf.simdays --write-grid``. On this machine (2 shared cores, one used) the grid
   took 385 s, about 6.5 minutes (:data:`GRID_SECONDS`). 95 % half-widths of ``resp_ms`` (Student
   t over the 10 replications): 0.3 - 1.4 % up to 85 % zIIP busy (2050 tps), <= 1.6 % up to
   3150 tps, 2.1 % at 3450 tps and 6.5 % at 3800 tps (GCPs 92 % busy). The response rises
   from 1.84 ms (140 tps) to 5.46 ms at 2450 tps (zIIPs 94 % busy, 4 % of the eligible work
   helped by GCPs), then more slowly while GCPs absorb the spill (7.55 ms at 3150 tps, 32 %
   spill at 3800 tps, 11.9 ms). Unloaded response 1.823 ms, knee (3x) at 2453 tps.
3. :func:`simulated_days`: ``days`` x 96 intervals of 15 minutes whose offered tps follows a
   daily profile (low at night, peak at 13:00) times a level rising linearly, written as SMF
   72.3 (class ``ZCONSIM`` and background class ``BATCHBG``) and 70.1 records with
   :mod:`synth` (independent of kneecap's decoders). Every interval's true response, CPU split
   and pool busy are the grid's, interpolated at its offered tps; the measured values add
   sampling noise. The class's WLM using/delay state samples are truth too (see "State
   samples" below). The daily peak crosses the simulation's knee after the data ends, so a
   growth forecast must extrapolate to it: with the defaults the 13:00 peaks grow from
   1310 tps (day 1, 57 % zIIP busy) by 96 tps a day to 2174 tps on day 10 (88 % zIIP busy,
   response 4.0 ms = 2.2x unloaded); the trend reaches the knee at day 12.9, so ``knee_date``
   is day 13, 2026-03-14.

The knee
--------
kneecap's knee rule (params.yaml ``train.knee_k``): the first load where the response exceeds
``k`` x the unloaded response. :func:`true_knee_tps` applies it to the grid: the unloaded
response is the grid's response extrapolated to 0 tps, log-linearly through the two lowest loads
(the limit as the class's load vanishes; it still includes the class's waits behind background
work), and the crossing is found by interpolating ``log(resp_ms)`` linearly in offered tps.

State samples
-------------
WLM samples every unit of work every 250 ms; :func:`kneecap.simulation.simulate` reports the
class's time-average number of transactions in each CPU state (``n_gcp_using``,
``n_ziip_using``, ``n_ziip_on_cp_using``, ``n_gcp_delay``, ``n_ziip_delay``; the grid carries
them). Per interval the expected samples of a state are its average count x ``interval_s`` /
0.25 s, the count being the grid's time in that state per transaction (``n / tps``, seconds)
interpolated in offered tps (linearly; the delay states monotone cubic in their log,
:func:`_interp_rising`), times the interval's ``ended / interval_s`` (as for the APPL%s, so the
using samples and the APPL%s agree). Each state's count is drawn
``Poisson(expected)`` (seeded) and the 72.3 period fields are sums of those draws:

=====================================  =========================================================
72.3 field (kneecap column)            simulated states
=====================================  =========================================================
R723CCUS CPU using (``cpu_using``)     ``n_gcp_using`` + ``n_ziip_on_cp_using``: all the class's
                                       work on a GCP; RMF's CPU using includes zIIP-eligible
                                       work running on a CP, as APPL% CP includes IIPCP
R723SUCU zIIP on CP using              ``n_ziip_on_cp_using`` (helped eligible work, a subset of
(``ziip_on_cp_using``)                 R723CCUS)
R723SUPU zIIP using (``ziip_using``)   ``n_ziip_using``
R723CCDE CPU delay (``cpu_delay``)     ``n_gcp_delay``: GCP-only bursts queued for a GCP
R723SUPD zIIP delay (``ziip_delay``)   ``n_ziip_delay``: eligible bursts in the zIIP queue
R723CTOU total using                   CPU using + zIIP using (every using state once)
R723CTOT total delay                   CPU delay + zIIP delay
=====================================  =========================================================

The class has no I/O, storage or other delays: its ``delay_ms`` outside the CPU is in no state,
so total using/delay cover only the CPU. ``BATCHBG`` carries rough using samples (its APPL%,
no noise, no delay samples), not part of the truth.

Response time distribution and the WLM goal
-------------------------------------------
The class runs under a percentile response time goal, :data:`GOAL_PERCENTILE` % within
:data:`GOAL_RESP_MS` ms (SMF 72.3 R723CRGF x'80', R723CVAL in ms, R723CPCT), and every interval's
72.3 period carries the 14 response time distribution buckets around the goal (R723TRDB at
R723CRTX). The grid holds only the mean and the 95th percentile, so the shape comes from the
simulation's own transactions: :func:`write_resp_quantiles` runs one replication of
:data:`RESP_QUANTILE_TRANSACTIONS` transactions at every grid level (:data:`GRID_SEED`) and keeps
the quantiles of response over its mean at :data:`RESP_QUANTILE_PROBS`
(``tests/smf/data/simdays_resp_quantiles.csv``; ``python -m tests.smf.simdays
--write-resp-quantiles``, :data:`RESP_QUANTILE_SECONDS`). An interval's distribution is that
quantile function interpolated linearly in offered tps between the two grid levels around it
(the ends held outside), times the interval's written mean ``resp_ms``; its bucket counts are
``Multinomial(ended, p)`` with ``p`` the distribution's mass in each bucket, drawn from a
generator of their own (``default_rng([seed, 723])``) so that no earlier draw moves. The truth
keeps the counts (``rt_bucket_01_count`` ...) and the distribution's 90th percentile
(``resp_p90_ms_true``). Only :data:`CONFIG` has quantiles; the variants' days carry no goal.
``BATCHBG`` has a discretionary goal and no distribution.

Round trip
----------
:func:`decode_days` frames the records with RDWs into a temporary file and decodes it with
:func:`kneecap.smf.reader.decode_file`; :func:`check_round_trip` compares tps, response, APPL%
CP / IIP / IIPCP, the class's seven sample counts, its goal and response time buckets and LPAR busy
per pool with the truth table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.interpolate import PchipInterpolator

from kneecap import warehouse
from kneecap.ingest.catalogue import DECODED_TABLES
from kneecap.modeling.dispatch import Dispatch
from kneecap.modeling.select import ModelingConfig
from kneecap.modeling.ziip import PlannerPolicy
from kneecap.simulation import SimScenario, check_open_load_fits, response_sample, simulate
from kneecap.smf.reader import decode_file
from kneecap.training import with_rt_buckets
from tests.bundled import read_bundled
from tests.smf import synth

GRID_CSV = Path(__file__).resolve().parent / "data" / "simdays_grid.csv"
#: Wall-clock seconds the committed grid took (one core, shared machine).
GRID_SECONDS = 385.0
RESP_QUANTILES_CSV = GRID_CSV.with_name("simdays_resp_quantiles.csv")
#: The class's WLM goal: 90 % of transactions within 5 ms (a percentile response time goal).
GOAL_RESP_MS = 5
GOAL_PERCENTILE = 90
#: Probabilities at which the response quantiles are kept (0 and 1: the sample's min and max).
RESP_QUANTILE_PROBS: tuple[float, ...] = tuple(round(q, 4) for q in np.linspace(0.0, 1.0, 201))
RESP_QUANTILE_TRANSACTIONS = 40000
#: Wall-clock seconds :func:`write_resp_quantiles` took (one core, shared machine).
RESP_QUANTILE_SECONDS = 57.0


#: The simulated machine's 70.1 capacity fields (synthetic: 100 MSU/h per busy GCP, synth.SYNTHETIC_CAPACITY).
CAPACITY = synth.SYNTHETIC_CAPACITY


@dataclass(frozen=True)
class SimDaysConfig:
    """The simulated LPAR, class and background: the constants the data was generated from."""

    class_name: str = "ZCONSIM"
    workload: str = "ZCONWKL"
    bg_class: str = "BATCHBG"
    bg_workload: str = "BATCH"
    system_id: str = "SYSA"
    sysplex: str = "PLEX1"
    lpar_name: str = "LPAR1"
    lpar_no: int = 1
    n_gcp: int = 2
    n_ziip: int = 2
    cpu_ms_per_tran: float = 0.8
    ziip_eligible_fraction: float = 0.9
    delay_ms: float = 1.0
    # the dispatcher and burst settings the models default to: the simulated LPAR is a default z/OS
    eligible_bursts: int = ModelingConfig.eligible_bursts
    gcp_bursts: int = ModelingConfig.gcp_bursts
    honor_priority: bool = ModelingConfig.honor_priority
    help_wait_ms: float = ModelingConfig.help_wait_ms
    help_rule: str = ModelingConfig.help_rule
    bg_gcp_busy_pct: float = 30.0    # per GCP, other classes
    bg_ziip_busy_pct: float = 10.0   # per zIIP, other classes
    bg_burst_ms: float = 0.2
    knee_k: float = PlannerPolicy.knee_k
    # work per ms of each engine kind (the simulation's unit: a zIIP's ms at 1); GCPs slower than
    # zIIPs are a sub-capacity processor, written to 72.3 as R723NFFS = 256 ziip_speed / gcp_speed
    gcp_speed: float = 1.0
    ziip_speed: float = 1.0
    # zIIPs in SMT-2 (MT_ZIIP_MODE=2): ``n_ziip`` cores of two threads, each at ``ziip_speed x
    # ziip_mt_capacity / 2`` (the dispatch model's threads); ``bg_ziip_busy_pct`` is then per thread
    ziip_mt: int = 1
    ziip_mt_capacity: float | None = None

    @property
    def ziip_threads(self) -> int:
        """Logical zIIPs the simulation runs: cores x threads per core."""
        return self.n_ziip * self.ziip_mt

    @property
    def thread_speed(self) -> float:
        """Work per ms of one zIIP thread (MT-1: ``ziip_speed``; SMT-2: ``ziip_speed x CF / 2``)."""
        return self.ziip_speed * (float(self.ziip_mt_capacity or 1.0) / 2.0 if self.ziip_mt == 2 else 1.0)

    @property
    def mcfs(self) -> int:
        """R723MCFS the 72.3 records carry: 1024 x the zIIPs' MT capacity factor (1024 in MT-1)."""
        return int(round(1024 * (self.ziip_mt_capacity if self.ziip_mt == 2 else 1.0)))

    @property
    def nffs(self) -> int:
        """R723NFFS the 72.3 records carry: 256 x a zIIP's speed over a GCP's (256: engines alike)."""
        return int(round(256 * self.ziip_speed / self.gcp_speed))

    def scenario(self, tps: float) -> SimScenario:
        """The open-load :class:`SimScenario` at ``tps``."""
        # SMT-2: the simulation runs the threads, each a zIIP at the thread's speed
        return SimScenario(
            n_gcp=self.n_gcp, n_ziip=self.ziip_threads, cpu_ms_per_tran=self.cpu_ms_per_tran,
            ziip_eligible_fraction=self.ziip_eligible_fraction, tps=float(tps),
            delay_ms=self.delay_ms, honor_priority=self.honor_priority,
            help_wait_ms=self.help_wait_ms, help_rule=self.help_rule,
            gcp_bursts=self.gcp_bursts, eligible_bursts=self.eligible_bursts,
            bg_gcp_busy_pct=self.bg_gcp_busy_pct, bg_ziip_busy_pct=self.bg_ziip_busy_pct,
            bg_burst_ms=self.bg_burst_ms, gcp_speed=self.gcp_speed, ziip_speed=self.thread_speed)

    def dispatch(self) -> Dispatch:
        return Dispatch(n_gcp=self.n_gcp, n_ziip=self.n_ziip, honor_priority=self.honor_priority,
                        help_wait_ms=self.help_wait_ms, help_rule=self.help_rule,
                        eligible_bursts=self.eligible_bursts, gcp_bursts=self.gcp_bursts,
                        bg_gcp_busy_pct=self.bg_gcp_busy_pct,
                        bg_ziip_busy_pct=self.bg_ziip_busy_pct, bg_burst_ms=self.bg_burst_ms,
                        gcp_speed=self.gcp_speed, ziip_speed=self.ziip_speed,
                        **({"ziip_mt": 2, "ziip_mt_capacity": self.ziip_mt_capacity} if self.ziip_mt == 2 else {}))

    @property
    def max_tps(self) -> float:
        """Open load at which the pools the class may use are full (4000 tps here)."""
        return self.dispatch().max_tps(self.cpu_ms_per_tran, self.ziip_eligible_fraction)


CONFIG = SimDaysConfig()

# --------------------------------------------------------------------------- the grid

#: Offered tps of the grid: 140 tps is ~5 % class zIIP busy, 3800 tps 95 % of CONFIG.max_tps;
#: denser around the knee (~2450 tps).
GRID_LEVELS: tuple[float, ...] = (140, 400, 700, 1000, 1300, 1500, 1700, 1850, 1950, 2050, 2150,
                                  2250, 2350, 2450, 2550, 2700, 2900, 3150, 3450, 3800)
GRID_SEED = 20260302
GRID_REPLICATIONS = 10
GRID_WARMUP = 0.1
#: The level the freshness test re-simulates (the cheapest one).
CHEAP_LEVEL = 1000.0
#: Grid columns in front; the rest of simulate()'s row follows.
#: The class's WLM CPU states in the grid: time-average numbers of its transactions.
STATES = ("n_gcp_using", "n_ziip_using", "n_ziip_on_cp_using", "n_gcp_delay", "n_ziip_delay")
#: The states that are queueing: their time per transaction grows faster than the load.
DELAY_STATES = ("n_gcp_delay", "n_ziip_delay")
#: The 72.3 sample fields (kneecap's column names) and the states each one sums.
SAMPLE_FIELDS: dict[str, tuple[str, ...]] = {
    "cpu_using_samples": ("n_gcp_using", "n_ziip_on_cp_using"),
    "cpu_delay_samples": ("n_gcp_delay",),
    "ziip_using_samples": ("n_ziip_using",),
    "ziip_on_cp_using_samples": ("n_ziip_on_cp_using",),
    "ziip_delay_samples": ("n_ziip_delay",),
    "total_using_samples": ("n_gcp_using", "n_ziip_on_cp_using", "n_ziip_using"),
    "total_delay_samples": ("n_gcp_delay", "n_ziip_delay"),
}
GRID_FIRST = ("tps_offered", "tps", "resp_ms", "resp_ms_lo", "resp_ms_hi", "cpu_gcp_pct",
              "cpu_ziip_pct", "ziip_eligible_on_gcp_pct", "gcp_busy_pct", "ziip_busy_pct",
              "ziip_eligible_on_gcp_share_pct")


def grid_transactions(tps: float) -> int:
    """Transactions per replication at a level: fewer where the response varies little.

    Below 1100 tps (under ~50 % zIIP busy) 4 000 already give half-widths under 1.2 %, and low
    loads are the slow ones (background events dominate); near and past the knee 40 000.
    """
    if tps <= 1100:
        return 4000
    if tps <= 1900:
        return 20000
    return 40000


def grid_plan(levels: tuple[float, ...] = GRID_LEVELS) -> list[dict]:
    """The :func:`simulate` settings of every grid level."""
    return [{"tps": float(t), "replications": GRID_REPLICATIONS,
             "transactions": grid_transactions(t), "warmup_fraction": GRID_WARMUP,
             "seed": GRID_SEED} for t in levels]


def simulate_level(tps: float, *, replications: int, transactions: int, warmup_fraction: float,
                   seed: int, config: SimDaysConfig = CONFIG) -> pd.DataFrame:
    """One grid row: :func:`simulate` of ``config`` at ``tps`` (columns as in the CSV)."""
    scenario = config.scenario(tps)
    check_open_load_fits(scenario)
    row = simulate(scenario, replications=replications, transactions=transactions,
                   warmup_fraction=warmup_fraction, seed=seed)
    row["knee_k"] = config.knee_k
    return row[[*GRID_FIRST, *row.columns.drop(list(GRID_FIRST))]]


def simulate_grid(levels: tuple[float, ...] = GRID_LEVELS, *, config: SimDaysConfig = CONFIG,
                  progress: bool = False) -> pd.DataFrame:
    rows = []
    for plan in grid_plan(levels):
        t0 = time.perf_counter()
        row = simulate_level(plan.pop("tps"), config=config, **plan)
        rows.append(row)
        if progress:
            r = row.iloc[0]
            print(f"{r.tps_offered:7.0f} tps  {time.perf_counter() - t0:6.1f} s  "
                  f"resp {r.resp_ms:7.3f} ms +-{half_width_pct(r):5.2f} %  "
                  f"zIIP {r.ziip_busy_pct:5.1f} %  GCP {r.gcp_busy_pct:5.1f} %  "
                  f"spill {r.ziip_eligible_on_gcp_share_pct:5.2f} %", flush=True)
    return pd.concat(rows, ignore_index=True)


def half_width_pct(row: pd.Series) -> float:
    """95 % half-width of ``resp_ms`` in % of the mean (``row`` a grid row)."""
    return float((row["resp_ms_hi"] - row["resp_ms_lo"]) / 2 / row["resp_ms"] * 100)


#: Other systems than :data:`CONFIG`, for checking bands on LPARs the models were not built on:
#: the other GCP-help rule (``burst``: a GCP takes only bursts that have themselves waited
#: ZIIPAWMT), other eligible burst counts, engine counts and background. Their grids are
#: :func:`variant_grid_path` (``python -m tests.smf.simdays --write-grid --variant NAME``).
VARIANTS: dict[str, SimDaysConfig] = {
    # the first LPAR: 2 GCPs + 2 zIIPs, help per burst
    "burst": SimDaysConfig(help_rule="burst"),
    # help per burst, one eligible dispatch per transaction, heavier and longer background bursts
    "burst_k1": SimDaysConfig(help_rule="burst", eligible_bursts=1, bg_gcp_busy_pct=40.0,
                              bg_ziip_busy_pct=20.0, bg_burst_ms=0.5),
    # the second LPAR: 4 GCPs + 3 zIIPs, heavier GCP background, two eligible bursts
    "pool_4g3z": SimDaysConfig(n_gcp=4, n_ziip=3, eligible_bursts=2, bg_gcp_busy_pct=55.0,
                               bg_ziip_busy_pct=10.0),
    # the first LPAR on a sub-capacity processor: GCPs at 40 % of a zIIP's speed (R723NFFS 640);
    # a burst helped on a GCP takes 2.5 times its zIIP time
    "subcap": SimDaysConfig(gcp_speed=0.4),
    # the first LPAR with its 2 zIIP cores in SMT-2 at an MT capacity factor of 1331 / 1024 = 1.2998
    # (R723MCFS 1331, the numerator nearest 1.3): 4 threads at 0.65 of an MT-1 zIIP, the other
    # classes 10 % of each thread
    "smt2": SimDaysConfig(ziip_mt=2, ziip_mt_capacity=1331 / 1024),
}


def grid_on_base_lpar(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(grid, frame)``: the simulated grid of :data:`VARIANTS` ``[name]`` and its offered loads as rows on
    the variant's base LPAR (its engines and the other classes' busy), for a fit to predict at."""
    config = VARIANTS[name]
    grid = load_grid(variant_grid_path(name))
    return grid, pd.DataFrame({"tps": grid["tps_offered"], "n_gcp": config.n_gcp, "n_ziip": config.n_ziip,
                               "bg_gcp_busy_pct": config.bg_gcp_busy_pct,
                               "bg_ziip_busy_pct": config.bg_ziip_busy_pct})


def variant_grid_path(name: str) -> Path:
    """Where the grid of :data:`VARIANTS` ``[name]`` is kept."""
    return GRID_CSV.with_name(f"simdays_grid_{name}.csv")


def variant_levels(config: SimDaysConfig) -> tuple[float, ...]:
    """:data:`GRID_LEVELS` scaled to ``config``'s capacity (the same shares of it)."""
    return tuple(round(level / CONFIG.max_tps * config.max_tps, 1) for level in GRID_LEVELS)


def steep_trend(ratio: float) -> tuple[float, float]:
    """``(day1_peak_tps, growth)`` whose day-10 peak is :data:`CONFIG`'s and ``ratio`` times the day-6 peak.

    The default trend's day 10 is 1.21x its day 6; a steeper one tests a forecast further past the
    trained load with the knee still ahead (day 10 at the same share of the knee).
    """
    day10 = DAY1_PEAK_TPS + 9 * GROWTH_TPS_PER_DAY
    growth = day10 * (1 - 1 / ratio) / 4
    return day10 / ratio - 5 * growth, growth


def variant_days(name: str | None, *, seed: int, days: int = 10, ratio: float | None = None,
                 system_id: str | None = None, night_share: float | None = None) -> tuple[list[bytes], SimDaysTruth]:
    """:func:`simulated_days` of a variant (None: :data:`CONFIG`), its peak trend scaled to reach
    its own knee as :data:`CONFIG`'s does (day 1 at the same share of the knee, the same share a
    day); ``ratio``: the day-10 peak that many times the day-6 peak (:func:`steep_trend`; past 1.48 the
    quietest night of day 1 falls below some grids: a flatter day, ``night_share`` 0.33, keeps it in them);
    ``system_id``: the z/OS system the records are written for (default the variant's, SYSA), so
    that the days can sit beside another LPAR's in one project."""
    config = CONFIG if name is None else VARIANTS[name]
    if system_id is not None:
        config = replace(config, system_id=system_id)
    grid = load_grid() if name is None else load_grid(variant_grid_path(name))
    scale = true_knee_tps(grid, config.knee_k) / true_knee_tps(load_grid(), CONFIG.knee_k)
    day1, growth = (DAY1_PEAK_TPS, GROWTH_TPS_PER_DAY) if ratio is None else steep_trend(ratio)
    return simulated_days(days=days, seed=seed, grid=grid, config=config,
                          day1_peak_tps=day1 * scale, growth=growth * scale,
                          night_share=NIGHT_SHARE if night_share is None else night_share)


def write_grid(path: Path = GRID_CSV, *, progress: bool = True, variant: str | None = None) -> pd.DataFrame:
    t0 = time.perf_counter()
    if variant is not None:
        config = VARIANTS[variant]
        path = variant_grid_path(variant)
        grid = simulate_grid(variant_levels(config), config=config, progress=progress)
    else:
        grid = simulate_grid(progress=progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    grid.to_csv(path, index=False)
    if progress:
        print(f"wrote {path} ({len(grid)} levels) in {time.perf_counter() - t0:.0f} s")
    return grid


def load_grid(path: Path = GRID_CSV) -> pd.DataFrame:
    """The committed grid (pandas >= 3 parses floats round-trip: bit for bit)."""
    return pd.read_csv(path)


def simulate_resp_quantiles(tps: float, *, config: SimDaysConfig = CONFIG,
                            transactions: int = RESP_QUANTILE_TRANSACTIONS, seed: int = GRID_SEED) -> np.ndarray:
    """Quantiles of one replication's response over its mean at :data:`RESP_QUANTILE_PROBS`.

    The first tenth of the completions is warm-up, as in the grid.
    """
    resp = response_sample(config.scenario(tps), transactions=transactions, warmup_fraction=GRID_WARMUP, seed=seed)
    return np.quantile(resp, RESP_QUANTILE_PROBS) / resp.mean()


def write_resp_quantiles(path: Path = RESP_QUANTILES_CSV, *, progress: bool = True) -> pd.DataFrame:
    """Simulate every grid level once and write the response quantiles (long: level x probability)."""
    t0 = time.perf_counter()
    rows = [pd.DataFrame({"tps_offered": float(level), "prob": RESP_QUANTILE_PROBS,
                          "resp_over_mean": simulate_resp_quantiles(level)}) for level in GRID_LEVELS]
    table = pd.concat(rows, ignore_index=True)
    table.to_csv(path, index=False)
    if progress:
        print(f"wrote {path} ({len(GRID_LEVELS)} levels) in {time.perf_counter() - t0:.0f} s")
    return table


def load_resp_quantiles(path: Path = RESP_QUANTILES_CSV) -> pd.DataFrame:
    """The committed response quantiles (:func:`write_resp_quantiles`)."""
    return pd.read_csv(path)


def resp_quantiles_at(quantiles: pd.DataFrame, tps: np.ndarray, resp_ms: np.ndarray) -> np.ndarray:
    """Each interval's response quantiles (ms) at :data:`RESP_QUANTILE_PROBS`, shape (intervals, probs).

    The quantile function over the mean is interpolated linearly in offered tps between the grid
    levels around ``tps`` (held at the first / last level outside them), then scaled by the
    interval's mean ``resp_ms``.
    """
    wide = quantiles.pivot(index="tps_offered", columns="prob", values="resp_over_mean").sort_index()
    levels = wide.index.to_numpy(float)
    shape = wide.to_numpy(float)
    x = np.clip(np.asarray(tps, dtype=float), levels[0], levels[-1])
    hi = np.clip(np.searchsorted(levels, x, side="right"), 1, levels.size - 1)
    w = ((x - levels[hi - 1]) / (levels[hi] - levels[hi - 1]))[:, None]
    return ((1 - w) * shape[hi - 1] + w * shape[hi]) * np.asarray(resp_ms, dtype=float)[:, None]


def rt_bucket_probabilities(q_ms: np.ndarray, goal_ms: float) -> np.ndarray:
    """Mass of each of the 14 buckets of a goal under distributions given by quantiles (rows)."""
    bounds = np.asarray(synth.RT_MAP_PCT, dtype=float) / 100.0 * goal_ms
    probs = np.asarray(RESP_QUANTILE_PROBS)
    cdf = np.array([np.interp(bounds, row, probs, left=0.0, right=1.0) for row in q_ms])
    edges = np.hstack([np.zeros((cdf.shape[0], 1)), cdf, np.ones((cdf.shape[0], 1))])
    return np.clip(np.diff(edges, axis=1), 0.0, None)


# --------------------------------------------------------------------------- grid interpolation


def _interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray, *, log: bool = False) -> np.ndarray:
    """Linear interpolation (of ``log fp`` with ``log``), linear extrapolation at both ends."""
    y = np.log(fp) if log else np.asarray(fp, dtype=float)
    x = np.asarray(x, dtype=float)
    out = np.interp(x, xp, y)
    lo, hi = x < xp[0], x > xp[-1]
    out[lo] = y[0] + (x[lo] - xp[0]) * (y[1] - y[0]) / (xp[1] - xp[0])
    out[hi] = y[-1] + (x[hi] - xp[-1]) * (y[-1] - y[-2]) / (xp[-1] - xp[-2])
    return np.exp(out) if log else out


def _linear_positive(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Linear interpolation, never below 0."""
    return np.maximum(_interp(x, xp, fp), 0.0)


def _interp_rising(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Monotone cubic (PCHIP) interpolation of ``log fp`` over the grid's positive values.

    A queue's time per transaction grows faster than linearly in its load, so a straight line
    between grid levels overstates it in between: left out of the grid one level at a time and
    interpolated from the others, the zIIP delay per transaction was off by 4.7-9.7 % on average
    and 26-58 % at worst linearly, 2.1-4.3 % and 13-24 % log-linearly, 1.0-1.7 % and 5-9 % so
    (the four grids here; ``n_gcp_delay`` 0.6-1.3 % either way). Where the simulation saw none
    (helped work at low load) the values stay linear between the last zero and the first
    positive level; below the grid the first two positive levels extrapolate log-linearly.

    References
    ----------
    Fritsch & Carlson (1980), "Monotone piecewise cubic interpolation", *SIAM J. Numer. Anal.* 17,
    238-246 (``scipy.interpolate.PchipInterpolator``).
    """
    x = np.asarray(x, dtype=float)
    fp = np.asarray(fp, dtype=float)
    out = np.maximum(_interp(x, xp, fp), 0.0)
    positive = fp > 0
    if positive.sum() < 3:
        return out
    xs, fs = xp[positive], fp[positive]
    inside = (x >= xs[0]) & (x <= xs[-1])
    out[inside] = np.exp(PchipInterpolator(xs, np.log(fs))(x[inside]))
    if positive[0]:
        below = x < xp[0]
        out[below] = _interp(x[below], xs, fs, log=True)
    return out


def grid_at(grid: pd.DataFrame, tps: np.ndarray | float,
            config: SimDaysConfig = CONFIG) -> dict[str, np.ndarray]:
    """The simulation's truth at offered loads ``tps``, interpolated in the grid's offered tps.

    Returns ``resp_ms`` (log-linear), the class's CPU per transaction in APPL% per tps
    (``cp_per_tps``, ``iip_per_tps``, ``iipcp_per_tps``: the simulated APPL% CP / IIP / IIPCP
    divided by the simulated throughput) and the background's load in engine-% on each pool
    (``bg_gcp_pct``, ``bg_ziip_pct``: pool busy x engines minus the class; background zIIP work
    that GCPs helped counts on the GCPs, as in the simulation), and for each of :data:`STATES`
    ``<state>_per_tps``, the class's time in that state per transaction in seconds (the
    simulated time-average count divided by the simulated throughput, >= 0). The delay states
    rise faster than linearly with load: monotone cubic in their log (:func:`_interp_rising`);
    the rest linear.
    """
    g = grid.sort_values("tps_offered")
    xp = g["tps_offered"].to_numpy(float)
    x = np.atleast_1d(np.asarray(tps, dtype=float))
    if (x < xp[0] * 0.5).any() or (x > xp[-1]).any():
        raise ValueError(f"tps outside the grid [{xp[0] * 0.5:g}, {xp[-1]:g}]")
    thr = g["tps"].to_numpy(float)
    bg_gcp = g["gcp_busy_pct"].to_numpy(float) * config.n_gcp - g["cpu_gcp_pct"].to_numpy(float)
    bg_ziip = (g["ziip_busy_pct"].to_numpy(float) * config.ziip_threads
               - g["cpu_ziip_pct"].to_numpy(float))
    return {
        "resp_ms": _interp(x, xp, g["resp_ms"].to_numpy(float), log=True),
        "cp_per_tps": _interp(x, xp, g["cpu_gcp_pct"].to_numpy(float) / thr),
        "iip_per_tps": _interp(x, xp, g["cpu_ziip_pct"].to_numpy(float) / thr),
        "iipcp_per_tps": np.maximum(
            _interp(x, xp, g["ziip_eligible_on_gcp_pct"].to_numpy(float) / thr), 0.0),
        "bg_gcp_pct": _interp(x, xp, bg_gcp),
        "bg_ziip_pct": _interp(x, xp, bg_ziip),
        # the using states are the APPL%s (the same integrals) and interpolate as they do
        **{f"{state}_per_tps": (_interp_rising if state in DELAY_STATES else _linear_positive)(
            x, xp, g[state].to_numpy(float) / thr) for state in STATES},
    }


def unloaded_resp_ms(grid: pd.DataFrame) -> float:
    """Response as the class's load vanishes: log-linear extrapolation to 0 tps of the two
    lowest grid loads."""
    g = grid.sort_values("tps_offered")
    return float(_interp(np.array([0.0]), g["tps_offered"].to_numpy(float),
                         g["resp_ms"].to_numpy(float), log=True)[0])


def true_knee_tps(grid: pd.DataFrame, k: float = CONFIG.knee_k) -> float:
    """Offered tps at which the simulated response first exceeds ``k`` x the unloaded response.

    ``log(resp_ms)`` is interpolated linearly in tps between the last grid level below the
    threshold and the first above it. Raises ValueError if the grid never crosses it.
    """
    g = grid.sort_values("tps_offered")
    x = g["tps_offered"].to_numpy(float)
    y = np.log(g["resp_ms"].to_numpy(float))
    target = math.log(k * unloaded_resp_ms(grid))
    above = np.flatnonzero(y > target)
    if above.size == 0:
        raise ValueError(f"the grid's response never exceeds {k:g} x unloaded")
    i = int(above[0])
    if i == 0:
        return float(x[0])
    return float(x[i - 1] + (target - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))


# --------------------------------------------------------------------------- the days

START = dt.datetime(2026, 3, 2, 0, 0)
#: Daily peak (13:00) offered tps of day 1 and its growth per day (defaults of simulated_days):
#: day 7 peaks near 78 % zIIP busy, day 10 near 88 %, and the peak trend reaches the knee
#: (2453 tps) at day 12.9, so the first daily peak above it is day 13 (2026-03-14).
DAY1_PEAK_TPS = 1310.0
GROWTH_TPS_PER_DAY = 96.0
PEAK_HOUR = 13.0
NIGHT_SHARE = 0.15
RESP_NOISE = 0.03
BG_ENDED_PER_S = 0.02      # batch jobs of BATCHBG ending per second
BG_RESP_MS = 180_000.0
SAMPLES_PER_S = 4.0        # WLM state sampling every 250 ms


def daily_profile(hour: np.ndarray | float, night_share: float = NIGHT_SHARE) -> np.ndarray:
    """Share of the day's peak load at ``hour`` (0-24): ``night_share`` at 01:00, 1 at 13:00."""
    s = np.sin(np.pi * (np.asarray(hour, dtype=float) - (PEAK_HOUR - 12.0)) / 24.0) ** 2
    return night_share + (1.0 - night_share) * s


def peak_trend_tps(day: np.ndarray | float, day1_peak_tps: float = DAY1_PEAK_TPS,
                   growth: float = GROWTH_TPS_PER_DAY) -> np.ndarray:
    """Noise-free daily peak (13:00) offered tps of day ``day`` (1-based, fractional allowed)."""
    return day1_peak_tps + growth * (np.asarray(day, dtype=float) - 1.0)


@dataclass
class SimDaysTruth:
    """What :func:`simulated_days` generated the records from (what a model should recover).

    ``per_interval`` has one row per interval: ``interval_start_at``, ``day`` (1-based),
    ``tps_offered`` (the truth), ``ended``, ``tps`` (ended / interval), ``resp_ms_true`` (the
    simulation's mean response at ``tps_offered``), ``resp_ms`` (written, with sampling noise),
    the class's APPL% ``appl_cp_pct`` / ``appl_iip_pct`` / ``appl_iipcp_pct`` and the background's
    ``bg_appl_cp_pct`` / ``bg_appl_iip_pct`` / ``bg_appl_iipcp_pct`` as written, and the LPAR busy
    per pool ``gcp_busy_pct`` / ``ziip_busy_pct`` (class + background, per engine), the LPAR's MSU/h
    ``lpar_msu_per_h`` (its CP dispatch time at :data:`CAPACITY`'s MSU per CPU second) and the
    SMF70LAC written ``lac_msu_per_h`` (:func:`synth.rolling_lac`); the class's
    true (noise-free) time-average numbers of transactions in each WLM CPU state, :data:`STATES`
    (``n_gcp_using`` ...), and the sample counts written, the keys of :data:`SAMPLE_FIELDS`
    (``cpu_using_samples`` ... as kneecap's reader names them), Poisson draws around
    ``n x interval_s x SAMPLES_PER_S``; for :data:`CONFIG` (which has response quantiles) the 14
    response time bucket counts written under the goal, ``rt_bucket_01_count`` ...
    ``rt_bucket_14_count``, and the interval's true 90th percentile of response ``resp_p90_ms_true``
    (module docstring, "Response time distribution and the WLM goal").
    ``daily_peaks``: ``date``, ``day``, ``peak_tps`` (noise-free trend at 13:00), ``peak_resp_ms``,
    ``peak_ziip_busy_pct`` (of that day's 13:00 interval). ``knee_day``: the fractional day at
    which the peak trend reaches ``knee_tps`` (day ``d`` = 13:00 of day ``d``); ``knee_at``: that
    instant on the level's continuous trend; ``knee_date``: the first date whose noise-free 13:00
    peak reaches ``knee_tps`` (day ``ceil(knee_day)``).
    """

    config: SimDaysConfig
    knee_tps: float
    unloaded_resp_ms: float
    knee_date: dt.date
    knee_day: float
    knee_at: dt.datetime
    day1_peak_tps: float
    growth_tps_per_day: float
    interval_s: float
    seed: int
    per_interval: pd.DataFrame = field(repr=False)
    daily_peaks: pd.DataFrame = field(repr=False)


def simulated_days(days: int = 10, interval_s: float = 900.0, start: dt.datetime = START, *,
                   growth: float = GROWTH_TPS_PER_DAY, day1_peak_tps: float = DAY1_PEAK_TPS,
                   seed: int = 11, grid: pd.DataFrame | None = None,
                   config: SimDaysConfig = CONFIG,
                   resp_quantiles: pd.DataFrame | None = None,
                   second_period: tuple[float, int, float] | None = None,
                   night_share: float = NIGHT_SHARE) -> tuple[list[bytes], SimDaysTruth]:
    """SMF 72.3 + 70.1 records of ``days`` days of ``interval_s`` intervals, and their truth.

    Offered load at interval start ``t`` (day ``d`` 1-based, hour ``h``):
    ``tps = (day1_peak_tps + growth (d - 1 + (h - 13)/24)) x daily_profile(h)``, so the 13:00
    interval of day ``d`` carries :func:`peak_trend_tps` ``(d)``. Per interval:

    * ``ended ~ Poisson(tps x interval_s)``; the class's APPL%s are the grid's CPU per
      transaction at ``tps`` times ``ended / interval_s``: in the 72.3 period ``tcb_s`` is all the
      class's CPU (CP + zIIP), ``ziip_s`` the zIIP time, ``ziip_on_cp_s`` the IIPCP time, so
      kneecap reads APPL% CP = (tcb - ziip) / T (IIPCP included), IIP = ziip / T,
      IIPCP = ziip_on_cp / T;
    * ``resp_ms`` = the grid's response at ``tps`` x lognormal(0, 3 %);
    * ``BATCHBG`` 72.3 carries the background's CPU at ``tps`` (from the grid, helped zIIP work
      on the GCPs as IIPCP), so class + background = the pools' busy;
    * 70.1: ``LPAR1`` with 2 CP and 2 IIP logical processors, each dispatched
      ``busy% x interval``, plus an ``LPAR2`` with 4 CPs at 50 %.

    * the class's using/delay samples: per state ``Poisson(n x interval_s x SAMPLES_PER_S)``
      around the grid's time-average count ``n`` at ``tps`` (scaled by ``ended``, like the
      APPL%s), summed into the 72.3 fields as :data:`SAMPLE_FIELDS` says (module docstring,
      "State samples"). Their draws come after all the others, from the same generator.
    * :data:`CONFIG`'s class (or any with ``resp_quantiles``) has the percentile goal
      :data:`GOAL_PERCENTILE` % within :data:`GOAL_RESP_MS` ms and the response time buckets drawn
      from the simulated distribution at ``tps`` (module docstring); ``BATCHBG`` is discretionary.
    * ``second_period`` ``(share, goal_ms, slower)``: the class is a two-period class, ``share`` of
      each interval's transactions reported in period 2 under an average goal of ``goal_ms``,
      its responses ``slower`` times the class's, period 1's faster so the class's mean is as
      simulated (:func:`two_periods`).
    """
    grid = load_grid() if grid is None else grid
    rng = np.random.default_rng(seed)
    n = int(round(days * 86400 / interval_s))
    starts = [start + dt.timedelta(seconds=i * interval_s) for i in range(n)]
    elapsed_days = np.array([(t - start).total_seconds() / 86400 for t in starts])
    hours = np.array([t.hour + t.minute / 60 + t.second / 3600 for t in starts])
    day_no = np.floor(elapsed_days).astype(int) + 1
    # the trend in fractional days, so that 13:00 of day d is exactly day d
    level = peak_trend_tps(elapsed_days + 1.0 - PEAK_HOUR / 24.0, day1_peak_tps, growth)
    tps = level * daily_profile(hours, night_share)
    at = grid_at(grid, tps, config)
    ended = rng.poisson(tps * interval_s)
    noise = np.exp(rng.normal(0.0, RESP_NOISE, n))
    bg_ended = rng.poisson(BG_ENDED_PER_S * interval_s, n)
    x = ended / interval_s
    resp_true = at["resp_ms"]
    resp = resp_true * noise
    cp = at["cp_per_tps"] * x
    iip = at["iip_per_tps"] * x
    iipcp = np.minimum(at["iipcp_per_tps"] * x, cp)
    bg_cp, bg_iip = at["bg_gcp_pct"], at["bg_ziip_pct"]
    bg_iipcp = np.clip(bg_cp - config.bg_gcp_busy_pct * config.n_gcp, 0.0, None)
    gcp_busy = (cp + bg_cp) / config.n_gcp
    ziip_busy = (iip + bg_iip) / config.ziip_threads  # per thread in SMT-2
    # a core is dispatched while one of its threads runs: the writer takes the threads as busy
    # independently (the simulation does not follow cores), so only PR/SM's core time needs this
    core_busy = ziip_busy if config.ziip_mt == 1 else 100.0 * (1.0 - (1.0 - ziip_busy / 100.0) ** config.ziip_mt)
    states = {state: at[f"{state}_per_tps"] * x for state in STATES}
    expected = {state: n * interval_s * SAMPLES_PER_S for state, n in states.items()}
    drawn = {state: rng.poisson(expected[state]) for state in STATES}
    written = {name: sum(drawn[state] for state in parts) for name, parts in SAMPLE_FIELDS.items()}
    if resp_quantiles is None and config == CONFIG:
        resp_quantiles = load_resp_quantiles()
    rt: dict[str, np.ndarray] = {}
    rt_counts = None
    if resp_quantiles is not None:
        q_ms = resp_quantiles_at(resp_quantiles, tps, resp)
        # a generator of their own: the draws above stay what they were before the buckets existed
        rt_counts = np.random.default_rng([seed, 723]).multinomial(
            ended, rt_bucket_probabilities(q_ms, GOAL_RESP_MS))
        rt = {f"rt_bucket_{j + 1:02d}_count": rt_counts[:, j] for j in range(synth.RT_ENTRIES)}
        rt["resp_p90_ms_true"] = q_ms[:, RESP_QUANTILE_PROBS.index(0.9)]
    k = synth.Coefficients(nffs=config.nffs, mcfs=config.mcfs)
    # APPL% IIP is zIIP engine time; the TCB time carries it normalised to CP time (x NFFS / 256)
    norm = config.nffs / 256.0
    # SMT-2: the grid's zIIP % are thread time; 72.3 keeps zIIP time MT-1 equivalent (thread time x
    # CF / 2, the work over an MT-1 zIIP's speed) and RMF's APPL% IIP divides that by CF (R723MCFS / 1024)
    mt1_equiv = config.thread_speed / config.ziip_speed
    cf = config.mcfs / 1024.0
    # the LPAR's MSU/h from the CP dispatch time written below (whole microseconds), and the LAC of
    # the intervals ending in the last four hours (synth.rolling_lac)
    cp_dispatch_s = np.array([config.n_gcp * round(gcp_busy[i] / 100 * interval_s * 1e6) / 1e6 for i in range(n)])
    lpar_msu = cp_dispatch_s * 3600.0 / interval_s * CAPACITY.msu_per_cpu_s
    lac = synth.rolling_lac(lpar_msu.tolist(), interval_s)
    records: list[bytes] = []
    for i, t0 in enumerate(starts):
        t = interval_s
        samples = SAMPLES_PER_S * t
        period = synth.Period(
            period=1, ended=int(ended[i]), resp_ms=float(resp[i]),
            tcb_s=float((cp[i] + iip[i] * mt1_equiv * norm) / 100 * t), ziip_s=float(iip[i] * mt1_equiv / 100 * t),
            ziip_on_cp_s=float(iipcp[i] / 100 * t),
            cpu_using=int(written["cpu_using_samples"][i]),
            cpu_delay=int(written["cpu_delay_samples"][i]),
            ziip_using=int(written["ziip_using_samples"][i]),
            ziip_on_cp_using=int(written["ziip_on_cp_using_samples"][i]),
            ziip_delay=int(written["ziip_delay_samples"][i]),
            total_using=int(written["total_using_samples"][i]),
            total_delay=int(written["total_delay_samples"][i]), importance=2)
        if rt_counts is not None:
            period = replace(period, goal="percentile", goal_value=GOAL_RESP_MS, goal_unit="ms",
                             goal_percentile=GOAL_PERCENTILE, rt_midpoint_ms=GOAL_RESP_MS,
                             rt_buckets=tuple(int(c) for c in rt_counts[i]))
        periods = [period]
        if second_period is not None and rt_counts is not None:
            periods = two_periods(period, *second_period, q_ms=q_ms[i], rng=np.random.default_rng([seed, 723, 2, i]))
        records.append(synth.record_72_3(config.system_id, config.sysplex, t0, t,
                                         config.class_name, config.workload, periods, k))
        bg = synth.Period(
            period=1, ended=int(bg_ended[i]), resp_ms=BG_RESP_MS,
            tcb_s=float((bg_cp[i] + bg_iip[i] * mt1_equiv * norm) / 100 * t),
            ziip_s=float(bg_iip[i] * mt1_equiv / 100 * t),
            ziip_on_cp_s=float(bg_iipcp[i] / 100 * t),
            cpu_using=int(samples * bg_cp[i] / 100), ziip_using=int(samples * bg_iip[i] / 100),
            total_using=int(samples * (bg_cp[i] + bg_iip[i]) / 100), importance=5, goal="discretionary")
        records.append(synth.record_72_3(config.system_id, config.sysplex, t0, t,
                                         config.bg_class, config.bg_workload, [bg], k))
        own = synth.Partition(config.lpar_name, config.lpar_no, [
            *(synth.LogicalCPU("CP", t, gcp_busy[i] / 100 * t, t * (1 - gcp_busy[i] / 100))
              for _ in range(config.n_gcp)),
            *(synth.LogicalCPU("IIP", t, core_busy[i] / 100 * t, t * (1 - ziip_busy[i] / 100),
                               threads=config.ziip_mt)
              for _ in range(config.n_ziip)),
        ])
        other = synth.Partition("LPAR2", config.lpar_no + 1,
                                [synth.LogicalCPU("CP", t, 0.5 * t) for _ in range(4)])
        records.append(synth.record_70_1(config.system_id, config.sysplex, t0, t, [own, other],
                                         own_number=config.lpar_no, capacity=replace(CAPACITY, lac=lac[i]),
                                         ziip_mt_capacity=config.ziip_mt_capacity if config.ziip_mt == 2 else None))
    per = pd.DataFrame({
        "interval_start_at": pd.to_datetime(starts), "day": day_no, "tps_offered": tps,
        "ended": ended, "tps": x, "resp_ms_true": resp_true, "resp_ms": resp,
        "appl_cp_pct": cp, "appl_iip_pct": iip * mt1_equiv / cf, "appl_iipcp_pct": iipcp,
        "bg_appl_cp_pct": bg_cp, "bg_appl_iip_pct": bg_iip * mt1_equiv / cf, "bg_appl_iipcp_pct": bg_iipcp,
        "gcp_busy_pct": gcp_busy, "ziip_busy_pct": ziip_busy,
        "lpar_msu_per_h": lpar_msu, "lac_msu_per_h": lac,
        **states, **written, **rt,
    })
    knee = true_knee_tps(grid, config.knee_k)
    knee_day = 1.0 + (knee - day1_peak_tps) / growth
    peak_rows = per[per["interval_start_at"].dt.hour.eq(int(PEAK_HOUR))
                    & per["interval_start_at"].dt.minute.eq(0)]
    daily = pd.DataFrame({
        "date": peak_rows["interval_start_at"].dt.date.to_numpy(),
        "day": peak_rows["day"].to_numpy(),
        "peak_tps": peak_trend_tps(peak_rows["day"].to_numpy(), day1_peak_tps, growth),
        "peak_resp_ms": peak_rows["resp_ms_true"].to_numpy(),
        "peak_ziip_busy_pct": peak_rows["ziip_busy_pct"].to_numpy(),
    })
    truth = SimDaysTruth(
        config=config, knee_tps=knee, unloaded_resp_ms=unloaded_resp_ms(grid),
        knee_date=start.date() + dt.timedelta(days=math.ceil(knee_day) - 1), knee_day=knee_day,
        knee_at=start + dt.timedelta(days=knee_day - 1.0, hours=PEAK_HOUR),
        day1_peak_tps=day1_peak_tps, growth_tps_per_day=growth, interval_s=interval_s, seed=seed,
        per_interval=per, daily_peaks=daily)
    return records, truth


def two_periods(period: synth.Period, share: float, goal_ms: int, slower: float, *, q_ms: np.ndarray,
                rng: np.random.Generator) -> list[synth.Period]:
    """``period`` reported as two periods of a class: ``share`` of its transactions in period 2.

    Period 2 has an average goal of ``goal_ms`` and its responses are the class's distribution
    (quantiles ``q_ms``) times ``slower``; period 1's are times ``b1 = (1 - share x slower) /
    (1 - share)``, so the ended-weighted mean of the two is ``period``'s. Each has its share of
    the CPU times and samples and its buckets drawn around its own goal: the class, merged, is
    ``period`` up to the rounding of the record's fields, and period ``p``'s mean is ``b_p`` times
    the class's (:func:`kneecap.modeling.class_periods.period_mean_map`'s truth).
    """
    n2 = int(round(period.ended * share))
    f2 = n2 / period.ended if period.ended else 0.0
    b1 = (1.0 - f2 * slower) / (1.0 - f2)

    def part(f: float, n: int, b: float, **fields: Any) -> synth.Period:
        times = {k: getattr(period, k) * f for k in ("tcb_s", "ziip_s", "ziip_on_cp_s")}
        samples = {k: int(round(getattr(period, k) * f)) for k in
                   ("cpu_using", "cpu_delay", "ziip_using", "ziip_on_cp_using", "ziip_delay", "total_using",
                    "total_delay")}
        goal = fields.get("rt_midpoint_ms", period.rt_midpoint_ms)
        buckets = tuple(int(c) for c in rng.multinomial(n, rt_bucket_probabilities(b * q_ms[None, :], goal)[0]))
        return replace(period, ended=n, resp_ms=period.resp_ms * b, rt_buckets=buckets, **times, **samples, **fields)

    return [part(1.0 - f2, period.ended - n2, b1),
            part(f2, n2, slower, period=2, goal="average", goal_value=int(goal_ms), goal_percentile=0,
                 rt_midpoint_ms=int(goal_ms), importance=3)]


# --------------------------------------------------------------------------- round trip


def published_marts(records: list[bytes]) -> dict[str, pd.DataFrame]:
    """Every mart kneecap builds from ``records`` as an ingest would: one SMF file, decoded by
    :func:`kneecap.smf.reader.decode_file`, and the pipeline's own SQL beside the bundled tables."""
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "week.smf"
        path.write_bytes(synth.frame_rdw(records))
        decoded = decode_file(path)
    reference, sources = read_bundled()
    inputs = {name: empty() for name, empty in DECODED_TABLES.items()}
    inputs.update(decoded.tables, reference_measurements=reference, reference_sources=sources)
    return warehouse.run_sql_files(warehouse.sql_files(root / "pipelines" / "sql"), inputs)


def class_rows(records: list[bytes], truth: SimDaysTruth, *, buckets: bool = False) -> pd.DataFrame:
    """The simulated class's rows of ``fct_measurements`` as kneecap builds them from the records.

    The records are decoded by kneecap's readers (:func:`decode_days`) and the marts built by the
    pipeline's own SQL beside the bundled reference tables; rows in time order, with ``day``
    (1-based) added. ``buckets``: with the 72.3 response time buckets and goal beside each
    interval, as the train stage joins them (:func:`kneecap.training.with_rt_buckets`).
    """
    root = Path(__file__).resolve().parents[2]
    w72, c70 = decode_days(records)
    inputs = {name: empty() for name, empty in DECODED_TABLES.items()}
    reference, sources = read_bundled()
    inputs.update(smf72_workload=w72, smf70_cpu=c70, reference_measurements=reference, reference_sources=sources)
    marts = warehouse.run_sql_files(warehouse.sql_files(root / "pipelines" / "sql"), inputs)
    fct = marts["fct_measurements"]
    if buckets:
        fct = with_rt_buckets(fct, marts["fct_rt_buckets"], marts["fct_performance_index"])
    cls = fct[fct["workload"] == truth.config.class_name].sort_values("interval_start_at").reset_index(drop=True)
    cls["day"] = (cls["interval_start_at"] - cls["interval_start_at"].min().normalize()).dt.days + 1
    return cls



def decode_days(records: list[bytes]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Decode records with kneecap's reader via an RDW file: ``(smf72_workload, smf70_cpu)``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "simdays.smf"
        path.write_bytes(synth.frame_rdw(records))
        res = decode_file(path)
    if not res.quarantine.empty:
        raise AssertionError(f"records quarantined:\n{res.quarantine}")
    return res.smf72_workload, res.smf70_cpu


def check_round_trip(records: list[bytes], truth: SimDaysTruth, *, rtol: float = 1e-9,
                     busy_atol: float = 1e-6) -> dict[str, float]:
    """Decode ``records`` and compare with the truth; returns the worst errors seen.

    Raises AssertionError on a mismatch: per interval ``ended`` and the class's seven sample
    counts exactly, ``tps``, ``resp_ms``,
    APPL% CP / IIP / IIPCP of both classes within ``rtol`` (HFP keeps 56 bits), LPAR busy per
    pool within ``busy_atol`` percentage points (dispatch times are whole microseconds), and
    class + background APPL% = LPAR busy x engines.
    """
    c = truth.config
    w, cpu = decode_days(records)
    per = truth.per_interval.set_index("interval_start_at")
    errs: dict[str, float] = {}

    def cmp(name: str, got: np.ndarray, want: np.ndarray, *, rel: bool = True) -> None:
        got, want = np.asarray(got, float), np.asarray(want, float)
        err = np.abs(got - want)
        if rel:  # relative error, absolute where the truth is 0
            err = np.divide(err, np.abs(want), out=err.copy(), where=want != 0)
        errs[name] = float(err.max())
        tol = rtol if rel else busy_atol
        if not (err <= tol).all():
            i = int(np.argmax(err))
            raise AssertionError(f"{name}: decoded {got[i]!r} != truth {want[i]!r} "
                                 f"(interval {i}, error {err[i]:.3g} > {tol:g})")

    assert set(w["class_name"]) == {c.class_name, c.bg_class}, set(w["class_name"])
    assert len(w) == 2 * len(per) and len(cpu) == 2 * len(per), (len(w), len(cpu), len(per))
    cls = w[w["class_name"] == c.class_name].set_index("interval_start_at").loc[per.index]
    bg = w[w["class_name"] == c.bg_class].set_index("interval_start_at").loc[per.index]
    assert (cls["interval_s"] == truth.interval_s).all()
    assert (cls["ended"].to_numpy() == per["ended"].to_numpy()).all(), "ended"
    for name in SAMPLE_FIELDS:
        got, want = cls[name].to_numpy(), per[name].to_numpy()
        if not (got == want).all():
            i = int(np.argmax(got != want))
            raise AssertionError(f"{name}: decoded {got[i]} != written {want[i]} (interval {i})")
    errs["samples"] = 0.0
    if "rt_bucket_01_count" in per:  # the goal and the response time buckets, exactly as written
        assert (cls["goal_type"] == "percentile").all() and (cls["goal_percentile"] == GOAL_PERCENTILE).all()
        assert (cls["goal_resp_ms"] == GOAL_RESP_MS).all() and (bg["goal_type"] == "discretionary").all()
        for name in (f"rt_bucket_{j:02d}_count" for j in range(1, synth.RT_ENTRIES + 1)):
            got, want = cls[name].to_numpy(), per[name].to_numpy()
            if not (got == want).all():
                i = int(np.argmax(got != want))
                raise AssertionError(f"{name}: decoded {got[i]} != written {want[i]} (interval {i})")
        errs["rt_buckets"] = 0.0
    cmp("tps", cls["ended"] / cls["interval_s"], per["tps"])
    cmp("resp_ms", cls["resp_ms"], per["resp_ms"])
    for col in ("appl_cp_pct", "appl_iip_pct", "appl_iipcp_pct"):
        cmp(col, cls[col], per[col])
        cmp("bg_" + col, bg[col], per["bg_" + col])
    for cpu_type, col, n in (("CP", "gcp_busy_pct", c.n_gcp), ("IIP", "ziip_busy_pct", c.n_ziip)):
        pool = cpu[cpu["cpu_type"] == cpu_type].set_index("interval_start_at").loc[per.index]
        assert (pool["n_online"] == n).all(), f"{cpu_type} engines online"  # cores in SMT-2
        # SMT-2: the busy per thread is the threads' MVS busy (PR/SM dispatches cores)
        busy = pool["mvs_busy_pct"] if cpu_type == "IIP" and c.ziip_mt == 2 else pool["lpar_busy_pct"]
        cmp(col, busy, per[col], rel=False)
        appl = "appl_cp_pct" if cpu_type == "CP" else "appl_iip_pct"
        # APPL% IIP in SMT-2 is in cores at full MT-2 capacity: over n cores, each thread's busy
        cmp(f"{col} = class + background", (cls[appl] + bg[appl]) / n, busy, rel=False)
    return errs


# --------------------------------------------------------------------------- command line


def summary(grid: pd.DataFrame | None = None) -> str:
    grid = load_grid() if grid is None else grid
    _, truth = simulated_days(grid=grid)
    lines = [f"{r.tps_offered:6.0f} tps  resp {r.resp_ms:7.3f} ms +-{half_width_pct(r):5.2f} %  "
             f"zIIP {r.ziip_busy_pct:5.1f} %  GCP {r.gcp_busy_pct:5.1f} %  "
             f"spill {r.ziip_eligible_on_gcp_share_pct:5.2f} %  delay/using CPU "
             f"{r.n_gcp_delay / (r.n_gcp_using + r.n_ziip_on_cp_using):5.3f} "
             f"zIIP {r.n_ziip_delay / r.n_ziip_using:5.3f}  ({r.replications} x {r.transactions})"
             for _, r in grid.iterrows()]
    lines.append(f"unloaded {truth.unloaded_resp_ms:.3f} ms, knee ({CONFIG.knee_k:g}x) "
                 f"{truth.knee_tps:.0f} tps, knee day {truth.knee_day:.2f} = {truth.knee_date}")
    lines += [f"day {d.day:2d} {d.date}: peak {d.peak_tps:6.0f} tps  resp {d.peak_resp_ms:6.3f} ms"
              f"  zIIP {d.peak_ziip_busy_pct:5.1f} %" for d in truth.daily_peaks.itertuples()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.smf.simdays", description=__doc__.split(
        "\n")[0])
    ap.add_argument("--write-grid", action="store_true", help=f"simulate and write {GRID_CSV}")
    ap.add_argument("--variant", choices=sorted(VARIANTS), help="with --write-grid: that variant's grid")
    ap.add_argument("--write-resp-quantiles", action="store_true",
                    help=f"simulate the response quantiles at every grid level and write {RESP_QUANTILES_CSV}")
    ap.add_argument("--check", action="store_true",
                    help="generate the days and check they decode back to the truth")
    args = ap.parse_args(argv)
    if args.write_grid:
        write_grid(variant=args.variant)
    if args.write_resp_quantiles:
        write_resp_quantiles()
    if args.variant is None:
        print(summary())
    if args.check:
        records, truth = simulated_days()
        print("round trip ok, worst errors:", check_round_trip(records, truth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
