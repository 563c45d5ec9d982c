"""Reading one candidate file of the ``bloomskip`` data source: only the units (Parquet row
groups, ORC stripes) that overlap its candidate zones, then only the rows inside them, as
Arrow batches of exactly the declared Spark schema.

A file whose size or modification time changed since it was indexed is read in full: the
zones' row offsets no longer apply to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql import types as st

from bloomskip import formats
from bloomskip.errors import (
    CorruptFileError,
    SourceError,
    UnsupportedFileError,
    UnsupportedTypeError,
)
from bloomskip.formats.base import JVM_CLOCK_KEY
from bloomskip.formats.ranges import merge_ranges
from bloomskip.formats.ranges import overlap as _overlap
from bloomskip.objstore import filesystem
from bloomskip.sources.base import same_identity
from bloomskip.sources.files import FileSource, hive_pairs
from bloomskip.spark.types import match_column


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    if "://" in uri and not uri.startswith("file://"):
        return filesystem(uri)
    return pafs.LocalFileSystem(), uri.removeprefix("file://")


def read_file(
    uri: str,
    zones: Sequence[tuple[int, int]] | None,
    identity: tuple[int, int, str | None] | None,
    schema: st.StructType,
    keep: RowKeeper | None = None,
    values: Sequence[tuple[str, str | None]] = (),
    jvm_zone: str | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of the file ``uri`` inside ``zones`` ((start, length) row ranges; None:
    every row), as batches of ``schema``; with ``keep``, only those it may want.
    ``identity`` is the file's (size, mtime_ns, etag) when indexed: if it changed, every
    row is read. ``values``: the file's partition values (:func:`partition_values`),
    which a declared column takes, as Spark's reader gives them (even over a column of
    the same name in the file; ``keep`` then does not judge rows by the file's).
    ``jvm_zone``: the time zone in which Spark's readers take an ORC TIMESTAMP's wall
    clock (their JVM's default; :func:`conform`)."""
    target = spark_arrow_schema(schema)
    keys = [k for k, _ in values]
    if keep is not None and any(match_column(c, keys) is not None for c in keep.needs):
        keep = None
    for table, columns in read_tables(uri, zones, identity, target.names, keep):
        yield conform(table, target, columns, uri, values, jvm_zone)


