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
from bloomskip.sbbf.kernels import _LOW32, _SALT64, _check_one, _insert_one, block_index

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
def insert_runs_counting(words, offsets, sizes, hashes, bounds, ndv):
    """:func:`insert_runs`, and ``ndv[z]`` = how many of run ``z``'s values set a bit of
    its filter: every distinct value but those whose 8 bits earlier values had all set (a
    false positive of the filter while it fills), and never 0 for a run with a value."""
    for z in range(bounds.shape[0] - 1):
        w = words[offsets[z] : offsets[z] + sizes[z]]
        nb = _U64(sizes[z] // 8)
        count = 0
        for i in range(bounds[z], bounds[z + 1]):
            h = hashes[i]
            base = block_index(h, nb) * _U64(8)
            key = h & _LOW32
            new = np.uint32(0)
            for j in range(8):
                bit = np.uint32(1) << np.uint32(((key * _SALT64[j]) & _LOW32) >> _U64(27))
                old = w[base + _U64(j)]
                new |= bit & ~old
                w[base + _U64(j)] = old | bit
            if new != 0:
                count += 1
        ndv[z] = count


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


@njit(**KERNEL)
def _transpose8(x):
    """An 8x8 bit matrix in a uint64 (byte ``k`` is row ``k``, bit ``i`` column ``i``),
    transposed (Hacker's Delight, 7-8)."""
    t = (x ^ (x >> _U64(7))) & _U64(0x00AA00AA00AA00AA)
    x = x ^ t ^ (t << _U64(7))
    t = (x ^ (x >> _U64(14))) & _U64(0x0000CCCC0000CCCC)
    x = x ^ t ^ (t << _U64(14))
    t = (x ^ (x >> _U64(28))) & _U64(0x00000000F0F0F0F0)
    return x ^ t ^ (t << _U64(28))


@njit(**KERNEL)
def rows_to_planes(row, out):
    """A block row ``(count, 32)`` uint8 into its 256 bit planes ``out`` ``(256,
    ceil(count/8))``: bit ``i`` of byte ``q`` of zone ``z`` goes to bit ``z % 8`` of byte
    ``z // 8`` of plane ``8*q + i`` (bits past ``count`` are 0)."""
    count = row.shape[0]
    for g in range(out.shape[1]):
        for q in range(32):
            x = _U64(0)
            for k in range(8):
                z = g * 8 + k
                if z < count:
                    x |= _U64(row[z, q]) << _U64(8 * k)
            x = _transpose8(x)
            for i in range(8):
                out[8 * q + i, g] = (x >> _U64(8 * i)) & _U64(0xFF)


@njit(**KERNEL)
def planes_to_rows(planes, out):
    """:func:`rows_to_planes` undone into ``out`` ``(count, 32)`` uint8."""
    count = out.shape[0]
    for g in range(planes.shape[1]):
        for q in range(32):
            x = _U64(0)
            for i in range(8):
                x |= _U64(planes[8 * q + i, g]) << _U64(8 * i)
            x = _transpose8(x)
            for k in range(8):
                z = g * 8 + k
                if z < count:
                    out[z, q] = (x >> _U64(8 * k)) & _U64(0xFF)
