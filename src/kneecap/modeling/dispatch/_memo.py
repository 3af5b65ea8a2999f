"""Offsets into the floats a solve keeps per LPAR state (the help cycle's table, the pool rule's peaks)."""

from __future__ import annotations

#: the most peaks of the pool rule's wait past the zIIPs' capacity kept (:func:`_find_pool_wait_peaks`),
#: and the floats a solve keeps per LPAR state: the help cycle's least-wait rate and waits, those
#: peaks, then at ``PEAK`` the highest residence below that rate (:func:`_highest_residence_below_least`), at
#: ``SCAN`` how far the peaks' scan has gone
MAX_PEAKS = 4


PEAK = 3 + 1 + 2 * MAX_PEAKS


#: after those, the help cycle's waits on :data:`NODES` loads of its regime, each the least at or
#: above its load (:func:`tabulate_cycle_least_waits`): (load, eligible waits, GCP-only waits) per node
NODES = 16


SCAN = PEAK + 1


TABLE = SCAN + 4


MEMO_FLOATS = TABLE + 3 * NODES
