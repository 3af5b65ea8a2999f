"""Binary SMF data: framing, codecs, layouts and record-type decoders.

Modules
-------
framing   RDW / BDW / VBS / gzip framing, :class:`SMFDataError` (the one data-error class)
codecs    EBCDIC, packed decimal, SMF date/time, IBM HFP, STCK
layout    record layouts declared as data (``Field``, ``Layout``)
header    standard header, triplets, RMF product section
type70    SMF 70.1 CPU activity -> ``smf70_cpu``
type72    SMF 72.3 workload activity -> ``smf72_workload``
reader    ``decode_file`` and the decoder registry ``DECODERS``

Decoders only: they read an input and return frames. Storing them (Parquet, manifest, lock,
dedup across inputs) is :mod:`kneecap.ingest`'s.
"""

from kneecap.smf.framing import SMFDataError

__all__ = ["SMFDataError"]
