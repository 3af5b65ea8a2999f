"""The pages' inputs: their keys, the workload they follow and open on, the machine they set in words.

Display only: the answers come from :mod:`resources` (cached kneecap calls).
"""

from __future__ import annotations

import resources as res
import streamlit as st


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
