"""ORC file structure, from our own parse: the tail, the writer, the columns and the
stripes.

:func:`read_orc` reads a file's tail - PostScript, Footer - and returns an
:class:`OrcFile` that exposes what bloom filter work needs:

* who wrote the file (:class:`WriterInfo`: writer id, writer version, software version,
  calendar, format version), which decides which filters can be trusted;
* the column tree, ids in pre-order with the root struct as 0 (:class:`Column`: name
  path as ORC Java spells it - struct field names, ``_elem`` for list elements,
  ``_key``/``_value`` for maps, the branch number for unions - kind, precision, scale);
* the stripes (:class:`Stripe`) and the stripe statistics (Metadata), and per stripe,
  read on demand by :mod:`.stripes`, its footer, streams, row groups, row indexes and
  bloom filter indexes.

It does not hash or test anything (see ``bloomskip.orc.filter``), and reads no column
data. Layout follows the ORC v1 specification (apache/orc-format
``specification/ORCv1.md``: "File Tail", "Compression"); the messages are parsed by
:mod:`.proto`.

A 0-byte file is an empty table (no stripes), as ORC Java reads it. Hostile files raise
:class:`~bloomskip.errors.CorruptFileError` (or
:class:`~bloomskip.errors.UnsupportedFileError` for LZO) naming the file, the structure
and the byte offset: every offset and length is checked against the file before anything
is read, the column tree must be a pre-order tree (no cycles, no shared children, at most
:data:`MAX_DEPTH` levels), and stripe row counts must add up to the file's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import BinaryIO

from bloomskip.errors import CorruptFileError, UnsupportedFileError
from bloomskip.orc import proto
from bloomskip.orc.compression import Compression, compression_of, decompress
from bloomskip.orc.stripes import StripeIndexes
from bloomskip.orc.types import KIND_NAMES, LIST, MAP, STRUCT, UNION

MAGIC = b"ORC"
#: How much of the file's end is read first (ORC Java's ``DIRECTORY_SIZE_GUESS``).
TAIL_GUESS = 16 * 1024
#: Largest Footer + Metadata on disk we agree to read.
MAX_TAIL_BYTES = 256 * 1024 * 1024
#: Largest decompressed Footer (real ones are kilobytes to megabytes; decoded, a hostile
#: one could take several times its size in Python objects).
MAX_FOOTER_BYTES = 64 * 1024 * 1024
#: Deepest column nesting accepted (struct in struct in ...), root at depth 0.
MAX_DEPTH = 256

_COMPOUND = {LIST, MAP, STRUCT, UNION}

WRITER_NAMES = {
    0: "ORC_JAVA",
    1: "ORC_CPP",
    2: "PRESTO",
    3: "SCRITCHLEY_GO",
    4: "TRINO",
    5: "CUDF",
}
#: ``PostScript.writer_version`` as ORC Java names it (non-Java writers all write 6).
WRITER_VERSION_NAMES = {
    0: "ORIGINAL",
    1: "HIVE-8732",
    2: "HIVE-4243",
    3: "HIVE-12055",
    4: "HIVE-13083",
    5: "ORC-101",
    6: "ORC-135",
    7: "ORC-517",
    8: "ORC-203",
    9: "ORC-14",
}
CALENDAR_NAMES = {0: "UNKNOWN_CALENDAR", 1: "JULIAN_GREGORIAN", 2: "PROLEPTIC_GREGORIAN"}


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Column:
    """One node of the column tree; ``id`` is its pre-order number (root struct = 0)."""

    id: int
    path: tuple[str, ...]  # () for the root
    kind: int | None
    parent: int | None
    children: tuple[int, ...]
    type: proto.Type

    @property
    def name(self) -> str:
        """Dotted path as ORC Java's ``getFullFieldName`` (``""`` for the root)."""
        return ".".join(self.path)

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, f"kind {self.kind}")  # type: ignore[arg-type]

    @property
    def precision(self) -> int | None:
        return self.type.precision

    @property
    def scale(self) -> int | None:
        return self.type.scale

    @property
    def maximum_length(self) -> int | None:
        return self.type.maximum_length

    @property
    def attributes(self) -> dict[str, str]:
        return dict(self.type.attributes)

    @property
    def type_name(self) -> str:
        """``decimal(10,3)``, ``varchar(4)``, ``bigint``-style short name (lower case)."""
        k = self.kind_name.lower()
        if self.kind == 14:
            return f"decimal({self.precision},{self.scale})"
        if self.kind in (16, 17):
            return f"{k}({self.maximum_length})"
        return k


