"""Streaming reader for RMF Postprocessor XML ("ddsml") reports: CPU and Workload Activity.

The RMF Distributed Data Server (GPMSERVE, ``/gpm/rmfpp.xml?reports=CPU``) and the batch
Postprocessor (ddnames ``XPRPTS`` / ``XPXSRPTS``) write every report as one ``<ddsml>``
document holding one ``<postprocessor>`` element per interval::

    <ddsml>
      <server>...</server>
      <postprocessor>                       one per report interval
        <metric id="CPU" | id="WLMGL" option="...">...</metric>
        <resource><resname>RPRT</resname><restype>SYSTEM|SYSPLEX</restype></resource>
        <time-data><display-start>MM/DD/YYYY-HH.MM.SS</display-start>
                   <report-interval unit="minutes">MM:SS:TTT</report-interval></time-data>
        <segment><name>CPU Activity</name>
          <part><name>...</name><var-list><var><name/><value/></var></var-list>
                <table><column-headers><col/>...</column-headers><row><col/>...</row></table>
          </part>
          <message><description>All data zero</description><severity>1</severity></message>
        </segment>
      </postprocessor>
    </ddsml>

Monitor III replies use ``<report>`` in place of ``<postprocessor>``; a DDS error reply is a
``<postprocessor>``/``<report>`` whose only content is a ``<message id="GPM....">``.

The file is read with defusedxml's :func:`~defusedxml.ElementTree.iterparse` (the standard
library's, with a document type declaration, an entity declaration or an external reference refused
by the parser itself once expat has decoded the bytes, so in UTF-16 as in UTF-8); every interval
element is converted to a small immutable :class:`DdsReport` and then removed from the tree, so
memory stays flat however many intervals a file holds.

Two tables come out of a CPU report and one out of a Workload Activity (WLMGL) report. Their
columns are those of the binary SMF tables built by :mod:`kneecap.smf` (``smf70_cpu`` from
SMF 70.1, ``smf72_workload`` from SMF 72.3) so one SQL model serves both sources.

Timestamps are the report's own *local* display times (``display-start``), as naive
:class:`pandas.Timestamp` values; SMF header times are local too.

References
----------
IBM, *z/OS RMF Report Analysis*, "CPU Activity report" and "Partition Data report" (field
meanings: TIME % ONLINE / LPAR BUSY / MVS BUSY) and "Workload Activity report" (SERVICE TIME,
APPL %, TRANSACTIONS, TRANS-TIME).
IBM, *z/OS RMF Programmer's Guide*, "Accessing performance data using the RMF Distributed
Data Server" (ddsml document returned by ``/gpm/rmfpp.xml``).
IBM, *z/OS RMF User's Guide*, "How to work with Postprocessor XML reports" (XPRPTS, XPXSRPTS).

The package
-----------
``_parse`` the streaming parse (bounded reads, refused markup, reading on after broken XML);
``_document`` the document model (:class:`DdsReport` and its parts); ``_values`` RMF numbers and
clock times; ``_cpu`` and ``_workload`` a report's rows; ``_columns`` the tables' columns and
types; ``_read`` the entry points; ``_errors`` :class:`RMFReportError`.
"""

from kneecap.rmf.postprocessor._columns import (
    CPU_COLUMNS,
    PARTITION_COLUMNS,
    QUARANTINE_COLUMNS,
    SMF72_WORKLOAD_COLUMNS,
    WORKLOAD_COLUMNS,
    empty_table,
)
from kneecap.rmf.postprocessor._document import DdsMessage, DdsPart, DdsReport, DdsSegment, DdsTable, Source
from kneecap.rmf.postprocessor._errors import RMFReportError
from kneecap.rmf.postprocessor._parse import ERROR_SEVERITY, MAX_TEXT_BYTES, iter_reports
from kneecap.rmf.postprocessor._read import (
    PostprocessorTables,
    read_cpu_report,
    read_postprocessor,
    read_workload_report,
)

__all__ = [
    "CPU_COLUMNS",
    "PARTITION_COLUMNS",
    "WORKLOAD_COLUMNS",
    "SMF72_WORKLOAD_COLUMNS",
    "QUARANTINE_COLUMNS",
    "ERROR_SEVERITY",
    "MAX_TEXT_BYTES",
    "DdsMessage",
    "DdsPart",
    "DdsReport",
    "DdsSegment",
    "DdsTable",
    "PostprocessorTables",
    "RMFReportError",
    "Source",
    "empty_table",
    "iter_reports",
    "read_cpu_report",
    "read_postprocessor",
    "read_workload_report",
]

# the public classes under the name they are imported by, as when this package was one module: a
# traceback reads kneecap.rmf.postprocessor.RMFReportError, whatever module of the package defines it
for _public in (RMFReportError, DdsMessage, DdsTable, DdsPart, DdsSegment, DdsReport, PostprocessorTables):
    _public.__module__ = __name__
del _public
