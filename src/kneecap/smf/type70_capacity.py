r"""SMF 70.1 CPU control section: the capacity fields MSU is reckoned from (table ``smf70_capacity``).

One CPU control section per 70.1 record (triplet ``SMF70CCS/CCL/CCN`` at offset 36) carries, for the
image that wrote the record:

* ``SMF70CPA`` - "Physical CPU adjustment factor based on alternate CPU capability. This value is
  replaced by SMF70CPA_actual and SMF70CPA_scaling_factor" (offset 28, 4 bytes binary);
* ``SMF70WLA`` - "Processor capacity available to MVS image measured in MSUs (millions of service
  units) per hour. The value takes into account whether or not the image has a defined capacity
  limit" (offset 32);
* ``SMF70LAC`` - "Long-term average of CPU service (millions of service units). Scope of the value
  depends on bit 3 of SMF70STF" (offset 36): the rolling four-hour average WLM keeps, in MSU/h;
* ``SMF70MCR`` - "CPC model capacity rating associated with the model as identified by SMF70MDL"
  (offset 148), ``SMF70CPA_actual`` (224) and ``SMF70CPA_scaling_factor`` (228).

The adjustment factor is the number of sixteenths of a CPU microsecond per CPU service unit (IBM's
text for the same factor in SMF 30, ``SMF30_RCTPCPUA``: "Adjustment factor for CPU rate (Number of
sixteenths of one CPU microsecond per CPU service unit)"). One second of general-purpose CPU time is
therefore :math:`16 \times 10^6 / A` service units, and

.. math::

    \text{MSU per CPU second} = \frac{16}{A},\qquad
    A = \begin{cases} \text{SMF70CPA\_actual} / \text{SMF70CPA\_scaling\_factor}
                      & \text{if SMF70CPA\_actual} \ne 0 \\
                      \text{SMF70CPA} & \text{otherwise,} \end{cases}

which is IBM SMF Explorer's ``cpu_adjustment_factor_effective`` and the factor in its ``msu_physical``
(``dispatch_time_total * 16 * cpa_scaling_factor_effective / cpu_adjustment_factor_effective * 3.6
/ interval_in_milliseconds``): MSU/h of an interval = CPU seconds x 16 / A x 3600 / interval seconds.
Without a non-zero factor ``msu_per_cpu_s`` is NaN (no MSU can be reckoned, nothing is guessed).

A section shorter than :data:`CONTROL_BASE`'s 40 bytes gives no row; one shorter than
:data:`CONTROL_FULL`'s 232 bytes (a release before ``SMF70CPA_actual``) gives its first fields and
zero for the later ones. RMF broken records repeat the control section: the staging model keeps one
value per interval.

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 70 subtype 1, "CPU control
section" (https://www.ibm.com/docs/en/zos/3.1.0?topic=s1cpia-cpu-control-section: offsets 28, 32,
36 and the field texts quoted above). Offsets 148, 224 and 228: ERBSMFR's ``SMF70CTL`` as transcribed
in franfcwong's SMF70 C header (``smf70mcr``, ``smf70cpa_actual``, ``smf70cpa_scaling_factor``), the
same as kneecap's SMF notes. IBM SMF Explorer, SMF 70 subtype 1 fields ``cpu_adjustment_factor``,
``cpu_adjustment_factor_effective``, ``msu_physical`` (https://ibm.github.io/IBM-SMF-Explorer/).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kneecap.smf.header import read_triplet
from kneecap.smf.layout import Field, Layout

__all__ = ["TABLE", "COLUMNS", "CONTROL_BASE", "CONTROL_FULL", "LAC_EXCLUDES_WAIT", "decode_control",
           "control_columns", "msu_per_cpu_s", "empty_columns"]

TABLE = "smf70_capacity"

CONTROL_BASE = Layout(
    "SMF 70.1 CPU control section (capacity fields of every release)",
    [
        Field("cpu_family", 0, 2, "u", "SMF70MOD", "CPU processor family"),
        Field("stf", 5, 1, "u", "SMF70STF", "flags; x'10' SMF70LAC without CPU wait (bit 3)"),
        Field("cpa", 28, 4, "u", "SMF70CPA", "physical CPU adjustment factor, 1/16 us per SU"),
        Field("wla", 32, 4, "u", "SMF70WLA", "capacity available to the image, MSU/h"),
        Field("lac", 36, 4, "u", "SMF70LAC", "long-term (4-hour) average CPU service, MSU/h"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'CPU control section'",
)

CONTROL_FULL = Layout(
    "SMF 70.1 CPU control section (capacity fields incl. SMF70CPA_actual)",
    [
        *CONTROL_BASE.fields,
        Field("mcr", 148, 4, "u", "SMF70MCR", "CPC model capacity rating, MSU/h"),
        Field("cpa_actual", 224, 4, "u", "SMF70CPA_actual", "physical CPU adjustment factor, scaled"),
        Field("cpa_scaling_factor", 228, 4, "u", "SMF70CPA_scaling_factor", "scaling factor of SMF70CPA_actual"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'CPU control section'; ERBSMFR SMF70CTL",
)

#: SMF70STF bit 3 (x'10', ``SMF70RCU``): "SMF70LAC ... no longer includes CPU wait times".
LAC_EXCLUDES_WAIT = 0x10

#: Columns of ``smf70_capacity`` in order.
COLUMNS: tuple[str, ...] = (
    "system_id", "sysplex", "interval_start_at", "interval_s", "cpu_family", "cpu_adjustment_factor",
    "cpa_actual", "cpa_scaling_factor", "msu_per_cpu_s", "wla_msu_per_h", "lac_msu_per_h",
    "model_capacity_msu_per_h", "is_lac_without_wait",
)
_INT_COLUMNS = ("cpu_family", "cpu_adjustment_factor", "cpa_actual", "cpa_scaling_factor", "wla_msu_per_h",
                "lac_msu_per_h", "model_capacity_msu_per_h")


def msu_per_cpu_s(cpa: np.ndarray, cpa_actual: np.ndarray, cpa_scaling_factor: np.ndarray) -> np.ndarray:
    """Millions of service units per second of general-purpose CPU time: :math:`16 / A` (module docstring).

    Examples
    --------
    >>> msu_per_cpu_s(np.array([0, 200]), np.array([2_304_000, 0]), np.array([10_000, 0])).tolist()
    [0.06944444444444445, 0.08]
    >>> msu_per_cpu_s(np.array([0]), np.array([0]), np.array([0])).tolist()
    [nan]
    """
    cpa, actual, scale = (np.asarray(a, dtype=np.float64) for a in (cpa, cpa_actual, cpa_scaling_factor))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where((actual > 0) & (scale > 0), actual / np.where(scale > 0, scale, 1.0), cpa)
        return np.where(factor > 0, 16.0 / np.where(factor > 0, factor, 1.0), np.nan)


def _derived(raw: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The table's value columns from a section's raw fields (zeros where a field is not in the section)."""
    return {
        "cpu_family": raw["cpu_family"], "cpu_adjustment_factor": raw["cpa"], "cpa_actual": raw["cpa_actual"],
        "cpa_scaling_factor": raw["cpa_scaling_factor"],
        "msu_per_cpu_s": msu_per_cpu_s(raw["cpa"], raw["cpa_actual"], raw["cpa_scaling_factor"]),
        "wla_msu_per_h": raw["wla"], "lac_msu_per_h": raw["lac"], "model_capacity_msu_per_h": raw["mcr"],
        "is_lac_without_wait": (np.asarray(raw["stf"]) & LAC_EXCLUDES_WAIT) != 0,
    }


