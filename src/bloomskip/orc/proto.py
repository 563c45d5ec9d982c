"""Protocol Buffers wire format, and the ORC messages that lead to bloom filters.

This module owns the bytes-to-message step of ORC metadata: a small decoder for the
protobuf wire format (varint, fixed64, length-delimited and fixed32 fields; packed and
unpacked repeated fields; zigzag ``sint32``/``sint64``; unknown fields skipped) and one
function per message bloomskip needs, each returning a frozen dataclass:
:class:`PostScript`, :class:`Footer` (with :class:`Type`, :class:`StripeInformation`,
:class:`ColumnStatistics`), :class:`Metadata`, :class:`StripeFooter` (with
:class:`Stream` and :class:`ColumnEncoding`), :class:`RowIndex` and
:class:`BloomFilterIndex`. Field numbers follow ``orc_proto.proto`` (apache/orc-format,
``src/main/proto/orc/proto/orc_proto.proto``, proto2); wire rules follow the protobuf
"Encoding" guide.

proto2 semantics are kept where a reader of bloom filters can tell the difference: an
absent optional field is ``None`` (not 0), a singular scalar that occurs twice keeps its
last value, a singular message that occurs twice is merged (its occurrences are
concatenated and decoded once, which is what protobuf's merge does), a known field that
arrives with another wire type is skipped as unknown (as protobuf-java does), and
``uint32``/``int32`` values are truncated to 32 bits. String fields that are names or
labels are decoded as UTF-8 with replacement; string statistics stay ``bytes``, since
ORC orders them as UTF-8 bytes.

Hostile input cannot crash, hang or allocate without bound: every length is checked
against the bytes left in its message, varints are at most 10 bytes, and group wire
types (3 and 4, never used by ORC) are rejected instead of skipped, so no decoder here
recurses - the deepest message (``RowIndex`` > ``RowIndexEntry`` > ``ColumnStatistics``
> ``IntegerStatistics``) is four fixed levels. Output is bounded by the input: each
decoded value consumes at least one byte. Violations raise
:class:`~bloomskip.errors.CorruptFileError` naming the message (the caller passes the
file and where the message sits in it) and the byte within the message.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from bloomskip.errors import CorruptFileError

# Wire types.
VARINT = 0
I64 = 1
LEN = 2
SGROUP = 3
EGROUP = 4
I32 = 5

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1
_DOUBLE = struct.Struct("<d")

T = TypeVar("T")


def _fail(name: str, pos: int, what: str) -> CorruptFileError:
    return CorruptFileError(f"{name}: {what} at byte {pos} of the message")


# ------------------------------------------------------------------------------ wire


def read_varint(buf: bytes, pos: int, end: int, name: str) -> tuple[int, int]:
    """The unsigned varint at ``buf[pos:end]`` (at most 10 bytes, kept to 64 bits) and the
    position after it."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise _fail(name, start, "varint runs past the end")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & _U64, pos
        shift += 7
        if shift >= 70:
            raise _fail(name, start, "varint longer than 10 bytes")


def zigzag(n: int) -> int:
    """Decode a zigzag-encoded ``sint64`` (``n`` unsigned, < 2**64)."""
    return (n >> 1) ^ -(n & 1)


def zigzag32(n: int) -> int:
    """Decode a zigzag-encoded ``sint32`` (only the low 32 bits count, as in protobuf)."""
    n &= _U32
    return (n >> 1) ^ -(n & 1)


def int32(n: int) -> int:
    """A varint read as ``int32``: the low 32 bits, signed."""
    n &= _U32
    return n - (1 << 32) if n >= 1 << 31 else n


def int64(n: int) -> int:
    """A varint or fixed64 read as ``int64``: two's complement of the 64 bits."""
    return n - (1 << 64) if n >= 1 << 63 else n


