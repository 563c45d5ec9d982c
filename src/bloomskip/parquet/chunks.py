"""The column chunks pruning reads, for every row group at once: arrays, not structs.

Pruning a Parquet file asks a few fields of the bound columns in every row group -
``ColumnMetaData.num_values`` (field 5) and ``Statistics`` (field 12: ``null_count``,
``min_value``/``max_value``, the deprecated ``min``/``max``) - and, for the few row groups
that reach the dictionary or bloom stage, the whole ``ColumnChunk``. :func:`open_chunks`
gives a :class:`ChunkSource` that answers both:

* for a plaintext footer, from one compiled pass over its Thrift bytes
  (:mod:`.chunkkernels`): the whole footer is validated as the decoder would validate it,
  the schema and ``column_orders`` are decoded, the row groups' chunks located, and
  :meth:`ChunkSource.column` reads one row of integers per row group for a bound
  column (:class:`ChunkArrays`);
  a ``ColumnChunk`` is built from its bytes only when a stage needs it;
* for an encrypted file, or a footer that is already parsed, from
  :func:`~bloomskip.parquet.footer.read_footer`'s structs, row by row and only for the row
  groups asked about (an encrypted chunk's metadata is decrypted when first read, as
  before).

Both fill the same arrays with the same meaning, so pruning decides from one form. Where
the compiled pass meets anything the structs would refuse, it gives way to
:func:`~bloomskip.parquet.footer.read_footer`, which raises the precise error. Field ids
follow ``parquet.thrift`` (apache/parquet-format).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from bloomskip._lazy import lazy
from bloomskip.errors import CorruptFileError
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.dictionary import (
    DictionaryPlace,
    dictionary_coverage,
    fully_dictionary_encoded,
)
from bloomskip.parquet.footer import (
    CODECS,
    ColumnChunk,
    Footer,
    LazyRowGroups,
    LeafColumn,
    leaves_of,
    read_footer,
    read_tail,
)
from bloomskip.parquet.thrift import Struct, decode_value

ck = lazy("bloomskip.parquet.chunkkernels")

#: FileMetaData fields: schema, row_groups, column_orders, encryption_algorithm.
_SCHEMA, _ROW_GROUPS, _COLUMN_ORDERS, _ENCRYPTION = 2, 4, 7, 8
# The layout of a row of :class:`ChunkArrays`, as :mod:`.chunkkernels` fills it (kept
# there too, where the compiled kernels read it; a test checks both agree).
F_START, F_END, F_META, F_STATS, F_NULLS_OK, F_NULLS = range(6)
#: ColumnMetaData's integers: num_values, bloom_filter_offset, bloom_filter_length,
#: codec, total_compressed_size, data_page_offset, dictionary_page_offset.
META_INTS = (5, 14, 15, 4, 7, 9, 11)
F_INTS = 6
#: ColumnMetaData fields decoded when needed: encoding_stats, encodings (type + 1, start).
META_SPANS = (13, 2)
F_SPANS = F_INTS + 2 * len(META_INTS)
BOUND_FIELDS = (6, 5, 2, 1)  # min_value, max_value, min, max
F_BOUNDS = F_SPANS + 2 * len(META_SPANS)
NF = F_BOUNDS + 3 * len(BOUND_FIELDS)
#: Distinct (encoding_stats, encodings) values whose dictionary coverage a file keeps.
_COVERAGE_KEPT = 8


def int_field(fid: int) -> int:
    """The column of a ColumnMetaData integer's kind (0 absent, 1 integer, 2 another
    Thrift type); its value is in the next column."""
    return F_INTS + 2 * META_INTS.index(fid)


@dataclass
class ChunkArrays:
    """One column over every row group: a row of :data:`NF` integers per row group
    (the chunk's bytes, ColumnMetaData present, statistics present, null_count, the
    integers of :data:`META_INTS`, and per bound its kind - 0 absent, 1 binary, 2
    another Thrift type - position and length in :attr:`data`)."""

    column: int
    fields: np.ndarray  # (row groups, NF) int64
    data: bytes
    #: per row group, whether its row is filled (None: all are)
    filled: np.ndarray | None = None
    #: per row group, why its encrypted chunk cannot be read (None: no encrypted chunk)
    locked: list[str | None] | None = None


class ChunkSource:
    """A file's leaves, row groups and the chunks of its bound columns."""

    label: str
    leaves: list[LeafColumn]
    num_rows: np.ndarray  # int64 per row group

    @property
    def footer(self) -> Footer:
        """The footer (for file labels and offsets in the dictionary and bloom stages)."""
        raise NotImplementedError

    def column(self, col: int) -> ChunkArrays:
        raise NotImplementedError

    def ensure(self, arrays: ChunkArrays, units: np.ndarray) -> None:
        """Fill the rows of ``units`` (ascending row group numbers) if they are not."""

    def chunk(self, rg: int, col: int) -> ColumnChunk:
        raise NotImplementedError

    def coverage(self, rg: int, col: int) -> tuple[bool, str]:
        """Whether the chunk's dictionary lists every value
        (:func:`~.dictionary.fully_dictionary_encoded`)."""
        return fully_dictionary_encoded(self.chunk(rg, col))

    def place(self, rg: int, col: int) -> DictionaryPlace:
        """Where the chunk's dictionary page is."""
        return DictionaryPlace.of(self.footer, rg, self.leaves[col].name, self.chunk(rg, col))

    def column_orders(self) -> Any:
        """The decoded FileMetaData.column_orders field (None when absent)."""
        raise NotImplementedError


