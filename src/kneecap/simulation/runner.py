"""Replications, confidence intervals and scenario tables: what callers of the simulation use."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kneecap.simulation.dispatcher import LparSimulation, replication_metrics
from kneecap.simulation.scenario import SimScenario, check_open_load_fits

METRICS = ("tps", "resp_ms", "resp_p95_ms", "cpu_total_pct", "cpu_gcp_pct", "cpu_ziip_pct",
           "ziip_eligible_on_gcp_pct", "ziip_eligible_pct", "ziip_eligible_on_gcp_share_pct", "gcp_busy_pct",
           "ziip_busy_pct", "n_gcp_using", "n_ziip_using", "n_ziip_on_cp_using", "n_gcp_delay",
           "n_ziip_delay")
# The fields of a closed MVA response model a scenario naming a workload inherits.
RESPONSE_MODEL_FIELDS = ("cpu_ms_per_tran", "ziip_eligible_fraction", "delay_ms", "honor_priority",
                         "help_wait_ms", "help_rule", "eligible_bursts", "gcp_bursts")


def simulate(scenario: SimScenario, *, replications: int = 5, transactions: int = 20000,
             warmup_fraction: float = 0.1, seed: int = 0) -> pd.DataFrame:
    r"""Simulate one LPAR's dispatcher and measure the class as RMF would, with replication CIs.

    Parameters
    ----------
    scenario : the LPAR, the class's transactions and load, background work.
    replications : independent replications (different random streams from ``seed``), ``>= 1``;
        the confidence intervals need ``>= 2``.
    transactions : completed transactions per replication, warm-up included.
    warmup_fraction : share of the completed transactions (and the time they span) discarded at
        the start of each replication, in [0, 1).
    seed : seeds every random stream; the same seed gives the same table.

    Returns
    -------
    pandas.DataFrame
        One row: the scenario's fields (``tps`` renamed ``tps_offered``), the run settings, and for
        each metric its mean over replications with ``<metric>_lo`` / ``<metric>_hi``, a 95 %
        Student-t interval over the replication means. Metrics: ``tps``, ``resp_ms`` (mean
        response excluding think time, including ``delay_ms``), ``resp_p95_ms``; the class's CPU
        as RMF APPL% (100 = one engine busy for the whole interval): ``cpu_total_pct``,
        ``cpu_gcp_pct`` (APPL% CP, eligible work that ran on GCPs included), ``cpu_ziip_pct``
        (APPL% IIP), ``ziip_eligible_on_gcp_pct`` (APPL% IIPCP), ``ziip_eligible_pct``
        (IIP + IIPCP); ``ziip_eligible_on_gcp_share_pct``, the share of the class's eligible CPU that ran on GCPs (NaN
        when it has none); pool busy per engine, background included: ``gcp_busy_pct`` and
        ``ziip_busy_pct`` (NaN without zIIPs). The class's WLM CPU states, as time-average
        numbers of its transactions in each (what SMF 72.3 using/delay samples taken every
        250 ms estimate: samples = average x interval / 0.25 s): ``n_gcp_using`` (a GCP-only
        burst running on a GCP), ``n_ziip_using`` (an eligible burst running on a zIIP),
        ``n_ziip_on_cp_using`` (an eligible burst running on a GCP: helped, or any eligible
        burst when there are no zIIPs, as RMF reports it as IIPCP), ``n_gcp_delay`` (a burst
        waiting in the GCP queue: GCP-only bursts, and eligible bursts too when there are no
        zIIPs, there being no zIIP to wait for), ``n_ziip_delay`` (an eligible burst in the zIIP
        queue, until a zIIP or a helping GCP takes it). Background work is in none of them, nor
        is a transaction's ``delay_ms``.

    Raises
    ------
    ValueError
        For bad run settings, or an open load that exceeds a pool it may use (named), checked
        before simulating.

    Notes
    -----
    A transaction spends ``delay_ms`` first, then runs its bursts one after another in an order
    shuffled per transaction: ``gcp_bursts`` GCP-only bursts of mean :math:`(1-f)D/g` and
    ``eligible_bursts`` zIIP-eligible bursts of mean :math:`fD/e`. Background work of other
    classes arrives as Poisson streams of exponential bursts of mean ``bg_burst_ms`` at rates
    :math:`\lambda = u\,m / \bar{s}` for per-engine utilisation :math:`u` of :math:`m` engines;
    background zIIP bursts are eligible work and follow the eligible rules. Dispatching is
    non-preemptive, a started burst runs to completion on its engine:

    * without zIIPs eligible work is GCP work (same queue and priority) and counts as IIPCP;
    * with zIIPs eligible bursts join one FCFS zIIP queue and a freed zIIP takes the oldest;
    * a freed GCP takes the oldest waiting GCP-native burst. If none waits and
      IIPHONORPRIORITY=YES (``honor_priority``), it takes the oldest eligible burst queued for a
      zIIP when help is due; that burst leaves the zIIP queue and counts as IIPCP. Help is due,
      under ``help_rule="pool"``, while the pool needs help: from the moment a queued burst has
      waited ZIIPAWMT (``help_wait_ms``) until a zIIP finds the queue empty; under
      ``help_rule="burst"``, for a burst that has itself waited ZIIPAWMT. Idle GCPs start helping
      the moment help becomes due. Otherwise the GCP idles. With IIPHONORPRIORITY=NO eligible
      work waits for a zIIP.

    Each replication discards its first ``warmup_fraction`` of completions and measures from that
    completion to the last; busy time and the state counts are integrated exactly over that
    window. By Little's law ``n_gcp_using`` = :math:`\lambda(1-f)D`,
    ``n_ziip_using + n_ziip_on_cp_using`` = :math:`\lambda f D` (``D`` in seconds for
    ``lambda`` in tps), and each delay count = :math:`\lambda` x the wait per transaction in
    that queue; the using counts are the class's APPL% / 100.

    References
    ----------
    IBM, *z/OS MVS Initialization and Tuning Reference*, "Statements and parameters for
    IEAOPTxx": IIPHONORPRIORITY, ZIIPAWMT. IBM, *z/OS RMF Report Analysis*, Workload Activity
    report: APPL% CP, IIPCP, IIP. Law, A. M. (2015), *Simulation Modeling and Analysis*, 5th ed.,
    §9.5.2 (the replication/deletion approach for steady-state means).
    """
    runs = replicate(scenario, range(_count(replications, "replications")),
                     transactions=transactions, warmup_fraction=warmup_fraction, seed=seed)
    row: dict[str, Any] = scenario_columns(scenario)
    row.update(replications=replications, transactions=transactions,
               warmup_fraction=warmup_fraction, seed=seed)
    for metric in METRICS:
        row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"] = mean_and_t_interval(
            [run[metric] for run in runs])
    return pd.DataFrame([row])


def replicate(scenario: SimScenario, indices: Iterable[int], *, transactions: int = 20000,
              warmup_fraction: float = 0.1, seed: int = 0) -> list[dict[str, float]]:
    """Run the replications numbered ``indices`` of ``seed``: the metrics of each, in order.

    Replication ``k`` draws from the ``k``-th child of ``SeedSequence(seed)``, the stream
    :func:`simulate` gives its ``k``-th replication, whichever replications run before or after
    it. A caller that adds replications until an interval is narrow enough therefore extends
    the same experiment: replications ``0..n-1`` run in batches give the table
    ``simulate(replications=n)`` gives. Arguments as for :func:`simulate`.
    """
    indices = list(indices)
    if any(isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in indices):
        raise ValueError(f"replication numbers must be integers >= 0, got {indices!r}")
    if not 0.0 <= warmup_fraction < 1.0:
        raise ValueError(f"warmup_fraction must be in [0, 1), got {warmup_fraction}")
    _count(transactions, "transactions")
    warmup = int(warmup_fraction * transactions)
    if transactions - warmup < 1:
        raise ValueError(f"warmup_fraction {warmup_fraction} leaves none of {transactions} "
                         "transactions to measure")
    check_open_load_fits(scenario)
    runs = []
    for k in indices:
        # the k-th child of SeedSequence(seed), as SeedSequence(seed).spawn(n)[k] for any n > k
        stream = np.random.SeedSequence(seed, spawn_key=(k,))
        sim = LparSimulation(scenario, transactions=transactions, warmup=warmup, seed=stream)
        sim.run()
        runs.append(replication_metrics(sim))
    return runs


def response_sample(scenario: SimScenario, *, transactions: int = 40000, warmup_fraction: float = 0.1,
                    seed: int = 0) -> np.ndarray:
    """Response times (ms) of one replication's measured transactions, in completion order.

    One :class:`LparSimulation` of ``transactions`` completions drawing from ``SeedSequence(seed)``;
    the first ``warmup_fraction`` of them are discarded, as :func:`simulate` does. Each response
    includes the scenario's ``delay_ms``, as ``resp_ms`` does.
    """
    if not 0.0 <= warmup_fraction < 1.0:
        raise ValueError(f"warmup_fraction must be in [0, 1), got {warmup_fraction}")
    warmup = int(warmup_fraction * _count(transactions, "transactions"))
    if transactions - warmup < 1:
        raise ValueError(f"warmup_fraction {warmup_fraction} leaves none of {transactions} transactions to measure")
    check_open_load_fits(scenario)
    sim = LparSimulation(scenario, transactions=transactions, warmup=warmup, seed=np.random.SeedSequence(seed))
    sim.run()
    return np.asarray(sim.resp_ms[warmup:], dtype=float)


def response_quantiles(scenario: SimScenario, probs: Iterable[float], **kwargs: Any) -> np.ndarray:
    """Quantiles (ms) of :func:`response_sample` at ``probs`` (0-1; the sample's empirical quantiles).

    The simulation's response time distribution at one load, what a percentile forecast is checked
    against (``kwargs`` as for :func:`response_sample`).
    """
    return np.quantile(response_sample(scenario, **kwargs), np.asarray(list(probs), dtype=float))


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def simulate_many(scenarios: Mapping[str, SimScenario] | Iterable[SimScenario],
                  **kwargs: Any) -> pd.DataFrame:
    """:func:`simulate` each scenario; one row each, with a ``name`` column for a mapping.

    Every scenario uses the same ``seed`` (common random numbers), so differences between rows
    come from the scenarios rather than from the draws.
    """
    if isinstance(scenarios, Mapping):
        frames = [simulate(s, **kwargs).assign(name=name) for name, s in scenarios.items()]
        table = pd.concat(frames, ignore_index=True)
        return table[["name", *table.columns.drop("name")]]
    return pd.concat([simulate(s, **kwargs) for s in scenarios], ignore_index=True)


def simulate_specs(specs: Iterable[Mapping[str, Any]],
                   workload_defaults: Callable[[str], Mapping[str, Any]], *,
                   on_row: Callable[[dict[str, Any]], None] | None = None,
                   **kwargs: Any) -> pd.DataFrame:
    """Simulate scenario mappings (a YAML file's entries); a failing one gets an ``error``.

    Parameters
    ----------
    specs : mappings of :class:`SimScenario` fields plus optional ``name`` and ``workload``.
    workload_defaults : ``workload -> fields`` for a spec that names a workload (see
        :func:`response_model_defaults`); the spec's own keys override them. May raise
        LookupError for an unknown workload.
    on_row : called with each row as it finishes (progress reporting).
    kwargs : passed to :func:`simulate`.

    Returns
    -------
    pandas.DataFrame
        One row per spec in order: ``name``, ``workload``, the :func:`simulate` columns, and
        ``error`` (empty for the scenarios that ran).
    """
    rows = []
    for i, spec in enumerate(specs, start=1):
        fields = dict(spec)
        head = {"name": str(fields.pop("name", f"#{i}")), "workload": fields.pop("workload", None)}
        try:
            if head["workload"] is not None:
                fields = {**workload_defaults(head["workload"]), **fields}
            row = {**head, **simulate(SimScenario.from_mapping(fields), **kwargs).iloc[0].to_dict(),
                   "error": None}
        except (ValueError, TypeError, LookupError) as exc:
            row = {**head, "error": str(exc)}
        if on_row is not None:
            on_row(row)
        rows.append(row)
    table = pd.DataFrame.from_records(rows, columns=_union_in_order(rows))
    return table[[*table.columns.drop("error"), "error"]]


def response_model_defaults(results: Any, workload: str) -> dict[str, Any]:
    """Take the scenario fields a fitted closed MVA response model supplies from ``results``.

    Raises
    ------
    LookupError
        If ``results`` is missing or is not a closed MVA model (it carries no zIIP split).
    """
    missing = [name for name in RESPONSE_MODEL_FIELDS if not hasattr(results, name)]
    if results is None or missing:
        family = getattr(results, "family", "no response model")
        lacking = ", ".join(missing or RESPONSE_MODEL_FIELDS)
        raise LookupError(f"workload {workload!r}: the champion response model is {family}, not a "
                          f"closed MVA model, so it has no {lacking}")
    return {name: _plain(getattr(results, name)) for name in RESPONSE_MODEL_FIELDS}


def scenario_columns(scenario: SimScenario) -> dict[str, Any]:
    """Echo the scenario's fields as output columns; the offered open load is ``tps_offered``."""
    values = dataclasses.asdict(scenario)
    return {("tps_offered" if key == "tps" else key): (math.nan if value is None else value)
            for key, value in values.items()}


def mean_and_t_interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean of replication results and its Student-t interval (NaN bounds with one replication)."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2 or not np.isfinite(mean):
        return mean, math.nan, math.nan
    half = stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return mean, mean - half, mean + half


def _union_in_order(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for row in rows for key in row))


def _plain(value: Any) -> Any:
    """Turn numpy scalars from a fitted model into the Python numbers SimScenario accepts."""
    return value.item() if isinstance(value, np.generic) else value
