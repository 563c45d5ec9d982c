"""Compiled kernels that read a Parquet footer into arrays: the top-level fields of
``FileMetaData``, and per row group what pruning asks of the column chunks of its bound
columns - in one pass over the Thrift compact bytes, for every row group at once.

:func:`footer_fields` validates the whole footer as :func:`~.thrift.decode_struct` would
(every value through :func:`~.kernels.skip_value`, the decoder's twin) and records where
its top-level fields are; :func:`row_group_fields` then walks the (validated) row groups
and fills one row of :data:`NF` integers per (row group, wanted column). A field that
occurs twice counts as its first occurrence, as ``Struct.get`` reads it; a field of
another Thrift type than parquet.thrift says is recorded as such, never read as a value.
Anything the slow path would refuse (a row group without a valid ``num_rows``, columns
that are not a list of structs or not one per leaf) returns a negative code, and the
caller falls back to the slow path, which raises the precise error.

Field ids follow ``parquet.thrift`` (apache/parquet-format); the compact protocol,
Apache Thrift ``doc/specs/thrift-compact-protocol.md``. Loaded on first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bloomskip.parquet.kernels import new_stack, skip_value, uvarint

#: Deepest Thrift nesting (:data:`bloomskip.parquet.thrift.MAX_DEPTH`).
MAX_DEPTH = 64

# One row of integers per row group for a column (the same layout in :mod:`.chunks`).
F_START, F_END = 0, 1  # the ColumnChunk struct's bytes
F_META = 2  # 1: ColumnMetaData (field 3) is a struct
F_STATS = 3  # 1: ColumnMetaData.statistics (12) is a struct
F_NULLS_OK, F_NULLS = 4, 5  # Statistics.null_count (3): an integer or a boolean
#: Integer fields of ColumnMetaData: num_values, bloom_filter_offset,
#: bloom_filter_length, codec, total_compressed_size, data_page_offset,
#: dictionary_page_offset; for each a kind (0 absent, 1 integer, 2 another type) and
#: the value.
META_INTS = (5, 14, 15, 4, 7, 9, 11)
F_INTS = 6
#: Fields of ColumnMetaData decoded when needed: encoding_stats, encodings; for each,
#: its Thrift type plus one (0: absent) and where its value starts.
META_SPANS = (13, 2)
F_SPANS = F_INTS + 2 * len(META_INTS)
#: Statistics fields min_value (6), max_value (5), min (2), max (1): for each, a kind
#: (0 absent, 1 binary, 2 another type), the position of its bytes and their length.
BOUND_FIELDS = (6, 5, 2, 1)
F_BOUNDS = F_SPANS + 2 * len(META_SPANS)
NF = F_BOUNDS + 3 * len(BOUND_FIELDS)

# Codes returned for what the slow path refuses.
BAD = -1  # invalid Thrift (the decoder raises)
BAD_ROW_GROUPS = -2  # row_groups or a row group's columns are not a list of structs
BAD_NUM_ROWS = -3  # a row group without a valid num_rows
BAD_COLUMNS = -4  # a row group whose column chunks are not one per leaf


@njit(cache=True, nogil=True)
def _header(buf, pos, end, last):  # pragma: no cover - compiled
    """A struct field header: (type, field id, position after); type -1 at the STOP,
    -2 for invalid bytes."""
    if pos >= end:
        return -2, 0, -1
    head = np.int64(buf[pos])
    pos += 1
    if head == 0:
        return -1, 0, pos
    t = head & 0x0F
    delta = head >> 4
    if delta:
        return t, last + delta, pos
    v, pos = uvarint(buf, pos, end)
    if pos < 0 or v >= np.uint64(1 << 16):
        return -2, 0, -1
    fid = np.int64(v >> np.uint64(1)) ^ -np.int64(v & np.uint64(1))
    return t, fid, pos


@njit(cache=True, nogil=True)
def _integer(buf, pos, end, t):  # pragma: no cover - compiled
    """(value, position after) of an integer field of type BYTE, I16, I32 or I64."""
    if t == 3:
        if pos >= end:
            return 0, -1
        b = np.int64(buf[pos])
        return (b - 256 if b > 127 else b), pos + 1
    v, pos = uvarint(buf, pos, end)
    return np.int64(v >> np.uint64(1)) ^ -np.int64(v & np.uint64(1)), pos


@njit(cache=True, nogil=True)
def index_footer(buf, end, ftype, fstart):  # pragma: no cover - compiled
    """Validate FileMetaData (depth 0) at the start of ``buf[:end]`` as the decoder would;
    for field ids below ``ftype.size``, the first occurrence's type and value position
    (type -1: absent). The row groups (the first ``row_groups`` field) are read on the
    way: ``(position after the struct, num_rows per row group, position of each column
    chunk per row group)``; the position is negative where the slow path must decide
    (invalid Thrift, or row groups it refuses)."""
    pos = 0
    last = 0
    stack = new_stack(MAX_DEPTH)
    rows = np.zeros(0, np.int64)
    starts = np.zeros((0, 0), np.int64)
    while True:
        t, fid, pos = _header(buf, pos, end, last)
        if t == -1:
            return pos, rows, starts
        if t == -2:
            return BAD, rows, starts
        start = pos
        if fid == 4 and ftype[4] == -1:
            if t != 9 and t != 10:
                return BAD_ROW_GROUPS, rows, starts
            pos, rows, starts = _row_groups(buf, pos, end, stack)
        else:
            pos = skip_value(buf, pos, end, t, 0, MAX_DEPTH, stack)
        if pos < 0:
            return pos, rows, starts
        if 0 <= fid < ftype.size and ftype[fid] == -1:
            ftype[fid], fstart[fid] = t, start
        last = fid


@njit(cache=True, nogil=True)
def _list_header(buf, pos, end):  # pragma: no cover - compiled
    """(count, element type, position after) of a list header, checked as the decoder
    checks it (a known element type, no more elements than bytes left); position -1."""
    if pos >= end:
        return 0, 0, -1
    h = np.int64(buf[pos])
    pos += 1
    n = h >> 4
    et = h & 0x0F
    if n == 15:
        v, pos = uvarint(buf, pos, end)
        if pos < 0 or v > np.uint64(end):
            return 0, 0, -1
        n = np.int64(v)
    if et < 1 or et > 12 or n > end - pos:
        return 0, 0, -1
    return n, et, pos


@njit(cache=True, nogil=True)
def _row_groups(buf, pos, end, stack):  # pragma: no cover - compiled
    """The row_groups list (a field of FileMetaData): validated, num_rows and chunk
    positions read; negative position for what the slow path refuses."""
    rows = np.zeros(0, np.int64)
    starts = np.zeros((0, 0), np.int64)
    count, et, pos = _list_header(buf, pos, end)
    if pos < 0:
        return BAD, rows, starts
    if et != 12:
        return BAD_ROW_GROUPS, rows, starts
    rows = np.empty(count, np.int64)
    width = -1  # column chunks per row group, from the first one
    for r in range(count):
        last = 0
        rows_seen = cols_seen = False
        num_rows = np.int64(-1)
        while True:  # a RowGroup struct, depth 2
            t, fid, pos = _header(buf, pos, end, last)
            if t == -1:
                break
            if t == -2:
                return BAD, rows, starts
            last = fid
            if fid == 1 and not cols_seen:
                cols_seen = True
                if t != 9 and t != 10:
                    return BAD_ROW_GROUPS, rows, starts
                n, ct, pos = _list_header(buf, pos, end)
                if pos < 0:
                    return BAD, rows, starts
                if ct != 12:
                    return BAD_ROW_GROUPS, rows, starts
                if width == -1:
                    if count * n > end - pos:  # a chunk takes a byte at least
                        return BAD_COLUMNS, rows, starts
                    width = n
                    starts = np.empty((count, n), np.int64)
                elif n != width:
                    return BAD_COLUMNS, rows, starts
                for c in range(n):
                    starts[r, c] = pos
                    pos = skip_value(buf, pos, end, 12, 3, MAX_DEPTH, stack)
                    if pos < 0:
                        return BAD, rows, starts
                continue
            at = pos
            pos = skip_value(buf, pos, end, t, 2, MAX_DEPTH, stack)
            if pos < 0:
                return BAD, rows, starts
            if fid == 3 and not rows_seen:
                rows_seen = True
                if t == 3 or t == 4 or t == 5 or t == 6:
                    num_rows, _ = _integer(buf, at, end, t)
        if num_rows < 0:
            return BAD_NUM_ROWS, rows, starts
        if not cols_seen:
            if width == -1:
                width = 0
                starts = np.empty((count, 0), np.int64)
            elif width != 0:
                return BAD_COLUMNS, rows, starts
        rows[r] = num_rows
    if width == -1:
        starts = np.empty((count, 0), np.int64)
    return pos, rows, starts


@njit(cache=True, nogil=True)
def chunk_fields(buf, end, starts, out):  # pragma: no cover - compiled
    """Read the (validated) ColumnChunk structs at ``starts`` into the rows of ``out``;
    False if one cannot be read (never, once :func:`index_footer` accepted the footer)."""
    stack = new_stack(MAX_DEPTH)
    for r in range(starts.size):
        out[r, F_START] = starts[r]
        pos = _chunk(buf, starts[r], end, out[r], stack)
        if pos < 0:
            return False
        out[r, F_END] = pos
    return True


@njit(cache=True, nogil=True)
def _chunk(buf, pos, end, row, stack):  # pragma: no cover - compiled
    """A ColumnChunk struct (depth 4): its ColumnMetaData's fields into ``row``."""
    last = 0
    seen = False
    while True:
        t, fid, pos = _header(buf, pos, end, last)
        if t == -1:
            return pos
        if t == -2:
            return -1
        last = fid
        if fid == 3 and not seen:
            seen = True
            if t == 12:
                row[F_META] = 1
                pos = _metadata(buf, pos, end, row, stack)
                if pos < 0:
                    return -1
                continue
        pos = skip_value(buf, pos, end, t, 4, MAX_DEPTH, stack)
        if pos < 0:
            return -1


