"""Compiled SBBF kernels: insert and check of hashes, fused hash+insert / hash+check, and
the exact count of distinct hashes that sizes a filter.

The filter is a flat ``uint32`` array of ``8 * num_blocks`` words (block ``b`` is
``words[8*b : 8*b+8]``). For a 64-bit hash ``h`` (Parquet spec, "Split Block Bloom
Filter"):

    block = ((h >> 32) * num_blocks) >> 32          multiply-shift, never modulo
    key   = h & 0xFFFFFFFF
    bit_j = (key * SALT[j] mod 2**32) >> 27          one bit in each of the 8 words

Insert ORs ``1 << bit_j`` into word ``j`` of the block; check is true when all eight
bits are set. :func:`insert_hashes_masked` / :func:`check_hashes_masked` pick the block
as the initial draft did instead, ``(h >> 32) & (num_blocks - 1)`` (see
:mod:`bloomskip.sbbf.strategy`). The loops are written so that LLVM's SLP vectorizer turns the eight
lanes into vector instructions, and the fused kernels work in two phases: hash a
chunk of :data:`~bloomskip.hashing.kernels.CHUNK` values into a small buffer (strings
through :func:`~bloomskip.hashing.kernels.hash_var_chunk`, row-parallel when they are
equal in length), then insert/check that chunk while prefetching the block
:data:`PREFETCH_DISTANCE` hashes ahead.

:func:`count_distinct` counts the distinct values of a ``uint64`` array in one pass over
an open-addressing hash set (linear probing, load factor at most 1/2), the exact NDV the
"parquet" sizing policy needs, at a fraction of the cost of sorting.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip._numba import KERNEL, load_u32, prefetch
from bloomskip.hashing.kernels import (
    CHUNK,
    hash_rows_chunk,
    hash_var_chunk,
    new_scratch,
    xxh64_word,
)
from bloomskip.sbbf.masks import SALT

_SALT64 = SALT.astype(np.uint64)

#: How many hashes ahead the insert/check loops prefetch their block.
PREFETCH_DISTANCE = 16

_U64 = np.uint64
_LOW32 = np.uint64(0xFFFFFFFF)


@njit(inline="always")
def block_index(h, num_blocks):
    return ((h >> _U64(32)) * num_blocks) >> _U64(32)


@njit(inline="always")
def _insert_one(words, num_blocks, h):
    base = block_index(h, num_blocks) * _U64(8)
    key = h & _LOW32
    for j in range(8):
        bit = ((key * _SALT64[j]) & _LOW32) >> _U64(27)
        words[base + _U64(j)] |= np.uint32(1) << np.uint32(bit)


@njit(inline="always")
def _check_one(words, num_blocks, h):
    base = block_index(h, num_blocks) * _U64(8)
    key = h & _LOW32
    miss = np.uint32(0)
    for j in range(8):
        bit = ((key * _SALT64[j]) & _LOW32) >> _U64(27)
        miss |= ~words[base + _U64(j)] & (np.uint32(1) << np.uint32(bit))
    return miss == 0


@njit(inline="always")
def _insert_batch(words, num_blocks, hashes, n):
    # Two loops rather than a bounds test per hash: prefetch while a hash lies
    # PREFETCH_DISTANCE ahead, then the tail without.
    head = max(n - PREFETCH_DISTANCE, 0)
    for i in range(head):
        prefetch(words, block_index(hashes[i + PREFETCH_DISTANCE], num_blocks) * _U64(8))
        _insert_one(words, num_blocks, hashes[i])
    for i in range(head, n):
        _insert_one(words, num_blocks, hashes[i])


@njit(inline="always")
def _check_batch(words, num_blocks, hashes, n, out):
    head = max(n - PREFETCH_DISTANCE, 0)
    for i in range(head):
        prefetch(words, block_index(hashes[i + PREFETCH_DISTANCE], num_blocks) * _U64(8))
        out[i] = _check_one(words, num_blocks, hashes[i])
    for i in range(head, n):
        out[i] = _check_one(words, num_blocks, hashes[i])


@njit(**KERNEL)
def insert_hashes(words, hashes):
    """Insert every hash of ``hashes`` (uint64) into the filter ``words``."""
    _insert_batch(words, _U64(words.shape[0] // 8), hashes, hashes.shape[0])


@njit(**KERNEL)
def check_hashes(words, hashes, out):
    """``out[i]`` = the filter may contain ``hashes[i]``."""
    _check_batch(words, _U64(words.shape[0] // 8), hashes, hashes.shape[0], out)


@njit(**KERNEL)
def check_bitsets(data, starts, num_bytes, hashes, out):
    """Many filters at once: ``out[i]`` = the filter whose bitset is the ``num_bytes[i]``
    bytes of ``data`` (uint8) from ``starts[i]`` (any alignment) may contain one of
    ``hashes`` (the spec's block rule)."""
    for i in range(starts.shape[0]):
        blocks = _U64(num_bytes[i] // 32)
        base = starts[i]
        hit = False
        for k in range(hashes.shape[0]):
            h = hashes[k]
            at = base + np.int64(block_index(h, blocks)) * 32
            key = h & _LOW32
            miss = np.uint32(0)
            for j in range(8):
                bit = ((key * _SALT64[j]) & _LOW32) >> _U64(27)
                miss |= ~load_u32(data, at + 4 * j) & (np.uint32(1) << np.uint32(bit))
            if miss == 0:
                hit = True
                break
        out[i] = hit


# --- the draft's block rule: the high 32 bits masked to a power-of-two block count ----


@njit(inline="always")
def _masked_base(h, mask):
    return ((h >> _U64(32)) & mask) * _U64(8)


@njit(**KERNEL)
def insert_hashes_masked(words, hashes):
    """Insert every hash, the block chosen by the draft's rule (power-of-two blocks)."""
    mask = _U64(words.shape[0] // 8 - 1)
    for i in range(hashes.shape[0]):
        h = hashes[i]
        base = _masked_base(h, mask)
        key = h & _LOW32
        for j in range(8):
            bit = ((key * _SALT64[j]) & _LOW32) >> _U64(27)
            words[base + _U64(j)] |= np.uint32(1) << np.uint32(bit)


@njit(**KERNEL)
def check_hashes_masked(words, hashes, out):
    """``out[i]`` = the filter may contain ``hashes[i]``, under the draft's block rule."""
    mask = _U64(words.shape[0] // 8 - 1)
    for i in range(hashes.shape[0]):
        h = hashes[i]
        base = _masked_base(h, mask)
        key = h & _LOW32
        miss = np.uint32(0)
        for j in range(8):
            bit = ((key * _SALT64[j]) & _LOW32) >> _U64(27)
            miss |= ~words[base + _U64(j)] & (np.uint32(1) << np.uint32(bit))
        out[i] = miss == 0


# --- fused kernels: fixed-width words (BOOLEAN, INT32, INT64, FLOAT, DOUBLE) ---------
#
# Each chunk is read through a slice view (``values[s:s+m]``) indexed from 0: numba
# cannot prove ``s + i`` non-negative, and the negative-index wrap it then emits on
# every access stops LLVM from vectorizing the hash loop (it fell back to gathers).


@njit(**KERNEL)
def insert_words(words, values):
    """Hash (xxHash64) and insert fixed-width unsigned values."""
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    n = values.shape[0]
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        chunk = values[s : s + m]
        for i in range(m):
            buf[i] = xxh64_word(chunk[i])
        _insert_batch(words, nb, buf, m)


@njit(**KERNEL)
def check_words(words, values, out):
    """Hash (xxHash64) and check fixed-width unsigned values."""
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    n = values.shape[0]
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        chunk = values[s : s + m]
        for i in range(m):
            buf[i] = xxh64_word(chunk[i])
        _check_batch(words, nb, buf, m, out[s : s + m])


# --- fused kernels: fixed-width byte strings (INT96, FIXED_LEN_BYTE_ARRAY) ----------


@njit(**KERNEL)
def insert_rows(words, data, width, n, algo):
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    scratch = new_scratch()
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        hash_rows_chunk(data, s * width, width, buf[:m], algo, scratch)
        _insert_batch(words, nb, buf, m)


@njit(**KERNEL)
def check_rows(words, data, width, n, algo, out):
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    scratch = new_scratch()
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        hash_rows_chunk(data, s * width, width, buf[:m], algo, scratch)
        _check_batch(words, nb, buf, m, out[s : s + m])


# --- fused kernels: variable-length byte strings (BYTE_ARRAY, Arrow offsets + data) --


@njit(**KERNEL)
def insert_var(words, offsets, data, algo):
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    scratch = new_scratch()
    n = offsets.shape[0] - 1
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        hash_var_chunk(offsets[s : s + m + 1], data, buf[:m], algo, scratch)
        _insert_batch(words, nb, buf, m)


@njit(**KERNEL)
def check_var(words, offsets, data, algo, out):
    nb = _U64(words.shape[0] // 8)
    buf = np.empty(CHUNK, np.uint64)
    scratch = new_scratch()
    n = offsets.shape[0] - 1
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        hash_var_chunk(offsets[s : s + m + 1], data, buf[:m], algo, scratch)
        _check_batch(words, nb, buf, m, out[s : s + m])


# --- distinct count: the exact NDV that sizes a filter --------------------------------


@njit(**KERNEL)
def count_distinct(hashes, multiplier):
    """The number of distinct values in ``hashes`` (uint64), in one pass: one run of
    :func:`count_runs`."""
    ndv = np.zeros(1, np.uint64)
    count_runs(hashes, np.array([0, hashes.shape[0]], np.int64), ndv, multiplier)
    return ndv[0]


@njit(**KERNEL)
def count_runs(hashes, bounds, ndv, multiplier):
    """``ndv[z]`` = the number of distinct values of run ``hashes[bounds[z]:bounds[z+1]]``
    (a zone's values), in one pass per run.

    An open-addressing hash set of ``2**k >= 2 n`` slots for the longest run (linear
    probing, load <= 1/2), allocated once and emptied slot by slot after each run; 0
    marks an empty slot, so the value 0 is counted apart. A value's home slot is the top
    ``k`` bits of ``value * multiplier`` (multiply-shift, ``multiplier`` odd): the caller
    draws it at random, so no chosen set of values can crowd one run of slots.
    """
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
