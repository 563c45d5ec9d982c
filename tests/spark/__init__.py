"""Tests of the spark layer."""
