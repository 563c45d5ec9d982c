"""Reading the BLOOMFILTER indexes Lance writes, and answering predicates with them.

Follows ``zone-index.md`` section 1 (Lance's bloom filter scalar index, pylance 14):

* an index is found through the dataset's index metadata (``ds.describe_indices()``,
  ``list_indices()`` before pylance 14): one entry per *segment*, with its uuid, the
  indexed field and ``fragment_ids``, the fragments the segment covers. Its zones are
  ``_indices/<uuid>/bloomfilter.lance``, read with ``lance.file.LanceFileReader``:
  ``fragment_id, zone_start, zone_length (u64), has_null (bool), bloom_filter_data
  (binary: a raw SBBF bitset, no header)`` with the schema metadata
  ``bloomfilter_item`` and ``bloomfilter_probability``;
* values are hashed as Lance hashes them (xxHash64 seed 0 of the Arrow-width bytes:
  ``encoding="arrow"``), so bloomskip's SBBF probes Lance's bitsets directly;
* a zone covers the row offsets ``[zone_start, zone_start + zone_length)`` of its
  fragment. Rows of a covered fragment that no zone holds were deleted before training;
* fragments the index does not cover (appended since, rewritten by compaction, or
  listed by a segment stored elsewhere) are always candidates, in full.

Evaluation is :func:`bloomskip.index.decide.evaluate` (the pruning engine over zones),
so ``=``, ``IN`` and ``IS [NOT] NULL`` under AND/OR follow the same rules (NOT rewritten
away, long IN lists, literal conversion). Indexes of different columns
may cut zones differently (``number_of_items``, training time): the zones of the columns a
predicate uses are split at every boundary of any of them into common *intervals*, each
probed with the filter of the zone holding it, so AND and OR combine row ranges exactly.
With one column, or equal zoning, the intervals are Lance's zones.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import CorruptFileError, IndexNotFoundError, UnsupportedFileError
from bloomskip.expr.bind import Column, bind, referenced
from bloomskip.expr.expressions import Expression
from bloomskip.index import params
from bloomskip.index.decide import evaluate
from bloomskip.index.layout import ColumnIndex
from bloomskip.index.query import MAX_IN_FPP
from bloomskip.index.results import FileCandidate, QueryResult
from bloomskip.index.zonedata import column_data
from bloomskip.lance.dataset import (
    FragmentInfo,
    dataset_uri,
    fragments,
    open_dataset,
    require_lance,
)
from bloomskip.sbbf.sizing import putze_fpp_many

INDEX_TYPE = "BloomFilter"
INDEX_FILE = "bloomfilter.lance"
_COLUMNS = ("fragment_id", "zone_start", "zone_length", "has_null", "bloom_filter_data")
_SHIFT = np.uint64(33)  # interval points: fragment_id << 33 | row offset (offsets <= 2**32)


@dataclass(frozen=True)
class LanceSegment:
    """One segment of a Lance bloom filter index, as the dataset's metadata lists it."""

    uuid: str
    path: str  # its bloomfilter.lance
    fragment_ids: frozenset[int]
    base_id: int | None = None


@dataclass
class LanceBloomIndex:
    """One Lance BLOOMFILTER index: its column, parameters and zones as Lance wrote them."""

    name: str
    column: str
    arrow_type: pa.DataType
    segments: list[LanceSegment]
    number_of_items: int
    probability: float
    null_bitmap: bool
    zones: pa.Table  # Lance's columns + ndv (estimated), live covered fragments, sorted
    covered: frozenset[int]  # live fragments the index covers and holds usable zones of
    disk_bytes: int = 0
    notes: list[str] = field(default_factory=list)

    def column_index(self) -> ColumnIndex:
        """How bloomskip's evaluator hashes and sizes this column: Lance's rules."""
        return ColumnIndex(
            name=self.column,
            directory="",
            arrow_type=self.arrow_type,
            physical=None,
            encoding="arrow",
            sizing="putze",
            fpp=self.probability,
            file_filters=False,
        )


