"""The predicate tree: what a lookup asks, independent of any file format.

A predicate is a small tree of immutable nodes::

    And(EqualTo(Reference("user_id"), Literal("string", "u1")),
        Not(IsNull(Reference("country"))))

* leaves compare one column with literals: :class:`EqualTo`, :class:`NotEqualTo`,
  :class:`In`, :class:`NotIn`, :class:`IsNull`, :class:`NotNull`;
* :class:`And`, :class:`Or`, :class:`Not` combine them; :class:`AlwaysTrue` /
  :class:`AlwaysFalse` are constants;
* :class:`Unsupported` stands for any condition bloomskip does not evaluate (``a < 5``,
  ``LIKE``, functions). It is kept in the tree so that AND/OR/NOT stay exact, and it
  always "may match".

:func:`rewrite_not` pushes every NOT down to the leaves (De Morgan; ``NOT a = 1`` becomes
``a != 1``), so that no evaluator ever negates a "may match" - negating a maybe is how
pruning drops data that matches. SQL three-valued logic is preserved: a comparison with
NULL is unknown, and unknown rows are not returned either way.

Unbound trees name columns; :mod:`bloomskip.expr.bind` resolves the names against a
schema and converts literals to each column's type (:mod:`bloomskip.expr.literals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Expression:
    """Base of every node. ``&``, ``|`` and ``~`` build And, Or and Not."""

    def __and__(self, other: Expression) -> Expression:
        return And(self, other)

    def __or__(self, other: Expression) -> Expression:
        return Or(self, other)

    def __invert__(self) -> Expression:
        return Not(self)


@dataclass(frozen=True)
class Reference:
    """A column by name (dotted for a struct field: ``"address.city"``)."""

    name: str

    def __str__(self) -> str:
        return self.name


#: The kinds of SQL literal a :class:`Literal` can be.
LITERAL_KINDS = ("string", "number", "date", "time", "timestamp", "binary", "boolean", "null")


@dataclass(frozen=True)
class Literal:
    """A literal as written: its SQL kind and value.

    ``number`` values are ``int`` or ``decimal.Decimal`` (exact, as written); ``string``,
    ``date``, ``time`` and ``timestamp`` values are the text between the quotes (a
    timestamp's meaning depends on the column it meets); ``binary`` is ``bytes``;
    ``boolean`` a ``bool``; ``null`` is ``None``.

    ``approximate`` marks a number that engines may read as a DOUBLE rather than
    exactly: written with an exponent (``1e3``) or with more than 38 digits, or any
    number or numeric text in an IN list holding such a one. DuckDB and Spark do, so
    ``int_col = 9007199254740993e0`` also matches 9007199254740992 there, while
    PostgreSQL reads it as an exact NUMERIC; conversion allows for both.
    """

    kind: str
    value: Any
    approximate: bool = False

    def __post_init__(self) -> None:
        if self.kind not in LITERAL_KINDS:
            raise ValueError(f"unknown literal kind {self.kind!r}")

    def __str__(self) -> str:
        k, v = self.kind, self.value
        if k == "null":
            return "NULL"
        if k == "boolean":
            return "TRUE" if v else "FALSE"
        if k == "number":
            return str(v)
        if k == "binary":
            return f"X'{v.hex()}'"
        text = "'" + str(v).replace("'", "''") + "'"
        return text if k == "string" else f"{k.upper()} {text}"


@dataclass(frozen=True)
class AlwaysTrue(Expression):
    def __str__(self) -> str:
        return "TRUE"


@dataclass(frozen=True)
class AlwaysFalse(Expression):
    def __str__(self) -> str:
        return "FALSE"


@dataclass(frozen=True)
class And(Expression):
    left: Expression
    right: Expression

    def __str__(self) -> str:
        return f"({self.left} AND {self.right})"


@dataclass(frozen=True)
class Or(Expression):
    left: Expression
    right: Expression

    def __str__(self) -> str:
        return f"({self.left} OR {self.right})"


@dataclass(frozen=True)
class Not(Expression):
    child: Expression

    def __str__(self) -> str:
        return f"NOT {self.child}"


@dataclass(frozen=True)
class Unsupported(Expression):
    """A condition bloomskip does not evaluate; it always may match."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Predicate(Expression):
    """A condition on one column."""

    term: Reference


@dataclass(frozen=True)
class IsNull(Predicate):
    def __str__(self) -> str:
        return f"{self.term} IS NULL"


@dataclass(frozen=True)
class NotNull(Predicate):
    def __str__(self) -> str:
        return f"{self.term} IS NOT NULL"


@dataclass(frozen=True)
class EqualTo(Predicate):
    literal: Literal

    def __str__(self) -> str:
        return f"{self.term} = {self.literal}"


@dataclass(frozen=True)
class NotEqualTo(Predicate):
    literal: Literal

    def __str__(self) -> str:
        return f"{self.term} != {self.literal}"


@dataclass(frozen=True)
class In(Predicate):
    literals: tuple[Literal, ...]

    def __str__(self) -> str:
        return f"{self.term} IN ({', '.join(map(str, self.literals))})"


@dataclass(frozen=True)
class NotIn(Predicate):
    literals: tuple[Literal, ...]

    def __str__(self) -> str:
        return f"{self.term} NOT IN ({', '.join(map(str, self.literals))})"


def rewrite_not(expr: Expression) -> Expression:
    """The same predicate with every NOT pushed down to a leaf and removed."""
    if isinstance(expr, Not):
        return _negate(expr.child)
    if isinstance(expr, And):
        return And(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return Or(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def _negate(expr: Expression) -> Expression:
    """NOT ``expr``, without a Not node (``expr`` may itself contain Nots)."""
    if isinstance(expr, Not):
        return rewrite_not(expr.child)
    if isinstance(expr, And):
        return Or(_negate(expr.left), _negate(expr.right))
    if isinstance(expr, Or):
        return And(_negate(expr.left), _negate(expr.right))
    if isinstance(expr, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(expr, AlwaysFalse):
        return AlwaysTrue()
    if isinstance(expr, IsNull):
        return NotNull(expr.term)
    if isinstance(expr, NotNull):
        return IsNull(expr.term)
    if isinstance(expr, EqualTo):
        return NotEqualTo(expr.term, expr.literal)
    if isinstance(expr, NotEqualTo):
        return EqualTo(expr.term, expr.literal)
    if isinstance(expr, In):
        return NotIn(expr.term, expr.literals)
    if isinstance(expr, NotIn):
        return In(expr.term, expr.literals)
    if isinstance(expr, Unsupported):
        return Unsupported(f"NOT ({expr.text})")
    raise TypeError(f"cannot negate {type(expr).__name__}")


def columns(expr: Expression) -> list[str]:
    """Names of the columns a predicate refers to, in first-seen order."""
    seen: dict[str, None] = {}
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, And | Or):
            stack += [e.right, e.left]
        elif isinstance(e, Not):
            stack.append(e.child)
        elif isinstance(e, Predicate):
            seen.setdefault(e.term.name, None)
    return list(seen)


def literal(value: Any) -> Literal:
    """A :class:`Literal` for a Python value (str, bytes, int, float, Decimal, bool,
    date, datetime, time or None)."""
    import datetime as dt
    from decimal import Decimal

    if isinstance(value, Literal):
        return value
    if value is None:
        return Literal("null", None)
    if isinstance(value, bool):
        return Literal("boolean", value)
    if isinstance(value, int | Decimal):
        return Literal("number", value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return Literal("string", repr(value))  # 'nan' / 'inf': converted by name
        return Literal("number", Decimal(value))  # exact binary value, no rounding
    if isinstance(value, str):
        return Literal("string", value)
    if isinstance(value, bytes | bytearray | memoryview):
        return Literal("binary", bytes(value))
    if isinstance(value, dt.datetime):
        return Literal("timestamp", value.isoformat(sep=" "))
    if isinstance(value, dt.date):
        return Literal("date", value.isoformat())
    if isinstance(value, dt.time):
        return Literal("time", value.isoformat())
    raise TypeError(f"no SQL literal for {type(value).__name__} {value!r}")
