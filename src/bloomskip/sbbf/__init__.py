"""The Split Block Bloom Filter: the filter (:mod:`.filter`), its strategies (:mod:`.strategy`:
the spec's and the initial draft's), the draft's serialized form (:mod:`.draft`), its
sizing (:mod:`.sizing`) and its compiled kernels (:mod:`.kernels`)."""

from bloomskip.sbbf.draft import draft_filter_bytes, read_draft_filter
from bloomskip.sbbf.filter import Sbbf, build_filter, build_folded
from bloomskip.sbbf.sizing import MAX_BYTES, MIN_BYTES, POLICIES, num_bytes_for, putze_fpp
from bloomskip.sbbf.strategy import BlockRule, Strategy

__all__ = [
    "MAX_BYTES",
    "MIN_BYTES",
    "POLICIES",
    "BlockRule",
    "Sbbf",
    "Strategy",
    "build_filter",
    "build_folded",
    "draft_filter_bytes",
    "num_bytes_for",
    "putze_fpp",
    "read_draft_filter",
]
