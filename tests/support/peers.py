"""Test helpers: read the bloom filters other Parquet writers put in a file.

Written from the Parquet spec (parquet.thrift ``BloomFilterHeader``, Thrift compact
protocol), independently of bloomskip, so the interop tests compare bloomskip against
bytes it had no hand in producing.

* :func:`parse_bloom_header` - the compact-protocol header in front of every bitset;
* :func:`read_bloom_filters` - every (row group, column) filter of a file;
* :func:`file_physical_spec` - the :class:`bloomskip.PhysicalSpec` of a file's column,
  from its Parquet schema (physical type, FLBA length, time unit of the logical type);
* :func:`row_group_values` - one row group's values of a leaf column (nested leaves
  flattened);
* :func:`mismatch_report` - why a rebuilt filter differs from a file's, for the
  assertion message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bloomskip import PhysicalSpec, PhysicalType, Sbbf

# Thrift compact protocol type codes (low nibble of a field header).
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE = 1, 2, 3, 4, 5, 6, 7
_BINARY, _LIST, _SET, _MAP, _STRUCT = 8, 9, 10, 11, 12


class _Reader:
    """A cursor over compact-protocol bytes that can read varints and skip any value."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.buf):
            raise ValueError("truncated BloomFilterHeader")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value
            if shift > 70:
                raise ValueError("varint too long")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def field_header(self, last_id: int) -> tuple[int, int] | None:
        """``(field id, type)``, or None at the struct's stop byte."""
        b = self.byte()
        if b == 0:
            return None
        delta, ftype = b >> 4, b & 0x0F
        fid = last_id + delta if delta else self.zigzag()
        return fid, ftype

    def skip(self, ftype: int) -> None:
        if ftype in (_BOOL_TRUE, _BOOL_FALSE):
            return  # a struct field's bool lives in the type nibble
        if ftype == _BYTE:
            self.pos += 1
        elif ftype in (_I16, _I32, _I64):
            self.varint()
        elif ftype == _DOUBLE:
            self.pos += 8
        elif ftype == _BINARY:
            size = self.varint()  # read before moving pos: `pos += varint()` loses a byte
            self.pos += size
        elif ftype in (_LIST, _SET):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            for _ in range(size):
                self.skip_element(etype)
        elif ftype == _MAP:
            size = self.varint()
            if size:
                kv = self.byte()
                for _ in range(size):
                    self.skip_element(kv >> 4)
                    self.skip_element(kv & 0x0F)
        elif ftype == _STRUCT:
            self.struct_members()
        else:
            raise ValueError(f"unknown Thrift compact type {ftype}")
        if self.pos > len(self.buf):
            raise ValueError("truncated BloomFilterHeader")

    def skip_element(self, etype: int) -> None:
        if etype in (_BOOL_TRUE, _BOOL_FALSE):
            self.pos += 1  # in a container a bool takes one byte
        else:
            self.skip(etype)

    def struct_members(self) -> list[int]:
        """Skip a struct, returning the ids of the fields it set."""
        ids: list[int] = []
        last = 0
        while (head := self.field_header(last)) is not None:
            fid, ftype = head
            ids.append(fid)
            self.skip(ftype)
            last = fid
        return ids


@dataclass(frozen=True)
class BloomHeader:
    num_bytes: int
    header_len: int
    algorithm: int | None  # member id of the BloomFilterAlgorithm union (1 = BLOCK)
    hash: int | None  # BloomFilterHash (1 = XXHASH)
    compression: int | None  # BloomFilterCompression (1 = UNCOMPRESSED)


def parse_bloom_header(buf: bytes) -> BloomHeader:
    """Parse a Thrift-compact ``BloomFilterHeader``; unknown fields are skipped."""
    r = _Reader(buf)
    num_bytes = None
    unions: dict[int, int | None] = {2: None, 3: None, 4: None}
    last = 0
    while (head := r.field_header(last)) is not None:
        fid, ftype = head
        if fid == 1 and ftype == _I32:
            num_bytes = r.zigzag()
        elif fid in unions and ftype == _STRUCT:
            members = r.struct_members()
            unions[fid] = members[0] if len(members) == 1 else None
        else:
            r.skip(ftype)
        last = fid
    if num_bytes is None:
        raise ValueError("BloomFilterHeader without numBytes")
    return BloomHeader(num_bytes, r.pos, unions[2], unions[3], unions[4])


@dataclass(frozen=True)
class FileFilter:
    """One column chunk's bloom filter as stored in a file."""

    row_group: int
    column: int
    name: str
    header: BloomHeader
    raw_header: bytes
    bitset: bytes


