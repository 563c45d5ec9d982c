"""What one stripe of an ORC file holds, read on demand: its footer, its streams placed
in the file, its row groups, and per column the encoding, the row index and the bloom
filter index.

:class:`StripeIndexes` gives :class:`~bloomskip.orc.file.OrcFile` these methods (the
file's tail is read by :mod:`.file`). A stream's offset is its stripe's offset plus the
lengths of the streams listed before it in the stripe footer, as ORC C++ computes it; when
a stripe lists a stream kind twice for a column, the last one wins, as in ORC Java's
``StripePlanner``. A row group is ``row_index_stride`` rows, restarting at every stripe
(the last one shorter); a row index or bloom filter index must have one entry per row
group. The bloom filter index of a column comes from its ``BLOOM_FILTER_UTF8`` stream,
else its legacy ``BLOOM_FILTER`` stream, entries as stored (ORC v1 specification,
apache/orc-format ``specification/ORCv1.md``: "Stripes", "Indexes").

Hostile stripes raise :class:`~bloomskip.errors.CorruptFileError` (or
:class:`~bloomskip.errors.UnsupportedFileError` for encrypted stripes) naming the file,
the stripe and the structure: every stream must lie inside its stripe's index and data
and name a column of the file, and no stripe may claim more than
:data:`MAX_ROW_GROUPS_PER_STRIPE` row groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

import numpy as np

from bloomskip.errors import CorruptFileError, UnsupportedFileError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import proto
from bloomskip.orc.compression import Compression, decompress

if TYPE_CHECKING:
    from bloomskip.orc.file import Column, Stripe, _Source

#: Largest decompressed stripe footer (real ones are kilobytes).
MAX_STRIPE_FOOTER_BYTES = 64 * 1024 * 1024
#: Most row groups one stripe may have (10^10 rows at the default stride of 10,000).
MAX_ROW_GROUPS_PER_STRIPE = 1 << 20

STREAM_KIND_NAMES = {
    0: "PRESENT",
    1: "DATA",
    2: "LENGTH",
    3: "DICTIONARY_DATA",
    4: "DICTIONARY_COUNT",
    5: "SECONDARY",
    6: "ROW_INDEX",
    7: "BLOOM_FILTER",
    8: "BLOOM_FILTER_UTF8",
    9: "ENCRYPTED_INDEX",
    10: "ENCRYPTED_DATA",
    100: "STRIPE_STATISTICS",
    101: "FILE_STATISTICS",
}
ROW_INDEX, BLOOM_FILTER, BLOOM_FILTER_UTF8 = 6, 7, 8
ENCODING_NAMES = {0: "DIRECT", 1: "DICTIONARY", 2: "DIRECT_V2", 3: "DICTIONARY_V2"}


@dataclass(frozen=True, slots=True)
class StreamInfo:
    """A stream of a stripe, placed in the file."""

    kind: int | None
    column: int
    offset: int
    length: int

    @property
    def kind_name(self) -> str:
        return STREAM_KIND_NAMES.get(self.kind, f"kind {self.kind}")  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class RowGroup:
    """A unit of pruning: ``num_rows`` rows from row ``first_row`` of the file."""

    stripe: int
    index: int  # within the stripe: entry ``index`` of its row and bloom filter indexes
    first_row: int
    num_rows: int


class RowGroups(Sequence[RowGroup]):
    """:meth:`StripeIndexes.row_groups` of a whole file held as columns - lists of the
    fields, and numpy arrays of ``stripe`` and ``index`` - each :class:`RowGroup` made
    only when asked for (pruning decides most row groups from the columns alone)."""

    def __init__(
        self, stripe: list[int], index: list[int], first_row: list[int], num_rows: list[int]
    ) -> None:
        self.stripe, self.index, self.first_row, self.num_rows = stripe, index, first_row, num_rows
        self.stripes = np.array(stripe, np.int64)
        self.indexes = np.array(index, np.int64)

    def __len__(self) -> int:
        return len(self.stripe)

    @overload
    def __getitem__(self, i: int) -> RowGroup: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[RowGroup, ...]: ...
    def __getitem__(self, i: int | slice) -> RowGroup | tuple[RowGroup, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        return RowGroup(self.stripe[i], self.index[i], self.first_row[i], self.num_rows[i])


@dataclass(frozen=True, slots=True)
class ColumnBloomFilters:
    """A column's bloom filter index in one stripe: one entry per row group, as stored."""

    stripe: int
    column: int
    stream_kind: int  # BLOOM_FILTER_UTF8 (8) or BLOOM_FILTER (7)
    bloom_encoding: int | None  # the column's ColumnEncoding.bloom_encoding in the stripe
    offset: int  # of the stream in the file
    length: int
    filters: Sequence[proto.BloomFilter]  # views made when first read
    #: every bloom stream kind the stripe has for this column (``(7, 8)`` when both)
    kinds_present: tuple[int, ...] = ()

    @property
    def kind(self) -> str:
        return STREAM_KIND_NAMES[self.stream_kind]

    def bitset(self, row_group: int) -> bytes:
        """The bits of entry ``row_group`` as little-endian 64-bit words: ``utf8bitset``
        from a BLOOM_FILTER_UTF8 stream, the ``bitset`` words from a legacy one (``b""``
        when the entry has none)."""
        f = self.filters[row_group]
        if self.stream_kind == BLOOM_FILTER_UTF8:
            return f.utf8bitset or b""
        return f.bitset

    def num_hash_functions(self, row_group: int) -> int | None:
        return self.filters[row_group].num_hash_functions


