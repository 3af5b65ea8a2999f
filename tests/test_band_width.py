"""The response band's width in words (kneecap.forecasting.band_width / band_sentence): the Knee page
says how wide a band thinner than the line is, so that it is not taken for a band left out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap import forecasting

CURVE = pd.DataFrame({"tps": [10.0, 100.0, 200.0, 300.0], "resp_ms": [20.0, 30.0, 60.0, np.inf],
                      "resp_ms_lo": [19.0, 27.0, 48.0, np.nan], "resp_ms_hi": [21.0, 33.0, 72.0, np.nan]})


def test_band_width_is_interpolated_between_the_curves_loads():
    width = forecasting.band_width(CURVE, "tps", 150.0)
    # halfway between 100 and 200 tps: response 45 ms, band 37.5-52.5 ms
    assert width == pytest.approx({"load": 150.0, "resp_ms": 45.0, "lo": 37.5, "hi": 52.5,
                                   "half_pct": 100 * 7.5 / 45.0})
    at_end = forecasting.band_width(CURVE, "tps", 10.0)
    assert at_end["half_pct"] == pytest.approx(100 * 1.0 / 20.0)


def test_no_band_past_saturation_or_outside_the_curve():
    # 300 tps is past saturation (no finite band), 5 tps below the curve's first load
    assert forecasting.band_width(CURVE, "tps", 250.0) is None
    assert forecasting.band_width(CURVE, "tps", 5.0) is None
    unbanded = CURVE.assign(resp_ms_lo=np.nan, resp_ms_hi=np.nan)
    assert forecasting.band_sentence(unbanded, "tps", "tps", knee_load=150.0) is None


def test_band_sentence_gives_the_width_at_low_load_and_at_the_knee():
    low, knee = (forecasting.band_width(CURVE, "tps", x) for x in (10.0, 150.0))
    assert forecasting.band_sentence(CURVE, "tps", "tps", knee_load=150.0) == (
        f"+/-{low['half_pct']:.3g} % of the response at 10 tps (19-21 ms), "
        f"+/-{knee['half_pct']:.3g} % at the knee (150 tps)")
    # a knee beyond the band drawn: only the low load's width
    assert forecasting.band_sentence(CURVE, "tps", "tps", knee_load=400.0) == \
        f"+/-{low['half_pct']:.3g} % of the response at 10 tps (19-21 ms)"
