"""The one error of the RMF report reader."""

from __future__ import annotations


class RMFReportError(ValueError):
    """An RMF XML file is not a usable report (DDS error reply, malformed XML, bad value)."""