def open_chunks(fh: BinaryIO, name: str, *, decryption: Decryption | None = None) -> ChunkSource:
    """The chunk source of an open Parquet file: compiled for a plaintext footer, from
    :func:`~bloomskip.parquet.footer.read_footer` otherwise. Raises its errors."""
    size, start, raw, encrypted = read_tail(fh, name)
    if not encrypted and len(raw) == size - 8 - start:
        fast = _open_plaintext(name, size, start, raw)
        if fast is not None:
            return fast
    return FooterSource(read_footer(fh, name=name, decryption=decryption))


# --------------------------------------------------------------- from the Thrift bytes


def _open_plaintext(label: str, size: int, start: int, raw: bytes) -> _BytesSource | None:
    """The compiled source, or None where the slow path must decide (and raise)."""
    buf = np.frombuffer(raw, np.uint8)
    ftype = np.full(16, -1, np.int64)
    fstart = np.zeros(16, np.int64)
    used, rows, starts = ck.index_footer(buf, len(raw), ftype, fstart)
    if used < 0 or ftype[_ENCRYPTION] != -1:  # refused, or a signed plaintext footer
        return None
    name = f"{label} footer"
    try:
        schema = None
        if ftype[_SCHEMA] != -1:
            at, t = int(fstart[_SCHEMA]), int(ftype[_SCHEMA])
            schema, _ = decode_value(raw, at, used, t, name=name)
        leaves = leaves_of(schema, label)
        orders = None
        if ftype[_COLUMN_ORDERS] != -1:
            at, t = int(fstart[_COLUMN_ORDERS]), int(ftype[_COLUMN_ORDERS])
            orders, _ = decode_value(raw, at, used, t, name=name)
    except CorruptFileError:
        return None
    if not rows.shape[0]:  # no row group: no chunk of any leaf
        starts = np.zeros((0, len(leaves)), np.int64)
    elif starts.shape[1] != len(leaves):  # chunks are one per leaf
        return None
    return _BytesSource(label, size, start, raw, used, leaves, orders, rows, starts)


