"""Which row groups of a Parquet file may hold rows matching a predicate, and why.

:func:`prune` binds a predicate (SQL text or an :mod:`bloomskip.expr` tree) to the
file's schema, then decides each row group with the cheapest evidence first, as
parquet-java's ``RowGroupFilter`` does:

1. **statistics** - min/max and null counts (:mod:`.stats`);
2. **dictionary** - when every data page of the chunk is dictionary-encoded, the
   dictionary page lists every value (:mod:`.dictionary`);
3. **bloom filter** - the chunk's SBBF (:mod:`.bloom`).

Each value of ``=`` / ``IN`` goes through the stages until one rules it out; a row group
is skipped only when every alternative of the predicate is ruled out. Everything in
doubt answers "may match" with its reason: a literal bloomskip cannot convert exactly,
``NaN``, a missing, invalid or untrusted filter (BOOLEAN), a dictionary in a codec we
do not decode, a repeated column, ``!=`` and ``NOT IN`` (statistics only, never bloom).

:func:`probe` asks only the bloom filters: ``absent`` / ``maybe`` / ``no filter`` per
row group for a column and values, as DuckDB's ``parquet_bloom_probe`` does.

Encrypted files take ``decryption=`` (:class:`~bloomskip.parquet.crypto.Decryption`).
A column whose key is missing is "may match" with that reason - its statistics,
dictionary and filter are never read; the other columns prune as usual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, BinaryIO

import numpy as np

from bloomskip.expr.bind import (
    BoundEqualTo,
    BoundIn,
    BoundIsNull,
    BoundNotEqualTo,
    BoundNotIn,
    BoundNotNull,
    BoundPredicate,
    Column,
    bind,
    resolve,
)
from bloomskip.expr.evaluate import Decision, any_literal, cannot, evaluate, might
from bloomskip.expr.expressions import Expression, Literal, literal
from bloomskip.expr.literals import Converted, NoMatch, Unknown, Values, convert, to_arrow
from bloomskip.hashing import hash_values
from bloomskip.parquet.bloom import LoadedFilter, load_filter
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.dictionary import dictionary_hashes, fully_dictionary_encoded
from bloomskip.parquet.footer import Footer, RowGroup, read_footer
from bloomskip.parquet.schema import BYTES, FLOAT, ColumnType, column_type
from bloomskip.parquet.stats import ChunkStats, chunk_stats, literal_key
from bloomskip.prune_result import ProbeResult, ProbeUnit, PruneResult, Unit

STAGES = ("statistics", "dictionary", "bloom")
_UNREADABLE = "dictionary unreadable: "


def schema_of(footer: Footer) -> tuple[dict[str, Column], list[ColumnType]]:
    """The binding schema of a file (leaf name -> logical type) and each leaf's type."""
    types = [column_type(leaf) for leaf in footer.leaves]
    schema = {t.name: Column(t.arrow_type, i) for i, t in enumerate(types)}
    return schema, types


def prune(
    path: str | os.PathLike,
    predicate: str | Expression,
    *,
    stages: Iterable[str] = STAGES,
    footer: Footer | None = None,
    decryption: Decryption | None = None,
) -> PruneResult:
    """Decide, for each row group of ``path``, whether it may hold a matching row.

    ``stages`` limits the evidence used (any of ``"statistics"``, ``"dictionary"``,
    ``"bloom"``). Raises :class:`~bloomskip.errors.PredicateError` for a predicate that
    does not parse or names an unknown column, and the file errors of
    :func:`~bloomskip.parquet.footer.read_footer`; problems with one filter or dictionary
    only make that row group "may match". ``decryption`` gives the keys of an encrypted
    file; a wrong key raises :class:`~bloomskip.errors.DecryptionError`.
    """
    name = os.fspath(path)
    with open(name, "rb") as fh:
        footer = footer or read_footer(fh, name=name, decryption=decryption)
        schema, types = schema_of(footer)
        bound = bind(predicate, schema)
        files = _FileContext(fh, footer, types, frozenset(stages))
        result = PruneResult(name, str(predicate))
        for rg in footer.row_groups:
            ctx = _RowGroupContext(files, rg)
            if rg.num_rows == 0:
                decision = cannot("the row group has no rows")
            else:
                decision = evaluate(bound, ctx.leaf)
            result.units.append(
                Unit(rg.index, rg.first_row, rg.num_rows, decision.may_match, decision.reason)
            )
    return result


