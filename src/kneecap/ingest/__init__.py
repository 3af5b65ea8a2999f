"""Ingest: SMF dumps and RMF reports into an ingest folder of decoded Parquet (the I/O of decode).

The decoders (:mod:`kneecap.smf`, :mod:`kneecap.rmf`) turn bytes into frames and write nothing;
this package is the one place that decides what an input is, stores the frames and remembers
what was stored, for SMF and RMF alike.

Modules
-------
sniff     what an input is: files named by paths/globs, SMF or RMF XML, documentation to skip
store     the folder's layout: partitioned, content-addressed Parquet, ``table_files``, dedup keys
catalogue ``DECODED_TABLES``: the decoded tables by name, with their empty forms, for the SQL
manifest  ``_manifest.jsonl``, the folder's lock, ``sha256_file``, ``FileResult``
smf       ``ingest_paths``: SMF dumps -> tables + keys + manifest lines, ``IngestSummary``
rmf       ``ingest_xml``: RMF Postprocessor XML -> tables + manifest lines
spark     the two passes :mod:`kneecap.spark_jobs` runs per input on Spark's executors
cli       ``kneecap ingest`` and the ``decode_smf`` stage: sniff, run both, print, exit status
"""
