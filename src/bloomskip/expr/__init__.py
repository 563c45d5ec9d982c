"""Predicates shared by every format: the tree, SQL parsing, binding, evaluation.

Data flows one way: SQL text (:mod:`.sql`) -> expression tree (:mod:`.expressions`) ->
bound to a schema with literals converted (:mod:`.bind`, :mod:`.literals`) ->
evaluated per unit of data into a :class:`~.evaluate.Decision` (:mod:`.evaluate`).
"""

from bloomskip.expr.bind import Column, bind
from bloomskip.expr.evaluate import Decision, cannot, evaluate, might
from bloomskip.expr.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    EqualTo,
    Expression,
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
)
from bloomskip.expr.sql import parse

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "Column",
    "Decision",
    "EqualTo",
    "Expression",
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
    "cannot",
    "evaluate",
    "might",
    "parse",
    "rewrite_not",
]
