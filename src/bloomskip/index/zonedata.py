"""One column's zones in memory: filters back to back, addresses sorted, for the engine.

A zone table (Lance's ``fragment_id, zone_start, zone_length, has_null,
bloom_filter_data``, plus bloomskip's ``ndv``) and a file table become one
:class:`ColumnData`: numpy arrays sorted by zone key (``fragment_id << 40 |
zone_start``), and every bitset in one aligned ``uint32`` buffer (:class:`Filters`) so the
kernels of :mod:`.kernels` probe them all in one call. Every byte of a table is untrusted:
an entry that is not whole 32-byte blocks becomes an unusable filter (always "may"), a
zone written twice keeps its first copy, and addresses out of range raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip._lazy import lazy
from bloomskip.errors import BloomskipError, CorruptFileError
from bloomskip.index import serving
from bloomskip.index.layout import ColumnIndex, Zoning, check_zone_table
from bloomskip.index.storage import Storage

kernels = lazy("bloomskip.index.kernels")

KEY_SHIFT = np.uint64(40)  # zone key = fragment_id << 40 | zone_start


@dataclass
class Filters:
    """Filters back to back: ``words[offsets[i] : offsets[i] + sizes[i]]`` (in words);
    size 0 marks an unusable filter (always "may")."""

    words: np.ndarray
    offsets: np.ndarray
    sizes: np.ndarray

    @staticmethod
    def of(column: pa.ChunkedArray) -> Filters:
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
            return Filters(np.zeros(0, np.uint32), z, z)
        raw = np.concatenate(datas) if len(datas) > 1 else datas[0]
        start, n = np.concatenate(starts), np.concatenate(lengths)
        ok = (n > 0) & (n % 32 == 0)
        if ok.all() and not (start % 4).any():
            return Filters(raw.copy().view(np.uint32), start // 4, n // 4)
        sizes = np.where(ok, n, 0)
        dest = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        out = np.zeros(int(sizes.sum()), dtype=np.uint8)
        for i in np.flatnonzero(ok):  # rare: a malformed table
            out[dest[i] : dest[i] + sizes[i]] = raw[start[i] : start[i] + sizes[i]]
        return Filters(out.view(np.uint32), dest // 4, sizes // 4)

    @staticmethod
    def empty() -> Filters:
        z = np.zeros(0, np.int64)
        return Filters(np.zeros(0, np.uint32), z, z)

    def take(self, order: np.ndarray) -> Filters:
        return Filters(self.words, self.offsets[order], self.sizes[order])

    def probe(self, rows: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        out = np.zeros(rows.shape[0], dtype=np.bool_)
        if rows.shape[0]:
            kernels.probe_any(
                self.words, self.offsets, self.sizes, rows.astype(np.int64), hashes, out
            )
        return out


class Routed:
    """Zone filters kept in several places: row ``i`` is zone ``local[i]`` of source
    ``source[i]`` (each source has ``probe(local_rows, hashes)``)."""

    def __init__(
        self, sources: list, source: np.ndarray, local: np.ndarray, whole: list | None = None
    ) -> None:
        self.sources, self.source, self.local = sources, source, local
        # per source, ``whole(hashes)``: the answer for every zone of it in order, or None
        self.whole = whole or [None] * len(sources)
        # one source whose zones are the rows themselves (one segment, nothing dropped)
        self.direct = len(sources) == 1 and np.array_equal(
            local, np.arange(local.shape[0], dtype=local.dtype)
        )

    def take(self, order: np.ndarray) -> Routed:
        return Routed(self.sources, self.source[order], self.local[order], self.whole)

    def probe_every(self, hashes: np.ndarray) -> np.ndarray:
        """:meth:`probe` of every row, in order."""
        if self.direct and self.whole[0] is not None:
            return self.whole[0](hashes)
        return self.probe(np.arange(self.local.shape[0]), hashes)

    def probe(self, rows: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        if self.direct:
            return self.sources[0](rows, hashes)
        out = np.zeros(rows.shape[0], dtype=np.bool_)
        src = self.source[rows]
        for s in serving.present(src):
            mine = np.flatnonzero(src == s)
            out[mine] = self.sources[s](self.local[rows[mine]], hashes)
        return out


@dataclass
class ColumnData:
    """One column's live zones (sorted by fragment, start) and file filters."""

    key: np.ndarray  # uint64 zone keys, sorted
    fragment: np.ndarray
    start: np.ndarray
    length: np.ndarray
    has_null: np.ndarray
    ndv: np.ndarray  # distinct values
    zones: Filters | Routed
    file_fragment: np.ndarray  # sorted
    file_has_null: np.ndarray
    file_ndv: np.ndarray
    files: Filters
    # (fids, keys, zone -> file position) when the column alone is a lookup's universe
    universe: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    # arrays derived once per open index for every lookup (read-only): see :meth:`derived`
    _derived: dict = field(default_factory=dict)

    def derived(self, name: str) -> np.ndarray:
        """``rows`` (0..n-1) or ``empty`` (zones without a value, ``ndv == 0``), made
        once and read-only (a lookup's evidence shares them)."""
        got = self._derived.get(name)
        if got is None:
            if name == "rows":
                got = np.arange(self.key.shape[0], dtype=np.int64)
            elif name == "empty":
                got = self.ndv == 0
            else:
                raise KeyError(name)
            got.flags.writeable = False
            self._derived[name] = got
        return got


