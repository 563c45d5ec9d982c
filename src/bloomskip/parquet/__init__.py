"""Parquet bloom filters: read, prune with, add and write them."""

from bloomskip.parquet.write import AddResult, add_bloom_filters, write_table

__all__ = ["AddResult", "add_bloom_filters", "write_table"]
