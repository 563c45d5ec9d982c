"""Building and refreshing a zone index with the local engine (a thread pool).

:func:`build` creates an index, or adds columns to one; :func:`refresh` brings one up to
date with its source. Both run the same plan:

1. list the source; a file whose ``(path, size, mtime)`` the index already holds is left
   untouched (not even opened) unless a column is new to the index; new and changed
   files are read and cut into zones (:func:`bloomskip.index.zones.index_file`, the
   function Spark tasks run too); files no longer listed are dropped;
2. write the new zones as one new *segment* per column, and a new fragment table;
3. publish the next manifest (:mod:`.store`). If another writer published first, plan
   again on top of its version (files already read are not read again).

Files that cannot be read are not indexed, so every query keeps them as candidates; the
report lists them with the reason.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import (
    BloomskipError,
    CommitConflictError,
    IndexNotFoundError,
    InvalidParameterError,
    SourceError,
    UnsupportedTypeError,
)
from bloomskip.hashing.arrow import Encoding, parquet_spec
from bloomskip.index import store
from bloomskip.index.layout import (
    DEFAULT_FPP,
    DEFAULT_ZONE_ROWS,
    FILE_SCHEMA,
    FRAGMENT_SCHEMA,
    SIZINGS,
    ZONE_SCHEMA,
    ColumnIndex,
    Manifest,
    Segment,
    Zoning,
    column_directory,
    zone_metadata,
)
from bloomskip.index.sources import Source, SourceFile, from_json, resolve
from bloomskip.index.zones import FileZones, index_file
from bloomskip.progress import bar as progress_bar

#: A column's segments are merged into one when a commit would leave more than this.
MAX_SEGMENTS = 8
#: How often a build re-plans after losing a commit race before giving up.
COMMIT_RETRIES = 5


@dataclass
class BuildReport:
    """What a build or refresh did."""

    index: str
    version: int
    columns: list[str]
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_dropped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    zones_written: int = 0
    bytes_written: int = 0
    seconds: float = 0.0
    retries: int = 0

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["failed"] = [{"path": p, "reason": r} for p, r in self.failed]
        return d


def build(
    source: str | os.PathLike | Sequence[str | os.PathLike],
    columns: str | Sequence[str],
    index_path: str | os.PathLike,
    *,
    zone_rows: int = DEFAULT_ZONE_ROWS,
    fpp: float = DEFAULT_FPP,
    sizing: str = "putze",
    align: str = "rows",
    file_filters: bool = True,
    encoding: str | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    overwrite: bool = False,
    index_files: Callable[..., Iterable[FileZones]] | None = None,
) -> BuildReport:
    """Index ``columns`` of every Parquet/ORC file under ``source`` into ``index_path``.

    ``zone_rows`` rows per zone (never across files), target ``fpp`` per zone, ``sizing``
    ``"putze"`` (Lance: every zone sized for ``zone_rows`` values) or ``"exact"`` (each
    zone sized for its own distinct count), ``align="row_groups"`` to never cut across a
    Parquet row group or ORC stripe. ``encoding="parquet"`` hashes the PLAIN bytes of the
    Parquet physical type (as Parquet's own filters); ``"arrow"`` the Arrow width, as Lance.
    ``encoding=None``: ``"arrow"`` for a Lance dataset (its fragments are the files, and
    the zones equal those of Lance's own BLOOMFILTER index), ``"parquet"`` otherwise.

    On an existing index, new columns are added (with the index's zoning) and the index is
    refreshed; ``overwrite=True`` replaces it. ``index_files`` lets another engine (Spark)
    run :func:`~bloomskip.index.zones.index_file` over the files to read.
    """
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names or len(set(names)) != len(names):
        raise InvalidParameterError(f"columns must be distinct names, got {names!r}")
    if sizing not in SIZINGS:
        raise InvalidParameterError(f"sizing must be one of {SIZINGS}, got {sizing!r}")
    if not isinstance(fpp, int | float) or not 0.0 < fpp < 1.0:
        raise InvalidParameterError(f"fpp must be strictly between 0 and 1, got {fpp!r}")
    zoning = Zoning(zone_rows, align)
    root = store.local_dir(index_path)
    src = resolve(source)
    if encoding is None:
        encoding = "arrow" if src.scheme == "lance" else "parquet"
    Encoding.parse(encoding)
    settings = {"fpp": float(fpp), "sizing": sizing, "encoding": encoding, "ff": file_filters}
    if not overwrite:  # fail before reading any file; checked again on every commit attempt
        _check_compatible(_latest(root), root, src, zoning, names, settings)
    return _update(
        root,
        src,
        zoning,
        names,
        settings,
        overwrite=overwrite,
        threads=threads,
        progress=progress,
        index_files=index_files,
    )


def refresh(
    index_path: str | os.PathLike,
    *,
    threads: int | None = None,
    progress: bool | None = None,
    index_files: Callable[..., Iterable[FileZones]] | None = None,
) -> BuildReport:
    """Index new and changed files of the index's source, drop removed ones; files whose
    ``(path, size, mtime)`` is unchanged are not opened."""
    root = store.local_dir(index_path)
    base = store.read_manifest(root)
    return _update(
        root,
        from_json(base.source),
        None,
        [],
        {},
        overwrite=False,
        threads=threads,
        progress=progress,
        index_files=index_files,
    )


# ----------------------------------------------------------------------------- planning


def _check_compatible(
    base: Manifest | None,
    root: str,
    src: Source,
    zoning: Zoning,
    names: list[str],
    settings: dict[str, Any],
) -> None:
    """Raise if ``build`` would mix another source, zoning or column settings into ``base``."""
    if base is None:
        return
    if base.source != src.to_json():
        raise InvalidParameterError(
            f"{root} indexes {base.source['uri']}, not {src.uri}; use another "
            "directory or overwrite=True"
        )
    if base.zoning != zoning:
        raise InvalidParameterError(
            f"{root} cuts zones as {base.zoning}, not {zoning}: every column of an "
            "index shares its zones; use another directory or overwrite=True"
        )
    for n in names:
        old = base.columns.get(n)
        wanted = (settings["sizing"], settings["fpp"], settings["encoding"])
        if old is not None and (old.sizing, old.fpp, old.encoding) != wanted:
            raise InvalidParameterError(
                f"{n} is already indexed with sizing={old.sizing}, fpp={old.fpp}, "
                f"encoding={old.encoding}; use overwrite=True to rebuild"
            )


def _latest(root: str) -> Manifest | None:
    try:
        return store.read_manifest(root)
    except IndexNotFoundError:
        return None


def _update(
    root: str,
    src: Source,
    zoning: Zoning | None,
    names: list[str],
    settings: dict[str, Any],
    *,
    overwrite: bool,
    threads: int | None,
    progress: bool | None,
    index_files: Callable[..., Iterable[FileZones]] | None,
) -> BuildReport:
    t0 = time.perf_counter()
    done: dict[tuple[tuple[str, int, int], tuple[str, ...]], FileZones] = {}
    run = index_files or _thread_pool(threads, progress)
    for attempt in range(COMMIT_RETRIES + 1):
        versions = store.versions(root)
        base = None if overwrite or not versions else store.read_manifest(root, versions[-1])
        next_version = (versions[-1] + 1) if versions else 1
        if base is not None and base.source != src.to_json():
            raise InvalidParameterError(f"{root} now indexes {base.source['uri']}, not {src.uri}")
        if zoning is None:  # refresh: the committed zoning, whoever committed last
            if base is None:
                raise IndexNotFoundError(f"{root}: no zone index here to refresh")
            zoning = base.zoning
        elif not overwrite:  # build: the version we commit on may be another writer's
            _check_compatible(base, root, src, zoning, names, settings)
        listing = src.list()
        schema = base.schema if base is not None else _source_schema(src, listing)
        columns = dict(base.columns) if base is not None else {}
        for n in names:
            if n not in columns:
                columns[n] = _new_column(n, len(columns), schema, src, listing, settings)
        fragments = _fragments(root, base)
        by_path = {p: row for p, row in fragments.items()}
        keep: list[dict[str, Any]] = []
        todo: list[tuple[SourceFile, tuple[str, ...], int | None]] = []
        new_cols = tuple(n for n in columns if base is None or n not in base.columns)
        for f in listing:
            old = by_path.get(f.path)
            if old is not None and (old["size"], old["mtime_ns"]) == (f.size, f.mtime_ns):
                keep.append(old)
                if new_cols:
                    todo.append((f, new_cols, old["fragment_id"]))
            else:
                todo.append((f, tuple(columns), None))
        pending = [(f, cols) for f, cols, _ in todo if (f.identity, cols) not in done]
        if pending:
            by_cols: dict[tuple[str, ...], list[SourceFile]] = {}
            for f, cols in pending:
                by_cols.setdefault(cols, []).append(f)
            for cols, files in by_cols.items():
                specs = [columns[c] for c in cols]
                for fz in run(src, files, specs, zoning):
                    done[(fz.file.identity, cols)] = fz
        report = BuildReport(root, next_version, list(columns), files_listed=len(listing))
        next_id = base.next_fragment_id if base is not None else 0
        propose = getattr(src, "fragment_id_of", None)  # Lance: keep Lance's fragment ids
        new_rows: list[dict[str, Any]] = []
        work: list[tuple[FileZones, int]] = []
        for f, cols, fid in todo:
            fz = done[(f.identity, cols)]
            if fz.error is not None:  # an unchanged file keeps its fragment and old columns
                report.failed.append((src.uri_of(f.path), fz.error))
                continue
            for cz in fz.columns.values():
                if cz.error is not None:
                    report.failed.append((src.uri_of(f.path), cz.error))
            if fid is None:
                want = propose(f.path) if propose is not None else None
                fid = want if want is not None and want >= next_id else next_id
                next_id = fid + 1  # ids are never reused: old segments may hold old ones
                new_rows.append(
                    {
                        "fragment_id": fid,
                        "path": f.path,
                        "size": f.size,
                        "mtime_ns": f.mtime_ns,
                        "num_rows": fz.num_rows,
                        "format": fz.format,
                    }
                )
            work.append((fz, fid))
        live_rows = keep + new_rows
        live = {r["fragment_id"] for r in live_rows}
        report.files_indexed = len(new_rows)
        report.files_unchanged = len(keep)
        report.files_dropped = len(fragments) - len(keep)
        frag_rel = store.new_name("fragments", ".parquet")
        report.bytes_written += store.write_table(root, frag_rel, _fragment_table(live_rows))
        out_cols = {}
        for name, col in columns.items():
            out_cols[name] = _write_segment(root, col, zoning, work, live, report)
        manifest = Manifest(
            version=next_version,
            source=src.to_json(),
            zoning=zoning,
            schema=schema,
            fragments=frag_rel,
            next_fragment_id=next_id,
            columns=out_cols,
        )
        try:
            store.publish(root, manifest)
        except CommitConflictError:
            if attempt == COMMIT_RETRIES:
                raise
            continue
        report.retries = attempt
        report.seconds = time.perf_counter() - t0
        return report
    raise AssertionError("unreachable")  # pragma: no cover


def _thread_pool(threads: int | None, progress: bool | None):
    def run(src: Source, files: list[SourceFile], cols: list[ColumnIndex], zoning: Zoning):
        show = sys.stderr.isatty() if progress is None else progress
        workers = threads or min(32, os.cpu_count() or 1)
        with (
            ThreadPoolExecutor(max_workers=workers) as pool,
            progress_bar(len(files), "indexing", "file", show=show) as bar,
        ):
            futures = [pool.submit(index_file, src, f, cols, zoning) for f in files]
            for fut in futures:
                yield fut.result()
                bar.update(1)

    return run


def _source_schema(src: Source, listing: list[SourceFile]) -> pa.Schema:
    """The Arrow schema of the first readable file of the source (or the source's own,
    for sources that have one: Lance datasets)."""
    own = getattr(src, "arrow_schema", None)
    if own is not None:
        return own()
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    errors = []
    for f in listing[:20]:
        try:
            with src.open(f.path) as fh:
                head = fh.read(4)
                fh.seek(0)
                if head == b"PAR1":
                    return pq.ParquetFile(fh).schema_arrow
                if head[:3] == b"ORC":
                    return orc.ORCFile(fh).schema
                errors.append(f"{f.path}: not Parquet or ORC")
        except (OSError, pa.ArrowException, BloomskipError) as e:
            errors.append(f"{f.path}: {e}")
    detail = f" ({'; '.join(errors[:3])})" if errors else ""
    raise SourceError(f"{src.uri}: no readable Parquet or ORC file to take a schema from{detail}")


def _new_column(
    name: str,
    position: int,
    schema: pa.Schema,
    src: Source,
    listing: list[SourceFile],
    settings: dict[str, Any],
) -> ColumnIndex:
    idx = schema.get_field_index(name)
    if idx < 0:
        raise InvalidParameterError(
            f"{src.uri} has no column {name!r}; columns are: {', '.join(schema.names[:30])}"
        )
    t = schema.field(idx).type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_nested(t):
        raise UnsupportedTypeError(f"{name} is {t}: only non-nested columns can be indexed")
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        t = pa.string()
    elif pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        t = pa.binary()
    physical = None
    if settings["encoding"] == "parquet":
        physical = _parquet_physical(name, t, src, listing)
    return ColumnIndex(
        name=name,
        directory=column_directory(position, name),
        arrow_type=t,
        physical=physical,
        encoding=settings["encoding"],
        sizing=settings["sizing"],
        fpp=settings["fpp"],
        file_filters=settings["ff"],
    )


def _parquet_physical(name: str, t: pa.DataType, src: Source, listing: list[SourceFile]):
    """The physical encoding the first Parquet file stores ``name`` with (so zone filters
    equal that writer's filters), else the default Parquet encoding of its Arrow type."""
    from bloomskip.parquet.footer import read_footer
    from bloomskip.parquet.schema import column_type

    for f in listing[:20]:
        try:
            with src.open(f.path) as fh:
                if fh.read(4) != b"PAR1":
                    break
                fh.seek(0)
                ctype = column_type(read_footer(fh, name=f.path).leaf(name))
            if ctype.spec is not None and ctype.arrow_type == t:
                return ctype.spec
            break
        except (OSError, BloomskipError, KeyError):
            continue
    try:
        return parquet_spec(t)
    except UnsupportedTypeError as e:
        raise UnsupportedTypeError(f"{name}: {e}") from None


def _fragments(root: str, base: Manifest | None) -> dict[str, dict[str, Any]]:
    if base is None or base.fragments is None:
        return {}
    t = store.read_table(root, base.fragments)
    return {r["path"]: r for r in t.to_pylist()}


def _fragment_table(rows: list[dict[str, Any]]) -> pa.Table:
    rows = sorted(rows, key=lambda r: r["fragment_id"])
    return pa.Table.from_pylist(rows, schema=FRAGMENT_SCHEMA)


# ----------------------------------------------------------------------------- writing


def _write_segment(
    root: str,
    col: ColumnIndex,
    zoning: Zoning,
    work: list[tuple[FileZones, int]],
    live: set[int],
    report: BuildReport,
) -> ColumnIndex:
    zones, files = [], []
    for fz, fid in work:
        cz = fz.columns.get(col.name)
        if cz is None or cz.error is not None:
            continue
        zones.append(fz.zone_table(col.name, fid))
        files.append(fz.file_table(col.name, fid))
    segments = col.segments
    if zones:
        seg = _segment(root, col, zoning, zones, files)
        segments = (*segments, seg)
        report.zones_written += seg.num_zones
        report.bytes_written += seg.zone_bytes + seg.file_bytes
    if len(segments) > MAX_SEGMENTS:
        segments = (_compact(root, col, zoning, segments, live),)
    return col.with_segments(segments)


def _segment(
    root: str, col: ColumnIndex, zoning: Zoning, zones: list[pa.Table], files: list[pa.Table]
) -> Segment:
    meta = zone_metadata(col, zoning)
    zt = pa.concat_tables(zones).replace_schema_metadata(meta)
    ft = pa.concat_tables(files).replace_schema_metadata(meta)
    base = store.new_name(col.directory, "")
    zrel, frel = f"{base}.zones.parquet", f"{base}.files.parquet"
    store.write_table(root, zrel, zt)
    store.write_table(root, frel, ft)
    return Segment(
        zones=zrel,
        files=frel,
        num_fragments=len(set(np.asarray(ft.column("fragment_id")).tolist()))
        if ft.num_rows
        else len(set(np.asarray(zt.column("fragment_id")).tolist())),
        num_zones=zt.num_rows,
        zone_bytes=_filter_bytes(zt),
        file_bytes=_filter_bytes(ft),
    )


def _compact(
    root: str, col: ColumnIndex, zoning: Zoning, segments: tuple[Segment, ...], live: set[int]
) -> Segment:
    """One segment holding the live rows of ``segments`` (dropped files' zones go)."""
    keep = pa.array(sorted(live), type=pa.uint64())
    zones, files = [], []
    for s in segments:
        for rel, out in ((s.zones, zones), (s.files, files)):
            t = store.read_table(root, rel)
            out.append(t.filter(pc.is_in(t.column("fragment_id"), value_set=keep)))
    zones = [t.cast(ZONE_SCHEMA) for t in zones]
    files = [t.cast(FILE_SCHEMA) for t in files]
    return _segment(root, col, zoning, zones, files)


def _filter_bytes(t: pa.Table) -> int:
    if t.num_rows == 0:
        return 0
    return int(pc.sum(pc.binary_length(t.column("bloom_filter_data"))).as_py())
