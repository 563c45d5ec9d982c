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
from dataclasses import dataclass
from typing import Any

import numpy as np

from bloomskip._lazy import lazy
from bloomskip.errors import CorruptFileError

kernels = lazy("bloomskip.parquet.kernels")

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


@dataclass(slots=True)
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


@dataclass(slots=True)
class Field:
    """One field as read: id, type code, value, and its original bytes (header, value)."""

    id: int
    type: int
    value: Any
    raw_value: bytes | None = None
    long_header: bool = False
    dirty: bool = False


class Struct:
    """A Thrift struct: its fields in wire order. Unknown fields are kept as they came.

    A struct read as an element of a list may be *deferred*: the decoder has validated
    its bytes (with a compiled skipper) but builds its fields only when first accessed.
    A footer with thousands of column chunks is then read in milliseconds, and pruning
    decodes just the chunks its predicate needs. An untouched deferred struct re-encodes
    as its original bytes.
    """

    __slots__ = ("_deferred", "_fields", "changed")

    def __init__(self, fields: list[Field] | None = None, changed: bool = False) -> None:
        self._fields: list[Field] | None = [] if fields is None else fields
        #: set when a field of this struct was set or removed since decoding
        self.changed = changed
        self._deferred: tuple[bytes, int, int, int, str] | None = None

    @classmethod
    def deferred(cls, buf: bytes, start: int, end: int, depth: int, name: str) -> Struct:
        """A struct whose (already validated) bytes ``buf[start:end]`` decode on access."""
        s = cls.__new__(cls)
        s._fields, s.changed, s._deferred = None, False, (buf, start, end, depth, name)
        return s

    @property
    def fields(self) -> list[Field]:
        if self._fields is None:
            buf, start, end, depth, name = self._deferred  # type: ignore[misc]
            self._fields = _read_struct(buf, start, end, depth, name)[0]._fields
        return self._fields  # type: ignore[return-value]

    @fields.setter
    def fields(self, value: list[Field]) -> None:
        self._fields = value

    @property
    def is_decoded(self) -> bool:
        return self._fields is not None

    def original_bytes(self) -> bytes | None:
        """The bytes a deferred, never-decoded struct was read from (else None)."""
        if self._fields is not None or self._deferred is None:
            return None
        buf, start, end, _, _ = self._deferred
        return buf[start:end]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self.fields == other.fields and self.changed == other.changed

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if self._fields is None:
            return "Struct(<deferred>)"
        return f"Struct(fields={self._fields!r}, changed={self.changed!r})"

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
        if not value.is_decoded:
            return False  # never decoded, so never modified
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


def _fail(name: str, pos: int, what: str) -> CorruptFileError:
    return CorruptFileError(f"{name}: {what} at byte {pos}")


# The decoder is written for CPython speed: buffer, position and end live in locals and
# every varint is decoded inline (a footer with 1,000 row groups holds ~10^5 values).
# Each function takes and returns the position; errors carry the byte offset.


def decode_struct(
    buf: bytes | memoryview, pos: int = 0, end: int | None = None, *, name: str = "thrift"
) -> tuple[Struct, int]:
    """Decode one struct starting at ``pos``; return it and the position after its STOP."""
    data = bytes(buf) if not isinstance(buf, bytes) else buf
    limit = len(data) if end is None else min(end, len(data))
    return _read_struct(data, pos, limit, 0, name)


def decode_value(
    buf: bytes, pos: int, end: int, type_code: int, *, name: str, depth: int = 0
) -> tuple[Any, int]:
    """Decode the value of one field of a struct at ``depth`` (as :func:`decode_struct`
    reads it, structs in lists deferred) from ``pos``: the value and the position after."""
    if type_code in (BOOL_TRUE, BOOL_FALSE):
        return type_code == BOOL_TRUE, pos
    if type_code in _INT_TYPES and type_code != BYTE:
        return _zigzag_at(buf, pos, end, _INT_RANGE[type_code], name)
    if type_code == STRUCT:
        return _read_struct(buf, pos, end, depth + 1, name)
    return _read_value(buf, pos, end, type_code, depth, False, name)


def _uvarint_at(buf: bytes, pos: int, end: int, name: str) -> tuple[int, int]:
    result = shift = 0
    for _ in range(10):
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
    raise _fail(name, pos, "varint longer than 10 bytes")


def _zigzag_at(buf: bytes, pos: int, end: int, bits: int, name: str) -> tuple[int, int]:
    # Fast path: a one-byte varint (most field values and ids).
    if pos < end and buf[pos] < 0x80:
        v = buf[pos]
        return (v >> 1) ^ -(v & 1), pos + 1
    v, pos = _uvarint_at(buf, pos, end, name)
    if v >= 1 << bits:
        raise _fail(name, pos, f"integer does not fit in {bits} bits")
    return (v >> 1) ^ -(v & 1), pos


