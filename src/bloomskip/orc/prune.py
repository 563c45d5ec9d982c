"""Which row groups of an ORC file may hold rows matching a predicate, and why.

:func:`prune` binds a predicate (SQL text or an :mod:`bloomskip.expr` tree) to the
file's columns, then decides each row group - ``row_index_stride`` rows, stripe by
stripe - with the cheapest evidence first, as ORC's readers do:

1. **statistics** - the row group's entry in the column's row index: value count,
   ``has_null``, and min/max (integers, floats, decimals, dates, strings, timestamps),
   the count of ``true`` for booleans. Without a row index (stride 0) the units are
   stripes and their stripe statistics are used;
2. **bloom filter** - the row group's entry of the column's bloom filter index
   (``BLOOM_FILTER_UTF8`` preferred), tested with the literal converted and hashed
   exactly as the file's writer hashed its values (:mod:`bloomskip.orc.filter`).

Each value of ``=`` / ``IN`` goes through the stages until one rules it out; a row group
is skipped only when every alternative of the predicate is ruled out. Nothing that is in
doubt prunes (see :mod:`bloomskip.orc.trust` for the rules, from the writer id, writer
version, software version, calendar and bloom encoding):

* filters of writers known to hash some types wrongly (ORC C++ before 1.6.12/1.7.1:
  every number, ORC-1024; ORC C++ BYTE, BOOLEAN, FLOAT, CHAR, and BINARY before 1.7.0;
  ORC Java BOOLEAN, all zeros), legacy ``BLOOM_FILTER`` streams for types whose hash
  changed (strings in the JVM's charset, decimals, timestamps), writers bloomskip has
  not checked (Presto, Trino, Go, cuDF), and any filter whose ``k`` or bitset is not one
  ORC's sizing makes;
* statistics with a known history (timestamps before ORC-135, decimal64 in ORC 1.5.0 to
  1.5.5, strings before HIVE-8732, C++ string bounds holding NUL bytes, CHAR padding,
  doubles with NaN); timestamps are compared with a two-second margin (ORC Java hashes
  and counts instants in (-1 s, 0) one second late; Arrow truncates milliseconds);
* dates and timestamps before 1582-10-16 in a file not written in the proleptic
  Gregorian calendar (ORC Java rebases them to the hybrid Julian calendar);
* values inside lists, maps and unions; ``!=`` / ``NOT IN`` (statistics only: a value
  count of zero, or min = max = the literal).

:func:`probe` asks only the bloom filters: ``absent`` / ``maybe`` / ``no filter`` per
row group for a column and values.

Literal semantics: an ORC ``TIMESTAMP`` holds the wall clock of the writer's zone
(pyarrow reads it so), so a ``TIMESTAMP '…'`` literal is compared as wall-clock time;
``TIMESTAMP_INSTANT`` (``timestamp with local time zone``) holds instants, compared in
UTC. A Spark ``TIMESTAMP_NTZ`` column (an ORC ``bigint`` of microseconds with the
attribute ``spark.sql.catalyst.type=timestamp_ntz``) is bound as a wall-clock
``timestamp[us]`` (:mod:`bloomskip.orc.schema`). Statistics are read by
:mod:`bloomskip.orc.statistics`.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa

from bloomskip.errors import BloomskipError, InvalidParameterError
from bloomskip.expr.bind import Column, bind, resolve  # noqa: F401 - Column for callers
from bloomskip.expr.expressions import BoundReference, Expression, In, LiteralPredicate, literal
from bloomskip.expr.literals import Values, convert, to_arrow
from bloomskip.orc import proto
from bloomskip.orc.bounds import Bounds, UnitBounds, findings, outside
from bloomskip.orc.feeds import base_hashes
from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter, optimal_num_hash_functions
from bloomskip.orc.schema import OrcColumn, schema_of
from bloomskip.orc.statistics import (
    Range,
    column_range,
    comparison_keys,
    entry_range,
    excluded,
    statistics_field,
)
from bloomskip.orc.stripes import (
    BLOOM_FILTER,
    BLOOM_FILTER_UTF8,
    ColumnBloomFilters,
    RowGroup,
    RowGroups,
)
from bloomskip.orc.trust import (
    CALENDAR_SAFE_DAY,
    JAVA,
    ORC_101,
    PROLEPTIC_GREGORIAN,
    bloom_policy,
    legacy_policy,
    statistics_policy,
)
from bloomskip.orc.types import BOOLEAN, DATE, TIMESTAMP, TIMESTAMPS
from bloomskip.prune.engine import Pruner, overall
from bloomskip.prune.engine import probe as probe_units
from bloomskip.prune.evidence import ColumnEvidence, Findings, Proof, Status
from bloomskip.prune.result import ProbeResult, ProbeUnit, PruneResult, Unit

STAGES = ("statistics", "bloom")

#: Timestamps this close to the epoch also test one second either side: ORC C++ stores
#: them a second off what it indexes (instants in (-1 s, 0); TIMESTAMP wall clocks in a
#: zone other than UTC when its offset, 26 h at most, puts the instant across the epoch).
_NEAR_EPOCH_NS = 27 * 3600 * 10**9
_NEAR_EPOCH_UTC_NS = 2 * 10**9
_UTC_ZONES = frozenset({"UTC", "GMT", "ETC/UTC", "ETC/GMT", "UCT", "ZULU", "Z", "+00:00"})
_EPOCH = dt.date(1970, 1, 1)


# ----------------------------------------------------------------------------- prune


def prune(
    path: str | os.PathLike,
    predicate: str | Expression,
    *,
    stages: Iterable[str] = STAGES,
    orc: OrcFile | None = None,
    zone: str | None = None,
) -> PruneResult:
    """Decide, for each row group of ``path``, whether it may hold a matching row.

    ``stages`` limits the evidence used (``"statistics"``, ``"bloom"``). Raises
    :class:`~bloomskip.errors.PredicateError` for a predicate that does not parse or names
    an unknown column, and the errors of :func:`~bloomskip.orc.file.read_orc` for a file
    whose tail cannot be read; a stripe footer, row index or bloom filter index that
    cannot be read only makes its row groups "may match", with the reason. ``zone``: the
    time zone a timestamp literal without an offset is a wall clock of, against a column
    of instants (a session time zone); None: UTC and this machine's zone.
    """
    name = os.fspath(path)
    f = orc or read_orc(name)
    schema, infos = schema_of(f)
    bound = bind(predicate, schema, zone)
    groups = f.row_group_columns()
    file = _FileContext(f, infos, groups, frozenset(stages))
    verdict = Pruner(len(groups), file.evidence).decide(bound)
    result = PruneResult(name, str(predicate))
    why = verdict.why or [""] * len(groups)
    rows = zip(groups.first_row, groups.num_rows, verdict.may.tolist(), strict=True)
    for number, (first, n, may) in enumerate(rows):
        result.units.append(Unit(number, first, n, bool(may), why[number] or ""))
    return result


def probe(path: str | os.PathLike, column: str, values: Iterable[Any]) -> ProbeResult:
    """Ask each row group's bloom filter for ``values`` (Python values or
    :class:`~bloomskip.expr.Literal`), converted to the column's type first."""
    name = os.fspath(path)
    lits = tuple(literal(v) for v in values)
    f = read_orc(name)
    schema, infos = schema_of(f)
    ref = resolve(column, schema)
    leaf = In(ref, lits, tuple(convert(lit, ref.type) for lit in lits))
    groups = f.row_group_columns()
    file = _FileContext(f, infos, groups, frozenset({"bloom"}))
    answers = probe_units(file.evidence(ref), leaf, np.arange(len(groups)))
    result = ProbeResult(name, ref.name, [str(lit) for lit in lits])
    for number, (g, answer) in enumerate(zip(groups, answers, strict=True)):
        statuses = tuple(s for s, _ in answer)
        reason = "; ".join(dict.fromkeys(r for _, r in answer))
        result.units.append(
            ProbeUnit(number, g.first_row, g.num_rows, overall(statuses), statuses, reason)
        )
    return result


