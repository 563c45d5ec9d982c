"""Tri-state answers for one unit of data (a row group, a zone), with the reason.

A :class:`Decision` says whether a unit *may match* a bound predicate, and why: "may
match" (read it, something may be there) or "cannot match" (skip it). A "may match" is
not a boolean to negate - negating a maybe drops data - so NOT has been rewritten away before
evaluation (:func:`bloomskip.expr.expressions.rewrite_not`), so :func:`evaluate` only
combines answers with AND (cannot match if either side cannot) and OR (cannot match only
if both cannot).

A format supplies one function that answers a leaf predicate (``BoundEqualTo``, ...) for
the unit; :func:`evaluate` walks the tree and stops reading a unit's metadata as soon as
the answer is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bloomskip.expr.bind import BoundPredicate
from bloomskip.expr.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Expression,
    Literal,
    Or,
    Unsupported,
)
from bloomskip.expr.literals import Converted, NoMatch, Unknown, Values


@dataclass(frozen=True)
class Decision:
    """Whether a unit may hold a matching row, and why."""

    may_match: bool
    reason: str

    def __bool__(self) -> bool:  # pragma: no cover - guard against accidental negation
        raise TypeError("a Decision is not a boolean; use .may_match (never negate it)")


def might(reason: str) -> Decision:
    return Decision(True, reason)


def cannot(reason: str) -> Decision:
    return Decision(False, reason)


LeafFn = Callable[[BoundPredicate], Decision]


def evaluate(expr: Expression, leaf: LeafFn) -> Decision:
    """Combine leaf answers over a bound, NOT-free predicate."""
    if isinstance(expr, And):
        left = evaluate(expr.left, leaf)
        if not left.may_match:
            return left
        right = evaluate(expr.right, leaf)
        if not right.may_match:
            return right
        return might(_join(left.reason, right.reason, "; "))
    if isinstance(expr, Or):
        left = evaluate(expr.left, leaf)
        if left.may_match:
            return left
        right = evaluate(expr.right, leaf)
        if right.may_match:
            return right
        return cannot(_join(left.reason, right.reason, " and "))
    if isinstance(expr, AlwaysTrue):
        return might("TRUE")
    if isinstance(expr, AlwaysFalse):
        return cannot("FALSE is never true")
    if isinstance(expr, Unsupported):
        return might(f"{expr.text}: not used for pruning")
    if isinstance(expr, BoundPredicate):
        return leaf(expr)
    raise TypeError(f"evaluate needs a bound, NOT-free predicate, got {type(expr).__name__}")


def any_literal(
    name: str,
    lits: tuple[Literal, ...],
    converted: tuple[Converted, ...],
    excluded: Callable[[Values], tuple[bool, str]],
) -> Decision:
    """``name = lit`` / ``name IN lits`` for one unit: it cannot match only if every
    literal is ruled out - by its conversion (:class:`NoMatch`) or by the format's
    evidence, ``excluded(values) -> (ruled out?, reason)``. An :class:`Unknown` literal
    may match at once."""
    ruled_out: list[str] = []
    for lit, conv in zip(lits, converted, strict=True):
        if isinstance(conv, Unknown):
            return might(f"{name} = {lit}: {conv.reason}")
        if isinstance(conv, NoMatch):
            ruled_out.append(f"{name} = {lit}: {conv.reason}")
            continue
        out, reason = excluded(conv)
        if not out:
            return might(f"{name} = {lit}: {reason}")
        ruled_out.append(f"{name} = {lit}: {reason}")
    if len(ruled_out) > 3:
        stages = sorted({r.split(": ")[1] for r in ruled_out if ": " in r})
        return cannot(f"{name}: all {len(ruled_out)} values ruled out ({', '.join(stages)})")
    return cannot("; ".join(ruled_out))


def _join(a: str, b: str, sep: str) -> str:
    if a == b:
        return a
    text = f"{a}{sep}{b}"
    return text if len(text) <= 400 else text[:397] + "..."
