r"""SMF record type 123 subtype 1 version 2 - z/OS Connect API provider requests, one row each.

z/OS Connect's audit interceptor writes SMF 123 (subsystem id ``ZCON``). Subtype 1 version 2
("API provider data") holds **many requests per record**: the server buffers request data
sections and writes the record when 20 requests are collected, when
``apiProviderMaxDelay`` expires or at server shutdown. Structure:

1. standard SMF header (24 bytes with the RDW);
2. SMF 123 header extension: ``SMF123_SUBTYPE_VERSION`` (4 bytes at 24), the number of
   triplets (1 byte at 28) and the record offset of the first triplet (1 byte at 29);
3. triplets (offset 4 / length 2 / number 2, offsets from the RDW): the server section, then
   the request data sections;
4. one server section (system, sysplex, server job name and id, server version);
5. ``number`` request data sections of ``length`` bytes each.

Each request data section gives API name/version, service name/version, HTTP method and
status, request and response payload lengths and four STCKE timestamps (16-byte extended TOD
clock, UTC): z/OS Connect entry and exit, and request sent to / response received from the
system of record (SOR). Following IBM Z Operational Log and Data Analytics (record
``SMF123_01_V2``):

.. math::

    \text{elapsed\_ms} = (T_{ZC\,exit} - T_{ZC\,entry}) / 10^3,\qquad
    \text{sor\_ms} = (T_{SOR\,recv} - T_{SOR\,sent}) / 10^3

with :math:`T` in microseconds (STCKE bits 0-63 of the TOD clock shifted right by 12, plus the
epoch index x 2^52). A zero SOR timestamp means the request never reached a SOR: ``sor_ms`` is
NaN then. Timestamps are naive **UTC** (the TOD clock), unlike the local SMF header time.

Not decoded, never silently dropped: subtype 2 (API requester), whose request data layout we
could not find in a public source, is not registered, so the reader counts it as undecoded;
subtype 1 version 1 records (one request per record, an incompatible layout - IBM: "version 2
records are not a compatible extension of the version 1 records") are quarantined with the
reason "version 1 is not decoded".

Offsets of the request data section are those of IBM's table, as transcribed in the C mapping
``src/t123/smf123.h`` of ibm-messaging/mq-smf-csv (EPL-1.0, written from the IBM page);
identity and user-name fields (user, mapped user, client IP, request headers) are deliberately
not decoded: capacity planning needs none of them.

References
----------
IBM, *z/OS Connect* documentation, "API provider data from SMF type 123 subtype 1 version 2
records" (monitoring/smf_provider_v2) and "Configuring the audit interceptor".
IBM Z Operational Log and Data Analytics 5.1, "SMF123_01_V2 record type" (ELAPSED_TIME).
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from kneecap.smf.codecs import STCK_EPOCH
from kneecap.smf.framing import SMFDataError
from kneecap.smf.header import HEADER_LEN_SUBTYPES, TRIPLET
from kneecap.smf.layout import Field, Layout

__all__ = [
    "HEADER_123",
    "SERVER_123_V2",
    "REQUEST_123_S1_V2",
    "TABLE",
    "COLUMNS",
    "Type123Provider",
    "decode_record",
    "stcke_us",
]

TABLE = "smf123_request"

_SRC = "IBM z/OS Connect, 'API provider data from SMF type 123 subtype 1 version 2 records'"

HEADER_123 = Layout(
    "SMF 123 header + header extension",
    [
        Field("system_id", 14, 4, "ebcdic", "SMF123_SID", "system id (SMFPRMxx SID)"),
        Field("subsystem_id", 18, 4, "ebcdic", "SMF123_SSI", "subsystem id 'ZCON'"),
        Field("subtype", 22, 2, "u", "SMF123_SUBTYPE", "1 = API provider, 2 = API requester"),
        Field("version", 24, 4, "u", "SMF123_SUBTYPE_VERSION", "record version (1 or 2)"),
        Field("triplet_count", 28, 1, "u", "SMF123_TRIPLET_COUNT", "number of triplets"),
        Field("triplet_offset", 29, 1, "u", "SMF123_TRIPLET_OFFSET",
              "record offset of the first triplet"),
    ],
    source=_SRC + ", 'Standard SMF header' and 'SMF type 123 header extension'",
)

SERVER_123_V2 = Layout(
    "SMF 123 v2 server section",
    [
        Field("version", 0, 1, "u", "SMF123_SERVER_SECT_VERSION", "server section version"),
        Field("system_name", 4, 8, "ebcdic", "SMF123_SERVER_SYSTEM", "system name"),
        Field("sysplex", 12, 8, "ebcdic", "SMF123_SERVER_SYSPLEX", "sysplex name"),
        Field("job_id", 20, 8, "ebcdic", "SMF123_SERVER_JOBID", "server JES job id"),
        Field("job_name", 28, 8, "ebcdic", "SMF123_SERVER_JOBNAME", "server job name"),
        Field("server_version", 172, 8, "ebcdic", "SMF123_SERVER_VERSION",
              "z/OS Connect server version"),
    ],
    source=_SRC + ", 'Server section'",
)

REQUEST_123_S1_V2 = Layout(
    "SMF 123.1 v2 request data section",
    [
        Field("data_version", 0, 1, "u", "SMF123S1_VERSION", "request data section version"),
        Field("request_type", 1, 1, "u", "SMF123S1_REQ_TYPE", "request type"),
        Field("http_status", 2, 2, "u", "SMF123S1_HTTP_RESP_CODE", "HTTP response code"),
        Field("api", 128, 64, "ebcdic", "SMF123S1_API_NAME", "API name"),
        Field("api_version", 192, 8, "ebcdic", "SMF123S1_API_VERSION", "API version"),
        Field("service", 200, 64, "ebcdic", "SMF123S1_SERVICE_NAME", "service name"),
        Field("service_version", 264, 8, "ebcdic", "SMF123S1_SERVICE_VERSION",
              "service version"),
        Field("method", 272, 8, "ebcdic", "SMF123S1_REQ_METHOD", "HTTP method"),
        Field("req_bytes", 664, 4, "u", "SMF123S1_REQ_PAYLOAD_LEN", "request payload, bytes"),
        Field("resp_bytes", 668, 4, "u", "SMF123S1_RESP_PAYLOAD_LEN", "response payload, bytes"),
        Field("zc_entry", 672, 16, "raw", "SMF123S1_TIME_ZC_ENTRY", "entry to z/OS Connect, STCKE"),
        Field("zc_exit", 688, 16, "raw", "SMF123S1_TIME_ZC_EXIT", "exit from z/OS Connect, STCKE"),
        Field("sor_sent", 704, 16, "raw", "SMF123S1_TIME_SOR_SENT", "request sent to SOR, STCKE"),
        Field("sor_recv", 720, 16, "raw", "SMF123S1_TIME_SOR_RECV",
              "response received from SOR, STCKE"),
        Field("sp_name", 736, 16, "ebcdic", "SMF123S1_SP_NAME", "service provider name"),
        Field("sor_identifier", 784, 64, "ebcdic", "SMF123S1_SOR_IDENTIFIER",
              "SOR identifier (e.g. CICS APPLID)"),
        Field("request_id", 976, 8, "raw", "SMF123S1_REQ_ID", "request id"),
    ],
    source=_SRC + ", 'Request data section'",
)

#: Columns of ``smf123_request`` in order.
COLUMNS: tuple[str, ...] = (
    "system_id",
    "system_name",
    "sysplex",
    "server_job_name",
    "server_job_id",
    "subtype",
    "api",
    "api_version",
    "service",
    "service_version",
    "method",
    "http_status",
    "request_type",
    "req_bytes",
    "resp_bytes",
    "zc_entry_at",
    "zc_exit_at",
    "elapsed_ms",
    "sor_sent_at",
    "sor_recv_at",
    "sor_ms",
    "sp_name",
    "sor_identifier",
    "request_id",
)


def stcke_us(b: bytes) -> int | None:
    r"""Microseconds since 1900-01-01 UTC from a 16-byte STCKE value; ``None`` for all zeros.

    Byte 0 is the epoch index, bytes 1-8 the 64-bit TOD clock (bit 51 = 1 µs), so

    .. math:: t_{\mu s} = \text{TOD} \gg 12 + \text{epoch} \cdot 2^{52}

    Examples
    --------
    The Unix epoch is TOD X'7D91048BCA000000' = 2,208,988,800 s after 1900-01-01:

    >>> stcke_us(bytes.fromhex("00" "7D91048BCA000000") + bytes(7))
    2208988800000000
    >>> stcke_us(bytes(16)) is None
    True
    """
    if len(b) != 16:
        raise SMFDataError(f"STCKE value must be 16 bytes, got {len(b)}")
    if not any(b):
        return None
    return (int.from_bytes(b[1:9], "big") >> 12) + (b[0] << 52)


def _at(us: int | None, *, offset: int) -> _dt.datetime | None:
    if us is None:
        return None
    try:
        return STCK_EPOCH + _dt.timedelta(microseconds=us)
    except OverflowError:
        # a damaged epoch-index byte puts the time beyond year 9999
        raise SMFDataError(f"STCKE time {us} us after 1900 is out of range", offset=offset) \
            from None


def _triplet(rec: bytes, at: int, name: str, layout: Layout) -> tuple[int, int, int]:
    if at + TRIPLET.size > len(rec):
        raise SMFDataError(f"{name} triplet at {at} lies beyond the {len(rec)}-byte record",
                           offset=at)
    off, length, number = TRIPLET.unpack_from(rec, at)
    if number:
        if off < HEADER_LEN_SUBTYPES:
            raise SMFDataError(f"{name} triplet: offset {off} points into the header", offset=at)
        if length < layout.size:
            raise SMFDataError(
                f"{name} triplet: sections are {length} bytes, need at least {layout.size}",
                offset=at,
            )
        if off + length * number > len(rec):
            raise SMFDataError(
                f"{name} triplet: {number} x {length} bytes at {off} run past the end of the "
                f"{len(rec)}-byte record",
                offset=at,
            )
    return off, length, number


def decode_record(rec: bytes, *, codepage: str = "cp037") -> list[dict]:
    """Decode one SMF 123 subtype 1 version 2 record (RDW included): one dict per request.

    Raises
    ------
    SMFDataError
        Not a 123.1 v2 record, or structure inconsistent (triplets outside the record, sections
        too short, exit before entry); ``offset`` is the record offset of the culprit field.
    """
    if len(rec) < HEADER_123.size:
        raise SMFDataError(
            f"SMF 123 record of {len(rec)} bytes is shorter than its {HEADER_123.size}-byte "
            "header and extension",
            offset=0,
        )
    h = HEADER_123.unpack(rec, codepage=codepage)
    if h["subtype"] != 1:
        raise SMFDataError(f"SMF 123 subtype {h['subtype']} is not decoded (API provider = 1)",
                           offset=22)
    if h["version"] != 2:
        raise SMFDataError(
            f"SMF 123.1 version {h['version']} is not decoded (only version 2)", offset=24
        )
    if h["triplet_count"] < 2:
        raise SMFDataError(
            f"SMF 123 v2 needs a server and a request data triplet, count is "
            f"{h['triplet_count']}",
            offset=28,
        )
    t0 = h["triplet_offset"]
    if t0 < HEADER_123.size:
        raise SMFDataError(f"triplet offset {t0} points into the header", offset=29)
    s_off, _, s_num = _triplet(rec, t0, "server", SERVER_123_V2)
    d_off, d_len, d_num = _triplet(rec, t0 + TRIPLET.size, "request data", REQUEST_123_S1_V2)
    if s_num != 1:
        raise SMFDataError(f"server triplet: expected 1 section, found {s_num}", offset=t0)
    server = SERVER_123_V2.unpack(rec, s_off, codepage=codepage)
    rows = []
    for k in range(d_num):
        pos = d_off + k * d_len
        r = REQUEST_123_S1_V2.unpack(rec, pos, codepage=codepage)
        entry, exit_ = stcke_us(r["zc_entry"]), stcke_us(r["zc_exit"])
        if entry is None or exit_ is None:
            raise SMFDataError(f"request {k + 1}: z/OS Connect entry/exit time is zero",
                               offset=pos + 672)
        if exit_ < entry:
            raise SMFDataError(f"request {k + 1}: SMF123S1_TIME_ZC_EXIT is before "
                               "SMF123S1_TIME_ZC_ENTRY", offset=pos + 688)
        sent, recv = stcke_us(r["sor_sent"]), stcke_us(r["sor_recv"])
        sor_ms = (recv - sent) / 1e3 if sent is not None and recv is not None else np.nan
        rows.append(
            {
                "system_id": h["system_id"],
                "system_name": server["system_name"],
                "sysplex": server["sysplex"],
                "server_job_name": server["job_name"],
                "server_job_id": server["job_id"],
                "subtype": h["subtype"],
                "api": r["api"],
                "api_version": r["api_version"],
                "service": r["service"],
                "service_version": r["service_version"],
                "method": r["method"],
                "http_status": r["http_status"],
                "request_type": r["request_type"],
                "req_bytes": r["req_bytes"],
                "resp_bytes": r["resp_bytes"],
                "zc_entry_at": _at(entry, offset=pos + 672),
                "zc_exit_at": _at(exit_, offset=pos + 688),
                "elapsed_ms": (exit_ - entry) / 1e3,
                "sor_sent_at": _at(sent, offset=pos + 704),
                "sor_recv_at": _at(recv, offset=pos + 720),
                "sor_ms": sor_ms,
                "sp_name": r["sp_name"],
                "sor_identifier": r["sor_identifier"],
                "request_id": r["request_id"].hex().upper(),
            }
        )
    return rows


_TIME_COLS = ("zc_entry_at", "zc_exit_at", "sor_sent_at", "sor_recv_at")
_INT_COLS = ("subtype", "http_status", "request_type", "req_bytes", "resp_bytes")
_FLOAT_COLS = ("elapsed_ms", "sor_ms")


def _columns(rows: list[dict]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for c in COLUMNS:
        vals = [r[c] for r in rows]
        if c in _TIME_COLS:
            out[c] = np.array(
                [np.datetime64("NaT") if v is None else v for v in vals], dtype="datetime64[us]"
            )
        elif c in _INT_COLS:
            out[c] = np.array(vals, dtype=np.int64)
        elif c in _FLOAT_COLS:
            out[c] = np.array(vals, dtype=np.float64)
        else:
            out[c] = np.array(vals, dtype=object)
    return out


class Type123Provider:
    """Batch decoder for SMF 123 subtype 1 version 2.

    Register it as ``DECODERS[(123, 1)]`` in :mod:`kneecap.smf.reader`.

    Same interface as :class:`kneecap.smf.type72.Type72Subtype3`:
    ``decode_batch(u8, starts, lengths, *, codepage, system_ids)`` returns
    ``({"smf123_request": columns}, bad)``; a record in ``bad`` contributes no request (a
    record is written as a whole, so a damaged one is quarantined whole).
    """

    record_type = 123
    subtype = 1
    tables = (TABLE,)

    def decode_batch(
        self,
        u8: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        *,
        codepage: str = "cp037",
        system_ids: np.ndarray | None = None,
    ) -> tuple[dict[str, dict[str, np.ndarray]], list[tuple[int, int, str]]]:
        """The ``smf123_request`` columns of the records at ``starts`` and the bad records."""
        rows: list[dict] = []
        bad: list[tuple[int, int, str]] = []
        for i, (s, n) in enumerate(zip(starts.tolist(), lengths.tolist(), strict=True)):
            try:
                rows.extend(decode_record(u8[s : s + n].tobytes(), codepage=codepage))
            except SMFDataError as exc:
                bad.append((i, exc.offset or 0, exc.reason))
        return {TABLE: _columns(rows)}, bad


#: Picked up by :mod:`kneecap.smf.reader` (``PLUGIN_MODULES``). Subtype 2 (API requester) is
#: deliberately absent: the reader counts those records as not decoded.
DECODERS = {(123, 1): Type123Provider()}
