"""Binding: resolve column names against a schema and convert literals to column types.

``bind(parse("id = 5 AND NOT day IS NULL"), schema)`` returns the same tree with NOT
pushed to the leaves (:func:`~bloomskip.expr.expressions.rewrite_not`), every column
resolved to a :class:`~bloomskip.expr.expressions.BoundReference` (its name, logical
Arrow type and a key the format uses to find it) and every literal converted once
(:func:`~bloomskip.expr.literals.convert`). Type mistakes and unknown columns fail here,
at binding, never during evaluation.

A schema is any mapping from column name to :class:`Column`. Names match exactly first,
then case-insensitively when that is unambiguous.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from bloomskip.errors import InvalidParameterError, PredicateError
from bloomskip.expr.expressions import (
    BoundReference,
    Expression,
    ExpressionTransform,
    LiteralPredicate,
    Not,
    Predicate,
    Unsupported,
    rewrite_not,
    terms,
    visit,
)
from bloomskip.expr.literals import (
    Converted,
    NoMatch,
    Unknown,
    Values,
    convert,
    whole_microseconds,
)
from bloomskip.expr.sql import parse


@dataclass(frozen=True)
class Column:
    """What binding needs to know of a column: its logical type and a lookup key."""

    type: pa.DataType | None  # None: a type literals cannot be converted to
    key: Any = None
    #: Values of the data may be of another type than ``type`` (a table's column widened
    #: since it was indexed as ``type``): a literal no ``type`` value equals may still
    #: match, so it binds as "may match", not as "no row".
    widened_to: pa.DataType | None = None
    #: Engines read the values at whole microseconds (INT96 timestamps: DuckDB and Spark
    #: drop the nanoseconds below, pyarrow keeps them): a literal matches every value of
    #: its microsecond (:func:`~bloomskip.expr.literals.whole_microseconds`).
    microseconds: bool = False
    #: Why the name is ambiguous (two columns of a file share it, e.g. a column named
    #: ``s.a`` beside a struct ``s`` with a field ``a``): conditions on it may match.
    ambiguous: str | None = None
    #: The day (since 1970-01-01) before which the file's values were written rebased
    #: to Spark's legacy calendar (Spark rebases them back when it reads them): a literal
    #: before it may match.
    rebased_before: int | None = None
    #: Wall clocks (a timestamp without a zone) that Spark reads as instants in its
    #: JVM's default time zone (ORC's TIMESTAMP): with a session zone, every offset.
    jvm_clock: bool = False


def schema_of_columns(columns: Iterable[tuple[str, Column]]) -> dict[str, Column]:
    """A binding schema from (name, column) pairs; a name two columns share (a column
    named ``s.a`` and the field ``a`` of a struct ``s``, both ``s.a`` as dotted paths) is
    marked ambiguous, so that conditions on it may match."""
    out: dict[str, Column] = {}
    for name, col in columns:
        if name in out:
            col = replace(out[name], ambiguous=f"two columns of the file are named {name!r}")
        out[name] = col
    return out


def resolve(name: str, schema: Mapping[str, Column]) -> BoundReference:
    """The column ``name`` refers to (exact match, else unique case-insensitive match)."""
    if name in schema:
        col = schema[name]
        return BoundReference(name, col.type, col.key)
    folded = [n for n in schema if n.lower() == name.lower()]
    if len(folded) == 1:
        col = schema[folded[0]]
        return BoundReference(folded[0], col.type, col.key)
    names = ", ".join(list(schema)[:30]) + (", ..." if len(schema) > 30 else "")
    if folded:
        raise PredicateError(f"column {name!r} is ambiguous: {', '.join(folded)}")
    raise PredicateError(f"no column {name!r}; columns are: {names}")


def named(name: str, schema: Mapping[str, Column]) -> None:
    """Raise unless ``name`` is a column of ``schema``, or a field of one (``s.f`` of a
    struct ``s``, which a schema of top-level columns does not list)."""
    try:
        resolve(name, schema)
    except PredicateError:
        head = name.split(".", 1)[0]
        if head == name:
            raise
        try:
            resolve(head, schema)
        except PredicateError:
            raise PredicateError(
                f"no column {name!r} (nor {head!r}); columns are: {', '.join(list(schema)[:30])}"
            ) from None


def _ambiguous(name: str, schema: Mapping[str, Column]) -> str | None:
    """Why the bound column ``name`` may be another one than the reader's: a column of a
    dotted name that is also a path into a struct of ``schema`` (``s.a``, quoted a
    column, unquoted the field ``a`` of ``s`` in DuckDB and Spark; SQL text here loses the
    quotes), or a column the schema marks ambiguous."""
    col = schema[name]
    if col.ambiguous is not None:
        return col.ambiguous
    parts = name.split(".")
    for i in range(1, len(parts)):
        head = ".".join(parts[:i])
        try:
            t = schema[resolve(head, schema).name].type
        except PredicateError:
            continue
        for part in parts[i:]:
            if t is None or not pa.types.is_struct(t):
                break
            found = [
                t.field(j) for j in range(t.num_fields) if t.field(j).name.lower() == part.lower()
            ]
            if not found:
                break
            t = found[0].type
        else:
            return f"{name!r} is a column and also a field of the struct {head!r}"
    return None


def _rebased(c: Converted, t: pa.DataType, before: int) -> Converted:
    """``c``, or "may match" when a value lies before the day ``before``, which the file
    holds rebased from Spark's legacy calendar."""
    if not isinstance(c, Values):
        return c
    if pa.types.is_date(t):
        early = any((v - _EPOCH).days < before for v in c.values)
    elif pa.types.is_timestamp(t):
        per_day = 86_400 * {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[t.unit]
        early = any(v < before * per_day for v in c.values)
    else:
        return c
    if early:
        return Unknown("before the day Spark rebases this file's legacy-calendar values from")
    return c


_EPOCH = dt.date(1970, 1, 1)


class _Bind(ExpressionTransform):
    def __init__(self, schema: Mapping[str, Column], zone: str | None = None) -> None:
        self.schema, self.zone = schema, zone

    def visit_not(self, child: Expression) -> Expression:
        raise PredicateError(f"cannot bind {Not(child)}: rewrite_not left a NOT behind")

    def visit_unsupported(self, expr: Unsupported) -> Expression:
        for i, name in enumerate(expr.columns):  # not evaluated, but a name that is no
            try:  # column is a mistake, as in "="
                named(name, self.schema)
            except PredicateError as e:
                hint = "; a string takes single quotes: 'text'" if i else ""
                raise PredicateError(f"{e} (in {expr.text[:80]}{hint})") from None
        return expr

    def visit_predicate(self, pred: Predicate) -> Expression:
        if pred.bound:
            return pred
        try:
            ref = resolve(pred.term.name, self.schema)
        except PredicateError:
            named(pred.term.name, self.schema)  # a field of a struct column, or an error
            return Unsupported(f"{pred} (a field of a struct)", (pred.term.name,))
        why = _ambiguous(ref.name, self.schema)
        if why is not None:
            return Unsupported(f"{pred} ({why})", (pred.term.name,))
        bound = replace(pred, term=ref)
        if isinstance(bound, LiteralPredicate):
            col = self.schema[ref.name]
            now = col.widened_to
            converted = [
                convert(lit, ref.type, self.zone, any_clock=col.jvm_clock) for lit in pred.literals
            ]
            if col.microseconds:
                converted = [whole_microseconds(c) for c in converted]
            if col.rebased_before is not None:
                converted = [_rebased(c, ref.type, col.rebased_before) for c in converted]
            if now is not None:
                converted = [
                    Unknown(f"{c.reason} as indexed, but the column is now {now}")
                    if isinstance(c, NoMatch)
                    else c
                    for c in converted
                ]
            return bound.with_conversions(tuple(converted))
        return bound


def predicate(value: object) -> Expression | str:
    """``value`` if it is a predicate - SQL text or an expression tree - else a one-line
    :class:`~bloomskip.errors.PredicateError` (every entry point binds through here)."""
    if isinstance(value, str | Expression):
        return value
    hint = " (decode the bytes first)" if isinstance(value, bytes | bytearray) else ""
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise PredicateError(f"a predicate is SQL text (str) or an expression tree, got {shown}{hint}")


def bind(
    expr: Expression | str, schema: Mapping[str, Column], zone: str | None = None
) -> Expression:
    """Bind a predicate (a tree or SQL text) to ``schema``; NOT is rewritten away.
    ``zone``: the time zone a date or timestamp literal without an offset is a wall
    clock of, against a column of instants (Spark's session time zone); None: UTC and
    this machine's zone (:func:`~bloomskip.expr.literals.convert`)."""
    if zone is not None and (not isinstance(zone, str) or not zone.strip()):
        raise InvalidParameterError(f"zone must be a time zone name, not {zone!r}")
    expr = predicate(expr)
    tree = parse(expr) if isinstance(expr, str) else expr
    return visit(rewrite_not(tree), _Bind(schema, zone))


class _Unknown(ExpressionTransform):
    def __init__(self, schema: Mapping[str, Column]) -> None:
        self.schema, self.missing, self.dropped = schema, {}, []

    def _known(self, names) -> bool:
        ok = True
        for name in names:
            try:
                named(name, self.schema)
            except PredicateError:
                self.missing[name] = None
                ok = False
        return ok

    def _drop(self, text: str) -> Expression:
        self.dropped.append(text)
        return Unsupported(text)

    def visit_unsupported(self, expr: Unsupported) -> Expression:
        return expr if self._known(expr.columns) else self._drop(expr.text)

    def visit_predicate(self, pred: Predicate) -> Expression:
        return pred if pred.bound or self._known([pred.term.name]) else self._drop(str(pred))


def without_unknown(
    expr: Expression, schema: Mapping[str, Column]
) -> tuple[Expression, list[str], list[str]]:
    """``expr`` (unbound) with every condition naming a column ``schema`` lacks made a
    condition not evaluated (always "may match", under NOT too); those names; and those
    conditions' texts. For a caller whose engine knows more columns than the files hold
    (Spark's partition directories), so that the rest of the predicate still prunes."""
    t = _Unknown(schema)
    return visit(expr, t), list(t.missing), t.dropped


def referenced(expr: Expression) -> list[BoundReference]:
    """The bound columns a bound predicate uses, in first-seen order."""
    return [t for t in terms(expr) if isinstance(t, BoundReference)]


__all__ = [
    "BoundReference",
    "Column",
    "bind",
    "predicate",
    "referenced",
    "resolve",
    "schema_of_columns",
    "without_unknown",
]
