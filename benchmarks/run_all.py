"""`make bench`: every benchmark in one run, each printing its figures and ratios.

Machines here are shared and noisy: compare ratios within one run, not absolute times across runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = [
    ("modeling: what-if speed and backtest accuracy", ["bench_modeling.py"]),
    # the grid's refined simulation is kept (benchmarks/reference); the model is solved afresh and the
    # table saved where the docs' Benchmarks page renders it from (benchmarks/report_tables.py)
    ("zIIP/GCP dispatch: analytic model vs simulation grid",
     ["bench_dispatch.py", "--full", "--sim-from", "benchmarks/reference/dispatch_grid_sim.csv",
      "--save", "benchmarks/results/dispatch_grid.csv"]),
    ("zIIP/GCP dispatch off the grid: 16 LPARs, burst counts and ZIIPAWMT the model was not set on",
     ["bench_dispatch_holdout.py"]),
    ("zIIP/GCP dispatch beside other classes' work: 14 LPARs against their kept simulation",
     ["bench_dispatch_background.py", "--sim-from", "benchmarks/reference/dispatch_background_sim.csv",
      "--save", "benchmarks/results/dispatch_background.csv"]),
    ("zIIP/GCP dispatch along whole load curves (8 LPARs x 14 loads) against their kept simulation, beside the "
     "least worst error any curve that never falls with load can have",
     ["bench_dispatch_curves.py", "--sim-from", "benchmarks/reference/dispatch_curves_sim.csv",
      "--save", "benchmarks/results/dispatch_curves.csv"]),
    ("SMF decode throughput vs sha256sum, peak RSS (>= 200 MB, 72.3-heavy)", ["bench_smf_decode.py", "--mb", "200"]),
    ("kneecap ingest as a whole process vs sha256sum, peak RSS (200 MB, 70.1 with 48 logical CPUs per "
     "twenty 72.3, as many SMF 30 interval records as 72.3)",
     ["bench_smf_decode.py", "--mb", "200", "--mix", "lpar", "--ingest"]),
    ("cost growth: decode + marts on DuckDB and on Spark local[2] at 1, 10 and 100 LPAR-days of SMF",
     ["bench_scale.py"]),
    ("a WLM class from simulated SMF: response, knee and knee date vs the truth and M/M/c", ["bench_smf_class.py"]),
    ("app: page interaction latency (AppTest)", ["bench_app.py"]),
    ("desk in a real browser: first load, slider step to both charts redrawn (Playwright + Debian chromium; "
     "needs `make run` first)", ["bench_browser.py"]),
]


def main() -> int:
    status = 0
    for title, cmd in BENCHES:
        script = HERE / cmd[0]
        print(f"\n##### {title}", flush=True)
        if not script.exists():
            print(f"(no {cmd[0]} yet)")
            continue
        result = subprocess.run([sys.executable, str(script), *cmd[1:]], cwd=HERE.parent)
        status = status or result.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
