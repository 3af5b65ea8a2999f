"""The capacity report and `kneecap forecast` name the engines they answered on (issue #37).

The seed 004 load test (IBM's Table 1: 2 GCPs + 2 zIIPs, think time 200 ms) fitted as a closed
model, asked on 2 GCPs + 1 zIIP at 400 clients on engines alike, with GCPs at 40 % of a zIIP's
speed and with the zIIP core in SMT-2 at an MT capacity factor of 1.3 (an input, not a published
figure): the report's configuration names the engines and its knee is the library's on them
(benchmarks/bench_engines_plan.py: 168, 171 and 275 clients).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kneecap import config, forecasting, policies
from kneecap.modeling import ClosedMVAModel
from kneecap.modeling.engines import engine_words, on_engines
from kneecap.report.content import report_content

ROOT = Path(__file__).resolve().parents[1]
SEED004 = pd.DataFrame({"workload": "w", "clients": [100, 200, 300, 400, 500], "tps": [500, 1000, 1500, 1960, 2420],
                        "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0})


def test_engine_words():
    assert engine_words({}) == "" and engine_words({"gcp_speed": 2.5, "ziip_speed": 2.5}) == ""
    assert engine_words({"gcp_speed": 1.0, "ziip_speed": 2.5}) == "GCP at 40 % of zIIP speed"
    assert engine_words({"gcp_speed": 0.4, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.3}) == \
        "GCP at 40 % of zIIP speed, zIIPs in SMT-2 (MT capacity factor 1.3)"


@pytest.mark.parametrize(("engines", "words"), [
    ({}, "2 GCP + 1 zIIP, Z 200 ms"),
    ({"gcp_speed": 0.4, "ziip_speed": 1.0}, "2 GCP + 1 zIIP, GCP at 40 % of zIIP speed, Z 200 ms"),
    ({"ziip_mt": 2, "ziip_mt_capacity": 1.3}, "2 GCP + 1 zIIP, zIIPs in SMT-2 (MT capacity factor 1.3), Z 200 ms"),
])
def test_the_report_names_the_engines_it_answered_on(engines, words):
    fit = ClosedMVAModel(n_boot=10).fit(SEED004)
    policy = policies.planner_policy(config.load_params(ROOT / "params.yaml"))
    content = report_content(forecasting.WorkloadModels("w", fit, None), registry=pd.DataFrame(),
                             marts={"fct_measurements": SEED004}, policy=policy, growth=None, load=400,
                             configuration={"n_gcp": 2, "n_ziip": 1, **engines})
    assert content.question["configuration"] == words
    on = on_engines(fit, **engines) if engines else fit
    knee = forecasting.knee(on, n_gcp=2, n_ziip=1, think_time_ms=200.0, k=policy.knee_k)
    assert content.knee["mid"] == pytest.approx(knee.load, rel=1e-9)
    # the curve drawn is the one on those engines
    curve = forecasting.response_curve(on, n_gcp=2, n_ziip=1, think_time_ms=200.0, max_load=float(content.curve[
        "clients"].max()))
    assert content.curve["resp_ms"].tolist() == pytest.approx(curve["resp_ms"].tolist(), rel=1e-12)