# ---------------------------------------------------------------------- evaluation


class _FileContext:
    """Per-file state: the file, its columns and units (row groups, or stripes without a
    row index), and what was read: per-stripe indexes, statistics, filters, hashes."""

    def __init__(
        self, orc: OrcFile, infos: list[OrcColumn], groups: RowGroups, stages: frozenset[str]
    ) -> None:
        unknown = stages - set(STAGES)
        if unknown:
            raise InvalidParameterError(f"unknown stages {sorted(unknown)}; use {STAGES}")
        self.orc, self.infos, self.groups, self.stages = orc, infos, groups, stages
        self._index: dict[tuple[int, int], tuple | str] = {}
        self._blooms: dict[tuple[int, int], ColumnBloomFilters | str | None] = {}
        self._hashes: dict[tuple, np.ndarray | str] = {}
        self._bloom_policy: dict[int, str | None] = {}
        self._stripe_stats: tuple | str | None = None
        self._ranges: dict[tuple[int, int], Range] = {}
        self._stripe_ranges: dict[tuple[int, int], Range] = {}
        self._filters: dict[tuple[int, int], OrcBloomFilter | str] = {}
        self._int_bounds = UnitBounds(orc, groups)

    def evidence(self, ref: BoundReference) -> ColumnEvidence:
        return _Column(self, ref.key, ref.name)

    def bloom_policy(self, col: int) -> str | None:
        if col not in self._bloom_policy:
            self._bloom_policy[col] = bloom_policy(self.orc, self.infos[col])
        return self._bloom_policy[col]

    def row_index(self, stripe: int, col: int) -> tuple | str:
        """The statistics of the row index entries of ``col`` in ``stripe`` (those
        fields :func:`column_range` reads), or why there are none."""
        key = (stripe, col)
        if key not in self._index:
            try:
                field = statistics_field(self.infos[col])
                entries = self.orc.row_index_statistics(stripe, col, field)
                self._index[key] = "no row index" if entries is None else entries
            except BloomskipError as e:
                self._index[key] = f"row index unreadable: {e}"
        return self._index[key]

    def stripe_statistics(self, stripe: int, col: int) -> proto.ColumnStatistics | str:
        if self._stripe_stats is None:
            try:
                self._stripe_stats = self.orc.metadata().stripe_statistics
            except BloomskipError as e:
                self._stripe_stats = f"stripe statistics unreadable: {e}"
        stats = self._stripe_stats
        if isinstance(stats, str):
            return stats
        if stripe >= len(stats) or col >= len(stats[stripe]):
            return "no stripe statistics"
        return stats[stripe][col]

    def bloom_index(self, stripe: int, col: int) -> ColumnBloomFilters | str | None:
        key = (stripe, col)
        if key not in self._blooms:
            try:
                self._blooms[key] = self.orc.bloom_filters(stripe, col)
            except BloomskipError as e:
                self._blooms[key] = f"bloom filter index unreadable: {e}"
        return self._blooms[key]

    def zone(self, stripe: int) -> str | None:
        try:
            return self.orc.writer_timezone(stripe)
        except BloomskipError:
            return None

    def hashes(self, col: int, values: tuple, zone: str | None) -> np.ndarray | str:
        """Base hashes of the candidate values, as the file's writer hashed them; a
        string says why they cannot be computed."""
        info = self.infos[col]
        key = (col, values, zone if info.kind == TIMESTAMP else None)
        h = self._hashes.get(key)
        if h is None:
            try:
                h = self._hashes[key] = _literal_hashes(self.orc, info, values, zone)
            except BloomskipError as e:
                h = self._hashes[key] = f"cannot hash the literal as the writer did: {e}"
        return h

    def bounds(self, units: np.ndarray, col: int) -> Bounds | None:
        """Integer bounds of ``col`` in ``units`` as arrays (None: ask :meth:`range`)."""
        used = "statistics" in self.stages
        return self._int_bounds.of(units, col, self.infos[col]) if used else None

    # -- per unit ------------------------------------------------------------------

    def range(self, unit: int, col: int) -> Range:
        r = self._ranges.get((unit, col))
        if r is None:
            r = self._ranges[(unit, col)] = self._read_range(self.groups[unit], col)
        return r

    def stripe_range(self, stripe: int, col: int) -> Range:
        """What the stripe's statistics say of ``col`` (every row group of the stripe)."""
        r = self._stripe_ranges.get((stripe, col))
        if r is None:
            cs = self.stripe_statistics(stripe, col)
            r = (
                Range(note=cs)
                if isinstance(cs, str)
                else column_range(self.orc, self.infos[col], cs, "no statistics")
            )
            self._stripe_ranges[(stripe, col)] = r
        return r

    def _read_range(self, g: RowGroup, col: int) -> Range:
        info = self.infos[col]
        if "statistics" not in self.stages:
            return Range(note="statistics not used")
        if self.orc.row_index_stride == 0:
            return self.stripe_range(g.stripe, col)
        entries = self.row_index(g.stripe, col)
        if isinstance(entries, str):
            return Range(note=entries)
        entry = entries[g.index]
        if entry is None:
            return Range(note="no statistics")
        return entry_range(self.orc, info, *entry)

    def filter(self, unit: int, col: int, values: tuple) -> tuple[OrcBloomFilter | None, str]:
        """The unit's trusted filter of ``col`` for these values, or why not."""
        policy = self.bloom_policy(col)
        if policy:
            return None, f"bloom filter not used: {policy}"
        g = self.groups[unit]
        cbf = self.bloom_index(g.stripe, col)
        if cbf is None:
            return None, "no bloom filter"
        if isinstance(cbf, str):
            return None, cbf
        orc, info = self.orc, self.infos[col]
        if cbf.stream_kind == BLOOM_FILTER_UTF8:
            if cbf.bloom_encoding != 1:
                return None, (
                    f"bloom filter not used: BLOOM_FILTER_UTF8 with bloom_encoding "
                    f"{cbf.bloom_encoding} (1, UTF8_UTC, expected)"
                )
            version = orc.writer.writer_version or 0
            if (orc.writer.writer or JAVA) == JAVA and version < ORC_101:
                return (
                    None,
                    f"bloom filter not used: BLOOM_FILTER_UTF8 from writer version {version}",
                )
        elif cbf.stream_kind == BLOOM_FILTER:
            why = legacy_policy(orc, info, values)
            if why:
                return None, f"bloom filter not used: {why}"
        found = self._filters.get((unit, col))
        if found is None:
            found = self._filters[(unit, col)] = self._load(cbf, g)
        if isinstance(found, str):
            return None, found
        return found, ""

    def _load(self, cbf: ColumnBloomFilters, g: RowGroup) -> OrcBloomFilter | str:
        j = g.index
        k = cbf.num_hash_functions(j)
        try:
            bf = OrcBloomFilter.from_index(k, utf8bitset=cbf.bitset(j), copy=False)
        except BloomskipError as e:
            return f"bloom filter invalid: {e}"
        stride = self.orc.row_index_stride
        expected = optimal_num_hash_functions(stride, bf.num_bits)
        if expected != bf.num_hash_functions:
            return (
                f"bloom filter invalid: k = {bf.num_hash_functions}, but ORC's sizing of "
                f"{bf.num_bits} bits for stride {stride} gives k = {expected}"
            )
        return bf

    def calendar_doubt(self, info: OrcColumn, values: tuple) -> str | None:
        """Dates and timestamps before the Gregorian cutover, in a file not written in
        the proleptic Gregorian calendar: ORC Java stores them rebased to the hybrid
        calendar, and readers disagree on reading them back."""
        if self.orc.writer.calendar == PROLEPTIC_GREGORIAN:
            return None
        if info.kind == DATE:
            early = any((v - _EPOCH).days < CALENDAR_SAFE_DAY for v in values)
        elif info.kind in TIMESTAMPS:
            early = any(v < CALENDAR_SAFE_DAY * 86_400 * 10**9 for v in values)
        else:
            return None
        if early:
            return "before 1582-10-16 in a file not in the proleptic Gregorian calendar"
        return None