def partition_values(uri: str, roots: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    """The ``key=value`` directories between the root that holds ``uri`` and the file, as
    Spark's reader discovers partitions under the path it loads
    (:func:`bloomskip.sources.files.hive_pairs`)."""
    for root in roots:
        base = root.rstrip("/") + "/"
        if uri.startswith(base):
            return hive_pairs(uri[len(base) :])
    return ()


def file_identity(uri: str) -> tuple[int, int, str | None] | None:
    """The file's (size, mtime_ns, etag) now, as an index records it (None: no file)."""
    now = FileSource.resolve([uri], single=True).stat(_filesystem(uri)[1])
    return None if now is None else (now.size, now.mtime_ns, now.etag)


def spark_arrow_schema(schema: st.StructType) -> pa.Schema:
    """The Arrow schema Spark takes batches of ``schema`` in."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


class RowKeeper(Protocol):
    """Which rows of a table may be wanted (:class:`bloomskip.index.rows.RowFilter`)."""

    @property
    def needs(self) -> list[str]: ...

    def may(self, table: pa.Table) -> np.ndarray: ...


def read_tables(
    uri: str,
    zones: Sequence[tuple[int, int]] | None,
    identity: tuple[int, int, str | None] | None,
    fields: Sequence[str],
    keep: RowKeeper | None = None,
) -> Iterator[tuple[pa.Table, dict[str, str | None]]]:
    """The rows of ``uri`` inside ``zones`` (as :func:`read_file`), a table per unit, as
    the file holds them: the file's columns matching ``fields`` (Spark's names), each
    with ``fields`` -> file column (None: not in it). With ``keep``, only the rows it may
    want: the columns it needs are read first, and the others of a unit only when one
    of its rows is kept. A column the file stores as an ORC TIMESTAMP (a wall clock) is
    marked (:data:`~bloomskip.formats.base.JVM_CLOCK_KEY`)."""
    fs, path = _filesystem(uri)
    if zones is not None and identity is not None:
        now = file_identity(uri)
        if now is None or not same_identity(identity, now):
            zones = None  # rewritten since it was indexed: offsets no longer apply
    try:
        fh = fs.open_input_file(path)
    except (OSError, ValueError) as e:
        raise SourceError(f"{uri}: cannot open: {e}") from e
    with fh:
        try:
            reader = formats.open_reader(fh, uri, spark_values=True)
        except UnsupportedFileError as e:
            raise CorruptFileError(str(e)) from e
        counts, names = reader.unit_rows, reader.schema.names
        clocks = reader.jvm_clock_columns()
        columns = {f: match_column(f, names) for f in fields}
        wanted = sorted({c for c in columns.values() if c is not None}, key=names.index)
        first = [c for c in names if keep is not None and c in keep.needs]
        rest = [c for c in wanted if c not in first]
        ranges = None if zones is None else merge_ranges(zones)

        def read(i: int, cols: list[str], local: list[tuple[int, int]], n: int) -> pa.Table:
            try:  # no column: read one to count rows (ORC returns none for [])
                table = reader.read_unit(i, cols or names[:1])
            except pa.ArrowInvalid as e:
                if "out of range" in str(e):  # ORC timestamps before 1677 or after 2262
                    raise UnsupportedFileError(
                        f"{uri}: pyarrow cannot read row group {i} ({e}); Spark's own "
                        "reader can: read this file with it"
                    ) from e
                raise CorruptFileError(f"{uri}: cannot read row group {i}: {e}") from e
            except (OSError, pa.ArrowException) as e:
                raise CorruptFileError(f"{uri}: cannot read row group {i}: {e}") from e
            if local != [(0, n)]:
                table = pa.concat_tables([table.slice(a, b - a) for a, b in local])
            if clocks & set(cols):
                table = _mark_clocks(table, clocks)
            return table if cols else table.select([])

        start = 0
        for i, n in enumerate(counts):
            local = [(0, n)] if ranges is None else _overlap(ranges, start, start + n)
            start += n
            if not local:
                continue
            if keep is None:
                table = read(i, wanted, local, n)
            else:
                table = read(i, first, local, n)
                may = keep.may(table)
                if not may.any():
                    continue
                if rest:
                    more = read(i, rest, local, n)
                    for c in rest:
                        table = table.append_column(more.schema.field(c), more.column(c))
                table = table.filter(pa.array(may))
            if table.num_rows:
                yield table, columns


def _mark_clocks(table: pa.Table, clocks: frozenset[str]) -> pa.Table:
    fields = [
        f.with_metadata({**(f.metadata or {}), JVM_CLOCK_KEY: b"true"}) if f.name in clocks else f
        for f in table.schema
    ]
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields, table.schema.metadata))


def conform(
    table: pa.Table,
    target: pa.Schema,
    columns: dict[str, str | None],
    label: str,
    values: Sequence[tuple[str, str | None]] = (),
    jvm_zone: str | None = None,
) -> pa.RecordBatch:
    """``table`` as one batch of exactly ``target`` (Spark checks types and widths); a
    column a partition directory names is its value there (``values``), as Spark's reader
    takes it even when the file holds the column; one the file lacks too is nulls. A
    marked ORC TIMESTAMP column declared ``timestamp`` is its wall clock in ``jvm_zone``,
    as Spark's ORC reader takes it (:func:`_jvm_instants`)."""
    table = table.combine_chunks()
    arrays = []
    keys = [k for k, _ in values]
    for f in target:
        name = columns[f.name]
        key = match_column(f.name, keys)
        if key is not None or name is None:  # its directory's value, or nulls
            value = None if key is None else dict(values)[key]
            arrays.append(_partition_column(value, f, table.num_rows, label))
            continue
        col = table.column(name)
        arr = col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks)
        what = f"{label}: column {name!r}"
        if JVM_CLOCK_KEY in (table.schema.field(name).metadata or {}):
            _near_epoch(arr, what)
            arr = _jvm_instants(arr, f.type, jvm_zone, what)
        arrays.append(_cast(arr, f.type, what))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _partition_column(value: str | None, f: pa.Field, n: int, label: str) -> pa.Array:
    """``n`` rows of a partition ``value`` as the declared type (Spark casts the
    directory's text to it); a value that does not convert is an error, not a null."""
    if value is None:
        return pa.nulls(n, f.type)
    if pa.types.is_timestamp(f.type):  # Spark reads it in the session's time zone
        raise UnsupportedTypeError(
            f"{label}: partition column {f.name!r} declared as a timestamp; declare it as a "
            "string (its directory's text), or read the lake with spark.read.parquet"
        )
    try:
        one = pa.array([value], pa.string()).cast(f.type)
    except (pa.ArrowException, ValueError) as e:
        raise UnsupportedTypeError(
            f"{label}: partition value {f.name}={value!r} is not a {f.type}: {e}"
        ) from None
    return pa.repeat(one[0], n) if n else pa.array([], f.type)