@njit(cache=True, nogil=True)
def _metadata(buf, pos, end, row, stack):  # pragma: no cover - compiled
    """A ColumnMetaData struct (depth 5): the integers of :data:`META_INTS`, the
    statistics."""
    last = 0
    stats_seen = False
    while True:
        t, fid, pos = _header(buf, pos, end, last)
        if t == -1:
            return pos
        if t == -2:
            return -1
        last = fid
        k = -1
        for i in range(len(META_INTS)):
            if META_INTS[i] == fid:
                k = F_INTS + 2 * i
        if k >= 0 and row[k] == 0:
            if t == 3 or t == 4 or t == 5 or t == 6:
                row[k + 1], pos = _integer(buf, pos, end, t)
                row[k] = 1
                if pos < 0:
                    return -1
                continue
            row[k] = 2
        elif (fid == 13 or fid == 2) and row[F_SPANS + (0 if fid == 13 else 2)] == 0:
            k = F_SPANS + (0 if fid == 13 else 2)
            row[k], row[k + 1] = t + 1, pos
        elif fid == 12 and not stats_seen:
            stats_seen = True
            if t == 12:
                row[F_STATS] = 1
                pos = _statistics(buf, pos, end, row, stack)
                if pos < 0:
                    return -1
                continue
        pos = skip_value(buf, pos, end, t, 5, MAX_DEPTH, stack)
        if pos < 0:
            return -1


