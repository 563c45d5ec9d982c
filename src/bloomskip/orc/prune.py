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
from bloomskip.expr.bind import (
    BoundEqualTo,
    BoundIn,
    BoundIsNull,
    BoundNotEqualTo,
    BoundNotIn,
    BoundNotNull,
    BoundPredicate,
    bind,
    resolve,
)
from bloomskip.expr.evaluate import Decision, any_literal, cannot, evaluate, might
from bloomskip.expr.expressions import Expression, Literal, literal
from bloomskip.expr.literals import Converted, NoMatch, Unknown, Values, convert, to_arrow
from bloomskip.orc import proto
from bloomskip.orc.feeds import base_hashes
from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter, optimal_num_hash_functions
from bloomskip.orc.schema import OrcColumn, schema_of
from bloomskip.orc.statistics import Range, column_range, comparison_keys
from bloomskip.orc.stripes import BLOOM_FILTER, BLOOM_FILTER_UTF8, ColumnBloomFilters, RowGroup
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
from bloomskip.prune_result import ProbeResult, ProbeUnit, PruneResult, Unit

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
) -> PruneResult:
    """Decide, for each row group of ``path``, whether it may hold a matching row.

    ``stages`` limits the evidence used (``"statistics"``, ``"bloom"``). Raises
    :class:`~bloomskip.errors.PredicateError` for a predicate that does not parse or names
    an unknown column, and the errors of :func:`~bloomskip.orc.file.read_orc` for a file
    whose tail cannot be read; a stripe footer, row index or bloom filter index that
    cannot be read only makes its row groups "may match", with the reason.
    """
    name = os.fspath(path)
    f = orc or read_orc(name)
    schema, infos = schema_of(f)
    bound = bind(predicate, schema)
    files = _FileContext(f, infos, frozenset(stages))
    result = PruneResult(name, str(predicate))
    for number, g in enumerate(f.row_groups()):
        decision = evaluate(bound, _RowGroupContext(files, g).leaf)
        result.units.append(
            Unit(number, g.first_row, g.num_rows, decision.may_match, decision.reason)
        )
    return result


def probe(path: str | os.PathLike, column: str, values: Iterable[Any]) -> ProbeResult:
    """Ask each row group's bloom filter for ``values`` (Python values or
    :class:`~bloomskip.expr.Literal`), converted to the column's type first."""
    name = os.fspath(path)
    lits = [literal(v) for v in values]
    f = read_orc(name)
    schema, infos = schema_of(f)
    ref = resolve(column, schema)
    converted = [convert(lit, ref.type) for lit in lits]
    files = _FileContext(f, infos, frozenset({"bloom"}))
    result = ProbeResult(name, ref.name, [str(lit) for lit in lits])
    for number, g in enumerate(f.row_groups()):
        ctx = _RowGroupContext(files, g)
        per_value, reasons = [], []
        for lit, conv in zip(lits, converted, strict=True):
            status, reason = ctx.probe(ref.key, lit, conv)
            per_value.append(status)
            reasons.append(reason)
        overall = (
            "absent"
            if all(s == "absent" for s in per_value)
            else ("maybe" if "maybe" in per_value else "no filter")
        )
        result.units.append(
            ProbeUnit(
                number,
                g.first_row,
                g.num_rows,
                overall,
                tuple(per_value),
                "; ".join(dict.fromkeys(reasons)),
            )
        )
    return result


# ---------------------------------------------------------------------- evaluation


class _FileContext:
    """Per-file state: the file, its columns, per-stripe indexes, cached literal hashes."""

    def __init__(self, orc: OrcFile, infos: list[OrcColumn], stages: frozenset[str]) -> None:
        unknown = stages - set(STAGES)
        if unknown:
            raise InvalidParameterError(f"unknown stages {sorted(unknown)}; use {STAGES}")
        self.orc, self.infos, self.stages = orc, infos, stages
        self._index: dict[tuple[int, int], tuple | str] = {}
        self._blooms: dict[tuple[int, int], ColumnBloomFilters | str | None] = {}
        self._hashes: dict[tuple, np.ndarray | str] = {}
        self._bloom_policy: dict[int, str | None] = {}
        self._stripe_stats: tuple | str | None = None

    def bloom_policy(self, col: int) -> str | None:
        if col not in self._bloom_policy:
            self._bloom_policy[col] = bloom_policy(self.orc, self.infos[col])
        return self._bloom_policy[col]

    def row_index(self, stripe: int, col: int) -> tuple | str:
        """The row index entries of ``col`` in ``stripe``, or why there are none."""
        key = (stripe, col)
        if key not in self._index:
            try:
                entries = self.orc.row_index(stripe, col)
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


