"""Segments: the parts of one build, assembled into what a manifest lists for a column.

After the indexing tasks (:mod:`.parts`), the committing process holds, per column, each
part's names and zone facts. :func:`plan_segment` sorts the chosen zones by key and
returns a :class:`Plan`: the zones' facts and the *slab jobs*, each gathering one block
range of one size class from every source (:func:`~.serving.build_slab`), so slabs are
written in parallel (threads, or Spark tasks) without the committing process ever
holding a filter. :func:`finish` then writes the segment's directory, with where each
slab's frames end.

Compaction rewrites a column's segments as one when they pile up or hold many dropped
fragments: :func:`from_segment` turns a segment's directory into a source whose blocks
come from its slabs, and :func:`repart` does the same for a format 1 segment's Lance zone
tables (through a serving part); the live zones of them all are planned the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import CorruptFileError
from bloomskip.index import partfile, serving, store
from bloomskip.index.layout import ColumnIndex, Segment, Zoning, check_zone_table
from bloomskip.index.parts import ColumnPart
from bloomskip.index.storage import Storage


@dataclass
class Plan:
    """A segment whose slabs are to be written (:attr:`jobs`) before :func:`finish`."""

    directory: str
    identity: dict
    zones: dict[str, np.ndarray]  # keys, lengths, flags, ndv, class
    classes: list[tuple[int, int, int]]  # (blocks, count, slab blocks)
    jobs: list[serving.SlabJob]
    files: tuple[str, ...]
    file_bytes: int


def plan_segment(col: ColumnIndex, chosen: Sequence[tuple[ColumnPart, np.ndarray]]) -> Plan | None:
    """The segment of ``col`` made of, for each ``(part, fragments)``, the zones of those
    fragments in that part (a part may hold others: a task whose file was re-read after
    a lost commit race). None when no zone is chosen."""
    kept = [np.isin(p.fragment, ids) for p, ids in chosen]
    if not any(k.any() for k in kept):
        return None
    parts = [p for p, _ in chosen]
    src_part = np.concatenate([np.full(int(k.sum()), i, np.int64) for i, k in enumerate(kept)])

    def cat(field: str) -> np.ndarray:
        return np.concatenate([getattr(p, field)[k] for p, k in zip(parts, kept, strict=True)])

    keys, lengths, flags, ndv = cat("keys"), cat("lengths"), cat("flags"), cat("ndv")
    # Each zone's class within its part, its rank in that class, and the class's blocks.
    part_class, rank, blocks = [], [], []
    for p, k in zip(parts, kept, strict=True):
        listed = p.blocks.classes if p.blocks is not None else ()
        cls = p.zone_class if p.blocks is not None else np.full(k.shape[0], serving.NO_CLASS)
        cls = cls.astype(np.uint8)
        r = np.zeros(cls.shape[0], np.int64)
        b = np.zeros(cls.shape[0], np.int64)
        for j, (nb, _) in enumerate(listed):
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
    keys, lengths, flags, ndv = keys[order], lengths[order], flags[order], ndv[order]
    src_part, part_class_a, rank_a, blocks_a = (
        x[order] for x in (src_part, part_class_a, rank_a, blocks_a)
    )
    sizes = sorted(set(blocks_a[blocks_a > 0].tolist()))
    zone_class = np.full(keys.shape[0], serving.NO_CLASS, np.uint8)
    position = np.zeros(keys.shape[0], np.int64)
    for c, b in enumerate(sizes):
        members = np.flatnonzero(blocks_a == b)
        zone_class[members] = c
        position[members] = np.arange(members.shape[0])
    counts = [int((zone_class == c).sum()) for c in range(len(sizes))]
    slab_sizes = [serving.slab_blocks(b, n) for b, n in zip(sizes, counts, strict=True)]
    directory = store.new_name(col.directory, ".dir")
    # Where each part's zones of each class go: the slab column, or -1 (not kept).
    has = part_class_a != serving.NO_CLASS
    jobs = []
    for c, (b, n, s) in enumerate(zip(sizes, counts, slab_sizes, strict=True)):
        sources = []
        for i, p in enumerate(parts):
            for j, (nb, count) in enumerate(p.blocks.classes if p.blocks is not None else ()):
                if nb != b:
                    continue
                mine = has & (src_part == i) & (part_class_a == j)
                if not mine.any():
                    continue
                cols = np.full(count, -1, np.int64)
                cols[rank_a[mine]] = position[mine]
                sources.append((p.blocks, j, cols))
        shared = tuple(sources)  # one object in every job of the class: pickled once
        for k in range(b // s):
            rel = serving.slab_name(directory, c, k)
            jobs.append(
                serving.SlabJob(rel, b, n, k * s, (k + 1) * s, shared, serving.uses_planes(n))
            )
    return Plan(
        directory=directory,
        identity=col.identity(),
        zones={"keys": keys, "lengths": lengths, "flags": flags, "ndv": ndv, "class": zone_class},
        classes=list(zip(sizes, counts, slab_sizes, strict=True)),
        jobs=jobs,
        files=tuple(p.files for p in parts if p.files),
        file_bytes=sum(p.file_bytes for p in parts if p.files),
    )


def finish(storage: Storage, plan: Plan, frames: Sequence[np.ndarray]) -> Segment:
    """Write ``plan``'s directory once its slabs are written (``frames``: what each slab
    job returned - its frames' ends and CRCs - in job order) and return the segment."""
    if len(frames) != len(plan.jobs):
        raise ValueError(f"{len(frames)} slabs written of {len(plan.jobs)}")
    per_class: list[list[np.ndarray]] = [[] for _ in plan.classes]
    for job, f in zip(plan.jobs, frames, strict=True):
        f = np.asarray(f, dtype=np.uint64)
        if f.shape != (2, job.b1 - job.b0):
            raise ValueError(f"{job.rel}: frames of shape {f.shape}, not (2, {job.b1 - job.b0})")
        per_class[_class_of(job.rel)].append(f)
    class_frames = [np.concatenate(x, axis=1) for x in per_class]
    size = serving.write_directory(
        storage, plan.directory, plan.identity, plan.zones, plan.classes, class_frames
    )
    keys = plan.zones["keys"]
    return Segment(
        zones=(),
        files=plan.files,
        num_fragments=int(np.unique(keys >> np.uint64(40)).shape[0]),
        num_zones=int(keys.shape[0]),
        zone_bytes=sum(b * n * 32 for b, n, _ in plan.classes),
        file_bytes=plan.file_bytes,
        directory=plan.directory,
        directory_size=size,
        slabs=tuple(j.rel for j in plan.jobs),
    )


