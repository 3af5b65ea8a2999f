"""A class's MSU answers: the saving of one more zIIP in closed form, without a model, and on the simulated week."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

from kneecap import msu, msu_answer
from kneecap.forecasting import GrowthPolicy
from kneecap.modeling.open_dispatch import OpenDispatchModel
from tests.smf import simdays

RATE = 16 / 576  # MSU per CPU second: 100 MSU/h per busy GCP


@dataclass
class ShareStub:
    """A class model whose eligible share on GCPs is 80 f % on n zIIPs, 80 f^2 % on n + 1 (f: its eligible fraction)."""

    boot_params: np.ndarray
    delay_ms: float = 1.0
    cpu_ms_per_tran: float = 1.0
    ziip_eligible_fraction: float = 0.5
    eligible_bursts: int = 1
    help_rule: str = "pool"
    history: list = field(default_factory=list)
    base: dict = field(default_factory=lambda: {"n_gcp": 2, "n_ziip": 2})
    targets: tuple = ("resp_ms", "cpu_gcp_pct", "ziip_eligible_on_gcp_pct")

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        f = self.ziip_eligible_fraction
        share = np.where(frame["n_ziip"] > 2, 80.0 * f * f, 80.0 * f)
        return pd.DataFrame({"ziip_eligible_on_gcp_share_pct": share, "cpu_gcp_pct": frame["tps"] * 0.1,
                             "saturated": False}, index=frame.index)


def _flat(days: int = 2, eligible_msu: float = 20.0, lpar_msu: float = 90.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    t = pd.date_range("2026-03-02", periods=days * 96, freq="15min")
    rows = pd.DataFrame({"workload": "C", "system_id": "SYSA", "interval_start_at": t, "interval_s": 900.0,
                         "tps": 100.0, "n_gcp": 2.0, "n_ziip": 2.0, "msu_per_cpu_s": RATE, "msu_gcp_per_h": 30.0,
                         "msu_eligible_on_gcp_per_h": 0.8 * 0.5 * eligible_msu, "msu_eligible_per_h": eligible_msu})
    intervals = pd.DataFrame({"system_id": "SYSA", "interval_start_at": t, "interval_s": 900.0,
                              "lpar_msu_per_h": lpar_msu, "lac_msu_per_h": lpar_msu})
    return rows, msu.lpar_r4ha(intervals, "SYSA")


def test_one_more_ziip_saves_the_eligible_msu_the_model_moves_off_the_gcps():
    rows, lpar = _flat()
    fractions = [0.4, 0.5, 0.6]
    stub = ShareStub(boot_params=np.array([[1.0, 1.0, f, 1, 0] for f in fractions]))
    ans = msu_answer.msu_answer(rows, lpar, stub, growth_policy=GrowthPolicy())
    # a flat LPAR: the peak falls by what moves in every interval, the 8 MSU/h of eligible work on GCPs
    # times 1 - (80 f^2) / (80 f) = 1 - f
    assert ans["msu_peak_r4ha"] == pytest.approx(90.0)
    assert ans["msu_saved_one_ziip"] == pytest.approx(8.0 * (1 - 0.5))
    draws = [8.0 * (1 - f) for f in fractions]
    assert ans["msu_saved_one_ziip_lo"] == pytest.approx(np.quantile(draws, 0.025))
    assert ans["msu_saved_one_ziip_hi"] == pytest.approx(np.quantile(draws, 0.975))
    assert ans["msu_eligible_on_gcp_at_peak"] == pytest.approx(8.0)
    assert ans["msu_month"] == "2026-03" and "3 bootstrap refits" in ans["msu_note"]


def test_without_a_model_the_eligible_msu_on_gcps_is_the_most_a_ziip_could_save():
    rows, lpar = _flat()
    ans = msu_answer.msu_answer(rows, lpar, None, growth_policy=GrowthPolicy())
    assert ans["msu_saved_one_ziip"] == pytest.approx(8.0)
    assert (ans["msu_saved_one_ziip_lo"], ans["msu_saved_one_ziip_hi"]) == (0.0, pytest.approx(8.0))
    assert "no class model" in ans["msu_note"]


def test_without_capacity_fields_nothing_is_priced():
    ans = msu_answer.class_msu_answer("C", pd.DataFrame({"workload": ["C"]}), pd.DataFrame())
    assert ans["msu_peak_r4ha"] is None and "fct_msu_intervals" in ans["msu_note"]


@pytest.fixture(scope="module")
def week_answer() -> tuple[dict[str, Any], Any, pd.DataFrame]:
    records, truth = simdays.simulated_days(days=7, seed=11)
    marts = simdays.published_marts(records)
    fct = marts["fct_measurements"]
    cls = fct[fct["workload"] == truth.config.class_name].reset_index(drop=True)
    model = OpenDispatchModel(n_boot=20, seed=1).fit(cls)
    ans = msu_answer.class_msu_answer(truth.config.class_name, fct, marts["fct_msu_intervals"], model,
                                      growth_policy=GrowthPolicy())
    return ans, truth, marts["fct_msu_intervals"]


def test_the_simulated_week_is_priced_at_its_peak(week_answer):
    ans, truth, intervals = week_answer
    assert ans["msu_system_id"] == truth.config.system_id and ans["msu_per_cpu_s"] == pytest.approx(RATE)
    assert abs(ans["msu_peak_r4ha"] - ans["msu_peak_lac"]) <= 0.5 + 1e-9  # SMF70LAC is whole MSU
    assert 0.0 <= ans["msu_saved_one_ziip_lo"] <= ans["msu_saved_one_ziip"] <= ans["msu_saved_one_ziip_hi"]
    # what moves in an interval is at most what was measured on GCPs there, so the peak falls by at most
    # the eligible MSU on GCPs at the old peak
    assert ans["msu_saved_one_ziip_hi"] <= ans["msu_eligible_on_gcp_at_peak"] + 1e-9
    assert 0.0 <= ans["msu_eligible_on_gcp_at_peak"] <= ans["msu_class_gcp_at_peak"] <= ans["msu_peak_r4ha"]
    # the class grows: its forecast peak is above today's, and never above the 2 GCPs' 200 MSU/h
    assert ans["msu_peak_r4ha"] <= ans["msu_peak_r4ha_forecast_lo"] <= ans["msu_peak_r4ha_forecast"]
    assert ans["msu_peak_r4ha_forecast"] <= ans["msu_peak_r4ha_forecast_hi"] <= 200.0 + 1e-9


def test_kneecap_forecast_prints_one_msu_line_per_priced_class():
    from kneecap import forecast_text

    rows, lpar = _flat()
    ans = msu_answer.msu_answer(rows, lpar, None, growth_policy=GrowthPolicy())
    table = pd.DataFrame([{"workload": "C", "scenario": "peak", **ans},
                          {"workload": "D", "scenario": "", **dict.fromkeys(msu_answer.MSU_COLUMNS)}])
    (line, note) = forecast_text.msu_lines(table)
    assert line.startswith("forecast: C / peak: MSU on SYSA: peak R4HA 90 MSU/h at 2026-03")
    assert "one more zIIP removes 8 [0, 8] MSU/h from the peak" in line
    assert note == f"forecast: C / peak: MSU: {ans['msu_note']}" and "no class model with an IIPCP share" in note
    assert forecast_text.msu_lines(pd.DataFrame([{"workload": "E"}])) == []