class _RowGroupContext:
    """Evaluates leaf predicates for one unit (a row group, or a stripe without index)."""

    def __init__(self, files: _FileContext, g: RowGroup) -> None:
        self.f = files
        self.g = g
        self._ranges: dict[int, Range] = {}
        self._filters: dict[int, OrcBloomFilter | str] = {}

    # -- evidence ------------------------------------------------------------------

    def range(self, col: int) -> Range:
        r = self._ranges.get(col)
        if r is None:
            r = self._ranges[col] = self._read_range(col)
        return r

    def _read_range(self, col: int) -> Range:
        f, info = self.f, self.f.infos[col]
        if "statistics" not in f.stages:
            return Range(note="statistics not used")
        if f.orc.row_index_stride == 0:
            cs = f.stripe_statistics(self.g.stripe, col)
            if isinstance(cs, str):
                return Range(note=cs)
            return column_range(f.orc, info, cs, "no statistics")
        entries = f.row_index(self.g.stripe, col)
        if isinstance(entries, str):
            return Range(note=entries)
        return column_range(f.orc, info, entries[self.g.index].statistics, "no statistics")

    def filter(self, col: int, values: tuple) -> tuple[OrcBloomFilter | None, str]:
        """The row group's trusted filter of ``col`` for these values, or why not."""
        policy = self.f.bloom_policy(col)
        if policy:
            return None, f"bloom filter not used: {policy}"
        cbf = self.f.bloom_index(self.g.stripe, col)
        if cbf is None:
            return None, "no bloom filter"
        if isinstance(cbf, str):
            return None, cbf
        orc, info = self.f.orc, self.f.infos[col]
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
        found = self._filters.get(col)
        if found is None:
            found = self._filters[col] = self._load(cbf)
        if isinstance(found, str):
            return None, found
        return found, ""

    def _load(self, cbf: ColumnBloomFilters) -> OrcBloomFilter | str:
        j = self.g.index
        k = cbf.num_hash_functions(j)
        try:
            bf = OrcBloomFilter.from_index(k, utf8bitset=cbf.bitset(j), copy=False)
        except BloomskipError as e:
            return f"bloom filter invalid: {e}"
        stride = self.f.orc.row_index_stride
        expected = optimal_num_hash_functions(stride, bf.num_bits)
        if expected != bf.num_hash_functions:
            return (
                f"bloom filter invalid: k = {bf.num_hash_functions}, but ORC's sizing of "
                f"{bf.num_bits} bits for stride {stride} gives k = {expected}"
            )
        return bf

    # -- leaves --------------------------------------------------------------------

    def leaf(self, p: BoundPredicate) -> Decision:
        col = p.term.key
        info = self.f.infos[col]
        name = p.term.name
        if info.nested:
            return might(f"{name} is inside a {info.nested}; not used for pruning")
        if isinstance(p, BoundIsNull):
            return self._is_null(info, name)
        if isinstance(p, BoundNotNull):
            if self.range(col).count == 0:
                return cannot(f"statistics: every {name} is null")
            return might(f"{name} may be non-null")
        if isinstance(p, BoundEqualTo):
            return self._any_value(col, name, (p.literal,), (p.converted,))
        if isinstance(p, BoundIn):
            return self._any_value(col, name, p.literals, p.converted)
        if isinstance(p, BoundNotEqualTo | BoundNotIn):
            lits = (p.literal,) if isinstance(p, BoundNotEqualTo) else p.literals
            conv = (p.converted,) if isinstance(p, BoundNotEqualTo) else p.converted
            return self._not_equal(col, name, lits, conv)
        return might(f"{p}: not used for pruning")

    def _is_null(self, info: OrcColumn, name: str) -> Decision:
        """A row's value is null if it or any enclosing struct is: rule it out only when
        each of them has as many values as the unit has rows, and no nulls."""
        for cid in (*info.ancestors, info.id):
            r = self.range(cid)
            if r.has_null is not False or r.count != self.g.num_rows:
                return might(f"{name} may be null")
        return cannot(f"statistics: {name} has no nulls")

    def _any_value(
        self, col: int, name: str, lits: tuple[Literal, ...], converted: tuple[Converted, ...]
    ) -> Decision:
        return any_literal(name, lits, converted, lambda conv: self._excluded(col, conv))

    def _excluded(self, col: int, conv: Values) -> tuple[bool, str]:
        """Whether the stages rule out every candidate value of one literal."""
        info = self.f.infos[col]
        doubt = self._calendar_doubt(info, conv.values)
        if doubt:
            return False, doubt
        r = self.range(col)
        if r.count == 0:
            return True, "statistics: every value is null"
        if info.kind == BOOLEAN and r.true_count is not None and r.count is not None:
            if all(r.true_count == (0 if v else r.count) for v in conv.values):
                return True, f"statistics: {r.true_count} of {r.count} values are true"
        elif r.lo is not None or r.hi is not None:
            keys = comparison_keys(info, conv.values)
            if keys and all(r.excludes(k) for k in keys):
                return True, f"statistics: outside {r.show()}"
        if r.lo is not None or r.hi is not None:
            why = "within [min, max]"
        elif r.true_count is not None:
            why = f"statistics: {r.true_count} of {r.count} values are true"
        else:
            why = r.note or "no statistics"
        if "bloom" not in self.f.stages:
            return False, f"{why}; bloom filter not used"
        bf, reason = self.filter(col, conv.values)
        if bf is None:
            return False, f"{why}; {reason}"
        h = self.f.hashes(col, conv.values, self.f.zone(self.g.stripe))
        if isinstance(h, str):
            return False, f"{why}; {h}"
        if not bf.test_hashes(h).any():
            return True, "bloom filter: absent"
        return False, "bloom filter: maybe present"

    def _calendar_doubt(self, info: OrcColumn, values: tuple) -> str | None:
        """Dates and timestamps before the Gregorian cutover, in a file not written in
        the proleptic Gregorian calendar: ORC Java stores them rebased to the hybrid
        calendar, and readers disagree on reading them back."""
        if self.f.orc.writer.calendar == PROLEPTIC_GREGORIAN:
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

    def _not_equal(
        self,
        col: int,
        name: str,
        lits: tuple[Literal, ...],
        converted: tuple[Converted, ...],
    ) -> Decision:
        """``!=`` and ``NOT IN``: only statistics can rule them out, never a filter."""
        info = self.f.infos[col]
        r = self.range(col)
        if r.count == 0:
            return cannot(f"statistics: every {name} is null")
        if info.kind == BOOLEAN and r.true_count is not None and r.count is not None:
            value = True if r.true_count == r.count else False if r.true_count == 0 else None
            for conv in converted:
                if value is not None and isinstance(conv, Values) and conv.values == (value,):
                    return cannot(f"statistics: every non-null {name} is {value}")
            return might(f"{name} has values other than the literals")
        if not r.exact or r.lo is None or r.lo != r.hi:
            return might(f"{name} != ...: only all-equal statistics could rule it out")
        for conv in converted:
            if isinstance(conv, Values) and conv.exact and len(conv.values) == 1:
                if self._calendar_doubt(info, conv.values):
                    continue
                keys = comparison_keys(info, conv.values)
                if keys == [r.lo]:
                    lit = ", ".join(map(str, lits))
                    return cannot(f"statistics: every non-null {name} equals one of {lit}")
        return might(f"{name} has values other than the literals")

    # -- probe ---------------------------------------------------------------------

    def probe(self, col: int, lit: Literal, conv: Converted) -> tuple[str, str]:
        if isinstance(conv, Unknown):
            return "maybe", f"{lit}: {conv.reason}"
        if isinstance(conv, NoMatch):
            return "absent", f"{lit}: {conv.reason}"
        info = self.f.infos[col]
        doubt = self._calendar_doubt(info, conv.values)
        if doubt:
            return "maybe", f"{lit}: {doubt}"
        bf, reason = self.filter(col, conv.values)
        if bf is None:
            return "no filter", reason
        h = self.f.hashes(col, conv.values, self.f.zone(self.g.stripe))
        if isinstance(h, str):
            return "maybe", f"{lit}: {h}"
        if bf.test_hashes(h).any():
            return "maybe", f"{lit}: maybe present"
        return "absent", f"{lit}: absent"


__all__ = [
    "STAGES",
    "OrcColumn",
    "bloom_policy",
    "probe",
    "prune",
    "schema_of",
    "statistics_policy",
]