def iter_fields(buf: bytes, start: int, end: int, name: str) -> Iterator[tuple[int, int, int, int]]:
    """The fields of the message ``buf[start:end]`` as ``(number, wire_type, a, b)``.

    For varint, fixed64 and fixed32 fields ``a`` is the unsigned value and ``b`` the
    position after it; for length-delimited fields ``buf[a:b]`` is the payload.
    Positions in errors are relative to ``start``.
    """
    pos = start
    while pos < end:
        tag_at = pos
        # Inline one-byte tags (all of ORC's field numbers below 16).
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = read_varint(buf, pos, end, name)
        number = tag >> 3
        wire = tag & 7
        if number == 0 or number > 0x1FFFFFFF:
            raise _fail(name, tag_at - start, f"invalid field number {number}")
        if wire == VARINT:
            if pos < end and buf[pos] < 0x80:
                pos += 1
                yield number, wire, buf[pos - 1], pos
            else:
                value, pos = read_varint(buf, pos, end, name)
                yield number, wire, value, pos
        elif wire == LEN:
            length, pos = read_varint(buf, pos, end, name)
            if length > end - pos:
                raise _fail(
                    name,
                    tag_at - start,
                    f"field {number} claims {length} bytes but {end - pos} are left",
                )
            yield number, wire, pos, pos + length
            pos += length
        elif wire == I64:
            if end - pos < 8:
                raise _fail(name, tag_at - start, f"fixed64 field {number} runs past the end")
            yield number, wire, int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
            pos += 8
        elif wire == I32:
            if end - pos < 4:
                raise _fail(name, tag_at - start, f"fixed32 field {number} runs past the end")
            yield number, wire, int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
            pos += 4
        elif wire in (SGROUP, EGROUP):
            raise _fail(name, tag_at - start, f"field {number} is a group (ORC uses none)")
        else:
            raise _fail(name, tag_at - start, f"field {number} has invalid wire type {wire}")


def packed_varints(buf: bytes, start: int, end: int, name: str) -> list[int]:
    """The unsigned varints of a packed repeated field ``buf[start:end]``."""
    out: list[int] = []
    append = out.append
    pos = start
    while pos < end:
        b = buf[pos]
        if b < 0x80:
            append(b)
            pos += 1
        else:
            value, pos = read_varint(buf, pos, end, name)
            append(value)
    return out


def _string(buf: bytes, a: int, b: int) -> str:
    return buf[a:b].decode("utf-8", "replace")


def _double(value: int) -> float:
    return _DOUBLE.unpack(value.to_bytes(8, "little"))[0]


def _messages(buf: bytes, spans: list[tuple[int, int]]) -> tuple[bytes, int, int] | None:
    """A singular message field's bytes: its only occurrence, or all of them merged."""
    if not spans:
        return None
    if len(spans) == 1:
        a, b = spans[0]
        return buf, a, b
    joined = b"".join(buf[a:b] for a, b in spans)
    return joined, 0, len(joined)


def _decode_one(
    decode: Callable[[bytes, int, int, str], T], buf: bytes, spans: list, name: str
) -> T | None:
    part = _messages(buf, spans)
    return None if part is None else decode(part[0], part[1], part[2], name)


# -------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class PostScript:
    footer_length: int | None
    #: CompressionKind: NONE 0, ZLIB 1, SNAPPY 2, LZO 3, LZ4 4, ZSTD 5, BROTLI 6
    compression: int | None
    compression_block_size: int | None
    version: tuple[int, ...]  # file format version, e.g. (0, 12)
    metadata_length: int | None
    writer_version: int | None
    stripe_statistics_length: int | None
    magic: bytes | None


def decode_postscript(buf: bytes, start: int, end: int, name: str) -> PostScript:
    f: dict[int, int] = {}
    version: list[int] = []
    magic = None
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire == VARINT and number in (1, 2, 3, 5, 6, 7):
            f[number] = a & _U32 if number in (2, 6) else a
        elif number == 4 and wire == LEN:
            version.extend(v & _U32 for v in packed_varints(buf, a, b, name))
        elif number == 4 and wire == VARINT:
            version.append(a & _U32)
        elif number == 8000 and wire == LEN:
            magic = buf[a:b]
    return PostScript(
        f.get(1), f.get(2), f.get(3), tuple(version), f.get(5), f.get(6), f.get(7), magic
    )


@dataclass(frozen=True, slots=True)
class StripeInformation:
    offset: int | None
    index_length: int | None
    data_length: int | None
    footer_length: int | None
    number_of_rows: int | None
    encrypt_stripe_id: int | None = None
    encrypted_local_keys: tuple[bytes, ...] = ()


def decode_stripe_information(buf: bytes, start: int, end: int, name: str) -> StripeInformation:
    f: dict[int, int] = {}
    keys: list[bytes] = []
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire == VARINT and 1 <= number <= 6:
            f[number] = a
        elif number == 7 and wire == LEN:
            keys.append(buf[a:b])
    return StripeInformation(
        f.get(1), f.get(2), f.get(3), f.get(4), f.get(5), f.get(6), tuple(keys)
    )


