"""The bloom filters of one column in many row groups: read together, probed together.

Pruning asks a column's filter in every row group its statistics and dictionary did not
decide. :func:`~.bloom.load_filter` reads one chunk's filter with a seek, a read and a
parsed header; :class:`ColumnFilters` instead locates the filters of all the row groups
asked from the chunk arrays (:mod:`.chunks`: ``bloom_filter_offset``/``_length``,
ColumnMetaData fields 14/15), reads them in a few large reads (neighbouring filters
merged), checks their headers in one compiled pass and probes them all in one call
(:func:`bloomskip.sbbf.kernels.check_bitsets`).

A chunk without ``bloom_filter_offset`` has no filter, known from the arrays alone.
Only the plain case is read this way: integer offset and length inside the data before the
footer, a header byte for byte as writers emit it (:func:`~.bloom.encode_header`: BLOCK,
XXHASH, UNCOMPRESSED, ``num_bytes`` a power of two from 32 B to 128 MiB) and a bitset
filling the rest of ``bloom_filter_length``. Every other chunk - no filter, no length
(files before parquet-format 2.10), an encrypted column, a header with other fields or
members, anything invalid - is loaded by :func:`~.bloom.load_filter`, with its checks
and reasons, so both ways give the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from bloomskip._lazy import lazy
from bloomskip.parquet.bloom import FilterStatus, LoadedFilter
from bloomskip.parquet.chunks import F_META, ChunkArrays, int_field
from bloomskip.prune.evidence import Findings, Status

kernels = lazy("bloomskip.parquet.kernels")
sbbf_kernels = lazy("bloomskip.sbbf.kernels")

#: Neighbouring filters closer than this are read in one read.
GAP = 64 * 1024
#: The most one merged read takes.
MAX_READ = 16 * 1024 * 1024
#: The reason of a chunk without a filter (:func:`~.bloom.load_filter`'s).
ABSENT = "no bloom filter in this column chunk"


class ColumnFilters:
    """The filters of one column. ``limit``: where the footer starts; ``plain``: the
    file has no encryption; ``load(rg)`` gives a chunk's filter the slow way and
    ``ensure(arrays, units)`` fills the arrays' rows of ``units``."""

    def __init__(
        self,
        fh: BinaryIO,
        arrays: ChunkArrays,
        limit: int,
        plain: bool,
        load: Callable[[int], LoadedFilter],
        ensure: Callable[[ChunkArrays, np.ndarray], None],
    ) -> None:
        self.fh, self.arrays, self.limit, self.plain, self.load = fh, arrays, limit, plain, load
        self.ensure = ensure
        self._data = np.zeros(0, np.uint8)  # the bitsets read so far, back to back
        self._at: dict[int, tuple[int, int]] = {}  # row group -> (bitset start, num_bytes)
        self._slow: set[int] = set()
        self._absent: set[int] = set()  # no bloom_filter_offset: no filter

    def test(self, units: np.ndarray, hashes: Callable[[], np.ndarray]) -> Findings:
        """Each unit's answer: absent, maybe present, or why there is no filter;
        ``hashes()`` gives the candidates' hashes (called only if a filter is there)."""
        seen = (self._at, self._slow, self._absent)
        self._read([u for u in units.tolist() if not any(u in s for s in seen)])
        n = units.shape[0]
        status = np.full(n, Status.UNAVAILABLE, np.uint8)
        why: list[str] = [""] * n
        fast = [j for j, u in enumerate(units.tolist()) if u in self._at]
        h = None
        if fast:
            h = hashes()
            where = [self._at[int(units[j])] for j in fast]
            starts = np.array([w[0] for w in where], np.int64)
            sizes = np.array([w[1] for w in where], np.int64)
            hit = np.empty(len(fast), np.bool_)
            sbbf_kernels.check_bitsets(self._data, starts, sizes, h, hit)
            for j, maybe in zip(fast, hit.tolist(), strict=True):
                status[j] = Status.INCONCLUSIVE if maybe else Status.EXCLUDED
                why[j] = "bloom filter: maybe present" if maybe else "bloom filter: absent"
        for j, u in enumerate(units.tolist()):
            if u in self._at:
                continue
            if u in self._absent:
                why[j] = ABSENT
                continue
            loaded = self.load(u)
            if loaded.filter is None:
                invalid = loaded.status is FilterStatus.INVALID
                why[j] = f"bloom filter invalid: {loaded.reason}" if invalid else loaded.reason
                continue
            h = hashes() if h is None else h
            if loaded.filter.check_hashes(h).any():
                status[j], why[j] = Status.INCONCLUSIVE, "bloom filter: maybe present"
            else:
                status[j], why[j] = Status.EXCLUDED, "bloom filter: absent"
        return Findings(status, why)

    def _read(self, units: list[int]) -> None:
        """Read the plain filters of ``units``; the others are left to :attr:`load`."""
        if not units or self.arrays.locked is not None:
            self._slow.update(units)
            return
        self.ensure(self.arrays, np.array(units, np.int64))
        rows = self.arrays.fields[units]
        off, length = int_field(14), int_field(15)
        offset, size = rows[:, off + 1], rows[:, length + 1]
        absent = (rows[:, F_META] != 1) | (rows[:, off] == 0)
        self._absent.update(u for u, a in zip(units, absent.tolist(), strict=True) if a)
        if absent.all():
            return
        plain = (
            (rows[:, F_META] == 1)
            & (rows[:, off] == 1)
            & (rows[:, length] == 1)
            & (offset >= 4)
            & (offset < self.limit)
            & (size > 0)
            & (size <= MAX_READ)
            & (offset + size <= self.limit)
        )
        if not self.plain:
            plain[:] = False
        slow = ~plain & ~absent
        self._slow.update(u for u, p in zip(units, slow.tolist(), strict=True) if p)
        if not plain.any():
            return
        picked = [u for u, p in zip(units, plain.tolist(), strict=True) if p]
        offset, size = offset[plain], size[plain]
        order = np.argsort(offset, kind="stable")
        # merge neighbours into reads [start, end); each filter lies inside its own
        ranges: list[list[int]] = []
        member = np.empty(len(picked), np.int64)
        for k in order.tolist():
            o, e = int(offset[k]), int(offset[k] + size[k])
            if (
                ranges
                and o - ranges[-1][1] <= GAP
                and max(e, ranges[-1][1]) - ranges[-1][0] <= MAX_READ
            ):
                ranges[-1][1] = max(ranges[-1][1], e)
            else:
                ranges.append([o, e])
            member[k] = len(ranges) - 1
        base = self._data.shape[0]
        total = sum(e - o for o, e in ranges)
        data = np.empty(base + total, np.uint8)
        data[:base] = self._data
        placed = np.full(len(ranges), -1, np.int64)  # where each read range sits in data
        at = base
        for r, (o, e) in enumerate(ranges):
            self.fh.seek(o)
            if self.fh.readinto(memoryview(data)[at : at + e - o]) == e - o:
                placed[r] = at
            at += e - o
        first = np.array([o for o, _ in ranges], np.int64)
        starts = np.where(placed[member] >= 0, placed[member] + offset - first[member], -1)
        nb = np.full(len(picked), -1, np.int64)
        hl = np.zeros(len(picked), np.int64)
        ok = starts >= 0
        if ok.any():
            nb_ok, hl_ok = np.empty(int(ok.sum()), np.int64), np.empty(int(ok.sum()), np.int64)
            kernels.plain_filter_headers(data, starts[ok], size[ok], nb_ok, hl_ok)
            nb[ok], hl[ok] = nb_ok, hl_ok
        self._data = data
        for k, u in enumerate(picked):
            if nb[k] > 0:
                self._at[u] = (int(starts[k] + hl[k]), int(nb[k]))
            else:
                self._slow.add(u)
