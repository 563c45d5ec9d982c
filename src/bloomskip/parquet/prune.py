"""Which row groups of a Parquet file may hold rows matching a predicate, and why.

:func:`prune` binds a predicate (SQL text or an :mod:`bloomskip.expr` tree) to the
file's schema and lets the pruning engine (:mod:`bloomskip.prune.engine`) decide every
row group at once from this module's evidence, cheapest first, as parquet-java's
``RowGroupFilter`` does:

1. **statistics** - min/max and null counts (:mod:`.stats`);
2. **dictionary** - when every data page of the chunk is dictionary-encoded, the
   dictionary page lists every value (:mod:`.dictionary`);
3. **bloom filter** - the chunk's SBBF (:mod:`.bloom`).

The values of ``=`` / ``IN`` go through the stages until one rules them all out; a row
group is skipped only when every alternative of the predicate is ruled out. Everything
in doubt answers "may match" with its reason: a literal bloomskip cannot convert exactly,
``NaN``, a missing, invalid or untrusted filter (BOOLEAN), a dictionary in a codec we do
not decode, a repeated column, ``!=`` and ``NOT IN`` (statistics only, never bloom).

:func:`probe` asks only the bloom filters: ``absent`` / ``maybe`` / ``no filter`` per
row group for a column and values, as DuckDB's ``parquet_bloom_probe`` does.

Encrypted files take ``decryption=`` (:class:`~bloomskip.parquet.crypto.Decryption`).
A column whose key is missing may match, with that reason - its statistics, dictionary
and filter are never read; the other columns prune as usual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa

from bloomskip.errors import InvalidParameterError
from bloomskip.expr.bind import Column, bind, resolve, schema_of_columns
from bloomskip.expr.expressions import BoundReference, Expression, In, LiteralPredicate, literal
from bloomskip.expr.literals import Values, convert, to_arrow
from bloomskip.hashing import hash_values
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.bloom import LoadedFilter, load_filter
from bloomskip.parquet.chunks import ChunkArrays, ChunkSource, FooterSource, open_chunks
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.dictionary import DictionaryHashes, hashes_at
from bloomskip.parquet.filters import ColumnFilters
from bloomskip.parquet.footer import Footer, LeafColumn
from bloomskip.parquet.schema import BYTES, FLOAT, ColumnType, column_type
from bloomskip.parquet.stats import Stats, decode, has_type_order, literal_key
from bloomskip.parquet.thrift import List, Struct
from bloomskip.prune.engine import Pruner, overall
from bloomskip.prune.engine import probe as probe_units
from bloomskip.prune.evidence import ColumnEvidence, Findings, Proof, Status, Unavailable
from bloomskip.prune.result import ProbeResult, ProbeUnit, PruneResult, Unit

STAGES = ("statistics", "dictionary", "bloom")


def schema_of(footer: Footer) -> tuple[dict[str, Column], list[ColumnType]]:
    """The binding schema of a file (leaf name -> logical type) and each leaf's type."""
    return _schema(footer.leaves)


def _schema(leaves: list[LeafColumn]) -> tuple[dict[str, Column], list[ColumnType]]:
    types = [column_type(leaf) for leaf in leaves]
    schema = schema_of_columns(
        (t.name, Column(t.arrow_type, i, microseconds=t.physical_type is PhysicalType.INT96))
        for i, t in enumerate(types)
    )
    return schema, types


def _legacy(
    schema: dict[str, Column], footer: Footer, types: list[ColumnType]
) -> dict[str, Column]:
    """``schema``, for a file Spark wrote in its legacy calendar, with the columns Spark
    rebases when it reads them marked (a literal before the day may match)."""
    from bloomskip.formats.calendar import spark_rebased

    kv = footer.metadata.get(5)  # key_value_metadata: list<KeyValue>
    items = kv.items if isinstance(kv, List) else []
    keys = {item.get(1) for item in items if isinstance(item, Struct)}
    meta = {k: b"" for k in keys if isinstance(k, bytes)}
    if not meta:
        return schema
    arrow = pa.schema(
        [pa.field(t.name, t.arrow_type) for t in types if t.arrow_type is not None], meta
    )
    int96 = frozenset(t.name for t in types if t.physical_type is PhysicalType.INT96)
    marked = spark_rebased(arrow, int96)
    return {
        n: replace(c, rebased_before=marked[n]) if n in marked else c for n, c in schema.items()
    }


