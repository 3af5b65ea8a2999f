"""`make bench`: every benchmark in one run, each printing its figures and ratios.

Machines here are shared and noisy: compare ratios within one run, not absolute times across runs.
Each bench's standard output is also kept in ``benchmarks/results/<name>.txt`` (the docs'
Benchmarks page shows the latest of each, ``benchmarks/report_tables.py``); benches that save a
table (``--save``) write it there too.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: the steeper week's day-10 peak over day 6's (``bench_smf_class.py --ratio``): the steepest every
#: simulated grid carries down to its quietest night interval (the docs' table names it from here)
SMF_CLASS_STEEP_RATIO = "1.48"
#: the widest week (issue 33: days 7-10 at 1.1x-1.6x the trained load) and its daily profile: at 1.6 the
#: first night at the usual 15 % of the peak falls below the grids, at 33 % it stays in every one
SMF_CLASS_WIDE_RATIO, SMF_CLASS_WIDE_NIGHT_SHARE = "1.6", "0.33"
BENCHES = [
    ("modeling", "modeling: what-if speed and backtest accuracy", ["bench_modeling.py"]),
    # the grid's refined simulation is kept (benchmarks/reference); the model is solved afresh and the
    # table saved where the docs' Benchmarks page renders it from (benchmarks/report_tables.py)
    ("dispatch_grid", "zIIP/GCP dispatch: analytic model vs simulation grid",
     ["bench_dispatch.py", "--full", "--sim-from", "benchmarks/reference/dispatch_grid_sim.csv",
      "--save", "benchmarks/results/dispatch_grid.csv"]),
    ("dispatch_holdout", "zIIP/GCP dispatch off the grid: 16 LPARs, burst counts and ZIIPAWMT the model was not set on",
     ["bench_dispatch_holdout.py"]),
    ("dispatch_background", "zIIP/GCP dispatch beside other classes' work: 14 LPARs against their kept simulation",
     ["bench_dispatch_background.py", "--sim-from", "benchmarks/reference/dispatch_background_sim.csv",
      "--save", "benchmarks/results/dispatch_background.csv"]),
    ("dispatch_curves", "zIIP/GCP dispatch along whole load curves (8 LPARs x 14 loads) against their kept "
     "simulation, beside the least worst error any curve that never falls with load can have",
     ["bench_dispatch_curves.py", "--sim-from", "benchmarks/reference/dispatch_curves_sim.csv",
      "--save", "benchmarks/results/dispatch_curves.csv"]),
    ("dispatch_closed", "zIIP/GCP dispatch, closed solve of 200 sets x 1,500 clients: the paths without help (no "
     "zIIP, IIPHONORPRIORITY=NO) against the zIIP path", ["bench_dispatch_closed.py"]),
    ("dispatch_speeds", "zIIP/GCP dispatch on engines not all alike (GCPs at 40 % of zIIP speed, zIIPs in SMT-2) "
     "against their kept simulation", ["bench_dispatch_speeds.py", "--sim-from",
                                       "benchmarks/reference/dispatch_speeds_sim.csv"]),
    ("engines_plan", "knee and zIIP plan of seed 004 on a sub-capacity LPAR and with SMT-2 zIIPs, each checked by "
     "simulation", ["bench_engines_plan.py"]),
    ("smf_decode", "SMF decode throughput vs sha256sum, peak RSS (>= 200 MB, 72.3-heavy)",
     ["bench_smf_decode.py", "--mb", "200"]),
    ("smf_ingest", "kneecap ingest as a whole process vs sha256sum, peak RSS (200 MB, 70.1 with 48 logical CPUs per "
     "twenty 72.3, as many SMF 30 interval records as 72.3)",
     ["bench_smf_decode.py", "--mb", "200", "--mix", "lpar", "--ingest"]),
    # the size issue 35 states its goal on (>= 0.5x sha256sum, median of 5 paired runs): start-up and the
    # commit weigh more in a smaller dump
    ("smf_ingest_92", "kneecap ingest as a whole process vs sha256sum on the 92 MB mix of issue 35 (the same mix), "
     "median of 5 pairs",
     ["bench_smf_decode.py", "--mb", "92", "--mix", "lpar", "--ingest", "--pairs", "5"]),
    # and on 70.1 + 72.3 alone (the class mix: 72.3 classes with one 70.1 an interval, no SMF 30)
    ("smf_ingest_92_class", "kneecap ingest as a whole process vs sha256sum on 92 MB of 70.1 + 72.3 (class mix), "
     "median of 5 pairs",
     ["bench_smf_decode.py", "--mb", "92", "--mix", "class", "--ingest", "--pairs", "5"]),
    ("damage", "damaged SMF: resync over 16-256 MiB of zeros beside sha256, and the time to refuse a 1 GiB gzip bomb",
     ["bench_damage.py"]),
    ("partitions", "decoded folders by month against by day: files and ingest speed of one 70.1 a day for ten "
     "years and of a dense LPAR-day (issue 35 item 7)",
     ["bench_partitions.py", "--save", "benchmarks/results/partitions.csv"]),
    ("scale", "cost growth: decode + marts on DuckDB and on Spark local[2] at 1, 10 and 100 LPAR-days of SMF",
     ["bench_scale.py", "--save", "benchmarks/results/scale.csv"]),
    ("smf_class", "a WLM class from simulated SMF: response, knee and knee date vs the truth and M/M/c",
     ["bench_smf_class.py", "--save", "benchmarks/results/smf_class.csv"]),
    # the same on LPARs the class model was not built on, seeds never used while building it
    *[(f"smf_class_{variant}", f"a WLM class from simulated SMF on the {variant} LPAR, seeds 21-24",
       ["bench_smf_class.py", *([] if variant == "pool" else ["--variant", variant]), "--seeds", "21", "22", "23",
        "24", "--save", f"benchmarks/results/smf_class_{variant}.csv"])
      for variant in ("pool", "burst", "burst_k1", "pool_4g3z")],
    # and on a steeper week: days 7-10 at 1.1x-1.48x the largest trained load
    *[(f"smf_class_steep_{variant}", f"a WLM class from simulated SMF on the {variant} LPAR, a steeper week, "
       "seeds 21-24",
       ["bench_smf_class.py", *([] if variant == "pool" else ["--variant", variant]), "--ratio",
        SMF_CLASS_STEEP_RATIO, "--seeds", "21", "22", "23", "24", "--save",
        f"benchmarks/results/smf_class_steep_{variant}.csv"])
      for variant in ("pool", "burst", "burst_k1", "pool_4g3z")],
    # and on the widest week: days 7-10 at 1.15x-1.6x, a flatter day (night at 33 % of the peak)
    *[(f"smf_class_wide_{variant}", f"a WLM class from simulated SMF on the {variant} LPAR, days 7-10 at up to "
       f"{SMF_CLASS_WIDE_RATIO}x the trained load, seeds 21-24",
       ["bench_smf_class.py", *([] if variant == "pool" else ["--variant", variant]), "--ratio",
        SMF_CLASS_WIDE_RATIO, "--night-share", SMF_CLASS_WIDE_NIGHT_SHARE, "--seeds", "21", "22", "23", "24",
        "--save", f"benchmarks/results/smf_class_wide_{variant}.csv"])
      for variant in ("pool", "burst", "burst_k1", "pool_4g3z")],
    ("goal_forecast", "percentiles and the PI forecast of a WLM class from simulated SMF vs the truth and a line "
     "through its p90s", ["bench_goal_forecast.py", "--seeds", "11", "12", "13", "14", "15"]),
    ("input_memory", "peak RSS of the whole kneecap process on the inputs of issue 35 item 4 (UTF-16 XML with an "
     "entity DTD, a 100 MB VBS chain plain and a 400 MB one gzipped, a YAML alias bomb, /dev/zero, the desk's upload "
     "of the first and third), goal <= 500 MB each",
     ["probe_input_memory.py", "--save", "benchmarks/results/input_memory.csv"]),
    ("kill_ingest", "kill campaign: kneecap ingest killed (SIGKILL, SIGTERM) at random moments, then run again",
     ["kill_ingest.py", "--save", "benchmarks/results/kill_ingest.csv"]),
    ("app", "app: page interaction latency (AppTest)", ["bench_app.py"]),
    ("browser", "desk in a real browser: first load, slider step to both charts redrawn (Playwright + Debian chromium; "
     "needs `make run` first)", ["bench_browser.py"]),
]


def run_kept(name: str, cmd: list[str]) -> int:
    """Run one bench, its standard output shown and kept in ``results/<name>.txt``; its exit code."""
    RESULTS.mkdir(exist_ok=True)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = []
    with subprocess.Popen([sys.executable, str(HERE / cmd[0]), *cmd[1:]], cwd=HERE.parent,
                          stdout=subprocess.PIPE, text=True, bufsize=1) as proc:
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    # the header says which command and when: the docs show it above the output
    header = f"# python benchmarks/{' '.join(cmd)}  ({started}, exit {proc.returncode})\n"
    (RESULTS / f"{name}.txt").write_text(header + "".join(lines), encoding="utf-8")
    return proc.returncode


def main() -> int:
    status = 0
    for name, title, cmd in BENCHES:
        print(f"\n##### {title}", flush=True)
        if not (HERE / cmd[0]).exists():
            print(f"(no {cmd[0]} yet)")
            continue
        status = status or run_kept(name, cmd)
    return status


if __name__ == "__main__":
    sys.exit(main())
