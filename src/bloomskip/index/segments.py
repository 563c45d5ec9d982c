"""Segments: the parts of one build, assembled into what a manifest lists for a column.

After the indexing tasks (:mod:`.parts`), the committing process holds, per column, each
part's names and zone facts. :func:`plan_segment` sorts the committed zones by key,
writes the segment's serving directory and returns the *slab jobs*: each gathers one
block range of one size class from every part (:func:`~.serving.build_slab`), so slabs
are written in parallel (threads, or Spark tasks) without the committing process ever
holding a filter.

:func:`compact` rewrites a column's segments as one when they pile up or hold many
dropped fragments: it re-reads the Lance zone tables part by part (streaming), keeps the
live zones, and plans a new segment from them the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.index import serving, store
from bloomskip.index.layout import ColumnIndex, Segment, Zoning, check_zone_table, zone_metadata
from bloomskip.index.parts import ColumnPart
from bloomskip.index.storage import Storage


def plan_segment(
    storage: Storage, col: ColumnIndex, chosen: Sequence[tuple[ColumnPart, np.ndarray]]
) -> tuple[Segment, list[serving.SlabJob]] | None:
    """The segment of ``col`` made of, for each ``(part, fragments)``, the zones of those
    fragments in that part; its directory is written, its slabs are to be built from the
    jobs. A zone table part holding other zones too (a task whose file was re-read after
    a lost commit race) is rewritten with these only. None when no zone is chosen."""
    kept = [np.isin(p.fragment, ids) for p, ids in chosen]
    if not any(k.any() for k in kept):
        return None
    parts = [_only(storage, col, p, k) for (p, _), k in zip(chosen, kept, strict=True)]
    src_part = np.concatenate([np.full(int(k.sum()), i, np.int64) for i, k in enumerate(kept)])
    keys = np.concatenate([p.keys[k] for p, k in zip(parts, kept, strict=True)])
    lengths = np.concatenate([p.lengths[k] for p, k in zip(parts, kept, strict=True)])
    flags = np.concatenate([p.flags[k] for p, k in zip(parts, kept, strict=True)])
    # Each zone's class within its part, its rank in that class, and the class's blocks.
    part_class, rank, blocks = [], [], []
    for p, k in zip(parts, kept, strict=True):
        cls = (
            p.zone_class
            if p.blocks is not None
            else np.full(k.shape[0], serving.NO_CLASS, np.uint8)
        )
        r = np.zeros(cls.shape[0], np.int64)
        b = np.zeros(cls.shape[0], np.int64)
        for j, (nb, _) in enumerate(p.blocks.classes if p.blocks is not None else ()):
            m = cls == j
            r[m] = np.arange(int(m.sum()))
            b[m] = nb
        part_class.append(cls[k])
        rank.append(r[k])
        blocks.append(b[k])
    part_class_a, rank_a, blocks_a = (np.concatenate(x) for x in (part_class, rank, blocks))
    order = np.argsort(keys, kind="stable")
    first = np.ones(keys.shape[0], np.bool_)  # a zone twice (cannot happen): keep one
    first[1:] = keys[order][1:] != keys[order][:-1]
    order = order[first]
    keys, lengths, flags = keys[order], lengths[order], flags[order]
    src_part, part_class_a, rank_a, blocks = (
        src_part[order],
        part_class_a[order],
        rank_a[order],
        blocks_a[order],
    )
    sizes = sorted(set(blocks[blocks > 0].tolist()))
    zone_class = np.full(keys.shape[0], serving.NO_CLASS, np.uint8)
    position = np.zeros(keys.shape[0], np.int64)
    for c, b in enumerate(sizes):
        members = np.flatnonzero(blocks == b)
        zone_class[members] = c
        position[members] = np.arange(members.shape[0])
    counts = [int((zone_class == c).sum()) for c in range(len(sizes))]
    slab_sizes = [serving.slab_blocks(b, n) for b, n in zip(sizes, counts, strict=True)]
    directory = store.new_name(col.directory, ".dir")
    dir_size = serving.write_directory(
        storage,
        directory,
        col.identity(),
        keys,
        lengths,
        flags,
        zone_class,
        list(zip(sizes, counts, slab_sizes, strict=True)),
    )
    # Where each part's zones of each class go: the slab column, or -1 (not kept).
    dest: dict[tuple[int, int], np.ndarray] = {}
    for i, p in enumerate(parts):
        for j, (_, n) in enumerate(p.blocks.classes if p.blocks is not None else ()):
            dest[(i, j)] = np.full(n, -1, np.int64)
    has = part_class_a != serving.NO_CLASS
    for (i, j), cols in dest.items():
        mine = has & (src_part == i) & (part_class_a == j)
        cols[rank_a[mine]] = position[mine]
    jobs, slabs = [], []
    for c, (b, n, s) in enumerate(zip(sizes, counts, slab_sizes, strict=True)):
        sources = tuple(
            (parts[p].blocks, j, cols)
            for (p, j), cols in dest.items()
            if parts[p].blocks.classes[j][0] == b and (cols >= 0).any()
        )
        for k in range(b // s):
            rel = serving.slab_name(directory, c, k)
            slabs.append(rel)
            jobs.append(serving.SlabJob(rel, b, n, k * s, (k + 1) * s, sources))
    used = sorted({int(p) for p in src_part})
    segment = Segment(
        zones=tuple(parts[p].zones for p in used if parts[p].zones),
        files=tuple(p.files for p in parts if p.files),
        num_fragments=int(np.unique(keys >> np.uint64(40)).shape[0]),
        num_zones=int(keys.shape[0]),
        zone_bytes=int(blocks.sum()) * 32,
        file_bytes=sum(p.file_bytes for p in parts if p.files),
        directory=directory,
        directory_size=dir_size,
        slabs=tuple(slabs),
    )
    return segment, jobs


def repart(
    storage: Storage, col: ColumnIndex, zoning: Zoning, rel: str, live: pa.Array
) -> ColumnPart:
    """One zone table part of an older segment, rewritten with its live zones only, as a
    new zone table part and a serving part (compaction, or a format 1 index)."""
    table = storage.read_table(rel)
    check_zone_table(table, col, zoning, storage.label(rel))
    table = table.filter(pc.is_in(table.column("fragment_id"), value_set=live))
    fragment = table.column("fragment_id").to_numpy().astype(np.uint64)
    starts = table.column("zone_start").to_numpy().astype(np.uint64)
    part = ColumnPart(
        None,
        None,
        None,
        fragment,
        (fragment << np.uint64(40)) | starts,
        table.column("zone_length").to_numpy().astype(np.uint64),
        (
            table.column("has_null").to_numpy(zero_copy_only=False).astype(np.uint8)
            * serving.HAS_NULL
            + (table.column("ndv").to_numpy() > 0).astype(np.uint8) * serving.HAS_VALUE
        ).astype(np.uint8),
        np.zeros(0, np.uint8),
    )
    if not table.num_rows:
        return part
    part.zones = store.new_name(col.directory, ".zones.parquet")
    storage.write_table(
        part.zones,
        table.replace_schema_metadata(zone_metadata(col, zoning)),
        use_dictionary=False,
        write_statistics=[n for n in table.column_names if n != "bloom_filter_data"],
        row_group_size=4096,
    )
    data, offsets = _bitsets(table.column("bloom_filter_data"))
    part.zone_bytes = int(offsets[-1])
    blocks_rel = store.new_name(col.directory, ".blocks")
    zone_class, classes, size = serving.write_part(storage, blocks_rel, data, offsets)
    part.blocks = serving.Part(blocks_rel, tuple(classes), size)
    part.zone_class = zone_class
    return part


def _only(storage: Storage, col: ColumnIndex, part: ColumnPart, kept: np.ndarray) -> ColumnPart:
    """``part``, its zone table rewritten to the ``kept`` zones if it holds others."""
    if part.zones is None or kept.all() or not kept.any():
        return part if part.zones is None or kept.any() else replace(part, zones=None)
    table = storage.read_table(part.zones)
    rel = store.new_name(col.directory, ".zones.parquet")
    storage.write_table(
        rel,
        table.filter(pa.array(kept)),
        use_dictionary=False,
        write_statistics=[n for n in table.column_names if n != "bloom_filter_data"],
        row_group_size=4096,
    )
    return replace(part, zones=rel)


def _bitsets(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A binary column's values back to back, and their offsets."""
    datas, sizes = [], []
    for ch in column.chunks:
        if not len(ch):
            continue
        ch = ch.cast(pa.large_binary())
        o = np.frombuffer(ch.buffers()[1], dtype=np.int64)[ch.offset : ch.offset + len(ch) + 1]
        datas.append(np.frombuffer(ch.buffers()[2], dtype=np.uint8)[o[0] : o[-1]])
        sizes.append(np.diff(o))
    if not datas:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    size = np.concatenate(sizes)
    return np.concatenate(datas), np.concatenate([[0], np.cumsum(size)]).astype(np.int64)


def file_parts(
    storage: Storage, col: ColumnIndex, rels: Sequence[str], live: pa.Array
) -> str | None:
    """The live rows of file table parts, as one new part (None: no row)."""
    tables = []
    for rel in rels:
        t = storage.read_table(rel)
        tables.append(t.filter(pc.is_in(t.column("fragment_id"), value_set=live)))
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return None
    rel = store.new_name(col.directory, ".files.parquet")
    storage.write_table(rel, pa.concat_tables(tables, promote_options="permissive"))
    return rel


__all__ = ["file_parts", "plan_segment", "repart"]