def prune(
    path: str | os.PathLike,
    predicate: str | Expression,
    *,
    stages: Iterable[str] = STAGES,
    footer: Footer | None = None,
    decryption: Decryption | None = None,
    zone: str | None = None,
) -> PruneResult:
    """Decide, for each row group of ``path``, whether it may hold a matching row.

    ``stages`` limits the evidence used (any of ``"statistics"``, ``"dictionary"``,
    ``"bloom"``). Raises :class:`~bloomskip.errors.PredicateError` for a predicate that
    does not parse or names an unknown column, and the file errors of
    :func:`~bloomskip.parquet.footer.read_footer`; problems with one filter or dictionary
    only make that row group "may match". ``decryption`` gives the keys of an encrypted
    file; a wrong key raises :class:`~bloomskip.errors.DecryptionError`. ``zone``: the
    time zone a timestamp literal without an offset is a wall clock of, against a column
    of instants (a session time zone); None: UTC and this machine's zone.
    """
    name = os.fspath(path)
    with open(name, "rb") as fh:
        if footer is not None:
            source: ChunkSource = FooterSource(footer)
        else:
            source = open_chunks(fh, name, decryption=decryption)
        schema, types = _schema(source.leaves)
        schema = _legacy(schema, source.footer, types)
        bound = bind(predicate, schema, zone)
        file = _File(fh, source, types, frozenset(stages))
        rows = source.num_rows
        verdict = Pruner(rows.shape[0], file.evidence).decide(bound, rows > 0)
        result = PruneResult(name, str(predicate))
        may = verdict.may.tolist()
        why = verdict.why or [None] * len(may)
        first = 0
        units = result.units
        for i, n in enumerate(rows.tolist()):
            units.append(Unit(i, first, n, may[i], why[i] or "the row group has no rows"))
            first += n
    return result


def probe(
    path: str | os.PathLike,
    column: str,
    values: Iterable[Any],
    *,
    decryption: Decryption | None = None,
) -> ProbeResult:
    """Ask each row group's bloom filter for ``values`` (Python values or
    :class:`~bloomskip.expr.Literal`), converted to the column's type first.
    ``decryption`` gives the keys of an encrypted file."""
    name = os.fspath(path)
    lits = tuple(literal(v) for v in values)
    with open(name, "rb") as fh:
        source = open_chunks(fh, name, decryption=decryption)
        schema, types = _schema(source.leaves)
        ref = resolve(column, schema)
        leaf = In(ref, lits, tuple(convert(lit, ref.type) for lit in lits))
        file = _File(fh, source, types, frozenset({"bloom"}))
        rows = source.num_rows.tolist()
        answers = probe_units(file.evidence(ref), leaf, np.arange(len(rows)))
        result = ProbeResult(name, ref.name, [str(lit) for lit in lits])
        first = 0
        for i, (n, answer) in enumerate(zip(rows, answers, strict=True)):
            statuses = tuple(s for s, _ in answer)
            reason = "; ".join(dict.fromkeys(r for _, r in answer))
            result.units.append(ProbeUnit(i, first, n, overall(statuses), statuses, reason))
            first += n
    return result


# ------------------------------------------------------------------------- evidence


class _File:
    """Per-file state: the open file, its chunks, column types, the stages in use, and
    what was read (statistics, dictionaries and filters are read at most once)."""

    def __init__(
        self, fh: BinaryIO, source: ChunkSource, types: list[ColumnType], stages: frozenset[str]
    ) -> None:
        unknown = stages - set(STAGES)
        if unknown:
            raise InvalidParameterError(f"unknown stages {sorted(unknown)}; use {STAGES}")
        self.fh, self.source, self.types, self.stages = fh, source, types, stages
        self._hashes: dict[tuple[int, tuple[Any, ...]], np.ndarray] = {}
        self._dicts: dict[tuple[int, int], DictionaryHashes | Unavailable] = {}
        self._blooms: dict[tuple[int, int], LoadedFilter] = {}

    def evidence(self, ref: BoundReference) -> ColumnEvidence:
        return _Column(self, ref.key, ref.name)

    def hashes(self, col: int, values: tuple[Any, ...]) -> np.ndarray:
        """xxHash64 of the candidate values, encoded as the column stores them."""
        key = (col, values)
        h = self._hashes.get(key)
        if h is None:
            t = self.types[col]
            h = self._hashes[key] = hash_values(to_arrow(values, t.arrow_type), physical=t.spec)
        return h

    def dictionary(self, rg: int, col: int) -> DictionaryHashes | Unavailable:
        """The hashes of a chunk's dictionary, when it lists every value of the chunk."""
        found = self._dicts.get((rg, col))
        if found is None:
            t = self.types[col]
            full, why = self.source.coverage(rg, col)
            if not full:
                found = Unavailable(why)
            else:
                length = t.spec.type_length  # type: ignore[union-attr]
                place = self.source.place(rg, col)
                found = hashes_at(self.fh, place, t.physical_type, length)  # type: ignore[arg-type]
            self._dicts[(rg, col)] = found
        return found

    def bloom(self, rg: int, col: int) -> LoadedFilter:
        found = self._blooms.get((rg, col))
        if found is None:
            chunk = self.source.chunk(rg, col)
            found = self._blooms[(rg, col)] = load_filter(self.fh, self.source.footer, chunk)
        return found