def read_bloom_filters(path: str | Path) -> list[FileFilter]:
    """Every bloom filter in the file; chunks without one are left out."""
    meta = pq.ParquetFile(path).metadata
    out = []
    with open(path, "rb") as f:
        for rg in range(meta.num_row_groups):
            for col in range(meta.num_columns):
                chunk = meta.row_group(rg).column(col)
                offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
                if offset is None or offset <= 0:
                    continue
                assert length, "every peer writes bloom_filter_length (field 15)"
                f.seek(offset)
                raw = f.read(length)
                assert len(raw) == length
                header = parse_bloom_header(raw)
                assert header.header_len + header.num_bytes == length
                assert (header.algorithm, header.hash, header.compression) == (1, 1, 1)
                name = meta.schema.column(col).path
                h = header.header_len
                out.append(FileFilter(rg, col, name, header, raw[:h], raw[h:]))
    return out


_TIME_UNITS = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
_CONVERTED_UNITS = {
    "TIMESTAMP_MILLIS": "ms",
    "TIMESTAMP_MICROS": "us",
    "TIME_MILLIS": "ms",
    "TIME_MICROS": "us",
}


def file_physical_spec(path: str | Path, column: int) -> PhysicalSpec:
    """How the file stores ``column``: physical type, FLBA length, time unit."""
    schema = pq.ParquetFile(path).metadata.schema.column(column)
    physical = PhysicalType(schema.physical_type)
    if physical is PhysicalType.FIXED_LEN_BYTE_ARRAY:
        return PhysicalSpec(physical, type_length=schema.length)
    unit = None
    if physical in (PhysicalType.INT32, PhysicalType.INT64):
        logical = schema.logical_type
        if logical.type in ("TIMESTAMP", "TIME"):
            unit = _TIME_UNITS[json.loads(logical.to_json())["timeUnit"]]
        else:
            unit = _CONVERTED_UNITS.get(schema.converted_type)
    return PhysicalSpec(physical, time_unit=unit)


def row_group_values(path: str | Path, row_group: int, name: str) -> pa.ChunkedArray:
    """The leaf column's values in one row group, as pyarrow reads them.

    ``name`` is the Parquet column path (``ff.name``); for a leaf inside a list, map or
    struct (``l.list.item``, ``m.key_value.key``, ``s.x``) the top-level column is read
    and reduced to the leaf's values: list elements flattened, map keys or values, struct
    fields with the struct's nulls - the values a writer put in the chunk.
    """
    top, *rest = name.split(".")
    column = pq.ParquetFile(path).read_row_group(row_group, columns=[top]).column(0)
    if not rest:
        return column
    return pa.chunked_array([leaf_values(chunk, rest) for chunk in column.chunks])


def leaf_values(array: pa.Array, path: list[str]) -> pa.Array:
    """The values of the leaf at ``path`` (Parquet path components below ``array``)."""
    while path:
        t = array.type
        if pa.types.is_map(t):  # <name>.key_value.key / .value (or "entries")
            array = array.keys if path[1] == "key" else array.items
            path = path[2:]
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
            array = array.flatten()  # <name>.list.element (or "item")
            path = path[2:]
        elif pa.types.is_struct(t):
            array = pc.struct_field(array, path[0])
            path = path[1:]
        else:
            raise ValueError(f"cannot descend into {t} along {path}")
    return array


def mismatch_report(
    ours: Sbbf, theirs: bytes, values: pa.ChunkedArray | pa.Array, spec: PhysicalSpec
) -> str:
    """Say how ``ours`` differs from the file's bitset ``theirs`` (for assertion messages).

    Values the file's filter lacks mean the peer hashed other bytes than bloomskip (a
    different physical encoding); extra bits in the file with no missing values mean the
    peer inserted values that are not in the row group.
    """
    if ours.num_bytes != len(theirs):
        return f"size differs: bloomskip {ours.num_bytes} B, file {len(theirs)} B"
    file_filter = Sbbf.from_bytes(theirs)
    found = file_filter.check(values, physical=spec)
    valid = found.shape[0] - values.null_count
    missing = valid - int(found.sum())
    a = np.frombuffer(ours.to_bytes(), np.uint8)
    b = np.frombuffer(theirs, np.uint8)
    return (
        f"{int(np.count_nonzero(a != b))} of {a.size} bytes differ; popcount bloomskip "
        f"{ours.popcount()}, file {file_filter.popcount()}; {missing} of {valid} non-null "
        f"values hashed as {spec} are absent from the file's filter"
    )
