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
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip._json import attributes
from bloomskip.errors import CorruptFileError, InvalidParameterError
from bloomskip.expr.bind import Column, bind, referenced
from bloomskip.expr.expressions import BoundReference, Expression
from bloomskip.index import serving, store
from bloomskip.index.evidence import Universe, column_evidence
from bloomskip.index.known import KnownValues
from bloomskip.index.known import prune as prune_known
from bloomskip.index.layout import (
    FRAGMENT_SCHEMA,
    ZONE_SCHEMA,
    ColumnIndex,
    Manifest,
    Segment,
    check_zone_table,
    snapshot_text,
    zone_metadata,
)
from bloomskip.index.listing import compare
from bloomskip.index.storage import Storage, open_storage
from bloomskip.index.zonedata import KEY_SHIFT, ColumnData, load_column
from bloomskip.prune.engine import Pruner
from bloomskip.prune.evidence import ColumnEvidence, Proof
from bloomskip.sources import Source, SourceFile, from_json

#: Default limit on the compounded false-positive rate of an IN list.
MAX_IN_FPP = 0.5


@dataclass(frozen=True)
class FileCandidate:
    """A file that may hold matching rows; ``zones`` None means the whole file."""

    path: str
    reason: str
    num_rows: int | None = None
    zones: list[tuple[int, int]] | None = None  # (zone_start, zone_length) row ranges
    fragment_id: int | None = None

    @property
    def rows(self) -> int | None:
        if self.zones is None:
            return self.num_rows
        return sum(n for _, n in self.zones)

    #: Its JSON, in the key order ``index query --json`` has always printed.
    to_json = partialmethod(attributes, "path reason fragment_id num_rows zones")


@dataclass
class QueryResult:
    """Candidate files and zones for one predicate."""

    index: str
    version: int
    predicate: str
    files: list[FileCandidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why), when named
    skip_reasons: dict[str, int] = field(default_factory=dict)  # why -> files ruled out
    files_total: int = 0
    zones_total: int = 0
    zones_candidate: int = 0
    rows_total: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sizes: dict[str, int] = field(default_factory=dict)  # path -> bytes, as listed
    total_bytes: int | None = None  # the lake's bytes when not every size is known
    #: The table snapshot the answer is for (a table source, the source checked).
    snapshot: dict[str, Any] | None = None

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def rows_candidate(self) -> int:
        return sum(f.rows or 0 for f in self.files)

    @property
    def bytes_total(self) -> int:
        return self.total_bytes if self.total_bytes is not None else sum(self.sizes.values())

    @property
    def files_skipped(self) -> int:
        """Files ruled out (empty files among them)."""
        empty = sum(1 for _, why in self.skipped if why == "empty file")
        return sum(self.skip_reasons.values()) + empty

    @property
    def bytes_candidate(self) -> int:
        """Bytes of the candidate files (all of each: zones are row ranges, not bytes)."""
        return sum(self.sizes.get(f.path, 0) for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "version": self.version,
            "predicate": self.predicate,
            "files_total": self.files_total,
            "files_candidate": len(self.files),
            "zones_total": self.zones_total,
            "zones_candidate": self.zones_candidate,
            "rows_total": self.rows_total,
            "rows_candidate": self.rows_candidate,
            "bytes_total": self.bytes_total,
            "bytes_candidate": self.bytes_candidate,
            "notes": self.notes,
            "seconds": round(self.seconds, 6),
            "files": [f.to_json() for f in self.files],
            "skip_reasons": self.skip_reasons,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        } | ({} if self.snapshot is None else {"snapshot": self.snapshot})

    # -- text: what ``bloomskip index query`` prints ----------------------------------

    def to_text(self) -> str:
        """Each candidate file with its row ranges (or whole file) and why; notes; totals."""
        at = "" if self.snapshot is None else f", table {snapshot_text(self.snapshot)}"
        lines = [f"{self.index} (version {self.version}{at}): WHERE {self.predicate}"]
        fragments = self.files and self.files[0].path.startswith("fragment:")
        for f in self.files:
            zones = (
                "whole file"
                if f.zones is None
                else ", ".join(f"rows {s:,}+{n:,}" for s, n in f.zones[:4])
                + (f", ... ({len(f.zones)} zones)" if len(f.zones) > 4 else "")
            )
            lines.append(f"  {f.path}: {zones} ({f.reason})")
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(
            f"{len(self.files)} of {self.files_total} {'fragments' if fragments else 'files'}, "
            f"{self.zones_candidate:,} of {self.zones_total:,} zones may match; "
            f"{self.rows_candidate:,} of {self.rows_total:,} rows to read "
            f"({self.seconds * 1000:.1f} ms)"
        )
        return "\n".join(lines)