class _Column(ColumnEvidence):
    """One column of a Parquet file over its row groups."""

    def __init__(self, file: _File, col: int, name: str) -> None:
        super().__init__(name)
        self.file, self.col, self.t = file, col, file.types[col]
        self.arrays: ChunkArrays = file.source.column(col)
        self.locked = self.arrays.locked
        self._type_order = has_type_order(file.source.column_orders(), col)
        self._stats: Stats | None = None
        self._filters: ColumnFilters | None = None
        stages = file.stages
        self.stages = [
            _Statistics(self),
            *([_Dictionary(self)] if "dictionary" in stages else []),
            _Bloom(self, used="bloom" in stages),
        ]
        self.probe_stages = [_Bloom(self, used=True)]

    def filters(self) -> ColumnFilters:
        """The column's bloom filters, read in batches."""
        if self._filters is None:
            f, source = self.file, self.file.source
            footer = source.footer
            self._filters = ColumnFilters(
                f.fh,
                self.arrays,
                footer.footer_offset,
                footer.crypto is None,
                lambda rg: f.bloom(rg, self.col),
                source.ensure,
            )
        return self._filters

    def stats(self, units: np.ndarray) -> Stats:
        """The statistics of ``units`` (ascending row group numbers)."""
        arrays, used = self.arrays, "statistics" in self.file.stages
        if arrays.filled is not None:  # read row by row: only what is asked
            self.file.source.ensure(arrays, units)
            return decode(arrays, units, self.t, type_order=self._type_order, used=used)
        if self._stats is None:  # every row group at once, then the units asked
            every = np.arange(arrays.fields.shape[0])
            self._stats = decode(arrays, every, self.t, type_order=self._type_order, used=used)
        return _take(self._stats, units)

    def blocked(self, units: np.ndarray) -> Proof:
        if self.t.repeated:
            why = f"{self.name} is inside a list or map; not used for pruning"
            return Proof(np.ones(units.shape[0], np.bool_), why)
        if self.locked is None:
            return Proof.none(units.shape[0], "")
        locked = [self.locked[u] for u in units.tolist()]
        why = [
            f"{lk}; its statistics, dictionary and bloom filter are unavailable" if lk else ""
            for lk in locked
        ]
        return Proof(np.array([bool(lk) for lk in locked], dtype=np.bool_), why)

    def no_nulls(self, units: np.ndarray) -> Proof:
        name, t = self.name, self.t
        if t.repeated:
            return Proof.none(units.shape[0], f"{name} is inside a list or map")
        if t.required:
            return Proof(np.ones(units.shape[0], np.bool_), f"{name} is REQUIRED, never null")
        locked = self.locked or [None] * (int(units.max()) + 1 if units.size else 0)
        open_ = np.array([not locked[u] for u in units.tolist()], dtype=np.bool_)
        proven = np.zeros(units.shape[0], np.bool_)
        if open_.any():
            proven[open_] = self.stats(units[open_]).null_count == 0
        why = [
            f"{locked[u]}; its statistics are unavailable"
            if locked[u]
            else f"statistics: {name} has no nulls"
            if p
            else f"{name} may be null"
            for u, p in zip(units.tolist(), proven.tolist(), strict=True)
        ]
        return Proof(proven, why)

    def only_nulls(self, units: np.ndarray) -> Proof:
        proven = self.stats(units).all_null
        yes, no = f"statistics: every {self.name} is null", f"{self.name} may be non-null"
        return Proof(proven, [yes if p else no for p in proven.tolist()])

    def all_equal(self, p: LiteralPredicate, units: np.ndarray) -> Proof:
        """Only statistics can rule ``!=`` out: min = max = a literal. Strings may have
        truncated bounds, floats may hide NaN (never in min/max, and NaN != x is true):
        neither can prove every value equal. Only a literal every engine reads as
        exactly these values proves a value equal to it (``TIMESTAMP '…00.0000001'``
        may be 0 µs or not)."""
        t = self.t
        exact = [c for c in p.conversions if isinstance(c, Values) and c.exact]
        keys: set = set()
        for conv in exact:
            try:
                keys |= {literal_key(v, t) for v in conv.values}
            except (ValueError, TypeError):
                continue
        lits = ", ".join(map(str, p.literals))
        proven, why = [], []
        for lo, hi in zip(*self.stats(units).values(), strict=True):
            if t.order in (None, BYTES, FLOAT) or lo is None or lo != hi:
                proven.append(False)
                why.append(f"{self.name} != ...: only all-equal statistics could rule it out")
            elif lo in keys:
                proven.append(True)
                why.append(f"statistics: every non-null {self.name} equals one of {lits}")
            else:
                proven.append(False)
                why.append(f"{self.name} has values other than the literals")
        return Proof(np.array(proven, dtype=np.bool_), why)