class StripeIndexes:
    """The per-stripe methods of :class:`~bloomskip.orc.file.OrcFile`, with their caches."""

    if TYPE_CHECKING:
        name: str
        compression: Compression
        columns: tuple[Column, ...]
        stripes: tuple[Stripe, ...]
        _source: _Source
        _stripe_footers: dict[int, proto.StripeFooter]
        _streams: dict[int, tuple[StreamInfo, ...]]
        _by_kind: dict[int, dict[tuple[int, int | None], StreamInfo]]

        @property
        def encrypted(self) -> bool: ...

        @property
        def row_index_stride(self) -> int: ...

    # -- stripes ---------------------------------------------------------------------

    def stripe_footer(self, stripe: int) -> proto.StripeFooter:
        """The footer of ``stripe`` (streams, column encodings, writer time zone)."""
        sf = self._stripe_footers.get(stripe)
        if sf is None:
            s = self.stripes[stripe]
            offset = s.footer_offset
            raw = self._source.read(offset, s.footer_length, f"stripe {stripe} footer")
            what = f"{self.name}: stripe {stripe} footer at offset {offset}"
            data = decompress(
                raw, self.compression, name=what, offset=offset, limit=MAX_STRIPE_FOOTER_BYTES
            )
            sf = proto.stripe_footer(data, what)
            self._stripe_footers[stripe] = sf
        return sf

    def streams(self, stripe: int) -> tuple[StreamInfo, ...]:
        """The streams of ``stripe`` with their file offsets, in stripe footer order."""
        out = self._streams.get(stripe)
        if out is not None:
            return out
        s = self.stripes[stripe]
        sf = self.stripe_footer(stripe)
        if self.encrypted or sf.encryption_variants:
            raise UnsupportedFileError(
                f"{self.name}: stripe {stripe} has encrypted columns; their streams are "
                "placed between the plain ones, which bloomskip does not locate yet"
            )
        pos = s.offset
        end = s.offset + s.index_length + s.data_length
        located = []
        for i, st in enumerate(sf.streams):
            length = st.length or 0
            column = 0 if st.column is None else st.column
            if column >= len(self.columns):
                raise CorruptFileError(
                    f"{self.name}: stripe {stripe} stream {i} names column {column}, but the "
                    f"file has {len(self.columns)} columns"
                )
            if length > end - pos:
                raise CorruptFileError(
                    f"{self.name}: stripe {stripe} stream {i} at offset {pos} with length "
                    f"{length} runs past the stripe's index and data ({end})"
                )
            located.append(StreamInfo(st.kind, column, pos, length))
            pos += length
        out = self._streams[stripe] = tuple(located)
        return out

    def column_encoding(self, stripe: int, column: int) -> proto.ColumnEncoding | None:
        """``ColumnEncoding`` of ``column`` in ``stripe`` (None if the footer lists none)."""
        cols = self.stripe_footer(stripe).columns
        return cols[column] if 0 <= column < len(cols) else None

    def writer_timezone(self, stripe: int) -> str | None:
        return self.stripe_footer(stripe).writer_timezone

    def read_stream(self, stripe: int, stream: StreamInfo) -> bytes:
        """The decompressed bytes of one stream of ``stripe``."""
        what = f"{self.name}: stripe {stripe} {stream.kind_name} stream of column {stream.column}"
        raw = self._source.read(stream.offset, stream.length, what)
        return decompress(raw, self.compression, name=what, offset=stream.offset)

    def _find(self, stripe: int, column: int, kind: int) -> StreamInfo | None:
        if not 0 <= column < len(self.columns):
            raise KeyError(f"{self.name}: no column id {column}")
        index = self._by_kind.get(stripe)
        if index is None:
            # the last stream of a kind wins, as in ORC Java's StripePlanner
            index = {(st.column, st.kind): st for st in self.streams(stripe)}
            self._by_kind[stripe] = index
        return index.get((column, kind))

    # -- row groups and indexes ------------------------------------------------------

    def row_groups(self, stripe: int | None = None) -> tuple[RowGroup, ...]:
        """Row groups of ``stripe``, or of the whole file in order (stripe by stripe).

        A row group is ``row_index_stride`` rows; the last of each stripe may be shorter.
        Without a row index (stride 0) each stripe is one unit. They tile every row.
        """
        if stripe is None:
            return tuple(g for i in range(len(self.stripes)) for g in self.row_groups(i))
        s = self.stripes[stripe]
        stride = self.row_index_stride
        if stride == 0:
            return (RowGroup(stripe, 0, s.first_row, s.num_rows),) if s.num_rows else ()
        count = self.num_row_groups(stripe)
        return tuple(
            RowGroup(stripe, j, s.first_row + j * stride, min(stride, s.num_rows - j * stride))
            for j in range(count)
        )

    def row_group_columns(self) -> RowGroups:
        """:meth:`row_groups` of the whole file (the same checks, the same order), as
        columns."""
        stripe: list[int] = []
        index: list[int] = []
        first: list[int] = []
        rows: list[int] = []
        stride = self.row_index_stride
        for i, s in enumerate(self.stripes):
            if stride == 0:
                if s.num_rows:
                    stripe.append(i)
                    index.append(0)
                    first.append(s.first_row)
                    rows.append(s.num_rows)
                continue
            count = self.num_row_groups(i)
            if count:
                stripe += [i] * count
                index += range(count)
                first += range(s.first_row, s.first_row + count * stride, stride)
                rows += [stride] * (count - 1)
                rows.append(s.num_rows - (count - 1) * stride)
        return RowGroups(stripe, index, first, rows)

    def num_row_groups(self, stripe: int) -> int:
        s = self.stripes[stripe]
        stride = self.row_index_stride
        if stride == 0:
            return 1 if s.num_rows else 0
        count = -(-s.num_rows // stride)
        if count > MAX_ROW_GROUPS_PER_STRIPE:
            raise CorruptFileError(
                f"{self.name}: stripe {stripe} at offset {s.offset} claims {s.num_rows:,} rows, "
                f"{count:,} row groups of {stride:,} (at most {MAX_ROW_GROUPS_PER_STRIPE:,})"
            )
        return count

    def row_index(self, stripe: int, column: int) -> tuple[proto.RowIndexEntry, ...] | None:
        """The row index of ``column`` in ``stripe``: one entry (positions, statistics) per
        row group; None when the stripe has no ROW_INDEX stream for the column."""
        st = self._find(stripe, column, ROW_INDEX)
        if st is None:
            return None
        what = f"{self.name}: stripe {stripe} row index of column {column} at offset {st.offset}"
        return proto.row_index(
            self.read_stream(stripe, st), what, lambda n: self._check_count(stripe, n, what)
        )

    def row_index_statistics(
        self, stripe: int, column: int, field: str | None
    ) -> tuple[tuple | None, ...] | None:
        """Per entry of :meth:`row_index`, what pruning reads of its statistics
        (:func:`~bloomskip.orc.proto.row_index_statistics`); None without a row index."""
        m = self.row_index_message(stripe, column)
        return None if m is None else proto.row_index_statistics(m, field)

    def row_index_message(self, stripe: int, column: int) -> pb.RowIndex | None:
        """The row index of ``column`` in ``stripe`` as protobuf parsed it (its entries
        counted against the stripe's row groups), for reading a few fields of every
        entry; None when the stripe has no ROW_INDEX stream for the column."""
        st = self._find(stripe, column, ROW_INDEX)
        if st is None:
            return None
        what = f"{self.name}: stripe {stripe} row index of column {column} at offset {st.offset}"
        return proto.row_index_message(
            self.read_stream(stripe, st), what, lambda n: self._check_count(stripe, n, what)
        )

    def bloom_filters(self, stripe: int, column: int) -> ColumnBloomFilters | None:
        """The bloom filter index of ``column`` in ``stripe``, as stored: from its
        BLOOM_FILTER_UTF8 stream, else its legacy BLOOM_FILTER stream; None if neither."""
        utf8 = self._find(stripe, column, BLOOM_FILTER_UTF8)
        legacy = self._find(stripe, column, BLOOM_FILTER)
        st = utf8 or legacy
        if st is None:
            return None
        present = tuple(k for k, s in ((BLOOM_FILTER, legacy), (BLOOM_FILTER_UTF8, utf8)) if s)
        what = (
            f"{self.name}: stripe {stripe} {st.kind_name} stream of column {column} "
            f"at offset {st.offset}"
        )
        filters = proto.bloom_filter_index(
            self.read_stream(stripe, st), what, lambda n: self._check_count(stripe, n, what)
        )
        enc = self.column_encoding(stripe, column)
        return ColumnBloomFilters(
            stripe=stripe,
            column=column,
            stream_kind=st.kind,  # type: ignore[arg-type]
            bloom_encoding=None if enc is None else enc.bloom_encoding,
            offset=st.offset,
            length=st.length,
            filters=filters,
            kinds_present=present,
        )

    def _check_count(self, stripe: int, entries: int, what: str) -> None:
        if self.row_index_stride == 0:
            raise CorruptFileError(f"{what}: the file has no row index stride")
        expected = self.num_row_groups(stripe)
        if entries != expected:
            s = self.stripes[stripe]
            raise CorruptFileError(
                f"{what}: {entries} entries for {expected} row groups ({s.num_rows:,} rows, "
                f"stride {self.row_index_stride:,})"
            )