def decode_control(rec: bytes, keys: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``smf70_capacity`` row of one 70.1 record (none without a CPU control section of 40 bytes).

    ``keys`` holds the row's ``system_id``, ``sysplex``, ``interval_start_at`` and ``interval_s``.
    Raises :class:`~kneecap.smf.framing.SMFDataError` (offset 36) when the section lies outside the
    record.
    """
    t = read_triplet(rec, 36, name="CPU control")
    if t.number < 1 or t.length < CONTROL_BASE.size:
        return []
    layout = CONTROL_FULL if t.length >= CONTROL_FULL.size else CONTROL_BASE
    raw = {k: np.array([v]) for k, v in layout.unpack(rec, t.offset).items()}
    for name in ("mcr", "cpa_actual", "cpa_scaling_factor"):
        raw.setdefault(name, np.zeros(1, dtype=np.int64))
    values = _derived(raw)
    return [{**keys, **{c: values[c][0].item() for c in COLUMNS if c in values}}]


def control_columns(u8: np.ndarray, positions: np.ndarray) -> dict[str, np.ndarray]:
    """The value columns of full-length (:data:`CONTROL_FULL`) CPU control sections at ``positions`` of ``u8``."""
    return _derived(CONTROL_FULL.columns(CONTROL_FULL.gather(u8, positions)))


def empty_columns() -> dict[str, np.ndarray]:
    """Zero-row columns of ``smf70_capacity`` with the dtypes the decoders give."""
    cols: dict[str, np.ndarray] = {c: np.zeros(0, dtype=object) for c in ("system_id", "sysplex")}
    cols["interval_start_at"] = np.zeros(0, dtype="datetime64[us]")
    cols["interval_s"] = np.zeros(0, dtype=np.float64)
    cols.update({c: np.zeros(0, dtype=np.int64) for c in _INT_COLUMNS})
    cols["msu_per_cpu_s"] = np.zeros(0, dtype=np.float64)
    cols["is_lac_without_wait"] = np.zeros(0, dtype=bool)
    return {c: cols[c] for c in COLUMNS}