def load_column(
    storage: Storage,
    col: ColumnIndex,
    zoning: Zoning,
    *,
    live: np.ndarray | None = None,
    dropped: np.ndarray | None = None,
) -> ColumnData:
    """``col``'s zones as a query needs them: from the serving directories (filters read
    block by block later), and from the zone tables of format 1 segments. A zone is kept
    if its fragment is in ``live`` (sorted), or, without ``live``, not in ``dropped``."""

    def alive(fragment: np.ndarray) -> np.ndarray:
        if live is not None:
            return np.isin(fragment, live)
        if dropped is not None and dropped.size:
            return ~np.isin(fragment, dropped)
        return np.ones(fragment.shape[0], np.bool_)

    parts = []  # (key, length, has_null, ndv, source id, local index)
    sources: list = []
    whole: list = []  # per source: every zone's answer at once (None: ask by rows)
    served = [s for s in col.segments if s.directory]
    if served:
        dirs = []
        for s in served:
            size = s.directory_size or storage.size(s.directory) or 0
            d = serving.read_directory(storage, s.directory, size, s.num_zones)
            if d.identity != col.identity():
                raise CorruptFileError(
                    f"{storage.label(s.directory)}: holds {d.identity}, the manifest says "
                    f"{col.identity()}"
                )
            dirs.append(d)
        filters = serving.ServedFilters(storage, dirs, [s.slabs for s in served])
        for i, d in enumerate(dirs):
            frag = d.keys >> KEY_SHIFT
            ok = alive(frag)
            sid = len(sources)
            sources.append(lambda rows, h, i=i, f=filters: f.probe_segment(i, rows, h))
            # every zone of the segment at once, in order: only if every one is alive (a
            # segment whose last files were dropped has more zones than rows here)
            whole.append((lambda h, i=i, f=filters: f.segment_may(i, h)) if ok.all() else None)
            parts.append(
                (
                    d.keys[ok],
                    d.lengths[ok],
                    (d.flags[ok] & serving.HAS_NULL) > 0,
                    d.ndv[ok],
                    np.full(int(ok.sum()), sid, np.int64),
                    np.flatnonzero(ok),
                )
            )
    tables = [r for s in col.segments if not s.directory for r in s.zones]
    if tables:
        if live is None:
            raise BloomskipError("format 1 segments need the live fragments")
        live_arr = pa.array(live, type=pa.uint64())
        zt = _concat(storage, tables, live_arr, col, zoning)
        d = column_data(col.name, zt)
        sid = len(sources)
        sources.append(d.zones.probe)
        whole.append(None)
        parts.append((d.key, d.length, d.has_null, d.ndv, np.full(d.key.shape[0], sid, np.int64),
                      np.arange(d.key.shape[0])))  # fmt: skip
    if parts:
        key, length, has_null, ndv, src, local = (
            np.concatenate(x) for x in zip(*parts, strict=True)
        )
    else:
        key = length = ndv = np.zeros(0, np.uint64)
        has_null = np.zeros(0, np.bool_)
        src = local = np.zeros(0, np.int64)
    order = np.argsort(key, kind="stable")
    first = np.ones(order.shape[0], np.bool_)
    first[1:] = key[order][1:] != key[order][:-1]  # a zone written twice: keep one
    order = order[first]
    key = key[order]
    files = [r for s in col.segments for r in s.files]
    if files:
        live_ids = live if live is not None else np.unique(key >> KEY_SHIFT)
        ft = _concat(storage, files, pa.array(live_ids, type=pa.uint64()), None, zoning)
        fd = column_data(col.name, pa.table({"fragment_id": pa.array([], pa.uint64())}), ft)
    else:
        fd = column_data(col.name, pa.table({"fragment_id": pa.array([], pa.uint64())}))
    return ColumnData(
        key=key,
        fragment=key >> KEY_SHIFT,
        start=key & np.uint64((1 << 40) - 1),
        length=length[order],
        has_null=has_null[order],
        ndv=ndv[order],
        zones=Routed(sources, src[order], local[order], whole),
        file_fragment=fd.file_fragment,
        file_has_null=fd.file_has_null,
        file_ndv=fd.file_ndv,
        files=fd.files,
    )


