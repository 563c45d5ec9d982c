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

Strings of one length (fixed-width rows, and chunks of Arrow strings that happen to be
equal in length: UUIDs, hex ids, dates) are hashed *row-parallel* by :func:`xxh64_rows`:
xxHash64's steps are taken for a block of rows at a time, so each step is a loop over
rows that LLVM vectorizes (about 1.5-2.5x faster than one string at a time for
16-36 byte strings in ``bench/sbbf.py``; same hashes).

``algo`` is :data:`XXHASH64` (the Parquet spec) or :data:`MURMUR3_X64_128` (the initial
Parquet draft: the low 64 bits of the 128-bit result, with the seed
:data:`~bloomskip.hashing.plain.MURMUR3_SEED` of the draft's two implementations,
parquet-mr's first ``BlockSplitBloomFilter`` and parquet-cpp's). The scalar hash
functions (``xxh64_*``, ``murmur3_bytes``) are also used, inlined, by the fused filter
kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from bloomskip._numba import KERNEL, load_u32, load_u64, prefetch_read
from bloomskip.hashing.plain import MURMUR3_SEED

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

#: Rows per chunk in the hash kernels (the fused filter kernels use the same size).
CHUNK = 2048
#: Rows hashed together by :func:`xxh64_rows`; its 12 scratch columns (24 KiB) stay in L1.
ROW_BLOCK = 256
#: Longest equal-length strings hashed row-parallel; longer ones go one at a time.
MAX_ROW_PARALLEL = 64
#: How many rows ahead the row-parallel loads prefetch.
_ROW_PREFETCH = 8


@njit(inline="always")
def rotl64(x, r):
    """Rotate the uint64 ``x`` left by ``r`` bits (also used by ORC's Murmur3 ``hash64``)."""
    return (x << _U64(r)) | (x >> _U64(64 - r))


@njit(inline="always")
def _xorshift_multiply(h, a, m1, b, m2, c):
    """``h ^= h >> a; h *= m1; h ^= h >> b; h *= m2; h ^= h >> c``: the final mix of both
    hashes, each with its own shifts and multipliers (xxHash64's avalanche, MurmurHash3's
    ``fmix64``)."""
    h ^= h >> _U64(a)
    h *= m1
    h ^= h >> _U64(b)
    h *= m2
    h ^= h >> _U64(c)
    return h


@njit(inline="always")
def _avalanche(h):
    return _xorshift_multiply(h, 33, _P2, 29, _P3, 32)


@njit(inline="always")
def _round(acc, lane):
    acc += lane * _P2
    acc = rotl64(acc, 31)
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
    h = rotl64(h, 11) * _P1
    return _avalanche(h)


@njit(inline="always")
def xxh64_u16(v):
    """xxHash64 of two little-endian bytes."""
    h = _P5 + _U64(2)
    x = _U64(v)
    h ^= (x & _U64(0xFF)) * _P5
    h = rotl64(h, 11) * _P1
    h ^= (x >> _U64(8)) * _P5
    h = rotl64(h, 11) * _P1
    return _avalanche(h)


@njit(inline="always")
def xxh64_u32(v):
    """xxHash64 of four little-endian bytes."""
    h = _P5 + _U64(4)
    h ^= _U64(v) * _P1
    h = rotl64(h, 23) * _P2 + _P3
    return _avalanche(h)


