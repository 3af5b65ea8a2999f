"""The processor capacity catalogue and the processor-change what-if (issue #37, item 3).

Reference values are the figures as printed: K. Stine, "IBM z16 Technical Overview", IBM
Washington Systems Center, 2022, slide "IBM z16 Full and Sub-Capacity CP Offerings" ("701 = 100%
≈ 2,253 PCI", "601 ≈ 66% ≈ 1,496 PCI", "501 ≈ 41% ≈ 937 PCI"); IBM System z10 EC Reference Guide,
p. 13 ("The entry point (Model 401) is approximately 23.69% of a full speed CP (Model 701)").
The what-if is held to the engine-speed scenario it stands for (``gcp_speed`` at the PCI ratio).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from kneecap import forecasting, processors
from kneecap.modeling.answers import ANSWERED, FAILED, SATURATED
from kneecap.processors import ProcessorError
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[1]
PATH = ROOT / "data" / "reference" / "processor_capacity.yaml"
CATALOGUE = processors.read_catalogue(PATH)


def change(to: str, doubt: float, source: str = "3931-701") -> dict:
    return {"from": source, "to": to, "ratio_doubt_pct": doubt}


# --- the catalogue ---------------------------------------------------------------------------------

def test_every_row_carries_its_figure_as_printed_and_its_citation():
    rows = CATALOGUE.processors
    assert set(rows) == {"3931-701", "3931-601", "3931-501", "3931-401", "8561-701", "8561-601", "8561-501",
                         "8561-401", "2097-701", "2097-401"}
    assert [(rows[i].pci, rows[i].relative_capacity_pct) for i in ("3931-701", "3931-601", "3931-501")] == [
        (2253.0, 100.0), (1496.0, 66.0), (937.0, 41.0)]
    assert rows["2097-401"].relative_capacity_pct == 23.69 and rows["2097-401"].pci is None
    for row in rows.values():
        s = row.source
        assert all((s.title, s.author, s.publisher, s.date, row.locator, row.quote)), row.processor_id
        assert s.url.startswith("https://") and s.url in row.citation and row.quote in row.citation
    # only the third party's rows are not IBM's, and they say so
    assert {r.processor_id for r in rows.values() if r.source.kind == "third_party"} == {
        "3931-401", "8561-701", "8561-601", "8561-501", "8561-401"}
    assert CATALOGUE.caveat == ("PCI Tables are NOT adequate for making comparisons of IBM Z processors. "
                                "Additional capacity planning required")


def test_a_broken_catalogue_lists_every_problem_with_its_row(tmp_path):
    raw = yaml.safe_load(PATH.read_text(encoding="utf-8"))
    raw["processors"][1]["pci"] = 1500           # not the 1,496 its quote prints
    raw["processors"][2]["source"] = "a_blog"    # no such source
    del raw["processors"][3]["relative_capacity_pct"]  # no figure at all
    raw["processors"].append(dict(raw["processors"][0]))  # a repeated id
    raw["sources"]["havekost_subcapacity_2024"]["date"] = ""
    path = tmp_path / "processors.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ProcessorError) as info:
        processors.read_catalogue(path)
    message = str(info.value)
    assert "processors[1] (3931-601): pci: 1500 is not in the quote" in message
    assert "processors[2] (3931-501): source: 'a_blog' is not a key of sources" in message
    assert "processors[3] (3931-401): neither pci nor relative_capacity_pct" in message
    assert "(3931-701): id repeats an earlier row" in message
    assert "sources.havekost_subcapacity_2024: date: empty" in message


def test_ratios_are_the_printed_figures_and_zIIPs_keep_their_speed_on_one_machine():
    sub = processors.capacity_change("3931-701", "3931-601", CATALOGUE)
    assert sub.gcp_ratio == pytest.approx(1496 / 2253, rel=1e-15) and sub.ziip_ratio == 1.0
    assert processors.capacity_change("2097-701", "2097-401", CATALOGUE).gcp_ratio == pytest.approx(0.2369)
    # a WLM class fitted on a 601's SMF (zIIP at NFFS / 256 = 2253 / 1496 of a GCP) moved to a 701
    up = processors.capacity_change("3931-601", "3931-701", CATALOGUE)
    engines = up.engines({"gcp_speed": 1.0, "ziip_speed": 2253 / 1496})
    np.testing.assert_allclose([engines["gcp_speed"], engines["ziip_speed"]], [2253 / 1496] * 2, rtol=1e-15)
    # the doubt scales the GCP ratio only: one machine's zIIPs are the same engines
    slow = sub.engines({}, 0.95)
    assert slow == {"gcp_speed": pytest.approx(0.95 * 1496 / 2253, rel=1e-15), "ziip_speed": 1.0}


def test_unknown_models_and_figures_that_do_not_compare_are_refused_by_name():
    with pytest.raises(ProcessorError, match=r"processor '3931-999' is not in the catalogue .*known: 3931-701, "
                                             r"3931-601, .*2097-401"):
        processors.capacity_change("3931-701", "3931-999", CATALOGUE)
    # no PCI is printed for the z15: a change between generations is not compared
    with pytest.raises(ProcessorError, match="needs both settings' PCI"):
        processors.capacity_change("8561-701", "3931-701", CATALOGUE)


@pytest.mark.parametrize(("spec", "match"), [
    ({"from": "3931-701", "to": "3931-601"}, "mapping of from, to, ratio_doubt_pct"),
    (change("3931-601", 60), "ratio_doubt_pct must be a number from 0 to 50"),
    (change("3931-601", "5"), "ratio_doubt_pct must be a number"),
    ("3931-601", "mapping of from, to, ratio_doubt_pct"),
])
def test_a_malformed_processor_is_named(spec, match):
    with pytest.raises(ProcessorError, match=match):
        processors.processor_spec(spec)


# --- the what-if on a fitted model --------------------------------------------------------------

#: Seed 004's fit asked on 2 GCPs and 1 zIIP, where the GCPs carry work and their speed shows.
ASKED = {**SCENARIO, "clients": 300, "n_ziip": 1}
COMPARED = ("resp_ms", "resp_ms_lo", "resp_ms_hi", "tps", "tps_lo", "tps_hi", "knee_clients", "knee_clients_lo",
            "knee_clients_hi", "saturation_clients", "recommended_n_ziip", "recommended_n_gcp", "gcp_busy_pct",
            "ziip_busy_pct", "ziip_eligible_on_gcp_share_pct", "cpu_cp_equiv_ms_per_tran", "engines", "status")


def test_a_sub_capacity_target_is_the_gcp_speed_scenario_it_stands_for(seed004_models):  # noqa: F811
    row = forecasting.forecast_scenario(seed004_models, {**ASKED, "processor": change("3931-601", 0)}, POLICY,
                                        machines=CATALOGUE)
    speed = forecasting.forecast_scenario(seed004_models, {**ASKED, "gcp_speed": 1496 / 2253, "ziip_speed": 1.0},
                                          POLICY)
    for column in COMPARED:
        assert row[column] == speed[column], column
    assert row["engines"] == "GCP at 66.4 % of zIIP speed"
    assert (row["processor_from"], row["processor_to"], row["capacity_ratio_doubt_pct"]) == ("3931-701", "3931-601",
                                                                                             0.0)
    assert "3931-601: IBM z16 Technical Overview" in row["processor_citations"]
    assert f'IBM: "{CATALOGUE.caveat}"' in row["warnings"]


def test_the_ratio_doubt_widens_every_band_around_the_same_point(seed004_models):  # noqa: F811
    plain = forecasting.forecast_scenario(seed004_models, {**ASKED, "processor": change("3931-501", 0)}, POLICY,
                                          machines=CATALOGUE)
    doubt = forecasting.forecast_scenario(seed004_models, {**ASKED, "processor": change("3931-501", 5)}, POLICY,
                                          machines=CATALOGUE)
    slow = forecasting.forecast_scenario(seed004_models, {**ASKED, "gcp_speed": 0.95 * 937 / 2253,
                                                          "ziip_speed": 1.0}, POLICY)
    for mid in ("resp_ms", "tps", "knee_clients"):
        assert doubt[mid] == plain[mid], mid
        assert doubt[f"{mid}_lo"] <= plain[f"{mid}_lo"] <= plain[mid] <= plain[f"{mid}_hi"] <= doubt[f"{mid}_hi"]
    # slower GCPs: a longer response, whose band's top the envelope reaches
    assert doubt["resp_ms_hi"] == pytest.approx(max(plain["resp_ms_hi"], slow["resp_ms_hi"]), rel=1e-12)
    assert doubt["resp_ms_hi"] > plain["resp_ms_hi"]
    assert doubt["knee_clients_at_ratio_low"] == slow["knee_clients"]
    assert "GCP ratio at 0.395-0.437 (ratio_doubt_pct 5)" in doubt["warnings"]


def test_a_fit_that_disagrees_with_the_from_setting_is_said(seed004_models):  # noqa: F811
    # seed 004's table does not say the engines differed: the fit has zIIPs at a GCP's speed
    row = forecasting.forecast_scenario(seed004_models, {**ASKED, "processor": change("3931-701", 2, "3931-601")},
                                        POLICY, machines=CATALOGUE)
    assert "fitted with a zIIP at 1 x a GCP's speed, while 3931-601 runs its GCPs at 66.4 % of full" in row[
        "warnings"]
    assert row["gcp_capacity_ratio"] == pytest.approx(2253 / 1496, rel=1e-15)


def test_bad_processor_scenarios_fail_alone(seed004_models):  # noqa: F811
    scenarios = [
        {**ASKED, "name": "ok", "processor": change("3931-601", 5)},
        {**ASKED, "name": "unknown", "processor": change("3931-602", 5)},
        {**ASKED, "name": "both", "processor": change("3931-601", 5), "gcp_speed": 0.5},
        {**ASKED, "name": "no_doubt", "processor": {"from": "3931-701", "to": "3931-601"}},
    ]
    table = forecasting.forecast_scenarios(scenarios, lambda _: seed004_models, POLICY, machines=CATALOGUE)
    assert table["status"].tolist() == [ANSWERED, FAILED, FAILED, FAILED]
    assert "'3931-602' is not in the catalogue" in table["error"][1]
    assert "leave out gcp_speed" in table["error"][2]
    assert "ratio_doubt_pct" in table["error"][3]
    without = forecasting.forecast_scenarios(scenarios[:1], lambda _: seed004_models, POLICY)
    assert "no processor catalogue was given" in without["error"][0]


def test_the_envelope_has_no_top_where_an_end_is_saturated():
    point = {"status": ANSWERED, "resp_ms": 10.0, "resp_ms_lo": 9.0, "resp_ms_hi": 11.0, "knee_tps": 100.0,
             "knee_tps_lo": 90.0, "knee_tps_hi": 110.0, "date_knee_lo": "2026-03-01", "date_knee_hi": "2026-04-01"}
    slow = {"status": SATURATED, "resp_ms": None, "resp_ms_lo": None, "resp_ms_hi": None, "knee_tps": 95.0,
            "knee_tps_lo": 85.0, "knee_tps_hi": 104.0, "date_knee_lo": "2026-02-20", "date_knee_hi": "2026-03-25"}
    fast = {**point, "resp_ms": 9.5, "resp_ms_lo": 8.5, "resp_ms_hi": 10.4, "knee_tps_hi": 116.0}
    out = processors.envelope(point, [slow, fast])
    assert (out["resp_ms"], out["resp_ms_lo"], out["resp_ms_hi"]) == (10.0, 8.5, math.inf)
    assert (out["knee_tps_lo"], out["knee_tps_hi"]) == (85.0, 116.0)
    assert (out["date_knee_lo"], out["date_knee_hi"]) == ("2026-02-20", "2026-04-01")


def test_a_saturated_end_is_said_and_leaves_the_band_without_a_top():
    """An open workload at 1,000 tps whose capacity is 1,000 tps x the GCP speed over 0.4 (a stand-in for a model)."""
    def ask(scenario):
        capacity = 1000.0 * scenario["gcp_speed"] / 0.4
        if scenario["tps"] >= capacity:
            return {"status": SATURATED, "status_message": f"1,000 tps is past saturation ({capacity:,.0f} tps)",
                    "resp_ms": None, "resp_ms_lo": None, "resp_ms_hi": None, "warnings": None}
        resp = 1.0 / (1.0 - scenario["tps"] / capacity)
        return {"status": ANSWERED, "resp_ms": resp, "resp_ms_lo": 0.9 * resp, "resp_ms_hi": 1.1 * resp,
                "warnings": "a warning of the fit"}

    # 3931-701 to 3931-501: GCP speed 937 / 2253 = 0.4159, capacity 1,040 tps; at -5 % 988 tps
    row = processors.answer_on_target(ask, {"tps": 1000.0, "processor": change("3931-501", 5)}, CATALOGUE,
                                      results=object())
    assert row["status"] == ANSWERED and row["status_at_ratio_low"] == SATURATED
    fast = 1.05 * 1000.0 * (937 / 2253) / 0.4  # the high end's capacity: the band's least response
    assert row["resp_ms_hi"] == math.inf
    assert row["resp_ms_lo"] == pytest.approx(0.9 / (1.0 - 1000.0 / fast), rel=1e-12)
    warnings = row["warnings"].split(forecasting.WARNINGS_SEPARATOR)
    assert warnings[0] == "a warning of the fit" and warnings.count("a warning of the fit") == 1
    assert "at the ratio's low end: 1,000 tps is past saturation (988 tps) (the band has no top)" in warnings
    with pytest.raises(ProcessorError, match="has none"):
        processors.answer_on_target(ask, {"tps": 1.0, "processor": change("3931-501", 5)}, CATALOGUE, None)


def test_a_wlm_class_fitted_on_sub_capacity_smf_scales_its_measured_speeds():
    """The SMF week of a 2 GCP + 2 zIIP LPAR with GCPs at 40 % of a zIIP (R723NFFS 640, ``tests.smf.simdays``)."""
    from kneecap.modeling.open_dispatch import OpenDispatchModel
    from tests.smf import simdays as sd

    records, truth = sd.variant_days("subcap", seed=11)
    res = OpenDispatchModel(n_boot=4, calibrate=False).fit(sd.class_rows(records, truth))
    assert res.measured_engines == {"gcp_speed": 1.0, "ziip_speed": pytest.approx(2.5, rel=1e-12)}
    models = forecasting.WorkloadModels("ZCONSUB", res, None)
    asked = {"workload": "ZCONSUB", "name": "to_701", "tps": 2000.0, "slo_resp_ms": 6.5}
    row = forecasting.forecast_scenario(models, {**asked, "processor": change("3931-701", 0, "3931-501")}, POLICY,
                                        machines=CATALOGUE)
    # a GCP 2253 / 937 times as fast as the measured one, the zIIPs as measured (NFFS / 256 = 2.5)
    speed = forecasting.forecast_scenario(models, {**asked, "gcp_speed": 2253 / 937, "ziip_speed": 2.5}, POLICY)
    for column in ("resp_ms", "resp_ms_lo", "resp_ms_hi", "knee_tps", "knee_tps_lo", "knee_tps_hi", "max_tps",
                   "recommended_n_ziip", "engines"):
        assert row[column] == speed[column], column
    assert row["max_tps"] > res.max_tps()  # the measured engines' capacity, 2,948 tps
    # the week's NFFS (a zIIP 2.5 x a GCP) is 4 % from the 501's published 2,253 / 937 = 2.40: said
    # when the scenario's doubt is smaller, not when it covers it
    assert "fitted with a zIIP at 2.5 x a GCP's speed, while 3931-501 runs its GCPs at 41.6 %" in row["warnings"]
    covered = forecasting.forecast_scenario(models, {**asked, "processor": change("3931-701", 5, "3931-501")}, POLICY,
                                            machines=CATALOGUE)
    assert "fitted with a zIIP" not in covered["warnings"]
    assert covered["knee_tps_lo"] <= row["knee_tps_lo"] <= row["knee_tps"] <= row["knee_tps_hi"] <= covered[
        "knee_tps_hi"]
