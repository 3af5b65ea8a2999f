r"""WLM goals: the Performance Index (PI) of a service class period, as RMF measures it.

A z/OS shop states its service level as a WLM goal per service class period: a response time
goal (an average, or a percentile: "90 % within 5 ms"), an execution velocity, or discretionary.
The Performance Index says how well the period met it: 1 is exactly met, above 1 missed, below 1
beaten (IBM, *z/OS MVS Programming: Workload Management Services*, "Performance Index": "For work
with response time goals, the performance index is the actual divided by goal. For work with
velocity goals, the performance index is goal divided by actual. ... Work with a discretionary goal
is defined to have a performance index of .81").

SMF 72.3 carries the goal (R723CRGF, R723CVAL, R723CPCT, R723CRTF), the counts of the period's
response time distribution in 14 buckets around the goal (R723TRDB, the array at R723CRTX) and
the using/delay samples of its velocity (R723CTOU, R723CTOT); :mod:`kneecap.smf.type72` decodes
them into ``smf72_workload``. The functions here take arrays, so the same rule serves the measured
PI (the ``fct_performance_index`` mart computes it in SQL, and the tests hold the two equal) and a
PI from a modelled response time distribution (expected counts per bucket, not whole numbers).

"Each service class period has a sysplex and a local performance index. The sysplex performance
index represents the performance of a service class period across all the systems in the sysplex.
The local performance index represents only the performance on the local system. ... The sysplex
performance index is the primary criteria used for selecting receivers and donors" (IBM WLM
Services, "Performance Index"). :func:`performance_index` gives a system's own, the local PI (the
``fct_performance_index`` mart); :func:`sysplex_performance_index` sums the systems' 72.3 counts of
a class period first, as RMF's sysplex reporting does, and reads the PI from the sums (the
``fct_sysplex_performance_index`` mart; the tests hold the two equal).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DISCRETIONARY_PI",
    "OPEN_BUCKET_PI",
    "RT_BUCKET_MAX_PCT",
    "average_performance_index",
    "percentile_performance_index",
    "performance_index",
    "sysplex_performance_index",
    "velocity_performance_index",
]

#: Upper bound of buckets 1-13 of the response time distribution, in % of the goal (the midpoint);
#: bucket 14 has none. IBM's "Response Time Distribution Data Section" lists 50 ... 100 for the map's
#: first six entries; 110 ... 150, 200 and 400 are franfcwong/smf2db's copy of IBM's bucket
#: descriptions and IBM SMF Explorer's ``performance_index`` pseudocode. The decoder reads the
#: bounds from each record's own map; this copy is for a modelled distribution.
RT_BUCKET_MAX_PCT: tuple[float, ...] = (50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 110.0, 120.0, 130.0,
                                        140.0, 150.0, 200.0, 400.0)
#: PI of a percentile goal whose percentile falls in bucket 14 (above 400 % of the goal): IBM SMF
#: Explorer's ``performance_index`` gives that bucket 550 (its PI is in per cent). The public text
#: read does not say what RMF prints there.
OPEN_BUCKET_PI = 5.5
#: "Work with a discretionary goal is defined to have a performance index of .81" (IBM WLM
#: Services, "Performance Index").
DISCRETIONARY_PI = 0.81


def percentile_performance_index(counts: np.ndarray, goal_percentile: np.ndarray | float, *,
                                 max_pct: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""PI of percentile response time goals from the response time distribution buckets.

    Parameters
    ----------
    counts : array of shape (n, 14) or (14,)
        Transactions completed per bucket (expected counts may be fractional).
    goal_percentile : array of shape (n,) or float
        The goal's percentile (R723CPCT), 1-99.
    max_pct : array of shape (n, 13) or (13,), optional
        Upper bound of buckets 1-13 in % of the goal; :data:`RT_BUCKET_MAX_PCT` by default.

    Returns
    -------
    pi : ndarray of shape (n,)
        The Performance Index; NaN where no transaction completed.
    bucket : ndarray of shape (n,)
        The bucket (1-14) in which the goal percentile of the transactions completed; 0 where
        none completed.

    Notes
    -----
    With :math:`c_j` the count of bucket :math:`j`, :math:`C_k = \sum_{j \le k} c_j`,
    :math:`N = C_{14}`, goal percentile :math:`p` and bucket bound :math:`b_k` (% of the goal),
    the bucket reached is :math:`k^* = \min\{k : 100\,C_k \ge p\,N\}` and

    .. math::

        \mathrm{PI} = b_{k^*} / 100 \quad (k^* \le 13), \qquad
        \mathrm{PI} = 5.5 \quad (k^* = 14).

    The bound is taken, not interpolated within the bucket: IBM SMF Explorer's ``performance_index``
    gives each bucket's bound as the PI (50, 60, ..., 150, 200, 400 and 550 for bucket 14, in per
    cent), and Martin Packer (IBM) tabulates a "PI value" per bucket. The share is compared exactly
    (:math:`100\,C_k \ge p\,N`): SMF Explorer's floating-point :math:`C_k/N \cdot 100 \ge p` can
    fall a rounding error short (29 of 100 transactions at a 29 % goal).

    References
    ----------
    IBM SMF Explorer, mapping SMF72S3, field ``performance_index`` (pseudocode), and fields
    ``class_rt``, ``r723crtx``, ``r723rtdm``. IBM, *z/OS MVS System Management Facilities (SMF)*,
    record type 72 subtype 3, "Response Time Distribution Data Section". M. Packer, "A Slice Of
    PI", mainframeperformancetopics.com, 2019.
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    bounds = np.asarray(RT_BUCKET_MAX_PCT if max_pct is None else max_pct, dtype=np.float64)
    bounds = np.broadcast_to(np.atleast_2d(bounds), (counts.shape[0], counts.shape[1] - 1))
    pct = np.broadcast_to(np.asarray(goal_percentile, dtype=np.float64), (counts.shape[0],))
    total = counts.sum(axis=1)
    reached = 100.0 * np.cumsum(counts, axis=1) >= pct[:, None] * total[:, None]
    reached[:, -1] = True  # every transaction completed by the open bucket's end
    first = reached.argmax(axis=1)
    closed = first < bounds.shape[1]
    pi = np.where(closed, bounds[np.arange(first.size), np.minimum(first, bounds.shape[1] - 1)] / 100.0,
                  OPEN_BUCKET_PI)
    some = total > 0
    return np.where(some, pi, np.nan), np.where(some, first + 1, 0)


def average_performance_index(resp_ms: np.ndarray | float, goal_resp_ms: np.ndarray | float) -> np.ndarray:
    r"""PI of average response time goals: the actual mean response over the goal.

    Notes
    -----
    .. math:: \mathrm{PI} = \bar{R} / G,\qquad \bar{R} = 1.024\,\text{R723CTET} / \text{R723CRCP}\ \text{ms}

    (R723CTET in 1024-µs units). NaN where nothing completed or the goal is not positive.

    References
    ----------
    IBM, *z/OS MVS Programming: Workload Management Services*, "Performance Index".
    """
    resp = np.asarray(resp_ms, dtype=np.float64)
    goal = np.asarray(goal_resp_ms, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(goal > 0, resp / goal, np.nan)


def velocity_performance_index(using_samples: np.ndarray | float, delay_samples: np.ndarray | float,
                               goal_velocity_pct: np.ndarray | float) -> np.ndarray:
    r"""PI of execution velocity goals: the goal over the actual velocity.

    Notes
    -----
    .. math::

        V = 100\,\frac{\text{R723CTOU}}{\text{R723CTOU} + \text{R723CTOT}},\qquad
        \mathrm{PI} = V_{goal} / V

    (RMF's overview condition EXVEL). NaN where the period has no samples or none using (a
    velocity of 0: the goal missed without bound).

    References
    ----------
    IBM, *z/OS RMF User's Guide*, "Workload Activity - SMF record type 72-3" overview conditions
    (EXVEL); IBM, *z/OS MVS Programming: Workload Management Services*, "Performance Index".
    """
    using = np.asarray(using_samples, dtype=np.float64)
    delay = np.asarray(delay_samples, dtype=np.float64)
    goal = np.asarray(goal_velocity_pct, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        velocity = 100.0 * using / (using + delay)
        return np.where(velocity > 0, goal / velocity, np.nan)


def performance_index(goal_type: np.ndarray, *, counts: np.ndarray, goal_percentile: np.ndarray,
                      resp_ms: np.ndarray, goal_resp_ms: np.ndarray, using_samples: np.ndarray,
                      delay_samples: np.ndarray, goal_velocity_pct: np.ndarray,
                      max_pct: np.ndarray | None = None) -> np.ndarray:
    """The PI of each period by its goal type.

    Percentile, average and velocity goals as :func:`percentile_performance_index`,
    :func:`average_performance_index` and :func:`velocity_performance_index` compute them.

    Parameters
    ----------
    goal_type : array of str
        "percentile", "average", "velocity", "discretionary" (PI :data:`DISCRETIONARY_PI`); any
        other type (a system goal, none) has no PI (NaN).
    counts, goal_percentile, max_pct
        As for :func:`percentile_performance_index`.
    resp_ms, goal_resp_ms
        As for :func:`average_performance_index`.
    using_samples, delay_samples, goal_velocity_pct
        As for :func:`velocity_performance_index`.

    Returns
    -------
    ndarray
        One PI per period.
    """
    kind = np.asarray(goal_type, dtype=object)
    pct_pi, _ = percentile_performance_index(counts, goal_percentile, max_pct=max_pct)
    return np.select(
        [kind == "percentile", kind == "average", kind == "velocity", kind == "discretionary"],
        [pct_pi, average_performance_index(resp_ms, goal_resp_ms),
         velocity_performance_index(using_samples, delay_samples, goal_velocity_pct),
         np.full(kind.shape, DISCRETIONARY_PI)],
        default=np.nan)


def sysplex_performance_index(goal_type: str, *, counts: np.ndarray, goal_percentile: float, ended: np.ndarray,
                              resp_ms: np.ndarray, goal_resp_ms: float, using_samples: np.ndarray,
                              delay_samples: np.ndarray, goal_velocity_pct: float,
                              max_pct: np.ndarray | None = None) -> float:
    r"""The sysplex PI of one service class period in one interval, from its systems' 72.3 counts.

    The systems' counts are summed first and the PI read from the sums by the local rule
    (:func:`performance_index`): a system that completed more transactions, or was sampled more,
    weighs more; the sysplex PI is no average of the systems' PIs.

    Parameters
    ----------
    goal_type : str
        The period's goal type, the same on every system (the WLM policy is the sysplex's).
    counts : array of shape (n_systems, 14)
        Each system's response time distribution counts (R723TRDB at R723CRTX).
    goal_percentile, goal_resp_ms, goal_velocity_pct, max_pct
        The goal, as for :func:`performance_index` (``max_pct`` the 13 bucket bounds, shape (13,)).
    ended, resp_ms : arrays of shape (n_systems,)
        Each system's completed transactions (R723CRCP) and their mean response (ms; ignored where
        a system completed none).
    using_samples, delay_samples : arrays of shape (n_systems,)
        Each system's using and delay samples (R723CTOU, R723CTOT).

    Returns
    -------
    float
        The sysplex PI; NaN where the local rule has none (nothing completed, no samples, no goal).

    Notes
    -----
    With systems :math:`s`, bucket counts :math:`c_{s,j}`, completions :math:`n_s`, mean responses
    :math:`\bar{R}_s` and using / delay samples :math:`U_s, D_s`:

    .. math::

        c_j = \sum_s c_{s,j}, \qquad
        \bar{R} = \frac{\sum_s n_s \bar{R}_s}{\sum_s n_s}, \qquad
        V = 100\,\frac{\sum_s U_s}{\sum_s U_s + \sum_s D_s},

    and the PI is the local one (:func:`percentile_performance_index`,
    :func:`average_performance_index`, :func:`velocity_performance_index`) of :math:`c_j`,
    :math:`\bar{R}` and :math:`V`. RMF's overview conditions sum the systems' fields the same way
    (``RTIME`` = Sum(R723CXET) / Sum(R723CRCP), ``EXVEL`` = Sum(R723CTOU) / (Sum(R723CTOU) +
    Sum(R723CTOT))), "for each single system in addition to sysplex reporting". IBM's public text
    does not spell out the sum for the percentile buckets; one sysplex distribution of one goal is
    its systems' counts added bucket by bucket.

    References
    ----------
    IBM, *z/OS MVS Programming: Workload Management Services*, "Performance Index". IBM, *z/OS RMF
    User's Guide*, "Workload Activity - SMF record type 72-3" (overview conditions). IBM, *z/OS RMF
    Report Analysis*, "Service Class Period report" (the WLMGL sysplex report).
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    ended = np.asarray(ended, dtype=np.float64)
    resp = np.asarray(resp_ms, dtype=np.float64)
    total_ended = ended.sum()
    # a system that completed nothing has no mean response (NaN), and adds no response time
    total_resp_ms = np.where(ended > 0, resp * ended, 0.0).sum()
    mean_resp_ms = total_resp_ms / total_ended if total_ended > 0 else np.nan
    pi = performance_index(
        np.array([goal_type], dtype=object), counts=counts.sum(axis=0)[None, :],
        goal_percentile=np.array([goal_percentile], dtype=np.float64),
        resp_ms=np.array([mean_resp_ms]), goal_resp_ms=np.array([goal_resp_ms], dtype=np.float64),
        using_samples=np.array([np.sum(using_samples, dtype=np.float64)]),
        delay_samples=np.array([np.sum(delay_samples, dtype=np.float64)]),
        goal_velocity_pct=np.array([goal_velocity_pct], dtype=np.float64),
        max_pct=None if max_pct is None else np.asarray(max_pct, dtype=np.float64))
    return float(pi[0])
