"""Values -> zones: the per-file builder shared by the local engine and Spark tasks.

:func:`index_file` reads the indexed columns of one Parquet or ORC file with pyarrow and
returns a :class:`FileZones`: per column, the zones (row ranges of the file), whether each
holds a null, its distinct count, and its SBBF, plus one file-level filter. It is a pure
function of the file's content and the index settings, so a Spark task and the local
thread pool produce the same bytes.

Rules (``zone-index.md``):

* zones never cross files; with ``align="row_groups"`` they never cross Parquet row
  groups or ORC stripes either (a long group is cut every ``zone_rows`` rows); a source
  that is not files (a Lance dataset) hands over the row offset of each value, and a
  zone then spans its first to its last row's offset, gaps included, as Lance's do;
* nulls only set ``has_null``; every non-null value is hashed (xxHash64, seed 0) as the
  column's *index encoding* says - Parquet PLAIN bytes of its physical type by default,
  so a zone filter equals the filter a Parquet writer would store for those rows;
* ``sizing="putze"``: every zone gets the size Putze's formula gives ``zone_rows``
  values at the target FPP (Lance's rule); ``"exact"``: each zone is sized for its own
  distinct count. File filters are always sized for the file's distinct count;
* a value that does not cast exactly to the index's type (a file whose column changed
  type) leaves that column of that file unindexed - always a candidate - with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip._lazy import lazy
from bloomskip.errors import BloomskipError, NotDataFileError, SourceChangedError
from bloomskip.hashing import hash_values
from bloomskip.index.layout import FILE_SCHEMA, NOT_DATA, ZONE_SCHEMA, ColumnIndex, Zoning
from bloomskip.sbbf import build_filter
from bloomskip.sbbf.filter import odd_multiplier
from bloomskip.sbbf.sizing import putze_num_bytes
from bloomskip.sources.base import Source, SourceFile

kernels = lazy("bloomskip.index.kernels")
sbbf_kernels = lazy("bloomskip.sbbf.kernels")

_MAX_CHUNK_BYTES = 1 << 30  # binary arrays use int32 offsets


@dataclass
class ColumnZones:
    """One column of one file: its zones and file filter, or why it is not indexed."""

    zone_start: np.ndarray  # uint64
    zone_length: np.ndarray  # uint64
    has_null: np.ndarray  # bool
    # uint64, distinct non-null values: counted exactly under sizing "exact"; under
    # "putze" the values that set a bit of the filter as it filled, which leaves out
    # those a filling filter already answered "may" for (7 in a million at the default FPP)
    # and saves a hash set per zone. 0 exactly when the zone holds no value.
    ndv: np.ndarray
    data: np.ndarray  # uint8: every zone's bitset, back to back
    offsets: np.ndarray  # int64, len zones + 1: byte offsets into data
    file_filter: bytes | None
    file_ndv: int
    file_has_null: bool
    error: str | None = None

    @property
    def num_zones(self) -> int:
        return int(self.zone_start.shape[0])


@dataclass
class FileZones:
    """Everything an index keeps of one file, before it has a fragment id."""

    file: SourceFile
    format: str
    num_rows: int
    columns: dict[str, ColumnZones] = field(default_factory=dict)
    error: str | None = None  # the file could not be indexed at all

    def zone_table(self, column: str, fragment_id: int) -> pa.Table:
        c = self.columns[column]
        n = c.num_zones
        return pa.Table.from_arrays(
            [
                pa.array(np.full(n, fragment_id, dtype=np.uint64)),
                pa.array(c.zone_start),
                pa.array(c.zone_length),
                pa.array(c.has_null),
                _binary(c.data, c.offsets),
                pa.array(c.ndv),
            ],
            schema=ZONE_SCHEMA,
        )

    def file_table(self, column: str, fragment_id: int) -> pa.Table:
        c = self.columns[column]
        if c.file_filter is None:
            return FILE_SCHEMA.empty_table()
        return pa.Table.from_pydict(
            {
                "fragment_id": [fragment_id],
                "num_rows": [self.num_rows],
                "has_null": [c.file_has_null],
                "ndv": [c.file_ndv],
                "bloom_filter_data": [c.file_filter],
            },
            schema=FILE_SCHEMA,
        )


def zone_bounds(num_rows: int, zone_rows: int, groups: Sequence[int] | None) -> np.ndarray:
    """Row offsets where zones start, plus ``num_rows``: every ``zone_rows`` rows, and at
    each group start when ``groups`` (row counts of row groups / stripes) is given."""
    cuts: list[np.ndarray] = []
    start = 0
    for n in groups if groups is not None else [num_rows]:
        cuts.append(np.arange(start, start + n, zone_rows, dtype=np.int64))
        start += n
    if start != num_rows:
        raise BloomskipError(f"row groups hold {start} rows, the file {num_rows}")
    out = np.concatenate([*cuts, np.array([num_rows], dtype=np.int64)])
    return out


def index_file(
    source: Source, file: SourceFile, columns: Sequence[ColumnIndex], zoning: Zoning
) -> FileZones:
    """Read ``file`` and build its zones for ``columns``; failures are returned, not raised."""
    try:
        got = source.read_for_index(file, [c.name for c in columns])
    except SourceChangedError as e:
        return FileZones(file, "unknown", 0, error=str(e))
    except NotDataFileError:  # no reader reads a row of it: indexed as empty
        return FileZones(file, NOT_DATA, 0)
    except (BloomskipError, OSError, pa.ArrowException, ValueError) as e:
        return FileZones(file, "unknown", 0, error=f"cannot read: {e}")
    table, row_offsets = got.table, got.row_offsets
    groups = got.groups if zoning.align != "rows" else None
    bounds = zone_bounds(table.num_rows, zoning.zone_rows, groups)
    out = FileZones(file, got.format, table.num_rows if row_offsets is None else file.size)
    for col in columns:
        if col.name.casefold() in got.shadowed:
            why = "a partition directory names this column: readers take its value there"
            out.columns[col.name] = _failed(f"{col.name}: {why}, not the file's")
            continue
        if col.name in got.doubts:
            out.columns[col.name] = _failed(f"{col.name}: {got.doubts[col.name]}")
            continue
        if col.name in got.microseconds and not col.read_at_microseconds:
            why = "INT96 here, read at microseconds by DuckDB and Spark"
            out.columns[col.name] = _failed(f"{col.name}: {why}; indexed as {col.physical_name}")
            continue
        out.columns[col.name] = _column_zones(
            table.column(col.name), col, zoning, bounds, row_offsets
        )
    return out


def _column_zones(
    arr: pa.ChunkedArray,
    col: ColumnIndex,
    zoning: Zoning,
    bounds: np.ndarray,
    row_offsets: np.ndarray | None = None,
) -> ColumnZones:
    """Zones of one column cut at ``bounds`` (positions in ``arr``). With ``row_offsets``
    (the row offset of each value; a Lance fragment's live rows) a zone starts at its
    first row's offset and spans to its last row's, gaps included, as Lance's do."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if pa.types.is_null(arr.type):  # only nulls (pandas writes an all-None column so)
        arr = pa.chunked_array([pa.nulls(len(arr), col.arrow_type)], col.arrow_type)
    if arr.type != col.arrow_type:
        if not same_kind(arr.type, col.arrow_type):
            why = f"{arr.type} is not compared as {col.arrow_type} is (the index's type)"
            return _failed(f"{col.name}: {why}")
        try:
            arr = arr.cast(col.arrow_type, safe=True)
        except (pa.ArrowException, ValueError) as e:
            why = f"{arr.type} does not convert exactly to {col.arrow_type}: {e}"
            return _failed(f"{col.name}: {why}")
    try:
        hashes = hash_values(arr, physical=col.physical, encoding=col.encoding)
    except BloomskipError as e:
        return _failed(f"{col.name}: {e}")
    hashes = np.ascontiguousarray(hashes, np.uint64)
    if arr.null_count:
        valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
        nonnull = np.concatenate([[0], np.cumsum(valid, dtype=np.int64)])[bounds]
    else:
        nonnull = bounds.copy()
    lengths = np.diff(bounds)
    counts = np.diff(nonnull)
    z = lengths.shape[0]
    ndv = np.zeros(z, dtype=np.uint64)
    if col.sizing == "exact":  # each zone sized for its distinct count: counted first
        sbbf_kernels.count_runs(hashes, nonnull, ndv, odd_multiplier())
        sizes = np.array([putze_num_bytes(int(n), col.fpp) for n in ndv], dtype=np.int64)
    else:  # one size: the filter counts what it holds as it fills (see ColumnZones.ndv)
        sizes = np.full(z, putze_num_bytes(zoning.zone_rows, col.fpp), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    words = np.zeros(int(offsets[-1]) // 4, dtype=np.uint32)
    if col.sizing == "exact":
        kernels.insert_runs(words, offsets[:-1] // 4, sizes // 4, hashes, nonnull)
    else:
        kernels.insert_runs_counting(words, offsets[:-1] // 4, sizes // 4, hashes, nonnull, ndv)
    file_filter, file_ndv = None, 0  # 0: not counted without a file filter
    if col.file_filters:
        ff, file_ndv = build_filter(hashes, col.fpp, "putze")
        file_filter = ff.to_bytes()
    starts, spans = bounds[:-1], lengths
    if row_offsets is not None and z:
        starts = row_offsets[bounds[:-1]]
        spans = row_offsets[bounds[1:] - 1] - starts + 1
    return ColumnZones(
        zone_start=starts.astype(np.uint64),
        zone_length=spans.astype(np.uint64),
        has_null=counts < lengths,
        ndv=ndv,
        data=words.view(np.uint8),
        offsets=offsets,
        file_filter=file_filter,
        file_ndv=file_ndv,
        file_has_null=bool(arr.null_count),
    )


_KINDS = (
    pa.types.is_integer,  # any width and sign: values convert exactly or not at all
    pa.types.is_decimal,
    lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t),
    lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t),
    pa.types.is_date,
    pa.types.is_time,
)


def same_kind(found: pa.DataType, indexed: pa.DataType) -> bool:
    """May a file's column of type ``found`` be cast to the index's ``indexed`` and
    answered as such? Only when every reader compares both types' values alike, so a
    literal converted for ``indexed`` matches what it matches in ``found``: integers of any
    width, decimals of any scale (both up to 38 digits, or both wider), the string and the
    binary types, dates, times; and timestamps, both with a time zone or both without.
    Never across kinds: a DOUBLE 100.0 read as the string "100" misses ``c = '100.0'``, a
    DOUBLE 1.0 read as a BIGINT misses
    ``c = 1.0000000000000001`` (equal as doubles), a FLOAT 0.1 read as a DOUBLE misses
    ``c = 0.1`` (equal as floats) - DuckDB compares each file in its own type."""
    if pa.types.is_timestamp(found) and pa.types.is_timestamp(indexed):
        return (found.tz is None) == (indexed.tz is None)
    if pa.types.is_decimal(found) and pa.types.is_decimal(indexed):  # DuckDB reads one
        return (found.precision > 38) == (indexed.precision > 38)  # wider than 38 as DOUBLE
    return any(k(found) and k(indexed) for k in _KINDS)


def _failed(reason: str) -> ColumnZones:
    e64, eb = np.zeros(0, np.uint64), np.zeros(0, np.bool_)
    return ColumnZones(
        e64, e64, eb, e64, np.zeros(0, np.uint8), np.zeros(1, np.int64), None, 0, True, reason
    )


def _binary(data: np.ndarray, offsets: np.ndarray) -> pa.ChunkedArray:
    """A binary column over back-to-back bitsets, split so int32 offsets never overflow."""
    chunks = []
    n = offsets.shape[0] - 1
    i = 0
    while i < n:
        j = i + 1
        while j < n and offsets[j + 1] - offsets[i] <= _MAX_CHUNK_BYTES:
            j += 1
        off = (offsets[i : j + 1] - offsets[i]).astype(np.int32)
        body = data[offsets[i] : offsets[j]]
        chunks.append(
            pa.Array.from_buffers(pa.binary(), j - i, [None, pa.py_buffer(off), pa.py_buffer(body)])
        )
        i = j
    return pa.chunked_array(chunks, type=pa.binary())
