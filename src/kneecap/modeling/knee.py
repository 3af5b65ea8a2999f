"""Observed knee of a measured response-time curve: a diagnostic next to the model's knee.

The forecast knee comes from the fitted queueing model (:meth:`ClosedMVAResults.knee`), which can
extrapolate beyond the measured loads. The observed knee can only fall on a measured point; with
5-10 points it is a sanity check, not a forecast (see docs/modeling notes, §3).
"""

from __future__ import annotations

import numpy as np


def observed_knee(load: np.ndarray, resp_ms: np.ndarray, *, sensitivity: float = 1.0) -> float | None:
    """Kneedle knee of an increasing, convex response-time curve, or ``None`` when there is none.

    Parameters
    ----------
    load : clients (or TPS) of each measured point.
    resp_ms : measured response times.
    sensitivity : Kneedle's ``S``.

    References
    ----------
    Satopää, V., Albrecht, J., Irwin, D. and Raghavan, B. (2011), "Finding a 'Kneedle' in a
    Haystack: Detecting Knee Points in System Behavior", ICDCS Workshops. Implementation: ``kneed``.
    """
    from kneed import KneeLocator

    x = np.asarray(load, dtype=float)
    y = np.asarray(resp_ms, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(np.unique(x)) < 3:
        return None
    order = np.argsort(x)
    locator = KneeLocator(x[order], y[order], S=sensitivity, curve="convex", direction="increasing",
                          online=False)
    return None if locator.knee is None else float(locator.knee)
