"""The family contract (kneecap.modeling.base.Results), checked for every registered family.

In the spirit of scikit-learn's ``parametrize_with_checks``: each family in
:data:`kneecap.modeling.serialise.FAMILIES` is fitted on a small table and put through the same
checks (its curve, its knee by the k x unloaded rule, its answer to a scenario, its round trip
through the stored document). A throw-away family then shows what adding one takes: its module,
the registry and the selection, and the forecast, the train stage's tables and the backtest
answer with it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from kneecap import backtest, config, forecasting, modeling, training
from kneecap.modeling import serialise
from kneecap.modeling.base import to_jsonable
from kneecap.modeling.closed import ClosedMVAModel, MultiServerMVAModel
from kneecap.modeling.combine import CombinedModel
from kneecap.modeling.cost import CostModel
from kneecap.modeling.family import ResultsBase
from kneecap.modeling.knee import LOAD_UNITS, Knee, past_knee
from kneecap.modeling.open import OpenMMcModel
from kneecap.modeling.open_dispatch import OpenDispatchModel
from kneecap.modeling.select import Choice
from kneecap.modeling.usl import USLModel
from tests.modeling.test_combine import SPECSDM91
from tests.modeling.test_open_dispatch import intervals

K = 3.0
POLICY = modeling.PlannerPolicy(knee_k=K)

# seed 004's measured points (2 GCPs + 2 zIIPs, 200 ms think time, data/backtest/seed004_*)
CLOSED = pd.DataFrame({"clients": [100.0, 200.0, 300.0, 400.0, 500.0], "n_gcp": 2, "n_ziip": 2,
                       "think_time_ms": 200.0, "tps": [494.0, 986.0, 1477.0, 1951.0, 2394.0],
                       "resp_ms": [1.52, 1.63, 1.87, 5.03, 8.90]})
# an M/M/1 queue with a 2 ms service time and 1 ms of delay, measured at six rates
OPEN = pd.DataFrame({"tps": [50.0, 100.0, 150.0, 200.0, 250.0, 300.0]})
OPEN["resp_ms"] = 1.0 + 2.0 / (1.0 - OPEN["tps"] * 0.002)
# CPU per transaction rising with the response size (a cost table)
COST = pd.DataFrame({"tps": [100.0, 200.0, 300.0, 400.0, 500.0, 600.0],
                     "resp_bytes": [200.0, 1000.0, 2000.0, 4000.0, 8000.0, 16000.0],
                     "cpu_ms_per_tran": [0.50, 0.52, 0.55, 0.61, 0.72, 0.95]})

#: How each family is fitted small, and a scenario it answers: the contract is checked on these.
FITS: dict[str, tuple[Any, dict[str, Any]]] = {
    "closed_mva": (lambda: ClosedMVAModel(n_boot=8, seed=1).fit(CLOSED), {"clients": 450}),
    "usl": (lambda: USLModel().fit(SPECSDM91), {"clients": 100}),
    "closed_mva_c": (lambda: MultiServerMVAModel().fit(SPECSDM91), {"clients": 100}),
    "combined": (lambda: CombinedModel({"usl": USLModel, "closed_mva_c": MultiServerMVAModel},
                                       min_loads=3).fit(SPECSDM91), {"clients": 100}),
    "open_mmc": (lambda: OpenMMcModel(n_boot=8, seed=1).fit(OPEN), {"tps": 200}),
    "open_dispatch": (lambda: OpenDispatchModel(n_boot=4, seed=1).fit(intervals(days=4)), {"tps": 600}),
    "cost_ols": (lambda: CostModel().fit(COST), {"tps": 300, "resp_bytes": 3000}),
}


def test_the_knee_rule_compiles_for_a_numba_kernel():
    # the closed solver's early stop runs inside a compiled kernel: the rule is plain arithmetic
    # on floats so that the kernel can call the same function
    import numba

    compiled = numba.njit(past_knee)
    assert compiled(3.1, 1.0, K) and not compiled(3.0, 1.0, K) and not compiled(float("nan"), 1.0, K)
    assert past_knee(float("inf"), 1.0, K)


def test_every_registered_family_has_a_small_fit_here():
    assert set(FITS) == set(serialise.FAMILIES)


@pytest.fixture(scope="module", params=sorted(serialise.FAMILIES))
def family(request: pytest.FixtureRequest) -> tuple[str, Any, dict[str, Any]]:
    fit, scenario = FITS[request.param]
    return request.param, fit(), scenario


def test_the_family_states_what_it_is(family):
    name, res, _ = family
    assert res.family == name and type(res) is serialise.FAMILIES[name]
    assert res.load_unit in LOAD_UNITS
    assert isinstance(res.pools, bool) and res.targets


def test_the_curve_is_the_prediction_on_a_grid_of_its_load(family):
    _, res, scenario = family
    load = res.load_unit
    top = 2.0 * float(scenario[load])
    try:
        curve = res.curve(max_load=top, points=12)
    except modeling.ModelError as exc:  # a family with no load to draw along says so
        assert "no response curve" in str(exc)
        return
    grid = curve[load].to_numpy(dtype=float)
    assert len(grid) >= 2 and np.all(np.diff(grid) > 0) and grid[-1] == pytest.approx(top)
    shown = [t for t in res.targets if t in curve]
    assert shown
    at = res.predict(curve.loc[:, [c for c in curve.columns if c not in res.targets
                                   and not c.endswith(("_lo", "_hi"))]].reset_index(drop=True))
    np.testing.assert_allclose(curve[shown].to_numpy(dtype=float), at[shown].to_numpy(dtype=float), rtol=1e-12)


def test_the_knee_is_where_the_response_passes_k_times_unloaded(family):
    _, res, _ = family
    knee = res.knee(k=K)
    if knee is None:
        return
    assert isinstance(knee, Knee) and knee.load_unit == res.load_unit and knee.k == K
    assert knee.load_lo <= knee.load <= knee.load_hi and knee.load < knee.saturation
    # the point fit's response just below the knee is at most k x unloaded, just above it more
    # (closed: the whole population before and at the knee; open: 0.5 % either side)
    load = res.load_unit
    below, above = (knee.load - 1, knee.load) if load == "clients" else (0.995 * knee.load, 1.005 * knee.load)
    options = {"max_draws": 0} if res.pools else {}
    resp = res.predict(pd.DataFrame({load: [below, above], **knee.configuration}), **options)["resp_ms"].to_numpy()
    assert list(past_knee(resp, knee.unloaded_resp_ms, K)) == [False, True]


def test_the_answer_is_a_forecast_row(family):
    name, res, scenario = family
    role = {"cost": res} if name == "cost_ols" else {"response": res}
    row = forecasting.forecast_scenario(forecasting.WorkloadModels("w", **role), {"workload": "w", **scenario},
                                        POLICY)
    assert row["status"] == forecasting.ANSWERED
    answered = res.answer({"workload": "w", **scenario}, POLICY)
    assert answered and set(answered) <= set(row)
    assert {k: row[k] for k in answered} == pytest.approx(answered, nan_ok=True)


def test_the_stored_document_gives_back_the_same_predictions(family):
    _, res, scenario = family
    back = serialise.loads(serialise.dumps(res))
    assert type(back) is type(res)
    point = pd.DataFrame([{k: v for k, v in scenario.items() if k != "workload"}])
    pd.testing.assert_frame_equal(back.predict(point), res.predict(point))


# --- a throw-away family: what adding one touches -------------------------------------------------


@dataclass
class StraightLineResults(ResultsBase):
    """Response rising in a straight line with the rate: all a new family's module has to hold."""

    delay_ms: float
    ms_per_tps: float
    family: str = "straight_line"
    load_unit: ClassVar[str] = "tps"
    targets: tuple[str, ...] = ("resp_ms",)

    def predict(self, frame: pd.DataFrame) -> pd.DataFrame:
        resp = self.delay_ms + self.ms_per_tps * frame["tps"].to_numpy(dtype=float)
        return pd.DataFrame({"resp_ms": resp, "resp_ms_lo": 0.9 * resp, "resp_ms_hi": 1.1 * resp}, index=frame.index)

    def summary(self) -> str:
        return f"straight line: {self.delay_ms:.3g} ms + {self.ms_per_tps:.3g} ms per tps"

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({"family": self.family, "delay_ms": self.delay_ms, "ms_per_tps": self.ms_per_tps})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StraightLineResults:
        return cls(delay_ms=d["delay_ms"], ms_per_tps=d["ms_per_tps"])


