"""Tests of the orc layer."""
