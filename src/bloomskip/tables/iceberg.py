"""An Apache Iceberg table as a source of a zone index, read with ``pyiceberg``.

Owns naming a table and loading one snapshot of it, and describing it as a
:class:`~.base.Snapshot`:

* ``iceberg://CATALOG/NAMESPACE.TABLE`` is a table in the catalog
  ``pyiceberg.catalog.load_catalog(CATALOG)`` resolves (``.pyiceberg.yaml`` or
  ``PYICEBERG_CATALOG__<NAME>__*`` variables, read by pyiceberg when it is first
  imported), with the properties :func:`configure_catalog` added in this process (the
  Spark data source passes its ``catalog.*`` options that way);
* a path or URI ending in ``.metadata.json`` is that metadata file, a static table
  (``StaticTable.from_metadata``): its current snapshot is the latest it knows.

The snapshot's data files are the live entries of its manifests
(``Snapshot.manifests`` / ``fetch_manifest_entry(discard_deleted=True)``): path, size,
row count, format, and the values of its *identity* partition fields (other transforms
are not values of a column). Delete files are noted, and equality deletes remembered.
The schema is the snapshot's own (``Snapshot.schema_id``, as pyiceberg's scans use it);
columns are found in data files by field id.

Iceberg never rewrites a metadata file: a snapshot's manifest list and manifests stay
what they were when it was committed. So what a load reads is kept in this process and
reused, bounded: a snapshot once described (a lookup of an unchanged table reads only the
catalog's table metadata), and each manifest's entries by its path, length and adding
snapshot (after a commit, only the manifests the commit wrote are read; pyiceberg names
them by UUID). Each key holds the table's UUID, so a table dropped and made again is read
afresh.

Reading rows goes through pyiceberg's own reader: its planner gives each data file its
delete files (``ManifestGroupPlanner`` over the manifests holding the files to read and
every delete manifest; ``DataScan.plan_files`` for many files, or with an older
pyiceberg), and ``ArrowScan.to_table`` reads it with position deletes and deletion
vectors applied, columns projected by field id (renamed and added columns, promoted
types). pyiceberg 0.12 cannot apply equality
deletes: reading a snapshot that has them raises
:class:`~bloomskip.errors.UnsupportedFileError` naming the table and the delete file.
Indexing never needs deletes (zones are AtMost), so a table with equality deletes can be
indexed and queried; only its rows cannot be read.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.fs as pafs

from bloomskip._lazy import require
from bloomskip.errors import (
    InvalidParameterError,
    MissingDependencyError,
    SourceError,
    UnsupportedFileError,
)
from bloomskip.formats.ranges import merge_ranges
from bloomskip.objstore import filesystem, first_line
from bloomskip.sources.files import FileSource
from bloomskip.tables.base import (
    ReadTask,
    Snapshot,
    TableColumn,
    TableFile,
    TableSource,
    normalize_schema,
)

SCHEME = "iceberg://"
METADATA_SUFFIX = ".metadata.json"

_CATALOGS: dict[str, dict[str, str]] = {}
_CATALOGS_LOCK = threading.Lock()


#: Catalogs loaded, by name and properties (a ``SqlCatalog`` sets up its engine and
#: tables when made: milliseconds a lookup).
_LOADED: OrderedDict[tuple, Any] = OrderedDict()


def _catalog(name: str) -> Any:
    """The catalog ``name``, with the properties :func:`configure_catalog` gave it, made
    once per set of properties."""
    from pyiceberg.catalog import load_catalog

    with _CATALOGS_LOCK:
        props = dict(_CATALOGS.get(name, {}))
        key = (name, tuple(sorted(props.items())))
        catalog = _LOADED.get(key)
    if catalog is None:
        catalog = load_catalog(name, **props)
        with _CATALOGS_LOCK:
            _LOADED[key] = catalog
            while len(_LOADED) > 8:
                _LOADED.popitem(last=False)
    return catalog


class _Entry(NamedTuple):
    """A live entry of a manifest, as much of it as a snapshot's description needs."""

    content: int  # DataFileContent: 0 data, 1 position deletes, 2 equality deletes
    file_path: str
    size: int
    rows: int
    file_format: str
    spec_id: int
    partition: tuple


