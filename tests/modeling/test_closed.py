"""Closed MVA model on the seed 004 table (IBM z/OS Connect, 2 GCPs + 2 zIIPs, Z = 200 ms)."""

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling import (
    ClosedMVAModel,
    ClosedMVAResults,
    ModelError,
    PlannerPolicy,
    plan_ziip,
    results_from_dict,
    years_to_reach,
)
from kneecap.modeling.ziip import plan_answer

# seed 004, Table 1 and Table 2 (004_30fd347cf9df2afe.txt): TPS as printed with "~"
TABLE1 = pd.DataFrame({
    "clients": [100, 200, 300, 400, 500], "tps": [500, 1000, 1500, 1960, 2420],
    "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0,
})
THIRD_ZIIP = pd.DataFrame({"clients": [500], "n_gcp": [2], "n_ziip": [3], "think_time_ms": [200.0],
                           "tps": [2480], "resp_ms": [1.63]})


@pytest.fixture(scope="module")
def fitted():
    return ClosedMVAModel(n_boot=40, seed=7).fit(TABLE1)


def test_fit_tracks_the_measured_curve(fitted):
    pred = fitted.predict(TABLE1)
    # throughput is pinned by Little's law: within 2% everywhere
    np.testing.assert_allclose(pred["tps"], TABLE1["tps"], rtol=0.02)
    # response: the one-station shape cannot follow 1.06 -> 1.38 ms and the jump to 3.32 at once;
    # the in-sample error stays below 35% per point
    assert (np.abs(pred["resp_ms"] / TABLE1["resp_ms"] - 1) < 0.35).all()
    assert (pred["resp_ms_lo"] <= pred["resp_ms"]).all() and (pred["resp_ms"] <= pred["resp_ms_hi"]).all()


def test_third_ziip_prediction_matches_ibm(fitted):
    # IBM measured ~2480 TPS and 1.63 ms with a third zIIP (Table 2); not used in the fit
    pred = fitted.predict(THIRD_ZIIP)
    np.testing.assert_allclose(pred["tps"], 2480, rtol=0.01)
    np.testing.assert_allclose(pred["resp_ms"], 1.63, rtol=0.25)


def test_a_rows_band_does_not_depend_on_the_other_rows_asked_for(fitted):
    # the planner predicts n_ziip = 1..4 in one frame, the what-if page one point: same numbers
    alone = fitted.predict(THIRD_ZIIP.drop(columns=["tps", "resp_ms"]))
    table = fitted.predict(pd.DataFrame({"clients": 500, "n_gcp": 2, "n_ziip": [1, 2, 3, 4],
                                         "think_time_ms": 200.0}))
    cols = ["resp_ms", "resp_ms_lo", "resp_ms_hi", "tps_lo", "tps_hi", "ziip_eligible_on_gcp_share_pct_hi"]
    np.testing.assert_allclose(table.loc[2, cols].to_numpy(float), alone.loc[0, cols].to_numpy(float), rtol=1e-12)


def test_knee_lands_between_measured_break_and_saturation(fitted):
    knee = fitted.knee(n_gcp=2, n_ziip=2, think_time_ms=200.0, k=3.0)
    # N* = (D + R0 + Z) / D_max; with GCP help the two pools saturate together, so
    # D_max = D / (n_gcp + n_ziip) (Kleinrock's bound for the pooled engines)
    expected = (fitted.cpu_ms_per_tran + fitted.delay_ms + 200.0) / (fitted.cpu_ms_per_tran / 4)
    np.testing.assert_allclose(knee.saturation, expected, rtol=1e-12)
    assert knee.saturation_lo <= knee.saturation <= knee.saturation_hi
    # the measured curve turns up between 300 and 500 clients (seed 004 Table 1)
    assert 300 < knee.load < 500 < knee.saturation


@pytest.mark.parametrize("n_gcp,n_ziip,think,k", [(2, 2, 200.0, 3.0), (2, 1, 200.0, 3.0), (8, 1, 50.0, 5.0),
                                                    (1, 0, 0.0, 2.0), (2, 4, 1000.0, 10.0)])
