"""The open dispatch model of one WLM class on RMF intervals: recovery, physics, knee, filters."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap.modeling import ModelError, ModelingConfig, PlannerPolicy, choose_response_model, plan_ziip
from kneecap.modeling.dispatch import Dispatch, solve_open_rows
from kneecap.modeling.open_dispatch import KNEE_DRAWS_PER_REFIT, OpenDispatchModel, demand_and_eligibility, knee_draws
from kneecap.modeling.serialise import dumps, loads

TRUE = {"cpu_ms_per_tran": 0.8, "ziip_eligible_fraction": 0.9, "delay_ms": 1.0, "eligible_bursts": 4}


def intervals(days: int = 6, *, noise: float = 0.03, seed: int = 1, bg_gcp: float = 30.0,
              bg_ziip: float = 10.0, peak_tps: float = 1100.0, cpu_samples: float | None = None) -> pd.DataFrame:
    """15-minute intervals of a class on 2 GCPs + 2 zIIPs answered by the dispatch model itself,
    with a daily profile, growth from day to day, other classes' busy varying by interval and
    lognormal scatter on response.

    ``cpu_samples`` adds the 72.3 CPU using / delay samples (WLM's 250 ms sampling, Poisson): the
    using ones from APPL% CP, the delay ones from the model's own GCP waits times ``cpu_samples``
    (1: the model's truth; another factor: a class whose CPU delay the model does not explain).
    """
    rng = np.random.default_rng(seed)
    n = days * 96
    start = pd.Timestamp("2026-03-02")
    at = pd.date_range(start, periods=n, freq="15min")
    hour = at.hour + at.minute / 60
    profile = 0.3 + 0.7 * np.sin(np.pi * np.clip((hour - 6) / 14, 0, 1))
    day = np.arange(n) // 96
    tps = peak_tps * (0.7 + 0.3 * day / max(days - 1, 1)) * profile
    bg_g = bg_gcp * (0.8 + 0.4 * rng.random(n))
    bg_z = bg_ziip * (0.8 + 0.4 * rng.random(n))
    d, f = TRUE["cpu_ms_per_tran"], TRUE["ziip_eligible_fraction"]
    sol = solve_open_rows(tps, d, f, n_gcp=np.full(n, 2), n_ziip=np.full(n, 2), bg_gcp_busy_pct=bg_g,
                          bg_ziip_busy_pct=bg_z, dispatch=Dispatch(1, eligible_bursts=TRUE["eligible_bursts"]))
    resp = (TRUE["delay_ms"] + sol.resp_ms[0]) * np.exp(rng.normal(0, noise, n))
    spill = sol.spill_fraction[0]
    cpu = tps * d / 10.0
    iip, iipcp = cpu * f * (1 - spill), cpu * f * spill
    cp = cpu - iip
    samples = {}
    if cpu_samples is not None:
        per_state = 900.0 / 0.25  # samples per unit time-average count in a 15-minute interval
        samples = {"cpu_using_samples": rng.poisson(cp / 100.0 * per_state).astype(float),
                   "cpu_delay_samples": rng.poisson(cpu_samples * tps * sol.gcp_wait_ms[0] / 1000.0
                                                    * per_state).astype(float)}
    return pd.DataFrame({**samples, "workload": "ZCON", "tps": tps, "resp_ms": resp, "n_gcp": 2.0, "n_ziip": 2.0,
                         "cpu_gcp_pct": cp, "cpu_ziip_pct": iip, "ziip_eligible_on_gcp_pct": iipcp,
                         "interval_s": 900.0, "lpar_gcp_busy_pct": bg_g + cp / 2,
                         "lpar_ziip_busy_pct": bg_z + iip / 2, "interval_start_at": at})


@pytest.fixture(scope="module")
def fitted():
    table = intervals()
    return table, OpenDispatchModel(n_boot=40, seed=3).fit(table)


def test_recovers_the_generating_class(fitted):
    table, res = fitted
    assert res.cpu_ms_per_tran == pytest.approx(TRUE["cpu_ms_per_tran"], rel=1e-9)
    assert res.ziip_eligible_fraction == pytest.approx(TRUE["ziip_eligible_fraction"], rel=1e-9)
    assert res.delay_ms == pytest.approx(TRUE["delay_ms"], rel=0.03)
    assert res.eligible_bursts == TRUE["eligible_bursts"]
    assert res.train_mape["resp_ms"] < 4.0  # the 3 % scatter, no more
    # the other classes at the class's peak come from 70.1 minus the class's own APPL%
    assert res.base["bg_gcp_busy_pct"] == pytest.approx(30.0, abs=3.0)
    assert res.base["bg_ziip_busy_pct"] == pytest.approx(10.0, abs=1.5)


def test_held_out_days_are_predicted_from_their_own_lpar_state():
    table = intervals(days=8)
    train = table[table["interval_start_at"] < "2026-03-08"]
    test = table[table["interval_start_at"] >= "2026-03-08"]
    res = OpenDispatchModel(n_boot=0).fit(train)
    pred = res.predict(test.drop(columns=["resp_ms"]).assign(
        bg_gcp_busy_pct=test["lpar_gcp_busy_pct"] - test["cpu_gcp_pct"] / 2,
        bg_ziip_busy_pct=test["lpar_ziip_busy_pct"] - test["cpu_ziip_pct"] / 2))
    err = np.abs(pred["resp_ms"] - test["resp_ms"]) / test["resp_ms"]
    assert 100 * err.mean() < 4.0
    assert test["tps"].max() > train["tps"].max()  # the held-out days are busier than any fitted


def test_cpu_delay_samples_check_the_gcp_side_without_moving_the_fit(fitted):
    """The 72.3 CPU delay samples (R723CCDE) reach the results, the notes and the summary: a check."""
    table, res = fitted
    assert res.cpu_delay == {} and not any("CPU delay" in n for n in res.notes)  # no samples, no check
    with_samples = intervals(cpu_samples=1.0)
    checked = OpenDispatchModel(n_boot=0, seed=3).fit(with_samples)
    c = checked.cpu_delay
    assert c["intervals"] == len(table) and not c["flagged"]
    # Little's law both sides: the model's GCP wait per transaction is what the samples measure
    assert c["ratio"] == pytest.approx(1.0, abs=0.05) and c["peak_ratio"] == pytest.approx(1.0, abs=0.1)
    assert c["measured_ms_per_tran"] == pytest.approx(c["model_ms_per_tran"], rel=0.05)
    assert 0 < c["share_of_resp_pct"] < 5
    assert any(n.startswith(f"CPU delay samples (R723CCDE) of {len(table)} interval(s)") for n in checked.notes)
    assert "CPU delay (R723CCDE)" in checked.summary() and "a check, not fitted" in checked.summary()
    # not fitted: the same parameters as without the samples
    plain = OpenDispatchModel(n_boot=0, seed=3).fit(intervals())
    assert (checked.delay_ms, checked.eligible_bursts) == (plain.delay_ms, plain.eligible_bursts)
    back = loads(dumps(checked))
    assert back.cpu_delay == c
    old = checked.to_dict()
    old.pop("cpu_delay")  # a document stored before the check reads back without it
    assert type(checked).from_dict(old).cpu_delay == {}


@pytest.mark.parametrize(("factor", "says"), [(4.0, "optimistic"), (0.2, "pessimistic")])
def test_a_class_whose_cpu_delay_contradicts_the_model_is_flagged(factor, says):
    res = OpenDispatchModel(n_boot=0).fit(intervals(days=2, cpu_samples=factor))
    assert res.cpu_delay["flagged"]
    assert res.cpu_delay["ratio"] == pytest.approx(factor, rel=0.1)
    flag = [n for n in res.notes if n.startswith("CPU delay samples contradict the model")]
    assert len(flag) == 1 and says in flag[0]
    assert "CONTRADICTS the model" in res.summary()


def test_a_handful_of_cpu_delay_samples_flags_nothing():
    table = intervals(days=1, cpu_samples=4.0)
    # one sample in 500 kept (a unit sampled every 2 minutes): tens of samples, whose Poisson
    # scatter says nothing even at a factor 4
    rng = np.random.default_rng(5)
    table = table.assign(**{c: rng.binomial(table[c].astype(int), 0.002).astype(float)
                            for c in ("cpu_using_samples", "cpu_delay_samples")})
    res = OpenDispatchModel(n_boot=0).fit(table)
    assert max(res.cpu_delay["measured_samples"], res.cpu_delay["model_samples"]) < 100
    assert not res.cpu_delay["flagged"] and not any("contradict" in n for n in res.notes)


def test_demand_is_ibms_cost_formula_over_the_history(fitted):
    table, _ = fitted
    cpu_s = (table["cpu_gcp_pct"] + table["cpu_ziip_pct"]) / 100 * table["interval_s"]
    ended = table["tps"] * table["interval_s"]
    model = OpenDispatchModel(n_boot=0)
    rows, _ = model.select_rows(table)
    from kneecap.modeling._open_dispatch_intervals import read_intervals
    d, f = demand_and_eligibility(read_intervals(table, rows)[0])
    assert d == pytest.approx(1000 * cpu_s.sum() / ended.sum(), rel=1e-12)
    elig = (table["cpu_ziip_pct"] + table["ziip_eligible_on_gcp_pct"]) * table["interval_s"]
    assert f == pytest.approx(elig.sum() / ((table["cpu_gcp_pct"] + table["cpu_ziip_pct"]) * table["interval_s"]).sum())


def test_knee_is_where_response_reaches_k_times_unloaded(fitted):
    _, res = fitted
    knee = res.knee(k=3.0)
    assert knee.load_lo <= knee.load <= knee.load_hi
    assert 0 < knee.load < knee.max_tps
    at = res.predict(pd.DataFrame({"tps": [knee.load * 0.995, knee.load * 1.005]}))
    assert at["resp_ms"].iloc[0] < 3 * knee.unloaded_resp_ms < at["resp_ms"].iloc[1]
    # a zIIP more moves the knee of this zIIP-bound class out, more load from the other classes
    # moves it in; a GCP more raises saturation but lowers the unloaded response too, so the
    # k-times point of a class the zIIPs bind may even come a little earlier
    assert res.knee(n_ziip=3).load > knee.load
    assert res.knee(bg_load_factor=1.5).load < knee.load
    assert res.knee(n_gcp=3).max_tps >= knee.max_tps
    assert res.knee(n_gcp=3).unloaded_resp_ms < knee.unloaded_resp_ms


def test_other_classes_are_engines_spread_over_the_configuration(fitted):
    _, res = fitted
    base = res.lpar(pd.DataFrame({"tps": [1.0]}))
    more = res.lpar(pd.DataFrame({"tps": [1.0], "n_gcp": [4], "n_ziip": [4]}))
    assert more["bg_gcp_busy_pct"][0] == pytest.approx(base["bg_gcp_busy_pct"][0] / 2)
    assert more["bg_ziip_busy_pct"][0] == pytest.approx(base["bg_ziip_busy_pct"][0] / 2)
    none = res.lpar(pd.DataFrame({"tps": [1.0], "n_ziip": [0]}))
    # without zIIPs their eligible work runs on the GCPs
    assert none["bg_ziip_busy_pct"][0] == 0.0
    engines = (base["bg_gcp_busy_pct"][0] * 2 + base["bg_ziip_busy_pct"][0] * 2) / 100
    assert none["bg_gcp_busy_pct"][0] == pytest.approx(100 * engines / 2)
    grown = res.lpar(pd.DataFrame({"tps": [1.0], "bg_load_factor": [2.0]}))
    assert grown["bg_gcp_busy_pct"][0] == pytest.approx(2 * base["bg_gcp_busy_pct"][0])


@settings(max_examples=60, deadline=None)
@given(st.floats(0.02, 0.98), st.integers(1, 6), st.integers(1, 6), st.floats(0.0, 2.0))
def test_more_engines_never_worse_more_load_never_better(fitted, share, n_gcp, n_ziip, bg_factor):
    _, res = fitted
    cfg = {"n_gcp": n_gcp, "n_ziip": n_ziip, "bg_load_factor": bg_factor}
    top = res.max_tps(**cfg)
    if top <= 0:
        return
    x = share * top

    def r(**kw):
        return float(res.predict(pd.DataFrame([{**cfg, "tps": x, **kw}]), max_draws=0)["resp_ms"].iloc[0])

    here = r()
    assert r(n_gcp=n_gcp + 1) <= here * (1 + 1e-9)
    lp = res.lpar(pd.DataFrame([cfg]))
    lpar = res.dispatch(**{k: float(v[0]) for k, v in lp.items()})
    # a zIIP added may predict worse only where GCPs help a zIIP pool that cannot keep up (the
    # simulation agrees: tests/modeling/test_dispatch.py)
    assert (r(n_ziip=n_ziip + 1) <= here * (1 + 1e-9)
            or lpar.ziips_fall_behind(x, res.cpu_ms_per_tran, res.ziip_eligible_fraction))
    assert r(tps=x * 1.05) >= here * (1 - 1e-9)
    # the other classes' zIIP work takes zIIP capacity: where the zIIPs fall behind, less of it
    # is like fewer zIIPs (above)
    assert (r(bg_load_factor=bg_factor + 0.1) >= here * (1 - 1e-9)
            or lpar.ziips_fall_behind(x, res.cpu_ms_per_tran, res.ziip_eligible_fraction))


def test_filters_and_errors_name_what_was_left_out():
    table = intervals(days=2)
    table.loc[:9, "tps"] = 0.05  # 45 transactions in 900 s
    model = OpenDispatchModel(n_boot=0, min_transactions=100, hours=(8, 18))
    res = model.fit(table)
    assert any("fewer than 100 transactions" in n for n in res.notes)
    assert any("outside hours 8-18" in n for n in res.notes)
    assert res.n_train == int(((table["interval_start_at"].dt.hour >= 8)
                               & (table["interval_start_at"].dt.hour < 18)).sum())
    with pytest.raises(ModelError, match="at least 3 intervals"):
        OpenDispatchModel().fit(table.iloc[:2])
    no_lpar = intervals(days=1).drop(columns=["lpar_gcp_busy_pct", "lpar_ziip_busy_pct"])
    res = OpenDispatchModel(n_boot=0).fit(no_lpar)
    assert any("without SMF 70.1" in n for n in res.notes) and res.base["bg_gcp_busy_pct"] == 0.0


def test_the_selector_uses_measured_cpu_when_there_is_some(fitted):
    table, _ = fitted
    cfg = ModelingConfig(n_boot=0)
    choice = choose_response_model(table, cfg)
    assert choice.family == "open_dispatch"
    assert set(choice.competitors["family"]) == {"open_dispatch", "open_mmc", "open_mmc_capacity"}
    held_out = choice.competitors.set_index("family")["holdout_mape_pct"]
    assert held_out["open_dispatch"] < min(held_out["open_mmc"], held_out["open_mmc_capacity"])
    bare = table[["tps", "resp_ms"]]
    # without CPU columns an M/M/c family answers (here the one with its own capacity, by 0.02 points)
    assert choose_response_model(bare, cfg).family in {"open_mmc", "open_mmc_capacity"}


def test_planner_answers_for_a_class_at_a_target_tps(fitted):
    _, res = fitted
    plan = plan_ziip(res, tps=2500.0, n_gcp=2, slo_resp_ms=3.0, policy=PlannerPolicy(max_n_ziip=6))
    assert plan.n_ziip is not None and plan.n_ziip >= 3
    row = plan.table.set_index("n_ziip").loc[plan.n_ziip]
    assert row["resp_ms"] <= 3.0 and row["ziip_busy_pct"] <= 80.0
    # an SLO under the unloaded response has no engine count
    low = plan_ziip(res, tps=2500.0, n_gcp=2, slo_resp_ms=1.0)
    assert low.n_ziip is None and "unloaded response" in low.reason


def test_round_trips_as_a_json_document(fitted):
    _, res = fitted
    back = loads(dumps(res))
    frame = pd.DataFrame({"tps": [500.0, 2000.0], "n_ziip": [2, 3]})
    pd.testing.assert_frame_equal(back.predict(frame), res.predict(frame))
    assert back.knee() == res.knee()


def test_a_class_that_never_ends_enough_transactions_gets_no_response_model():
    """A batch class (a few jobs an interval, 3-minute responses) has no queueing to model."""
    batch = intervals(days=2).assign(tps=0.02, resp_ms=180_000.0)
    with pytest.raises(ModelError, match="fewer than 3 intervals ended 100 transactions"):
        choose_response_model(batch, ModelingConfig(n_boot=0))


def test_knee_draws_keep_the_interval_and_the_structures_humps():
    rng = np.random.default_rng(3)
    # one structure: every refit near 1,000 tps, widened 10 % down and 12 % up
    knees = 1000.0 * np.exp(rng.normal(0.0, 0.01, 400))
    draws = np.array(knee_draws(knees, knees / 1.10, knees * 1.12, 0.05, seed=1))
    assert len(draws) == 400 * KNEE_DRAWS_PER_REFIT and (draws > 0).all()
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert lo == pytest.approx(1000 / 1.10, rel=0.02) and hi == pytest.approx(1000 * 1.12, rel=0.02)
    # two structures the history cannot tell apart, 3 in 4 refits at 3,900 tps and 1 in 4 at 4,850: a
    # quarter of the draws stay by the later knee (a log-normal through the interval's ends around the
    # best structure's 3,900 would leave it about 5 %)
    knees = np.r_[np.full(300, 3900.0), np.full(100, 4850.0)]
    draws = np.array(knee_draws(knees, knees / 1.04, knees * 1.04, 0.05, seed=1))
    assert np.mean(draws > 4500) == pytest.approx(0.25, abs=0.02)
    # refits that found no crossing give no draw; none at all, an empty sample
    assert len(knee_draws(np.array([np.nan, 1000.0]), np.array([900.0, 900.0]), np.array([1100.0, 1100.0]),
                          0.05, seed=1)) == KNEE_DRAWS_PER_REFIT
    assert knee_draws(np.array([np.nan]), np.array([np.nan]), np.array([np.nan]), 0.05, seed=1) == ()


def test_the_knee_carries_its_draws_for_a_date(fitted):
    _, res = fitted
    knee = res.knee(k=3.0)
    draws = np.array(knee.draws)
    assert len(draws) == len(res.boot_params) * KNEE_DRAWS_PER_REFIT
    lo, hi = np.quantile(draws, [0.025, 0.975])
    assert lo == pytest.approx(knee.load_lo, rel=0.03) and hi == pytest.approx(knee.load_hi, rel=0.03)