@dataclass(frozen=True)
class _Described:
    """A snapshot as :meth:`IcebergSource._load` describes it."""

    snapshot: Snapshot
    equality_deletes: tuple[str, ...]
    #: Each data file (by its path in the file system) as its manifest names it, and the
    #: manifest holding it: reading a few files plans only their manifests.
    held: dict[str, tuple[str, str]]


class _Kept:
    """Values kept by key, least recently used forgotten first: at most ``count`` of them
    and ``weight`` in all (a value weighs what :meth:`put` says, one per file here)."""

    def __init__(self, count: int, weight: int) -> None:
        self.count, self.weight = count, weight
        self._items: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: tuple, value: Any, weight: int) -> None:
        with self._lock:
            if key in self._items or weight > self.weight:
                return
            self._items[key] = (value, weight)
            self._held += weight
            while len(self._items) > self.count or self._held > self.weight:
                self._held -= self._items.popitem(last=False)[1][1]

    def held(self) -> int:
        """The weight kept now."""
        with self._lock:
            return self._held

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = 0


#: Snapshots described, by (table UUID, snapshot id, manifest list, schema id, source),
#: weighed by their files.
_SNAPSHOTS = _Kept(count=8, weight=1_000_000)
#: Manifests' live entries, by (table UUID, path, length, adding snapshot), weighed by
#: their entries (a few hundred bytes each).
_MANIFESTS = _Kept(count=100_000, weight=500_000)


def _entries(table_uuid: str, manifest: Any, io: Any) -> tuple[_Entry, ...]:
    """The live entries of ``manifest`` (read once, then kept: manifests are immutable)."""
    key = (
        table_uuid,
        manifest.manifest_path,
        int(manifest.manifest_length),
        manifest.added_snapshot_id,
    )
    hit = _MANIFESTS.get(key)
    if hit is not None:
        return hit
    got = []
    for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
        df = entry.data_file
        part = df.partition
        got.append(
            _Entry(
                int(df.content),
                str(df.file_path),
                int(df.file_size_in_bytes),
                int(df.record_count),
                str(df.file_format.name).lower(),
                int(df.spec_id),
                tuple(part[i] for i in range(len(part))) if part is not None else (),
            )
        )
    entries = tuple(got)
    _MANIFESTS.put(key, entries, len(entries))
    return entries


def forget() -> None:
    """Drop the catalogs, snapshots and manifests kept in this process."""
    with _CATALOGS_LOCK:
        _LOADED.clear()
    _SNAPSHOTS.clear()
    _MANIFESTS.clear()


def require_pyiceberg() -> Any:
    """The ``pyiceberg`` module, or a typed error saying how to get it."""
    return require("pyiceberg", "reading Iceberg tables", "tables")


def configure_catalog(name: str, **properties: str) -> None:
    """Properties for the catalog ``name`` in this process, added to what pyiceberg's
    own configuration says (``uri``, ``warehouse``, ``type``, ``s3.endpoint``, ...)."""
    if not name or "/" in name:
        raise InvalidParameterError(f"a catalog name is one word, got {name!r}")
    with _CATALOGS_LOCK:
        _CATALOGS[name] = {**_CATALOGS.get(name, {}), **{k: str(v) for k, v in properties.items()}}


def is_iceberg_table(path: str | os.PathLike) -> bool:
    """True for ``iceberg://CATALOG/NAMESPACE.TABLE`` and for ``*.metadata.json``."""
    text = os.fspath(path)
    return text.startswith(SCHEME) or text.endswith(METADATA_SUFFIX)


def parse_name(uri: str) -> tuple[str, tuple[str, ...]]:
    """``iceberg://CATALOG/NAMESPACE.TABLE`` -> (catalog, identifier)."""
    rest = uri[len(SCHEME) :]
    catalog, _, name = rest.partition("/")
    parts = tuple(p for p in name.split("."))
    if not catalog or len(parts) < 2 or not all(parts) or "/" in name:
        raise InvalidParameterError(
            f"{uri}: an Iceberg table is iceberg://CATALOG/NAMESPACE.TABLE "
            "(or a path to its *.metadata.json)"
        )
    return catalog, parts