#: ORC TIMESTAMP wall clocks this close to 1970 with a fraction of a second: ORC's C++
#: writer and readers adjust negative seconds by one sign, ORC Java by another, and
#: pyarrow reads some a second away from Spark (a zone's offset from the epoch: 26 h at
#: most; :mod:`bloomskip.orc.prune` probes both seconds for the same reason).
_NEAR_EPOCH_S = 27 * 3600


def _near_epoch(arr: pa.Array, what: str) -> None:
    """Refuse ORC TIMESTAMP wall clocks ORC's readers read a second apart (above)."""
    if not pa.types.is_timestamp(arr.type) or arr.type.unit == "s":
        return
    per_second = {"ms": 10**3, "us": 10**6, "ns": 10**9}[arr.type.unit]
    walls = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    near = (np.abs(walls) < _NEAR_EPOCH_S * per_second) & (walls % per_second != 0)
    at = np.flatnonzero(near & arr.is_valid().to_numpy(zero_copy_only=False))
    if at.size:
        raise UnsupportedTypeError(
            f"{what}: {arr[int(at[0])].as_py()} is within a day of 1970 with a fraction of a "
            "second, where ORC's C++ reader (pyarrow's) and ORC Java may read a second "
            "apart: read this lake with Spark's reader (bloomskip.spark.plan_read)"
        )


def _jvm_instants(arr: pa.Array, t: pa.DataType, zone: str | None, what: str) -> pa.Array:
    """An ORC TIMESTAMP's wall clocks (``arr``, as pyarrow reads them) as the instants
    Spark's ORC reader makes of them for a column declared ``timestamp`` (``t``, with a
    zone): each wall clock in its JVM's default time zone ``zone``, by Java's rules
    (:func:`bloomskip.orc.zones.wall_instants`; pyarrow's own keep standard time after
    2037). A wall clock that names no instant there, or two (a daylight-saving change),
    is an error: which one Spark took cannot be known here. So is one before the zone's
    first change of offset (its local mean time, of odd seconds), where ORC's C++ reader,
    pyarrow's, and ORC Java disagree on the wall clock itself (Sao Paulo in 1909: by 6 min
    28 s). Declared ``timestamp_ntz``, the wall clocks stay."""
    if not (pa.types.is_timestamp(arr.type) and arr.type.tz is None):
        return arr
    if not (pa.types.is_timestamp(t) and t.tz is not None):
        return arr
    if zone is None:
        raise UnsupportedTypeError(
            f"{what}: an ORC TIMESTAMP declared timestamp is read in the JVM's default time "
            "zone, which is not known here: register the data source with "
            "bloomskip.spark.register(spark), give .option('jvmTimeZone', <zone>), or "
            "declare it timestamp_ntz"
        )
    from bloomskip.orc import zones

    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[arr.type.unit]
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    walls = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    instants, what_is, offsets = zones.wall_instants(walls, per_second, zone)
    after = f"in the JVM's time zone {zone}: read this lake with Spark's reader (plan_read)"
    first = zones.first_change_ms(zone)
    ancient = np.zeros(len(walls), np.bool_)
    if first is not None:  # before it, the local mean time: odd seconds of offset
        ms = instants // (per_second // 1000) if per_second >= 1000 else instants * 1000
        ancient = (ms < first) & (offsets % 60_000 != 0)
    for bad, why in [
        (what_is != zones.ONE, "names no instant or two (a daylight-saving change)"),
        (ancient, "is in its local mean time, where ORC readers disagree"),
    ]:
        at = np.flatnonzero(valid & bad)
        if at.size:
            raise UnsupportedTypeError(f"{what}: {arr[int(at[0])].as_py()} {why} {after}")
    mask = None if arr.null_count == 0 else ~valid
    return pa.array(instants, pa.int64(), mask=mask).cast(pa.timestamp(arr.type.unit, "UTC"))


def _cast(arr: pa.Array, t: pa.DataType, what: str) -> pa.Array:
    if arr.type == t:
        return arr
    # Timestamps finer than Spark's microseconds are truncated (the reader never pushes
    # equality on them); every other cast must be exact.
    safe = not (pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(t))
    if pa.types.is_timestamp(arr.type) and pa.types.is_date(t):
        # pyarrow's "safe" cast drops the time of day; Spark refuses such a file
        raise UnsupportedTypeError(
            f"{what}: {arr.type} does not convert to {t} (the time of day would be lost)"
        )
    try:
        return arr.cast(t, safe=safe)
    except (pa.ArrowException, ValueError) as e:
        raise UnsupportedTypeError(f"{what}: {arr.type} does not convert to {t}: {e}") from e


__all__ = [
    "conform",
    "file_identity",
    "merge_ranges",
    "partition_values",
    "read_file",
    "read_tables",
    "spark_arrow_schema",
]