def _literal_hashes(orc: OrcFile, info: OrcColumn, values: tuple, zone: str | None) -> np.ndarray:
    t = info.orc_type
    assert t is not None and info.arrow_type is not None
    arr = to_arrow(values, info.arrow_type)
    writer = JAVA if orc.writer.writer is None else orc.writer.writer
    if info.ntz:
        return base_hashes(arr.view(pa.int64()), t)
    if info.kind in TIMESTAMPS:
        if info.kind == TIMESTAMP and zone is None and writer == JAVA:
            raise InvalidParameterError(
                "no writer time zone in the stripe footer (ORC Java's (-1 s, 0) quirk needs it)"
            )
        # Near the epoch ORC C++ stores a second more or less than it indexes: it adjusts
        # negative seconds by the sign of the instant, its readers by the sign of the
        # seconds stored. Instants in (-1 s, 0) read back a second late (pyorc), and in a
        # zone other than UTC, TIMESTAMP wall clocks within the zone's offset of the
        # epoch (26 h at most) a second early or late.
        shifted = info.kind == TIMESTAMP and (zone or "").upper() not in _UTC_ZONES
        window = _NEAR_EPOCH_NS if shifted else _NEAR_EPOCH_UTC_NS
        near = [v + d for v in values if abs(v) < window for d in (-(10**9), 10**9)]
        if near:
            arr = to_arrow(tuple(values) + tuple(near), info.arrow_type)
        # Every writer's millisecond rule: Java's (-1 s, 0) quirk, floored (C++ fed
        # normalized values) and truncated (Arrow's adapter) milliseconds.
        parts = [
            base_hashes(arr, t, writer_timezone=zone or "UTC", writer=w)
            for w in ("java", "c++", "pyarrow")
        ]
        return np.unique(np.concatenate(parts))
    family = "java" if writer == JAVA else "c++"
    return base_hashes(arr, t, writer=family)