def table_location(path: str | os.PathLike) -> str:
    """The table as bloomskip names it: ``iceberg://`` as given, a local metadata file
    absolute, other URIs as given."""
    text = os.fspath(path)
    if text.startswith(SCHEME):
        parse_name(text)
        return text
    if text.startswith("file://"):
        text = text[len("file://") :]
    return text if "://" in text else os.path.abspath(text)


def fs_path(location: str) -> tuple[pafs.FileSystem, str]:
    """A data file location (``file:/``, ``file:///``, ``s3://``, a plain path) as a
    pyarrow file system and a path in it, as pyiceberg opens it (no unquoting)."""
    if location.startswith("file:"):
        return pafs.LocalFileSystem(), "/" + location[len("file:") :].lstrip("/")
    if "://" in location:
        return filesystem(location)  # s3a:// and s3n:// as s3://
    return pafs.LocalFileSystem(), location


@functools.lru_cache(maxsize=8)
def static_table(metadata_location: str, properties: tuple[tuple[str, str], ...]) -> Any:
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_location, properties=dict(properties))


@dataclass(frozen=True)
class IcebergSource(TableSource):
    """An Iceberg table at one snapshot (``version``: a snapshot id; None: the current
    snapshot when first used)."""

    kind = "iceberg"

    recognise = staticmethod(is_iceberg_table)
    normalise = staticmethod(table_location)

    def table(self) -> Any:
        """The pyiceberg table (from its catalog, or its metadata file)."""
        tbl = self._state.get("table")
        if tbl is not None:
            return tbl
        require_pyiceberg()
        try:
            if self.uri.startswith(SCHEME):
                name, ident = parse_name(self.uri)
                tbl = _catalog(name).load_table(ident)
            else:
                tbl = static_table(self.uri, ())
        except (InvalidParameterError, MissingDependencyError):
            raise
        except Exception as e:  # NoSuchTableError, ValueError (no catalog), OSError...
            why = first_line(e)
            raise SourceError(f"{self.uri}: cannot load the Iceberg table: {why}") from None
        self._state["table"] = tbl
        return tbl

    def files(self) -> FileSource:
        fs = self._state.get("files")
        if fs is None:
            location = self.table().metadata.location
            f, root = fs_path(location)
            fs = self._state["files"] = FileSource(location, f, (root.rstrip("/"),))
        return fs

    def unsettled(self) -> dict[str, pa.DataType]:
        """For the latest snapshot: the names the table's current schema gives another
        field id than the snapshot's schema does, or only it has. pyiceberg's ``scan()``
        and Spark read the current snapshot with the current schema, so a column dropped
        and added again, or two names swapped, with no commit since, is not the column
        the index holds under that name."""
        if self.version is not None:
            return {}
        from pyiceberg.io.pyarrow import schema_to_pyarrow

        current = self.table().schema()
        then = {c.name: c.field_id for c in self.loaded().columns.values()}
        moved = [f for f in current.fields if then.get(f.name) != f.field_id]
        if not moved:
            return {}
        arrow = normalize_schema(schema_to_pyarrow(current, include_field_ids=False))
        return {f.name: arrow.field(f.name).type for f in moved}

    def _snapshot(self, tbl: Any) -> Any:
        if self.version is None:
            return tbl.current_snapshot()
        snap = tbl.snapshot_by_id(self.version)
        if snap is None:
            raise SourceError(f"{self.uri}: no snapshot {self.version}")
        return snap

    def _load(self) -> Snapshot:
        tbl = self.table()
        snap = self._snapshot(tbl)
        schema = tbl.schema()
        if snap is not None and snap.schema_id is not None:
            schema = {s.schema_id: s for s in tbl.schemas().values()}.get(snap.schema_id, schema)
        self._state["metadata_location"] = tbl.metadata_location
        uuid = str(tbl.metadata.table_uuid)
        key = (
            uuid,
            None if snap is None else int(snap.snapshot_id),
            None if snap is None else snap.manifest_list,
            schema.schema_id,
            self.uri,
            tbl.metadata.location,
        )
        kept = _SNAPSHOTS.get(key)
        if kept is None:
            kept = self._describe(tbl, snap, schema, uuid)
            _SNAPSHOTS.put(key, kept, 1 + len(kept.snapshot.files))
        self._state["equality_deletes"] = list(kept.equality_deletes)
        self._state["held"] = kept.held
        return kept.snapshot

    def _describe(self, tbl: Any, snap: Any, schema: Any, uuid: str) -> _Described:
        """``snap`` as a :class:`Snapshot`: its columns (``schema``, the snapshot's) and
        its manifests' live data files."""
        from pyiceberg.io.pyarrow import schema_to_pyarrow
        from pyiceberg.manifest import DataFileContent
        from pyiceberg.transforms import IdentityTransform

        arrow = normalize_schema(schema_to_pyarrow(schema, include_field_ids=False))
        columns = {
            f.name: TableColumn(
                f.name,
                arrow.field(f.name).type,
                None,
                f.field_id,
                null_if_missing=getattr(f, "initial_default", None) is None,
            )
            for f in schema.fields
        }
        fs = self.files()
        specs = tbl.specs()
        # Each spec's identity fields that name a column: (position, column name).
        identity: dict[int, list[tuple[int, str]]] = {}
        for spec_id, spec in specs.items():
            identity[spec_id] = [
                (pos, name)
                for pos, pf in enumerate(spec.fields)
                if isinstance(pf.transform, IdentityTransform)
                and (name := schema.find_column_name(pf.source_id)) is not None
                and name in columns
            ]
        files, equality, held = [], [], {}
        data, equality_deletes = int(DataFileContent.DATA), int(DataFileContent.EQUALITY_DELETES)
        try:
            manifests = snap.manifests(tbl.io) if snap is not None else []
            for m in manifests:
                for e in _entries(uuid, m, tbl.io):
                    if e.content == equality_deletes:
                        equality.append(e.file_path)
                        continue
                    if e.content != data:
                        continue  # position deletes, deletion vectors: pyiceberg's reader
                    f, path = fs_path(e.file_path)
                    if not f.equals(fs.filesystem):
                        raise UnsupportedFileError(
                            f"{self.uri}: data file {e.file_path} is on another file system "
                            "than the table"
                        )
                    partition = tuple(
                        (name, e.partition[pos])
                        for pos, name in identity.get(e.spec_id, ())
                        if pos < len(e.partition)
                    )
                    files.append(TableFile(path, e.size, 0, e.rows, e.file_format, partition))
                    held[path] = (e.file_path, m.manifest_path)
        except (UnsupportedFileError, SourceError):
            raise
        except Exception as e:
            raise SourceError(f"{self.uri}: cannot read its manifests: {first_line(e)}") from None
        files.sort(key=lambda f: f.path)
        paths = [f.path for f in files]
        twice = next((a for a, b in itertools.pairwise(paths) if a == b), None)
        if twice is not None:  # (add_files without its duplicate check): read twice
            raise UnsupportedFileError(
                f"{self.uri}: the snapshot lists the data file {twice} more than once, so "
                "its rows count twice; bloomskip indexes and reads each file once"
            )
        sid = None if snap is None else int(snap.snapshot_id)
        ref = {"table": "iceberg", "snapshot_id": sid}
        snapshot = Snapshot(ref, sid, arrow, columns, tuple(files))
        return _Described(snapshot, tuple(equality), held)

    # -- reading rows -------------------------------------------------------------------

    def read_tasks(self, paths: Sequence[str] | None = None) -> list[IcebergReadTask]:
        snap = self.loaded()
        tbl = self.table()
        equality = self._state.get("equality_deletes") or []
        if equality:
            raise UnsupportedFileError(
                f"{self.uri}: snapshot {snap.id} has equality deletes ({equality[0]}"
                f"{f' and {len(equality) - 1} more' if len(equality) > 1 else ''}), which "
                "pyiceberg cannot apply: its rows are not read (a row it deletes would be "
                "returned)"
            )
        by_path = snap.by_path()
        wanted = list(by_path) if paths is None else list(paths)
        for p in wanted:
            if p not in by_path:
                shown = p if "://" in p else self.uri_of(p)
                raise SourceError(f"{shown}: not a data file of {self.uri} at {snap.ref}")
        if snap.id is None or not wanted:
            return []
        try:
            planned = self._plan(tbl, snap.id, wanted)
            tasks = {fs_path(t.file.file_path)[1]: t for t in planned}
        except Exception as e:
            why = first_line(e)
            raise SourceError(f"{self.uri}: cannot plan snapshot {snap.id}: {why}") from None
        location = self._state["metadata_location"]
        props = tuple(sorted((str(k), str(v)) for k, v in (tbl.io.properties or {}).items()))
        schema_id = self._schema_id(tbl, snap.id)
        out = []
        for p in wanted:
            task = tasks.get(p)
            if task is None:
                raise SourceError(f"{self.uri_of(p)}: pyiceberg plans no task for it")
            out.append(
                IcebergReadTask(
                    self.uri, p, self.uri_of(p), by_path[p].size, location, props, schema_id, task
                )
            )
        return out

    def _plan(self, tbl: Any, snapshot_id: int, wanted: Sequence[str]) -> Iterable[Any]:
        """pyiceberg's scan tasks (data file and delete files) of the data files
        ``wanted``: planned from the manifests holding them and every delete manifest
        (pyiceberg's ``ManifestGroupPlanner``; a delete applies across manifests, and
        older deletes than the data are skipped as a whole scan skips them), or by the
        whole snapshot's scan when their manifests are not known."""
        from pyiceberg.manifest import DataFileContent, ManifestContent

        held = self._state.get("held") or {}
        known = [held.get(p) for p in wanted]
        try:
            from pyiceberg.table import ManifestGroupPlanner
        except ImportError:  # pyiceberg before 0.12
            ManifestGroupPlanner = None
        if ManifestGroupPlanner is None or not all(known) or len(known) > len(held) // 2:
            return tbl.scan(snapshot_id=snapshot_id).plan_files()
        raw = {k[0] for k in known if k}
        holding = {k[1] for k in known if k}
        manifests = [
            m
            for m in tbl.snapshot_by_id(snapshot_id).manifests(tbl.io)
            if m.content != ManifestContent.DATA or m.manifest_path in holding
        ]
        planner = ManifestGroupPlanner(table_metadata=tbl.metadata, io=tbl.io)
        return planner.plan_files(
            manifests,
            manifest_entry_filter=lambda e: (
                e.data_file.content != DataFileContent.DATA or e.data_file.file_path in raw
            ),
        )

    @staticmethod
    def _schema_id(tbl: Any, snapshot_id: int) -> int:
        snap = tbl.snapshot_by_id(snapshot_id)
        sid = snap.schema_id if snap is not None else None
        return int(sid if sid is not None else tbl.schema().schema_id)


