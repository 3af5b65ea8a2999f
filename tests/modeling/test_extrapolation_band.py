"""Past the trained load the band widens by what the model's own rolling-origin refits say."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling import ClosedMVAModel, serialise
from kneecap.modeling.base import Z_BAND, widen_beyond_trained
from kneecap.modeling.select import ModelingConfig, choose_response_model, extrapolation_spread
from kneecap.modeling.usl import USLModel, usl_tps


def test_widening_leaves_the_trained_range_alone_and_grows_as_x_to_the_z_s() -> None:
    out = pd.DataFrame({"resp_ms": [2.0, 2.0, 2.0], "resp_ms_lo": [1.9, 1.9, 1.9], "resp_ms_hi": [2.1, 2.1, 2.1]})
    widened = widen_beyond_trained(out.copy(), np.array([50.0, 100.0, 400.0]), 100.0, {"resp_ms": 0.5})
    assert widened.iloc[:2].equals(out.iloc[:2])  # at or under the largest trained load: as fitted
    factor = 4.0 ** (Z_BAND * 0.5)
    assert widened.loc[2, "resp_ms_hi"] == pytest.approx(2.0 * factor)
    assert widened.loc[2, "resp_ms_lo"] == pytest.approx(2.0 / factor)
    # never narrower than the fit's own band
    tight = widen_beyond_trained(out.copy(), np.array([101.0]), 100.0, {"resp_ms": 1e-6})
    assert tight.loc[0, "resp_ms_hi"] == 2.1 and tight.loc[0, "resp_ms_lo"] == 1.9


def _usl_rows(a: float, b: float, g: float, noise: float, seed: int) -> pd.DataFrame:
    n = np.array([1, 2, 4, 8, 12, 16, 24, 32], dtype=float)
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"clients": n, "think_time_ms": 0.0,
                         "tps": usl_tps(n, a, b, g) * np.exp(rng.normal(0, noise, len(n)))})


def test_the_spread_is_small_for_a_law_the_family_follows_and_grows_with_noise() -> None:
    make = lambda: USLModel()  # noqa: E731 - the rolling origin's refit
    exact = extrapolation_spread(_usl_rows(0.05, 0.001, 10.0, 0.0, 1), make, "clients", ("tps",))
    noisy = extrapolation_spread(_usl_rows(0.05, 0.001, 10.0, 0.08, 1), make, "clients", ("tps",))
    assert exact is not None and noisy is not None
    assert exact["tps"] < 0.01 < noisy["tps"]


def test_a_chosen_model_carries_its_spread_through_its_stored_form() -> None:
    rows = _usl_rows(0.05, 0.001, 10.0, 0.05, 2)
    choice = choose_response_model(rows, ModelingConfig(n_boot=0))
    res = choice.results
    # a zero-think curve gets a combination of families (kneecap.modeling.combine): each member
    # carries the spread its own rolling-origin refits measured
    assert choice.family == "combined"
    again = serialise.loads(serialise.dumps(res))
    for name, member in res.members.items():
        assert member.extrapolation_spread and set(member.extrapolation_spread) <= {"tps", "resp_ms"}
        assert again.members[name].extrapolation_spread == pytest.approx(member.extrapolation_spread)
    far = pd.DataFrame({"clients": [32.0, 96.0], "think_time_ms": 0.0})
    a, b = res.predict(far), again.predict(far)
    pd.testing.assert_frame_equal(a, b)
    # three times the trained load: wider than the fit's own band, by the measured spread
    assert ((a.loc[1, "tps_hi"] - a.loc[1, "tps_lo"]) / a.loc[1, "tps"]
            > (a.loc[0, "tps_hi"] - a.loc[0, "tps_lo"]) / a.loc[0, "tps"])


def test_too_few_loads_measure_no_spread() -> None:
    rows = _usl_rows(0.05, 0.001, 10.0, 0.05, 3).iloc[:3]
    assert extrapolation_spread(rows, lambda: USLModel(), "clients", ("tps",)) is None


def test_a_stored_model_from_before_the_spread_still_loads_and_predicts_as_before() -> None:
    rows = pd.DataFrame({"clients": [100.0, 200, 300], "think_time_ms": 200.0, "tps": [500.0, 1000, 1500],
                         "resp_ms": [1.06, 1.13, 1.38], "n_gcp": 2, "n_ziip": 2})
    res = ClosedMVAModel(n_boot=5).fit(rows)
    doc = json.loads(serialise.dumps(res))
    assert "extrapolation_spread" not in doc["results"]  # none measured: the document is as before
    assert serialise.loads(json.dumps(doc)).extrapolation_spread is None