def test_the_knee_solve_stops_at_the_bound_without_moving_any_draws_knee(fitted, n_gcp, n_ziip, think, k):
    # the knee solves only to (k (D + R0) + Z) / D_max; every draw's crossing must be the one a
    # solve far past saturation finds
    knee = fitted.knee(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think, k=k)
    thetas = fitted._thetas()
    long = fitted._solve_all(n_gcp, n_ziip, think, int(3 * knee.saturation_hi) + 50)
    above = long.resp_ms > k * long.resp_ms[:, :1]
    assert above.any(axis=1).all()
    crossings = above.argmax(axis=1) + 1.0
    assert knee.load == crossings[0]
    lo_q, hi_q = fitted.alpha / 2, 1 - fitted.alpha / 2
    assert knee.load_lo == np.quantile(crossings[1:], lo_q)
    assert knee.load_hi == np.quantile(crossings[1:], hi_q)
    assert len(thetas) == len(crossings)



def test_the_knee_curve_and_point_of_one_think_time_share_one_solve(fitted, monkeypatch):
    # the desk asks for the knee (told how far the curve goes), the curve and the what-if point
    # of every new think time: one solve, each draw only until it has crossed, same numbers as
    # each asked for alone
    from kneecap.modeling import closed

    fresh = [replace(fitted, _cache={}) for _ in range(4)]
    calls = []
    real = closed.solve_closed
    monkeypatch.setattr(closed, "solve_closed", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    point = pd.DataFrame({"clients": [450], "n_gcp": [2], "n_ziip": [2], "think_time_ms": [330.0]})
    knee = fresh[0].knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=3.0, solve_to=650)
    curve = fresh[0].curve(n_gcp=2, n_ziip=2, think_time_ms=330.0, max_load=650, points=80)
    at = fresh[0].predict(point)
    assert len(calls) == 1 and calls[0]["stop_ratio"] == 3.0 and calls[0]["n_min"] == 650
    assert knee == fresh[1].knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=3.0)
    pd.testing.assert_frame_equal(curve, fresh[2].curve(n_gcp=2, n_ziip=2, think_time_ms=330.0, max_load=650,
                                                        points=80), check_exact=True)
    pd.testing.assert_frame_equal(at, fresh[3].predict(point), check_exact=True)
    # a curve drawn further re-solves once, and keeps the knee's crossings: the knee asks for none
    fresh[0].curve(n_gcp=2, n_ziip=2, think_time_ms=330.0, max_load=1500, points=80)
    assert fresh[0].knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=3.0) == knee
    assert len(calls) == 5
    # a larger k solves past the draws stopped at 3x, a smaller one finds its crossings before them
    assert fresh[0].knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=5.0) == \
        replace(fitted, _cache={}).knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=5.0)
    assert fresh[0].knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=2.0) == \
        replace(fitted, _cache={}).knee(n_gcp=2, n_ziip=2, think_time_ms=330.0, k=2.0)


