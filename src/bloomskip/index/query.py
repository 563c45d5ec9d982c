"""Answering predicates from a zone index: which files, and which zones in them, may match.

``open(path).query("user_id = 'x'")`` binds the predicate to the source's schema
(:mod:`bloomskip.expr`, shared with Parquet and ORC pruning) and answers with *AtMost*
semantics: every file and zone holding a matching row is a candidate; others may be too.

Evaluation is vectorized over all files and zones at once. Each leaf gives two boolean
arrays, one over files and one over zones; AND and OR combine them elementwise; NOT was
rewritten away before (a "may match" is never negated). Per leaf:

========================  ==============================================================
``col = v``, ``IN (...)``  literals converted to the column's type (a literal that cannot
                          equal any value drops out, one bloomskip cannot convert makes the
                          leaf "may match"), hashed as the index hashes; the file filters
                          are probed first, then the zones of the files that survive, in
                          one kernel call each (:func:`bloomskip.index.kernels.probe_any`)
long ``IN`` lists         not used when ``1 - (1 - fpp) ** k`` - the chance that a zone
                          holding none of the k values is still kept - exceeds
                          ``max_in_fpp``; the result says so
``IS NULL``               ``has_null`` of each zone
``IS NOT NULL``           zones with at least one value (``ndv > 0``)
anything else             may match: ``!=``, ``NOT IN``, ranges, columns not indexed
========================  ==============================================================

Files are compared with the source as listed now (:mod:`.listing`): files the index does
not know, and files whose size or modification time changed since indexing, are
candidates in full; files removed since are not listed, so never returned. A table's
(Delta, Iceberg) "listing" is a snapshot's file list - the latest, or one named for time
travel - and its partition values are evidence too (:mod:`.known`), decided in the same
tree. A column that could not be indexed for a file (its values did not convert) leaves
that file a candidate for that column.

The deciding is :mod:`.decide`'s, the answer's shape :mod:`.results`'; this module opens
an index and runs a lookup end to end.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import (
    BloomskipError,
    CorruptFileError,
    InvalidParameterError,
    OutOfMemoryError,
    SourceError,
)
from bloomskip.expr.bind import Column, bind, without_unknown
from bloomskip.expr.expressions import Expression, terms
from bloomskip.expr.sql import parse
from bloomskip.formats.base import JVM_CLOCK_KEY, MARKED_KEY
from bloomskip.index import params, serving, store
from bloomskip.index.decide import Decided, decide, evaluate
from bloomskip.index.known import KnownValues
from bloomskip.index.layout import (
    FRAGMENT_SCHEMA,
    NOT_DATA,
    ZONE_SCHEMA,
    ColumnIndex,
    Manifest,
    Segment,
    check_zone_table,
    zone_metadata,
)
from bloomskip.index.listing import compare
from bloomskip.index.results import EMPTY, NOT_DATA_REASON, FileCandidate, QueryResult
from bloomskip.index.rows import RowFilter
from bloomskip.index.storage import Storage, open_storage
from bloomskip.index.zonedata import ColumnData, load_column
from bloomskip.sources import DATASETS, Source, SourceFile, from_json
from bloomskip.sources.base import DatasetSource

#: Default limit on the compounded false-positive rate of an IN list.
MAX_IN_FPP = 0.5
#: Bytes of fragment-table row groups an open index keeps once read (and checked).
FRAGMENT_CACHE_BYTES = 16 << 20
#: Bytes a fragment table may take per file, at most: a row is a path (at most a few KiB)
#: and a few numbers; a table larger than this for its manifest's files is damaged.
FRAGMENT_ROW_BYTES = 8 << 10


# --------------------------------------------------------------------------- the index


class ZoneIndex:
    """One committed version of a zone index, opened for queries."""

    def __init__(self, storage: Storage, manifest: Manifest) -> None:
        self.storage = storage
        self.manifest = manifest
        self._fragments: pa.Table | None = None
        self._columns: dict[str, ColumnData] = {}
        # the fragment table read by row groups: its footer, each group's fragment id
        # range, and the groups read so far (checked), the most recently used last
        self._frag_file: Any = None
        self._frag_ranges: list[tuple[int, int]] | None = None
        self._frag_groups: OrderedDict[int, tuple[pa.Table, dict[int, int]]] = OrderedDict()
        self._frag_cached = 0
        self._by_path: dict[str, dict[str, Any]] | None = None
        #: Table snapshots matched with this version's fragments (listing.compare): the
        #: snapshot objects (Source.listing_key) and what does not depend on a predicate.
        self._matched: OrderedDict[int, tuple[object, Any]] = OrderedDict()

    # -- what it is ---------------------------------------------------------------

    @property
    def root(self) -> str:
        return self.storage.uri

    @property
    def version(self) -> int:
        return self.manifest.version

    @property
    def columns(self) -> dict[str, ColumnIndex]:
        return self.manifest.columns

    @property
    def source(self) -> Source:
        return from_json(self.manifest.source)

    def fragments(self) -> pa.Table:
        """The fragment table: ``fragment_id, path, size, mtime_ns, num_rows, format``."""
        if self._fragments is None:
            m = self.manifest
            if m.fragments is None:
                self._fragments = FRAGMENT_SCHEMA.empty_table()
            else:
                # (older manifests do not say how many files: then no bound)
                limit = FRAGMENT_ROW_BYTES * m.num_files + (1 << 20) if m.num_files else None
                self._fragments = self.storage.read_table(
                    m.fragments, max_bytes=limit, max_rows=m.fragment_rows
                )
        return self._fragments

    def fragments_by_path(self) -> dict[str, dict[str, Any]]:
        """Every row of the fragment table by its path (made once per open index: a
        lookup that checks the source compares every listed file with it)."""
        if self._by_path is None:
            self._by_path = {r["path"]: r for r in self.fragments().to_pylist()}
        return self._by_path

    def fragment_rows(self, fids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The fragment table's rows of ``fids``, reading only the row groups that can hold
        them (the table is sorted by fragment id)."""
        wanted = sorted(set(int(f) for f in fids))
        if not wanted or self.manifest.fragments is None:
            return {}
        if self._fragments is not None:
            table = self._fragments
            ids = pa.array(wanted, type=pa.uint64())
            rows = table.filter(pc.is_in(table.column("fragment_id"), value_set=ids)).to_pylist()
            return {int(r["fragment_id"]): r for r in rows}
        out: dict[int, dict[str, Any]] = {}
        for table, where, mine in self._fragment_groups(wanted):
            take = [where[f] for f in mine if f in where]
            for r in table.take(take).to_pylist() if take else ():
                out[int(r["fragment_id"])] = r  # a later row of an id wins, as in a scan
        return out

    def _fragment_groups(self, wanted: list[int]) -> list[tuple[pa.Table, dict[int, int], list]]:
        """The fragment table's row groups that can hold ``wanted`` (sorted ids), by
        their statistics, each with its row of each id and the ids of ``wanted`` in its
        range; the footer is read once per open index, and groups once read (and checked)
        are kept up to :data:`FRAGMENT_CACHE_BYTES`."""
        if self._frag_file is None:
            assert self.manifest.fragments is not None
            pf = self.storage.open_table(
                self.manifest.fragments, max_rows=self.manifest.fragment_rows
            )
            meta, ranges = pf.metadata, []
            for g in range(meta.num_row_groups):
                st = meta.row_group(g).column(0).statistics
                if st is None or not st.has_min_max:  # every group may hold any id
                    ranges = [(0, (1 << 64) - 1)] * meta.num_row_groups
                    break
                ranges.append((int(st.min), int(st.max)))
            self._frag_file, self._frag_ranges = pf, ranges
        assert self._frag_ranges is not None
        out = []
        for g, (lo, hi) in enumerate(self._frag_ranges):
            i, j = bisect.bisect_left(wanted, lo), bisect.bisect_right(wanted, hi)
            if i >= j:
                continue
            got = self._frag_groups.get(g)
            if got is None:  # read and checked, one group at a time
                table = self._frag_file.read_row_groups([g])
                ids = table.column("fragment_id").to_pylist()
                got = self._frag_groups[g] = (table, {f: k for k, f in enumerate(ids)})
                self._frag_cached += _group_bytes(table)
            self._frag_groups.move_to_end(g)
            out.append((*got, wanted[i:j]))
        while self._frag_cached > FRAGMENT_CACHE_BYTES and len(self._frag_groups) > len(out):
            self._frag_cached -= _group_bytes(self._frag_groups.popitem(last=False)[1][0])
        return out

    def zones(self, column: str) -> pa.Table:
        """The live zone table of ``column``, as Lance's: ``fragment_id, zone_start,
        zone_length, has_null, bloom_filter_data`` (and ``ndv``), sorted by fragment and
        start. Served segments give their filters back from the slabs (the whole column
        is read: an export, not a lookup)."""
        col = self.columns[params.column(column, list(self.columns), self.root)]
        with self._fits(col):
            return self._zone_table(col)

    def _zone_table(self, col: ColumnIndex) -> pa.Table:
        live = self._live()
        tables = []
        for s in col.segments:
            if s.directory:
                tables.append(self._served_table(col, s, live))
                continue
            for rel in s.zones:
                t = self.storage.read_table(rel)
                check_zone_table(t, col, self.manifest.zoning, self.storage.label(rel))
                tables.append(t.filter(pc.is_in(t.column("fragment_id"), value_set=live)))
        if not tables:
            return ZONE_SCHEMA.empty_table()
        zt = pa.concat_tables([t.select(ZONE_SCHEMA.names).cast(ZONE_SCHEMA) for t in tables])
        zt = zt.sort_by([("fragment_id", "ascending"), ("zone_start", "ascending")])
        key = zt.column("fragment_id").to_numpy() << 40 | zt.column("zone_start").to_numpy()
        first = np.ones(zt.num_rows, np.bool_)
        first[1:] = key[1:] != key[:-1]
        zt = zt.filter(pa.array(first))
        meta = zone_metadata(col, self.manifest.zoning)  # Lance's keys and bloomskip's
        return pa.Table.from_arrays(zt.columns, names=zt.column_names).replace_schema_metadata(
            meta
        )  # fields nullable, as Lance's

    def _directory(self, col: ColumnIndex, s: Segment) -> serving.Directory:
        d = serving.read_directory(self.storage, s.directory, s.directory_size, s.num_zones)
        if d.identity != col.identity():
            raise CorruptFileError(
                f"{self.storage.label(s.directory)}: holds {d.identity}, the manifest says "
                f"{col.identity()}"
            )
        return d

    def _served_table(self, col: ColumnIndex, s: Segment, live: pa.Array) -> pa.Table:
        d = self._directory(col, s)
        filters = serving.served_zones(self.storage, d, s.slabs)
        fragment = d.keys >> np.uint64(40)
        return pa.table(
            {
                "fragment_id": pa.array(fragment, pa.uint64()),
                "zone_start": pa.array(d.keys & np.uint64((1 << 40) - 1), pa.uint64()),
                "zone_length": pa.array(d.lengths, pa.uint64()),
                "has_null": pa.array((d.flags & serving.HAS_NULL) > 0),
                "bloom_filter_data": pa.array(filters, pa.binary()),
                "ndv": pa.array(d.ndv, pa.uint64()),
            }
        ).filter(pc.is_in(pa.array(fragment, pa.uint64()), value_set=live))

    def _zone_sizes(self, col: ColumnIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per live zone of ``col``: its fragment, filter bytes (0: none) and distinct
        count - from the directories, without reading a filter."""
        if not all(s.directory for s in col.segments):  # format 1: the tables themselves
            t = self.zones(col.name)
            nbytes = pc.binary_length(t.column("bloom_filter_data")).to_numpy()
            return (
                t.column("fragment_id").to_numpy().astype(np.uint64),
                nbytes.astype(np.int64),
                t.column("ndv").to_numpy().astype(np.float64),
            )
        live = np.sort(self._live().to_numpy().astype(np.uint64))
        frags, sizes, ndvs = [], [], []
        for s in col.segments:
            d = self._directory(col, s)
            blocks = np.array([c["blocks"] for c in d.classes] + [0] * 256, np.int64)
            frag = d.keys >> np.uint64(40)
            ok = np.isin(frag, live)
            frags.append(frag[ok])
            sizes.append(blocks[d.zone_class[ok]] * 32)
            ndvs.append(d.ndv[ok])
        if not frags:
            z = np.zeros(0, np.int64)
            return z.astype(np.uint64), z, z.astype(np.float64)
        return (
            np.concatenate(frags),
            np.concatenate(sizes).astype(np.int64),
            np.concatenate(ndvs).astype(np.float64),
        )

    def _live(self) -> pa.Array:
        return self.fragments().column("fragment_id").combine_chunks().cast(pa.uint64())

    @contextlib.contextmanager
    def _fits(self, col: ColumnIndex) -> Iterator[None]:
        """A ``MemoryError`` while reading ``col``'s zones as :class:`OutOfMemoryError`: a
        directory's zstd body can stand for thousands of times its size (a real one of
        uniform zones does), so a forged one of kilobytes can claim gigabytes."""
        try:
            yield
        except MemoryError as e:
            if isinstance(e, BloomskipError):
                raise
            zones = sum(s.num_zones for s in col.segments)
            raise OutOfMemoryError(
                f"{self.root}: column {col.name!r}: its {zones:,} zones (as the manifest "
                "says) do not fit in memory: a damaged or forged index, or too big for this "
                "machine"
            ) from None

    def _column(self, name: str) -> ColumnData:
        if name not in self._columns:
            col, m = self.columns[name], self.manifest
            with self._fits(col):
                if all(s.directory for s in col.segments):  # no fragment table needed
                    dropped = np.array(sorted(m.dropped), dtype=np.uint64)
                    data = load_column(self.storage, col, m.zoning, dropped=dropped)
                else:
                    live = np.sort(self._live().to_numpy().astype(np.uint64))
                    data = load_column(self.storage, col, m.zoning, live=live)
            self._columns[name] = data
        return self._columns[name]

    # -- queries ------------------------------------------------------------------

    def schema(self) -> dict[str, Column]:
        """The binding schema: every source column; indexed ones with the index's type."""
        out, unmarked = {}, self._unmarked()
        for f in self.manifest.schema:
            col = self.columns.get(f.name)
            clock = JVM_CLOCK_KEY in (f.metadata or {}) or (  # an ORC TIMESTAMP
                unmarked and pa.types.is_timestamp(f.type) and f.type.tz is None
            )
            out[f.name] = (
                Column(f.type, f.name, jvm_clock=clock)
                if col is None
                else Column(
                    col.arrow_type,
                    f.name,
                    microseconds=col.read_at_microseconds,
                    jvm_clock=clock,
                )
            )
        return out

    def _unmarked(self) -> bool:
        """Is this an index of a lake of files built before bloomskip marked its schema's
        ORC TIMESTAMP columns? Any of its timestamps without a zone may then be one."""
        if MARKED_KEY in (self.manifest.schema.metadata or {}):
            return False
        source = self.manifest.source  # its kind, without opening its file system
        return not (isinstance(source, dict) and source.get("filesystem") in DATASETS)

    def query(
        self,
        predicate: str | Expression,
        *,
        check_source: bool = True,
        max_in_fpp: float = MAX_IN_FPP,
        as_of: int | None = None,
        zone: str | None = None,
    ) -> QueryResult:
        """Candidate files and zones for ``predicate`` (SQL text or an expression tree).

        ``check_source=True`` (the default for a lake of files) lists the source: files
        added or rewritten since indexing are candidates in full, files removed are not
        returned. ``check_source=False`` trusts the index and lists nothing: a lookup then
        reads only the zones' blocks and the candidates' entries of the fragment table,
        whatever the lake's size; files added or changed since the last refresh are
        missed (for a lake known unchanged, or refreshed after each append).

        For a table (Delta, Iceberg) the source's "listing" is a snapshot's own file list:
        the latest snapshot, or ``as_of`` (a Delta version, an Iceberg snapshot id: time
        travel). Files of that snapshot the index has not seen are candidates in full;
        files the index holds that the snapshot does not are never returned; partition
        values prune files in the same predicate tree as the filters.

        ``zone``: the time zone in which a date or timestamp literal without an offset
        names a wall clock, against a column of instants (an engine's session time zone:
        Spark's ``spark.sql.session.timeZone``); None reads it as UTC and, on a machine
        in another zone, in that zone too.
        """
        t0 = time.perf_counter()
        params.predicate(predicate)
        params.flag(check_source, "check_source")
        max_in_fpp = params.probability(max_in_fpp, "max_in_fpp")
        if as_of is not None:
            as_of = params.count(as_of, "as_of", 0, params.MAX_AS_OF)
        zone = _zone(zone)
        src = self.source
        if as_of is not None:
            if not check_source:
                raise InvalidParameterError(
                    "as_of reads the table's snapshot; it cannot be used with check_source=False"
                )
            src = src.as_of(as_of)
        res = QueryResult(self.root, self.version, str(predicate))
        if not isinstance(src, DatasetSource):
            predicate = self._known_columns(predicate, res.notes)
        listing: dict[int, SourceFile] | None = None
        known: KnownValues | None = None
        columns, aliases, pruned = self.columns, {}, []
        if check_source:
            try:
                seen = compare(self, src, predicate, zone)
            except SourceError as e:  # a lake moved, deleted or out of reach
                raise SourceError(
                    f"{e} (the index checks its source; check_source=False, "
                    "--no-source-check, answers from the index alone)"
                ) from None
            bound, fids, known, listing = seen.bound, seen.fids, seen.known, seen.fresh
            columns, aliases, pruned = seen.columns, seen.aliases, seen.pruned
            res.snapshot, res.sizes, res.rows_total = seen.snapshot, seen.sizes, seen.rows_total
            res.files.extend(FileCandidate(uri, why) for uri, why in seen.stale)
            res.skipped.extend((uri, "partition values") for uri in pruned)
            res.files_total = len(seen.stale) + len(pruned) + len(listing)
        else:
            bound = bind(predicate, self.schema(), zone)
            res.notes.append("source not listed: files added or changed since are missed")
            res.files.extend(
                FileCandidate(src.uri_of(p), "not indexed: unreadable when indexed")
                for p in self.manifest.unreadable
            )
            fids = None
            res.files_total = self.manifest.num_files + len(self.manifest.unreadable)
            res.rows_total = self.manifest.num_rows
        decided = decide(
            bound, fids, columns, lambda c: self._column(aliases.get(c, c)), max_in_fpp,
            res.notes, lambda: np.sort(self._live().to_numpy().astype(np.uint64)), known,
        )  # fmt: skip
        rows_of = self.fragment_rows(list(decided.candidates))
        for fid, (zones, why) in decided.candidates.items():
            r = rows_of.get(fid)
            if r is None:
                raise CorruptFileError(f"{self.root}: fragment {fid} is in no fragment table")
            path = src.uri_of(r["path"])
            if listing is None:
                res.sizes[path] = int(r["size"])
            if zones is None and int(r["num_rows"]) == 0:
                res.skipped.append(
                    (path, NOT_DATA_REASON if r.get("format") == NOT_DATA else EMPTY)
                )
                continue
            identity = (int(r["size"]), int(r["mtime_ns"]), r.get("etag"))
            res.files.append(FileCandidate(path, why, int(r["num_rows"]), zones, fid, identity))
        res.skip_reasons = decided.reasons()
        if pruned:  # files the index has not seen, ruled out by partition values
            why = "partition values"
            res.skip_reasons[why] = res.skip_reasons.get(why, 0) + len(pruned)
        if listing is not None:  # every ruled-out file is named: they are listed anyway
            skipped = decided.skipped
            pos = np.searchsorted(fids, skipped)
            named = seen.uris is not None and bool(np.all(pos < len(fids)))
            if named and not np.array_equal(fids[pos], skipped):  # (decide keeps to fids)
                named = False
            if named:  # each ruled-out file's URI, worked out once per snapshot
                res.skipped.extend(
                    zip(seen.uris[pos].tolist(), decided.skipped_reasons(), strict=True)
                )
            else:
                for fid, why in decided.skipped_items().items():
                    res.skipped.append((src.uri_of(listing[fid].path), why))
        else:  # named by count only: naming them would read the whole fragment table
            res.total_bytes = self.manifest.num_bytes or None
        res.zones_total, res.zones_candidate = decided.zones_total, decided.zones_candidate
        if listing is None and self.manifest.unreadable:  # read in full, named once
            whole = {src.uri_of(p) for p in self.manifest.unreadable}
            res.files = [f for f in res.files if f.fragment_id is None or f.path not in whole]
        res.files.sort(key=lambda f: f.path)
        res.seconds = time.perf_counter() - t0
        return res

    def _known_columns(self, predicate: str | Expression, notes: list[str]) -> Expression:
        """``predicate`` with conditions on columns a lake's index does not know made
        "may match", with a note: a partition directory's (``country=DE/``), or a column
        only files added since hold (the index keeps the schema of its first file). A
        predicate that names no column the index knows is an error (a misspelling?)."""
        tree = parse(predicate) if isinstance(predicate, str) else predicate
        schema = self.schema()
        named = {t.name for t in terms(tree)}
        pruned, unknown, _ = without_unknown(tree, schema)
        if unknown and named <= set(unknown):
            bind(tree, schema)  # raises "no column ..."
        tree = pruned
        if unknown:
            notes.append(
                f"not used for pruning: {', '.join(unknown)} (not a column the index knows: "
                "a partition directory's, a column of files added since, or a misspelling)"
            )
        return tree

    def row_filter(
        self,
        predicate: str | Expression,
        *,
        max_in_fpp: float = MAX_IN_FPP,
        zone: str | None = None,
    ) -> RowFilter:
        """The rows of a candidate's table that may match ``predicate``
        (:class:`~bloomskip.index.rows.RowFilter`): the index's rule per row, for a
        reader that holds a candidate zone's rows (a plain lake's files). ``zone``: as
        :meth:`query`'s."""
        params.predicate(predicate)
        max_in_fpp = params.probability(max_in_fpp, "max_in_fpp")
        return RowFilter(bind(predicate, self.schema(), _zone(zone)), self.columns, max_in_fpp)

    # -- status -------------------------------------------------------------------

    def status(self, *, check_source: bool = True) -> dict[str, Any]:
        """Coverage, stale files, size and predicted FPP per column (:mod:`.status`)."""
        from bloomskip.index.status import index_status

        return index_status(self, check_source=check_source)

    @staticmethod
    def status_text(st: dict[str, Any]) -> str:
        """:meth:`status` as a table: version, source, coverage, stale files, columns."""
        from bloomskip.index.status import status_text

        return status_text(st)


def _group_bytes(table: pa.Table) -> int:
    """What a kept row group of the fragment table holds: its values and its id map."""
    return table.nbytes + 100 * table.num_rows


def open_index(index_path: str | os.PathLike, *, version: int | None = None) -> ZoneIndex:
    """Open the latest (or a given) committed version of the index at ``index_path`` (a
    local directory or an object-store URI)."""
    params.path(index_path, "index_path")
    version = params.version(version)
    storage = open_storage(index_path)
    return ZoneIndex(storage, store.read_manifest(storage, version))


def _zone(zone: Any) -> str | None:
    """A session time zone argument: a name (``America/New_York``, ``+02:00``) or None."""
    if zone is not None and (not isinstance(zone, str) or not zone.strip()):
        raise InvalidParameterError(f"zone must be a time zone name, not {zone!r}")
    return zone


__all__ = [
    "Decided",
    "FileCandidate",
    "QueryResult",
    "ZoneIndex",
    "decide",
    "evaluate",
    "open_index",
]
