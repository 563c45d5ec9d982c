"""Compiled kernels over *many* SBBFs at once: the zone filters of a file or an index.

Zone filters live back to back in one ``uint32`` array; zone ``z`` is
``words[offsets[z] : offsets[z] + sizes[z]]`` (``sizes`` in words, a multiple of 8).
One call builds every zone filter of a file, or probes every zone of an index, so no
Python loop runs per zone or per value. Block selection and the eight salted bits are
the SBBF's own (:mod:`bloomskip.sbbf.kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip._numba import KERNEL
from bloomskip.sbbf.kernels import _check_one, _insert_one

_U64 = np.uint64


@njit(**KERNEL)
def count_runs(hashes, bounds, ndv, multiplier):
    """``ndv[z]`` = the distinct values of run ``hashes[bounds[z]:bounds[z+1]]``, in one
    pass per run: the open-addressing set of :func:`bloomskip.sbbf.kernels.count_distinct`
    (load <= 1/2, 0 counted apart, home slot from the caller's random odd
    ``multiplier``), allocated once for the longest run and emptied slot by slot."""
    longest = 0
    for z in range(bounds.shape[0] - 1):
        longest = max(longest, bounds[z + 1] - bounds[z])
    bits = 1
    while (1 << bits) < 2 * longest:
        bits += 1
    shift = _U64(64 - bits)
    mask = _U64((1 << bits) - 1)
    table = np.zeros(1 << bits, np.uint64)
    used = np.empty(max(longest, 1), np.int64)
    for z in range(bounds.shape[0] - 1):
        count = 0
        zero = 0
        for i in range(bounds[z], bounds[z + 1]):
            h = hashes[i]
            if h == 0:
                zero = 1
                continue
            j = (h * multiplier) >> shift
            while True:
                t = table[j]
                if t == h:
                    break
                if t == 0:
                    table[j] = h
                    used[count] = j
                    count += 1
                    break
                j = (j + _U64(1)) & mask
        for k in range(count):
            table[used[k]] = 0
        ndv[z] = count + zero


@njit(**KERNEL)
def insert_runs(words, offsets, sizes, hashes, bounds):
    """Insert run ``z`` of ``hashes`` (``bounds`` as above) into zone filter ``z``."""
    for z in range(bounds.shape[0] - 1):
        w = words[offsets[z] : offsets[z] + sizes[z]]
        nb = _U64(sizes[z] // 8)
        for i in range(bounds[z], bounds[z + 1]):
            _insert_one(w, nb, hashes[i])


@njit(**KERNEL)
def probe_any(words, offsets, sizes, zones, hashes, out):
    """``out[i]`` = filter ``zones[i]`` may hold at least one of ``hashes``."""
    for i in range(zones.shape[0]):
        z = zones[i]
        if sizes[z] == 0:  # no usable filter: may match
            out[i] = True
            continue
        w = words[offsets[z] : offsets[z] + sizes[z]]
        nb = _U64(sizes[z] // 8)
        hit = False
        for h in hashes:
            if _check_one(w, nb, h):
                hit = True
                break
        out[i] = hit
