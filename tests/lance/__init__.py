"""Tests of the lance layer."""