# ---------------------------------------------------------------------------- probe


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
    lits = [literal(v) for v in values]
    with open(name, "rb") as fh:
        footer = read_footer(fh, name=name, decryption=decryption)
        schema, types = schema_of(footer)
        ref = resolve(column, schema)
        ctype = types[ref.key]
        converted = [convert(lit, ctype.arrow_type) for lit in lits]
        files = _FileContext(fh, footer, types, frozenset({"bloom"}))
        result = ProbeResult(name, ref.name, [str(lit) for lit in lits])
        for rg in footer.row_groups:
            ctx = _RowGroupContext(files, rg)
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
                    rg.index,
                    rg.first_row,
                    rg.num_rows,
                    overall,
                    tuple(per_value),
                    "; ".join(dict.fromkeys(reasons)),
                )
            )
    return result


# ------------------------------------------------------------------- evaluation


class _FileContext:
    """Per-file state: the open file, column types, cached literal hashes."""

    def __init__(
        self, fh: BinaryIO, footer: Footer, types: list[ColumnType], stages: frozenset[str]
    ) -> None:
        unknown = stages - set(STAGES)
        if unknown:
            from bloomskip.errors import InvalidParameterError

            raise InvalidParameterError(f"unknown stages {sorted(unknown)}; use {STAGES}")
        self.fh, self.footer, self.types, self.stages = fh, footer, types, stages
        self._hashes: dict[tuple[int, tuple[Any, ...]], np.ndarray] = {}

    def hashes(self, column: int, values: tuple[Any, ...]) -> np.ndarray:
        """xxHash64 of the candidate values, encoded as the column stores them."""
        key = (column, values)
        h = self._hashes.get(key)
        if h is None:
            t = self.types[column]
            h = hash_values(to_arrow(values, t.arrow_type), physical=t.spec)
            self._hashes[key] = h
        return h


