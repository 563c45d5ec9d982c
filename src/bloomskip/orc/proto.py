"""ORC's metadata messages, parsed by protobuf and seen as frozen dataclasses.

This module owns the bytes-to-message step of ORC metadata: :func:`parse` hands the bytes
to Google's ``protobuf`` runtime (its upb parser) with the messages of :mod:`.messages_pb2`,
made from ``proto/bloomskip/orc/messages.proto`` (field numbers and wire types of ORC's
``orc_proto.proto``, apache/orc-format, proto2), and one function per message bloomskip needs
returns a typed view of it: :func:`postscript`, :func:`footer` (with :class:`Type`,
:class:`StripeInformation`, :class:`ColumnStatistics`), :func:`metadata`,
:func:`stripe_footer` (with :class:`Stream` and :class:`ColumnEncoding`),
:func:`row_index` (and :func:`row_index_statistics`, just what pruning reads of it) and
:func:`bloom_filter_index` (entries viewed when first read).

The view keeps proto2's meaning where a reader of bloom filters can tell the difference:
an absent optional field is ``None``, never the default 0 (a missing minimum must not
read as 0), which is why callers get these dataclasses and not the messages. protobuf
itself gives the rest: a singular scalar that occurs twice keeps its last value, a
singular message that occurs twice is merged, packed and unpacked repeated fields both
parse, a known field with another wire type is skipped as unknown, and ``uint32`` /
``int32`` / ``sint32`` values are truncated to 32 bits. Enum fields are declared
``uint32``, so a kind or codec this module does not list stays visible. String fields
are ``bytes`` on the protobuf side: statistics keep them as bytes (ORC orders them as
UTF-8 bytes), names and labels are decoded as UTF-8 with replacement.

Hostile input: protobuf checks every length against the bytes left, stops varints at 10
bytes, refuses field number 0 and wire types 6 and 7, and bounds nesting (unknown groups
included) at 100 levels; ORC's deepest message here is four levels. Memory is linear in
the input. Any failure raises :class:`~bloomskip.errors.CorruptFileError` naming the
place (the caller passes the file and where the message sits in it) and the message.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message

from bloomskip.errors import CorruptFileError
from bloomskip.orc import messages_pb2 as pb

M = TypeVar("M", bound=Message)
T = TypeVar("T")


def parse(message: type[M], buf: bytes, name: str) -> M:
    """``buf`` as one ``message`` (a class of :mod:`.messages_pb2`); ``name`` says where
    it sits (``"f.orc: footer at offset 120"``)."""
    m = message()
    try:
        m.ParseFromString(buf)
    except DecodeError as e:
        detail = str(e).rsplit(": ", 1)[-1]  # after "Error parsing message with type ..."
        raise CorruptFileError(
            f"{name}: not a valid {message.DESCRIPTOR.name} message ({detail})"
        ) from None
    return m


def _opt(m: Message, field: str) -> Any:
    """An optional field's value, or None when the message does not have it."""
    return getattr(m, field) if m.HasField(field) else None


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def _scalars(view: type[T], m: Message) -> T:
    """A view whose fields are all optional scalars named as the message's fields."""
    return view(*[getattr(m, f) if m.HasField(f) else None for f in view.__match_args__])  # type: ignore[attr-defined]


def _sub(view: type[T], m: Message, field: str) -> T | None:
    return _scalars(view, getattr(m, field)) if m.HasField(field) else None


# ------------------------------------------------------------------------- file tail


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


