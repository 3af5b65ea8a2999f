"""kneecap: capacity planning for z/OS middleware from measurement tables and SMF data."""

__version__ = "0.1.0"
