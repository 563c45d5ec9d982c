"""Binding: resolve column names against a schema and convert literals to column types.

``bind(parse("id = 5 AND NOT day IS NULL"), schema)`` returns the same tree with NOT
pushed to the leaves (:func:`~bloomskip.expr.expressions.rewrite_not`), every column
resolved to a :class:`BoundReference` (its name, logical Arrow type and a key the
format uses to find it) and every literal converted once
(:func:`~bloomskip.expr.literals.convert`). Type mistakes and unknown columns fail here,
at binding, never during evaluation.

A schema is any mapping from column name to :class:`Column`. Names match exactly first,
then case-insensitively when that is unambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from bloomskip.errors import PredicateError
from bloomskip.expr.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expression,
    In,
    IsNull,
    Literal,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
    Reference,
    Unsupported,
    rewrite_not,
)
from bloomskip.expr.literals import Converted, convert
from bloomskip.expr.sql import parse


@dataclass(frozen=True)
class Column:
    """What binding needs to know of a column: its logical type and a lookup key."""

    type: pa.DataType | None  # None: a type literals cannot be converted to
    key: Any = None


@dataclass(frozen=True)
class BoundReference:
    name: str
    type: pa.DataType | None
    key: Any

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class BoundPredicate(Expression):
    term: BoundReference


@dataclass(frozen=True)
class BoundIsNull(BoundPredicate):
    def __str__(self) -> str:
        return f"{self.term} IS NULL"


@dataclass(frozen=True)
class BoundNotNull(BoundPredicate):
    def __str__(self) -> str:
        return f"{self.term} IS NOT NULL"


@dataclass(frozen=True)
class BoundEqualTo(BoundPredicate):
    literal: Literal
    converted: Converted

    def __str__(self) -> str:
        return f"{self.term} = {self.literal}"


@dataclass(frozen=True)
class BoundNotEqualTo(BoundPredicate):
    literal: Literal
    converted: Converted

    def __str__(self) -> str:
        return f"{self.term} != {self.literal}"


@dataclass(frozen=True)
class BoundIn(BoundPredicate):
    literals: tuple[Literal, ...]
    converted: tuple[Converted, ...]

    def __str__(self) -> str:
        return f"{self.term} IN ({', '.join(map(str, self.literals))})"


@dataclass(frozen=True)
class BoundNotIn(BoundPredicate):
    literals: tuple[Literal, ...]
    converted: tuple[Converted, ...]

    def __str__(self) -> str:
        return f"{self.term} NOT IN ({', '.join(map(str, self.literals))})"


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


def bind(expr: Expression | str, schema: Mapping[str, Column]) -> Expression:
    """Bind a predicate (a tree or SQL text) to ``schema``; NOT is rewritten away."""
    tree = parse(expr) if isinstance(expr, str) else expr
    return _bind(rewrite_not(tree), schema)


def _bind(e: Expression, schema: Mapping[str, Column]) -> Expression:
    if isinstance(e, And):
        return And(_bind(e.left, schema), _bind(e.right, schema))
    if isinstance(e, Or):
        return Or(_bind(e.left, schema), _bind(e.right, schema))
    if isinstance(e, AlwaysTrue | AlwaysFalse | Unsupported):
        return e
    if isinstance(e, IsNull | NotNull | EqualTo | NotEqualTo | In | NotIn):
        ref = resolve(e.term.name, schema)
        if isinstance(e, IsNull):
            return BoundIsNull(ref)
        if isinstance(e, NotNull):
            return BoundNotNull(ref)
        if isinstance(e, EqualTo):
            return BoundEqualTo(ref, e.literal, convert(e.literal, ref.type))
        if isinstance(e, NotEqualTo):
            return BoundNotEqualTo(ref, e.literal, convert(e.literal, ref.type))
        converted = tuple(convert(lit, ref.type) for lit in e.literals)
        return (BoundIn if isinstance(e, In) else BoundNotIn)(ref, e.literals, converted)
    if isinstance(e, BoundPredicate):
        return e
    raise PredicateError(f"cannot bind {type(e).__name__}: rewrite_not left a NOT behind")


def referenced(expr: Expression) -> list[BoundReference]:
    """The bound columns a bound predicate uses, in first-seen order."""
    seen: dict[str, BoundReference] = {}
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, And | Or):
            stack += [e.right, e.left]
        elif isinstance(e, BoundPredicate):
            seen.setdefault(e.term.name, e.term)
    return list(seen.values())


__all__ = [
    "BoundEqualTo",
    "BoundIn",
    "BoundIsNull",
    "BoundNotEqualTo",
    "BoundNotIn",
    "BoundNotNull",
    "BoundPredicate",
    "BoundReference",
    "Column",
    "Reference",
    "bind",
    "referenced",
    "resolve",
]