class _Column(ColumnEvidence):
    """One ORC column over the units of a file."""

    def __init__(self, file: _FileContext, col: int, name: str) -> None:
        super().__init__(name)
        self.f, self.col, self.info = file, col, file.infos[col]
        calendar = _Calendar(self)
        self.coarse = [_Stripes(self)]
        self.stages = [calendar, _Statistics(self), _Bloom(self, used="bloom" in file.stages)]
        self.probe_stages = [calendar, _Bloom(self, used=True)]

    def blocked(self, units: np.ndarray) -> Proof:
        if self.info.nested:
            why = f"{self.name} is inside a {self.info.nested}; not used for pruning"
            return Proof(np.ones(units.shape[0], np.bool_), why)
        return Proof.none(units.shape[0], "")

    def no_nulls(self, units: np.ndarray) -> Proof:
        """A row's value is null if it or any enclosing struct is: proven only when each
        of them has as many values as the unit has rows, and no nulls."""
        if self.info.nested:
            return Proof.none(units.shape[0], f"{self.name} is inside a {self.info.nested}")
        chain = (*self.info.ancestors, self.info.id)
        proven = np.array(
            [
                all(
                    (r := self.f.range(u, cid)).has_null is False
                    and r.count == self.f.groups[u].num_rows
                    for cid in chain
                )
                for u in units.tolist()
            ],
            dtype=np.bool_,
        )
        return Proof(proven, [f"statistics: {self.name} has no nulls" if p else
                              f"{self.name} may be null" for p in proven])  # fmt: skip

    def only_nulls(self, units: np.ndarray) -> Proof:
        b = self.f.bounds(units, self.col)
        if b is not None:
            proven = b.zero
        else:
            proven = np.array([self.f.range(u, self.col).count == 0 for u in units.tolist()], bool)
        yes, no = f"statistics: every {self.name} is null", f"{self.name} may be non-null"
        return Proof(proven, [yes if p else no for p in proven.tolist()])

    def all_equal(self, p: LiteralPredicate, units: np.ndarray) -> Proof:
        """Only statistics can rule ``!=`` out: a boolean unit whose values are all one
        literal, or exact bounds with min = max = a literal the calendar does not doubt."""
        info, name = self.info, self.name
        lits = ", ".join(map(str, p.literals))
        proven, why = [], []
        for u in units.tolist():
            r = self.f.range(u, self.col)
            ok = False
            if info.kind == BOOLEAN and r.true_count is not None and r.count is not None:
                value = True if r.true_count == r.count else False if r.true_count == 0 else None
                ok = value is not None and any(
                    isinstance(c, Values) and c.values == (value,) for c in p.conversions
                )
            elif r.exact and r.lo is not None and r.lo == r.hi:
                for conv in p.conversions:
                    if isinstance(conv, Values) and conv.exact and len(conv.values) == 1:
                        if self.f.calendar_doubt(info, conv.values):
                            continue
                        if comparison_keys(info, conv.values) == [r.lo]:
                            ok = True
                            break
            proven.append(ok)
            why.append(
                f"statistics: every non-null {name} equals one of {lits}"
                if ok
                else f"{name} has values other than the literals"
            )
        return Proof(np.array(proven, dtype=np.bool_), why)