def _take(stats: Stats, units: np.ndarray) -> Stats:
    """The rows ``units`` of statistics decoded for every row group."""
    if units.shape[0] == stats.has_lo.shape[0]:
        return stats  # every row group, in order (units are ascending and distinct)
    pick = units.tolist()
    lo = stats.lo[units] if stats.numeric else [stats.lo[u] for u in pick]
    hi = stats.hi[units] if stats.numeric else [stats.hi[u] for u in pick]
    return Stats(
        [stats.note[u] for u in pick],
        stats.null_count[units],
        stats.num_values[units],
        stats.has_num_values[units],
        stats.has_lo[units],
        stats.has_hi[units],
        lo,
        hi,
        stats.numeric,
    )


class _Statistics:
    """Min/max: the values are ruled out when every one lies outside the bounds."""

    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        t = self.c.t
        try:
            keys = [literal_key(v, t) for v in values.values]
        except (ValueError, TypeError):
            keys = []
        st = self.c.stats(units)
        known = st.has_lo | st.has_hi
        out = st.excluded(keys)
        status = np.where(known, Status.INCONCLUSIVE, Status.UNAVAILABLE).astype(np.uint8)
        status[out] = Status.EXCLUDED
        if not out.any():  # no bounds to show
            why = ["within [min, max]" if k else note or "no statistics"
                   for k, note in zip(known.tolist(), st.note, strict=True)]  # fmt: skip
            return Findings(status, why)
        why = []
        los, his = st.values()
        for k, o, note, lo, hi in zip(known.tolist(), out.tolist(), st.note, los, his, strict=True):
            if o:
                why.append(
                    f"statistics: outside [{_show(lo, t.arrow_type)}, {_show(hi, t.arrow_type)}]"
                )
            else:
                why.append("within [min, max]" if k else note or "no statistics")
        return Findings(status, why)


class _Dictionary:
    """A chunk whose data pages are all dictionary-encoded holds only dictionary values."""

    def __init__(self, column: _Column) -> None:
        self.c = column

    def test(self, values: Values, units: np.ndarray) -> Findings:
        if not self.c.t.bloom_ok:
            return Findings.same(units.shape[0], Status.UNAVAILABLE, self.c.t.why_not)
        status, why = [], []
        h = None
        for u in units.tolist():
            d = self.c.file.dictionary(u, self.c.col)
            if isinstance(d, Unavailable):  # said only when a dictionary was unreadable
                status.append(Status.UNAVAILABLE)
                why.append(d.reason if d.reason.startswith("dictionary unreadable") else "")
                continue
            h = self.c.file.hashes(self.c.col, values.values) if h is None else h
            if d.contains_any(h):
                status.append(Status.INCLUDED)
                why.append("in the dictionary")
            else:
                status.append(Status.EXCLUDED)
                why.append(f"dictionary: not among its {d.distinct} values")
        return Findings(np.array(status, dtype=np.uint8), why)


class _Bloom:
    """The chunk's bloom filter: the values are ruled out when none may be in it."""

    def __init__(self, column: _Column, *, used: bool) -> None:
        self.c, self.used = column, used

    def test(self, values: Values, units: np.ndarray) -> Findings:
        n = units.shape[0]
        if not self.used:
            return Findings.same(n, Status.UNAVAILABLE, "bloom filter not used")
        if not self.c.t.bloom_ok:
            return Findings.same(n, Status.UNAVAILABLE, self.c.t.why_not)
        col = self.c.col
        return self.c.filters().test(units, lambda: self.c.file.hashes(col, values.values))


def _show(bound: Any, t: pa.DataType | None = None) -> str:
    """A statistics bound for a reason string, as a value of the column's type ``t``
    where that is a date, time, timestamp or decimal (not its physical integer); bytes
    shortened."""
    if bound is None:
        return "?"
    try:
        if t is not None and pa.types.is_decimal(t):
            unscaled = (
                int.from_bytes(bound, "big", signed=True) if isinstance(bound, bytes) else bound
            )
            if type(unscaled) is int:
                return str(Decimal(unscaled).scaleb(-t.scale))
        elif t is not None and pa.types.is_temporal(t) and type(bound) is int:
            return str(pa.scalar(bound, type=t).as_py())
    except (ArithmeticError, ValueError, pa.ArrowException):  # out of the type's range
        pass
    if isinstance(bound, bytes):
        text = bound[:24].decode("utf-8", "backslashreplace")
        return repr(text + ("..." if len(bound) > 24 else ""))
    return str(bound)