def test_a_fitted_model_keeps_only_its_latest_solves(fitted, monkeypatch):
    # each solve of 200 draws holds megabytes: a desk stepping through think times must not keep
    # them all, but the configuration just solved still serves its curve without solving again
    from kneecap.modeling import closed

    model = replace(fitted, _cache={})
    calls = []
    real = closed.solve_closed
    monkeypatch.setattr(closed, "solve_closed", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    thinks = [300.0 + 10 * i for i in range(closed.SOLVES_KEPT + 3)]
    for think in thinks:
        model.knee(n_gcp=2, n_ziip=2, think_time_ms=think, k=3.0, solve_to=100)
    assert len(model._cache) == closed.SOLVES_KEPT
    assert {key[2] for key in model._cache} == set(thinks[-closed.SOLVES_KEPT:])
    model.curve(n_gcp=2, n_ziip=2, think_time_ms=thinks[-1], max_load=100, points=10)
    assert len(calls) == len(thinks)
    model.curve(n_gcp=2, n_ziip=2, think_time_ms=thinks[0], max_load=100, points=10)
    assert len(calls) == len(thinks) + 1


def test_the_structures_knees_are_solved_once_per_configuration(monkeypatch):
    # kneecap forecast asks every scenario of one configuration for the structures' knees: the
    # first solves each drawn structure, the rest reuse it (a copy: the caller may change it)
    from kneecap.modeling import _closed_metrics

    res = ClosedMVAModel(n_boot=10, seed=7, help_rules=("pool", "burst"),
                         burst_options=(2, 3, 4)).fit(TABLE1)
    calls = []
    real = _closed_metrics.solve_closed
    monkeypatch.setattr(_closed_metrics, "solve_closed", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    first = res.knee_by_structure(n_gcp=2, n_ziip=2, think_time_ms=200.0, k=3.0)
    solved = len(calls)
    assert solved == len(first) >= 2 and all(100 < x < 1000 for x in first.values()), first
    first.clear()
    again = res.knee_by_structure(n_gcp=2, n_ziip=2, think_time_ms=200.0, k=3.0)
    assert len(calls) == solved and again and again == replace(res).knee_by_structure(
        n_gcp=2, n_ziip=2, think_time_ms=200.0, k=3.0)  # a copy of the fit solves afresh, to the same knees
    assert len(calls) == 2 * solved
    res.knee_by_structure(n_gcp=2, n_ziip=3, think_time_ms=200.0, k=3.0)
    res.knee_by_structure(n_gcp=2, n_ziip=2, think_time_ms=200.0, k=2.0)
    assert len(calls) == 4 * solved


def test_planner_answers_the_seed_004_questions(fitted):
    # IBM: 2 zIIPs are fine at 300 clients (1.38 ms); 500 clients needed a third (1.63 ms)
    policy = PlannerPolicy(max_ziip_busy_pct=80, max_spill_pct=10, max_n_ziip=6)
    at_500 = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0, policy=policy)
    at_300 = plan_ziip(fitted, clients=300, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0, policy=policy)
    assert at_500.n_ziip == 3 and at_300.n_ziip == 2
    assert at_500.n_gcp_recommended == 2 and at_500.added_gcp == 0
    row = at_500.table.set_index("n_ziip").loc[2]
    # two zIIPs at 500 clients run past the busy cap and miss the SLO (IBM: 5.03 ms)
    assert row["ziip_busy_pct"] > 80 and not row["meets_slo"]
    assert "3 zIIP(s)" in at_500.reason
    # as the desk shows it: the same answer, each judged mix's verdict in words beside its rules
    shown = plan_answer(at_500, 2.0, policy)
    assert (shown["n_ziip"], shown["n_gcp"], shown["reason"], shown["margin_ms"]) == \
        (3, 2, at_500.reason, at_500.margin_ms)
    verdicts = shown["table"].set_index("n_ziip")["verdict"]
    assert verdicts.loc[2].startswith("misses the SLO") and "zIIP busy" in verdicts.loc[2]
    assert verdicts.loc[3].startswith("meets the SLO")
    assert "verdict" not in at_500.table  # the plan's own table is left as it was


def _numbers(sentence: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", sentence)]


def test_planner_names_the_busy_policy_when_it_binds(fitted):
    # a 6 ms SLO two zIIPs meet at 500 clients (IBM measured 5.03 ms) while running past the 80 % cap
    policy = PlannerPolicy(max_ziip_busy_pct=80, max_spill_pct=10, max_n_ziip=6)
    plan = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=6.0, policy=policy)
    fewer = plan.table.set_index("n_ziip").loc[plan.n_ziip - 1]
    assert fewer["meets_slo"] and fewer["failed_rules"] == "ziip_busy"
    assert plan.binding_rule == "ziip_busy"
    assert re.fullmatch(r"\d zIIPs meet the SLO \([\d.]+ ms\) but run \d+\.\d % zIIP busy \(policy <= 80 %\): "
                        r"\d recommended", plan.binding_sentence), plan.binding_sentence
    n_fewer, resp, busy, cap, n = _numbers(plan.binding_sentence)
    assert (n_fewer, n, cap) == (plan.n_ziip - 1, plan.n_ziip, policy.max_ziip_busy_pct)
    assert resp == pytest.approx(fewer["resp_ms"], rel=5e-3)  # printed to 3 digits
    assert busy == pytest.approx(fewer["ziip_busy_pct"], abs=0.05)
    assert plan.to_dict()["binding_rule"] == "ziip_busy"
    assert plan.to_dict()["binding_sentence"] == plan.binding_sentence


def test_planner_sentence_agrees_with_one_ziip_and_names_every_failed_rule(fitted):
    # at 300 clients two zIIPs pass; one runs past both policy caps while meeting a 20 ms SLO
    plan = plan_ziip(fitted, clients=300, think_time_ms=200, n_gcp=2, slo_resp_ms=20.0,
                     policy=PlannerPolicy(max_n_ziip=6))
    one = plan.table.set_index("n_ziip").loc[1]
    assert plan.n_ziip == 2 and plan.binding_rule == "ziip_busy, eligible_on_gcp" == one["failed_rules"]
    assert plan.binding_sentence == (
        f"1 zIIP meets the SLO ({one['resp_ms']:.3g} ms) but runs {one['ziip_busy_pct']:.1f} % zIIP busy "
        f"(policy <= 80 %) and puts {one['ziip_eligible_on_gcp_share_pct']:.1f} % of eligible work on GCPs "
        "(policy <= 10 %): 2 recommended")


def test_planner_names_the_slo_when_it_binds(fitted):
    # no policy caps: only the SLO can turn a mix away
    policy = PlannerPolicy(max_ziip_busy_pct=None, max_spill_pct=None, max_n_ziip=6)
    plan = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0, policy=policy)
    fewer = plan.table.set_index("n_ziip").loc[plan.n_ziip - 1]
    assert plan.binding_rule == "slo" and fewer["failed_rules"] == "slo"
    n_fewer, resp, slo, n = _numbers(plan.binding_sentence)
    assert plan.binding_sentence.startswith(f"{plan.n_ziip - 1} zIIPs miss the SLO (")
    assert (n_fewer, slo, n) == (plan.n_ziip - 1, 2.0, plan.n_ziip)
    assert resp == pytest.approx(fewer["resp_ms"], rel=5e-3) and resp > 2.0
    # with the shipped caps two zIIPs fail both: both are named
    both = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0,
                     policy=PlannerPolicy(max_ziip_busy_pct=80, max_spill_pct=10, max_n_ziip=6))
    assert both.binding_rule == "slo, ziip_busy"
    assert " miss the SLO (" in both.binding_sentence and " and run " in both.binding_sentence


