"""SMF records dated 1900-1969 are read as IBM's date format says, not quarantined as damage (#35 item 7).

SMFxDTE is packed ``0cyydddF``, c = 0 for 19yy (reference smf-notes section 1.4): 1950 is ``0050001F``.
Framing's anchors need a date from 1970 on (zero-heavy data passes for 1900 dates), and a dump whose
first 7,305 records were dated 1950-1969 lost them as one stretch, "no SMF record header here". Such
records are now trusted in step (the records around them chain to them); beside damage they are
quarantined with a reason that says why and how many headers dated so were set aside.
"""

from __future__ import annotations

import datetime as dt

import pytest

from kneecap.smf.reader import decode_file
from tests.smf import synth

OWN = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 300, 590)])


def _record(day: dt.date) -> bytes:
    return synth.record_70_1("SYSA", "PLEX1", dt.datetime.combine(day, dt.time(12)), 900.0, [OWN], 1, ("CP",))


def _days(first: dt.date, n: int) -> list[bytes]:
    return [_record(first + dt.timedelta(days=i)) for i in range(n)]


def test_the_date_is_packed_as_ibm_documents_it():
    assert synth.pack_date(dt.date(1950, 1, 1)) == bytes.fromhex("0050001F")
    assert synth.pack_date(dt.date(2026, 3, 1)) == bytes.fromhex("0126060F")


@pytest.mark.parametrize("frame", [synth.frame_rdw, synth.frame_bdw])
def test_records_dated_before_1970_are_read(tmp_path, frame):
    # a dump starting in 1950 and running into 1970: every record, both framings
    records = _days(dt.date(1950, 1, 1), 40) + _days(dt.date(1969, 12, 20), 30)
    path = tmp_path / "old.smf"
    path.write_bytes(frame(records))
    result = decode_file(path)
    assert result.quarantine.empty, result.quarantine["reason"].tolist()
    years = result.smf70_cpu["interval_start_at"].dt.year
    assert len(result.smf70_cpu) == len(records)
    assert years.min() == 1950 and years.max() == 1970 and (years < 1970).sum() == 40 + 12


def test_a_record_dated_before_1970_beside_damage_says_so(tmp_path):
    # 1980, then two records of 1960 of which the second runs into junk, then 1980 again: the first
    # 1960 record leads to another header and is read; the second leads nowhere and is set aside
    # with the junk, the reason naming its date and counting the headers dated so
    records = [_record(dt.date(1980, 1, 1)), _record(dt.date(1960, 5, 1)), _record(dt.date(1960, 5, 2))]
    tail = [_record(dt.date(1980, 1, 2)), _record(dt.date(1980, 1, 3)), _record(dt.date(1980, 1, 4))]
    path = tmp_path / "damaged.smf"
    path.write_bytes(synth.frame_rdw(records) + b"\xee" * 37 + synth.frame_rdw(tail))
    result = decode_file(path)
    read = result.smf70_cpu["interval_start_at"].dt.date.tolist()
    assert dt.date(1960, 5, 1) in read and dt.date(1960, 5, 2) not in read
    assert len(read) == len(records) - 1 + len(tail)
    (reason,) = result.quarantine["reason"].tolist()
    assert "a record header dated before 1970 (SMFxDTE 0060123F" in reason
    assert "headers dated 1900-1969 in the bytes set aside: 1" in reason


def test_records_dated_before_1970_after_junk_are_where_framing_starts(tmp_path):
    # three stray bytes, then records of 1960 that chain: framing starts at the first of them
    path = tmp_path / "junk.smf"
    path.write_bytes(b"\x01\x02\x03" + synth.frame_rdw(_days(dt.date(1960, 1, 1), 20) + _days(dt.date(1980, 1, 1), 5)))
    result = decode_file(path)
    assert len(result.smf70_cpu) == 25
    assert result.quarantine["bytes"].tolist() == [3]


def test_records_dated_before_1970_that_do_not_chain_before_the_first_chain_are_counted(tmp_path):
    # two 1960 records between junk: no chain of three, so framing starts at the 1980 records and
    # the stretch set aside says how many headers dated before 1970 it holds
    path = tmp_path / "junk.smf"
    path.write_bytes(b"\x01\x02\x03" + synth.frame_rdw(_days(dt.date(1960, 1, 1), 2)) + b"\xee" * 21
                     + synth.frame_rdw(_days(dt.date(1980, 1, 1), 5)))
    result = decode_file(path)
    assert len(result.smf70_cpu) == 5
    (reason,) = result.quarantine["reason"].tolist()
    assert reason.endswith("where records first chain; record headers dated 1900-1969 in it: 2")
