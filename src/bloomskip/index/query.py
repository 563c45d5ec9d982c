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

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import BloomskipError
from bloomskip.expr.bind import (
    BoundEqualTo,
    BoundIn,
    BoundIsNull,
    BoundNotNull,
    BoundPredicate,
    Column,
    bind,
    referenced,
)
from bloomskip.expr.expressions import AlwaysFalse, AlwaysTrue, And, Expression, Or, Unsupported
from bloomskip.expr.literals import NoMatch, Unknown, Values, to_arrow
from bloomskip.hashing import hash_values
from bloomskip.index import store
from bloomskip.index.kernels import probe_any
from bloomskip.index.layout import ColumnIndex, Manifest
from bloomskip.index.sources import Source, from_json
from bloomskip.sbbf.sizing import putze_fpp_many

#: Default limit on the compounded false-positive rate of an IN list.
MAX_IN_FPP = 0.5
_KEY_SHIFT = np.uint64(40)  # zone key = fragment_id << 40 | zone_start


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

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "reason": self.reason,
            "fragment_id": self.fragment_id,
            "num_rows": self.num_rows,
            "zones": None if self.zones is None else [list(z) for z in self.zones],
        }


@dataclass
class QueryResult:
    """Candidate files and zones for one predicate."""

    index: str
    version: int
    predicate: str
    files: list[FileCandidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    files_total: int = 0
    zones_total: int = 0
    zones_candidate: int = 0
    rows_total: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sizes: dict[str, int] = field(default_factory=dict)  # path -> bytes, as listed

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def rows_candidate(self) -> int:
        return sum(f.rows or 0 for f in self.files)

    @property
    def bytes_total(self) -> int:
        return sum(self.sizes.values())

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


# --------------------------------------------------------------------------- loading


@dataclass
class _Filters:
    """Filters back to back: ``words[offsets[i] : offsets[i] + sizes[i]]`` (in words);
    size 0 marks an unusable filter (always "may")."""

    words: np.ndarray
    offsets: np.ndarray
    sizes: np.ndarray

    @staticmethod
    def of(column: pa.ChunkedArray) -> _Filters:
        """All bitsets of a binary column in one aligned buffer. Entries that are not
        whole 32-byte blocks get size 0; the rest are copied past them, so one bad
        entry never shifts another."""
        datas, starts, lengths = [], [], []
        base = 0
        for ch in column.chunks:
            if len(ch) == 0:
                continue
            if not (pa.types.is_binary(ch.type) or pa.types.is_large_binary(ch.type)):
                raise BloomskipError(f"bloom_filter_data is {ch.type}, not binary")
            width = np.int64 if pa.types.is_large_binary(ch.type) else np.int32
            o = np.frombuffer(ch.buffers()[1], dtype=width)[ch.offset : ch.offset + len(ch) + 1]
            o = o.astype(np.int64)
            datas.append(np.frombuffer(ch.buffers()[2], dtype=np.uint8)[o[0] : o[-1]])
            starts.append(o[:-1] - o[0] + base)
            lengths.append(np.diff(o))
            base += int(o[-1] - o[0])
        if not datas:
            z = np.zeros(0, np.int64)
            return _Filters(np.zeros(0, np.uint32), z, z)
        raw = np.concatenate(datas) if len(datas) > 1 else datas[0]
        start, n = np.concatenate(starts), np.concatenate(lengths)
        ok = (n > 0) & (n % 32 == 0)
        if ok.all() and not (start % 4).any():
            return _Filters(raw.copy().view(np.uint32), start // 4, n // 4)
        sizes = np.where(ok, n, 0)
        dest = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        out = np.zeros(int(sizes.sum()), dtype=np.uint8)
        for i in np.flatnonzero(ok):  # rare: a malformed table
            out[dest[i] : dest[i] + sizes[i]] = raw[start[i] : start[i] + sizes[i]]
        return _Filters(out.view(np.uint32), dest // 4, sizes // 4)

    @staticmethod
    def empty() -> _Filters:
        z = np.zeros(0, np.int64)
        return _Filters(np.zeros(0, np.uint32), z, z)

    def take(self, order: np.ndarray) -> _Filters:
        return _Filters(self.words, self.offsets[order], self.sizes[order])

    def probe(self, rows: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        out = np.zeros(rows.shape[0], dtype=np.bool_)
        if rows.shape[0]:
            probe_any(self.words, self.offsets, self.sizes, rows.astype(np.int64), hashes, out)
        return out


@dataclass
class _ColumnData:
    """One column's live zones (sorted by fragment, start) and file filters."""

    key: np.ndarray  # uint64 zone keys, sorted
    fragment: np.ndarray
    start: np.ndarray
    length: np.ndarray
    has_null: np.ndarray
    ndv: np.ndarray
    zones: _Filters
    file_fragment: np.ndarray  # sorted
    file_has_null: np.ndarray
    file_ndv: np.ndarray
    files: _Filters


def _load_column(root: str, col: ColumnIndex, live: np.ndarray) -> _ColumnData:
    live_arr = pa.array(live, type=pa.uint64())
    zt = _concat(root, [s.zones for s in col.segments], live_arr)
    ft = _concat(root, [s.files for s in col.segments], live_arr)
    return column_data(col.name, zt, ft)


def column_data(name: str, zt: pa.Table, ft: pa.Table | None = None) -> _ColumnData:
    """One column's zones from in-memory tables: ``zt`` with the zone table's columns
    (``fragment_id, zone_start, zone_length, has_null, bloom_filter_data, ndv``), ``ft``
    the file table's (None or empty: no file filters, every file "may match")."""
    if ft is None:
        ft = pa.table({"fragment_id": pa.array([], pa.uint64())})
    frag = _u64(zt, "fragment_id")
    start = _u64(zt, "zone_start")
    if zt.num_rows and (frag.max() >= 1 << 24 or start.max() >= 1 << 40):
        raise BloomskipError(f"{name}: zone addresses out of range")
    key = (frag << _KEY_SHIFT) | start
    order = np.argsort(key, kind="stable")
    key = key[order]
    dup = np.zeros(key.shape[0], dtype=np.bool_)
    dup[1:] = key[1:] == key[:-1]  # a zone written twice: keep the first
    keep = order[~dup]
    zones = (
        _Filters.of(zt.column("bloom_filter_data")).take(keep) if zt.num_rows else _Filters.empty()
    )
    ffrag = _u64(ft, "fragment_id")
    forder = np.argsort(ffrag, kind="stable")
    fdup = np.zeros(forder.shape[0], dtype=np.bool_)
    fdup[1:] = ffrag[forder][1:] == ffrag[forder][:-1]
    fkeep = forder[~fdup]
    return _ColumnData(
        key=key[~dup],
        fragment=frag[keep],
        start=start[keep],
        length=_u64(zt, "zone_length")[keep],
        has_null=zt.column("has_null").to_numpy().astype(np.bool_)[keep]
        if zt.num_rows
        else np.zeros(0, np.bool_),
        ndv=_u64(zt, "ndv")[keep],
        zones=zones,
        file_fragment=ffrag[fkeep],
        file_has_null=ft.column("has_null").to_numpy().astype(np.bool_)[fkeep]
        if ft.num_rows
        else np.zeros(0, np.bool_),
        file_ndv=_u64(ft, "ndv")[fkeep],
        files=_Filters.of(ft.column("bloom_filter_data")).take(fkeep)
        if ft.num_rows
        else _Filters.empty(),
    )


def _concat(root: str, rels: list[str], live: pa.Array) -> pa.Table:
    tables = []
    for rel in rels:
        t = store.read_table(root, rel)
        tables.append(t.filter(pc.is_in(t.column("fragment_id"), value_set=live)))
    if not tables:
        return pa.table({"fragment_id": pa.array([], pa.uint64())})
    return pa.concat_tables(tables, promote_options="permissive")


def _u64(t: pa.Table, name: str) -> np.ndarray:
    if t.num_rows == 0:
        return np.zeros(0, np.uint64)
    return t.column(name).to_numpy().astype(np.uint64)


# --------------------------------------------------------------------------- the index


@dataclass
class _Ans:
    files: np.ndarray  # bool over indexed fragments
    zones: np.ndarray  # bool over the zone universe


class ZoneIndex:
    """One committed version of a zone index, opened for queries."""

    def __init__(self, root: str, manifest: Manifest) -> None:
        self.root = root
        self.manifest = manifest
        self._fragments: pa.Table | None = None
        self._columns: dict[str, _ColumnData] = {}

    # -- what it is ---------------------------------------------------------------

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
                from bloomskip.index.layout import FRAGMENT_SCHEMA

                self._fragments = FRAGMENT_SCHEMA.empty_table()
            else:
                self._fragments = store.read_table(self.root, m.fragments)
        return self._fragments

    def zones(self, column: str) -> pa.Table:
        """The live zone table of ``column``: Lance's columns, sorted by fragment and start."""
        d = self._column(column)
        spans = zip(d.zones.offsets, d.zones.sizes, strict=True)
        data = [d.zones.words[o : o + s].tobytes() for o, s in spans]
        return pa.table(
            {
                "fragment_id": pa.array(d.fragment, pa.uint64()),
                "zone_start": pa.array(d.start, pa.uint64()),
                "zone_length": pa.array(d.length, pa.uint64()),
                "has_null": pa.array(d.has_null),
                "bloom_filter_data": pa.array(data, pa.binary()),
                "ndv": pa.array(d.ndv, pa.uint64()),
            }
        )

    def _column(self, name: str) -> _ColumnData:
        if name not in self._columns:
            live = np.sort(self.fragments().column("fragment_id").to_numpy().astype(np.uint64))
            self._columns[name] = _load_column(self.root, self.columns[name], live)
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

        ``check_source=False`` trusts the index without listing the source: faster, but
        files added or rewritten since the last refresh are then missed - only for a
        source known to be unchanged.
        """
        t0 = time.perf_counter()
        bound = bind(predicate, self.schema())
        res = QueryResult(self.root, self.version, str(predicate))
        frags = self.fragments()
        src = self.source
        rows = {r["path"]: r for r in frags.to_pylist()}
        indexed: list[dict[str, Any]] = []
        if check_source:
            for f in src.list():
                res.sizes[src.uri_of(f.path)] = f.size
                r = rows.get(f.path)
                if r is None:
                    res.files.append(FileCandidate(src.uri_of(f.path), "not indexed"))
                elif (r["size"], r["mtime_ns"]) != (f.size, f.mtime_ns):
                    res.files.append(FileCandidate(src.uri_of(f.path), "changed since indexing"))
                else:
                    indexed.append(r)
        else:
            indexed = list(rows.values())
            res.sizes = {src.uri_of(p): int(r["size"]) for p, r in rows.items()}
            res.notes.append("source not listed: files added or changed since are missed")
        res.files_total = len(res.files) + len(indexed)
        indexed.sort(key=lambda r: r["fragment_id"])
        self._evaluate(bound, indexed, res, max_in_fpp)
        res.files.sort(key=lambda f: f.path)
        res.seconds = time.perf_counter() - t0
        return res

    def _evaluate(
        self,
        bound: Expression,
        indexed: list[dict[str, Any]],
        res: QueryResult,
        max_in_fpp: float,
    ) -> None:
        evaluate(bound, indexed, res, max_in_fpp, self.columns, self._column, self.source.uri_of)

    # -- status -------------------------------------------------------------------

    def status(self, *, check_source: bool = True) -> dict[str, Any]:
        """Coverage, stale files, size and predicted FPP per column."""
        frags = self.fragments()
        rows = {r["path"]: r for r in frags.to_pylist()}
        out: dict[str, Any] = {
            "index": self.root,
            "version": self.version,
            "committed_at": self.manifest.committed_at,
            "source": self.manifest.source["uri"],
            "zoning": {
                "zone_rows": self.manifest.zoning.zone_rows,
                "align": self.manifest.zoning.align,
            },
            "files_indexed": len(rows),
            "rows_indexed": int(sum(r["num_rows"] for r in rows.values())),
        }
        if check_source:
            listing = self.source.list()
            seen = {f.path: f for f in listing}
            stale = [
                f.path
                for f in listing
                if f.path in rows
                and (rows[f.path]["size"], rows[f.path]["mtime_ns"]) != (f.size, f.mtime_ns)
            ]
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
            d = self._column(name)
            nbytes = d.zones.sizes * 4
            fpp = putze_fpp_many(d.ndv.astype(np.float64), nbytes) if nbytes.size else nbytes
            zone_bytes = int(nbytes.sum())
            file_bytes = int((d.files.sizes * 4).sum())
            cols[name] = {
                "arrow_type": str(col.arrow_type),
                "physical": col.physical_name,
                "encoding": col.encoding,
                "hash": f"{col.hash} seed {col.seed}",
                "sizing": col.sizing,
                "fpp_target": col.fpp,
                "files": int(np.unique(d.fragment).shape[0]),
                "zones": int(d.key.shape[0]),
                "segments": len(col.segments),
                "zone_filter_bytes": zone_bytes,
                "file_filter_bytes": file_bytes,
                "bytes_per_row": (zone_bytes + file_bytes) / total_rows,
                "disk_bytes": sum(
                    _size(self.root, s.zones) + _size(self.root, s.files) for s in col.segments
                ),
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


def evaluate(
    bound: Expression,
    indexed: list[dict[str, Any]],
    res: QueryResult,
    max_in_fpp: float,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], _ColumnData],
    uri_of: Callable[[str], str],
) -> None:
    """Fill ``res`` with the candidates among ``indexed`` (fragment rows: ``fragment_id``,
    ``path``, ``num_rows``, sorted by ``fragment_id``) for ``bound``: the vectorized
    evaluation over the zones ``load(column)`` returns, ``columns`` saying how each
    column is hashed. Shared by :class:`ZoneIndex` and readers of other zone tables
    (:mod:`bloomskip.lance`), so every index answers with the same rules."""
    fids = np.array([r["fragment_id"] for r in indexed], dtype=np.uint64)
    res.rows_total = sum(r["num_rows"] for r in indexed) + sum(f.num_rows or 0 for f in res.files)
    cols = [r.name for r in referenced(bound) if r.name in columns]
    if not cols:
        for r in indexed:
            res.files.append(
                FileCandidate(
                    uri_of(r["path"]),
                    "the predicate uses no indexed column",
                    r["num_rows"],
                    None,
                    r["fragment_id"],
                )
            )
        res.notes.append(
            f"{bound}: nothing the index answers (=, IN and IS [NOT] NULL on {', '.join(columns)})"
        )
        return
    data = {c: load(c) for c in cols}
    # The zone universe: every zone any referenced column holds for these files.
    if len(data) == 1:
        keys = next(iter(data.values())).key  # sorted and unique already
    else:  # a sort and a neighbour test: np.unique hashes, ~20x slower here
        keys = np.sort(np.concatenate([d.key for d in data.values()]))
        first = np.ones(keys.shape[0], dtype=np.bool_)  # also right for no zones at all
        first[1:] = keys[1:] != keys[:-1]
        keys = keys[first]
    keys = keys[np.isin(keys >> _KEY_SHIFT, fids)]
    zfile = np.searchsorted(fids, keys >> _KEY_SHIFT)
    ctx = _Context(columns, bound, fids, keys, zfile, data, max_in_fpp, res.notes)
    ans = ctx.eval(bound)
    res.zones_total = int(keys.shape[0])
    res.zones_candidate = int(ans.zones.sum())
    # Per file: its candidate zones; a file without zones in the universe is decided
    # by the file-level answer alone (its columns are not indexed for it).
    first = np.searchsorted(zfile, np.arange(fids.shape[0]), side="left")
    last = np.searchsorted(zfile, np.arange(fids.shape[0]), side="right")
    for i, r in enumerate(indexed):
        path = uri_of(r["path"])
        a, b = int(first[i]), int(last[i])
        if a == b:
            if r["num_rows"] == 0:
                res.skipped.append((path, "empty file"))
            elif ans.files[i]:
                res.files.append(
                    FileCandidate(
                        path,
                        f"not indexed for {', '.join(cols)}",
                        r["num_rows"],
                        None,
                        r["fragment_id"],
                    )
                )
            else:
                res.skipped.append((path, "ruled out by the file-level answer"))
            continue
        hit = np.flatnonzero(ans.zones[a:b]) + a
        if hit.size == 0:
            why = "file filter" if not ans.files[i] else "every zone ruled out"
            res.skipped.append((path, why))
            continue
        zones = _zone_ranges(keys[hit], data, hit, ctx)
        res.files.append(
            FileCandidate(
                path,
                f"{hit.size} of {b - a} zones may match",
                r["num_rows"],
                zones,
                r["fragment_id"],
            )
        )


class _Context:
    """State of one vectorized evaluation."""

    def __init__(self, columns, bound, fids, keys, zfile, data, max_in_fpp, notes) -> None:
        self.columns: dict[str, ColumnIndex] = columns
        self.fids = fids
        self.keys = keys
        self.zfile = zfile
        self.data = data
        self.max_in_fpp = max_in_fpp
        self.notes: list[str] = notes
        # per column: the row of each universe zone / file in its data, -1 if none
        self.zrow = {c: _rows_of(d.key, keys) for c, d in data.items()}
        self.frow = {c: _rows_of(d.file_fragment, fids) for c, d in data.items()}

    def ones(self) -> _Ans:
        return _Ans(np.ones(self.fids.shape[0], np.bool_), np.ones(self.keys.shape[0], np.bool_))

    def zeros(self) -> _Ans:
        return _Ans(np.zeros(self.fids.shape[0], np.bool_), np.zeros(self.keys.shape[0], np.bool_))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def eval(self, e: Expression) -> _Ans:
        if isinstance(e, And):
            a, b = self.eval(e.left), self.eval(e.right)
            return _Ans(a.files & b.files, a.zones & b.zones)
        if isinstance(e, Or):
            a, b = self.eval(e.left), self.eval(e.right)
            return _Ans(a.files | b.files, a.zones | b.zones)
        if isinstance(e, AlwaysTrue):
            return self.ones()
        if isinstance(e, AlwaysFalse):
            return self.zeros()
        if isinstance(e, Unsupported):
            self.note(f"{e.text}: not answered by the index")
            return self.ones()
        if isinstance(e, BoundPredicate):
            return self.leaf(e)
        raise TypeError(f"cannot evaluate {type(e).__name__}")

    def leaf(self, p: BoundPredicate) -> _Ans:
        name = p.term.name
        if name not in self.data:
            self.note(f"{p}: {name} is not indexed")
            return self.ones()
        d = self.data[name]
        zrow = self.zrow[name]
        covered = zrow >= 0
        if isinstance(p, BoundIsNull):
            zones = np.ones(self.keys.shape[0], np.bool_)
            zones[covered] = d.has_null[zrow[covered]]
            return _Ans(np.ones(self.fids.shape[0], np.bool_), zones)
        if isinstance(p, BoundNotNull):
            zones = np.ones(self.keys.shape[0], np.bool_)
            zones[covered] = d.ndv[zrow[covered]] > 0
            return _Ans(np.ones(self.fids.shape[0], np.bool_), zones)
        if isinstance(p, BoundEqualTo | BoundIn):
            lits = (p.literal,) if isinstance(p, BoundEqualTo) else p.literals
            conv = (p.converted,) if isinstance(p, BoundEqualTo) else p.converted
            return self._equal(name, d, lits, conv)
        self.note(f"{p}: not answered by the index (only =, IN and IS [NOT] NULL are)")
        return self.ones()

    def _equal(self, name: str, d: _ColumnData, lits, conv) -> _Ans:
        col = self.columns[name]
        values: list[Any] = []
        for lit, c in zip(lits, conv, strict=True):
            if isinstance(c, Unknown):
                self.note(f"{name} = {lit}: {c.reason}; may match")
                return self.ones()
            if isinstance(c, NoMatch):
                continue
            assert isinstance(c, Values)
            values.extend(c.values)
        if not values:
            return self.zeros()
        try:
            hashes = hash_values(
                to_arrow(tuple(values), col.arrow_type),
                physical=col.physical,
                encoding=col.encoding,
            )
        except (BloomskipError, pa.ArrowException, ValueError, OverflowError) as e:
            self.note(f"{name}: literals cannot be hashed as the index does ({e}); may match")
            return self.ones()
        hashes = np.unique(hashes)
        k = int(hashes.shape[0])
        compounded = -np.expm1(k * np.log1p(-col.fpp))
        if k > 1 and compounded > self.max_in_fpp:
            self.note(
                f"{name} IN ({k} values): index not used - a zone holding none of them is "
                f"still kept with probability 1-(1-{col.fpp:g})^{k} = {compounded:.2f} > "
                f"max_in_fpp {self.max_in_fpp:g}"
            )
            return self.ones()
        files = np.ones(self.fids.shape[0], np.bool_)
        frow = self.frow[name]
        has = np.flatnonzero(frow >= 0)
        if has.size:
            files[has] = d.files.probe(frow[has], hashes)
        zrow = self.zrow[name]
        zones = np.ones(self.keys.shape[0], np.bool_)
        zones[~files[self.zfile]] = False
        ask = np.flatnonzero(files[self.zfile] & (zrow >= 0))
        if ask.size:
            zones[ask] = d.zones.probe(zrow[ask], hashes)
        return _Ans(files, zones)


def _rows_of(sorted_keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each wanted key, its position in ``sorted_keys`` or -1."""
    if sorted_keys.shape[0] == 0:
        return np.full(wanted.shape[0], -1, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, wanted)
    pos = np.minimum(pos, sorted_keys.shape[0] - 1)
    return np.where(sorted_keys[pos] == wanted, pos, -1).astype(np.int64)


def _zone_ranges(keys: np.ndarray, data, hit: np.ndarray, ctx: _Context) -> list[tuple[int, int]]:
    """(start, length) of candidate zones, lengths from any column holding each zone."""
    starts = (keys & np.uint64((1 << 40) - 1)).astype(np.int64)
    lengths = np.zeros(hit.shape[0], np.int64)
    found = np.zeros(hit.shape[0], np.bool_)
    for c, d in data.items():
        rows = ctx.zrow[c][hit]
        ok = (rows >= 0) & ~found
        lengths[ok] = d.length[rows[ok]].astype(np.int64)
        found |= ok
    return [(int(s), int(n)) for s, n in zip(starts, lengths, strict=True)]


def _size(root: str, rel: str) -> int:
    try:
        return os.path.getsize(os.path.join(root, rel))
    except OSError:
        return 0


def open_index(index_path: str | os.PathLike, *, version: int | None = None) -> ZoneIndex:
    """Open the latest (or a given) committed version of the index at ``index_path``."""
    root = store.local_dir(index_path)
    return ZoneIndex(root, store.read_manifest(root, version))


__all__ = ["FileCandidate", "QueryResult", "ZoneIndex", "column_data", "evaluate", "open_index"]