def _fit_straight_line(table: pd.DataFrame) -> StraightLineResults:
    slope, intercept = np.polyfit(table["tps"].to_numpy(dtype=float), table["resp_ms"].to_numpy(dtype=float), 1)
    return StraightLineResults(delay_ms=float(intercept), ms_per_tps=float(slope))


def test_a_new_family_touches_its_module_the_registry_and_the_selection(monkeypatch, tmp_path):
    # what it touched: its module (the class above), the registry and the selection; nothing in
    # forecasting, training, backtest or the stored-document code
    touched = {"module": StraightLineResults,
               "registry": (serialise, "FAMILIES"),
               "selection": (modeling, "choose_response_model")}
    monkeypatch.setitem(serialise.FAMILIES, "straight_line", StraightLineResults)
    monkeypatch.setattr(modeling, "choose_response_model",
                        lambda train, cfg: Choice("straight_line", _fit_straight_line(train), pd.DataFrame()))
    assert set(touched) == {"module", "registry", "selection"}

    table = OPEN.assign(workload="line", split=["train"] * 4 + ["test"] * 2)
    params = config.load_params("params.yaml")
    (trained,) = [m for m in training.train_workload("line", table.drop(columns="split"), params)
                  if m.kind == training.RESPONSE]
    res = trained.results
    assert trained.family == "straight_line" and trained.headline()[0].startswith("straight line")
    plots = training.fit_plot_tables(trained, table.drop(columns="split"))
    assert list(plots) == ["line__lpar"] and plots["line__lpar"]["measured_resp_ms"].notna().sum() == len(table)

    row = forecasting.forecast_scenario(forecasting.WorkloadModels("line", res), {"workload": "line", "tps": 120},
                                        POLICY)
    assert row["model"] == "straight_line" and row["resp_ms"] == pytest.approx(res.delay_ms + 120 * res.ms_per_tps)

    case = backtest.Case(name="line", source="a straight line", targets=("resp_ms",), questions=[], measurements=table)
    result = backtest.run_case(case, training.modeling_config(params), POLICY)
    assert result.model == "straight_line" and result.targets["resp_ms"]["mape"] is not None

    back = serialise.loads(serialise.dumps(res))
    assert back == res
