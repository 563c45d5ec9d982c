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

One set of classes serves both stages of a predicate's life. *Unbound*, a leaf's
``term`` is a :class:`Reference` (a name). :func:`bloomskip.expr.bind.bind` returns the
same tree *bound*: each ``term`` a :class:`BoundReference` (the column's logical type
and the key its format finds it by) and each literal's ``converted`` form filled in
(:mod:`bloomskip.expr.literals`), so type mistakes fail at binding, never during
evaluation. ``=`` is the one-literal case of ``IN``: every leaf comparing with literals
has ``literals`` and ``conversions``, so evaluators treat both alike.

:func:`rewrite_not` pushes every NOT down to the leaves (De Morgan; ``NOT a = 1`` becomes
``a != 1``), so that no evaluator ever negates a "may match" - negating a maybe is how
pruning drops data that matches. SQL three-valued logic is preserved: a comparison with
NULL is unknown, and unknown rows are not returned either way.

Consumers walk trees with :func:`visit` and a :class:`ExpressionVisitor` (the model is
pyiceberg's ``BooleanExpressionVisitor``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    import pyarrow as pa

    from bloomskip.expr.literals import Converted

T = TypeVar("T")


class Expression:
    """Base of every node. ``&``, ``|`` and ``~`` build And, Or and Not.

    Node kinds that differ from their siblings only by their SQL keyword name it in the
    class statement (``class And(Connective, sql="AND")``) and inherit everything else,
    dataclass fields and methods included.
    """

    #: The SQL keyword of a node kind (``AND``, ``IS NULL``, ``IN``...), where it has one.
    sql: ClassVar[str]

    def __init_subclass__(cls, sql: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if sql is not None:
            cls.sql = sql

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


@dataclass(frozen=True)
class BoundReference:
    """A column resolved against a schema: its name there, its logical Arrow type (None:
    a type literals cannot be converted to) and the key its format finds it by."""

    name: str
    type: pa.DataType | None
    key: Any = None

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


# ------------------------------------------------------------------------- the nodes


@dataclass(frozen=True)
class AlwaysTrue(Expression):
    def __str__(self) -> str:
        return "TRUE"


@dataclass(frozen=True)
class AlwaysFalse(Expression):
    def __str__(self) -> str:
        return "FALSE"


@dataclass(frozen=True)
class Connective(Expression):
    """``left AND right`` / ``left OR right``."""

    left: Expression
    right: Expression

    def __str__(self) -> str:
        return f"({self.left} {self.sql} {self.right})"


class And(Connective, sql="AND"):
    """Both sides hold."""


class Or(Connective, sql="OR"):
    """Either side holds."""


@dataclass(frozen=True)
class Not(Expression):
    child: Expression

    def __str__(self) -> str:
        return f"NOT {self.child}"


@dataclass(frozen=True)
class Unsupported(Expression):
    """A condition bloomskip does not evaluate; it always may match. ``columns``: the
    columns it names (outside subqueries), which must exist all the same: binding
    resolves them, so a misspelt name is an error here as in ``=``."""

    text: str
    columns: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Predicate(Expression):
    """A condition on one column (``term``: a name, or a column once bound), written
    ``term`` and its kind's SQL (a comparison adds its literals)."""

    term: Reference | BoundReference

    @property
    def bound(self) -> bool:
        return isinstance(self.term, BoundReference)

    def __str__(self) -> str:
        return f"{self.term} {self.sql}"


@dataclass(frozen=True)
class NullPredicate(Predicate):
    """``IS NULL`` / ``IS NOT NULL``."""


class IsNull(NullPredicate, sql="IS NULL"):
    """The column is NULL."""


class NotNull(NullPredicate, sql="IS NOT NULL"):
    """The column is not NULL."""


@dataclass(frozen=True)
class LiteralPredicate(Predicate):
    """A comparison with literals: ``literals`` as written and, once bound,
    ``conversions``: the values of the column's type each literal can equal. ``=`` and
    ``!=`` hold one literal (``literal``), ``IN`` and ``NOT IN`` a tuple."""

    literals: ClassVar[tuple[Literal, ...]]  # a field, or a property of ``literal``
    # ``converted`` (a field of each subclass): one Converted, or a tuple of them, for
    # one or many literals; None or () until bound.

    @property
    def conversions(self) -> tuple[Converted, ...]:
        c = self.converted
        return c if isinstance(c, tuple) else () if c is None else (c,)

    def with_conversions(self, conv: tuple[Converted, ...]) -> LiteralPredicate:
        return replace(self, converted=conv if isinstance(self.converted, tuple) else conv[0])

    def __str__(self) -> str:
        lits = self.literals
        text = f"({', '.join(map(str, lits))})" if isinstance(self.converted, tuple) else lits[0]
        return f"{self.term} {self.sql} {text}"


@dataclass(frozen=True)
class _OneLiteral(LiteralPredicate):
    literal: Literal
    converted: Converted | None = None

    @property
    def literals(self) -> tuple[Literal, ...]:  # type: ignore[override]
        return (self.literal,)


@dataclass(frozen=True)
class _ManyLiterals(LiteralPredicate):
    literals: tuple[Literal, ...]  # type: ignore[misc]
    converted: tuple[Converted, ...] = ()


class EqualTo(_OneLiteral, sql="="):
    """The column equals the literal."""


class NotEqualTo(_OneLiteral, sql="!="):
    """The column differs from the literal."""


class In(_ManyLiterals, sql="IN"):
    """The column equals one of the literals."""


class NotIn(_ManyLiterals, sql="NOT IN"):
    """The column equals none of the literals."""


#: Each leaf and the leaf that is its negation.
_NEGATION: dict[type, type] = {
    IsNull: NotNull,
    NotNull: IsNull,
    EqualTo: NotEqualTo,
    NotEqualTo: EqualTo,
    In: NotIn,
    NotIn: In,
}

#: Leaves that hold when the column equals one of the literals (the others exclude them).
POSITIVE = (EqualTo, In)


# ---------------------------------------------------------------------------- visitors


class ExpressionVisitor(Generic[T]):
    """One method per kind of node; :func:`visit` calls them bottom-up."""

    def visit_true(self) -> T:
        raise NotImplementedError

    def visit_false(self) -> T:
        raise NotImplementedError

    def visit_not(self, child: T) -> T:
        raise NotImplementedError

    def visit_and(self, left: T, right: T) -> T:
        raise NotImplementedError

    def visit_or(self, left: T, right: T) -> T:
        raise NotImplementedError

    def visit_unsupported(self, expr: Unsupported) -> T:
        raise NotImplementedError

    def visit_predicate(self, pred: Predicate) -> T:
        raise NotImplementedError


def visit(expr: Expression, visitor: ExpressionVisitor[T]) -> T:
    """Walk ``expr`` with ``visitor``, children first."""
    if isinstance(expr, And):
        return visitor.visit_and(visit(expr.left, visitor), visit(expr.right, visitor))
    if isinstance(expr, Or):
        return visitor.visit_or(visit(expr.left, visitor), visit(expr.right, visitor))
    if isinstance(expr, Not):
        return visitor.visit_not(visit(expr.child, visitor))
    if isinstance(expr, Predicate):
        return visitor.visit_predicate(expr)
    if isinstance(expr, AlwaysTrue):
        return visitor.visit_true()
    if isinstance(expr, AlwaysFalse):
        return visitor.visit_false()
    if isinstance(expr, Unsupported):
        return visitor.visit_unsupported(expr)
    raise TypeError(f"not a predicate node: {type(expr).__name__}")


class ExpressionTransform(ExpressionVisitor[Expression]):
    """A visitor that rebuilds the tree: the identity, until a subclass changes the nodes
    it cares about."""

    def visit_true(self) -> Expression:
        return AlwaysTrue()

    def visit_false(self) -> Expression:
        return AlwaysFalse()

    def visit_not(self, child: Expression) -> Expression:
        return Not(child)

    def visit_and(self, left: Expression, right: Expression) -> Expression:
        return And(left, right)

    def visit_or(self, left: Expression, right: Expression) -> Expression:
        return Or(left, right)

    def visit_unsupported(self, expr: Unsupported) -> Expression:
        return expr

    def visit_predicate(self, pred: Predicate) -> Expression:
        return pred


def rewrite_not(expr: Expression) -> Expression:
    """The same predicate with every NOT pushed down to a leaf and removed (top-down, so
    ``NOT NOT x`` is ``x`` again, whatever ``x`` is)."""
    return _push_not(expr, negated=False)


def _push_not(expr: Expression, negated: bool) -> Expression:
    """``expr`` - or NOT ``expr`` when ``negated`` - without a Not node (``expr`` may
    itself contain Nots): each Not flips the polarity below it, and under a negation
    AND and OR trade places (De Morgan) and each leaf becomes its opposite."""
    if isinstance(expr, Not):
        return _push_not(expr.child, not negated)
    if isinstance(expr, Connective):
        left, right = _push_not(expr.left, negated), _push_not(expr.right, negated)
        return And(left, right) if isinstance(expr, And) != negated else Or(left, right)
    if not negated:
        return expr
    if isinstance(expr, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(expr, AlwaysFalse):
        return AlwaysTrue()
    if isinstance(expr, Unsupported):
        return Unsupported(f"NOT ({expr.text})", expr.columns)
    opposite = _NEGATION.get(type(expr))
    if opposite is None:
        raise TypeError(f"cannot negate {type(expr).__name__}")
    return opposite(**{f.name: getattr(expr, f.name) for f in fields(expr)})


class _Columns(ExpressionVisitor[dict]):
    def visit_true(self) -> dict:
        return {}

    visit_false = visit_true

    def visit_not(self, child: dict) -> dict:
        return child

    def visit_and(self, left: dict, right: dict) -> dict:
        return left | {k: v for k, v in right.items() if k not in left}

    visit_or = visit_and

    def visit_unsupported(self, expr: Unsupported) -> dict:
        return {}

    def visit_predicate(self, pred: Predicate) -> dict:
        return {pred.term.name: pred.term}


def columns(expr: Expression) -> list[str]:
    """Names of the columns a predicate refers to, in first-seen order."""
    return list(visit(expr, _Columns()))


def terms(expr: Expression) -> list[Reference | BoundReference]:
    """The terms (references, or bound columns) a predicate uses, first-seen order."""
    return list(visit(expr, _Columns()).values())


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
