"""The zIIP/GCP dispatch model: one LPAR's CPU pools, with GCP help fed back into the queues.

Every response-time path in kneecap uses these rules: :func:`solve_open` (open arrivals) evaluates
:func:`cpu_residence` at the offered rate, and :func:`solve_closed` (clients with think time, zero
think time included) applies the same rules inside exact MVA, with the same M/M/c+D zIIP queue.
The rules follow z/OS dispatching as IEAOPTxx sets it, and :mod:`kneecap.simulation` implements the
same rules event by event; ``make bench`` compares the two.

Dispatch rules (times in ms):

* a transaction's CPU demand ``D`` is ``gcp_bursts`` GCP-only bursts of ``(1-f) D / gcp_bursts``
  and ``eligible_bursts`` zIIP-eligible bursts of ``f D / eligible_bursts`` of work; an engine runs
  ``gcp_speed`` / ``ziip_speed`` of work per ms (1 and 1: every engine alike, ``D`` in ms), so on a
  sub-capacity processor a burst helped on a GCP runs at GCP speed, longer than on a zIIP
  (``Rules.rho``; :func:`cost_per_tran` gives engine and CP-equivalent time); zIIPs in SMT-2
  (``ziip_mt=2``) are two logical zIIPs a core, each at ``ziip_speed`` times half the measured
  MT capacity factor;
* with no zIIP online, eligible work is ordinary GCP work (RMF reports it as IIPCP);
* otherwise eligible bursts queue FCFS for the zIIP pool; with IIPHONORPRIORITY=YES they may run on
  a GCP that has no GCP-native work waiting (lower priority than native work) once the pool needs
  help: under the ``pool`` rule (default) from the moment the oldest queued burst has waited
  ``ZIIPAWMT`` until a zIIP finds the queue empty, under the ``burst`` rule only bursts that have
  themselves waited ``ZIIPAWMT``; with NO eligible work waits for a zIIP;
* other classes load the pools at ``bg_gcp_busy_pct`` / ``bg_ziip_busy_pct`` per engine, in
  bursts of ``bg_burst_ms`` FCFS beside the class's (:func:`wait_ratio_beside_background`: the class's
  bursts of another size must not lower the wait the background sets); their zIIP work is helped
  like the class's own.

Under the pool rule an eligible burst's wait is that of the zIIPs alone until a queued burst has
waited ZIIPAWMT, the flush of the backlog behind it and the help that follows
(:func:`pool_rule_wait`); the spill is M/M/c+D's at the mean patience of a burst queued behind
others. Where the class's eligible load is more than its zIIPs can run, help comes
in cycles (:func:`_help_cycle_wait`) that the M/M/c+D queue of independent bursts misses; the model
takes the smaller of the two, the cycle weighted by how many bursts ZIIPAWMT spans. There the
simulated response rises, then falls as more bursts are offered while GCPs help, then rises again;
the model holds it to the geometric mean of the highest response below and the least above
(:func:`cycle_waits_raised_to_peak`), so response never falls as load rises and is wrong by no more than any
monotone curve must be. A zIIP added (or other classes' zIIP work taken away) can then raise response, as in
the simulation: :meth:`Dispatch.ziips_fall_behind` says where.
"""

from kneecap.modeling.dispatch._rules import (
    HELP_RULE,
    HELP_RULES,
    HELP_WAIT_MS,
    HONOR_PRIORITY,
    Dispatch,
    DispatchSolution,
    cost_per_tran,
)
from kneecap.modeling.dispatch._solve import cpu_residence, solve_closed, solve_open, solve_open_rows

# engines per pool: z/OS defines at most a few hundred logical processors per LPAR, and every
# per-engine loop of the model is O(engines); one constant for the model and the input checks
from kneecap.schema import MAX_ENGINES

__all__ = [
    "HELP_RULE",
    "HELP_RULES",
    "HELP_WAIT_MS",
    "HONOR_PRIORITY",
    "MAX_ENGINES",
    "Dispatch",
    "DispatchSolution",
    "cost_per_tran",
    "cpu_residence",
    "solve_closed",
    "solve_open",
    "solve_open_rows",
]
