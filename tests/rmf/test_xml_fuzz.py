"""Bounded fuzz campaign of the RMF XML reader (issue #14); ``make fuzz`` runs the long one.

Each input is a real 34-interval CPU report with one mutation (``xml_fuzzing.py`` keeps the ground
truth): it must come through :func:`kneecap.rmf.read_postprocessor` with no exception but
``RMFReportError``, with every interval wholly before the damage read and, when
the damaged document is still well-formed XML, every interval wholly after it too. The number of
examples follows the hypothesis profile (``tests/conftest.py``). Time per input is the campaign's
to hold (``make fuzz``: a hard limit per input, the slowest printed), not a unit test's: a CPU-time
bound here counted the whole process, so work of other threads once failed an input that took 0.09 s.
"""

from __future__ import annotations

import io
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneecap.rmf import RMFReportError, read_postprocessor
from tests.rmf import xml_fuzzing

BASE = xml_fuzzing.Base.load()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(xml_fuzzing.KINDS))
def test_mutated_report_loses_no_intact_interval(seed, kind):
    case = xml_fuzzing.mutate(np.random.default_rng(seed), BASE, kind)
    v = xml_fuzzing.verdict(case, BASE)
    assert v.crash is None, f"{case.log}\n{v.crash}"
    assert v.lost == 0, f"{case.log}: {v.lost} of {v.intact} intact intervals not read ({v.file_error})"


def test_entity_declarations_are_refused_before_they_expand():
    # "billion laughs": 300 bytes of DTD that expand to 1 GB where referenced; found by the campaign
    # (it went past the 1 MiB text limit, which counts input bytes, to 337 MB of memory)
    case = xml_fuzzing.mutate(np.random.default_rng(0), BASE, "entity")
    tracemalloc.start()
    with pytest.raises(RMFReportError, match=r"<stream>: byte \d+: <!DOCTYPE: RMF reports have no document type"):
        read_postprocessor(io.BytesIO(case.data))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 << 20


@pytest.mark.parametrize("text", ["inf", "NaN", "1_000", "1e400"])
def test_numbers_rmf_does_not_write_are_refused(text):
    # Python's float() reads them; RMF prints plain decimals, so a cell holding one is damaged
    head, *intervals = BASE.data.split(b"<postprocessor>")
    intervals[0] = re.sub(rb"(<col>CP</col><col>100\.00</col><col>)[^<]*", rb"\g<1>" + text.encode(), intervals[0],
                          count=1)
    tables = read_postprocessor(io.BytesIO(b"<postprocessor>".join([head, *intervals])))
    assert tables.quarantine["interval"].tolist() == [1]
    assert f"'Time% LPAR Busy': not a {'finite ' if text in ('inf', 'NaN', '1e400') else ''}number" \
        in tables.quarantine["reason"].iloc[0]
