"""Tests of the index layer."""
