"""Zones as Arrow rows: what an index task returns to the driver, and back.

A Spark task runs :func:`bloomskip.index.zones.index_file` on its files and returns each
:class:`~bloomskip.index.zones.FileZones` as rows of :data:`WIRE_SCHEMA` (a few Arrow
batches per file); the driver turns the collected rows back into the same ``FileZones``
(:func:`decode`), so the local engine's commit writes the same bytes either way.

Rows, told apart by ``column`` and ``zone``:

* ``column = -1``: the file - its ``format``, ``num_rows`` and ``error``;
* ``zone = -1``: a column of the file - its ``error``, and the file-level filter in
  ``bloom`` (null without one) with ``ndv`` and ``has_null``;
* otherwise one zone - ``start``, ``length``, ``has_null``, ``ndv`` and its ``bloom``.

``file`` is the file's position in the job's file list and ``column`` the column's in
the job's column list: the driver knows both lists, so no path travels.

:func:`decode` trusts nothing it did not plan: a file with no rows, or with rows that do
not make one whole file (duplicated or missing zones, zones that do not tile its rows),
comes back with an ``error`` - an unindexed file, which every query keeps as a
candidate. Spark keeps one successful attempt per task, so that should never happen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.index.zones import ColumnZones, FileZones
from bloomskip.sources import SourceFile

WIRE_SCHEMA = pa.schema(
    [
        ("file", pa.int64()),
        ("column", pa.int32()),
        ("zone", pa.int32()),
        ("format", pa.string()),
        ("num_rows", pa.int64()),
        ("error", pa.string()),
        ("start", pa.int64()),
        ("length", pa.int64()),
        ("has_null", pa.bool_()),
        ("ndv", pa.int64()),
        ("bloom", pa.binary()),
    ]
)
#: Zone rows per batch hold at most this many bytes of filters (int32 offsets).
_BATCH_BYTES = 64 << 20


def encode(fz: FileZones, position: int, columns: Sequence[str]) -> list[pa.RecordBatch]:
    """One file's zones as batches of :data:`WIRE_SCHEMA` rows: the file and column rows
    first, then the zones in batches of at most 64 MiB of filters."""
    heads = [
        _rows(
            position,
            -1,
            np.array([-1], np.int32),
            format=fz.format,
            num_rows=fz.num_rows,
            error=fz.error,
        )
    ]
    zones = []
    for j, name in enumerate(columns):
        cz = fz.columns.get(name)
        if cz is None:
            continue
        heads.append(
            _rows(
                position,
                j,
                np.array([-1], np.int32),
                error=cz.error,
                has_null=np.array([cz.file_has_null]),
                ndv=np.array([cz.file_ndv], np.int64),
                bloom=pa.array([cz.file_filter], pa.binary()),
            )
        )
        off = cz.offsets.astype(np.int64)
        a, z = 0, cz.num_zones
        while a < z:  # at least one zone per batch, then as many as fit
            b = int(np.searchsorted(off, off[a] + _BATCH_BYTES, side="right")) - 1
            b = min(max(b, a + 1), z)
            rel = off[a : b + 1] - off[a]
            bloom = pa.Array.from_buffers(
                pa.binary(),
                b - a,
                [None, pa.py_buffer(rel.astype(np.int32)), pa.py_buffer(cz.data[off[a] : off[b]])],
            )
            zones.append(
                _rows(
                    position,
                    j,
                    np.arange(a, b, dtype=np.int32),
                    start=cz.zone_start[a:b].astype(np.int64),
                    length=cz.zone_length[a:b].astype(np.int64),
                    has_null=cz.has_null[a:b],
                    ndv=cz.ndv[a:b].astype(np.int64),
                    bloom=bloom,
                )
            )
            a = b
    head = pa.Table.from_batches(heads, WIRE_SCHEMA).combine_chunks().to_batches()[0]
    return [head, *zones]


def _rows(position: int, column: int, zone: np.ndarray, **values) -> pa.RecordBatch:
    n = zone.shape[0]
    arrays = []
    for f in WIRE_SCHEMA:
        if f.name == "file":
            arrays.append(pa.array(np.full(n, position, np.int64)))
        elif f.name == "column":
            arrays.append(pa.array(np.full(n, column, np.int32)))
        elif f.name == "zone":
            arrays.append(pa.array(zone))
        elif f.name in values and values[f.name] is not None:
            v = values[f.name]
            arrays.append(v if isinstance(v, pa.Array) else pa.array(np.atleast_1d(v), f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=WIRE_SCHEMA)


def decode(
    table: pa.Table, files: Sequence[SourceFile], columns: Sequence[str], *, tiled: bool = True
) -> list[FileZones]:
    """The :class:`FileZones` of every file in ``files`` from the rows the tasks returned.

    ``tiled``: zones must cover each file's rows exactly (files of a file source; a Lance
    fragment's zones may skip deleted rows).
    """
    table = table.select(WIRE_SCHEMA.names).cast(WIRE_SCHEMA)
    file_col = table.column("file").to_numpy()
    order = np.argsort(file_col, kind="stable")  # a task hands over each file's rows in one run
    bounds = np.searchsorted(file_col[order], np.arange(len(files) + 1), side="left")
    out = []
    for i, f in enumerate(files):
        a, b = int(bounds[i]), int(bounds[i + 1])
        if a == b:
            out.append(FileZones(f, "unknown", 0, error="its Spark task returned nothing"))
            continue
        try:
            out.append(_file(_rows_of(table, order[a:b]), f, columns, tiled))
        except _Inconsistent as e:
            out.append(FileZones(f, "unknown", 0, error=f"inconsistent task output: {e}"))
    return out


def _rows_of(table: pa.Table, idx: np.ndarray) -> pa.Table:
    """The rows ``idx`` of ``table``, sorted by (column, zone): a zero-copy slice when
    they are one run, as tasks write them (a take over every row would copy all the
    filters for each file, and could overflow int32 offsets)."""
    first = int(idx[0])
    if int(idx[-1]) - first + 1 == idx.shape[0]:
        rows = table.slice(first, idx.shape[0])
    else:
        rows = table.take(pa.array(idx))
    key = (rows.column("column").to_numpy().astype(np.int64) + 1) << 32
    key += rows.column("zone").to_numpy().astype(np.int64) + 1  # -1: the head rows
    if np.any(key[1:] < key[:-1]):
        rows = rows.take(pa.array(np.argsort(key, kind="stable")))
    return rows.combine_chunks()


class _Inconsistent(Exception):
    pass


def _file(rows: pa.Table, f: SourceFile, columns: Sequence[str], tiled: bool) -> FileZones:
    col = rows.column("column").to_numpy()
    zone = rows.column("zone").to_numpy()
    heads = np.flatnonzero(col == -1)
    if heads.shape[0] != 1:
        raise _Inconsistent(f"{heads.shape[0]} file rows")
    head = rows.slice(int(heads[0]), 1).to_pylist()[0]
    fz = FileZones(f, head["format"], int(head["num_rows"]), error=head["error"])
    if fz.error is not None:
        return fz
    bounds = np.searchsorted(col, np.arange(len(columns) + 1), side="left")
    for j, name in enumerate(columns):
        a, b = int(bounds[j]), int(bounds[j + 1])
        if a == b:
            raise _Inconsistent(f"no rows for column {name}")
        if zone[a] != -1 or (b - a > 1 and zone[a + 1] == -1):
            raise _Inconsistent(f"{name}: not exactly one column row")
        if not np.array_equal(zone[a + 1 : b], np.arange(b - a - 1)):
            raise _Inconsistent(f"{name}: zones are duplicated or missing")
        fz.columns[name] = _column(rows.slice(a, b - a), fz.num_rows, tiled, name)
    return fz


def _column(rows: pa.Table, num_rows: int, tiled: bool, name: str) -> ColumnZones:
    head = rows.slice(0, 1).to_pylist()[0]
    zones = rows.slice(1)
    z = zones.num_rows
    start = _u64(zones, "start")
    length = _u64(zones, "length")
    if head["error"] is None and tiled:
        ends = start + length
        if z and (start[0] != 0 or int(ends[-1]) != num_rows or np.any(start[1:] != ends[:-1])):
            raise _Inconsistent(f"{name}: zones do not cover the file's {num_rows} rows")
        if not z and num_rows:
            raise _Inconsistent(f"{name}: no zones for {num_rows} rows")
    bloom = zones.column("bloom").combine_chunks() if z else pa.array([], pa.binary())
    if z and bloom.null_count:
        raise _Inconsistent(f"{name}: a zone without a filter")
    if z:
        offs = np.frombuffer(bloom.buffers()[1], np.int32)[bloom.offset : bloom.offset + z + 1]
        data = np.frombuffer(bloom.buffers()[2], np.uint8)[offs[0] : offs[-1]].copy()
        offsets = (offs - offs[0]).astype(np.int64)
    else:
        data, offsets = np.zeros(0, np.uint8), np.zeros(1, np.int64)
    has_null = zones.column("has_null")
    return ColumnZones(
        zone_start=start,
        zone_length=length,
        has_null=pc.fill_null(has_null, True).to_numpy(zero_copy_only=False).astype(np.bool_),
        ndv=_u64(zones, "ndv"),
        data=data,
        offsets=offsets,
        file_filter=head["bloom"],
        file_ndv=int(head["ndv"] or 0),
        file_has_null=bool(head["has_null"]) if head["has_null"] is not None else True,
        error=head["error"],
    )


def _u64(t: pa.Table, name: str) -> np.ndarray:
    c = t.column(name)
    if c.null_count:
        raise _Inconsistent(f"null {name}")
    return c.to_numpy().astype(np.uint64)


__all__ = ["WIRE_SCHEMA", "decode", "encode"]
