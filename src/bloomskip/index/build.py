"""Building and refreshing a zone index, with a thread pool or Spark as the engine.

:func:`build` creates an index, or adds columns to one; :func:`refresh` brings one up to
date with its source. Both run the same plan:

1. list the source; a file whose ``(path, size, mtime)`` the index already holds is left
   untouched (not even opened) unless a column is new to the index; new and changed
   files get a fragment id and are grouped into *tasks*; files no longer listed are
   dropped;
2. the engine (a :class:`Runner`: :class:`LocalRunner`'s threads, or Spark's tasks in
   :mod:`bloomskip.spark.build`) runs the tasks: each reads its files, cuts them into
   zones and writes its parts to the index's storage (:mod:`.parts`), returning only
   small facts per file and zone;
3. per column, the parts become one new *segment* (:mod:`.segments`): a serving
   directory is written, and the engine writes its slabs; segments that pile up are
   compacted into one;
4. a new fragment table is written and the next manifest created (:mod:`.store`). If
   another writer created it first, plan again on top of its version: files already
   read keep their parts unless their fragment id was taken meanwhile.

Files that cannot be read are not indexed, so every query keeps them as candidates; the
report lists them with the reason.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa

from bloomskip.errors import (
    BloomskipError,
    CommitConflictError,
    IndexNotFoundError,
    InvalidParameterError,
    UnsupportedTypeError,
)
from bloomskip.formats.base import JVM_CLOCK_KEY
from bloomskip.hashing.arrow import Encoding, parquet_spec
from bloomskip.index import params, store
from bloomskip.index import segments as seg
from bloomskip.index.layout import (
    DEFAULT_FPP,
    FRAGMENT_GROUP_ROWS,
    FRAGMENT_SCHEMA,
    NOT_DATA,
    SIZINGS,
    ColumnIndex,
    Manifest,
    Segment,
    Zoning,
    column_directory,
    snapshot_text,
)
from bloomskip.index.parts import ColumnPart, TaskResult
from bloomskip.index.runner import LocalRunner, Runner
from bloomskip.index.storage import Storage, open_storage
from bloomskip.sources import Source, SourceFile, from_json, resolve
from bloomskip.sources.base import unchanged
from bloomskip.sources.files import FileSource

#: A column's segments are merged into one when a commit would leave more than this.
MAX_SEGMENTS = 8
#: ... or when this share of the index's fragments are dropped ones.
MAX_DROPPED_SHARE = 0.25
#: How often a build re-plans after losing a commit race before giving up.
COMMIT_RETRIES = 5
#: A task reads about this many bytes of files (several small files share one task).
TASK_BYTES = 128 << 20


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
    #: Of the files indexed, those that are no Parquet or ORC file (no rows).
    files_not_data: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    zones_written: int = 0
    bytes_written: int = 0
    seconds: float = 0.0
    retries: int = 0
    snapshot: dict[str, Any] | None = None  # the table snapshot indexed (tables only)
    #: Columns this build added to an existing index (over its unchanged files too).
    columns_added: list[str] = field(default_factory=list)
    #: False: nothing was new, changed or gone, so no version was committed (``version``
    #: is the one already there).
    committed: bool = True

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["failed"] = [{"path": p, "reason": r} for p, r in self.failed]
        if d["snapshot"] is None:
            del d["snapshot"]
        return d

    def _not_data(self) -> str:
        n = self.files_not_data
        return f" ({n} of those indexed not Parquet or ORC: no rows)" if n else ""

    def _added(self) -> str:
        if not self.columns_added or not self.files_unchanged:
            return ""
        return f" ({', '.join(self.columns_added)} added to them)"

    def to_text(self) -> str:
        """What ``bloomskip index build`` and ``refresh`` print: counts, then failures."""
        at = "" if self.snapshot is None else f", {snapshot_text(self.snapshot)}"
        kept = "" if self.committed else " (nothing new: kept, no version committed)"
        lines = [
            f"{self.index}: version {self.version}{kept}{at}, columns {', '.join(self.columns)}",
            f"  {self.files_listed} files listed: {self.files_indexed} indexed, "
            f"{self.files_unchanged} unchanged{self._added()}, {self.files_dropped} dropped, "
            f"{len(self.failed)} not indexed{self._not_data()}",
            f"  {self.zones_written:,} zones, {self.bytes_written:,} B written in "
            f"{self.seconds:.2f} s",
        ]
        lines += [f"  not indexed: {path}: {why}" for path, why in self.failed[:20]]
        if len(self.failed) > 20:
            lines.append(f"  ... and {len(self.failed) - 20} more (see --json)")
        return "\n".join(lines)


def build(
    source: str | os.PathLike | Sequence[str | os.PathLike],
    columns: str | Sequence[str],
    index_path: str | os.PathLike,
    *,
    zone_rows: int | None = None,
    fpp: float | None = None,
    sizing: str | None = None,
    align: str | None = None,
    file_filters: bool = False,
    encoding: str | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    overwrite: bool = False,
    runner: Runner | None = None,
) -> BuildReport:
    """Index ``columns`` of every Parquet/ORC file under ``source`` into ``index_path``
    (a local directory, or an object-store URI: ``s3://``, ``gs://``, ``az://``).

    ``zone_rows`` rows per zone (never across files), target ``fpp`` per zone, ``sizing``
    ``"putze"`` (Lance: every zone sized for ``zone_rows`` values) or ``"exact"`` (each
    zone sized for its own distinct count), ``align="row_groups"`` to never cut across a
    Parquet row group or ORC stripe. ``encoding="parquet"`` hashes the PLAIN bytes of the
    Parquet physical type (as Parquet's own filters); ``"arrow"`` the Arrow width, as Lance.
    ``encoding=None``: the source's default (``"arrow"`` for a Lance dataset, whose zones
    then equal those of Lance's own BLOOMFILTER index; ``"parquet"`` otherwise).
    ``file_filters=True`` also keeps a filter per file (a lookup then reads them all).

    ``zone_rows``, ``align``, ``fpp``, ``sizing`` and ``encoding`` left None are the
    index's own when adding to an existing index (its zoning; a column's settings if it
    is indexed), else - a new index, or ``overwrite=True`` - the defaults (8192 rows,
    ``"rows"``, Lance's FPP 0.00057, ``"putze"``, the source's encoding).

    The index root must be empty, new, or an index already: on an existing index, new
    columns are added (with the index's zoning) and the index is refreshed;
    ``overwrite=True`` replaces its content (what it no longer uses, :func:`vacuum`
    removes). ``runner`` runs the tasks on another engine (Spark: see
    :func:`bloomskip.spark.build_index`).
    """
    params.source(source)
    names = params.columns(columns)
    params.path(index_path, "index_path")
    threads = params.threads(threads)
    for what, value in (("file_filters", file_filters), ("overwrite", overwrite)):
        params.flag(value, what)
    params.flag(progress, "progress", optional=True)
    if sizing is not None and sizing not in SIZINGS:
        raise InvalidParameterError(f"sizing must be one of {SIZINGS}, got {sizing!r}")
    if fpp is not None and (not isinstance(fpp, int | float) or not 0.0 < fpp < 1.0):
        raise InvalidParameterError(f"fpp must be strictly between 0 and 1, got {fpp!r}")
    if encoding is not None:
        Encoding.parse(encoding)
    storage = open_storage(index_path)
    src = resolve(source)
    base = None if overwrite else _latest(storage)
    known = base.zoning if base is not None else Zoning()
    zoning = Zoning(
        known.zone_rows if zone_rows is None else zone_rows,
        known.align if align is None else align,
    )
    settings = {
        "fpp": None if fpp is None else float(fpp),
        "sizing": sizing,
        "encoding": encoding,
        "ff": file_filters,
    }
    if not overwrite:  # fail before reading any file; checked again on every commit attempt
        _check_compatible(base, storage, src, zoning, names, settings)
    return _update(
        storage,
        src,
        zoning,
        names,
        settings,
        overwrite=overwrite,
        runner=runner or LocalRunner(threads, progress),
    )


def refresh(
    index_path: str | os.PathLike,
    *,
    threads: int | None = None,
    progress: bool | None = None,
    runner: Runner | None = None,
) -> BuildReport:
    """Index new and changed files of the index's source, drop removed ones; files whose
    ``(path, size, mtime)`` is unchanged are not opened."""
    params.path(index_path, "index_path")
    threads = params.threads(threads)
    params.flag(progress, "progress", optional=True)
    storage = open_storage(index_path)
    base = store.read_manifest(storage)
    return _update(
        storage,
        from_json(base.source),
        None,
        [],
        {},
        overwrite=False,
        runner=runner or LocalRunner(threads, progress),
    )


# ----------------------------------------------------------------------------- planning


def _indexed_source(base: Manifest, src: Source, root: str) -> Source:
    """The source ``base`` indexes, if ``src`` is that lake (by any of its names:
    ``s3a://``, ``file://``, a trailing slash); else InvalidParameterError."""
    if base.source == src.to_json():
        return src
    known = from_json(base.source)
    if src.same_lake(known):
        return known  # named as it was indexed
    if known.uri == src.uri:
        raise InvalidParameterError(
            f"{root}: its manifest's record of its source ({str(base.source)[:200]}) "
            "does not read back as it was written"
        )
    raise InvalidParameterError(
        f"{root} indexes {known.uri}, not {src.uri}; use another directory or overwrite "
        "(--overwrite, overwrite=True)"
    )


def _check_compatible(
    base: Manifest | None,
    storage: Storage,
    src: Source,
    zoning: Zoning,
    names: list[str],
    settings: dict[str, Any],
) -> None:
    """Raise if ``build`` would mix another source, zoning or column settings into ``base``."""
    if base is None:
        return
    root = storage.uri
    _indexed_source(base, src, root)
    if base.zoning != zoning:
        raise InvalidParameterError(
            f"{root} cuts zones of {base.zoning.zone_rows} rows (align {base.zoning.align}), "
            f"not {zoning.zone_rows} (align {zoning.align}): every column of an "
            "index shares its zones; use another directory or overwrite (--overwrite, "
            "overwrite=True)"
        )
    for n in names:
        old = base.columns.get(n)
        given = [k for k in ("sizing", "fpp", "encoding") if settings[k] is not None]
        if old is not None and any(getattr(old, k) != settings[k] for k in given):
            raise InvalidParameterError(
                f"{n} is already indexed with sizing={old.sizing}, fpp={old.fpp}, "
                f"encoding={old.encoding}; rebuild it with --overwrite (overwrite=True)"
            )


def _latest(storage: Storage) -> Manifest | None:
    try:
        return store.read_manifest(storage)
    except IndexNotFoundError:
        return None


@dataclass
class _Done:
    """What the tasks of this build produced, kept across commit attempts: a later attempt
    (re-planned on another writer's version) takes a file's result again only if it
    would write the same zones - the same file, zoning and column settings (a writer
    that overwrote the index may have changed them)."""

    results: list[TaskResult] = field(default_factory=list)
    # key() -> (fragment id, task result index)
    files: dict[tuple, tuple[int, int]] = field(default_factory=dict)

    @staticmethod
    def key(f: SourceFile, cols: tuple[str, ...], columns, zoning: Zoning) -> tuple:
        specs = tuple(
            (c.name, c.directory, str(c.arrow_type), c.physical_name, c.encoding, c.hash,
             c.seed, c.sizing, c.fpp, c.file_filters)
            for c in (columns[n] for n in cols)
        )  # fmt: skip
        return f.identity, cols, zoning, specs


def _update(
    storage: Storage,
    src: Source,
    zoning: Zoning | None,
    names: list[str],
    settings: dict[str, Any],
    *,
    overwrite: bool,
    runner: Runner,
) -> BuildReport:
    t0 = time.perf_counter()
    done = _Done()
    refreshing = zoning is None
    for attempt in range(COMMIT_RETRIES + 1):
        versions = store.versions(storage)
        base = None if overwrite or not versions else store.read_manifest(storage, versions[-1])
        next_version = (versions[-1] + 1) if versions else 1
        if base is not None:
            src = _indexed_source(base, src, storage.uri)
        if refreshing:  # the committed zoning, whoever committed last (on a retry too)
            if base is None:
                raise IndexNotFoundError(f"{storage.uri}: no zone index here to refresh")
            zoning = base.zoning
        elif not overwrite:  # build: the version we commit on may be another writer's
            _check_compatible(base, storage, src, zoning, names, settings)
        if attempt == 0:  # a lake, a user's files: refused before any listing
            claimed = store.check_claim(storage)
        listing = store.inside(storage, src, src.list())
        schema = base.schema if base is not None else src.arrow_schema(listing)
        src = src.following(schema)  # a table's columns renamed since: by field id
        columns = dict(base.columns) if base is not None else {}
        schema = _added_columns(schema, [n for n in names if n not in columns], src, listing)
        for n in names:
            if n not in columns:
                columns[n] = _new_column(
                    n, len(columns), schema, src, listing, settings, indexed=base is not None
                )
        if attempt == 0:
            store.claim(storage, claimed)  # an empty root becomes an index
        old = _fragments(storage, base)
        next_id = base.next_fragment_id if base is not None else 0
        new_cols = tuple(n for n in columns if base is None or n not in base.columns)
        keep: list[dict[str, Any]] = []
        todo: list[tuple[SourceFile, tuple[str, ...], int, bool]] = []  # file, cols, fid, new
        for f in listing:
            row = old.get(f.path)
            if row is not None and unchanged(row, f):
                keep.append(row if row.get("etag") == f.etag else row | {"etag": f.etag})
                if new_cols:
                    todo.append((f, new_cols, int(row["fragment_id"]), False))
                continue
            fid = None
            prior = done.files.get(done.key(f, tuple(columns), columns, zoning))
            if prior is not None and prior[0] >= next_id:
                fid = prior[0]  # indexed by an earlier attempt, its id still free
            if fid is None:
                want = src.fragment_id_of(f.path)  # Lance: keep Lance's fragment ids
                fid = want if want is not None and want >= next_id else next_id
            next_id = max(next_id, fid + 1)  # ids are never reused: old segments hold old ones
            todo.append((f, tuple(columns), fid, True))
        snapshot = src.snapshot()
        if (
            base is not None
            and not (todo or new_cols)  # a new column is committed even over no files
            and len(keep) == len(old)
            and snapshot == base.snapshot
        ):
            _drop_intermediates(storage, done, base)  # an earlier attempt's, if any
            return BuildReport(  # nothing new, changed or gone: the version stays
                storage.uri, base.version, list(columns), files_listed=len(listing),
                files_unchanged=len(keep), seconds=time.perf_counter() - t0,
                snapshot=snapshot, committed=False,
            )  # fmt: skip
        _run_tasks(storage, src, runner, todo, columns, zoning, done)
        report = BuildReport(storage.uri, next_version, list(columns), files_listed=len(listing))
        report.snapshot = snapshot
        report.columns_added = list(new_cols) if base is not None else []
        # Per column: the fragments each task result contributes.
        chosen: dict[str, dict[int, list[int]]] = {n: {} for n in columns}
        new_rows, failed, unreadable = [], {n: set() for n in columns}, []
        for f, cols, fid, new in todo:
            fr, index = _result(done, done.key(f, cols, columns, zoning), f, fid)
            if fr.error is not None:
                report.failed.append((src.uri_of(f.path), fr.error))
                if new:  # no fragment: the manifest names it (refresh tries it again)
                    unreadable.append(f.path)
                else:  # an unchanged file keeps its fragment and old columns; the new
                    failed.update({c: failed[c] | {fid} for c in cols})  # read in full
                continue
            report.files_not_data += fr.format == NOT_DATA
            for c in cols:
                if c in fr.column_errors:
                    report.failed.append((src.uri_of(f.path), fr.column_errors[c]))
                    failed[c].add(fid)
                else:
                    chosen[c].setdefault(index, []).append(fid)
            if new:
                new_rows.append(
                    {
                        "fragment_id": fid,
                        "path": f.path,
                        "size": f.size,
                        "mtime_ns": f.mtime_ns,
                        "num_rows": fr.num_rows,
                        "format": fr.format,
                        "etag": f.etag,
                    }
                )
        live_rows = keep + new_rows
        live = {int(r["fragment_id"]) for r in live_rows}
        gone = {int(r["fragment_id"]) for r in old.values()} - live
        report.files_indexed = len(new_rows)
        report.files_unchanged = len(keep)
        report.files_dropped = len(gone)
        dropped = tuple(sorted((set(base.dropped) if base else set()) | gone))
        frag_rel = store.new_name("fragments", ".parquet")
        report.bytes_written += storage.write_table(
            frag_rel, _fragment_table(live_rows), row_group_size=FRAGMENT_GROUP_ROWS
        )
        compact = any(len(c.segments) >= MAX_SEGMENTS for c in columns.values()) or (
            len(dropped) > MAX_DROPPED_SHARE * max(len(live), 1)
        )
        out_cols = {}
        picked = {
            name: [
                (done.results[i].columns[name], np.array(sorted(ids), dtype=np.uint64))
                for i, ids in chosen[name].items()
                if name in done.results[i].columns
            ]
            for name in columns
        }
        added = _write_segments(storage, columns, picked, runner, report)
        for name, col in columns.items():
            if added[name] is not None:
                col = col.with_segments((*col.segments, added[name]))
            indexed = {fid for ids in chosen[name].values() for fid in ids}
            carried = set(col.failed) - indexed - gone
            col = replace(col, failed=tuple(sorted((carried | failed[name]) & live)))
            if compact:
                col = _compact(storage, col, zoning, live, runner, report)
            out_cols[name] = col
        if any(r["format"] == "orc" for r in new_rows) and isinstance(src, FileSource):
            schema = _orc_clocks(schema)
        manifest = Manifest(
            version=next_version,
            source=src.to_json(),
            zoning=zoning,
            schema=schema,
            fragments=frag_rel,
            next_fragment_id=next_id,
            columns=out_cols,
            dropped=() if compact else tuple(d for d in dropped if d not in live),
            num_files=len(live_rows),
            num_rows=int(sum(int(r["num_rows"]) for r in live_rows)),
            num_bytes=int(sum(int(r["size"]) for r in live_rows)),
            snapshot=report.snapshot,
            unreadable=tuple(sorted(unreadable)),
        )
        try:
            store.publish(storage, manifest)
        except CommitConflictError:
            if attempt == COMMIT_RETRIES:
                raise
            continue
        _drop_intermediates(storage, done, manifest)
        report.retries = attempt
        report.seconds = time.perf_counter() - t0
        return report
    raise AssertionError("unreachable")  # pragma: no cover


def _drop_intermediates(storage: Storage, done: _Done, manifest: Manifest) -> None:
    """Delete what the tasks wrote that the committed version does not use: the serving
    parts (the slabs hold their blocks now) and parts of files another attempt re-read.
    Best effort: what stays is an orphan, which vacuum removes."""
    used = store.referenced(manifest)
    for result in done.results:
        for part in result.columns.values():
            for rel in part.names:
                if rel not in used:
                    with contextlib.suppress(OSError, BloomskipError):
                        storage.delete(rel)


def _run_tasks(storage, src, runner, todo, columns, zoning, done: _Done) -> None:
    """Index the files of ``todo`` not yet done (with their fragment ids), in tasks."""
    pending: dict[tuple[str, ...], list[tuple[SourceFile, int]]] = {}
    for f, cols, fid, _new in todo:
        prior = done.files.get(done.key(f, cols, columns, zoning))
        if prior is None or prior[0] != fid:
            pending.setdefault(cols, []).append((f, fid))
    for cols, files in pending.items():
        specs = [columns[c] for c in cols]
        tasks = plan_tasks([f for f, _ in files], runner.min_tasks())
        grouped = [[files[i] for i in t] for t in tasks]
        for result in runner.index(storage, src, grouped, specs, zoning):
            done.results.append(result)
            for fr in result.files:
                key = done.key(fr.file, cols, columns, zoning)
                done.files[key] = (fr.fragment_id, len(done.results) - 1)


def _result(done: _Done, key: tuple, f: SourceFile, fid: int):
    fid_done, index = done.files[key]
    assert fid_done == fid
    fr = next(r for r in done.results[index].files if r.file.identity == f.identity)
    return fr, index


def plan_tasks(files: list[SourceFile], at_least: int = 1) -> list[list[int]]:
    """File positions per task: runs of consecutive files, about one task per
    :data:`TASK_BYTES` of files, at least ``at_least`` (at most one per file; none empty),
    balanced by size. Runs, because fragment ids are given in listing order: a task's
    files then hold consecutive ids, so its zones lie side by side in every size class of
    the segment and a slab job reads each part's share of a block row in one piece."""
    weights = [max(f.size, 1) for f in files]
    total = sum(weights)
    n = max(1, min(len(files), max(math.ceil(total / TASK_BYTES), at_least)))
    out: list[list[int]] = [[] for _ in range(n)]
    run, prev, left = 0, -1, len(files)
    for pos, w in enumerate(weights):
        # the task whose share of the total holds this file's middle byte; never a task
        # skipped (a big file before small ones), and enough files left for every task
        mid = min(n - 1, (2 * run + w) * n // (2 * total))
        t = min(max(mid, prev, n - left), prev + 1)
        out[t].append(pos)
        run, prev, left = run + w, t, left - 1
    return [t for t in out if t]  # no files: no task


# ----------------------------------------------------------------------------- segments


def _write_segments(
    storage: Storage,
    columns: dict[str, ColumnIndex],
    picks: dict[str, list[tuple[ColumnPart, np.ndarray]]],
    runner: Runner,
    report: BuildReport,
) -> dict[str, Segment | None]:
    """Each column's new segment (None: no zone chosen), the slabs of all of them
    written by one :meth:`Runner.slabs` call (on Spark: one job, not one per column)."""
    plans = {
        name: seg.plan_segment(col, picks[name]) if picks.get(name) else None
        for name, col in columns.items()
    }
    jobs = [j for p in plans.values() if p is not None for j in p.jobs]
    frames = runner.slabs(storage, jobs) if jobs else []
    if len(frames) != len(jobs):
        raise ValueError(f"{len(frames)} slabs written of {len(jobs)}")
    out: dict[str, Segment | None] = {}
    at = 0
    for name, plan in plans.items():
        if plan is None:
            out[name] = None
            continue
        mine, at = frames[at : at + len(plan.jobs)], at + len(plan.jobs)
        segment = seg.finish(storage, plan, mine)
        report.zones_written += segment.num_zones
        report.bytes_written += segment.directory_size + sum(
            storage.size(n) or 0 for n in segment.slabs
        )
        out[name] = segment
    return out


def _write_segment(
    storage: Storage,
    col: ColumnIndex,
    picks: list[tuple[ColumnPart, np.ndarray]],
    runner: Runner,
    report: BuildReport,
) -> Segment | None:
    return _write_segments(storage, {col.name: col}, {col.name: picks}, runner, report)[col.name]


def _compact(
    storage: Storage,
    col: ColumnIndex,
    zoning: Zoning,
    live: set[int],
    runner: Runner,
    report: BuildReport,
) -> ColumnIndex:
    """One segment holding the live zones of all of ``col``'s segments: served segments
    give their slabs' blocks, format 1 segments their zone tables (through parts)."""
    live_arr = pa.array(sorted(live), type=pa.uint64())
    keep = np.array(sorted(live), dtype=np.uint64)
    rels = [r for s in col.segments if not s.directory for r in s.zones]
    with ThreadPoolExecutor(max_workers=max(1, runner.parallelism())) as pool:
        parts = list(pool.map(lambda r: seg.repart(storage, col, zoning, r, live_arr), rels))
        parts += pool.map(
            lambda s: seg.from_segment(storage, col, s), [s for s in col.segments if s.directory]
        )
    files = [r for s in col.segments for r in s.files]
    merged_files = seg.file_parts(storage, col, files, live_arr) if files else None
    try:
        segment = _write_segment(storage, col, [(p, keep) for p in parts], runner, report)
    finally:  # the format 1 tables' parts: the slabs hold their blocks now
        for p in parts:
            for rel in p.names:
                with contextlib.suppress(OSError, BloomskipError):
                    storage.delete(rel)
    if segment is None:
        return col.with_segments(())
    report.zones_written -= segment.num_zones  # rewritten, not new
    return col.with_segments((replace(segment, files=(merged_files,) if merged_files else ()),))


def _orc_clocks(schema: pa.Schema) -> pa.Schema:
    """A lake of files holding ORC files: its schema is its first file's, which may be
    Parquet, so each timestamp column without a zone may be an ORC TIMESTAMP elsewhere
    (a wall clock Spark reads in its JVM's zone): marked, a lookup probes it at every
    UTC offset rather than miss that file's rows."""
    for i, f in enumerate(schema):
        if pa.types.is_timestamp(f.type) and f.type.tz is None:
            meta = f.metadata or {}
            if JVM_CLOCK_KEY not in meta:
                schema = schema.set(i, f.with_metadata({**meta, JVM_CLOCK_KEY: b"true"}))
    return schema


def _added_columns(
    schema: pa.Schema, names: Sequence[str], src: Source, listing: list[SourceFile]
) -> pa.Schema:
    """``schema`` with the columns ``names`` it lacks, or holds only nulls of, as other
    files of a lake hold them (a column added to a lake over time); tables keep their
    own schema."""
    for name in names:
        i = schema.get_field_index(name)
        if i >= 0 and not pa.types.is_null(schema.field(i).type):
            continue
        found = src.column_field(name, listing)
        if found is not None:
            schema = schema.set(i, found) if i >= 0 else schema.append(found)
    return schema


def _new_column(
    name: str,
    position: int,
    schema: pa.Schema,
    src: Source,
    listing: list[SourceFile],
    settings: dict[str, Any],
    indexed: bool = False,
) -> ColumnIndex:
    """``name`` as a new column of an index of ``schema`` (``indexed``: the schema an
    existing index recorded)."""
    idx = schema.get_field_index(name)
    if idx < 0 and indexed:  # a table's: the index keeps the table's schema it was built on
        raise InvalidParameterError(
            f"the index's schema (the source's when the index was first built) has no column "
            f"{name!r}; columns are: {', '.join(schema.names[:30])}. A column added to the "
            "table since needs a new index (overwrite=True)"
        )
    if idx < 0:
        raise InvalidParameterError(
            f"{src.uri} has no column {name!r} (in its first and last files); columns are: "
            f"{', '.join(schema.names[:30])}"
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
    encoding = settings["encoding"] or src.default_encoding
    if encoding == "parquet":
        physical = _parquet_physical(name, t, src, listing)
    return ColumnIndex(
        name=name,
        directory=column_directory(position, name),
        arrow_type=t,
        physical=physical,
        encoding=encoding,
        sizing=settings["sizing"] or "putze",
        fpp=DEFAULT_FPP if settings["fpp"] is None else settings["fpp"],
        file_filters=settings["ff"],
    )


def _parquet_physical(name: str, t: pa.DataType, src: Source, listing: list[SourceFile]):
    """The physical encoding the source's files store ``name`` with (so zone filters
    equal that writer's filters), else the default Parquet encoding of its Arrow type."""
    spec = src.physical_spec(name, t, listing)
    if spec is not None:
        return spec
    try:
        return parquet_spec(t)
    except UnsupportedTypeError as e:
        raise UnsupportedTypeError(f"{name}: {e}") from None


def _fragments(storage: Storage, base: Manifest | None) -> dict[str, dict[str, Any]]:
    if base is None or base.fragments is None:
        return {}
    t = storage.read_table(base.fragments, max_rows=base.fragment_rows)
    return {r["path"]: r for r in t.to_pylist()}


def _fragment_table(rows: list[dict[str, Any]]) -> pa.Table:
    rows = sorted(({"etag": None} | r for r in rows), key=lambda r: r["fragment_id"])
    return pa.Table.from_pylist(rows, schema=FRAGMENT_SCHEMA)


__all__ = ["BuildReport", "LocalRunner", "Runner", "build", "plan_tasks", "refresh"]