@njit(cache=True, nogil=True)
def _statistics(buf, pos, end, row, stack):  # pragma: no cover - compiled
    """A Statistics struct (depth 6): null_count and the four bounds."""
    last = 0
    nulls_seen = False
    while True:
        t, fid, pos = _header(buf, pos, end, last)
        if t == -1:
            return pos
        if t == -2:
            return -1
        last = fid
        if fid == 3 and not nulls_seen:
            nulls_seen = True
            if t == 1 or t == 2:  # a boolean is an int to the slow path: True 1, False 0
                row[F_NULLS_OK], row[F_NULLS] = 1, 1 if t == 1 else 0
                continue
            if t == 3 or t == 4 or t == 5 or t == 6:
                v, pos = _integer(buf, pos, end, t)
                if pos < 0:
                    return -1
                row[F_NULLS] = v
                row[F_NULLS_OK] = 1 if v >= 0 else 0
                continue
        else:
            b = -1
            for i in range(len(BOUND_FIELDS)):
                if BOUND_FIELDS[i] == fid:
                    b = i
            if b >= 0 and row[F_BOUNDS + 3 * b] == 0:
                if t == 8:
                    n, pos = uvarint(buf, pos, end)
                    if pos < 0 or n > np.uint64(end - pos):
                        return -1
                    row[F_BOUNDS + 3 * b] = 1
                    row[F_BOUNDS + 3 * b + 1] = pos
                    row[F_BOUNDS + 3 * b + 2] = np.int64(n)
                    pos += np.int64(n)
                    continue
                row[F_BOUNDS + 3 * b] = 2
        pos = skip_value(buf, pos, end, t, 6, MAX_DEPTH, stack)
        if pos < 0:
            return -1


def new_fields(row_groups: int) -> np.ndarray:
    """The output of :func:`chunk_fields`: every field unset (0, kinds absent)."""
    return np.zeros((row_groups, NF), dtype=np.int64)