@njit(inline="always")
def xxh64_u64(v):
    """xxHash64 of eight little-endian bytes."""
    h = _P5 + _U64(8)
    h ^= _round(_U64(0), _U64(v))
    h = rotl64(h, 27) * _P1 + _P4
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
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18)
        h = _merge_round(h, v1)
        h = _merge_round(h, v2)
        h = _merge_round(h, v3)
        h = _merge_round(h, v4)
    else:
        h = _P5
    h += _U64(length)
    while p + 8 <= end:
        h ^= _round(_U64(0), load_u64(data, p))
        h = rotl64(h, 27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        h ^= _U64(load_u32(data, p)) * _P1
        h = rotl64(h, 23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= _U64(data[p]) * _P5
        h = rotl64(h, 11) * _P1
        p += 1
    return _avalanche(h)


@njit(inline="always")
def fmix64(k):
    """MurmurHash3's 64-bit finalizer (also ORC's ``hash64``)."""
    return _xorshift_multiply(k, 33, _FM1, 33, _FM2, 33)


@njit(inline="always")
def murmur3_k1(k):
    """MurmurHash3's mix of a block of the first lane (ORC's single-lane ``hash64`` mixes
    every block so)."""
    k *= _C1
    k = rotl64(k, 31)
    return k * _C2


@njit(inline="always")
def _murmur3_k2(k):
    k *= _C2
    k = rotl64(k, 33)
    return k * _C1


@njit(inline="always")
def load_tail(data, p, n):
    """The ``n`` (< 8) bytes at ``data[p:]`` as a little-endian, zero-extended uint64."""
    k = _U64(0)
    for i in range(n - 1, -1, -1):
        k = (k << _U64(8)) | _U64(data[p + i])
    return k


@njit(inline="always")
def murmur3_bytes(data, start, length, seed):
    """Low 64 bits of MurmurHash3 x64_128 of ``data[start:start+length]`` (32-bit seed)."""
    h1 = _U64(seed)
    h2 = _U64(seed)
    p = start
    nblocks = length // 16
    for _ in range(nblocks):
        h1 ^= murmur3_k1(load_u64(data, p))
        h1 = rotl64(h1, 27)
        h1 += h2
        h1 = h1 * _U64(5) + _U64(0x52DCE729)
        h2 ^= _murmur3_k2(load_u64(data, p + 8))
        h2 = rotl64(h2, 31)
        h2 += h1
        h2 = h2 * _U64(5) + _U64(0x38495AB5)
        p += 16
    tail = length & 15
    if tail > 8:
        h2 ^= _murmur3_k2(load_tail(data, p + 8, tail - 8))
    if tail > 0:
        h1 ^= murmur3_k1(load_u64(data, p) if tail >= 8 else load_tail(data, p, tail))
    h1 ^= _U64(length)
    h2 ^= _U64(length)
    h1 += h2
    h2 += h1
    h1 = fmix64(h1)
    h2 = fmix64(h2)
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
    return murmur3_bytes(data, start, length, MURMUR3_SEED)


# --- row-parallel xxHash64 of equal-length strings ----------------------------------
#
# xxHash64's control flow depends only on the length, so for rows of one width every
# step can be taken for a block of rows at a time, in a loop over rows that LLVM turns
# into vector code. The words each step consumes are first copied into scratch columns
# by a scalar loop, one pass per 32-byte stripe, the tail words in the last pass (its
# prefetch keeps that loop scalar: vectorized, strided loads become gathers, which are
# slower than scalar loads).

_NUM_COLUMNS = 12  # v1..v4 accumulators, w1..w4 stripe words, t1..t3 tail words, t4


@njit(inline="always")
def new_scratch():
    """Scratch columns for :func:`xxh64_rows`."""
    return np.empty(_NUM_COLUMNS * ROW_BLOCK, np.uint64)


@njit(inline="always")
def _column(scratch, k, n):
    return scratch[k * ROW_BLOCK : k * ROW_BLOCK + n]


@njit(**KERNEL)
def _xxh64_row_block(data, base, width, out, scratch):
    """``out[i]`` = xxHash64 of ``data[base + i*width : base + (i+1)*width]``, i < len(out)."""
    n = out.shape[0]
    v1 = _column(scratch, 0, n)
    v2 = _column(scratch, 1, n)
    v3 = _column(scratch, 2, n)
    v4 = _column(scratch, 3, n)
    w1 = _column(scratch, 4, n)
    w2 = _column(scratch, 5, n)
    w3 = _column(scratch, 6, n)
    w4 = _column(scratch, 7, n)
    t1 = _column(scratch, 8, n)
    t2 = _column(scratch, 9, n)
    t3 = _column(scratch, 10, n)
    t4 = _column(scratch, 11, n)  # 4-byte word in the low half, last 0-3 bytes above

    stripes = width >> 5
    tail = 32 * stripes  # offset of the tail (< 32 bytes) in a row
    words = (width & 31) >> 3  # 8-byte words in the tail
    has_u32 = (width & 4) != 0
    nbytes = width & 3
    u32_at = tail + 8 * words
    bytes_at = u32_at + (4 if has_u32 else 0)
    last = base + n * width - 1  # prefetches stay inside the block

    if stripes > 0:
        for i in range(n):
            v1[i] = _P1 + _P2
            v2[i] = _P2
            v3[i] = _U64(0)
            v4[i] = _U64(0) - _P1
    for k in range(max(stripes, 1)):
        in_stripe = k < stripes
        last_pass = k == max(stripes, 1) - 1
        off = 32 * k
        for i in range(n):
            row = base + i * width
            prefetch_read(data, min(row + off + _ROW_PREFETCH * width, last))
            if in_stripe:
                w1[i] = load_u64(data, row + off)
                w2[i] = load_u64(data, row + off + 8)
                w3[i] = load_u64(data, row + off + 16)
                w4[i] = load_u64(data, row + off + 24)
            if last_pass:
                if words > 0:
                    t1[i] = load_u64(data, row + tail)
                if words > 1:
                    t2[i] = load_u64(data, row + tail + 8)
                if words > 2:
                    t3[i] = load_u64(data, row + tail + 16)
                x = _U64(load_u32(data, row + u32_at)) if has_u32 else _U64(0)
                for j in range(nbytes):
                    x |= _U64(data[row + bytes_at + j]) << _U64(32 + 8 * j)
                t4[i] = x
        if in_stripe:
            for i in range(n):
                v1[i] = _round(v1[i], w1[i])
                v2[i] = _round(v2[i], w2[i])
                v3[i] = _round(v3[i], w3[i])
                v4[i] = _round(v4[i], w4[i])

    if stripes > 0:
        for i in range(n):
            a = v1[i]
            b = v2[i]
            c = v3[i]
            d = v4[i]
            h = rotl64(a, 1) + rotl64(b, 7) + rotl64(c, 12) + rotl64(d, 18)
            h = _merge_round(h, a)
            h = _merge_round(h, b)
            h = _merge_round(h, c)
            h = _merge_round(h, d)
            out[i] = h + _U64(width)
    else:
        for i in range(n):
            out[i] = _P5 + _U64(width)
    for j in range(words):
        col = t1 if j == 0 else (t2 if j == 1 else t3)
        for i in range(n):
            h = out[i] ^ _round(_U64(0), col[i])
            out[i] = rotl64(h, 27) * _P1 + _P4
    if has_u32:
        for i in range(n):
            h = out[i] ^ ((t4[i] & _U64(0xFFFFFFFF)) * _P1)
            out[i] = rotl64(h, 23) * _P2 + _P3
    for j in range(nbytes):
        shift = _U64(32 + 8 * j)
        for i in range(n):
            h = out[i] ^ (((t4[i] >> shift) & _U64(0xFF)) * _P5)
            out[i] = rotl64(h, 11) * _P1
    for i in range(n):
        out[i] = _avalanche(out[i])


@njit(inline="always")
def xxh64_rows(data, base, width, out, scratch):
    """``out[i]`` = xxHash64 of the ``width`` bytes at ``base + i*width``, row-parallel.

    ``scratch`` comes from :func:`new_scratch`. Bit-identical to :func:`xxh64_bytes`.
    """
    n = out.shape[0]
    if width == 0:
        for i in range(n):
            out[i] = _avalanche(_P5)
        return
    for s in range(0, n, ROW_BLOCK):
        m = min(ROW_BLOCK, n - s)
        _xxh64_row_block(data, base + s * width, width, out[s : s + m], scratch)


@njit(inline="always")
def uniform_width(offsets, n):
    """The length of all ``n`` strings of ``offsets[:n+1]`` if equal, else -1."""
    if n == 0:
        return -1
    first = offsets[0]
    width = offsets[1] - first
    diff = 0
    for i in range(n + 1):
        diff |= (offsets[i] - first) - i * width
    return width if diff == 0 else -1


# The two chunk functions below (and the row block above) are compiled as functions of
# their own, not inlined: inlined into each of the six string kernels, they made the
# first, uncached compilation of those kernels several times slower.


@njit(**KERNEL)
def hash_var_chunk(offsets, data, out, algo, scratch):
    """``out[i]`` = hash of string ``i`` of ``offsets[:len(out)+1]``, row-parallel if
    the strings are equal in length (xxHash64, up to :data:`MAX_ROW_PARALLEL` bytes)."""
    n = out.shape[0]
    if algo == XXHASH64:
        width = uniform_width(offsets, n)
        if 0 <= width <= MAX_ROW_PARALLEL:
            xxh64_rows(data, offsets[0], width, out, scratch)
            return
    for i in range(n):
        a = offsets[i]
        out[i] = hash_bytes(data, a, offsets[i + 1] - a, algo)


@njit(**KERNEL)
def hash_rows_chunk(data, start, width, out, algo, scratch):
    """``out[i]`` = hash of the ``width`` bytes at ``start + i*width``."""
    n = out.shape[0]
    if algo == XXHASH64 and width <= MAX_ROW_PARALLEL:
        xxh64_rows(data, start, width, out, scratch)
        return
    for i in range(n):
        out[i] = hash_bytes(data, start + i * width, width, algo)


@njit(**KERNEL)
def hash_words(values, out):
    """``out[i]`` = xxHash64 of the little-endian bytes of ``values[i]`` (unsigned ints)."""
    for i in range(values.shape[0]):
        out[i] = xxh64_word(values[i])


@njit(**KERNEL)
def hash_rows(data, width, out, algo):
    """``out[i]`` = hash of ``data[i*width:(i+1)*width]`` (fixed-width byte strings).

    One call of the chunk function covers every row: rows of one width need no per-chunk
    choice between row-parallel and one-at-a-time hashing, as strings do. (An int64
    ``start``, not the literal 0: the signature the fused filter kernels compile.)"""
    hash_rows_chunk(data, np.int64(0), width, out, algo, new_scratch())


@njit(**KERNEL)
def hash_var(offsets, data, out, algo):
    """``out[i]`` = hash of ``data[offsets[i]:offsets[i+1]]`` (Arrow binary layout)."""
    scratch = new_scratch()
    n = out.shape[0]
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        hash_var_chunk(offsets[s : s + m + 1], data, out[s : s + m], algo, scratch)