def test_planner_names_what_fails_when_nothing_passes(fitted):
    strict = PlannerPolicy(max_ziip_busy_pct=1.0, max_spill_pct=None, max_n_ziip=4)
    plan = plan_ziip(fitted, clients=700, think_time_ms=200, n_gcp=1, slo_resp_ms=1.5, policy=strict)
    assert plan.n_ziip is None and plan.binding_rule == "ziip_busy"
    meeting = plan.table[plan.table["meets_slo"]].iloc[0]  # the fewest zIIPs meeting the SLO
    n, resp, busy, cap = _numbers(plan.binding_sentence)[:4]
    assert (n, cap) == (meeting["n_ziip"], 1.0)
    assert resp == pytest.approx(meeting["resp_ms"], rel=5e-3) and busy == pytest.approx(meeting["ziip_busy_pct"],
                                                                                          abs=0.5)
    assert plan.binding_sentence.endswith("no mix of up to 4 zIIPs and 1 GCPs meets both")
    # an SLO no mix meets, then one under the unloaded response: the SLO binds
    tight = plan_ziip(fitted, clients=700, think_time_ms=200, n_gcp=1, slo_resp_ms=1.0,
                      policy=PlannerPolicy(max_n_ziip=2))
    low = tight.table["resp_ms"].min()
    assert tight.binding_rule == "slo" and f"lowest predicted response is {low:.3g} ms" in tight.binding_sentence
    unloaded = fitted.cpu_ms_per_tran + fitted.delay_ms
    under = plan_ziip(fitted, clients=300, think_time_ms=200, n_gcp=2, slo_resp_ms=unloaded * 0.9)
    assert under.binding_rule == "slo" and f"unloaded response {unloaded:.3g} ms" in under.binding_sentence


