"""What Delta Lake and Iceberg tables share as sources of a zone index: a snapshot's own
file list instead of a listing, identity partition values, and a data file's columns
under the table's names.

A table is not its directory. Files that updates, deletes, overwrites and compaction
removed stay in the directory until vacuum, and a listing would index them and return
them. A :class:`TableSource` lists exactly the data files of one snapshot, as the table's
library reads its log or metadata (:mod:`.delta`, :mod:`.iceberg`): paths, sizes and
partition values come from there, and nothing is listed.

A source is pinned to one snapshot from its first use: :meth:`~TableSource.list`, the
schema, the partition values and :meth:`~TableSource.snapshot` describe the same one.
``version`` pins it in advance (time travel, :meth:`~TableSource.as_of`).

A data file's identity is ``(path, size, mtime_ns)`` as the table records it (Delta's
``modificationTime``; Iceberg records none: 0). Tables never rewrite a file in place, so
a file the index holds under that identity holds the rows it indexed - some of them
deleted since, perhaps (deletion vectors, delete files): zones are AtMost, a deleted row
only leaves a zone a candidate. Rows are read through :meth:`~TableSource.read_tasks`,
which applies the snapshot's deletes.

Indexing reads the physical file, every row in file order, so zone offsets are row
positions in the file (the positions deletion vectors and position deletes name). Names
are the table's: a Delta column stored under its column-mapping name, an Iceberg column
found by field id (a column renamed since the file was written is still found), a Delta
partition column filled with the file's partition value, a column added after the file
was written read as nulls (Iceberg: unless it has an initial default, then the file is
not indexed).
"""

from __future__ import annotations

import contextlib
import threading
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from bloomskip import formats
from bloomskip.errors import (
    BloomskipError,
    InvalidParameterError,
    SourceChangedError,
    SourceError,
)
from bloomskip.formats.ranges import merge_ranges, overlap
from bloomskip.sources.base import DatasetSource, IndexRead, SourceFile
from bloomskip.sources.files import FileSource

#: Arrow types whose partition values are compared for partition pruning: equality of
#: these is exact (no -0.0 / NaN questions, no time zone or unit games).
_PARTITION_TYPES = (
    pa.types.is_integer,
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_binary,
    pa.types.is_date,
    pa.types.is_timestamp,
    pa.types.is_boolean,
    pa.types.is_decimal,
)


#: Field metadata of an index's schema naming a table column for good: ``id:<field id>``
#: (Iceberg) or ``physical:<name>`` (Delta column mapping); names may change, these not.
COLUMN_KEY = b"bloomskip.table_column"


@dataclass(frozen=True)
class TableColumn:
    """One column of a snapshot's schema and where the data files keep it."""

    name: str  # the table's (logical) name
    type: pa.DataType  # its Arrow type as the table's reader returns it
    physical: str | None = None  # its name in the data files; None: found by field id
    field_id: int | None = None  # Iceberg's field id
    partition: bool = False  # a Delta partition column: not in the data files
    null_if_missing: bool = True  # a file without it reads nulls (Iceberg: no default)
    #: Delta column mapping: the column's physical name - a partition column's too, which
    #: is not in the data files (``physical`` None) but keeps its name across renames.
    mapping: str | None = None

    @property
    def key(self) -> bytes | None:
        """What names the column whatever it is called (:data:`COLUMN_KEY`)."""
        if self.field_id is not None:
            return f"id:{self.field_id}".encode()
        if self.mapping is not None:
            return f"physical:{self.mapping}".encode()
        return None


@dataclass(frozen=True)
class TableFile:
    """One data file of a snapshot."""

    path: str  # in the table's file system: an absolute local path, or bucket/key
    size: int
    mtime_ns: int
    num_rows: int | None
    format: str  # "parquet", "orc", "avro"
    partition: tuple[tuple[str, Any], ...] = ()  # (column, value) of identity partitions


