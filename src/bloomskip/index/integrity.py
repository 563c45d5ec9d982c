"""Checksums of an index's own objects: damage and mix-ups are found before a byte is used.

An index lives in shared directories and buckets, so every object it reads back is
checked against a CRC-32 (zlib's, the polynomial of gzip and PNG) that its writer stored
with it. A table's checksums are *seeded* with its name and the position of the row
group they cover, so that besides damage - flipped bits, zeroed or cut-off bytes, a
half-written object - a mix-up fails too: a table copied over another (another column's,
an older version's), row groups moved. A manifest names its own version, which its
reader checks. What is checked, and where the checksum lives:

==========================  =================================================================
manifest (JSON)             ``"checksum"``: of the canonical JSON of every other key
                            (:func:`json_checksum`)
Parquet tables (fragment,   one CRC per row group, of its decoded values (:func:`table_crc`),
file and zone tables)       in the file's key-value metadata :data:`TABLE_KEY`; a reader of
                            some row groups (a lookup's fragment rows) checks those
==========================  =================================================================

The serving layout checks itself (:mod:`.serving`): a directory ends with the CRC-32 of
all before it, and holds the CRC-32 of each frame of its slabs.

A CRC detects damage, not forgery: whoever may write the index can write checksums that
agree with a lie. Against such a writer the other checks hold (names under the root,
sizes, counts, types), so a forged index gives typed errors or wrong answers, never a
read, write or delete outside the root, a hang or a crash.

Objects written before checksums existed carry none and are read as they were.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import CorruptFileError

#: The key-value metadata key of a Parquet table's row group checksums (a JSON list).
TABLE_KEY = "bloomskip.checksums"
#: The manifest key of its own checksum.
MANIFEST_KEY = "checksum"
_PREFIX = "crc32:"


def seed(name: str, unit: int | str = 0) -> int:
    """The start value of the CRC of unit ``unit`` of the object ``name``."""
    return zlib.crc32(f"{name}#{unit}".encode())


# ---------------------------------------------------------------------------- manifests


def json_checksum(doc: dict[str, Any]) -> str:
    """The checksum of a manifest: of its canonical JSON, without its checksum key."""
    body = {k: v for k, v in doc.items() if k != MANIFEST_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{_PREFIX}{zlib.crc32(text.encode()):08x}"


def check_json(doc: dict[str, Any], label: str) -> None:
    """Refuse a manifest whose checksum does not match (one without is accepted)."""
    if MANIFEST_KEY not in doc:
        return
    if doc[MANIFEST_KEY] != json_checksum(doc):
        raise CorruptFileError(f"{label}: manifest damaged (its checksum does not match)")


# ------------------------------------------------------------------------------ tables


def table_crc(table: pa.Table, name: str, group: int) -> int:
    """CRC of row group ``group`` of table ``name``: of its column names, types, row
    count, validity and values, whatever the chunking and the Parquet encoding."""
    value = seed(name, group)
    value = zlib.crc32(struct.pack("<q", table.num_rows), value)
    for field, column in zip(table.schema, table.columns, strict=True):
        value = zlib.crc32(f"{field.name}:{field.type}".encode(), value)
        arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        for part in _canonical(arr):
            value = zlib.crc32(part, value)
    return value


def _canonical(arr: pa.Array):
    """Bytes that determine ``arr``'s values (nulls included), independent of its
    buffers' slack, offsets and chunking."""
    n = len(arr)
    if arr.null_count:
        yield arr.is_valid().to_numpy(zero_copy_only=False).view(np.uint8)
    t = arr.type
    if n == 0:
        return
    if pa.types.is_boolean(t):
        yield pc.fill_null(arr, False).to_numpy(zero_copy_only=False).view(np.uint8)
    elif (
        pa.types.is_binary(t)
        or pa.types.is_string(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_large_string(t)
    ):
        a = arr.cast(pa.large_binary())
        if a.null_count:  # null slots become empty values (the validity was yielded)
            a = pc.fill_null(a, pa.scalar(b"", pa.large_binary()))
        offsets = np.frombuffer(a.buffers()[1], dtype="<i8")[a.offset : a.offset + n + 1]
        yield np.ascontiguousarray(np.diff(offsets), dtype="<i8")
        data = a.buffers()[2]
        if data is not None and offsets[-1] > offsets[0]:
            yield np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]]
    elif (
        pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)
    ) and arr.buffers()[1] is not None:
        width = t.bit_width // 8
        values = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        values = values[arr.offset * width : (arr.offset + n) * width].reshape(n, width)
        if arr.null_count:
            values = values.copy()
            values[~arr.is_valid().to_numpy(zero_copy_only=False)] = 0
        yield np.ascontiguousarray(values)
    else:  # no index table has other types; a damaged one is checked all the same
        yield repr(arr.to_pylist()).encode()


def table_checksums(table: pa.Table, name: str, group_rows: int) -> list[int]:
    """The checksum of each row group ``table`` is written in (``group_rows`` rows each)."""
    return [
        table_crc(table.slice(start, group_rows), name, g)
        for g, start in enumerate(range(0, table.num_rows, group_rows))
    ]


def stored_checksums(metadata: dict[bytes, bytes] | None, groups: int, label: str):
    """The row group checksums a table's key-value metadata holds (None: written before
    checksums existed)."""
    raw = (metadata or {}).get(TABLE_KEY.encode())
    if raw is None:
        return None
    try:
        sums = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        sums = None
    if (
        not isinstance(sums, list)
        or len(sums) != groups
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in sums)
    ):
        raise CorruptFileError(f"{label}: damaged (its row group checksums are unreadable)")
    return sums


def check_table(table: pa.Table, name: str, group: int, want: int, label: str) -> None:
    if table_crc(table, name, group) != want:
        raise CorruptFileError(f"{label}: damaged (row group {group} fails its checksum)")


__all__ = [
    "MANIFEST_KEY",
    "TABLE_KEY",
    "check_json",
    "check_table",
    "json_checksum",
    "seed",
    "stored_checksums",
    "table_checksums",
    "table_crc",
]