class _Calendar:
    """Values the calendar puts in doubt may match, whatever the evidence says."""

    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        doubt = self.c.f.calendar_doubt(self.c.info, values.values)
        if doubt:
            return Findings.same(units.shape[0], Status.INCLUDED, doubt)
        return Findings.same(units.shape[0], Status.UNAVAILABLE, "")


class _Statistics:
    """Min/max (or the count of true values): ruled out when every value lies outside."""

    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        info, f, col = self.c.info, self.c.f, self.c.col
        b = f.bounds(units, col)
        if b is not None:  # integers: in arrays
            keys = comparison_keys(info, values.values) if b.bounded.any() else []
            out = outside(b, keys)
            if out is not None:
                return findings(b, out, lambda j: f.range(int(units[j]), col).note)
        ranges = [f.range(u, col) for u in units.tolist()]
        if info.kind == BOOLEAN:
            keys = None
            status, why = [], []
            for r in ranges:
                s, text, keys = _test_range(info, r, values.values, keys)
                status.append(s)
                why.append(text)
            return Findings(np.array(status, dtype=np.uint8), why)
        known = [r.lo is not None or r.hi is not None for r in ranges]
        keys = comparison_keys(info, values.values) if any(known) else []
        out = excluded(ranges, keys).tolist()
        status = np.array(
            [
                Status.EXCLUDED if o else Status.INCONCLUSIVE if k else Status.UNAVAILABLE
                for k, o in zip(known, out, strict=True)
            ],
            dtype=np.uint8,
        )
        why = [
            f"statistics: outside {r.show()}"
            if o
            else "within [min, max]"
            if k
            else r.note or "no statistics"
            for r, k, o in zip(ranges, known, out, strict=True)
        ]
        return Findings(status, why)