def _read_struct(buf: bytes, pos: int, end: int, depth: int, name: str) -> tuple[Struct, int]:
    if depth > MAX_DEPTH:
        raise _fail(name, pos, f"structs nested deeper than {MAX_DEPTH}")
    s = Struct()
    fields = s.fields
    last = 0
    while True:
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        head = buf[pos]
        pos += 1
        if head == STOP:
            return s, pos
        ftype = head & 0x0F
        delta = head >> 4
        if delta:
            fid = last + delta
        else:
            fid, pos = _zigzag_at(buf, pos, end, 16, name)
        start = pos
        if ftype in (BOOL_TRUE, BOOL_FALSE):
            value: Any = ftype == BOOL_TRUE
        elif ftype in _INT_TYPES and ftype != BYTE:
            value, pos = _zigzag_at(buf, pos, end, _INT_RANGE[ftype], name)
        elif ftype == BINARY:
            n, pos = _uvarint_at(buf, pos, end, name)
            if pos + n > end:
                raise _fail(name, pos, f"length {n} runs past the end of the Thrift data")
            value = buf[pos : pos + n]
            pos += n
        elif ftype == STRUCT:
            value, pos = _read_struct(buf, pos, end, depth + 1, name)
        else:
            value, pos = _read_value(buf, pos, end, ftype, depth, False, name)
        fields.append(Field(fid, ftype, value, buf[start:pos], delta == 0))
        last = fid


def _read_value(
    buf: bytes, pos: int, end: int, t: int, depth: int, in_list: bool, name: str
) -> tuple[Any, int]:
    if t in (BOOL_TRUE, BOOL_FALSE):
        if not in_list:
            return t == BOOL_TRUE, pos
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        b = buf[pos]  # in lists, booleans are one byte each
        if b not in (BOOL_TRUE, BOOL_FALSE, 0):
            raise _fail(name, pos, f"invalid boolean byte {b}")
        return b == BOOL_TRUE, pos + 1
    if t == BYTE:
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        b = buf[pos]
        return (b - 256 if b > 127 else b), pos + 1
    if t in (I16, I32, I64):
        return _zigzag_at(buf, pos, end, _INT_RANGE[t], name)
    if t == DOUBLE:
        if pos + 8 > end:
            raise _fail(name, pos, "length 8 runs past the end of the Thrift data")
        return _struct.unpack_from("<d", buf, pos)[0], pos + 8
    if t == BINARY:
        n, pos = _uvarint_at(buf, pos, end, name)
        if pos + n > end:
            raise _fail(name, pos, f"length {n} runs past the end of the Thrift data")
        return buf[pos : pos + n], pos + n
    if t in (LIST, SET):
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        head = buf[pos]
        pos += 1
        size = head >> 4
        et = head & 0x0F
        if size == 15:
            size, pos = _uvarint_at(buf, pos, end, name)
        _check_count(pos, end, size, et, name)
        if depth + 1 > MAX_DEPTH:
            raise _fail(name, pos, f"containers nested deeper than {MAX_DEPTH}")
        items = []
        append = items.append
        if et == STRUCT:
            arr = np.frombuffer(buf, np.uint8)
            for _ in range(size):
                after = kernels.skip_struct(arr, pos, end, depth + 2, MAX_DEPTH)
                if after < 0:  # invalid: decode eagerly for the precise error
                    item, pos = _read_struct(buf, pos, end, depth + 2, name)
                else:
                    item = Struct.deferred(buf, pos, after, depth + 2, name)
                    pos = after
                append(item)
        else:
            for _ in range(size):
                item, pos = _read_value(buf, pos, end, et, depth + 1, True, name)
                append(item)
        return List(et, items, is_set=t == SET), pos
    if t == MAP:
        size, pos = _uvarint_at(buf, pos, end, name)
        if size == 0:
            return Map(0, 0, []), pos
        if pos >= end:
            raise _fail(name, pos, "Thrift data ends early")
        kv = buf[pos]
        pos += 1
        kt, vt = kv >> 4, kv & 0x0F
        _check_count(pos, end, size, kt, name)
        _check_count(pos, end, size, vt, name)
        if depth + 1 > MAX_DEPTH:  # maps of maps recurse as lists of lists do
            raise _fail(name, pos, f"containers nested deeper than {MAX_DEPTH}")
        pairs = []
        for _ in range(size):
            k, pos = _read_value(buf, pos, end, kt, depth + 1, True, name)
            v, pos = _read_value(buf, pos, end, vt, depth + 1, True, name)
            pairs.append((k, v))
        return Map(kt, vt, pairs), pos
    if t == STRUCT:
        return _read_struct(buf, pos, end, depth + 1, name)
    raise _fail(name, pos, f"unknown Thrift compact type {t}")


_ELEMENT_TYPES = frozenset(
    (BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT)
)


def _check_count(pos: int, end: int, count: int, elem_type: int, name: str) -> None:
    """Every element takes at least one byte: a count above the bytes left is a lie."""
    if elem_type not in _ELEMENT_TYPES:
        raise _fail(name, pos, f"unknown Thrift compact element type {elem_type}")
    if count > end - pos:
        raise _fail(name, pos, f"container of {count} elements cannot fit in {end - pos} bytes")


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
    raw = s.original_bytes()
    if raw is not None:
        return raw
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
