"""Zeroed, cache-line-aligned memory for filters.

``np.zeros`` returns memory 16 bytes past a 64-byte boundary about half the time, so a
32-byte block can straddle two cache lines. Filters are allocated 64-byte aligned; from
2 MiB up, in an anonymous mapping aligned to 2 MiB with transparent huge pages advised,
which saves TLB misses on random block access.
"""

from __future__ import annotations

import contextlib
import mmap

import numpy as np

_CACHE_LINE = 64
_HUGE_PAGE = 2 * 1024 * 1024


def aligned_zeros(num_bytes: int) -> np.ndarray:
    """A writable, zero-filled ``uint8`` array of ``num_bytes`` with an aligned start."""
    if num_bytes >= _HUGE_PAGE:
        mm = mmap.mmap(-1, num_bytes + _HUGE_PAGE)
        raw = np.frombuffer(mm, dtype=np.uint8)
        start = (-raw.ctypes.data) % _HUGE_PAGE
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
            with contextlib.suppress(OSError):  # a kernel without transparent huge pages
                mm.madvise(mmap.MADV_HUGEPAGE, start, num_bytes)
        return raw[start : start + num_bytes]
    raw = np.zeros(num_bytes + _CACHE_LINE, dtype=np.uint8)
    start = (-raw.ctypes.data) % _CACHE_LINE
    return raw[start : start + num_bytes]