@dataclass(frozen=True)
class IcebergReadTask(ReadTask):
    """An Iceberg data file and its delete files (pyiceberg's ``FileScanTask``), read by
    pyiceberg's ``ArrowScan`` against the snapshot's metadata file."""

    metadata_location: str = ""
    io_properties: tuple[tuple[str, str], ...] = ()
    schema_id: int = 0
    task: Any = None  # pyiceberg.table.FileScanTask

    def read(
        self, zones: Sequence[tuple[int, int]] | None, names: Sequence[str]
    ) -> Iterator[pa.Table]:
        from pyiceberg.expressions import AlwaysTrue
        from pyiceberg.io.pyarrow import ArrowScan

        require_pyiceberg()
        try:
            tbl = static_table(self.metadata_location, self.io_properties)
            schema = {s.schema_id: s for s in tbl.schemas().values()}[self.schema_id]
            projected = schema.select(*names) if names else schema.select(schema.fields[0].name)
            table = ArrowScan(tbl.metadata, tbl.io, projected, AlwaysTrue()).to_table([self.task])
        except (ValueError, KeyError, OSError, pa.ArrowException) as e:
            why = first_line(e)
            raise SourceError(f"{self.uri}: cannot read it with pyiceberg: {why}") from None
        whole = not self.task.delete_files and table.num_rows == self.task.file.record_count
        if zones is not None and whole:  # rows in file order: the zones apply
            ranges = merge_ranges(zones)
            parts = [table.slice(a, b - a) for a, b in ranges]
            table = pa.concat_tables(parts) if parts else table.slice(0, 0)
        yield table.cast(normalize_schema(table.schema)) if table.num_columns else table


__all__ = [
    "IcebergReadTask",
    "IcebergSource",
    "configure_catalog",
    "forget",
    "fs_path",
    "is_iceberg_table",
    "parse_name",
    "require_pyiceberg",
    "table_location",
]