@dataclass(frozen=True, slots=True)
class WriterInfo:
    """Who wrote the file; the inputs of every "which filters to trust" rule."""

    writer: int | None  # Footer.writer; None if absent (ORC Java reads that as 0, Java)
    writer_version: int | None  # PostScript.writer_version; None if absent (0, original)
    software_version: str | None  # Footer.software_version, e.g. "2.3.0"
    calendar: int | None  # Footer.calendar
    file_version: tuple[int, ...]  # PostScript.version, e.g. (0, 12)

    @property
    def writer_name(self) -> str:
        w = 0 if self.writer is None else self.writer
        return WRITER_NAMES.get(w, f"writer {w}")

    @property
    def writer_version_name(self) -> str:
        v = 0 if self.writer_version is None else self.writer_version
        return WRITER_VERSION_NAMES.get(v, f"future ({v})")

    @property
    def calendar_name(self) -> str | None:
        if self.calendar is None:
            return None
        return CALENDAR_NAMES.get(self.calendar, f"calendar {self.calendar}")

    def to_dict(self) -> dict:
        return {
            "writer": self.writer,
            "writer_name": self.writer_name,
            "writer_version": self.writer_version,
            "writer_version_name": self.writer_version_name,
            "software_version": self.software_version,
            "calendar": self.calendar_name,
            "file_version": ".".join(str(v) for v in self.file_version),
        }


@dataclass(frozen=True, slots=True)
class Stripe:
    index: int
    offset: int
    index_length: int
    data_length: int
    footer_length: int
    num_rows: int
    first_row: int  # of the file

    @property
    def footer_offset(self) -> int:
        return self.offset + self.index_length + self.data_length


# ----------------------------------------------------------------------------- source


