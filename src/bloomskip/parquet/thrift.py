"""Thrift compact protocol: decode any struct into a tree that re-encodes byte-identically.

Parquet's footer (``FileMetaData``), page headers and ``BloomFilterHeader`` are Thrift
structs in the compact protocol. To change one field of a footer (say
``ColumnMetaData.bloom_filter_offset``) without losing anything a newer writer put there,
a :class:`Struct` keeps every field it read - known or not - together with its exact
bytes. Encoding re-emits the original bytes of every untouched field; only fields that
were set or removed are encoded anew (and the header of the field after them, whose id
delta changes). Decoding and re-encoding an unmodified struct gives the input back.

Hostile input cannot make the decoder allocate without bound or recurse without end:
every length is checked against the bytes left, nesting is capped at :data:`MAX_DEPTH`,
varints at 10 bytes; any violation raises :class:`~bloomskip.errors.CorruptFileError`
with the byte offset.

Compact protocol reference: Apache Thrift ``doc/specs/thrift-compact-protocol.md``.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field
from typing import Any

from bloomskip.errors import CorruptFileError

# Compact protocol type codes.
STOP = 0
BOOL_TRUE = 1
BOOL_FALSE = 2
BYTE = 3
I16 = 4
I32 = 5
I64 = 6
DOUBLE = 7
BINARY = 8
LIST = 9
SET = 10
MAP = 11
STRUCT = 12

MAX_DEPTH = 64

_INT_TYPES = (BYTE, I16, I32, I64)
_INT_RANGE = {BYTE: 8, I16: 16, I32: 32, I64: 64}


@dataclass
class List:
    """A Thrift list or set: element type code and elements (``bool`` for booleans)."""

    elem_type: int
    items: list[Any]
    is_set: bool = False


@dataclass
class Map:
    key_type: int
    value_type: int
    items: list[tuple[Any, Any]]


@dataclass
class Field:
    """One field as read: id, type code, value, and its original bytes (header, value)."""

    id: int
    type: int
    value: Any
    raw_value: bytes | None = None
    long_header: bool = False
    dirty: bool = False


@dataclass
class Struct:
    """A Thrift struct: its fields in wire order. Unknown fields are kept as they came."""

    fields: list[Field] = field(default_factory=list)
    #: set when a field of this struct was set or removed since decoding
    changed: bool = False

    # -- access ------------------------------------------------------------------

    def field(self, fid: int) -> Field | None:
        for f in self.fields:
            if f.id == fid:
                return f
        return None

    def get(self, fid: int, default: Any = None) -> Any:
        f = self.field(fid)
        return default if f is None else f.value

    def __contains__(self, fid: int) -> bool:
        return self.field(fid) is not None

    def set(self, fid: int, type_code: int, value: Any) -> None:
        """Set field ``fid`` (kept in ascending id order if new); marks it re-encoded."""
        if type_code in (BOOL_TRUE, BOOL_FALSE):
            type_code = BOOL_TRUE if value else BOOL_FALSE
        self.changed = True
        f = self.field(fid)
        if f is not None:
            f.type, f.value, f.raw_value, f.dirty = type_code, value, None, True
            return
        new = Field(fid, type_code, value, dirty=True)
        at = len(self.fields)
        for i, existing in enumerate(self.fields):
            if existing.id > fid:
                at = i
                break
        self.fields.insert(at, new)

    def remove(self, fid: int) -> None:
        kept = [f for f in self.fields if f.id != fid]
        self.changed = self.changed or len(kept) != len(self.fields)
        self.fields = kept


def _changed(value: Any) -> bool:
    """Whether a decoded value, or anything nested in it, was modified."""
    if isinstance(value, Struct):
        return value.changed or any(
            f.dirty or (f.type in (STRUCT, LIST, SET, MAP) and _changed(f.value))
            for f in value.fields
        )
    if isinstance(value, List):
        return value.elem_type in (STRUCT, LIST, SET, MAP) and any(_changed(x) for x in value.items)
    if isinstance(value, Map):
        return any(_changed(k) or _changed(v) for k, v in value.items)
    return False


# ------------------------------------------------------------------------- decoding


class _Reader:
    __slots__ = ("buf", "end", "name", "pos")

    def __init__(self, buf: bytes | memoryview, pos: int, end: int, name: str) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end
        self.name = name

    def fail(self, what: str) -> CorruptFileError:
        return CorruptFileError(f"{self.name}: {what} at byte {self.pos}")

    def byte(self) -> int:
        if self.pos >= self.end:
            raise self.fail("Thrift data ends early")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise self.fail(f"length {n} runs past the end of the Thrift data")
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out

    def uvarint(self) -> int:
        result = shift = 0
        for _ in range(10):
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
        raise self.fail("varint longer than 10 bytes")

    def zigzag(self, bits: int) -> int:
        v = self.uvarint()
        if v >= 1 << bits:
            raise self.fail(f"integer does not fit in {bits} bits")
        return (v >> 1) ^ -(v & 1)


def decode_struct(
    buf: bytes | memoryview, pos: int = 0, end: int | None = None, *, name: str = "thrift"
) -> tuple[Struct, int]:
    """Decode one struct starting at ``pos``; return it and the position after its STOP."""
    r = _Reader(buf, pos, len(buf) if end is None else min(end, len(buf)), name)
    s = _read_struct(r, 0)
    return s, r.pos


def _read_struct(r: _Reader, depth: int) -> Struct:
    if depth > MAX_DEPTH:
        raise r.fail(f"structs nested deeper than {MAX_DEPTH}")
    s = Struct()
    last = 0
    while True:
        head = r.byte()
        if head == STOP:
            return s
        ftype = head & 0x0F
        delta = head >> 4
        long_header = delta == 0
        fid = r.zigzag(16) if long_header else last + delta
        start = r.pos
        value = _read_value(r, ftype, depth, in_struct=True)
        s.fields.append(Field(fid, ftype, value, bytes(r.buf[start : r.pos]), long_header))
        last = fid


def _read_value(r: _Reader, t: int, depth: int, *, in_struct: bool) -> Any:
    if t in (BOOL_TRUE, BOOL_FALSE):
        if in_struct:
            return t == BOOL_TRUE
        b = r.byte()  # in lists, booleans are one byte each
        if b not in (BOOL_TRUE, BOOL_FALSE, 0):
            raise r.fail(f"invalid boolean byte {b}")
        return b == BOOL_TRUE
    if t == BYTE:
        b = r.byte()
        return b - 256 if b > 127 else b
    if t in (I16, I32, I64):
        return r.zigzag(_INT_RANGE[t])
    if t == DOUBLE:
        return _struct.unpack("<d", r.take(8))[0]
    if t == BINARY:
        return r.take(r.uvarint())
    if t in (LIST, SET):
        head = r.byte()
        size = head >> 4
        et = head & 0x0F
        if size == 15:
            size = r.uvarint()
        _check_count(r, size, et)
        if depth + 1 > MAX_DEPTH:
            raise r.fail(f"containers nested deeper than {MAX_DEPTH}")
        items = [_read_value(r, et, depth + 1, in_struct=False) for _ in range(size)]
        return List(et, items, is_set=t == SET)
    if t == MAP:
        size = r.uvarint()
        if size == 0:
            return Map(0, 0, [])
        kv = r.byte()
        kt, vt = kv >> 4, kv & 0x0F
        _check_count(r, size, kt)
        items = [
            (
                _read_value(r, kt, depth + 1, in_struct=False),
                _read_value(r, vt, depth + 1, in_struct=False),
            )
            for _ in range(size)
        ]
        return Map(kt, vt, items)
    if t == STRUCT:
        return _read_struct(r, depth + 1)
    raise r.fail(f"unknown Thrift compact type {t}")


def _check_count(r: _Reader, count: int, elem_type: int) -> None:
    """Every element takes at least one byte: a count above the bytes left is a lie."""
    if elem_type not in (BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY,
                         LIST, SET, MAP, STRUCT):  # fmt: skip
        raise r.fail(f"unknown Thrift compact element type {elem_type}")
    if count > r.end - r.pos:
        raise r.fail(f"container of {count} elements cannot fit in {r.end - r.pos} bytes")


# ------------------------------------------------------------------------- encoding


def _uvarint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _zigzag(v: int, bits: int) -> bytes:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= v <= hi:
        raise ValueError(f"{v} does not fit in a {bits}-bit Thrift integer")
    return _uvarint(((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1))


def encode_struct(s: Struct) -> bytes:
    """Encode a struct: original bytes for untouched fields, fresh bytes for the rest."""
    out = bytearray()
    last = 0
    for f in s.fields:
        delta = f.id - last
        if 0 < delta <= 15 and not (f.long_header and not f.dirty):
            out.append((delta << 4) | f.type)
        else:
            out.append(f.type)
            out += _zigzag(f.id, 16)
        if f.raw_value is not None and not f.dirty and not _changed(f.value):
            out += f.raw_value
        else:
            out += _encode_value(f.type, f.value, in_struct=True)
        last = f.id
    out.append(STOP)
    return bytes(out)


def _encode_value(t: int, v: Any, *, in_struct: bool) -> bytes:
    if t in (BOOL_TRUE, BOOL_FALSE):
        return b"" if in_struct else bytes([BOOL_TRUE if v else BOOL_FALSE])
    if t == BYTE:
        return bytes([v & 0xFF])
    if t in (I16, I32, I64):
        return _zigzag(int(v), _INT_RANGE[t])
    if t == DOUBLE:
        return _struct.pack("<d", v)
    if t == BINARY:
        data = v.encode("utf-8") if isinstance(v, str) else bytes(v)
        return _uvarint(len(data)) + data
    if t in (LIST, SET):
        n = len(v.items)
        head = (
            bytes([(n << 4) | v.elem_type]) if n < 15 else bytes([0xF0 | v.elem_type]) + _uvarint(n)
        )
        return head + b"".join(_encode_value(v.elem_type, x, in_struct=False) for x in v.items)
    if t == MAP:
        if not v.items:
            return b"\x00"
        body = b"".join(
            _encode_value(v.key_type, k, in_struct=False)
            + _encode_value(v.value_type, x, in_struct=False)
            for k, x in v.items
        )
        return _uvarint(len(v.items)) + bytes([(v.key_type << 4) | v.value_type]) + body
    if t == STRUCT:
        return encode_struct(v)
    raise ValueError(f"unknown Thrift compact type {t}")
