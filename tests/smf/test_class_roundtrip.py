"""Known truth through the whole SMF path: simulated days -> SMF bytes -> readers -> SQL -> class model.

Ten days of one z/OS Connect-like class on 2 GCPs + 2 zIIPs with other classes as background,
load rising day by day, answered by kneecap's dispatcher simulation (``tests/smf/simdays.py``) and
written as binary SMF 70.1 + 72.3 by the test-side writer. The model is fitted on days 1-6 and
judged on what it was not shown: days 7-10's peak intervals, the simulation's knee, and the day the
rising peak reaches that knee. Goals (issue: SMF per-class models): response MAPE <= 20 %, knee
within 15 %, knee date within 10 % of the time from the last fitted day to the true crossing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap import config, forecasting
from kneecap.modeling import choose_response_model
from kneecap.modeling.open import OpenMMcModel
from kneecap.modeling.select import _open_dispatch
from kneecap.policies import planner_policy
from kneecap.training import modeling_config
from tests.conftest import REPO
from tests.smf import simdays

TRAIN_DAYS = 6
PEAK_INTERVALS_PER_DAY = 8  # the two busiest hours of each day


@pytest.fixture(scope="module")
def days():
    records, truth = simdays.simulated_days()
    cls = simdays.class_rows(records, truth)
    train = cls[cls["day"] <= TRAIN_DAYS].drop(columns="day")
    later = cls[cls["day"] > TRAIN_DAYS]
    peaks = later.groupby("day", group_keys=False).apply(lambda g: g.nlargest(PEAK_INTERVALS_PER_DAY, "tps"))
    params = config.load_params(REPO / "params.yaml")
    choice = choose_response_model(train, modeling_config(params))
    return truth, train, peaks, choice, params


def _mape(actual, predicted) -> float:
    actual, predicted = np.asarray(actual, float), np.asarray(predicted, float)
    return float(100 * np.mean(np.abs(predicted - actual) / actual))


def test_the_class_gets_the_dispatch_model(days):
    truth, train, _, choice, _ = days
    assert choice.family == "open_dispatch"
    res = choice.results
    # measured from the 72.3 APPL%s: the simulation's demand and eligible share
    assert res.cpu_ms_per_tran == pytest.approx(truth.config.cpu_ms_per_tran, rel=0.01)
    assert res.ziip_eligible_fraction == pytest.approx(truth.config.ziip_eligible_fraction, abs=0.005)
    # from 70.1 LPAR busy minus the class: the background the simulation ran
    assert res.base["bg_gcp_busy_pct"] == pytest.approx(truth.config.bg_gcp_busy_pct, abs=2.0)
    assert res.base["bg_ziip_busy_pct"] == pytest.approx(truth.config.bg_ziip_busy_pct, abs=2.0)


def test_later_peak_intervals_within_20_percent_and_better_than_mmc(days):
    _, train, peaks, choice, _ = days
    assert peaks["tps"].max() > train["tps"].max()  # judged beyond the load it was fitted on
    predicted = choice.results.predict(peaks[["tps"]])["resp_ms"]
    error = _mape(peaks["resp_ms"], predicted)
    naive = _mape(peaks["resp_ms"], OpenMMcModel(n_boot=0).fit(train).predict(peaks[["tps"]])["resp_ms"])
    assert error <= 20.0
    assert error < naive


def test_knee_within_15_percent_of_the_simulation(days):
    truth, _, _, choice, params = days
    knee = choice.results.knee(k=params.train.knee_k)
    assert abs(knee.load / truth.knee_tps - 1) <= 0.15
    assert knee.load_lo <= knee.load <= knee.load_hi


def test_the_delay_samples_find_the_simulated_burst_count(days):
    truth, _, _, choice, _ = days
    res = choice.results
    assert res.eligible_bursts == truth.config.eligible_bursts
    # the samples point at how the eligible CPU is cut into dispatches: the simulated count is the
    # refits' most frequent and the weight by day leaves the neighbours a share (six days cannot
    # rule them out: modeling.base.structure_weights); one burst, far off, gets no refit
    counts = pd.Series(res.boot_params[:, 3].astype(int)).value_counts(normalize=True)
    assert counts.idxmax() == truth.config.eligible_bursts and counts.max() >= 0.4
    assert counts.get(1, 0.0) == 0.0
    assert any("zIIP delay samples of 576 interval(s)" in n for n in res.notes)


def test_the_cpu_delay_samples_check_the_gcp_side(days):
    """R723CCDE over R723CCUS times the GCP CPU per transaction is the simulation's GCP delay."""
    truth, train, _, choice, _ = days
    res = choice.results
    c = res.cpu_delay
    assert c["intervals"] == 576 and not c["flagged"]
    fitted = truth.per_interval[truth.per_interval["day"] <= TRAIN_DAYS]
    # Little's law: the simulation's time-average number in CPU delay over its tps, transaction-weighted
    true_ms = 1000 * fitted["n_gcp_delay"].sum() / fitted["tps"].sum()
    assert c["measured_ms_per_tran"] == pytest.approx(true_ms, rel=0.03)
    # the model's GCP waits: within 1 % of the simulation's on these days (9 % short while the GCP pool
    # took the mean of the class's 0.08 ms bursts and the other classes' 0.2 ms ones, issue #10)
    assert 0.8 <= c["ratio"] <= 1.25 and 0.8 <= c["peak_ratio"] <= 1.25
    assert any("CPU delay samples (R723CCDE) of 576 interval(s)" in n for n in res.notes)
    assert "CPU delay (R723CCDE)" in res.summary()


