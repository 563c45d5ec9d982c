"""Tests of the parquet layer."""
