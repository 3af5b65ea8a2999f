"""MSU and the rolling four-hour average on a simulated SMF week with known truth.

A week of the simulated class ZCONSIM (tests/smf/simdays.py: 2 GCPs + 2 zIIPs, other classes as
background, load rising day by day) is written as binary SMF 70.1 + 72.3 with the synthetic machine's
capacity fields (100 MSU/h per busy GCP) and a SMF70LAC of the trailing four hours, read by kneecap's
decoder and SQL, and priced: per seed

* the largest error of the class's GCP and eligible-on-GCP MSU/h against the APPL% written;
* the largest difference of kneecap's R4HA from the SMF70LAC written (whole MSU: at most 0.5);
* the month's peak R4HA and LAC peak, the class's MSU and its eligible MSU on GCPs at the peak, what
  one more zIIP removes from the peak with its band, the forecast peak 30 days ahead;
* seconds to fit the class model and to answer;
* with ``--truth``: the peak R4HA the simulation itself reaches by the forecast's date (the same
  simulated days continued ``--horizon-days`` further, their LPAR MSU averaged the same way), and
  whether it lies in the forecast's band.

Run: ``.venv/bin/python benchmarks/bench_msu.py [--seeds 11 12 13] [--days 7] [--horizon-days 30]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kneecap import config, msu, msu_answer, policies  # noqa: E402
from kneecap.modeling.open_dispatch import OpenDispatchModel  # noqa: E402
from tests.smf import simdays  # noqa: E402


def _true_peak(seed: int, days: int) -> float:
    """The simulation's own peak R4HA over ``days`` (SCRT's hourly means of its complete windows)."""
    _, truth = simdays.simulated_days(days=days, seed=seed)
    per = truth.per_interval
    roll = msu.rolling_average(per["interval_start_at"], [truth.interval_s] * len(per), per["lpar_msu_per_h"])
    done = roll[roll["is_complete"]]
    return float(msu.hourly_average(done["interval_start_at"], done["value"]).max())


def run(seed: int, days: int, n_boot: int, params: config.Params, horizon_days: int = 30,
        truth_check: bool = False) -> dict[str, object]:
    records, truth = simdays.simulated_days(days=days, seed=seed)
    marts = simdays.published_marts(records)
    fct, intervals = marts["fct_measurements"], marts["fct_msu_intervals"]
    name = truth.config.class_name
    priced = msu.class_msu(fct[fct["workload"] == name], intervals).reset_index(drop=True)
    per = truth.per_interval
    rate = simdays.CAPACITY.msu_per_cpu_s
    gcp_err = float(np.max(np.abs(priced["msu_gcp_per_h"] - per["appl_cp_pct"] / 100 * 3600 * rate)))
    elig_err = float(np.max(np.abs(priced["msu_eligible_on_gcp_per_h"] - per["appl_iipcp_pct"] / 100 * 3600 * rate)))
    r4ha = msu.lpar_r4ha(intervals, truth.config.system_id)
    lac_err = float(r4ha.loc[r4ha["is_complete"], "r4ha_minus_lac_msu_per_h"].abs().max())
    started = time.perf_counter()
    model = OpenDispatchModel(n_boot=n_boot, seed=1).fit(fct[fct["workload"] == name].reset_index(drop=True))
    fit_s = time.perf_counter() - started
    started = time.perf_counter()
    ans = msu_answer.class_msu_answer(name, fct, intervals, model, growth_policy=policies.growth_policy(params),
                                      horizon_days=horizon_days)
    answer_s = time.perf_counter() - started
    extra: dict[str, object] = {}
    if truth_check:
        true = _true_peak(seed, days + horizon_days)
        extra = {"true_peak_at_forecast_date": true,
                 "true_in_band": bool(ans["msu_peak_r4ha_forecast_lo"] <= true <= ans["msu_peak_r4ha_forecast_hi"])}
    return {**extra, "seed": seed, "class_gcp_msu_max_err": gcp_err, "class_iipcp_msu_max_err": elig_err,
            "r4ha_vs_lac_max_diff": lac_err, "peak_r4ha": ans["msu_peak_r4ha"], "peak_lac": ans["msu_peak_lac"],
            "peak_hour": ans["msu_peak_hour"], "class_gcp_at_peak": ans["msu_class_gcp_at_peak"],
            "eligible_on_gcp_at_peak": ans["msu_eligible_on_gcp_at_peak"],
            "saved_one_ziip": ans["msu_saved_one_ziip"], "saved_lo": ans["msu_saved_one_ziip_lo"],
            "saved_hi": ans["msu_saved_one_ziip_hi"], "forecast_peak": ans["msu_peak_r4ha_forecast"],
            "forecast_lo": ans["msu_peak_r4ha_forecast_lo"], "forecast_hi": ans["msu_peak_r4ha_forecast_hi"],
            "forecast_date": ans["msu_forecast_date"], "fit_s": fit_s, "answer_s": answer_s, "note": ans["msu_note"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13])
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--n-boot", type=int, default=50, help="bootstrap refits of the class model (the band's draws)")
    ap.add_argument("--horizon-days", type=int, default=30, help="days ahead of the peak-R4HA forecast")
    ap.add_argument("--truth", action="store_true",
                    help="simulate the forecast's days too and compare (short horizons: the simulation's grid ends "
                         "at 95 %% of the pools' capacity)")
    args = ap.parse_args(argv)
    params = config.load_params(ROOT / "params.yaml")
    rows = [run(seed, args.days, args.n_boot, params, args.horizon_days, args.truth) for seed in args.seeds]
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 60):
        print(table.drop(columns="note").T.to_string())
    for row in rows:
        print(f"seed {row['seed']}: {row['note']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