class _Source:
    """Positioned reads from a path (opened per read), a binary file object or bytes."""

    def __init__(self, source, label: str) -> None:
        self.label = label
        self._path = self._fh = self._data = None
        if isinstance(source, bytes | bytearray | memoryview):
            self._data = bytes(source)
            self.size = len(self._data)
        elif isinstance(source, str | os.PathLike):
            self._path = os.fspath(source)
            self.size = os.path.getsize(self._path)
        else:
            self._fh = source
            self.size = source.seek(0, os.SEEK_END)

    def read(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptFileError(
                f"{self.label}: {what} at offset {offset} with length {length} "
                f"is outside the file of {self.size} bytes"
            )
        if self._data is not None:
            return self._data[offset : offset + length]
        if self._fh is not None:
            self._fh.seek(offset)
            out = self._fh.read(length)
        else:
            with open(self._path, "rb") as fh:  # type: ignore[arg-type]
                fh.seek(offset)
                out = fh.read(length)
        if len(out) != length:
            raise CorruptFileError(
                f"{self.label}: {what} at offset {offset}: read {len(out)} of {length} "
                "bytes (the file changed?)"
            )
        return out


# ------------------------------------------------------------------------------- file


@dataclass(eq=False)
class OrcFile(StripeIndexes):
    """A parsed ORC file tail, with per-stripe structures read on demand."""

    name: str
    file_size: int
    postscript: proto.PostScript
    footer: proto.Footer
    compression: Compression
    writer: WriterInfo
    columns: tuple[Column, ...]
    stripes: tuple[Stripe, ...]
    #: where the Metadata (stripe statistics) sits: offset, length
    metadata_range: tuple[int, int]
    _source: _Source = field(repr=False)
    # caches of the per-stripe methods (see bloomskip.orc.stripes.StripeIndexes)
    _stripe_footers: dict = field(default_factory=dict, repr=False)
    _streams: dict = field(default_factory=dict, repr=False)
    _by_kind: dict = field(default_factory=dict, repr=False)
    _metadata: proto.Metadata | None = field(default=None, repr=False)

    # -- file level ----------------------------------------------------------------

    @property
    def num_rows(self) -> int:
        return sum(s.num_rows for s in self.stripes)

    @property
    def row_index_stride(self) -> int:
        """Rows per row group; 0 when the file has no row index (and so no bloom filters)."""
        return self.footer.row_index_stride or 0

    @property
    def encrypted(self) -> bool:
        return self.footer.encrypted

    def column(self, key: int | str) -> Column:
        """A column by id or by dotted name (``"a.b"``, ``"l._elem"``, ``"m._key"``)."""
        if isinstance(key, int):
            if 0 <= key < len(self.columns):
                return self.columns[key]
            raise KeyError(f"{self.name}: no column id {key} (0..{len(self.columns) - 1})")
        for c in self.columns:
            if c.name == key:
                return c
        names = ", ".join(c.name for c in self.columns[1:21])
        raise KeyError(f"{self.name}: no column {key!r}; columns are: {names}")

    def metadata(self) -> proto.Metadata:
        """Stripe statistics (the Metadata section), decoded on first use."""
        if self._metadata is None:
            offset, length = self.metadata_range
            raw = self._source.read(offset, length, "metadata")
            what = f"{self.name}: metadata at offset {offset}"
            data = decompress(raw, self.compression, name=what, offset=offset)
            self._metadata = proto.metadata(data, what)
        return self._metadata


# ----------------------------------------------------------------------------- reading


def read_orc(source: str | os.PathLike | BinaryIO | bytes, *, name: str | None = None) -> OrcFile:
    """Parse the tail of an ORC file: a path, a binary file object or the file's bytes.

    A path is reopened for each later read (stripe footers, indexes); a file object
    must stay open while the :class:`OrcFile` is used.
    """
    if name is None:
        if isinstance(source, str | os.PathLike):
            name = os.fspath(source)
        else:
            name = str(getattr(source, "name", "<orc>"))
    src = _Source(source, name)
    size = src.size
    if size == 0:  # Hive writes empty tables as 0-byte files; ORC Java reads them as empty
        return _empty_file(name, src)
    if size < len(MAGIC) + 1:
        raise CorruptFileError(f"{name}: {size} bytes is too small for an ORC file")
    tail_len = min(TAIL_GUESS, size)
    tail_start = size - tail_len
    tail = src.read(tail_start, tail_len, "file tail")
    ps_len = tail[-1]
    if ps_len == 0 or ps_len + 1 + len(MAGIC) > size:
        raise CorruptFileError(
            f"{name}: PostScript length {ps_len} (last byte) does not fit in a file of {size} bytes"
        )
    ps_start = size - 1 - ps_len
    ps_raw = tail[ps_start - tail_start : -1]
    ps = proto.postscript(ps_raw, f"{name}: PostScript at offset {ps_start}")
    if ps.magic != MAGIC and src.read(0, len(MAGIC), "file header") != MAGIC:
        raise CorruptFileError(f"{name}: not an ORC file (no 'ORC' in the PostScript or header)")
    compression = compression_of(ps.compression, ps.compression_block_size, name)
    if ps.footer_length is None:
        raise CorruptFileError(f"{name}: the PostScript at offset {ps_start} has no footer length")
    footer_len = ps.footer_length
    meta_len = ps.metadata_length or 0
    stats_len = ps.stripe_statistics_length or 0
    room = ps_start - len(MAGIC)
    if footer_len + meta_len + stats_len > room:
        raise CorruptFileError(
            f"{name}: footer ({footer_len}), metadata ({meta_len}) and stripe statistics "
            f"({stats_len}) lengths do not fit before the PostScript at offset {ps_start}"
        )
    if footer_len + meta_len > MAX_TAIL_BYTES:
        raise CorruptFileError(
            f"{name}: footer and metadata of {footer_len + meta_len:,} bytes are larger than "
            f"{MAX_TAIL_BYTES:,}"
        )
    footer_start = ps_start - footer_len
    if footer_start >= tail_start:
        footer_raw = tail[footer_start - tail_start : ps_start - tail_start]
    else:
        footer_raw = src.read(footer_start, footer_len, "footer")
    what = f"{name}: footer at offset {footer_start}"
    footer_data = decompress(
        footer_raw, compression, name=what, offset=footer_start, limit=MAX_FOOTER_BYTES
    )
    footer = proto.footer(footer_data, what)
    columns = _columns(footer.types, name)
    content_end = footer_start - meta_len - stats_len
    stripes = _stripes(footer, content_end, name)
    writer = WriterInfo(
        footer.writer, ps.writer_version, footer.software_version, footer.calendar, ps.version
    )
    return OrcFile(
        name=name,
        file_size=size,
        postscript=ps,
        footer=footer,
        compression=compression,
        writer=writer,
        columns=columns,
        stripes=stripes,
        metadata_range=(footer_start - meta_len, meta_len),
        _source=src,
    )


def _empty_file(name: str, src: _Source) -> OrcFile:
    """A 0-byte file as ORC Java reads it (``ReaderImpl.buildEmptyTail``): no rows, no
    stripes, a root struct without fields, no compression."""
    ps = proto.PostScript(0, 0, None, (), 0, None, None, MAGIC)
    root = proto.Type(STRUCT)
    footer = proto.Footer(0, 0, (), (root,), (), 0, (), 0, None, False, None, None)
    return OrcFile(
        name=name,
        file_size=0,
        postscript=ps,
        footer=footer,
        compression=compression_of(None, None, name),
        writer=WriterInfo(None, None, None, None, ()),
        columns=(Column(0, (), STRUCT, None, (), root),),
        stripes=(),
        metadata_range=(0, 0),
        _source=src,
    )


def _columns(types: tuple[proto.Type, ...], name: str) -> tuple[Column, ...]:
    """The column tree; ``types`` must list it in pre-order (child ids as visited).

    Iterative, so hostile subtypes (cycles, shared or out-of-range children, absurd
    depth) fail with an error instead of recursing or looping.
    """
    if not types:
        raise CorruptFileError(f"{name}: the footer has no types")
    n = len(types)
    out: list[Column] = []
    # (id, parent, path, depth), popped in pre-order
    stack: list[tuple[int, int | None, tuple[str, ...], int]] = [(0, None, (), 0)]
    while stack:
        cid, parent, path, depth = stack.pop()
        if cid != len(out):
            raise CorruptFileError(
                f"{name}: type {parent} lists child {cid} where the pre-order id is {len(out)}"
            )
        t = types[cid]
        subtypes = t.subtypes
        kind = t.kind
        for child in subtypes:
            if not cid < child < n:
                raise CorruptFileError(
                    f"{name}: type {cid} lists child {child} (ids run from {cid + 1} to {n - 1})"
                )
        if subtypes and depth >= MAX_DEPTH:
            raise UnsupportedFileError(f"{name}: column {cid} nests deeper than {MAX_DEPTH} levels")
        if kind in _COMPOUND:
            if kind == LIST and len(subtypes) != 1:
                raise CorruptFileError(f"{name}: LIST type {cid} has {len(subtypes)} children")
            if kind == MAP and len(subtypes) != 2:
                raise CorruptFileError(f"{name}: MAP type {cid} has {len(subtypes)} children")
            if kind == STRUCT and len(t.field_names) != len(subtypes):
                raise CorruptFileError(
                    f"{name}: STRUCT type {cid} has {len(subtypes)} children and "
                    f"{len(t.field_names)} field names"
                )
        elif subtypes:
            raise CorruptFileError(
                f"{name}: type {cid} of kind {KIND_NAMES.get(kind, kind)} has children"  # type: ignore[arg-type]
            )
        out.append(Column(cid, path, kind, parent, subtypes, t))
        if kind == STRUCT:
            names = t.field_names
        elif kind == LIST:
            names = ("_elem",)
        elif kind == MAP:
            names = ("_key", "_value")
        else:
            names = tuple(str(i) for i in range(len(subtypes)))
        for child, part in reversed(list(zip(subtypes, names, strict=True))):
            stack.append((child, cid, (*path, part), depth + 1))
    if len(out) != n:
        raise CorruptFileError(f"{name}: {n - len(out)} of {n} types are not in the column tree")
    return tuple(out)


def _stripes(footer: proto.Footer, content_end: int, name: str) -> tuple[Stripe, ...]:
    out = []
    first = 0
    for i, info in enumerate(footer.stripes):
        offset = info.offset or 0
        index_len = info.index_length or 0
        data_len = info.data_length or 0
        footer_len = info.footer_length or 0
        rows = info.number_of_rows or 0
        end = offset + index_len + data_len + footer_len
        if offset < len(MAGIC) or end > content_end:
            raise CorruptFileError(
                f"{name}: stripe {i} at offset {offset} with index {index_len}, data "
                f"{data_len} and footer {footer_len} bytes is outside the stripes' area "
                f"({len(MAGIC)}..{content_end})"
            )
        if footer_len == 0:
            raise CorruptFileError(f"{name}: stripe {i} at offset {offset} has no footer")
        out.append(Stripe(i, offset, index_len, data_len, footer_len, rows, first))
        first += rows
    if footer.number_of_rows is not None and footer.number_of_rows != first:
        raise CorruptFileError(
            f"{name}: the footer says {footer.number_of_rows:,} rows but its stripes hold {first:,}"
        )
    return tuple(out)
