"""Compiled kernels of the Parquet layer: validating Thrift structs without building them,
splitting PLAIN ``BYTE_ARRAY`` pages into Arrow offsets and data (or hashing their values
where they lie), and testing a dictionary's hashes against the values looked up.

Loaded on first use (:func:`bloomskip._lazy.lazy`): numba is not imported before then.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip._numba import KERNEL
from bloomskip.hashing.kernels import xxh64_bytes


@njit(cache=True, nogil=True)
def uvarint(buf, pos, end):  # pragma: no cover - compiled
    """(value, position after) of a ULEB128 varint as the Thrift decoder reads it; the
    position is -1 when it runs past ``end`` or past 64 bits."""
    v = np.uint64(0)
    shift = 0
    while True:
        if pos >= end or shift > 63:
            return v, -1
        b = buf[pos]
        pos += 1
        if shift == 63 and (b & 0x7F) > 1:
            return v, -1
        v |= np.uint64(b & 0x7F) << np.uint64(shift)
        if b < 0x80:
            return v, pos
        shift += 7


@njit(cache=True, nogil=True)
def skip_struct(buf, pos, end, depth, max_depth):  # pragma: no cover - compiled
    """Validate the struct at ``pos`` as the decoder would and return the position after
    it, or -1 if the decoder would raise. Iterative, with an explicit stack."""
    if depth > max_depth:
        return -1
    return _skip(buf, pos, end, depth, max_depth, 0, new_stack(max_depth))


@njit(cache=True, nogil=True)
def new_stack(max_depth):  # pragma: no cover - compiled
    """Scratch room for :func:`skip_value` (reused across calls: no allocation each)."""
    return np.empty((5, max_depth + 4), np.int64)


@njit(cache=True, nogil=True)
def skip_value(buf, pos, end, t, depth, max_depth, stack):  # pragma: no cover - compiled
    """Validate the value of type ``t`` of a field of a struct at ``depth`` as the decoder
    would; the position after it, or -1. ``stack`` is from :func:`new_stack`."""
    if t == 1 or t == 2:
        return pos  # a struct's boolean lives in the type nibble
    if t >= 3 and t <= 8:
        return _scalar(buf, pos, end, t)
    return _skip(buf, pos, end, depth, max_depth, t, stack)


@njit(cache=True, nogil=True)
def _scalar(buf, pos, end, t):  # pragma: no cover - compiled
    """Skip a BYTE, I16, I32, I64, DOUBLE or BINARY value; the position after, or -1."""
    if t == 3:
        return pos + 1 if pos < end else -1
    if t == 7:
        return pos + 8 if pos + 8 <= end else -1
    v, after = uvarint(buf, pos, end)
    if after < 0:
        return -1
    if t == 8:  # a length, then the bytes
        if v > np.uint64(end) or after + np.int64(v) > end:
            return -1
        return after + np.int64(v)
    bits = 16 if t == 4 else (32 if t == 5 else 64)
    several = after - pos > 1  # a one-byte varint always fits
    if several and bits < 64 and v >= np.uint64(1) << np.uint64(bits):
        return -1
    return after


@njit(cache=True, nogil=True)
def _skip(buf, pos, end, depth, max_depth, first, stack):  # pragma: no cover - compiled
    """The walk of :func:`skip_struct` (``first`` 0) or :func:`skip_value` (``first`` the
    value's type: a one-element list frame at the struct's depth reads it as the struct
    would)."""
    cap = stack.shape[1]
    kind = stack[0]  # 0 struct, 1 list/set, 2 map
    left = stack[1]  # elements (lists) or keys+values (maps) left
    t1 = stack[2]  # element / key type
    t2 = stack[3]  # value type
    lvl = stack[4]  # the decoder's depth of the frame
    sp = 0
    if first == 0:
        kind[0], lvl[0] = 0, depth
    else:
        kind[0], left[0], t1[0], lvl[0] = 1, 1, first, depth
    sp = 1
    while sp > 0:
        top = sp - 1
        d = lvl[top]
        if kind[top] == 0:
            if pos >= end:
                return -1
            head = buf[pos]
            pos += 1
            if head == 0:
                sp -= 1
                continue
            t = np.int64(head & 0x0F)
            if head >> 4 == 0:  # long field header: zigzag i16 id
                v, after = uvarint(buf, pos, end)
                if after < 0 or (after - pos > 1 and v >= np.uint64(1 << 16)):
                    return -1
                pos = after
            if t == 1 or t == 2:
                continue  # a struct's boolean lives in the type nibble
            nd = d
        else:
            if left[top] == 0:
                sp -= 1
                continue
            # lists: every element has type t1; maps alternate key (t1) and value (t2)
            t = t1[top] if kind[top] == 1 or left[top] % 2 == 0 else t2[top]
            left[top] -= 1
            nd = d
            if t == 1 or t == 2:
                if pos >= end or buf[pos] > 2:
                    return -1
                pos += 1
                continue
        # a value of type t
        if t >= 3 and t <= 8:
            pos = _scalar(buf, pos, end, t)
            if pos < 0:
                return -1
        elif t == 9 or t == 10 or t == 11:
            if t == 9 or t == 10:
                if pos >= end:
                    return -1
                h = buf[pos]
                pos += 1
                n = np.int64(h >> 4)
                et = np.int64(h & 0x0F)
            else:
                n = np.int64(0)
            if t == 11 or n == 15:
                u, pos = uvarint(buf, pos, end)
                if pos < 0 or u > np.uint64(end):
                    return -1
                n = np.int64(u)
            if t == 9 or t == 10:
                if et < 1 or et > 12 or n > end - pos or nd + 1 > max_depth or sp >= cap:
                    return -1
                kind[sp], left[sp], t1[sp], lvl[sp] = 1, n, et, nd + 1
                sp += 1
            else:
                if n == 0:
                    continue
                if pos >= end:
                    return -1
                kv = buf[pos]
                pos += 1
                kt = np.int64(kv >> 4)
                vt = np.int64(kv & 0x0F)
                if kt < 1 or kt > 12 or vt < 1 or vt > 12 or n > end - pos:
                    return -1
                if nd + 1 > max_depth or sp >= cap:
                    return -1
                kind[sp], left[sp], t1[sp], t2[sp], lvl[sp] = 2, 2 * n, kt, vt, nd + 1
                sp += 1
        elif t == 12:
            child = nd + 1
            if child > max_depth or sp >= cap:
                return -1
            kind[sp], lvl[sp] = 0, child
            sp += 1
        else:
            return -1
    return pos


@njit(**KERNEL)
def split_byte_arrays(buf, count, offsets, data):  # pragma: no cover - compiled
    """PLAIN BYTE_ARRAY (4-byte length + bytes, repeated) -> Arrow offsets + data.

    Returns the number of bytes consumed, or -1 if a length runs past the buffer."""
    pos = 0
    out = 0
    offsets[0] = 0
    n = buf.shape[0]
    for i in range(count):
        if pos + 4 > n:
            return -1
        length = (
            np.int64(buf[pos])
            | (np.int64(buf[pos + 1]) << 8)
            | (np.int64(buf[pos + 2]) << 16)
            | (np.int64(buf[pos + 3]) << 24)
        )
        pos += 4
        # ``data`` has room for the bytes left after every value's length prefix: a
        # length that overruns it (or the page) is corrupt, and must not write past it.
        if pos + length > n or out + length > data.shape[0]:
            return -1
        for j in range(length):
            data[out + j] = buf[pos + j]
        out += length
        pos += length
        offsets[i + 1] = out
    return pos


@njit(**KERNEL)
def hash_byte_arrays(buf, count, out):  # pragma: no cover - compiled
    """xxHash64 of each of ``count`` PLAIN BYTE_ARRAY values of ``buf`` into ``out``, read
    in place: the hashes :func:`split_byte_arrays` then ``hash_var`` give, without the
    copy. Returns the bytes consumed, or -1 exactly where :func:`split_byte_arrays` would
    (a length past the page, or the lengths together past its bytes after the prefixes)."""
    pos = 0
    total = 0
    n = buf.shape[0]
    room = n - 4 * count
    for i in range(count):
        if pos + 4 > n:
            return -1
        length = (
            np.int64(buf[pos])
            | (np.int64(buf[pos + 1]) << 8)
            | (np.int64(buf[pos + 2]) << 16)
            | (np.int64(buf[pos + 3]) << 24)
        )
        pos += 4
        if pos + length > n or total + length > room:
            return -1
        out[i] = xxh64_bytes(buf, pos, length)
        total += length
        pos += length
    return pos


@njit(**KERNEL)
def any_in(hashes, probe):  # pragma: no cover - compiled
    """Whether any of ``hashes`` equals any of ``probe`` (both ``uint64``)."""
    k = probe.shape[0]
    if k <= 16:
        for i in range(hashes.shape[0]):
            h = hashes[i]
            for j in range(k):
                if h == probe[j]:
                    return True
        return False
    p = np.sort(probe)
    for i in range(hashes.shape[0]):
        h = hashes[i]
        at = np.searchsorted(p, h)
        if at < k and p[at] == h:
            return True
    return False


@njit(**KERNEL)
def plain_filter_headers(data, starts, lengths, num_bytes, header_len):  # pragma: no cover
    """For each filter of ``lengths[i]`` bytes at ``starts[i]`` of ``data``: when it is
    a BloomFilterHeader exactly as writers emit it (``15 <zigzag varint num_bytes> 1c 1c
    00 00 1c 1c 00 00 1c 1c 00 00 00``: BLOCK, XXHASH, UNCOMPRESSED) with a valid
    ``num_bytes`` (a power of two from 32 B to 128 MiB) and the bitset fills the rest,
    ``num_bytes[i]`` and ``header_len[i]``; else ``num_bytes[i] = -1``."""
    for i in range(starts.shape[0]):
        num_bytes[i] = -1
        s = starts[i]
        end = s + lengths[i]
        if lengths[i] < 15 or data[s] != 0x15:
            continue
        p = s + 1
        v = np.int64(0)
        shift = 0
        done = False
        while p < end and shift <= 28:  # an i32 takes at most five bytes
            b = np.int64(data[p])
            p += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                done = True
                break
            shift += 7
        if not done or v >= np.int64(1) << 32 or p + 13 > end:
            continue
        n = (v >> 1) ^ -(v & 1)
        ok = True
        for j in range(3):  # the three one-member unions, then the header's STOP
            q = p + 4 * j
            if data[q] != 0x1C or data[q + 1] != 0x1C or data[q + 2] != 0 or data[q + 3] != 0:
                ok = False
        if not ok or data[p + 12] != 0:
            continue
        if n < 32 or n > 128 * 1024 * 1024 or n & (n - 1):
            continue
        hl = p + 13 - s
        if hl + n != lengths[i]:
            continue
        num_bytes[i] = n
        header_len[i] = hl