class LanceIndex:
    """The BLOOMFILTER indexes of one Lance dataset version, opened for queries; answers
    like :class:`bloomskip.index.ZoneIndex` with ``path = "fragment:<id>"``."""

    def __init__(self, uri: str, dataset: Any, indexes: dict[str, LanceBloomIndex]) -> None:
        self.uri = uri
        self.dataset = dataset
        self.indexes = indexes  # by column
        self._fragments = fragments(dataset)
        self._data: dict[frozenset[str], dict[str, Any]] = {}
        self.notes: list[str] = [n for ix in indexes.values() for n in ix.notes]

    @property
    def version(self) -> int:
        return int(self.dataset.version)

    @property
    def columns(self) -> dict[str, ColumnIndex]:
        return {c: ix.column_index() for c, ix in self.indexes.items()}

    def fragments(self) -> list[FragmentInfo]:
        return list(self._fragments)

    def zones(self, column: str) -> pa.Table:
        """Lance's zone table of ``column`` (its five columns), live covered fragments,
        sorted by fragment and start."""
        return self.indexes[column].zones.select(list(_COLUMNS))

    def schema(self) -> dict[str, Column]:
        out = {}
        for f in self.dataset.schema:
            ix = self.indexes.get(f.name)
            out[f.name] = Column(ix.arrow_type if ix else f.type, f.name)
        return out

    def query(
        self,
        predicate: str | Expression,
        *,
        max_in_fpp: float = MAX_IN_FPP,
        zone: str | None = None,
    ) -> QueryResult:
        """Candidate fragments and row ranges for ``predicate``: every row Lance's
        filtered scan returns is in one; uncovered fragments are candidates in full.
        ``zone`` as in :meth:`bloomskip.index.ZoneIndex.query`."""
        t0 = time.perf_counter()
        params.predicate(predicate)
        max_in_fpp = params.probability(max_in_fpp, "max_in_fpp")
        bound = bind(predicate, self.schema(), zone)
        res = QueryResult(self.uri, self.version, str(predicate))
        covered = set().union(*(ix.covered for ix in self.indexes.values()))
        indexed = []
        for f in self._fragments:
            if f.fragment_id in covered:
                indexed.append(
                    {"fragment_id": f.fragment_id, "path": f.path, "num_rows": f.physical_rows}
                )
            else:
                res.files.append(
                    FileCandidate(
                        f.path, "not covered by the index", f.physical_rows, None, f.fragment_id
                    )
                )
        res.files_total = len(self._fragments)
        used = frozenset(r.name for r in referenced(bound) if r.name in self.indexes)
        data = self._interval_data(used)
        evaluate(bound, indexed, res, max_in_fpp, self.columns, data.__getitem__, str)
        res.notes.extend(n for n in self.notes if n not in res.notes)
        res.files.sort(key=lambda c: c.fragment_id if c.fragment_id is not None else -1)
        res.seconds = time.perf_counter() - t0
        return res

    def _interval_data(self, used: frozenset[str]) -> dict[str, Any]:
        """The zones of the ``used`` columns split into their common intervals (one
        column: its zones as Lance wrote them)."""
        if used not in self._data:
            tables = common_intervals({c: self.indexes[c].zones for c in sorted(used)})
            self._data[used] = {c: column_data(c, t) for c, t in tables.items()}
        return self._data[used]

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description of every index: parameters, segments, zones, sizes."""
        live = {f.fragment_id for f in self._fragments}
        out: dict[str, Any] = {
            "dataset": self.uri,
            "version": self.version,
            "fragments": len(live),
            "rows_physical": sum(f.physical_rows for f in self._fragments),
            "indexes": [],
            "notes": self.notes,
        }
        for ix in self.indexes.values():
            z = ix.zones
            nbytes = pc.binary_length(z.column("bloom_filter_data")).to_numpy().astype(np.int64)
            ones, _ = popcounts(z.column("bloom_filter_data"))
            fill = np.divide(ones, nbytes * 8, out=np.zeros(len(ones)), where=nbytes > 0)
            ndv = z.column("ndv").to_numpy().astype(np.float64)
            fpp = putze_fpp_many(ndv, nbytes) if nbytes.size else nbytes
            out["indexes"].append(
                {
                    "name": ix.name,
                    "column": ix.column,
                    "arrow_type": str(ix.arrow_type),
                    "index_type": INDEX_TYPE,
                    "number_of_items": ix.number_of_items,
                    "probability": ix.probability,
                    "null_bitmap": ix.null_bitmap,
                    "segments": [
                        {"uuid": s.uuid, "path": s.path, "fragment_ids": sorted(s.fragment_ids)}
                        for s in ix.segments
                    ],
                    "covered_fragments": sorted(ix.covered),
                    "uncovered_fragments": sorted(live - ix.covered),
                    "zones": z.num_rows,
                    "filter_bytes": int(nbytes.sum()),
                    "filter_sizes": sorted({int(n) for n in nbytes}),
                    "disk_bytes": ix.disk_bytes,
                    "fill_mean": float(fill.mean()) if fill.size else 0.0,
                    "predicted_fpp_max": float(fpp.max()) if fpp.size else 0.0,
                    "zone_list": [
                        {
                            "fragment_id": int(r["fragment_id"]),
                            "zone_start": int(r["zone_start"]),
                            "zone_length": int(r["zone_length"]),
                            "has_null": bool(r["has_null"]),
                            "bytes": int(nbytes[i]),
                            "fill": float(fill[i]),
                        }
                        for i, r in enumerate(z.drop_columns(["bloom_filter_data"]).to_pylist())
                    ],
                }
            )
        return out


def describe_text(report: dict[str, Any]) -> str:
    """:meth:`LanceIndex.describe`'s report as ``bloomskip inspect`` prints it: each index
    with its parameters and sizes, then its first 20 zones."""
    lines = [
        f"{report['dataset']} (Lance, version {report['version']}): {report['fragments']} "
        f"fragments, {report['rows_physical']:,} physical rows"
    ]
    for ix in report["indexes"]:
        sizes = ", ".join(f"{n:,} B" for n in ix["filter_sizes"])
        lines.append(
            f"  {ix['name']} on {ix['column']} ({ix['arrow_type']}): BLOOMFILTER, "
            f"number_of_items {ix['number_of_items']:,}, probability {ix['probability']:g}; "
            f"{ix['zones']:,} zones of {sizes}, {ix['filter_bytes']:,} B of filters, "
            f"{ix['disk_bytes']:,} B on disk; {len(ix['segments'])} segment(s); "
            f"fill {ix['fill_mean']:.3f}, predicted fpp <= {ix['predicted_fpp_max']:.2g}"
        )
        if ix["uncovered_fragments"]:
            lines.append(f"    not covered (read in full): fragments {ix['uncovered_fragments']}")
        lines.append(
            f"    {'fragment':>8} {'start':>10} {'length':>10} {'null':>5} {'bytes':>9} {'fill':>6}"
        )
        for z in ix["zone_list"][:20]:
            lines.append(
                f"    {z['fragment_id']:>8} {z['zone_start']:>10,} {z['zone_length']:>10,} "
                f"{'yes' if z['has_null'] else 'no':>5} {z['bytes']:>9,} {z['fill']:>6.3f}"
            )
        if len(ix["zone_list"]) > 20:
            lines.append(f"    ... and {len(ix['zone_list']) - 20} more zones (see --json)")
    lines += [f"  note: {n}" for n in report["notes"]]
    return "\n".join(lines)


def open_lance_index(
    dataset: str | os.PathLike,
    columns: str | list[str] | None = None,
    *,
    version: int | None = None,
) -> LanceIndex:
    """Open the BLOOMFILTER indexes of the Lance dataset at ``dataset`` (of ``columns``,
    default all); :class:`IndexNotFoundError` if there is none."""
    require_lance()
    uri = dataset_uri(dataset)
    ds = open_dataset(uri, version)
    wanted = [columns] if isinstance(columns, str) else columns
    by_name: dict[str, list[dict[str, Any]]] = {}
    for entry in _segments(ds, uri):
        if entry["type"] == INDEX_TYPE:
            by_name.setdefault(entry["name"], []).append(entry)
    live = {f.fragment_id for f in fragments(ds)}
    indexes: dict[str, LanceBloomIndex] = {}
    for name in sorted(by_name):
        entries = by_name[name]
        fields = entries[0].get("fields") or []
        if len(fields) != 1:
            continue
        column = fields[0]
        if (wanted is not None and column not in wanted) or column in indexes:
            continue
        if ds.schema.get_field_index(column) < 0:
            continue  # a nested field: not one bloomskip binds predicates to
        arrow_type = _index_type(ds.schema.field(column).type)
        indexes[column] = _read_index(uri, name, column, arrow_type, entries, live)
    missing = [c for c in wanted or [] if c not in indexes]
    if missing or not indexes:
        what = f" on {', '.join(missing)}" if missing else ""
        raise IndexNotFoundError(f"{uri}: no Lance BLOOMFILTER index{what}")
    return LanceIndex(uri, ds, indexes)


def _segments(ds: Any, uri: str) -> list[dict[str, Any]]:
    """Every index segment of ``ds``: ``name, type, fields, uuid, fragment_ids, base_id``
    (``describe_indices()`` of pylance 14; ``list_indices()`` of older versions)."""
    try:
        if hasattr(ds, "describe_indices"):
            return [
                {
                    "name": d.name,
                    "type": d.index_type,
                    "fields": list(d.field_names),
                    "uuid": str(seg.uuid),
                    "fragment_ids": seg.fragment_ids,
                    "base_id": seg.base_id,
                }
                for d in ds.describe_indices()
                for seg in d.segments
            ]
        return list(ds.list_indices())
    except (OSError, ValueError, RuntimeError, AttributeError) as e:
        raise CorruptFileError(f"{uri}: cannot list the dataset's indexes: {e}") from e


def _index_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    return t


def _read_index(
    uri: str,
    name: str,
    column: str,
    arrow_type: pa.DataType,
    entries: list[dict[str, Any]],
    live: set[int],
) -> LanceBloomIndex:
    segments, tables, params, notes = [], [], set(), []
    disk = 0
    null_bitmap = False
    for e in entries:
        frags = frozenset(int(f) for f in e.get("fragment_ids") or ())
        path = f"{uri}/_indices/{e['uuid']}/{INDEX_FILE}"
        seg = LanceSegment(str(e["uuid"]), path, frags, e.get("base_id"))
        segments.append(seg)
        if seg.base_id is not None:
            notes.append(
                f"{name}: segment {seg.uuid} lives in another base ({seg.base_id}); "
                "its fragments are read in full"
            )
            continue
        table, meta = read_zone_file(path)
        params.add(meta[:2])
        null_bitmap |= meta[2]
        disk += _file_size(path)
        keep = pa.array(sorted(frags & live), type=pa.uint64())
        tables.append(table.filter(pc.is_in(table.column("fragment_id"), value_set=keep)))
    if not params:
        raise IndexNotFoundError(f"{uri}: index {name} has no segment bloomskip can read")
    if len(params) > 1:
        notes.append(f"{name}: segments differ in (number_of_items, probability): {params}")
    items, prob = sorted(params)[0]
    zones = pa.concat_tables(tables).combine_chunks()
    zones = zones.take(
        pc.sort_indices(zones, [("fragment_id", "ascending"), ("zone_start", "ascending")])
    )
    zones, bad = _drop_overlaps(zones)
    if bad:
        notes.append(
            f"{name}: overlapping zones in fragments {sorted(bad)}; those fragments are "
            "read in full"
        )
    covered = (
        frozenset(int(f) for f in np.unique(zones.column("fragment_id").to_numpy()))
        if zones.num_rows
        else frozenset()
    )
    return LanceBloomIndex(
        name=name,
        column=column,
        arrow_type=arrow_type,
        segments=segments,
        number_of_items=items,
        probability=prob,
        null_bitmap=null_bitmap,
        zones=zones,
        covered=covered,
        disk_bytes=disk,
        notes=notes,
    )


def read_zone_file(path: str) -> tuple[pa.Table, tuple[int, float, bool]]:
    """One ``bloomfilter.lance``: its zone table (Lance's five columns, types checked,
    plus ``ndv`` estimated from each filter's fill) and ``(number_of_items,
    probability, has a null bitmap)`` from its schema metadata."""
    require_lance()
    from lance.file import LanceFileReader

    try:
        table = LanceFileReader(path).read_all().to_table()
    except FileNotFoundError:
        raise IndexNotFoundError(
            f"{path}: listed by the dataset's index metadata but missing"
        ) from None
    except (OSError, ValueError, RuntimeError) as e:
        raise CorruptFileError(f"{path}: not a readable Lance file: {e}") from e
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    try:
        items = int(meta["bloomfilter_item"])
        prob = float(meta["bloomfilter_probability"])
    except KeyError as e:
        raise CorruptFileError(f"{path}: schema metadata has no {e.args[0]}") from None
    except ValueError as e:
        raise CorruptFileError(f"{path}: bad bloom filter parameters in metadata: {e}") from None
    if items <= 0 or not 0.0 < prob < 1.0:
        raise CorruptFileError(
            f"{path}: bloomfilter_item {items} / bloomfilter_probability {prob} out of range"
        )
    missing = [c for c in _COLUMNS if c not in table.column_names]
    if missing:
        raise CorruptFileError(f"{path}: not a Lance bloom filter index (no {', '.join(missing)})")
    cols = {}
    for c in ("fragment_id", "zone_start", "zone_length"):
        col = table.column(c)
        if not pa.types.is_integer(col.type) or col.null_count:
            raise CorruptFileError(f"{path}: {c} is {col.type} with {col.null_count} nulls")
        try:
            cols[c] = col.cast(pa.uint64())
        except pa.ArrowInvalid as e:
            raise CorruptFileError(f"{path}: {c} has negative values: {e}") from None
    has_null = table.column("has_null")
    data = table.column("bloom_filter_data")
    if not pa.types.is_boolean(has_null.type) or has_null.null_count:
        raise CorruptFileError(f"{path}: has_null is {has_null.type} with nulls or not bool")
    if not (pa.types.is_binary(data.type) or pa.types.is_large_binary(data.type)):
        raise CorruptFileError(f"{path}: bloom_filter_data is {data.type}, not binary")
    if data.null_count:
        raise CorruptFileError(f"{path}: bloom_filter_data has {data.null_count} nulls")
    if table.num_rows:
        frag = cols["fragment_id"].to_numpy()
        end = cols["zone_start"].to_numpy() + cols["zone_length"].to_numpy()
        if int(frag.max()) >= 1 << 24:
            raise UnsupportedFileError(
                f"{path}: fragment id {int(frag.max())} is beyond the 2**24 bloomskip handles"
            )
        if int(end.max()) > 1 << 32:
            raise CorruptFileError(f"{path}: a zone ends past row offset 2**32")
    ones, nbytes = popcounts(data)
    out = pa.table(
        {
            **cols,
            "has_null": has_null,
            "bloom_filter_data": data,
            "ndv": pa.array(ndv_estimates(ones, nbytes), pa.uint64()),
        }
    )
    return out, (items, prob, "null_bitmap" in meta)


def popcounts(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Per entry of a binary column: bits set, and its length in bytes."""
    ones, lengths = [], []
    for ch in column.chunks:
        if len(ch) == 0:
            continue
        width = np.int64 if pa.types.is_large_binary(ch.type) else np.int32
        o = np.frombuffer(ch.buffers()[1], dtype=width)[ch.offset : ch.offset + len(ch) + 1]
        o = o.astype(np.int64)
        raw = (
            np.frombuffer(ch.buffers()[2], dtype=np.uint8)
            if ch.buffers()[2]
            else np.zeros(0, np.uint8)
        )
        csum = np.concatenate([[0], np.cumsum(np.bitwise_count(raw[: o[-1]]), dtype=np.int64)])
        ones.append(csum[o[1:]] - csum[o[:-1]])
        lengths.append(np.diff(o))
    if not ones:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(ones), np.concatenate(lengths)