class _BytesSource(ChunkSource):
    def __init__(
        self,
        label: str,
        size: int,
        start: int,
        raw: bytes,
        used: int,
        leaves: list[LeafColumn],
        orders: Any,
        rows: np.ndarray,
        starts: np.ndarray,
    ) -> None:
        self.label, self.size, self.start, self.raw, self.used = label, size, start, raw, used
        self.leaves, self._orders, self.num_rows, self._starts = leaves, orders, rows, starts
        self._arrays: dict[int, ChunkArrays] = {}
        self._chunks: dict[tuple[int, int], ColumnChunk] = {}
        self._footer: Footer | None = None
        self._coverage: list[tuple[tuple[Any, ...], tuple[bool, str]]] = []

    def column(self, col: int) -> ChunkArrays:
        found = self._arrays.get(col)
        if found is None:
            fields = ck.new_fields(self.num_rows.shape[0])
            starts = np.ascontiguousarray(self._starts[:, col])
            if not ck.chunk_fields(np.frombuffer(self.raw, np.uint8), self.used, starts, fields):
                raise CorruptFileError(f"{self.label}: column chunk unreadable")  # pragma: no cover
            found = self._arrays[col] = ChunkArrays(col, fields, self.raw)
        return found

    def chunk(self, rg: int, col: int) -> ColumnChunk:
        key = (rg, col)
        found = self._chunks.get(key)
        if found is None:
            s, e = self.column(col).fields[rg, :2].tolist()
            struct = Struct.deferred(self.raw, s, e, 4, f"{self.label} footer")
            found = self._chunks[key] = ColumnChunk(rg, col, struct)
        return found

    def column_orders(self) -> Any:
        return self._orders

    def coverage(self, rg: int, col: int) -> tuple[bool, str]:
        row = self.column(col).fields[rg]
        if row[F_META] != 1:
            return False, "no column metadata"
        spans = row[F_SPANS : F_SPANS + 4].tolist()  # encoding_stats, encodings: (type, at)
        raw = self.raw
        # Row groups of a file mostly repeat these two values byte for byte: a Thrift
        # value decodes from its own bytes alone, so the same bytes give the same answer.
        for key, answer in self._coverage:
            if all(
                key[k] == spans[k] and (not spans[k] or raw.startswith(key[k + 1], spans[k + 1]))
                for k in (0, 2)
            ):
                return answer
        name = f"{self.label} footer"
        decoded, key = [], []
        for k in (0, 2):
            t, at = spans[k : k + 2]
            value, end = None, at
            if t:
                value, end = decode_value(raw, at, self.used, t - 1, name=name, depth=5)
            decoded.append(value)
            key += [t, raw[at:end] if t else b""]
        answer = dictionary_coverage(*decoded)
        if len(self._coverage) < _COVERAGE_KEPT:
            self._coverage.append((tuple(key), answer))
        return answer

    def place(self, rg: int, col: int) -> DictionaryPlace:
        row = self.column(col).fields[rg].tolist()

        def value(fid: int) -> int | None:
            k = int_field(fid)
            return row[k + 1] if row[k] == 1 else None

        codec = value(4)
        return DictionaryPlace(
            f"{self.label}: row group {rg} column {self.leaves[col].name}",
            self.start,
            value(11),
            value(9),
            value(7),
            CODECS[codec] if codec is not None and 0 <= codec < len(CODECS) else f"codec {codec}",
        )

    @property
    def footer(self) -> Footer:
        if self._footer is None:
            meta = Struct.deferred(self.raw, 0, self.used, 0, f"{self.label} footer")
            self._footer = Footer(
                self.label,
                self.size,
                self.start,
                len(self.raw),
                meta,
                self.leaves,
                LazyRowGroups(meta, self.leaves, self.label),
            )
        return self._footer


# ------------------------------------------------------------------ from parsed structs


class FooterSource(ChunkSource):
    """Chunks from a parsed :class:`~bloomskip.parquet.footer.Footer`, row by row."""

    def __init__(self, footer: Footer) -> None:
        self._f = footer
        self.label, self.leaves = footer.path, footer.leaves
        self.num_rows = np.array([rg.num_rows for rg in footer.row_groups], dtype=np.int64)
        self._arrays: dict[int, ChunkArrays] = {}
        self._side: dict[int, bytearray] = {}

    @property
    def footer(self) -> Footer:
        return self._f

    def column(self, col: int) -> ChunkArrays:
        found = self._arrays.get(col)
        if found is None:
            groups = self._f.row_groups
            n = len(groups)
            locked = [rg.columns[col].locked for rg in groups]
            found = self._arrays[col] = ChunkArrays(
                col,
                np.zeros((n, NF), np.int64),
                b"",
                np.zeros(n, np.bool_),
                locked if any(locked) else None,
            )
            self._side[col] = bytearray()
        return found

    def ensure(self, arrays: ChunkArrays, units: np.ndarray) -> None:
        filled = arrays.filled
        if filled is None or filled[units].all():
            return
        side = self._side[arrays.column]
        for u in units.tolist():
            if not filled[u]:
                _fill(arrays.fields[u], self._f.row_groups[u].columns[arrays.column], side)
                filled[u] = True
        arrays.data = bytes(side)

    def chunk(self, rg: int, col: int) -> ColumnChunk:
        return self._f.row_groups[rg].columns[col]

    def column_orders(self) -> Any:
        return self._f.metadata.get(_COLUMN_ORDERS)


def _fill(row: np.ndarray, chunk: ColumnChunk, side: bytearray) -> None:
    """One row of :class:`ChunkArrays` from a chunk's structs (what the kernel reads)."""
    meta = chunk.meta
    if meta is None:
        return
    row[F_META] = 1
    for i, fid in enumerate(META_INTS):
        v = meta.get(fid)
        if type(v) is int:
            row[F_INTS + 2 * i : F_INTS + 2 * i + 2] = (1, v)
        elif v is not None:
            row[F_INTS + 2 * i] = 2
    stats = meta.get(12)
    if not isinstance(stats, Struct):
        return
    row[F_STATS] = 1
    nulls = stats.get(3)
    if isinstance(nulls, int) and nulls >= 0:  # a boolean counts, as it always did
        row[F_NULLS_OK], row[F_NULLS] = 1, int(nulls)
    for b, fid in enumerate(BOUND_FIELDS):
        v = stats.get(fid)
        at = F_BOUNDS + 3 * b
        if isinstance(v, bytes):
            row[at : at + 3] = (1, len(side), len(v))
            side += v
        elif v is not None:
            row[at] = 2