# --------------------------------------------------------------------------- the index


class ZoneIndex:
    """One committed version of a zone index, opened for queries."""

    def __init__(self, storage: Storage, manifest: Manifest) -> None:
        self.storage = storage
        self.manifest = manifest
        self._fragments: pa.Table | None = None
        self._columns: dict[str, ColumnData] = {}

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
                self._fragments = self.storage.read_table(m.fragments)
        return self._fragments

    def fragment_rows(self, fids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The fragment table's rows of ``fids``, reading only the row groups that can hold
        them (the table is sorted by fragment id)."""
        wanted = sorted(set(int(f) for f in fids))
        if not wanted or self.manifest.fragments is None:
            return {}
        if self._fragments is not None:
            table = self._fragments
        else:
            pf = self.storage.open_table(self.manifest.fragments)
            groups = []
            meta = pf.metadata
            for g in range(meta.num_row_groups):
                st = meta.row_group(g).column(0).statistics
                if st is None or not st.has_min_max:
                    groups = list(range(meta.num_row_groups))
                    break
                lo, hi = int(st.min), int(st.max)
                i = bisect.bisect_left(wanted, lo)
                if i < len(wanted) and wanted[i] <= hi:
                    groups.append(g)
            table = pf.read_row_groups(groups) if groups else FRAGMENT_SCHEMA.empty_table()
        ids = pa.array(wanted, type=pa.uint64())
        rows = table.filter(pc.is_in(table.column("fragment_id"), value_set=ids)).to_pylist()
        return {int(r["fragment_id"]): r for r in rows}

    def zones(self, column: str) -> pa.Table:
        """The live zone table of ``column``, as Lance's: ``fragment_id, zone_start,
        zone_length, has_null, bloom_filter_data`` (and ``ndv``), sorted by fragment and
        start. Served segments give their filters back from the slabs (the whole column
        is read: an export, not a lookup)."""
        col = self.columns[column]
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

    def _column(self, name: str) -> ColumnData:
        if name not in self._columns:
            col, m = self.columns[name], self.manifest
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
        out = {}
        for f in self.manifest.schema:
            col = self.columns.get(f.name)
            out[f.name] = Column(col.arrow_type if col else f.type, f.name)
        return out

    def query(
        self,
        predicate: str | Expression,
        *,
        check_source: bool = True,
        max_in_fpp: float = MAX_IN_FPP,
        as_of: int | None = None,
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
        """
        t0 = time.perf_counter()
        src = self.source
        if as_of is not None:
            if not check_source:
                raise InvalidParameterError(
                    "as_of reads the table's snapshot; it cannot be used with check_source=False"
                )
            src = src.as_of(as_of)
        res = QueryResult(self.root, self.version, str(predicate))
        listing: dict[int, SourceFile] | None = None
        known: KnownValues | None = None
        columns, aliases, pruned = self.columns, {}, []
        if check_source:
            seen = compare(self, src, predicate)
            bound, fids, known, listing = seen.bound, seen.fids, seen.known, seen.fresh
            columns, aliases, pruned = seen.columns, seen.aliases, seen.pruned
            res.snapshot, res.sizes, res.rows_total = seen.snapshot, seen.sizes, seen.rows_total
            res.files.extend(FileCandidate(uri, why) for uri, why in seen.stale)
            res.skipped.extend((uri, "partition values") for uri in pruned)
            res.files_total = len(seen.stale) + len(pruned) + len(listing)
        else:
            bound = bind(predicate, self.schema())
            res.notes.append("source not listed: files added or changed since are missed")
            fids = None
            res.files_total = self.manifest.num_files
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
                res.skipped.append((path, "empty file"))
                continue
            res.files.append(FileCandidate(path, why, int(r["num_rows"]), zones, fid))
        res.skip_reasons = decided.reasons()
        if pruned:  # files the index has not seen, ruled out by partition values
            why = "partition values"
            res.skip_reasons[why] = res.skip_reasons.get(why, 0) + len(pruned)
        if listing is not None:  # every ruled-out file is named: they are listed anyway
            for fid, why in decided.skipped_items().items():
                res.skipped.append((src.uri_of(listing[fid].path), why))
        else:  # named by count only: naming them would read the whole fragment table
            res.total_bytes = self.manifest.num_bytes or None
        res.zones_total, res.zones_candidate = decided.zones_total, decided.zones_candidate
        res.files.sort(key=lambda f: f.path)
        res.seconds = time.perf_counter() - t0
        return res

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


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` by a sort and a neighbour test (its hash table is ~20x slower on
    sorted runs of uint64 keys)."""
    a = np.sort(a)
    first = np.ones(a.shape[0], dtype=np.bool_)  # also right for an empty array
    first[1:] = a[1:] != a[:-1]
    return a[first]


def _own_universe(data: ColumnData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The files, zone keys and each zone's file position of one column's zones, made
    once per loaded column (a warm lookup does not redo them)."""
    if data.universe is None:
        fragment = data.key >> KEY_SHIFT  # sorted, as the keys are
        first = np.ones(fragment.shape[0], dtype=np.bool_)
        first[1:] = fragment[1:] != fragment[:-1]
        data.universe = (fragment[first], data.key, np.cumsum(first, dtype=np.int64) - 1)
    return data.universe


@dataclass
class Decided:
    """Per candidate file (fragment id): its candidate zones (None: the whole file) and
    why; the files ruled out, as arrays (a lookup over a large lake rules out most of its
    files: no per-file Python object for them)."""

    candidates: dict[int, tuple[list[tuple[int, int]] | None, str]] = field(default_factory=dict)
    skipped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # fids
    by_file_filter: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))
    #: Ruled out by a table's partition values (None: none were used).
    by_partition: np.ndarray | None = None
    zones_total: int = 0
    zones_candidate: int = 0

    def _why(self) -> np.ndarray:
        """Per ruled-out file: 0 every zone ruled out, 1 file filter, 2 partition values."""
        why = self.by_file_filter.astype(np.int8)
        if self.by_partition is not None:
            why[self.by_partition] = 2
        return why

    def reasons(self) -> dict[str, int]:
        """How many files were ruled out, by reason."""
        counts = np.bincount(self._why(), minlength=3)
        return {_WHY[k]: int(v) for k, v in enumerate(counts) if v}

    def skipped_items(self) -> dict[int, str]:
        """Each ruled-out file and why (for callers that name them all)."""
        return {
            int(f): _WHY[w]
            for f, w in zip(self.skipped.tolist(), self._why().tolist(), strict=True)
        }


_WHY = ("every zone ruled out", "file filter", "partition values")


def decide(
    bound: Expression,
    fids: np.ndarray | None,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], ColumnData],
    max_in_fpp: float,
    notes: list[str],
    all_fids: Callable[[], np.ndarray] | None = None,
    known: KnownValues | None = None,
) -> Decided:
    """Decide the files ``fids`` (sorted uint64) for ``bound`` with the pruning engine over
    the files and the zones ``load(column)`` returns (``columns`` says how each column is
    hashed). ``fids`` None: every file the index holds - those with zones of a referenced
    column, those that column could not be indexed for, and (``all_fids``) every file
    when the predicate uses no indexed column. ``known``: per file of ``fids`` (in that
    order), the values of a table's partition columns, decided in the same tree."""
    out = Decided()
    cols = [r.name for r in referenced(bound) if r.name in columns]
    partitions = known is not None and fids is not None and known.uses(bound)
    if not cols:
        everything = fids if fids is not None else (all_fids() if all_fids else np.zeros(0))
        may = np.ones(everything.shape[0], np.bool_)
        if partitions:
            n = everything.shape[0]
            may = prune_known(bound, known, n, np.arange(n), notes=notes)
        out.skipped = everything[~may].astype(np.uint64)
        out.by_file_filter = np.zeros(out.skipped.shape[0], np.bool_)
        out.by_partition = np.ones(out.skipped.shape[0], np.bool_)
        for fid in everything[may].tolist():
            out.candidates[int(fid)] = (None, "the predicate uses no indexed column")
        if not partitions:
            notes.append(
                f"{bound}: nothing the index answers (=, IN and IS [NOT] NULL on "
                f"{', '.join(columns)})"
            )
        return out
    data = {c: load(c) for c in cols}
    only = data[cols[0]] if len(cols) == 1 and not columns[cols[0]].failed else None
    if fids is None and only is not None:  # one column's zones are the universe
        fids, keys, zfile = _own_universe(only)
    else:
        if fids is None:  # every file the index holds for these columns
            parts = [d.fragment for d in data.values()]
            parts += [np.array(columns[c].failed, dtype=np.uint64) for c in cols]
            fids = _sorted_unique(np.concatenate(parts))
        # The zone universe: every zone any referenced column holds for these files.
        if len(data) == 1:
            keys = next(iter(data.values())).key  # sorted and unique already
        else:
            keys = _sorted_unique(np.concatenate([d.key for d in data.values()]))
        keys = keys[np.isin(keys >> KEY_SHIFT, fids)]
        zfile = np.searchsorted(fids, keys >> KEY_SHIFT).astype(np.int64)
    universe = Universe(fids, keys, zfile, max_in_fpp, notes)
    evidence = {c: column_evidence(columns[c], data[c], universe) for c in cols}
    rules = _IndexRules(columns, universe)

    nfiles = fids.shape[0]

    def files_of(ref: BoundReference) -> ColumnEvidence:
        if ref.name in evidence:
            return evidence[ref.name][0]
        if partitions and ref.name in known:
            return known.evidence(ref.name, np.arange(nfiles))
        return rules.unindexed(ref)

    def zones_of(ref: BoundReference) -> ColumnEvidence:
        if ref.name in evidence:
            return evidence[ref.name][1]
        if partitions and ref.name in known:
            return known.evidence(ref.name, zfile)
        return rules.unindexed(ref)

    file_may = Pruner(nfiles, files_of, reasons=False, notes=notes).decide(bound).may
    zone_may = Pruner(keys.shape[0], zones_of, reasons=False, notes=notes).decide(bound).may
    part_may = (
        prune_known(bound, known, nfiles, np.arange(nfiles)) if partitions else None
    )  # why a file is ruled out: its partition values alone
    out.zones_total = int(keys.shape[0])
    out.zones_candidate = int(zone_may.sum())
    # Per file: its candidate zones. A file without zones in the universe is not indexed
    # for any referenced column: a candidate in full (unless empty).
    n = fids.shape[0]
    zones_of_file = np.bincount(zfile, minlength=n)
    hits = np.bincount(zfile[zone_may], minlength=n)
    ruled_out = (zones_of_file > 0) & (hits == 0)
    by_partition = np.zeros(n, np.bool_)
    if part_may is not None:  # a file without zones is decided by its partition values
        by_partition = ~part_may | ((zones_of_file == 0) & ~file_may)
        ruled_out |= by_partition
    out.skipped = fids[ruled_out]
    out.by_partition = by_partition[ruled_out]
    out.by_file_filter = ~file_may[ruled_out] & ~out.by_partition
    first = np.searchsorted(zfile, np.arange(n), side="left")
    for i in np.flatnonzero(~ruled_out).tolist():
        fid = int(fids[i])
        if zones_of_file[i] == 0:
            out.candidates[fid] = (None, f"not indexed for {', '.join(cols)}")
            continue
        a, b = int(first[i]), int(first[i] + zones_of_file[i])
        hit = np.flatnonzero(zone_may[a:b]) + a
        out.candidates[fid] = (
            _zone_ranges(keys[hit], hit, data, evidence),
            f"{hit.size} of {b - a} zones may match",
        )
    return out


def evaluate(
    bound: Expression,
    indexed: list[dict[str, Any]],
    res: QueryResult,
    max_in_fpp: float,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], ColumnData],
    uri_of: Callable[[str], str],
) -> None:
    """Fill ``res`` with the candidates among ``indexed`` (fragment rows: ``fragment_id``,
    ``path``, ``num_rows``, sorted by ``fragment_id``) for ``bound`` (:func:`decide`).
    Readers of other zone tables use it (:mod:`bloomskip.lance`), so every index
    answers with the same rules."""
    fids = np.array([r["fragment_id"] for r in indexed], dtype=np.uint64)
    res.rows_total = sum(r["num_rows"] for r in indexed) + sum(f.num_rows or 0 for f in res.files)
    decided = decide(bound, fids, columns, load, max_in_fpp, res.notes)
    skipped = decided.skipped_items()
    res.skip_reasons = decided.reasons()
    for r in indexed:
        fid, path = int(r["fragment_id"]), uri_of(r["path"])
        if fid in skipped:
            res.skipped.append((path, skipped[fid]))
            continue
        zones, why = decided.candidates[fid]
        if zones is None and r["num_rows"] == 0:
            res.skipped.append((path, "empty file"))
            continue
        res.files.append(FileCandidate(path, why, r["num_rows"], zones, fid))
    res.zones_total, res.zones_candidate = decided.zones_total, decided.zones_candidate


class _IndexRules:
    """Notes for what the index does not answer: a column it does not index."""

    def __init__(self, columns: dict[str, ColumnIndex], universe: Universe) -> None:
        self.columns, self.universe = columns, universe

    def unindexed(self, ref: BoundReference) -> ColumnEvidence:
        self.universe.note(f"{ref.name} is not indexed: conditions on it may match")
        return _Unindexed(ref.name)


class _Unindexed(ColumnEvidence):
    """A column the index does not hold: every unit may match every condition."""

    def blocked(self, units: np.ndarray) -> Proof:
        return Proof(np.ones(units.shape[0], np.bool_), f"{self.name} is not indexed")


def _zone_ranges(
    keys: np.ndarray, hit: np.ndarray, data: dict[str, ColumnData], evidence: dict
) -> list[tuple[int, int]]:
    """(start, length) of candidate zones, lengths from any column holding each zone."""
    starts = (keys & np.uint64((1 << 40) - 1)).astype(np.int64)
    lengths = np.zeros(hit.shape[0], np.int64)
    found = np.zeros(hit.shape[0], np.bool_)
    for c, d in data.items():
        rows = evidence[c][1].c.zrow[hit]
        ok = (rows >= 0) & ~found
        lengths[ok] = d.length[rows[ok]].astype(np.int64)
        found |= ok
    return [(int(s), int(n)) for s, n in zip(starts, lengths, strict=True)]


def open_index(index_path: str | os.PathLike, *, version: int | None = None) -> ZoneIndex:
    """Open the latest (or a given) committed version of the index at ``index_path`` (a
    local directory or an object-store URI)."""
    storage = open_storage(index_path)
    return ZoneIndex(storage, store.read_manifest(storage, version))


__all__ = [
    "Decided",
    "FileCandidate",
    "QueryResult",
    "ZoneIndex",
    "decide",
    "evaluate",
    "open_index",
]
