"""Compiled hash kernels: xxHash64 (seed 0) and MurmurHash3 x64_128 over PLAIN bytes.

Every function here works on numpy buffers that already hold the PLAIN encoding of a
Parquet physical type (see :mod:`bloomskip.hashing.physical`):

* ``hash_words(values, out)``: fixed-width little-endian values given as a ``uint8``,
  ``uint16``, ``uint32`` or ``uint64`` array (BOOLEAN/INT32/FLOAT = 1 or 4 bytes,
  INT64/DOUBLE = 8 bytes). xxHash64 only; one specialised short-input path per width.
* ``hash_rows(data, width, out, algo)``: fixed-width byte strings stored back to back
  (INT96 = 12 bytes, FIXED_LEN_BYTE_ARRAY = ``type_length`` bytes).
* ``hash_var(offsets, data, out, algo)``: variable-length byte strings in Arrow layout
  (``offsets`` of int32 or int64, ``data`` of uint8); BYTE_ARRAY hashes the raw bytes,
  never the 4-byte length prefix of the PLAIN page encoding.

``algo`` is :data:`XXHASH64` (the Parquet spec) or :data:`MURMUR3_X64_128` (the initial
Parquet draft, low 64 bits of the 128-bit result). The scalar hash functions
(``xxh64_*``, ``murmur3_bytes``) are also used, inlined, by the fused filter kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from bloomskip._numba import KERNEL, load_u32, load_u64

#: Hash algorithm codes understood by the kernels.
XXHASH64 = 0
MURMUR3_X64_128 = 1

# xxHash64 primes (xxHash specification, "XXH64 algorithm description").
_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)

# MurmurHash3 x64_128 constants (Austin Appleby's reference).
_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_FM1 = np.uint64(0xFF51AFD7ED558CCD)
_FM2 = np.uint64(0xC4CEB9FE1A85EC53)

_U64 = np.uint64


@njit(inline="always")
def _rotl(x, r):
    return (x << _U64(r)) | (x >> _U64(64 - r))


@njit(inline="always")
def _avalanche(h):
    h ^= h >> _U64(33)
    h *= _P2
    h ^= h >> _U64(29)
    h *= _P3
    h ^= h >> _U64(32)
    return h


@njit(inline="always")
def _round(acc, lane):
    acc += lane * _P2
    acc = _rotl(acc, 31)
    return acc * _P1


@njit(inline="always")
def _merge_round(acc, val):
    acc ^= _round(_U64(0), val)
    return acc * _P1 + _P4


@njit(inline="always")
def xxh64_u8(v):
    """xxHash64 of one byte."""
    h = _P5 + _U64(1)
    h ^= _U64(v) * _P5
    h = _rotl(h, 11) * _P1
    return _avalanche(h)


@njit(inline="always")
def xxh64_u16(v):
    """xxHash64 of two little-endian bytes."""
    h = _P5 + _U64(2)
    x = _U64(v)
    h ^= (x & _U64(0xFF)) * _P5
    h = _rotl(h, 11) * _P1
    h ^= (x >> _U64(8)) * _P5
    h = _rotl(h, 11) * _P1
    return _avalanche(h)


@njit(inline="always")
def xxh64_u32(v):
    """xxHash64 of four little-endian bytes."""
    h = _P5 + _U64(4)
    h ^= _U64(v) * _P1
    h = _rotl(h, 23) * _P2 + _P3
    return _avalanche(h)


@njit(inline="always")
def xxh64_u64(v):
    """xxHash64 of eight little-endian bytes."""
    h = _P5 + _U64(8)
    h ^= _round(_U64(0), _U64(v))
    h = _rotl(h, 27) * _P1 + _P4
    return _avalanche(h)


@njit(inline="always")
def xxh64_bytes(data, start, length):
    """xxHash64 (seed 0) of ``data[start:start+length]``."""
    p = start
    end = start + length
    if length >= 32:
        v1 = _P1 + _P2
        v2 = _P2
        v3 = _U64(0)
        v4 = _U64(0) - _P1
        limit = end - 32
        while p <= limit:
            v1 = _round(v1, load_u64(data, p))
            v2 = _round(v2, load_u64(data, p + 8))
            v3 = _round(v3, load_u64(data, p + 16))
            v4 = _round(v4, load_u64(data, p + 24))
            p += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        h = _merge_round(h, v1)
        h = _merge_round(h, v2)
        h = _merge_round(h, v3)
        h = _merge_round(h, v4)
    else:
        h = _P5
    h += _U64(length)
    while p + 8 <= end:
        h ^= _round(_U64(0), load_u64(data, p))
        h = _rotl(h, 27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        h ^= _U64(load_u32(data, p)) * _P1
        h = _rotl(h, 23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= _U64(data[p]) * _P5
        h = _rotl(h, 11) * _P1
        p += 1
    return _avalanche(h)


@njit(inline="always")
def _fmix64(k):
    k ^= k >> _U64(33)
    k *= _FM1
    k ^= k >> _U64(33)
    k *= _FM2
    k ^= k >> _U64(33)
    return k


@njit(inline="always")
def murmur3_bytes(data, start, length):
    """Low 64 bits of MurmurHash3 x64_128 (seed 0) of ``data[start:start+length]``."""
    h1 = _U64(0)
    h2 = _U64(0)
    p = start
    nblocks = length // 16
    for _ in range(nblocks):
        k1 = load_u64(data, p)
        k2 = load_u64(data, p + 8)
        k1 *= _C1
        k1 = _rotl(k1, 31)
        k1 *= _C2
        h1 ^= k1
        h1 = _rotl(h1, 27)
        h1 += h2
        h1 = h1 * _U64(5) + _U64(0x52DCE729)
        k2 *= _C2
        k2 = _rotl(k2, 33)
        k2 *= _C1
        h2 ^= k2
        h2 = _rotl(h2, 31)
        h2 += h1
        h2 = h2 * _U64(5) + _U64(0x38495AB5)
        p += 16
    tail = length & 15
    if tail > 8:
        k2 = _U64(0)
        for i in range(tail - 1, 7, -1):
            k2 = (k2 << _U64(8)) | _U64(data[p + i])
        k2 *= _C2
        k2 = _rotl(k2, 33)
        k2 *= _C1
        h2 ^= k2
    if tail > 0:
        k1 = _U64(0)
        for i in range(min(tail, 8) - 1, -1, -1):
            k1 = (k1 << _U64(8)) | _U64(data[p + i])
        k1 *= _C1
        k1 = _rotl(k1, 31)
        k1 *= _C2
        h1 ^= k1
    h1 ^= _U64(length)
    h2 ^= _U64(length)
    h1 += h2
    h2 += h1
    h1 = _fmix64(h1)
    h2 = _fmix64(h2)
    h1 += h2
    return h1


def xxh64_word(v):  # pragma: no cover - replaced by the overload inside kernels
    """xxHash64 of a fixed-width unsigned value, dispatched on its width at compile time."""
    raise NotImplementedError


@overload(xxh64_word, inline="always")
def _xxh64_word_overload(v):
    if v == types.uint8:
        return lambda v: xxh64_u8(v)
    if v == types.uint16:
        return lambda v: xxh64_u16(v)
    if v == types.uint32:
        return lambda v: xxh64_u32(v)
    if v == types.uint64:
        return lambda v: xxh64_u64(v)
    return None


@njit(inline="always")
def hash_bytes(data, start, length, algo):
    """The selected hash of ``data[start:start+length]``."""
    if algo == XXHASH64:
        return xxh64_bytes(data, start, length)
    return murmur3_bytes(data, start, length)


@njit(**KERNEL)
def hash_words(values, out):
    """``out[i]`` = xxHash64 of the little-endian bytes of ``values[i]`` (unsigned ints)."""
    for i in range(values.shape[0]):
        out[i] = xxh64_word(values[i])


@njit(**KERNEL)
def hash_rows(data, width, out, algo):
    """``out[i]`` = hash of ``data[i*width:(i+1)*width]`` (fixed-width byte strings)."""
    for i in range(out.shape[0]):
        out[i] = hash_bytes(data, i * width, width, algo)


@njit(**KERNEL)
def hash_var(offsets, data, out, algo):
    """``out[i]`` = hash of ``data[offsets[i]:offsets[i+1]]`` (Arrow binary layout)."""
    for i in range(out.shape[0]):
        start = offsets[i]
        out[i] = hash_bytes(data, start, offsets[i + 1] - start, algo)