def test_planner_says_when_no_engine_count_can_meet_the_slo(fitted):
    unloaded = fitted.cpu_ms_per_tran + fitted.delay_ms
    plan = plan_ziip(fitted, clients=300, think_time_ms=200, n_gcp=2, slo_resp_ms=unloaded * 0.9)
    assert plan.n_ziip is None and plan.n_gcp_recommended is None
    assert "unloaded response" in plan.reason and f"{unloaded:.3g} ms" in plan.reason


def test_planner_adds_gcps_when_ziips_alone_cannot_and_follows_prices(fitted):
    # zIIP busy capped at 1 %: no zIIP count passes, so only the GCP-only mix (no eligible-work cap)
    # can; the plan must then add GCPs, and it may only when the policy lets it
    strict = PlannerPolicy(max_ziip_busy_pct=1.0, max_spill_pct=None, max_n_ziip=4)
    none = plan_ziip(fitted, clients=700, think_time_ms=200, n_gcp=1, slo_resp_ms=1.5, policy=strict)
    assert none.n_ziip is None and "no mix of up to 4 zIIPs and 1 GCPs" in none.reason
    grown = plan_ziip(fitted, clients=700, think_time_ms=200, n_gcp=1, slo_resp_ms=1.5,
                      policy=replace(strict, max_added_gcp=8))
    assert grown.n_ziip == 0 and grown.added_gcp >= 1
    judged = grown.table  # the table is for the GCPs asked about; the chosen mix is re-predicted
    assert not judged["meets_slo"].iloc[0]
    check = fitted.predict(pd.DataFrame([{"clients": 700, "think_time_ms": 200, "n_gcp": grown.n_gcp_recommended,
                                          "n_ziip": 0}])).iloc[0]
    assert check["resp_ms"] <= 1.5
    fewer = fitted.predict(pd.DataFrame([{"clients": 700, "think_time_ms": 200,
                                          "n_gcp": grown.n_gcp_recommended - 1, "n_ziip": 0}])).iloc[0]
    assert fewer["resp_ms"] > 1.5  # the cheapest: one GCP less would miss


def test_conservative_plan_needs_the_band_to_meet_the_slo(fitted):
    point = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0,
                      policy=PlannerPolicy(max_n_ziip=8))
    careful = plan_ziip(fitted, clients=500, think_time_ms=200, n_gcp=2, slo_resp_ms=2.0,
                        policy=PlannerPolicy(max_n_ziip=8, conservative=True))
    assert careful.n_ziip >= point.n_ziip
    row = careful.table.set_index("n_ziip").loc[careful.n_ziip]
    assert row["resp_ms_hi"] <= 2.0


def test_roundtrip_is_exact(fitted):
    again = results_from_dict(fitted.to_dict())
    pd.testing.assert_frame_equal(again.predict(THIRD_ZIIP), fitted.predict(THIRD_ZIIP))


def test_measured_cpu_fixes_the_demand():
    table = TABLE1.assign(cpu_ms_per_tran=0.8, cpu_total_pct=TABLE1["tps"] * 0.08,
                          ziip_eligible_pct=TABLE1["tps"] * 0.072)
    res = ClosedMVAModel(n_boot=5).fit(table)
    assert res.demand_source == "measured" and res.cpu_ms_per_tran == pytest.approx(0.8)
    assert res.ziip_eligible_source == "measured" and res.ziip_eligible_fraction == pytest.approx(0.9)


def test_bad_tables_are_refused():
    with pytest.raises(ModelError, match="clients"):
        ClosedMVAModel().fit(TABLE1.drop(columns="clients"))
    with pytest.raises(ModelError, match="n_gcp >= 1"):
        ClosedMVAModel().fit(TABLE1.assign(n_gcp=0))


