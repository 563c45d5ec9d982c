"""What a zone index knows about its files and zones, as evidence for the pruning engine.

The engine (:mod:`bloomskip.prune.engine`) decides a zone index twice per query, with the
same rules as Parquet and ORC row groups:

* over the **files** (:class:`FileEvidence`): each file's file-level filter, so a query
  can report which files a file filter ruled out;
* over the **zones** (:class:`ZoneEvidence`): ``has_null`` and ``ndv`` of each zone for
  ``IS [NOT] NULL``; for ``=`` / ``IN`` the file filter of the zone's file first, then
  the zone's own filter, each probed in one kernel call for every zone still in doubt.

A zone a column does not cover (the column could not be indexed for its file) is
*blocked*: it may match. Literals are hashed as the index hashed its values
(:class:`ColumnIndex`: Parquet PLAIN or Arrow bytes, xxHash64); literals that cannot be,
and IN lists so long that a zone holding none of the values would still be kept with a
probability above ``max_in_fpp``, leave the index unused for that leaf (may match, with a
note).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from bloomskip.errors import BloomskipError
from bloomskip.expr.expressions import LiteralPredicate
from bloomskip.expr.literals import Values, to_arrow
from bloomskip.hashing import hash_values
from bloomskip.index.layout import ColumnIndex
from bloomskip.index.zonedata import ColumnData, Routed
from bloomskip.prune.evidence import ColumnEvidence, Findings, Proof, Status, Unavailable

# as numpy scalars: np.where with IntEnum members takes numpy's slow path for objects
_MAYBE, _OUT = np.uint8(Status.INCONCLUSIVE), np.uint8(Status.EXCLUDED)


@dataclass
class Universe:
    """The units of one query: the files (fragment ids, sorted) and every zone any
    referenced column holds for them (keys sorted), with each zone's file."""

    fids: np.ndarray  # uint64, sorted
    keys: np.ndarray  # uint64 zone keys, sorted
    zfile: np.ndarray  # int64: position in fids of each zone's file
    max_in_fpp: float
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


class _Column:
    """One column's data placed in the universe, and its literals hashed once."""

    def __init__(self, spec: ColumnIndex, data: ColumnData, universe: Universe) -> None:
        self.spec, self.data, self.u = spec, data, universe
        # one column's zones are the universe: zone i is row i of the column's data
        self.same = universe.keys is data.key
        if self.same:
            self.zrow = data.derived("rows")
        else:
            self.zrow = rows_of(data.key, universe.keys)  # row of each zone in data, -1: none
        self.frow = rows_of(data.file_fragment, universe.fids)
        self._hashes: dict[tuple, np.ndarray | Unavailable] = {}
        self._files: dict[tuple, np.ndarray] = {}

    def hashes(self, values: Values) -> np.ndarray | Unavailable:
        """The literals' hashes as the index hashed its values, or why not to use them."""
        found = self._hashes.get(values.values)
        if found is None:
            found = literal_hashes(self.spec, values, self.u.max_in_fpp, self.u.note)
            self._hashes[values.values] = found
        return found

    def file_may(self, values: Values, files: np.ndarray) -> np.ndarray | Unavailable:
        """Per file (positions in the universe): may its file filter hold a value?"""
        h = self.hashes(values)
        if isinstance(h, Unavailable):
            return h
        out = np.ones(files.shape[0], np.bool_)
        rows = self.frow[files]
        has = rows >= 0  # files without a file filter: may
        if has.any():
            out[has] = self.data.files.probe(rows[has], h)
        return out


def literal_hashes(
    spec: ColumnIndex, values: Values, max_in_fpp: float, note: Callable[[str], None]
) -> np.ndarray | Unavailable:
    """The distinct hashes of a literal's candidate values, hashed as the index hashed the
    column's values, or why not to use them (``note`` is told): literals that cannot be
    hashed so, and IN lists so long that a zone holding none of the values would still
    be kept with a probability above ``max_in_fpp``."""
    name = spec.name
    try:
        h = hash_values(
            to_arrow(values.values, spec.arrow_type),
            physical=spec.physical,
            encoding=spec.encoding,
        )
    except (BloomskipError, pa.ArrowException, ValueError, OverflowError) as e:
        why = f"{name}: literals cannot be hashed as the index does ({e}); may match"
        note(why)
        return Unavailable(why)
    h = np.unique(h)
    k = int(h.shape[0])
    compounded = -np.expm1(k * np.log1p(-spec.fpp))
    if k > 1 and compounded > max_in_fpp:
        why = (
            f"{name} IN ({k} values): index not used - a zone holding none of them is "
            f"still kept with probability 1-(1-{spec.fpp:g})^{k} = {compounded:.2f} > "
            f"max_in_fpp {max_in_fpp:g}"
        )
        note(why)
        return Unavailable(why)
    return h