def _test_range(info: OrcColumn, r: Range, values: tuple, keys: list | None) -> tuple:
    """One unit's statistics against the candidates: (status, reason, the comparison
    keys, computed once)."""
    if info.kind == BOOLEAN and r.true_count is not None and r.count is not None:
        out = all(r.true_count == (0 if v else r.count) for v in values)
        text = f"statistics: {r.true_count} of {r.count} values are true"
        return (Status.EXCLUDED if out else Status.INCONCLUSIVE), text, keys
    if r.lo is not None or r.hi is not None:
        keys = comparison_keys(info, values) if keys is None else keys
        if keys and all(r.excludes(k) for k in keys):
            return Status.EXCLUDED, f"statistics: outside {r.show()}", keys
        return Status.INCONCLUSIVE, "within [min, max]", keys
    return Status.UNAVAILABLE, r.note or "no statistics", keys


class _Stripes:
    """Coarse: a stripe's statistics rule the values out for all its row groups at once,
    before any row index is read (they bound every value of the stripe)."""

    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        f, col, info = self.c.f, self.c.col, self.c.info
        n = units.shape[0]
        if "statistics" not in f.stages or f.orc.row_index_stride == 0:
            return Findings.same(n, Status.UNAVAILABLE, "")  # units are stripes already
        if f.calendar_doubt(info, values.values):
            return Findings.same(n, Status.UNAVAILABLE, "")
        status = np.full(n, Status.UNAVAILABLE, np.uint8)
        why = [""] * n
        keys = None
        stripes = f.groups.stripes[units]
        for stripe in np.unique(stripes).tolist():  # in the order the units ask
            s, text, keys = _test_range(info, f.stripe_range(stripe, col), values.values, keys)
            if s == Status.EXCLUDED:
                here = np.flatnonzero(stripes == stripe)
                status[here] = Status.EXCLUDED
                for j in here.tolist():
                    why[j] = f"stripe {text}"
        return Findings(status, why)


class _Bloom:
    """The row group's entry of the bloom filter index, hashed as its writer hashed."""

    def __init__(self, column: _Column, *, used: bool) -> None:
        self.c, self.used = column, used

    def test(self, values: Values, units: np.ndarray) -> Findings:
        if not self.used:
            return Findings.same(units.shape[0], Status.UNAVAILABLE, "bloom filter not used")
        f, col = self.c.f, self.c.col
        status, why = [], []
        for u in units.tolist():
            bf, reason = f.filter(u, col, values.values)
            h = None if bf is None else f.hashes(col, values.values, f.zone(f.groups[u].stripe))
            if bf is None or isinstance(h, str):
                status.append(Status.UNAVAILABLE)
                why.append(reason or h)
            elif bf.test_hashes(h).any():
                status.append(Status.INCONCLUSIVE)
                why.append("bloom filter: maybe present")
            else:
                status.append(Status.EXCLUDED)
                why.append("bloom filter: absent")
        return Findings(np.array(status, dtype=np.uint8), why)


__all__ = [
    "STAGES",
    "OrcColumn",
    "bloom_policy",
    "probe",
    "prune",
    "schema_of",
    "statistics_policy",
]
