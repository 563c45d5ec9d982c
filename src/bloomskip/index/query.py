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

Files are compared with the source as listed now: files the index does not know, and
files whose size or modification time changed since indexing, are candidates in full;
files removed since are not listed, so never returned. A column that could not be indexed
for a file (its values did not convert) leaves that file a candidate for that column.
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
from bloomskip.errors import CorruptFileError
from bloomskip.expr.bind import Column, bind, referenced
from bloomskip.expr.expressions import BoundReference, Expression
from bloomskip.index import serving, store
from bloomskip.index.evidence import Universe, column_evidence
from bloomskip.index.layout import (
    FRAGMENT_SCHEMA,
    ZONE_SCHEMA,
    ColumnIndex,
    Manifest,
    Segment,
    check_zone_table,
    zone_metadata,
)
from bloomskip.index.storage import Storage, open_storage
from bloomskip.index.zonedata import KEY_SHIFT, ColumnData, load_column
from bloomskip.prune.engine import Pruner
from bloomskip.prune.evidence import ColumnEvidence, Proof
from bloomskip.sbbf.sizing import putze_fpp_many
from bloomskip.sources import Source, SourceFile, from_json
from bloomskip.sources.base import unchanged

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
        }

    # -- text: what ``bloomskip index query`` prints ----------------------------------

    def to_text(self) -> str:
        """Each candidate file with its row ranges (or whole file) and why; notes; totals."""
        lines = [f"{self.index} (version {self.version}): WHERE {self.predicate}"]
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
    ) -> QueryResult:
        """Candidate files and zones for ``predicate`` (SQL text or an expression tree).

        ``check_source=True`` (the default for a lake of files) lists the source: files
        added or rewritten since indexing are candidates in full, files removed are not
        returned. ``check_source=False`` trusts the index and lists nothing: a lookup then
        reads only the zones' blocks and the candidates' entries of the fragment table,
        whatever the lake's size; files added or changed since the last refresh are
        missed (for a lake known unchanged, or refreshed after each append).
        """
        t0 = time.perf_counter()
        bound = bind(predicate, self.schema())
        res = QueryResult(self.root, self.version, str(predicate))
        src = self.source
        listing: dict[int, SourceFile] | None = None
        if check_source:
            rows = {r["path"]: r for r in self.fragments().to_pylist()}
            listing = {}
            for f in store.inside(self.storage, src, src.list()):
                res.sizes[src.uri_of(f.path)] = f.size
                r = rows.get(f.path)
                if r is None:
                    res.files.append(FileCandidate(src.uri_of(f.path), "not indexed"))
                elif not unchanged(r, f):
                    res.files.append(FileCandidate(src.uri_of(f.path), "changed since indexing"))
                else:
                    listing[int(r["fragment_id"])] = f
            fids = np.array(sorted(listing), dtype=np.uint64)
            res.files_total = len(res.files) + len(listing)
            res.rows_total = sum(int(rows[f.path]["num_rows"]) for f in listing.values())
        else:
            res.notes.append("source not listed: files added or changed since are missed")
            fids = None
            res.files_total = self.manifest.num_files
            res.rows_total = self.manifest.num_rows
        decided = decide(
            bound, fids, self.columns, self._column, max_in_fpp, res.notes,
            lambda: np.sort(self._live().to_numpy().astype(np.uint64)),
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
        """Coverage, stale files, size and predicted FPP per column."""
        frags = self.fragments()
        rows = {r["path"]: r for r in frags.to_pylist()}
        out: dict[str, Any] = {
            "index": self.root,
            "version": self.version,
            "committed_at": self.manifest.committed_at,
            "source": self.manifest.source.get("uri"),
            "zoning": {
                "zone_rows": self.manifest.zoning.zone_rows,
                "align": self.manifest.zoning.align,
            },
            "files_indexed": len(rows),
            "rows_indexed": int(sum(r["num_rows"] for r in rows.values())),
        }
        if check_source:
            listing = store.inside(self.storage, self.source, self.source.list())
            seen = {f.path: f for f in listing}
            stale = [f.path for f in listing if f.path in rows and not unchanged(rows[f.path], f)]
            new = [f.path for f in listing if f.path not in rows]
            gone = [p for p in rows if p not in seen]
            fresh = len(listing) - len(stale) - len(new)
            out.update(
                files_listed=len(listing),
                coverage=(fresh / len(listing)) if listing else 1.0,
                stale_files=stale,
                unindexed_files=new,
                removed_files=gone,
            )
        cols = {}
        total_rows = max(out["rows_indexed"], 1)
        for name, col in self.columns.items():
            frag, nbytes, ndv = self._zone_sizes(col)
            fpp = putze_fpp_many(ndv, nbytes) if nbytes.size else nbytes
            zone_bytes = int(nbytes.sum())
            file_bytes = sum(s.file_bytes for s in col.segments)
            cols[name] = {
                "arrow_type": str(col.arrow_type),
                "physical": col.physical_name,
                "encoding": col.encoding,
                "hash": f"{col.hash} seed {col.seed}",
                "sizing": col.sizing,
                "fpp_target": col.fpp,
                "files": int(np.unique(frag).shape[0]),
                "zones": int(frag.shape[0]),
                "segments": len(col.segments),
                "zone_filter_bytes": zone_bytes,
                "file_filter_bytes": file_bytes,
                "bytes_per_row": (zone_bytes + file_bytes) / total_rows,
                "disk_bytes": sum(self.storage.size(n) or 0 for s in col.segments for n in s.names),
                "predicted_fpp_mean": float(fpp.mean()) if nbytes.size else 0.0,
                "predicted_fpp_max": float(fpp.max()) if nbytes.size else 0.0,
            }
        out["columns"] = cols
        return out

    # -- text: what ``bloomskip index status`` prints ---------------------------------

    @staticmethod
    def status_text(st: dict[str, Any]) -> str:
        """:meth:`status` as a table: version, source, coverage, stale files, columns."""
        z = st["zoning"]
        lines = [
            f"{st['index']}: version {st['version']} ({st['committed_at']}), source {st['source']}",
            f"  zones of {z['zone_rows']:,} rows ({z['align']}); {st['files_indexed']} files, "
            f"{st['rows_indexed']:,} rows indexed; coverage {st['coverage']:.1%} of "
            f"{st['files_listed']} files listed",
        ]
        for key, what in (
            ("stale_files", "changed since indexing"),
            ("unindexed_files", "not indexed"),
            ("removed_files", "removed since indexing"),
        ):
            if st[key]:
                lines.append(f"  {len(st[key])} {what}: {', '.join(st[key][:5])}")
        lines.append(
            f"  {'column':20} {'type':14} {'sizing':7} {'zones':>8} {'filter bytes':>14} "
            f"{'B/row':>7} {'on disk':>12} {'pred. FPP':>10}"
        )
        for name, c in st["columns"].items():
            lines.append(
                f"  {name[:20]:20} {c['arrow_type'][:14]:14} {c['sizing']:7} {c['zones']:>8,} "
                f"{c['zone_filter_bytes'] + c['file_filter_bytes']:>14,} "
                f"{c['bytes_per_row']:>7.2f} {c['disk_bytes']:>12,} "
                f"{c['predicted_fpp_mean']:>10.2e}"
            )
        return "\n".join(lines)


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
    zones_total: int = 0
    zones_candidate: int = 0

    def reasons(self) -> dict[str, int]:
        """How many files were ruled out, by reason."""
        n = int(self.by_file_filter.sum())
        counts = {"file filter": n, "every zone ruled out": int(self.skipped.shape[0]) - n}
        return {k: v for k, v in counts.items() if v}

    def skipped_items(self) -> dict[int, str]:
        """Each ruled-out file and why (for callers that name them all)."""
        return {
            int(f): "file filter" if b else "every zone ruled out"
            for f, b in zip(self.skipped.tolist(), self.by_file_filter.tolist(), strict=True)
        }


def decide(
    bound: Expression,
    fids: np.ndarray | None,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], ColumnData],
    max_in_fpp: float,
    notes: list[str],
    all_fids: Callable[[], np.ndarray] | None = None,
) -> Decided:
    """Decide the files ``fids`` (sorted uint64) for ``bound`` with the pruning engine over
    the files and the zones ``load(column)`` returns (``columns`` says how each column is
    hashed). ``fids`` None: every file the index holds - those with zones of a referenced
    column, those that column could not be indexed for, and (``all_fids``) every file
    when the predicate uses no indexed column."""
    out = Decided()
    cols = [r.name for r in referenced(bound) if r.name in columns]
    if not cols:
        everything = fids if fids is not None else (all_fids() if all_fids else np.zeros(0))
        for fid in everything.tolist():
            out.candidates[int(fid)] = (None, "the predicate uses no indexed column")
        notes.append(
            f"{bound}: nothing the index answers (=, IN and IS [NOT] NULL on {', '.join(columns)})"
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

    def files_of(ref: BoundReference) -> ColumnEvidence:
        return evidence[ref.name][0] if ref.name in evidence else rules.unindexed(ref)

    def zones_of(ref: BoundReference) -> ColumnEvidence:
        return evidence[ref.name][1] if ref.name in evidence else rules.unindexed(ref)

    file_may = Pruner(fids.shape[0], files_of, reasons=False, notes=notes).decide(bound).may
    zone_may = Pruner(keys.shape[0], zones_of, reasons=False, notes=notes).decide(bound).may
    out.zones_total = int(keys.shape[0])
    out.zones_candidate = int(zone_may.sum())
    # Per file: its candidate zones. A file without zones in the universe is not indexed
    # for any referenced column: a candidate in full (unless empty).
    n = fids.shape[0]
    zones_of_file = np.bincount(zfile, minlength=n)
    hits = np.bincount(zfile[zone_may], minlength=n)
    ruled_out = (zones_of_file > 0) & (hits == 0)
    out.skipped = fids[ruled_out]
    out.by_file_filter = ~file_may[ruled_out]
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
