"""Predicates shared by every format: the tree, SQL parsing, binding.

Data flows one way: SQL text (:mod:`.sql`) -> expression tree (:mod:`.expressions`) ->
bound to a schema with literals converted (:mod:`.bind`, :mod:`.literals`) -> decided
per unit of data by the pruning engine (:mod:`bloomskip.prune`).
"""

from bloomskip.expr.bind import Column, bind
from bloomskip.expr.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundReference,
    EqualTo,
    Expression,
    ExpressionVisitor,
    In,
    IsNull,
    Literal,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
    Reference,
    Unsupported,
    rewrite_not,
    visit,
)
from bloomskip.expr.sql import parse

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BoundReference",
    "Column",
    "EqualTo",
    "Expression",
    "ExpressionVisitor",
    "In",
    "IsNull",
    "Literal",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNull",
    "Or",
    "Reference",
    "Unsupported",
    "bind",
    "parse",
    "rewrite_not",
    "visit",
]
