r"""The LPAR's engines as SMF measured them: GCP speed relative to a zIIP, and the zIIPs' SMT-2 capacity.

On a sub-capacity processor a zIIP runs at the full speed of the machine and a GCP at a fraction
of it; RMF normalises zIIP time to CP time with the zIIP normalisation factor, R723NFFS in SMF
72.3 (SMF70NRM in 70.1): "multiply with R723NFFS and divide by 256 to calculate the CP equivalent
value". The decoder keeps both times per class period (:func:`kneecap.smf.type72.derive`:
``ziip_s``, zIIP engine seconds, and ``ziip_cp_equiv_s``), so

.. math:: \frac{v_Z}{v_G} = \frac{\text{NFFS}}{256} = \frac{t_{IIP,CP\,equiv}}{t_{IIP}}

and with CPU demand in CP-equivalent ms (as RMF's APPL% CP and kneecap's marts give it) a GCP has
speed 1 and a zIIP ``NFFS / 256``.

With zIIPs in MT-2 (SMT) RMF reports per interval the MT maximum capacity factor of the zIIPs,
R723MCFS / 1024 (SMF70MCFS in 70.1): the capacity of a core with both threads busy over its
capacity in MT-1. The decoder divides zIIP time by it for APPL% IIP (``appl_iip_pct = 100
ziip_s / (T MCFS / 1024)``), so it is recovered as ``100 ziip_s / (T appl_iip_pct)``. kneecap
carries no published range for it: an MT-2 scenario takes the factor measured on the LPAR
(:func:`mt_capacity_from_smf72`) or one the planner gives.

A WLM class whose intervals ran SMT-2 is fitted so (:func:`fit_engines`): the marts carry the
factor per interval (``ziip_mt_capacity``, null in MT-1), ``n_ziip`` counts cores (PR/SM's
logical processors are cores with multithreading) and the zIIP busy is per thread (the threads'
MVS busy). zIIP time is MT-1 equivalent, so with :math:`CF` the factor and :math:`n` cores

.. math:: W_{IIP} = \text{APPL\% IIP} \cdot CF, \qquad
          u_{thread} = \frac{\text{APPL\% IIP}}{n}

are the class's zIIP work in MT-1 engine-% and its busy on each of the :math:`2 n` threads of
:math:`CF / 2` a core (:func:`row_ziip_mt_capacity`).

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3, workload manager
control section: R723NFFS, R723MCFS; record type 70 subtype 1, CPU control section: SMF70NRM,
SMF70MCFS; "PR/SM logical processor data section" (a logical core with multithreading), "CPU
data section" (per logical processor). IBM, *z/OS RMF Report Analysis*, CPU Activity report (MT
capacity factor, productivity) and Workload Activity report (APPL% IIP, normalised service).
Precisely, *Syncsort Capacity Management* installation guide, "Working with SMT data" (zIIP times
as if in MT-1, divided by the zIIP MCF as RMF's Postprocessor does).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class MeasuredEngines:
    """Engine speeds and SMT-2 capacity measured on an LPAR (``None``: SMF did not say).

    ``gcp_speed`` / ``ziip_speed`` are relative to a CP-equivalent ms (a GCP is 1);
    ``ziip_mt_capacity`` the zIIPs' MT maximum capacity factor where they ran in MT-2;
    ``intervals`` the class-period rows the figures come from.
    """

    gcp_speed: float
    ziip_speed: float | None
    ziip_mt_capacity: float | None
    intervals: int

    def dispatch_options(self) -> dict[str, float | int]:
        """The keywords of :class:`kneecap.modeling.dispatch.Dispatch` these measurements give."""
        options: dict[str, float | int] = {"gcp_speed": self.gcp_speed}
        if self.ziip_speed is not None:
            options["ziip_speed"] = self.ziip_speed
        if self.ziip_mt_capacity is not None:
            options.update(ziip_mt=2, ziip_mt_capacity=self.ziip_mt_capacity)
        return options


def speeds_from_smf72(table: pd.DataFrame) -> MeasuredEngines:
    r"""Engine speeds and zIIP MT capacity from decoded SMF 72.3 class periods (``smf72_workload``).

    ``table`` needs ``ziip_s`` and ``ziip_cp_equiv_s``; for the MT capacity also ``interval_s``
    and ``appl_iip_pct``. Only rows with zIIP time say anything: the zIIP speed is the ratio of the
    sums, :math:`\sum t_{CP\,equiv} / \sum t_{IIP}` (NFFS / 256 where it is the same all along),
    and the MT capacity factor the median over those rows of ``100 ziip_s / (T appl_iip_pct)``,
    reported only where it is above 1 (MT-1 intervals record 1024, or 0 where MT is not active).

    Raises
    ------
    ValueError
        When a needed column is missing.
    """
    missing = [c for c in ("ziip_s", "ziip_cp_equiv_s") if c not in table.columns]
    if missing:
        raise ValueError(f"speeds from SMF 72.3 need the column(s) {', '.join(missing)} (decoded smf72_workload)")
    ziip = pd.to_numeric(table["ziip_s"], errors="coerce").to_numpy(float)
    equiv = pd.to_numeric(table["ziip_cp_equiv_s"], errors="coerce").to_numpy(float)
    rows = np.isfinite(ziip) & np.isfinite(equiv) & (ziip > 0)
    ziip_speed = float(equiv[rows].sum() / ziip[rows].sum()) if rows.any() else None
    mt: float | None = None
    if rows.any() and {"interval_s", "appl_iip_pct"} <= set(table.columns):
        t = pd.to_numeric(table["interval_s"], errors="coerce").to_numpy(float)[rows]
        appl = pd.to_numeric(table["appl_iip_pct"], errors="coerce").to_numpy(float)[rows]
        ok = np.isfinite(t) & np.isfinite(appl) & (t > 0) & (appl > 0)
        if ok.any():
            factor = float(np.median(100.0 * ziip[rows][ok] / (t[ok] * appl[ok])))
            mt = factor if factor > 1.0 + 1e-9 else None
    return MeasuredEngines(1.0, ziip_speed, mt, int(rows.sum()))


def fit_engines(table: pd.DataFrame) -> dict[str, float]:
    """The engines a WLM class's intervals ran on, as :class:`~kneecap.modeling.dispatch.Dispatch` keywords.

    ``{"gcp_speed": 1, "ziip_speed": NFFS / 256}`` (:func:`speeds_from_smf72` over ``table``'s
    ``ziip_s`` and ``ziip_cp_equiv_s``, as ``fct_measurements`` carries them) where a zIIP ran
    at another speed than a GCP, so that the fit solves on those engines with the demand in
    CP-equivalent ms; where the zIIPs ran SMT-2 (:func:`measured_mt_capacity`) also
    ``"ziip_mt": 2, "ziip_mt_capacity": CF`` (and the speeds, 1 where alike), so that it solves on
    ``n_ziip`` cores of two threads each; ``{}`` where they are alike in MT-1 (NFFS 256) or the
    rows do not say (report tables, RMF reports), and the fit is the one on engines alike.
    """
    engines: dict[str, float] = {}
    if {"ziip_s", "ziip_cp_equiv_s"} <= set(table.columns):
        speed = speeds_from_smf72(table).ziip_speed
        if speed is not None and speed != 1.0:
            engines = {"gcp_speed": 1.0, "ziip_speed": speed}
    capacity = measured_mt_capacity(table)
    if capacity is not None:
        engines = {"gcp_speed": 1.0, "ziip_speed": engines.get("ziip_speed", 1.0), "ziip_mt": 2,
                   "ziip_mt_capacity": capacity}
    return engines


def measured_mt_capacity(table: pd.DataFrame) -> float | None:
    r"""The zIIPs' MT capacity factor where a class's intervals ran SMT-2, from ``ziip_mt_capacity``.

    ``fct_measurements`` carries R723MCFS / 1024 per interval where it is above 1 (the zIIPs in
    MT-2), null in MT-1. The factor is the median over the rows with zIIP time that carry one,
    where those are at least half of the rows with zIIP time; ``None`` otherwise (MT-1, or a history
    mostly in MT-1: the fit is then the MT-1 one, and its MT-2 intervals count as MT-1 engines).
    """
    if "ziip_mt_capacity" not in table.columns:
        return None
    cf = pd.to_numeric(table["ziip_mt_capacity"], errors="coerce").to_numpy(float)
    if "ziip_s" in table.columns:
        ziip = pd.to_numeric(table["ziip_s"], errors="coerce").to_numpy(float)
        worked = np.isfinite(ziip) & (ziip > 0)
    else:
        worked = np.ones(len(cf), dtype=bool)
    mt2 = worked & np.isfinite(cf) & (cf > 1.0)
    if not worked.any() or 2 * int(mt2.sum()) < int(worked.sum()):
        return None
    return float(np.median(cf[mt2]))


def row_ziip_mt_capacity(table: pd.DataFrame) -> np.ndarray:
    r"""Each row's zIIP MT capacity factor :math:`CF` (R723MCFS / 1024 where SMT-2, else 1).

    RMF divides zIIP time, MT-1 equivalent, by it for APPL% IIP (:mod:`kneecap.smf.type72`), so
    APPL% IIP times :math:`CF` is the zIIP work in MT-1 units again, and APPL% IIP over ``n_ziip``
    cores is the busy of each of their :math:`2 n` threads (each at :math:`CF / 2` of a core).
    """
    if "ziip_mt_capacity" not in table.columns:
        return np.ones(len(table))
    cf = pd.to_numeric(table["ziip_mt_capacity"], errors="coerce").to_numpy(float)
    return np.where(np.isfinite(cf) & (cf > 1.0), cf, 1.0)


def row_ziip_speeds(table: pd.DataFrame) -> np.ndarray:
    r"""Each row's zIIP speed over a GCP's, NFFS / 256 = ``ziip_cp_equiv_s / ziip_s``.

    Where a row has no zIIP time (or the columns are absent) the rows' :func:`fit_engines` speed,
    1 where there is none: APPL% IIP times it is the zIIP time in CP-equivalent units, as IBM's
    R723CSUP note says ("multiply with R723NFFS and divide by 256 to calculate the CP equivalent").
    """
    n = len(table)
    if not {"ziip_s", "ziip_cp_equiv_s"} <= set(table.columns):
        return np.ones(n)
    ziip = pd.to_numeric(table["ziip_s"], errors="coerce").to_numpy(float)
    equiv = pd.to_numeric(table["ziip_cp_equiv_s"], errors="coerce").to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = equiv / ziip
    ok = np.isfinite(ratio) & (ziip > 0)
    return np.where(ok, ratio, fit_engines(table).get("ziip_speed", 1.0))


def gcp_share_engines(gcp_share: float, measured: Mapping[str, Any], **mt: Any) -> dict[str, Any]:
    """Dispatch keywords for GCPs at ``gcp_share`` of a zIIP's speed, the zIIPs at their measured speed.

    ``measured``: the engines the model was fitted on (``{}``: alike, speed 1); the zIIP keeps its
    speed (a sub-capacity setting slows the GCPs, the zIIPs run at the machine's full speed) and
    the GCP runs ``gcp_share`` of it. ``mt``: ``ziip_mt`` / ``ziip_mt_capacity`` when the zIIPs
    run SMT-2. The measured engines' own share gives them back.
    """
    ziip = float(measured.get("ziip_speed", 1.0))
    gcp_share_of_ziip_speed(gcp_share * ziip, ziip)  # checks the share
    return {"gcp_speed": gcp_share * ziip, "ziip_speed": ziip, **mt}


def measured_share(measured: Mapping[str, Any]) -> float:
    """A GCP's speed as a share of a zIIP's on the engines a model was fitted on (1: alike or not recorded)."""
    return gcp_share_of_ziip_speed(float(measured.get("gcp_speed", 1.0)), float(measured.get("ziip_speed", 1.0)))


def chosen_engines(measured: Mapping[str, Any], gcp_share: float, *, ziip_mt: int = 1,
                   ziip_mt_capacity: float | None = None) -> dict[str, Any]:
    """The engines a desk's inputs ask for, as :func:`on_engines`' keywords; ``{}`` where they are the measured ones.

    ``gcp_share``: a GCP's speed as a share of a zIIP's (:func:`gcp_share_engines`, the zIIP at its
    measured speed); ``ziip_mt`` 2 takes the zIIPs in SMT-2 at ``ziip_mt_capacity``, which has no
    default (kneecap carries no published range for it). A class measured in SMT-2
    (:func:`fit_engines`) asked ``ziip_mt`` 1 answers on MT-1 zIIPs (``"ziip_mt": 1``), asked its
    own mode and factor on its measured engines.

    Raises
    ------
    ValueError
        For SMT-2 without a capacity factor, or a share that is not a speed.
    """
    if int(ziip_mt) == 2 and ziip_mt_capacity is None:
        raise ValueError("zIIPs in SMT-2 need their MT capacity factor (RMF CPU Activity report, R723MCFS / 1024)")
    mt: dict[str, Any] = {"ziip_mt": 2, "ziip_mt_capacity": float(ziip_mt_capacity or 0.0)} if int(ziip_mt) == 2 else {}
    measured_mt = int(measured.get("ziip_mt", 1)) == 2
    same_mt = (not mt and not measured_mt) or (bool(mt) and measured_mt and math.isclose(
        mt["ziip_mt_capacity"], float(measured["ziip_mt_capacity"]), rel_tol=1e-9))
    if same_mt and math.isclose(float(gcp_share), measured_share(measured), rel_tol=1e-9):
        return {}
    return gcp_share_engines(float(gcp_share), measured, **(mt or ({"ziip_mt": 1} if measured_mt else {})))


def mt_capacity_from_smf72(table: pd.DataFrame) -> float | None:
    """The zIIPs' measured MT-2 capacity factor (:func:`speeds_from_smf72`), ``None`` where they ran MT-1."""
    return speeds_from_smf72(table).ziip_mt_capacity


#: The scenario keys that describe the LPAR's engines (:class:`kneecap.modeling.dispatch.Dispatch`).
ENGINE_KEYS = ("gcp_speed", "ziip_speed", "ziip_mt", "ziip_mt_capacity")


def on_engines(results: Any, **engines: Any) -> Any:
    """A dispatch model's results on an LPAR whose engines are not all alike: speeds, zIIPs in SMT-2.

    ``engines`` are :class:`~kneecap.modeling.dispatch.Dispatch`'s keywords ``gcp_speed``,
    ``ziip_speed``, ``ziip_mt``, ``ziip_mt_capacity`` (checked there); every prediction, curve,
    knee and zIIP plan of the copy solves on those engines. The fitted demand is in the unit the
    speeds are relative to (CP-equivalent ms with ``gcp_speed`` 1, as RMF reports it). A WLM
    class's model (``open_dispatch``) takes them too, its other classes' busy carried onto the
    engines asked (:func:`background_scale`: per zIIP thread in SMT-2); fitted on engines not
    alike (:func:`fit_engines`) it answers on its measured engines, and the keys given here
    replace theirs (:func:`gcp_share_engines` keeps the measured zIIP speed).
    """
    from kneecap.modeling.dispatch import Dispatch

    names = set() if isinstance(results, type) or not dataclasses.is_dataclass(results) else {
        f.name for f in dataclasses.fields(results)}
    if "_engines" not in names:
        raise ValueError(f"{getattr(results, 'family', type(results).__name__)}: engine speeds and SMT-2 zIIPs are "
                         "answered by the dispatch models only (closed_mva, open_dispatch)")
    engines = {k: (int(v) if k == "ziip_mt" else float(v)) for k, v in engines.items()}
    Dispatch(n_gcp=1, n_ziip=1, **engines)  # the keywords and values, checked once here
    fresh: dict[str, Any] = {"_cache": {}} if "_cache" in names else {}  # a copy solves afresh
    return dataclasses.replace(results, _engines=engines, **fresh)


def engine_costs(row: Mapping[str, Any], engines: Mapping[str, Any]) -> dict[str, float]:
    """A scenario answer's CPU per transaction in engine ms and in CP-equivalent ms (``cpu_*_ms_per_tran``).

    From the answer's ``demand_ms_per_tran``, ``ziip_eligible_fraction`` and the share of eligible
    work on GCPs (:func:`kneecap.modeling.dispatch.cost_per_tran`).
    """
    from kneecap.modeling.dispatch import Dispatch, cost_per_tran

    n_ziip = int(row.get("n_ziip", 1) or 0)
    dispatch = Dispatch(n_gcp=1, n_ziip=max(n_ziip, 1), **engines)
    spill = float(row["ziip_eligible_on_gcp_share_pct"]) / 100.0 if n_ziip > 0 else 1.0
    cost = cost_per_tran(float(row["demand_ms_per_tran"]), float(row["ziip_eligible_fraction"]),
                         spill if math.isfinite(spill) else 0.0, dispatch)
    return {f"cpu_{key}_per_tran": value for key, value in cost.items()}


def background_scale(measured: Mapping[str, Any], answering: Mapping[str, Any]) -> tuple[float, float, float]:
    r"""Factors that carry other classes' busy engines measured on ``measured`` onto the engines ``answering``.

    The other classes' work is what the measured engines did: ``E_G v_G`` on the GCPs and
    ``E_Z v_Z CF`` on the zIIPs (``E`` busy engines, ``v`` the measured speeds, ``CF`` the
    measured MT capacity factor: in SMT-2 ``E_Z`` is the busy per thread times the cores, each
    core doing ``CF`` MT-1 engines of work when both threads are busy; 1 in MT-1). On the engines
    answered on it keeps ``E_G v_G / v_G'`` GCPs busy, and on ``n`` zIIP cores of speed ``v_Z'``
    in SMT-2 at capacity factor ``CF'`` (``2 n`` threads of ``v_Z' CF' / 2``) each thread
    ``E_Z v_Z CF / (n v_Z' CF')`` busy, so per core

    .. math:: s_G = \frac{v_G}{v_G'}, \qquad s_Z = \frac{v_Z\,CF}{v_Z'\,CF'}, \qquad
              s_{Z \to G} = \frac{v_Z\,CF}{v_G'}

    with ``CF'`` 1 in MT-1; ``s_{Z->G}`` carries their zIIP work onto GCPs where no zIIP is online.
    ``(1, 1, CF)`` on the measured engines, ``(1, 1, 1)`` on engines alike in MT-1.
    """
    v_g, v_z = float(measured.get("gcp_speed", 1.0)), float(measured.get("ziip_speed", 1.0))
    a_g, a_z = float(answering.get("gcp_speed", 1.0)), float(answering.get("ziip_speed", 1.0))
    cf_measured = float(measured["ziip_mt_capacity"]) if int(measured.get("ziip_mt", 1)) == 2 else 1.0
    cf = float(answering["ziip_mt_capacity"]) if int(answering.get("ziip_mt", 1)) == 2 else 1.0
    return v_g / a_g, v_z * cf_measured / (a_z * cf), v_z * cf_measured / a_g


def answering_engines(measured: Mapping[str, Any], asked: Mapping[str, Any]) -> dict[str, Any]:
    """The engines a model fitted on ``measured`` answers on when ``asked`` (:func:`on_engines`' keys) goes over them.

    A key asked replaces the measured one; asking ``ziip_mt`` 1 of a model measured in SMT-2 drops
    its capacity factor (MT-1 has none).
    """
    engines = {**measured, **asked}
    if int(engines.get("ziip_mt", 1)) == 1:
        engines.pop("ziip_mt_capacity", None)
    return engines


def measured_engines_lines(measured: Mapping[str, Any]) -> list[str]:
    """The engines a class was fitted on, as its summary's line: speeds (NFFS / 256) and SMT-2 (R723MCFS / 1024).

    No line for ``{}`` (engines alike in MT-1).
    """
    if not measured:
        return []
    words = [f"a zIIP at {float(measured.get('ziip_speed', 1.0)):.4g}x a GCP's speed (NFFS / 256)"]
    if int(measured.get("ziip_mt", 1)) == 2:
        words.append(f"zIIP cores in SMT-2 at MT capacity factor {float(measured['ziip_mt_capacity']):.4g} "
                     "(R723MCFS / 1024)")
    return ["  engines (SMF 72.3)     " + ", ".join(words) + "; demand in CP-equivalent ms"]


def engine_words(engines: Mapping[str, Any]) -> str:
    """The engines an answer is on, in words: ``'GCP at 40 % of zIIP speed, zIIPs in SMT-2 (MT capacity factor 1.3)'``.

    ``''`` for engines alike in MT-1 (``{}``, or speeds equal).
    """
    words = []
    share = gcp_share_of_ziip_speed(float(engines.get("gcp_speed", 1.0)), float(engines.get("ziip_speed", 1.0)))
    if not math.isclose(share, 1.0):
        words.append(f"GCP at {100.0 * share:.3g} % of zIIP speed")
    if int(engines.get("ziip_mt", 1)) == 2:
        words.append(f"zIIPs in SMT-2 (MT capacity factor {float(engines['ziip_mt_capacity']):g})")
    return ", ".join(words)


def gcp_share_of_ziip_speed(gcp_speed: float, ziip_speed: float) -> float:
    """A GCP's speed as a share of a zIIP's (0.4: a sub-capacity GCP at 40 % of zIIP speed)."""
    if not (math.isfinite(gcp_speed) and math.isfinite(ziip_speed) and gcp_speed > 0 and ziip_speed > 0):
        raise ValueError(f"speeds must be > 0, got GCP {gcp_speed}, zIIP {ziip_speed}")
    return gcp_speed / ziip_speed
