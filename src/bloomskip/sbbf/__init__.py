"""The Split Block Bloom Filter: the filter (:mod:`.filter`), its sizing (:mod:`.sizing`)
and its compiled kernels (:mod:`.kernels`)."""

from bloomskip.sbbf.filter import Sbbf, build_filter
from bloomskip.sbbf.sizing import MAX_BYTES, MIN_BYTES, POLICIES, num_bytes_for, putze_fpp

__all__ = [
    "MAX_BYTES",
    "MIN_BYTES",
    "POLICIES",
    "Sbbf",
    "build_filter",
    "num_bytes_for",
    "putze_fpp",
]
