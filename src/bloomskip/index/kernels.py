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