def _class_of(slab: str) -> int:
    return int(slab.rsplit(".c", 1)[1].split("-", 1)[0])


def from_segment(storage: Storage, col: ColumnIndex, segment: Segment) -> ColumnPart:
    """A served segment as a source for a new one: its directory's facts, its slabs'
    blocks."""
    d = serving.read_directory(
        storage, segment.directory, segment.directory_size, segment.num_zones
    )
    if d.identity != col.identity():
        raise CorruptFileError(
            f"{storage.label(segment.directory)}: holds {d.identity}, the manifest says "
            f"{col.identity()}"
        )
    return ColumnPart(
        None,
        serving.SegmentBlocks(d, segment.slabs),
        d.keys >> np.uint64(40),
        d.keys,
        d.lengths,
        d.flags,
        d.ndv,
        d.zone_class,
    )


def repart(
    storage: Storage, col: ColumnIndex, zoning: Zoning, rel: str, live: pa.Array
) -> ColumnPart:
    """A format 1 segment's zone table, its live zones written as a serving part."""
    table = storage.read_table(rel)
    check_zone_table(table, col, zoning, storage.label(rel))
    table = table.filter(pc.is_in(table.column("fragment_id"), value_set=live))
    fragment = table.column("fragment_id").to_numpy().astype(np.uint64)
    starts = table.column("zone_start").to_numpy().astype(np.uint64)
    ndv = table.column("ndv").to_numpy().astype(np.uint64)
    part = ColumnPart(
        None,
        None,
        fragment,
        (fragment << np.uint64(40)) | starts,
        table.column("zone_length").to_numpy().astype(np.uint64),
        (
            table.column("has_null").to_numpy(zero_copy_only=False).astype(np.uint8)
            * serving.HAS_NULL
            + (ndv > 0).astype(np.uint8) * serving.HAS_VALUE
        ).astype(np.uint8),
        ndv,
        np.zeros(0, np.uint8),
    )
    if not table.num_rows:
        return part
    data, offsets = _bitsets(table.column("bloom_filter_data"))
    blocks_rel = store.new_name(col.directory, ".blocks")
    zone_class, classes, size = partfile.write_part(storage, blocks_rel, data, offsets)
    part.blocks = partfile.Part(blocks_rel, tuple(classes), size)
    part.zone_class = zone_class
    return part


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


__all__ = ["Plan", "file_parts", "finish", "from_segment", "plan_segment", "repart"]