@dataclass(frozen=True)
class Snapshot:
    """What one snapshot of a table holds: the files and the schema."""

    ref: dict[str, Any]  # what a manifest records: {"table": kind, "version" | "snapshot_id"}
    id: int | None  # the Delta version or Iceberg snapshot id (None: an empty table)
    schema: pa.Schema
    columns: dict[str, TableColumn]
    files: tuple[TableFile, ...]  # sorted by path

    def by_path(self) -> dict[str, TableFile]:
        return {f.path: f for f in self.files}


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` without field metadata and with large and view string/binary types as
    plain ones (the types an index keeps and Spark maps)."""

    def plain(t: pa.DataType) -> pa.DataType:
        if pa.types.is_large_string(t) or pa.types.is_string_view(t):
            return pa.string()
        if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            return pa.binary()
        return t

    return pa.schema([pa.field(f.name, plain(f.type), f.nullable) for f in schema])


@dataclass(frozen=True)
class TableSource(DatasetSource):
    """A table (Delta Lake, Iceberg) at one snapshot: ``version`` None is the latest when
    first used, then pinned."""

    uri: str
    version: int | None = None
    _state: dict[str, Any] = field(default_factory=dict, compare=False, repr=False, hash=False)

    #: The dataset kind a manifest records (``"delta"``, ``"iceberg"``).
    kind: ClassVar[str] = ""

    # -- what it is --------------------------------------------------------------------

    @property
    def scheme(self) -> str:
        return self.kind

    def to_json(self) -> dict:
        return {"uri": self.uri, "filesystem": self.kind, "paths": [self.uri]}

    def __getstate__(self) -> dict[str, Any]:
        # Pickled into Spark tasks: the snapshot travels (files, columns), the library's
        # open table objects and the lock do not.
        state = dict(self.__dict__)
        kept = {
            k: v for k, v in self._state.items() if k in ("snapshot", "files", "aliases", "gone")
        }
        state["_state"] = kept
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _lock(self) -> threading.Lock:
        lock = self._state.get("lock")
        if lock is None:
            lock = self._state.setdefault("lock", threading.Lock())
        return lock

    def loaded(self) -> Snapshot:
        """The snapshot this source reads (loaded on first use)."""
        snap = self._state.get("snapshot")
        if snap is None:
            with self._lock():
                snap = self._state.get("snapshot")
                if snap is None:
                    snap = self._state["snapshot"] = self._load()
        return snap

    def as_of(self, ref: int) -> TableSource:
        if isinstance(ref, bool) or not isinstance(ref, int) or ref < 0:
            raise InvalidParameterError(
                f"a table version or snapshot id is a non-negative integer, got {ref!r}"
            )
        return replace(self, version=ref, _state={})

    def snapshot(self) -> dict[str, Any]:
        return dict(self.loaded().ref)

    def listing_key(self) -> object | None:
        # The Snapshot object: the Delta and Iceberg layers hand out the same one while
        # the snapshot is the same (a kept table, a kept description), and a snapshot's
        # files never change.
        return self.loaded()

    def list(self) -> list[SourceFile]:
        """The data files of the snapshot, sorted by path: nothing is listed."""
        return [SourceFile(f.path, f.size, f.mtime_ns) for f in self.loaded().files]

    def arrow_schema(self, listing: Sequence[SourceFile]) -> pa.Schema:
        """The snapshot's schema; each field says which table column it is
        (:data:`COLUMN_KEY`), so an index follows a column through renames."""
        snap = self.loaded()
        fields = []
        for f in snap.schema:
            key = snap.columns[f.name].key
            fields.append(f if key is None else f.with_metadata({COLUMN_KEY: key}))
        return pa.schema(fields)

    def following(self, schema: pa.Schema) -> TableSource:
        """Read the columns of ``schema`` (an index's) as the table columns they were,
        matched by field id or physical name, whatever their names now: renamed, or two
        names swapped. A column whose name now belongs to another one (its own was
        dropped) is not read under that name."""
        snap = self.loaded()
        by_key = {c.key: c.name for c in snap.columns.values() if c.key is not None}
        aliases, gone = {}, set()
        for f in schema:
            key = (f.metadata or {}).get(COLUMN_KEY)
            if key is None:
                continue
            now = by_key.get(key)
            if now is None:
                if f.name in snap.columns:
                    gone.add(f.name)
            elif now != f.name:
                aliases[f.name] = now
        self._state["aliases"], self._state["gone"] = aliases, gone
        return self

    def _column(self, name: str) -> TableColumn | None:
        """The snapshot's column an index knew as ``name`` (:meth:`following`), or the
        snapshot's column ``name``."""
        snap = self.loaded()
        alias = (self._state.get("aliases") or {}).get(name)
        if alias is not None:
            return snap.columns.get(alias)
        if name in (self._state.get("gone") or ()):
            return None
        return snap.columns.get(name)

    def uri_of(self, path: str) -> str:
        name = self._state.get("namer")
        if name is None:  # made once: a table names every file of every query
            fs = self.files()
            prefix = fs.uri_prefix()
            name = self._state["namer"] = fs.uri_of if prefix is None else prefix.__add__
        return name(path)

    def partition_values(self, listing: Sequence[SourceFile]) -> dict[str, pa.Array]:
        snap = self.loaded()
        by_path = snap.by_path()
        names = {n for f in snap.files for n, _ in f.partition}
        out = {}
        for name in sorted(names):
            col = snap.columns.get(name)
            if col is None or not any(ok(col.type) for ok in _PARTITION_TYPES):
                continue
            values = []
            for f in listing:
                tf = by_path.get(f.path)
                values.append(dict(tf.partition).get(name) if tf is not None else None)
                if tf is None or name not in dict(tf.partition):
                    break  # a file without the column's partition value: unknown
            else:
                try:
                    out[name] = partition_array(values, col.type)
                except (pa.ArrowException, ValueError, TypeError, OverflowError):
                    continue
        return out

    # -- what each kind supplies ----------------------------------------------------------

    @abstractmethod
    def _load(self) -> Snapshot:
        """Read the snapshot ``version`` (None: the latest) with the table's library."""

    @abstractmethod
    def files(self) -> FileSource:
        """The file system the table's data files are on (to open them)."""

    @abstractmethod
    def read_tasks(self, paths: Sequence[str] | None = None) -> list[ReadTask]:
        """How to read the live rows of ``paths`` (None: every data file) of the
        snapshot, deletes applied; raises a typed error naming the table and the file
        for deletes the library cannot apply."""

    def read(
        self, paths: Sequence[str] | None = None, columns: Sequence[str] | None = None
    ) -> pa.Table:
        """The live rows of ``paths`` (None: every data file) of the snapshot, deletes
        applied, in the snapshot's schema (``columns``: only those)."""
        names = list(columns) if columns is not None else self.loaded().schema.names
        schema = pa.schema([self.loaded().schema.field(n) for n in names])
        if paths is not None:  # as an index's answers name them (s3://..., az://...) too
            known = self.loaded().by_path()
            if any(p not in known for p in paths):
                named = {self.uri_of(q): q for q in known}
                paths = [p if p in known else named.get(p, p) for p in paths]
        parts = [t for task in self.read_tasks(paths) for t in task.read(None, names)]
        return pa.concat_tables(parts) if parts else schema.empty_table()

    # -- indexing ---------------------------------------------------------------------

    def read_for_index(self, file: SourceFile, names: Sequence[str]) -> IndexRead:
        """Every physical row of ``file``, in file order, under the table's names."""
        snap = self.loaded()
        tf = snap.by_path().get(file.path)
        label = self.uri_of(file.path)
        if tf is None:
            raise SourceError(f"{label}: not a data file of {self.uri} at {snap.ref}")
        if tf.format not in ("parquet", "orc"):
            raise BloomskipError(f"{label}: {tf.format} data files are not indexed")
        cols = [self._column(n) for n in names]
        missing = [n for n, c in zip(names, cols, strict=True) if c is None]
        if missing:
            raise BloomskipError(f"{self.uri}: no column {', '.join(missing)}")
        fs = self.files()
        with fs.open(file.path) as fh:
            if fh.size() != tf.size:
                raise SourceChangedError(
                    f"{tf.size} bytes in the table's log, {fh.size()} in the file system"
                )
            # the table's readers read INT96 at microseconds, as Spark does
            reader = formats.open_reader(fh, label, spark_values=True)
            located = locate(reader.schema, cols, label)
            physical = sorted({p for p in located.values() if p is not None})
            table = reader.read(physical or reader.schema.names[:1])
        n, partition = table.num_rows, dict(tf.partition)
        arrays = [column_values(c, located[c.name], table, partition, n, label) for c in cols]
        out = pa.Table.from_arrays(arrays, names=list(names)) if names else table.select([])
        return IndexRead(reader.format, out, reader.unit_rows)


@dataclass(frozen=True)
class ReadTask:
    """One data file of a snapshot to read in another process (a Spark task): what it
    is, and everything needed to read its live rows there."""

    table: str  # the table, for messages
    path: str  # in the table's file system
    uri: str  # as users (and Spark) write it
    size: int

    def read(
        self, zones: Sequence[tuple[int, int]] | None, names: Sequence[str]
    ) -> Iterator[pa.Table]:
        """The live rows of the file inside ``zones`` ((start, length) row ranges;
        None: every row), columns ``names``, deletes applied."""
        raise NotImplementedError


def locate(file_schema: pa.Schema, columns: Sequence[TableColumn], label: str) -> dict:
    """Per column, its name in a data file of ``file_schema`` (None: not in the file)."""
    ids: dict[int, str] = {}
    for f in file_schema:
        raw = (f.metadata or {}).get(b"PARQUET:field_id")
        if raw is not None:
            with contextlib.suppress(ValueError):
                ids[int(raw)] = f.name
    out: dict[str, str | None] = {}
    for col in columns:
        if col.partition:
            out[col.name] = None
        elif col.physical is not None:
            out[col.name] = col.physical if col.physical in file_schema.names else None
        elif col.field_id is not None and ids:
            out[col.name] = ids.get(col.field_id)
        else:
            raise BloomskipError(
                f"{label}: no field ids in the data file to find {col.name} by (Iceberg "
                "files written without ids need a name mapping)"
            )
    return out


def column_values(
    col: TableColumn,
    physical: str | None,
    table: pa.Table,
    partition: dict[str, Any],
    num_rows: int,
    label: str,
) -> pa.ChunkedArray | pa.Array:
    """The column ``col`` of a data file's rows: read, a partition constant, or nulls."""
    if col.partition:
        if col.name not in partition:
            raise BloomskipError(f"{label}: no partition value for {col.name}")
        value = partition_array([partition[col.name]], col.type)
        return pa.repeat(value[0], num_rows) if num_rows else value.slice(0, 0)
    if physical is None:
        if not col.null_if_missing:
            raise BloomskipError(
                f"{label}: no column {col.name} in the file, and it has a default value"
            )
        return pa.nulls(num_rows, col.type)
    return table.column(physical)


def partition_array(values: Sequence[Any], t: pa.DataType) -> pa.Array:
    """Partition values (as the table's library gives them: typed values, or Iceberg's
    ints for dates and timestamps) as an Arrow array of ``t``."""
    if (pa.types.is_date32(t) or pa.types.is_timestamp(t)) and any(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        width = pa.int32() if pa.types.is_date32(t) else pa.int64()
        return pa.array(values, type=width).cast(t)
    return pa.array(values, type=t)


def read_file_rows(
    fs: FileSource,
    task: ReadTask,
    columns: dict[str, TableColumn],
    partition: dict[str, Any],
    deleted: np.ndarray | None,
    zones: Sequence[tuple[int, int]] | None,
    names: Sequence[str],
) -> Iterator[pa.Table]:
    """The live rows of one data file read directly: the units that overlap ``zones``,
    the rows inside them, minus the positions in ``deleted`` (sorted), as the table's
    columns ``names``."""
    label = task.uri
    with fs.open(task.path) as fh:
        if fh.size() != task.size:
            raise SourceChangedError(
                f"{label}: {task.size} bytes in the table's log, {fh.size()} in the file system"
            )
        reader = formats.open_reader(fh, label, spark_values=True)
        wanted = [columns[n] for n in names]
        located = locate(reader.schema, wanted, label)
        physical = sorted({p for p in located.values() if p is not None})
        ranges = None if zones is None else merge_ranges(zones)
        start = 0
        for i, n in enumerate(reader.unit_rows):
            local = [(0, n)] if ranges is None else overlap(ranges, start, start + n)
            first = start
            start += n
            if not local:
                continue
            table = reader.read_unit(i, physical or reader.schema.names[:1])
            table = table.cast(normalize_schema(table.schema))  # views: not every kernel has them
            keep = np.zeros(n, dtype=np.bool_)
            for a, b in local:
                keep[a:b] = True
            if deleted is not None and deleted.size:
                lo, hi = np.searchsorted(deleted, [first, first + n])
                keep[deleted[lo:hi] - first] = False
            if not keep.all():
                table = table.filter(pa.array(keep))
            if not table.num_rows:
                continue
            arrays = [
                _cast(column_values(c, located[c.name], table, partition, table.num_rows, label), c)
                for c in wanted
            ]
            yield pa.Table.from_arrays(arrays, schema=pa.schema([(c.name, c.type) for c in wanted]))


def _cast(arr, col: TableColumn):
    if arr.type == col.type:
        return arr
    # Timestamps finer than the table's unit are truncated as the table's readers do;
    # every other cast must be exact.
    safe = not (pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(col.type))
    return arr.cast(col.type, safe=safe)


__all__ = [
    "COLUMN_KEY",
    "ReadTask",
    "Snapshot",
    "TableColumn",
    "TableFile",
    "TableSource",
    "column_values",
    "locate",
    "normalize_schema",
    "partition_array",
    "read_file_rows",
]
