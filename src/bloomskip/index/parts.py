"""One indexing task: read a few files, cut them into zones, write their *parts*.

A task (a thread of the local engine, or a Spark task) indexes a group of files
(:func:`run_task`): :func:`~bloomskip.index.zones.index_file` each, then, per column,
it writes straight to the index's storage

* a serving part (``<uuid>.blocks``): its zones' filters, block-major per size class
  (:mod:`.serving`), from which the segment's slabs are made;
* a file table part (``<uuid>.files.parquet``) when file filters are on,

and returns only what the committing process needs (:class:`TaskResult`): per file its
row count or error, per column the part names and about 26 bytes per zone (key, length,
flags, distinct count, size class). No filter ever travels back, so the committing
process holds memory for the number of files and zones, not for the filters.

Part names are fresh; a part no manifest comes to reference (a task retried, a build
that lost a commit race or was killed) is an orphan that :func:`~.store.vacuum` removes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from bloomskip.index import partfile, serving, store
from bloomskip.index.layout import FRAGMENT_ID_LIMIT, ColumnIndex, Zoning, zone_metadata
from bloomskip.index.storage import Storage
from bloomskip.index.zones import FileZones, index_file
from bloomskip.sources.base import Source, SourceFile

_START_LIMIT = 1 << 40


def zone_keys(fid: int, starts: np.ndarray) -> np.ndarray:
    """Zone keys ``fragment_id << 40 | zone_start``: sortable, unique per zone."""
    return (np.uint64(fid) << np.uint64(40)) | starts.astype(np.uint64)


@dataclass
class FileResult:
    """What a task read of one file."""

    file: SourceFile
    fragment_id: int
    num_rows: int
    format: str
    error: str | None = None
    column_errors: dict[str, str] = field(default_factory=dict)


@dataclass
class ColumnPart:
    """One column's part of one task: names, and the zones' facts in part order."""

    files: str | None
    blocks: serving.BlockSource | None  # a task's part, or an older segment's slabs
    fragment: np.ndarray  # uint64 per zone
    keys: np.ndarray  # uint64 per zone
    lengths: np.ndarray  # uint64
    flags: np.ndarray  # uint8 (HAS_NULL | HAS_VALUE)
    ndv: np.ndarray  # uint64: distinct values per zone
    zone_class: np.ndarray  # uint8: class within the part, NO_CLASS: none
    file_bytes: int = 0

    @property
    def names(self) -> list[str]:
        """What the task wrote (an older segment's slabs are not the task's)."""
        part = self.blocks.rel if isinstance(self.blocks, partfile.Part) else None
        return [n for n in (self.files, part) if n]


@dataclass
class TaskResult:
    files: list[FileResult]
    columns: dict[str, ColumnPart]


def run_task(
    storage: Storage,
    source: Source,
    files: Sequence[tuple[SourceFile, int]],
    columns: Sequence[ColumnIndex],
    zoning: Zoning,
) -> TaskResult:
    """Index ``files`` (each with the fragment id it will have) and write their parts."""
    done = [(index_file(source, f, columns, zoning), fid) for f, fid in files]
    return write_task(storage, columns, zoning, done)


def write_task(
    storage: Storage,
    columns: Sequence[ColumnIndex],
    zoning: Zoning,
    indexed: Sequence[tuple[FileZones, int]],
) -> TaskResult:
    results = []
    for fz, fid in indexed:
        if not 0 <= fid < FRAGMENT_ID_LIMIT:
            raise ValueError(f"fragment id {fid} out of range")
        r = FileResult(fz.file, fid, fz.num_rows, fz.format, fz.error)
        for name, cz in fz.columns.items():
            if cz.error is not None:
                r.column_errors[name] = cz.error
        results.append(r)
    parts = {c.name: _write_column(storage, c, zoning, indexed) for c in columns}
    return TaskResult(results, parts)


def _write_column(
    storage: Storage, col: ColumnIndex, zoning: Zoning, indexed: Sequence[tuple[FileZones, int]]
) -> ColumnPart:
    ok = [
        (fz, fid, fz.columns[col.name])
        for fz, fid in indexed
        if fz.error is None and col.name in fz.columns and fz.columns[col.name].error is None
    ]
    zones = [(fz, fid, cz) for fz, fid, cz in ok if cz.num_zones]
    fragment = np.concatenate(
        [np.full(cz.num_zones, fid, np.uint64) for _, fid, cz in zones] or [np.zeros(0, np.uint64)]
    )
    starts = np.concatenate([cz.zone_start for _, _, cz in zones] or [np.zeros(0, np.uint64)])
    if starts.size and int(starts.max()) >= _START_LIMIT:
        raise ValueError("a zone starts beyond 2**40 rows")
    keys = (fragment << np.uint64(40)) | starts.astype(np.uint64)
    lengths = np.concatenate([cz.zone_length for _, _, cz in zones] or [np.zeros(0, np.uint64)])
    has_null = np.concatenate([cz.has_null for _, _, cz in zones] or [np.zeros(0, np.bool_)])
    ndv = np.concatenate([cz.ndv for _, _, cz in zones] or [np.zeros(0, np.uint64)])
    has_value = ndv > 0
    flags = (
        has_null.astype(np.uint8) * serving.HAS_NULL
        + has_value.astype(np.uint8) * serving.HAS_VALUE
    )
    part = ColumnPart(None, None, fragment, keys, lengths, flags.astype(np.uint8),
                      ndv.astype(np.uint64), np.zeros(0, np.uint8))  # fmt: skip
    if zones:
        data = np.concatenate([cz.data for _, _, cz in zones])
        sizes = np.concatenate([np.diff(cz.offsets) for _, _, cz in zones])
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        rel = store.new_name(col.directory, ".blocks")
        zone_class, classes, size = partfile.write_part(storage, rel, data, offsets)
        part.blocks = partfile.Part(rel, tuple(classes), size)
        part.zone_class = zone_class
    if col.file_filters:
        ft = [fz.file_table(col.name, fid) for fz, fid, _ in ok]
        ft = [t for t in ft if t.num_rows]
        if ft:
            table = pa.concat_tables(ft)
            part.files = store.new_name(col.directory, ".files.parquet")
            meta = zone_metadata(col, zoning)
            storage.write_table(part.files, table.replace_schema_metadata(meta))
            part.file_bytes = int(
                sum(len(b) for b in table.column("bloom_filter_data").to_pylist())
            )
    return part


__all__ = ["ColumnPart", "FileResult", "TaskResult", "run_task", "write_task", "zone_keys"]