def column_data(name: str, zt: pa.Table, ft: pa.Table | None = None) -> ColumnData:
    """One column's zones from in-memory tables: ``zt`` with the zone table's columns
    (``fragment_id, zone_start, zone_length, has_null, bloom_filter_data, ndv``), ``ft``
    the file table's (None or empty: no file filters, every file "may match")."""
    if ft is None:
        ft = pa.table({"fragment_id": pa.array([], pa.uint64())})
    frag = _u64(zt, "fragment_id")
    start = _u64(zt, "zone_start")
    if zt.num_rows and (frag.max() >= 1 << 24 or start.max() >= 1 << 40):
        raise BloomskipError(f"{name}: zone addresses out of range")
    key = (frag << KEY_SHIFT) | start
    order = np.argsort(key, kind="stable")
    key = key[order]
    dup = np.zeros(key.shape[0], dtype=np.bool_)
    dup[1:] = key[1:] == key[:-1]  # a zone written twice: keep the first
    keep = order[~dup]
    zones = (
        Filters.of(zt.column("bloom_filter_data")).take(keep) if zt.num_rows else Filters.empty()
    )
    ffrag = _u64(ft, "fragment_id")
    forder = np.argsort(ffrag, kind="stable")
    fdup = np.zeros(forder.shape[0], dtype=np.bool_)
    fdup[1:] = ffrag[forder][1:] == ffrag[forder][:-1]
    fkeep = forder[~fdup]
    return ColumnData(
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
        files=Filters.of(ft.column("bloom_filter_data")).take(fkeep)
        if ft.num_rows
        else Filters.empty(),
    )


def _concat(
    storage: Storage, rels: list[str], live: pa.Array, col: ColumnIndex | None, zoning: Zoning
) -> pa.Table:
    tables = []
    for rel in rels:
        t = storage.read_table(rel)
        if col is not None:
            check_zone_table(t, col, zoning, storage.label(rel))
        tables.append(t.filter(pc.is_in(t.column("fragment_id"), value_set=live)))
    if not tables:
        return pa.table({"fragment_id": pa.array([], pa.uint64())})
    return pa.concat_tables(tables, promote_options="permissive")


def _u64(t: pa.Table, name: str) -> np.ndarray:
    if t.num_rows == 0:
        return np.zeros(0, np.uint64)
    return t.column(name).to_numpy().astype(np.uint64)


__all__ = ["KEY_SHIFT", "ColumnData", "Filters", "Routed", "column_data", "load_column"]
