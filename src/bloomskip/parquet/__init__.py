"""Parquet bloom filters: read, prune with, add and write them."""

from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.keytools import InMemoryKms, KeyToolsRetriever, KmsClient
from bloomskip.parquet.prune import ProbeResult, PruneResult, Unit, probe, prune
from bloomskip.parquet.write import AddResult, add_bloom_filters, write_table

__all__ = [
    "AddResult",
    "Decryption",
    "InMemoryKms",
    "KeyToolsRetriever",
    "KmsClient",
    "ProbeResult",
    "PruneResult",
    "Unit",
    "add_bloom_filters",
    "probe",
    "prune",
    "write_table",
]