@dataclass(frozen=True, slots=True)
class Type:
    kind: int | None  # Type.Kind (see ``bloomskip.orc.file.KIND_NAMES``)
    subtypes: tuple[int, ...] = ()
    field_names: tuple[str, ...] = ()
    maximum_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    attributes: tuple[tuple[str, str], ...] = ()


def decode_type(buf: bytes, start: int, end: int, name: str) -> Type:
    f: dict[int, int] = {}
    subtypes: list[int] = []
    names: list[str] = []
    attributes: list[tuple[str, str]] = []
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire == VARINT and number in (1, 4, 5, 6):
            f[number] = a & _U32
        elif number == 2 and wire == LEN:
            subtypes.extend(v & _U32 for v in packed_varints(buf, a, b, name))
        elif number == 2 and wire == VARINT:
            subtypes.append(a & _U32)
        elif number == 3 and wire == LEN:
            names.append(_string(buf, a, b))
        elif number == 7 and wire == LEN:
            key = value = ""
            for n2, w2, a2, b2 in iter_fields(buf, a, b, f"{name} attribute"):
                if w2 == LEN and n2 == 1:
                    key = _string(buf, a2, b2)
                elif w2 == LEN and n2 == 2:
                    value = _string(buf, a2, b2)
            attributes.append((key, value))
    return Type(
        f.get(1), tuple(subtypes), tuple(names), f.get(4), f.get(5), f.get(6), tuple(attributes)
    )


# ---------------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class IntegerStatistics:
    minimum: int | None
    maximum: int | None
    sum: int | None


@dataclass(frozen=True, slots=True)
class DoubleStatistics:
    minimum: float | None
    maximum: float | None
    sum: float | None


@dataclass(frozen=True, slots=True)
class StringStatistics:
    """Minimum and maximum as the writer's UTF-8 bytes (ORC compares them byte-wise);
    ``lower_bound``/``upper_bound`` replace them when a value was longer than 1,024 bytes."""

    minimum: bytes | None
    maximum: bytes | None
    sum: int | None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass(frozen=True, slots=True)
class BucketStatistics:
    count: tuple[int, ...]  # BOOLEAN columns: the number of true values


@dataclass(frozen=True, slots=True)
class DecimalStatistics:
    minimum: str | None
    maximum: str | None
    sum: str | None


@dataclass(frozen=True, slots=True)
class DateStatistics:
    minimum: int | None  # days since 1970-01-01
    maximum: int | None


@dataclass(frozen=True, slots=True)
class BinaryStatistics:
    sum: int | None


@dataclass(frozen=True, slots=True)
class TimestampStatistics:
    """Milliseconds since the epoch: ``minimum``/``maximum`` in the writer's zone (before
    ORC-135), ``minimum_utc``/``maximum_utc`` in UTC; ``*_nanos`` add sub-millisecond
    digits (stored plus one, see the ORC spec)."""

    minimum: int | None
    maximum: int | None
    minimum_utc: int | None
    maximum_utc: int | None
    minimum_nanos: int | None = None
    maximum_nanos: int | None = None


@dataclass(frozen=True, slots=True)
class CollectionStatistics:
    min_children: int | None
    max_children: int | None
    total_children: int | None


@dataclass(frozen=True, slots=True)
class ColumnStatistics:
    number_of_values: int | None = None
    int_statistics: IntegerStatistics | None = None
    double_statistics: DoubleStatistics | None = None
    string_statistics: StringStatistics | None = None
    bucket_statistics: BucketStatistics | None = None
    decimal_statistics: DecimalStatistics | None = None
    date_statistics: DateStatistics | None = None
    binary_statistics: BinaryStatistics | None = None
    timestamp_statistics: TimestampStatistics | None = None
    has_null: bool | None = None  # None: not written (e.g. Trino's older files)
    bytes_on_disk: int | None = None
    collection_statistics: CollectionStatistics | None = None