def rows_of(sorted_keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each wanted key, its position in ``sorted_keys`` or -1."""
    if sorted_keys.shape[0] == 0:
        return np.full(wanted.shape[0], -1, dtype=np.int64)
    pos = np.searchsorted(sorted_keys, wanted)
    pos = np.minimum(pos, sorted_keys.shape[0] - 1)
    return np.where(sorted_keys[pos] == wanted, pos, -1).astype(np.int64)


class FileEvidence(ColumnEvidence):
    """A column over the files of the universe: only file filters say anything."""

    def __init__(self, column: _Column) -> None:
        super().__init__(column.spec.name)
        self.c = column
        self.stages = [self]

    def test(self, values: Values, units: np.ndarray) -> Findings:
        may = self.c.file_may(values, units)
        if isinstance(may, Unavailable):
            return Findings.same(units.shape[0], Status.UNAVAILABLE, may.reason)
        status = np.where(may, _MAYBE, _OUT)
        return Findings(status, "file filter")


class ZoneEvidence(ColumnEvidence):
    """A column over the zones of the universe: file filter, then zone filter."""

    def __init__(self, column: _Column) -> None:
        super().__init__(column.spec.name)
        self.c = column
        self.stages = [_FileFilter(column), _ZoneFilter(column)]

    def blocked(self, units: np.ndarray) -> Proof:
        if self.c.same:  # every zone of the universe is the column's
            return Proof(np.zeros(units.shape[0], np.bool_), "")
        return Proof(self.c.zrow[units] < 0, f"{self.name} is not indexed for this file")

    def no_nulls(self, units: np.ndarray) -> Proof:
        rows = self.c.zrow[units]
        ok = rows >= 0
        proven = np.zeros(units.shape[0], np.bool_)
        proven[ok] = ~self.c.data.has_null[rows[ok]]
        return Proof(proven, "has_null")

    def all_equal(self, p: LiteralPredicate, units: np.ndarray) -> Proof:
        self.c.u.note(f"{p}: not answered by the index (only =, IN and IS [NOT] NULL are)")
        return Proof.none(units.shape[0], "")

    def only_nulls(self, units: np.ndarray) -> Proof:
        if self.c.same:
            empty = self.c.data.derived("empty")
            return Proof(empty if _every(units, empty.shape[0]) else empty[units], "ndv")
        rows = self.c.zrow[units]
        ok = rows >= 0
        proven = np.zeros(units.shape[0], np.bool_)
        proven[ok] = self.c.data.ndv[rows[ok]] == 0
        return Proof(proven, "ndv")


class _FileFilter:
    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        if self.c.data.file_fragment.shape[0] == 0:  # no file filters: nothing to say
            return Findings.same(units.shape[0], Status.INCONCLUSIVE, "file filter")
        zfile = self.c.u.zfile[units]  # non-decreasing: units ascend, zones sort by file
        first = np.ones(zfile.shape[0], np.bool_)
        first[1:] = zfile[1:] != zfile[:-1]
        files, at = zfile[first], np.cumsum(first) - 1
        may = self.c.file_may(values, files)
        if isinstance(may, Unavailable):
            return Findings.same(units.shape[0], Status.UNAVAILABLE, may.reason)
        status = np.where(may[at], _MAYBE, _OUT)
        return Findings(status, "file filter")


class _ZoneFilter:
    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        h = self.c.hashes(values)
        if isinstance(h, Unavailable):
            return Findings.same(units.shape[0], Status.UNAVAILABLE, h.reason)
        zones = self.c.data.zones
        if self.c.same and isinstance(zones, Routed) and _every(units, self.c.zrow.shape[0]):
            may = zones.probe_every(h)  # every zone of the column, in order
        else:
            rows = units if self.c.same else self.c.zrow[units]
            may = zones.probe(rows, h)  # units are never blocked
        status = np.where(may, _MAYBE, _OUT)
        return Findings(status, "zone filter")


def _every(units: np.ndarray, n: int) -> bool:
    """Are ``units`` (ascending, distinct: the engine's) all of ``0..n-1``?"""
    return units.shape[0] == n and (n == 0 or (units[0] == 0 and units[-1] == n - 1))


def column_evidence(
    spec: ColumnIndex, data: ColumnData, universe: Universe
) -> tuple[FileEvidence, ZoneEvidence]:
    """A column's evidence over the universe's files and over its zones."""
    column = _Column(spec, data, universe)
    return FileEvidence(column), ZoneEvidence(column)


__all__ = [
    "FileEvidence",
    "Universe",
    "ZoneEvidence",
    "column_evidence",
    "literal_hashes",
    "rows_of",
]