def ndv_estimates(ones: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Distinct values that most likely set ``ones`` bits of filters of ``nbytes``; at
    least 1 when any bit is set (an insert sets 8), 0 for an empty filter."""
    blocks = np.maximum(nbytes // 32, 1).astype(np.float64)
    fill = np.divide(ones, np.maximum(nbytes, 1) * 8.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.log1p(-np.minimum(fill, 1 - 1e-12)) / np.log1p(-1.0 / (32.0 * blocks))
    est = np.where(ones > 0, np.maximum(np.ceil(est), 1), 0)
    return np.minimum(est, 2.0**62).astype(np.uint64)


def _drop_overlaps(zones: pa.Table) -> tuple[pa.Table, set[int]]:
    """Remove the fragments whose zones (sorted) overlap: bloomskip would not know which
    filter holds a row of both."""
    if zones.num_rows < 2:
        return zones, set()
    frag = zones.column("fragment_id").to_numpy()
    start = zones.column("zone_start").to_numpy()
    end = start + zones.column("zone_length").to_numpy()
    same = frag[1:] == frag[:-1]
    clash = same & (start[1:] < end[:-1])
    if not clash.any():
        return zones, set()
    bad = {int(f) for f in frag[1:][clash]}
    keep = ~np.isin(frag, np.array(sorted(bad), dtype=frag.dtype))
    return zones.filter(pa.array(keep)), bad


def common_intervals(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Split every column's zones at every zone boundary of any column. Per column: one
    row per interval it covers - the interval's ``(fragment_id, zone_start,
    zone_length)`` with ``has_null``, ``ndv`` and ``bloom_filter_data`` of the zone
    holding it. Zones of one column must not overlap (see :func:`_drop_overlaps`)."""
    spans = {}
    points = []
    for c, t in tables.items():
        frag = t.column("fragment_id").to_numpy().astype(np.uint64)
        start = t.column("zone_start").to_numpy().astype(np.uint64)
        end = start + t.column("zone_length").to_numpy().astype(np.uint64)
        a, b = (frag << _SHIFT) | start, (frag << _SHIFT) | end
        spans[c] = (a, b)
        points += [a, b]
    if not points:
        return dict(tables)
    p = np.unique(np.concatenate(points))
    lo, hi = p[:-1], p[1:]
    same = (lo >> _SHIFT) == (hi >> _SHIFT)
    lo, hi = lo[same], hi[same]
    holder = {}
    any_cover = np.zeros(lo.shape[0], np.bool_)
    for c, (a, b) in spans.items():
        i = np.searchsorted(a, lo, side="right") - 1
        ok = i >= 0
        ok[ok] = lo[ok] < b[i[ok]]  # a zone starting at or before lo that ends after it
        holder[c] = np.where(ok, i, -1)
        any_cover |= ok
    lo, hi = lo[any_cover], hi[any_cover]
    mask = np.uint64((1 << 33) - 1)
    out = {}
    for c, t in tables.items():
        i = holder[c][any_cover]
        rows = np.flatnonzero(i >= 0)
        src = t.take(pa.array(i[rows]))
        out[c] = pa.table(
            {
                "fragment_id": pa.array(lo[rows] >> _SHIFT, pa.uint64()),
                "zone_start": pa.array(lo[rows] & mask, pa.uint64()),
                "zone_length": pa.array(hi[rows] - lo[rows], pa.uint64()),
                "has_null": src.column("has_null"),
                "bloom_filter_data": src.column("bloom_filter_data"),
                "ndv": src.column("ndv"),
            }
        )
    return out


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


__all__ = [
    "LanceBloomIndex",
    "LanceIndex",
    "LanceSegment",
    "common_intervals",
    "describe_text",
    "open_lance_index",
    "read_zone_file",
]