def _scalars(buf: bytes, start: int, end: int, name: str) -> dict[tuple[int, int], tuple]:
    """Last occurrence of each (field, wire type) as (a, b) - for messages whose fields
    are all singular scalars; a field with an unexpected wire type is then never read."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for number, wire, a, b in iter_fields(buf, start, end, name):
        out[number, wire] = (a, b)
    return out


def _get(f: dict, number: int, wire: int, convert: Callable[[int], T]) -> T | None:
    v = f.get((number, wire))
    return None if v is None else convert(v[0])


def _get_bytes(buf: bytes, f: dict, number: int) -> bytes | None:
    v = f.get((number, LEN))
    return None if v is None else buf[v[0] : v[1]]


def _same(n: int) -> int:
    return n


def _int_stats(buf: bytes, start: int, end: int, name: str) -> IntegerStatistics:
    f = _scalars(buf, start, end, name)
    return IntegerStatistics(*(_get(f, i, VARINT, zigzag) for i in (1, 2, 3)))


def _double_stats(buf: bytes, start: int, end: int, name: str) -> DoubleStatistics:
    f = _scalars(buf, start, end, name)
    return DoubleStatistics(*(_get(f, i, I64, _double) for i in (1, 2, 3)))


def _string_stats(buf: bytes, start: int, end: int, name: str) -> StringStatistics:
    f = _scalars(buf, start, end, name)
    return StringStatistics(
        _get_bytes(buf, f, 1),
        _get_bytes(buf, f, 2),
        _get(f, 3, VARINT, zigzag),
        _get_bytes(buf, f, 4),
        _get_bytes(buf, f, 5),
    )


def _bucket_stats(buf: bytes, start: int, end: int, name: str) -> BucketStatistics:
    counts: list[int] = []
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if number == 1 and wire == LEN:
            counts.extend(packed_varints(buf, a, b, name))
        elif number == 1 and wire == VARINT:
            counts.append(a)
    return BucketStatistics(tuple(counts))


def _decimal_stats(buf: bytes, start: int, end: int, name: str) -> DecimalStatistics:
    f = _scalars(buf, start, end, name)
    vals = [_get_bytes(buf, f, i) for i in (1, 2, 3)]
    return DecimalStatistics(*(None if v is None else v.decode("utf-8", "replace") for v in vals))


def _date_stats(buf: bytes, start: int, end: int, name: str) -> DateStatistics:
    f = _scalars(buf, start, end, name)
    return DateStatistics(_get(f, 1, VARINT, zigzag32), _get(f, 2, VARINT, zigzag32))


def _binary_stats(buf: bytes, start: int, end: int, name: str) -> BinaryStatistics:
    f = _scalars(buf, start, end, name)
    return BinaryStatistics(_get(f, 1, VARINT, zigzag))


def _timestamp_stats(buf: bytes, start: int, end: int, name: str) -> TimestampStatistics:
    f = _scalars(buf, start, end, name)
    return TimestampStatistics(
        *(_get(f, i, VARINT, zigzag) for i in (1, 2, 3, 4)),
        _get(f, 5, VARINT, int32),
        _get(f, 6, VARINT, int32),
    )


def _collection_stats(buf: bytes, start: int, end: int, name: str) -> CollectionStatistics:
    f = _scalars(buf, start, end, name)
    return CollectionStatistics(*(_get(f, i, VARINT, _same) for i in (1, 2, 3)))


_STATS_DECODERS: dict[int, Callable] = {
    2: _int_stats,
    3: _double_stats,
    4: _string_stats,
    5: _bucket_stats,
    6: _decimal_stats,
    7: _date_stats,
    8: _binary_stats,
    9: _timestamp_stats,
    12: _collection_stats,
}


def decode_column_statistics(buf: bytes, start: int, end: int, name: str) -> ColumnStatistics:
    scalars: dict[int, int] = {}
    spans: dict[int, list[tuple[int, int]]] = {}
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire == VARINT and number in (1, 10, 11):
            scalars[number] = a
        elif wire == LEN and number in _STATS_DECODERS:
            spans.setdefault(number, []).append((a, b))
    nested = {
        number: _decode_one(_STATS_DECODERS[number], buf, s, f"{name} field {number}")
        for number, s in spans.items()
    }
    has_null = scalars.get(10)
    return ColumnStatistics(
        number_of_values=scalars.get(1),
        int_statistics=nested.get(2),
        double_statistics=nested.get(3),
        string_statistics=nested.get(4),
        bucket_statistics=nested.get(5),
        decimal_statistics=nested.get(6),
        date_statistics=nested.get(7),
        binary_statistics=nested.get(8),
        timestamp_statistics=nested.get(9),
        has_null=None if has_null is None else has_null != 0,
        bytes_on_disk=scalars.get(11),
        collection_statistics=nested.get(12),
    )


def _repeated(
    decode: Callable[[bytes, int, int, str], T],
    buf: bytes,
    start: int,
    end: int,
    name: str,
    number: int,
    what: str,
) -> tuple[T, ...]:
    """Every occurrence of the repeated message field ``number``, decoded."""
    out = []
    for n, wire, a, b in iter_fields(buf, start, end, name):
        if n == number and wire == LEN:
            out.append(decode(buf, a, b, f"{name} {what} {len(out)}"))
    return tuple(out)


# --------------------------------------------------------------------- file tail


@dataclass(frozen=True, slots=True)
class UserMetadataItem:
    name: str
    value: bytes


@dataclass(frozen=True, slots=True)
class Footer:
    header_length: int | None
    content_length: int | None
    stripes: tuple[StripeInformation, ...]
    types: tuple[Type, ...]
    metadata: tuple[UserMetadataItem, ...]
    number_of_rows: int | None
    statistics: tuple[ColumnStatistics, ...]
    row_index_stride: int | None
    writer: int | None  # 0 ORC Java, 1 ORC C++, 2 Presto, 3 Go, 4 Trino, 5 cuDF
    encrypted: bool  # an Encryption message is present (its contents are not decoded)
    calendar: int | None  # 0 unknown, 1 Julian/Gregorian hybrid, 2 proleptic Gregorian
    software_version: str | None


def decode_footer(buf: bytes, start: int, end: int, name: str) -> Footer:
    f: dict[int, int] = {}
    stripes: list[StripeInformation] = []
    types: list[Type] = []
    meta: list[UserMetadataItem] = []
    stats: list[ColumnStatistics] = []
    encrypted = False
    software = None
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire == VARINT and number in (1, 2, 6, 8, 9, 11):
            f[number] = a & _U32 if number in (8, 9, 11) else a
        elif wire != LEN:
            continue
        elif number == 3:
            stripes.append(decode_stripe_information(buf, a, b, f"{name} stripe {len(stripes)}"))
        elif number == 4:
            types.append(decode_type(buf, a, b, f"{name} type {len(types)}"))
        elif number == 5:
            item = _scalars(buf, a, b, f"{name} user metadata {len(meta)}")
            key = _get_bytes(buf, item, 1)
            meta.append(
                UserMetadataItem(
                    "" if key is None else key.decode("utf-8", "replace"),
                    _get_bytes(buf, item, 2) or b"",
                )
            )
        elif number == 7:
            stats.append(decode_column_statistics(buf, a, b, f"{name} statistics {len(stats)}"))
        elif number == 10:
            encrypted = True
        elif number == 12:
            software = _string(buf, a, b)
    return Footer(
        header_length=f.get(1),
        content_length=f.get(2),
        stripes=tuple(stripes),
        types=tuple(types),
        metadata=tuple(meta),
        number_of_rows=f.get(6),
        statistics=tuple(stats),
        row_index_stride=f.get(8),
        writer=f.get(9),
        encrypted=encrypted,
        calendar=f.get(11),
        software_version=software,
    )


@dataclass(frozen=True, slots=True)
class Metadata:
    """Stripe statistics: per stripe, one ColumnStatistics per column id."""

    stripe_statistics: tuple[tuple[ColumnStatistics, ...], ...]


def _stripe_statistics(buf: bytes, start: int, end: int, name: str) -> tuple:
    return _repeated(decode_column_statistics, buf, start, end, name, 1, "column")


def decode_metadata(buf: bytes, start: int, end: int, name: str) -> Metadata:
    return Metadata(_repeated(_stripe_statistics, buf, start, end, name, 1, "stripe"))


# -------------------------------------------------------------------------- stripes


@dataclass(frozen=True, slots=True)
class Stream:
    kind: int | None  # Stream.Kind: ROW_INDEX 6, BLOOM_FILTER 7, BLOOM_FILTER_UTF8 8, ...
    column: int | None
    length: int | None


@dataclass(frozen=True, slots=True)
class ColumnEncoding:
    kind: int | None  # DIRECT 0, DICTIONARY 1, DIRECT_V2 2, DICTIONARY_V2 3
    dictionary_size: int | None
    bloom_encoding: int | None  # 0 or None: original; 1: UTF8_UTC (ORC-135)


@dataclass(frozen=True, slots=True)
class StripeFooter:
    streams: tuple[Stream, ...]
    columns: tuple[ColumnEncoding, ...]  # indexed by column id
    writer_timezone: str | None
    encryption_variants: int = 0  # number of StripeEncryptionVariant messages (not decoded)


def _stream(buf: bytes, start: int, end: int, name: str) -> Stream:
    f = _scalars(buf, start, end, name)
    return Stream(
        _get(f, 1, VARINT, _u32),
        _get(f, 2, VARINT, _u32),
        _get(f, 3, VARINT, _same),
    )


def _encoding(buf: bytes, start: int, end: int, name: str) -> ColumnEncoding:
    f = _scalars(buf, start, end, name)
    return ColumnEncoding(*(_get(f, i, VARINT, _u32) for i in (1, 2, 3)))


def _u32(n: int) -> int:
    return n & _U32


def decode_stripe_footer(buf: bytes, start: int, end: int, name: str) -> StripeFooter:
    streams: list[Stream] = []
    columns: list[ColumnEncoding] = []
    tz = None
    variants = 0
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if wire != LEN:
            continue
        if number == 1:
            streams.append(_stream(buf, a, b, f"{name} stream {len(streams)}"))
        elif number == 2:
            columns.append(_encoding(buf, a, b, f"{name} encoding {len(columns)}"))
        elif number == 3:
            tz = _string(buf, a, b)
        elif number == 4:
            variants += 1
    return StripeFooter(tuple(streams), tuple(columns), tz, variants)


@dataclass(frozen=True, slots=True)
class RowIndexEntry:
    positions: tuple[int, ...]
    statistics: ColumnStatistics | None


@dataclass(frozen=True, slots=True)
class RowIndex:
    entries: tuple[RowIndexEntry, ...]


def _row_index_entry(buf: bytes, start: int, end: int, name: str) -> RowIndexEntry:
    positions: list[int] = []
    stats: list[tuple[int, int]] = []
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if number == 1 and wire == LEN:
            positions.extend(packed_varints(buf, a, b, name))
        elif number == 1 and wire == VARINT:
            positions.append(a)
        elif number == 2 and wire == LEN:
            stats.append((a, b))
    return RowIndexEntry(
        tuple(positions), _decode_one(decode_column_statistics, buf, stats, f"{name} statistics")
    )


def decode_row_index(buf: bytes, start: int, end: int, name: str) -> RowIndex:
    return RowIndex(_repeated(_row_index_entry, buf, start, end, name, 1, "entry"))


@dataclass(frozen=True, slots=True)
class BloomFilter:
    """One row group's filter as stored.

    ``bitset`` holds the words of the ``repeated fixed64 bitset`` field (legacy
    BLOOM_FILTER streams) concatenated as 8-byte little-endian words - the same layout as
    ``utf8bitset`` (BLOOM_FILTER_UTF8 streams), so bit ``i`` is byte ``i >> 3``, bit
    ``i & 7`` in both. ``b""`` when the field is absent; ``utf8bitset`` is None then.
    """

    num_hash_functions: int | None
    bitset: bytes
    utf8bitset: bytes | None

    @property
    def bitset_words(self) -> int:
        return len(self.bitset) // 8

    def words(self) -> tuple[int, ...]:
        """The ``bitset`` field's words as stored (unsigned 64-bit integers)."""
        n = len(self.bitset) // 8
        return struct.unpack(f"<{n}Q", self.bitset[: 8 * n])


