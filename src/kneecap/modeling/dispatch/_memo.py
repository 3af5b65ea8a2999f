"""What a solve finds once per LPAR state and class and keeps for its other loads: one record."""

from __future__ import annotations

import numba
import numpy as np

#: the most peaks of the pool rule's wait past the zIIPs' capacity kept (:func:`_find_pool_wait_peaks`)
MAX_PEAKS = 4

#: loads of the help cycle's regime its least waits are tabulated on (:func:`tabulate_cycle_least_waits`)
NODES = 16

#: The answers a solve finds once per LPAR state and class, kept for its other loads, as one
#: structured record (a compiled kernel passes it by reference, with no reference counting):
#:
#: - ``cycle``: the rate (tran/ms) at which the help cycle's waits are least, and those eligible
#:   and GCP-only waits per transaction (:func:`tabulate_cycle_least_waits`); ``cycle[0] < 0``:
#:   still to be found;
#: - ``cycle_table``: per node of the cycle's regime its load and the eligible and GCP-only waits
#:   of the least total at that node or above;
#: - ``cycle_peak``: the highest residence below the cycle's least-wait rate
#:   (:func:`_highest_residence_below_least`); ``< 0``: still to be found;
#: - ``wait_peaks``: how many peaks of the pool rule's wait past the zIIPs' capacity were found
#:   (``< 0``: the scan is to start), then the rate and wait of each (:func:`_find_pool_wait_peaks`);
#: - ``peak_scan``: how far that scan has gone: the last load's index, its wait and patience fixed
#:   point, the last peak's wait.
LPAR_MEMO = np.dtype([("cycle", np.float64, (3,)), ("cycle_table", np.float64, (NODES, 3)),
                      ("cycle_peak", np.float64), ("wait_peaks", np.float64, (1 + 2 * MAX_PEAKS,)),
                      ("peak_scan", np.float64, (4,))])


@numba.njit(cache=True)
def forget(memo):
    """Ask for the help cycle's least waits and the pool rule's peaks afresh (another LPAR state or class)."""
    memo.cycle[0] = -1.0
    memo.wait_peaks[0] = -1.0


def new_memos(count: int) -> np.recarray:
    """``count`` :data:`LPAR_MEMO` records, each with every answer still to be found.

    A record array, so that its fields read as attributes in Python too (``NUMBA_DISABLE_JIT=1``).
    """
    memos = np.zeros(count, dtype=LPAR_MEMO).view(np.recarray)
    memos.cycle[:, 0] = -1.0
    memos.wait_peaks[:, 0] = -1.0
    return memos


def new_memo() -> np.record:
    """One :data:`LPAR_MEMO` record with every answer still to be found."""
    return new_memos(1)[0]
