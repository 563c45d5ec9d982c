"""Compiled kernels of the Parquet layer: validating Thrift structs without building them,
and splitting PLAIN ``BYTE_ARRAY`` pages into Arrow offsets and data.

Loaded on first use (:func:`bloomskip._lazy.lazy`): numba is not imported before then.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip._numba import KERNEL


@njit(cache=True, nogil=True)
def skip_struct(buf, pos, end, depth, max_depth):  # pragma: no cover - compiled
    """Validate the struct at ``pos`` as the decoder would and return the position after
    it, or -1 if the decoder would raise. Iterative, with an explicit stack."""
    cap = max_depth + 4
    kind = np.empty(cap, np.int64)  # 0 struct, 1 list/set, 2 map
    left = np.empty(cap, np.int64)  # elements (lists) or keys+values (maps) left
    t1 = np.empty(cap, np.int64)  # element / key type
    t2 = np.empty(cap, np.int64)  # value type
    lvl = np.empty(cap, np.int64)  # the decoder's depth of the frame
    sp = 0
    if depth > max_depth:
        return -1
    kind[0], lvl[0] = 0, depth
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
                v = np.uint64(0)
                shift = 0
                while True:
                    if pos >= end or shift > 63:
                        return -1
                    b = buf[pos]
                    pos += 1
                    v |= np.uint64(b & 0x7F) << np.uint64(shift)
                    if b < 0x80:
                        break
                    shift += 7
                if shift > 0 and v >= np.uint64(1 << 16):
                    return -1
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
        if t == 3:
            if pos >= end:
                return -1
            pos += 1
        elif t == 4 or t == 5 or t == 6:
            bits = 16 if t == 4 else (32 if t == 5 else 64)
            v = np.uint64(0)
            shift = 0
            while True:
                if pos >= end or shift > 63:
                    return -1
                b = buf[pos]
                pos += 1
                if shift == 63 and (b & 0x7F) > 1:
                    return -1
                v |= np.uint64(b & 0x7F) << np.uint64(shift)
                if b < 0x80:
                    break
                shift += 7
            if shift > 0 and bits < 64 and v >= np.uint64(1) << np.uint64(bits):
                return -1
        elif t == 7:
            if pos + 8 > end:
                return -1
            pos += 8
        elif t == 8 or t == 9 or t == 10 or t == 11:
            if t == 9 or t == 10:
                if pos >= end:
                    return -1
                h = buf[pos]
                pos += 1
                n = np.int64(h >> 4)
                et = np.int64(h & 0x0F)
            else:
                n = np.int64(0)
            if (t != 9 and t != 10) or n == 15:
                u = np.uint64(0)
                shift = 0
                while True:
                    if pos >= end or shift > 63:
                        return -1
                    b = buf[pos]
                    pos += 1
                    u |= np.uint64(b & 0x7F) << np.uint64(shift)
                    if b < 0x80:
                        break
                    shift += 7
                if u > np.uint64(end):
                    return -1
                n = np.int64(u)
            if t == 8:
                if pos + n > end:
                    return -1
                pos += n
            elif t == 9 or t == 10:
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
