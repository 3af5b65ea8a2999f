"""The pages' inputs: their keys, the workload they follow and open on, the machine they set in words.

Display only: the answers come from :mod:`resources` (cached kneecap calls).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import resources as res
import streamlit as st

from kneecap import processors
from kneecap.modeling import engines


def opening_workload(workloads: list[str], key: str) -> int:
    """The index of the workload the page's choice ``key`` opens on (params.yaml ``desk.default_workload``).

    Where the page does not list it, the first; while the choice is at that opening value (the
    page has just opened) a caption says why.
    """
    index, note = res.params().desk.opening_choice(workloads)
    if note and key not in st.session_state:
        st.caption(note)
    return index


def widget_key(name: str, workload: str) -> str:
    """The key of a page's input for one workload: ``<name>@<workload>``.

    Every input that shapes an answer is keyed by its workload. Forgetting a shared key's value in
    the session is not enough when the workload changes: the browser keeps showing (and sends back
    on the next step of any other input) the value it last had, so the page would show one
    configuration and answer for another. A new key is a new widget, started from the new
    workload's measured configuration; a workload left and chosen again starts afresh, as Streamlit
    forgets the widgets a run did not draw.
    """
    return f"{name}@{workload}"


def follow_workload(page: str, workload: str) -> None:
    """When the page's workload changes, forget the inputs the page had for the previous one.

    Coming back to a workload then starts again from its measured configuration (keys by
    :func:`widget_key`, each starting with ``<page>_``), as a switch to it the first time does.
    """
    marker = f"{page}__workload"
    previous = st.session_state.get(marker)
    if previous not in (None, workload):
        stale = [k for k in st.session_state
                 if isinstance(k, str) and k.startswith(f"{page}_") and k.endswith(f"@{previous}")]
        for k in stale:
            del st.session_state[k]
    st.session_state[marker] = workload


def _plural(n: float, word: str) -> str:
    return f"{n:g} {word}{'' if n == 1 else 's'}"


def configuration_words(n_gcp: float, n_ziip: float | None = None, think_time_ms: float | None = None,
                        other_load: float | None = None) -> str:
    """The machine an answer is for, as its first words: ``'3 GCPs + 1 zIIP, think time 100 ms'``.

    ``n_ziip`` None leaves the zIIPs out (the planner's answer chooses them); ``other_load``: a WLM
    class's other classes' load factor (``"other classes' load x1"``, 1: as measured).
    """
    words = _plural(n_gcp, "GCP") + ("" if n_ziip is None else f" + {_plural(n_ziip, 'zIIP')}")
    if think_time_ms is not None:
        words += f", think time {think_time_ms:g} ms"
    if other_load is not None:
        words += f", other classes' load x{other_load:g}"
    return words


@dataclass(frozen=True)
class EngineChoice:
    """The engines a page's inputs ask for.

    ``engines``: :func:`kneecap.modeling.engines.chosen_engines` as a cache key for ``resources``
    (``()``: the model's own, its measured engines); ``words``: them in words for the answer's
    first line (``''`` for the model's own); ``mt_capacity``: the zIIPs' MT capacity factor given
    (None: not given).
    """

    engines: res.Engines
    words: str
    mt_capacity: float | None


def engine_inputs(page: str, workload: str, measured: Mapping[str, Any], *, smt: bool = True) -> EngineChoice:
    """A GCP's speed as a share of a zIIP's and, with ``smt``, the zIIPs' MT mode and capacity factor.

    The share starts at the model's measured engines (``measured``: its ``measured_engines``, 1 where
    SMF said the engines are alike or said nothing); MT-2 needs the capacity factor RMF reports,
    which has no default (kneecap carries no published range): until it is given the zIIPs stay in
    MT-1 and the page says so.
    """
    start = engines.measured_share(measured)
    columns = st.columns(3 if smt else 1)
    share = columns[0].number_input(
        "GCP speed, share of a zIIP's", 0.01, 1.0, value=float(start), step=0.05, format="%.3f",
        key=widget_key(f"{page}_gcp_share", workload),
        help=f"a sub-capacity GCP runs a share of a zIIP's speed (SMF 72.3 R723NFFS / 256 = zIIP over GCP); "
             f"the model was fitted on {start:.3g}")
    # a class measured in SMT-2 starts at its measured mode and factor (72.3 R723MCFS / 1024)
    measured_mt = int(measured.get("ziip_mt", 1)) == 2
    mt, capacity = (2, float(measured["ziip_mt_capacity"])) if measured_mt else (1, None)
    if smt:
        mt = int(columns[1].selectbox("zIIP MT mode", [1, 2], index=1 if measured_mt else 0,
                                      key=widget_key(f"{page}_ziip_mt", workload),
                                      help="2: the zIIP cores in SMT-2, two threads each"))
        capacity = columns[2].number_input(
            "zIIP MT capacity factor", 1.0, 2.0,
            value=float(measured["ziip_mt_capacity"]) if measured_mt else None, step=0.05, format="%.3f",
            key=widget_key(f"{page}_mt_capacity", workload), placeholder="from RMF, in MT-2",
            help="a core's capacity with both threads busy over MT-1 (RMF CPU Activity, R723MCFS / 1024 in MT-2); "
                 "no published default")
        if mt == 2 and capacity is None:
            st.info("SMT-2 zIIPs need their MT capacity factor: the answers below are for MT-1 until it is given.")
            mt = 1
    chosen = engines.chosen_engines(measured, float(share), ziip_mt=mt, ziip_mt_capacity=capacity)
    words = []
    if not math.isclose(float(share), 1.0):  # the measured sub-capacity engines too: the answer is for them
        words.append(f"GCPs at {100 * float(share):.3g} % of a zIIP's speed")
    if mt == 2:
        words.append(f"zIIPs in SMT-2 (MT capacity factor {capacity:g})")
    return EngineChoice(tuple(sorted(chosen.items())), ", ".join(words),
                        None if capacity is None else float(capacity))


@dataclass(frozen=True)
class ProcessorChoice:
    """A change of processor a page asks about (:mod:`kneecap.processors`).

    ``engines``: the target's engines at the GCP capacity ratio's low end, the published ratio and
    its high end (as :class:`EngineChoice`'s ``engines``); ``words``: the change for the answer's
    first line; ``notes``: the ratios used, their citations and IBM's caveat.
    """

    engines: tuple[res.Engines, res.Engines, res.Engines]
    words: str
    notes: str


def processor_inputs(page: str, workload: str, measured: Mapping[str, Any],
                     mt: Mapping[str, Any]) -> ProcessorChoice | None:
    """A processor change from the published capacities, or None (not asked, or figures that do not compare).

    ``measured``: the model's measured engine speeds (scaled by the ratios); ``mt``: the zIIPs' MT
    mode and capacity factor the page set, kept on the target. The ratio's doubt starts at 5 %: IBM
    prints no precision for these figures, so it is the planner's own and the page says so.
    """
    catalogue = res.processor_catalogue()
    if not st.toggle("Another processor (published capacities)", key=widget_key(f"{page}_processor", workload),
                     help="answer on another processor model or capacity setting: its one-CP capacity from "
                          "IBM's published figures (data/reference/processor_capacity.yaml) scales the engines' "
                          "speed; the band is the envelope over the ratio's doubt"):
        return None
    ids = list(catalogue.processors)
    c1, c2, c3 = st.columns(3)
    source = c1.selectbox("From (the machine measured)", ids, key=widget_key(f"{page}_processor_from", workload))
    target = c2.selectbox("To", ids, index=min(1, len(ids) - 1), key=widget_key(f"{page}_processor_to", workload))
    doubt = c3.number_input("Capacity ratio doubt, +- %", 0.0, 50.0, value=5.0, step=1.0,
                            key=widget_key(f"{page}_processor_doubt", workload),
                            help="IBM prints no precision for these ratios: the doubt is yours (5 % to start)")
    try:
        change = processors.capacity_change(source, target, catalogue)
    except processors.ProcessorError as exc:
        st.error(f"Processor change: {exc}")
        return None
    d = float(doubt) / 100.0
    sets = tuple(tuple(sorted({**change.engines(measured, scale), **mt}.items()))
                 for scale in (1.0 - d, 1.0, 1.0 + d))
    words = f"on {target} (from {source}: GCP capacity x{change.gcp_ratio:.3g}, zIIP x{change.ziip_ratio:.3g})"
    notes = (f"Published one-CP figures, taken per engine, the ratio's doubt +-{float(doubt):g} %: "
             + "; ".join(change.citations) + f". IBM: \"{catalogue.caveat}\" ({catalogue.caveat_citation}).")
    return ProcessorChoice(sets, words, notes)  # type: ignore[arg-type]