def postscript(buf: bytes, name: str) -> PostScript:
    m = parse(pb.PostScript, buf, name)
    return PostScript(
        _opt(m, "footer_length"),
        _opt(m, "compression"),
        _opt(m, "compression_block_size"),
        tuple(m.version),
        _opt(m, "metadata_length"),
        _opt(m, "writer_version"),
        _opt(m, "stripe_statistics_length"),
        _opt(m, "magic"),
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


@dataclass(frozen=True, slots=True)
class Type:
    kind: int | None  # Type.Kind (see ``bloomskip.orc.file.KIND_NAMES``)
    subtypes: tuple[int, ...] = ()
    field_names: tuple[str, ...] = ()
    maximum_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    attributes: tuple[tuple[str, str], ...] = ()


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


def footer(buf: bytes, name: str) -> Footer:
    m = parse(pb.Footer, buf, name)
    return Footer(
        header_length=_opt(m, "header_length"),
        content_length=_opt(m, "content_length"),
        stripes=tuple(
            StripeInformation(
                *[_opt(s, f) for f in StripeInformation.__match_args__[:6]],
                tuple(s.encrypted_local_keys),
            )
            for s in m.stripes
        ),
        types=tuple(map(_type, m.types)),
        metadata=tuple(
            UserMetadataItem(i.name.decode("utf-8", "replace"), i.value) for i in m.metadata
        ),
        number_of_rows=_opt(m, "number_of_rows"),
        statistics=tuple(map(_column_statistics, m.statistics)),
        row_index_stride=_opt(m, "row_index_stride"),
        writer=_opt(m, "writer"),
        encrypted=m.HasField("encryption"),
        calendar=_opt(m, "calendar"),
        software_version=_text(_opt(m, "software_version")),
    )


def _type(m: pb.Type) -> Type:
    return Type(
        _opt(m, "kind"),
        tuple(m.subtypes),
        tuple(n.decode("utf-8", "replace") for n in m.field_names),
        _opt(m, "maximum_length"),
        _opt(m, "precision"),
        _opt(m, "scale"),
        tuple(
            (a.key.decode("utf-8", "replace"), a.value.decode("utf-8", "replace"))
            for a in m.attributes
        ),
    )


@dataclass(frozen=True, slots=True)
class Metadata:
    """Stripe statistics: per stripe, one ColumnStatistics per column id."""

    stripe_statistics: tuple[tuple[ColumnStatistics, ...], ...]


def metadata(buf: bytes, name: str) -> Metadata:
    m = parse(pb.Metadata, buf, name)
    return Metadata(tuple(tuple(map(_column_statistics, s.col_stats)) for s in m.stripe_stats))


# ----------------------------------------------------------------------- statistics


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


def _column_statistics(m: pb.ColumnStatistics) -> ColumnStatistics:
    decimal = None
    if m.HasField("decimal_statistics"):
        d = m.decimal_statistics
        decimal = DecimalStatistics(*[_text(_opt(d, f)) for f in ("minimum", "maximum", "sum")])
    return ColumnStatistics(
        number_of_values=_opt(m, "number_of_values"),
        int_statistics=_sub(IntegerStatistics, m, "int_statistics"),
        double_statistics=_sub(DoubleStatistics, m, "double_statistics"),
        string_statistics=_sub(StringStatistics, m, "string_statistics"),
        bucket_statistics=(
            BucketStatistics(tuple(m.bucket_statistics.count))
            if m.HasField("bucket_statistics")
            else None
        ),
        decimal_statistics=decimal,
        date_statistics=_sub(DateStatistics, m, "date_statistics"),
        binary_statistics=_sub(BinaryStatistics, m, "binary_statistics"),
        timestamp_statistics=_sub(TimestampStatistics, m, "timestamp_statistics"),
        has_null=_opt(m, "has_null"),
        bytes_on_disk=_opt(m, "bytes_on_disk"),
        collection_statistics=_sub(CollectionStatistics, m, "collection_statistics"),
    )


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


def stripe_footer(buf: bytes, name: str) -> StripeFooter:
    m = parse(pb.StripeFooter, buf, name)
    return StripeFooter(
        tuple(_scalars(Stream, s) for s in m.streams),
        tuple(_scalars(ColumnEncoding, c) for c in m.columns),
        _text(_opt(m, "writer_timezone")),
        len(m.encryption),
    )


@dataclass(frozen=True, slots=True)
class RowIndexEntry:
    positions: tuple[int, ...]
    statistics: ColumnStatistics | None


def row_index(
    buf: bytes, name: str, check: Callable[[int], None] | None = None
) -> tuple[RowIndexEntry, ...]:
    """The entries of a ROW_INDEX stream: one per row group. ``check`` sees their count
    before any view is built (it raises for a wrong count: no memory spent on them)."""
    m = parse(pb.RowIndex, buf, name)
    if check is not None:
        check(len(m.entry))
    return tuple(
        RowIndexEntry(
            tuple(e.positions),
            _column_statistics(e.statistics) if e.HasField("statistics") else None,
        )
        for e in m.entry
    )


#: The ColumnStatistics sub-messages (field names, each a view class here).
STATISTICS_VIEWS = {
    "int_statistics": IntegerStatistics,
    "double_statistics": DoubleStatistics,
    "string_statistics": StringStatistics,
    "date_statistics": DateStatistics,
    "timestamp_statistics": TimestampStatistics,
    "binary_statistics": BinaryStatistics,
    "collection_statistics": CollectionStatistics,
}


def row_index_message(buf: bytes, name: str, check: Callable[[int], None] | None) -> pb.RowIndex:
    """A ROW_INDEX stream as protobuf parses it; ``check`` as for :func:`row_index`."""
    m = parse(pb.RowIndex, buf, name)
    if check is not None:
        check(len(m.entry))
    return m


def row_index_statistics(
    m: pb.RowIndex, field: str | None
) -> tuple[tuple[int | None, bool | None, Any] | None, ...]:
    """What pruning reads of each entry of a row index (:func:`row_index_message`), a
    few times faster than :func:`row_index`: ``(number_of_values, has_null, the view of
    the sub-message field)`` (``field`` None: no sub-message; None where absent, as in
    :class:`ColumnStatistics`), or None for an entry without statistics."""
    view = _int_view if field == "int_statistics" else (lambda sm: _sub_view(field, sm))
    out: list[tuple[int | None, bool | None, Any] | None] = []
    append = out.append
    for e in m.entry:
        if not e.HasField("statistics"):
            append(None)
            continue
        cs = e.statistics
        has = cs.HasField
        append(
            (
                cs.number_of_values if has("number_of_values") else None,
                cs.has_null if has("has_null") else None,
                view(getattr(cs, field)) if field is not None and has(field) else None,
            )
        )
    return tuple(out)


def _int_view(m: Message) -> IntegerStatistics:
    """:func:`_sub_view` of ``int_statistics``, spelled out (the most common case)."""
    has = m.HasField
    return IntegerStatistics(
        m.minimum if has("minimum") else None,  # type: ignore[attr-defined]
        m.maximum if has("maximum") else None,  # type: ignore[attr-defined]
        m.sum if has("sum") else None,  # type: ignore[attr-defined]
    )


def _sub_view(field: str, m: Message) -> Any:
    """The view of one ColumnStatistics sub-message (as :func:`_column_statistics`)."""
    if field == "decimal_statistics":
        return DecimalStatistics(*[_text(_opt(m, f)) for f in ("minimum", "maximum", "sum")])
    if field == "bucket_statistics":
        return BucketStatistics(tuple(m.count))  # type: ignore[attr-defined]
    return _scalars(STATISTICS_VIEWS[field], m)


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


def bloom_filter_index(
    buf: bytes, name: str, check: Callable[[int], None] | None = None
) -> BloomFilters:
    """The entries of a BLOOM_FILTER or BLOOM_FILTER_UTF8 stream: one per row group
    (``check`` as for :func:`row_index`)."""
    m = parse(pb.BloomFilterIndex, buf, name)
    if check is not None:
        check(len(m.bloom_filter))
    return BloomFilters(m)


class BloomFilters(Sequence[BloomFilter]):
    """The entries of a bloom filter index, as a tuple of :class:`BloomFilter` that
    makes each view when first read: a stream holds a filter per row group (kilobytes
    each), and pruning reads only those of the row groups it still has to decide."""

    __slots__ = ("_m", "_views")

    def __init__(self, m: pb.BloomFilterIndex) -> None:
        self._m = m
        self._views: dict[int, BloomFilter] = {}

    def __len__(self) -> int:
        return len(self._m.bloom_filter)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        n = len(self)
        j = i + n if -n <= i < 0 else i
        if not 0 <= j < n:
            raise IndexError("bloom filter index entry out of range")
        view = self._views.get(j)
        if view is None:
            b = self._m.bloom_filter[j]
            view = self._views[j] = BloomFilter(
                _opt(b, "num_hash_functions"),
                struct.pack(f"<{len(b.bitset)}Q", *b.bitset),
                _opt(b, "utf8bitset"),
            )
        return view

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"BloomFilters({len(self)} entries)"