def test_cpu_delay_the_model_cannot_explain_is_flagged(days):
    """Three times the CPU delay samples (the class behind other work, say) contradict the model."""
    _, train, _, choice, params = days
    slow = train.assign(cpu_delay_samples=3 * train["cpu_delay_samples"])
    res = _open_dispatch(modeling_config(params), n_boot=0).fit(slow)
    assert res.cpu_delay["flagged"] and res.cpu_delay["ratio"] == pytest.approx(3 * choice.results.cpu_delay["ratio"])
    assert any(n.startswith("CPU delay samples contradict the model") and "optimistic" in n for n in res.notes)
    # a check, not fitted: the response model is the same
    assert res.delay_ms == choice.results.delay_ms and res.eligible_bursts == choice.results.eligible_bursts


def test_the_simulations_knee_lies_inside_the_knee_interval(days):
    # the pool rule's analytic knee is 1.5 % low against its simulation (2,416 against 2,453 tps);
    # the parameters' bootstrap alone left it out (a few tps wide); the band now carries the other
    # help rule (the intervals cannot tell them apart below the knee) and the model's own error
    truth, _, _, choice, params = days
    knee = choice.results.knee(k=params.train.knee_k)
    assert knee.load_lo <= truth.knee_tps <= knee.load_hi
    assert set(knee.by_help_rule) == {"pool", "burst"}


def test_the_help_rules_share_the_weight_where_the_intervals_cannot_tell_them_apart(days):
    # up to day 6 the zIIPs never fall behind (spill ~0): both rules fit the intervals alike, so
    # neither may claim the band, however far apart they put the knee
    _, _, _, choice, _ = days
    by_rule = pd.DataFrame(choice.results.structures).groupby("help_rule")["weight"].sum()
    assert by_rule["pool"] > 0.2 and by_rule["burst"] > 0.2
    assert "Akaike weights" in choice.results.structure_sentence()


def _knee_date(days):
    truth, train, _, choice, params = days
    res = choice.results
    knee = res.knee(k=params.train.knee_k)
    grown = forecasting.class_growth(res, knee_tps=knee.load, knee_tps_lo=knee.load_lo,
                                     knee_tps_hi=knee.load_hi, knee_tps_draws=knee.draws,
                                     alpha=res.alpha)
    last_fitted = train["interval_start_at"].max().normalize()
    return grown, pd.Timestamp(truth.knee_date), last_fitted


def test_the_forecast_prints_the_knee_day_with_its_band(days):
    truth, _, _, choice, params = days
    grown, true_day, last_fitted = _knee_date(days)
    assert grown["date_knee_lo"] <= grown["date_knee"] <= grown["date_knee_hi"]
    # the first day whose forecast peak reaches the knee, within two days of the first day whose
    # simulated peak reached the simulation's knee, a week after the last fitted day
    assert grown["date_knee"] > last_fitted and abs((grown["date_knee"] - true_day).days) <= 2
    row = forecasting.forecast_scenario(forecasting.WorkloadModels(truth.config.class_name, choice.results),
                                        {"workload": truth.config.class_name}, planner_policy(params))
    assert row["date_knee"] == str(grown["date_knee"].date())
    assert row["knee_already"] is False and row["peak_tps_last"] < row["knee_tps"]


def test_the_true_knee_day_lies_inside_the_knee_date_range(days):
    # the point answers the structure the intervals weigh most, which they cannot tell apart here
    # (the burst rule's knee, 6 % under the pool rule's simulated one, a day early on a 7-day lead);
    # what a planner acts on, the range, must hold the simulated crossing
    grown, true_day, _ = _knee_date(days)
    assert grown["date_knee_lo"] <= true_day <= grown["date_knee_hi"], (grown["date_knee_lo"], true_day)
