"""Helpers shared by the tests of every layer (no test module imports another)."""