def test_years_to_reach():
    # 300 -> 528 clients at 20%/year: log(1.76)/log(1.2) = 3.10 years (hand computation)
    assert years_to_reach(300, 528, 20) == pytest.approx(3.1007, rel=1e-4)
    assert years_to_reach(600, 528, 20) == 0.0
    assert years_to_reach(300, 528, 0) == float("inf")


def test_band_coverage_scores_the_band_on_its_own_higher_client_counts():
    """Seed 004's five 2-zIIP loads: origins after 300 and 400 clients, each refitted and scored."""
    from kneecap.modeling.select import band_coverage

    def make():
        return ClosedMVAModel(n_boot=40, seed=7)

    c = band_coverage(TABLE1, make, "clients")
    assert c["origins"] == 2 and c["points"] == 2 + 1  # 400 and 500 above 300, 500 above 400
    assert c["coverage_raw_pct"] == pytest.approx(100 * c["inside"] / c["points"])
    assert c["x_max"] == pytest.approx(500 / 300)
    # each origin, scored again by hand: the rows above the cut against that origin's own band
    inside = 0
    for cut in (300, 400):
        pred = make().fit(TABLE1[TABLE1["clients"] <= cut]).predict(TABLE1[TABLE1["clients"] > cut])
        measured = TABLE1.loc[TABLE1["clients"] > cut, "resp_ms"].to_numpy()
        inside += int(((pred["resp_ms_lo"].to_numpy() <= measured) & (measured <= pred["resp_ms_hi"].to_numpy())).sum())
    assert c["inside"] == inside
    # a miss means a positive conformal widening; the fit keeps it and says it, and its document keeps it
    assert (c["q_log"] > 0) == (inside < c["points"])
    res = ClosedMVAModel(n_boot=0).fit(TABLE1)
    res.calibration = c
    assert f"{c['inside']} of {c['points']} held-out point(s)" in res.calibration_sentence()
    assert ClosedMVAResults.from_dict(res.to_dict()).calibration == pytest.approx(c)


def test_the_band_past_the_data_is_scored_as_drawn_and_widened_by_what_its_origins_missed():
    """With the table's extrapolation spread, each origin's band is widened past its cut as the
    champion's is; the points still outside set the further widening the champion applies past its
    own trained clients (and nowhere else)."""
    import math

    from kneecap.modeling.select import band_coverage, extrapolation_spread

    def make():
        return ClosedMVAModel(n_boot=40, seed=7)

    spread = extrapolation_spread(TABLE1, lambda: ClosedMVAModel(n_boot=0), "clients", ("resp_ms", "tps"))
    c = band_coverage(TABLE1, make, "clients", spread=spread)
    raw = band_coverage(TABLE1, make, "clients")
    assert {k: c[k] for k in raw} == pytest.approx(raw)
    # a wider band holds at least the points the bootstrap band held, and needs no more widening
    assert c["inside"] <= c["inside_widened"] <= c["points"]
    assert c["coverage_pct"] == pytest.approx(100 * c["inside_widened"] / c["points"])
    assert 0 <= c["q_log_widened"] <= c["q_log"]
    res = ClosedMVAModel(n_boot=40, seed=7).fit(TABLE1)
    res.extrapolation_spread = spread
    rows = pd.DataFrame({"clients": [400, 700], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0})
    plain = res.predict(rows)
    res.calibration = {**c, "q_log_widened": 0.1}
    wider = res.predict(rows)
    # inside the trained clients the band is untouched; past them both ends move by e^0.1
    assert wider.iloc[0].equals(plain.iloc[0])
    assert wider["resp_ms_hi"].iloc[1] == pytest.approx(plain["resp_ms_hi"].iloc[1] * math.exp(0.1))
    assert wider["resp_ms_lo"].iloc[1] == pytest.approx(plain["resp_ms_lo"].iloc[1] * math.exp(-0.1))
    assert wider["resp_ms"].iloc[1] == plain["resp_ms"].iloc[1]
    assert "more to cover them" in res.calibration_sentence()
