"""Discrete-event simulation of one z/OS LPAR's dispatcher with GCPs and zIIPs (SimPy).

The reference the analytic models in :mod:`kneecap.modeling` are checked against: it dispatches
bursts of CPU work the way IEAOPTxx IIPHONORPRIORITY and ZIIPAWMT describe, instead of assuming a
product-form network. :func:`simulate` runs one :class:`SimScenario` and returns one row of
RMF-style metrics with replication confidence intervals; :func:`simulate_many` a table of them;
:func:`simulate_specs` the rows of a scenarios file, as ``kneecap simulate`` runs it;
:func:`response_quantiles` the quantiles of one replication's response times.

Modules: ``scenario`` (the validated inputs), ``dispatcher`` (the event-driven engine pools and
queues of one replication), ``runner`` (replications, intervals, tables).
"""

from kneecap.simulation.runner import (
    METRICS,
    RESPONSE_MODEL_FIELDS,
    replicate,
    response_model_defaults,
    response_quantiles,
    response_sample,
    simulate,
    simulate_many,
    simulate_specs,
)
from kneecap.simulation.scenario import SimScenario, check_open_load_fits

__all__ = ["METRICS", "RESPONSE_MODEL_FIELDS", "SimScenario", "check_open_load_fits",
           "replicate", "response_model_defaults",
           "response_quantiles", "response_sample", "simulate", "simulate_many", "simulate_specs"]