def _bloom_filter(buf: bytes, start: int, end: int, name: str) -> BloomFilter:
    k = None
    words: list[bytes] = []
    utf8 = None
    for number, wire, a, b in iter_fields(buf, start, end, name):
        if number == 1 and wire == VARINT:
            k = a & _U32
        elif number == 2 and wire == I64:
            words.append(a.to_bytes(8, "little"))
        elif number == 2 and wire == LEN:  # packed (not what writers do, but valid)
            if (b - a) % 8:
                raise _fail(name, a - start, f"packed fixed64 field of {b - a} bytes")
            words.append(buf[a:b])
        elif number == 3 and wire == LEN:
            utf8 = buf[a:b]
    return BloomFilter(k, b"".join(words), utf8)


@dataclass(frozen=True, slots=True)
class BloomFilterIndex:
    bloom_filters: tuple[BloomFilter, ...]  # one per row group


def decode_bloom_filter_index(buf: bytes, start: int, end: int, name: str) -> BloomFilterIndex:
    return BloomFilterIndex(_repeated(_bloom_filter, buf, start, end, name, 1, "filter"))


def decode(decoder: Callable[[bytes, int, int, str], T], buf: bytes, name: str) -> T:
    """Decode a whole buffer as one message: ``decode(decode_footer, raw, "f.orc footer")``."""
    return decoder(buf, 0, len(buf), name)