class _RowGroupContext:
    """Evaluates leaf predicates for one row group; reads metadata at most once."""

    def __init__(self, files: _FileContext, rg: RowGroup) -> None:
        self.f = files
        self.rg = rg
        self._stats: dict[int, ChunkStats] = {}
        self._dict: dict[int, np.ndarray | str] = {}
        self._bloom: dict[int, LoadedFilter] = {}

    # -- evidence, loaded lazily -------------------------------------------------

    def stats(self, col: int) -> ChunkStats:
        if col not in self._stats:
            if "statistics" in self.f.stages:
                chunk = self.rg.columns[col]
                self._stats[col] = chunk_stats(self.f.footer, chunk, self.f.types[col])
            else:
                self._stats[col] = ChunkStats(note="statistics not used")
        return self._stats[col]

    def dictionary(self, col: int) -> np.ndarray | str:
        if col not in self._dict:
            t = self.f.types[col]
            chunk = self.rg.columns[col]
            if "dictionary" not in self.f.stages:
                self._dict[col] = "dictionary not used"
            elif not t.bloom_ok:
                self._dict[col] = t.why_not
            else:
                full, why = fully_dictionary_encoded(chunk)
                if full:
                    found = dictionary_hashes(
                        self.f.fh,
                        self.f.footer,
                        chunk,
                        t.physical_type,
                        t.spec.type_length,  # type: ignore[union-attr,arg-type]
                    )
                    # A complete dictionary we could not read: say so in the reason.
                    self._dict[col] = (
                        found if not isinstance(found, str) else f"{_UNREADABLE}{found}"
                    )
                else:
                    self._dict[col] = why
        return self._dict[col]

    def bloom(self, col: int) -> LoadedFilter:
        if col not in self._bloom:
            chunk = self.rg.columns[col]
            self._bloom[col] = load_filter(self.f.fh, self.f.footer, chunk)
        return self._bloom[col]

    # -- leaves --------------------------------------------------------------------

    def leaf(self, p: BoundPredicate) -> Decision:
        col = p.term.key
        t = self.f.types[col]
        name = p.term.name
        if t.repeated:
            return might(f"{name} is inside a list or map; not used for pruning")
        locked = self.rg.columns[col].locked
        if locked:
            if isinstance(p, BoundIsNull) and t.required:
                return cannot(f"{name} is REQUIRED, never null")
            return might(f"{locked}; its statistics, dictionary and bloom filter are unavailable")
        st = self.stats(col)
        if isinstance(p, BoundIsNull):
            if t.required:
                return cannot(f"{name} is REQUIRED, never null")
            if st.null_count == 0:
                return cannot(f"statistics: {name} has no nulls")
            return might(f"{name} may be null")
        if isinstance(p, BoundNotNull):
            if st.all_null:
                return cannot(f"statistics: every {name} is null")
            return might(f"{name} may be non-null")
        if isinstance(p, BoundEqualTo):
            return self._any_value(col, name, (p.literal,), (p.converted,))
        if isinstance(p, BoundIn):
            return self._any_value(col, name, p.literals, p.converted)
        if isinstance(p, BoundNotEqualTo | BoundNotIn):
            lits = (p.literal,) if isinstance(p, BoundNotEqualTo) else p.literals
            conv = (p.converted,) if isinstance(p, BoundNotEqualTo) else p.converted
            return self._not_equal(col, name, lits, conv, t, st)
        return might(f"{p}: not used for pruning")

    def _any_value(
        self, col: int, name: str, lits: tuple[Literal, ...], converted: tuple[Converted, ...]
    ) -> Decision:
        return any_literal(name, lits, converted, lambda conv: self._excluded(col, conv))

    def _excluded(self, col: int, conv: Values) -> tuple[bool, str]:
        """Whether the stages rule out every candidate bit pattern of one literal."""
        t = self.f.types[col]
        st = self.stats(col)
        if st.all_null:
            return True, "statistics: every value is null"
        if st.min is not None or st.max is not None:
            try:
                keys = [literal_key(v, t) for v in conv.values]
            except (ValueError, TypeError):
                keys = []
            if keys and all(st.excludes(k) for k in keys):
                return True, f"statistics: outside [{_show(st.min)}, {_show(st.max)}]"
        why = "within [min, max]" if st.min is not None else st.note or "no statistics"
        if not t.bloom_ok:
            return False, f"{why}; {t.why_not}"
        d = self.dictionary(col)
        if isinstance(d, str) and d.startswith(_UNREADABLE):
            why = f"{why}; {d}"
        if not isinstance(d, str):
            h = self.f.hashes(col, conv.values)
            if not np.isin(h, d).any():
                return True, f"dictionary: not among its {d.size} values"
            return False, "in the dictionary"
        if "bloom" not in self.f.stages:
            return False, f"{why}; bloom filter not used"
        loaded = self.bloom(col)
        if loaded.filter is None:
            invalid = "bloom filter invalid: " if loaded.status == "invalid" else ""
            return False, f"{why}; {invalid}{loaded.reason}"
        h = self.f.hashes(col, conv.values)
        if not loaded.filter.check_hashes(h).any():
            return True, "bloom filter: absent"
        return False, "bloom filter: maybe present"

    def _not_equal(
        self,
        col: int,
        name: str,
        lits: tuple[Literal, ...],
        converted: tuple[Converted, ...],
        t: ColumnType,
        st: ChunkStats,
    ) -> Decision:
        """``!=`` and ``NOT IN``: only statistics can rule them out, never a filter."""
        if st.all_null:
            return cannot(f"statistics: every {name} is null")
        # Strings may have truncated bounds; floats may hide NaN (never in min/max, and
        # NaN != x is true): neither can prove every value equal.
        if t.order in (None, BYTES, FLOAT) or st.min is None or st.min != st.max:
            return might(f"{name} != ...: only all-equal statistics could rule it out")
        for conv in converted:
            # Only a literal every engine reads as exactly these values proves a value
            # equal to it (TIMESTAMP '…00.0000001' may be 0 µs or not: `!=` may be true).
            if isinstance(conv, Values) and conv.exact:
                try:
                    keys = {literal_key(v, t) for v in conv.values}
                except (ValueError, TypeError):
                    continue
                if st.min in keys:
                    lit = ", ".join(map(str, lits))
                    return cannot(f"statistics: every non-null {name} equals one of {lit}")
        return might(f"{name} has values other than the literals")

    # -- probe ---------------------------------------------------------------------

    def probe(self, col: int, lit: Literal, conv: Converted) -> tuple[str, str]:
        t = self.f.types[col]
        if isinstance(conv, Unknown):
            return "maybe", f"{lit}: {conv.reason}"
        if isinstance(conv, NoMatch):
            return "absent", f"{lit}: {conv.reason}"
        if not t.bloom_ok:
            return "no filter", t.why_not
        loaded = self.bloom(col)
        if loaded.filter is None:
            return "no filter", loaded.reason
        h = self.f.hashes(col, conv.values)
        if loaded.filter.check_hashes(h).any():
            return "maybe", f"{lit}: maybe present"
        return "absent", f"{lit}: absent"


def _show(bound: Any) -> str:
    """A statistics bound for a reason string (bytes shortened)."""
    if bound is None:
        return "?"
    if isinstance(bound, bytes):
        text = bound[:24].decode("utf-8", "backslashreplace")
        return repr(text + ("..." if len(bound) > 24 else ""))
    return str(bound)
