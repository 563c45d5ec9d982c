"""Parquet bloom filters: read, prune with, add and write them."""

from bloomskip.parquet.prune import ProbeResult, PruneResult, Unit, probe, prune
from bloomskip.parquet.write import AddResult, add_bloom_filters, write_table

__all__ = [
    "AddResult",
    "ProbeResult",
    "PruneResult",
    "Unit",
    "add_bloom_filters",
    "probe",
    "prune",
    "write_table",
]
