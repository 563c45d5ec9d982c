"""Zeroed, cache-line-aligned memory for filters, and filters over the caller's buffers.

``np.zeros`` returns memory 16 bytes past a 64-byte boundary about half the time, so a
32-byte block can straddle two cache lines. Filters are allocated 64-byte aligned; from
2 MiB up, in an anonymous mapping aligned to 2 MiB with transparent huge pages advised,
which saves TLB misses on random block access. A filter read from a buffer (Parquet's
SBBF, ORC's bitsets) views it when it may and the words are aligned, else copies it into
such memory (:func:`byte_view`, :func:`word_view`).
"""

from __future__ import annotations

import contextlib
import mmap
from typing import Any

import numpy as np

from bloomskip.errors import InvalidBitsetError

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


def byte_view(buf: Any, what: str) -> np.ndarray:
    """The bytes of anything with the buffer protocol (``bytes``, ``bytearray``,
    ``memoryview``, ``mmap``, a contiguous numpy array) as a ``uint8`` array, no copy."""
    try:
        return np.frombuffer(buf, dtype=np.uint8)
    except (TypeError, ValueError) as exc:
        raise InvalidBitsetError(
            f"{what} must be a bytes-like object, got {type(buf).__name__}"
        ) from exc


def word_view(raw: np.ndarray, dtype: Any, copy: bool) -> np.ndarray:
    """``raw`` (``uint8``) as words of ``dtype``: a view unless ``copy`` is asked for or
    the words would be misaligned, else an aligned copy."""
    if copy or raw.ctypes.data % np.dtype(dtype).itemsize:
        buf = aligned_zeros(raw.shape[0])
        buf[:] = raw
        raw = buf
    return raw.view(dtype)
