"""SQL WHERE text -> predicate tree, with sqlglot as the parser.

``parse("user_id = 'u1' AND day IN (DATE '2024-01-31', DATE '2024-02-01')")`` gives an
:class:`~bloomskip.expr.expressions.Expression`. The grammar is PostgreSQL's (sqlglot's
``postgres`` dialect): ``"quoted identifiers"``, ``'text'`` with ``''`` for a quote,
numbers (``-12``, ``1.50``, ``1e3``), ``DATE '…'``, ``TIME '…'``, ``TIMESTAMP '…'``,
``X'00ff'`` for binary, ``TRUE``/``FALSE`` and ``NULL``.

What becomes a predicate: ``col = lit`` (either side), ``col != lit`` / ``<>``,
``col IN (…)``, ``col NOT IN (…)``, ``col IS [NOT] NULL``, ``col IS [NOT] DISTINCT FROM
lit`` / ``<=>``, a bare boolean column, ``col IS TRUE/FALSE``, AND, OR, NOT and
parentheses. Anything else (ranges, LIKE, functions, casts on the column, sub-queries,
column-to-column comparisons) becomes :class:`~bloomskip.expr.expressions.Unsupported`,
which never prunes; the rest of the predicate still does.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import sqlglot
from sqlglot import exp

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
    Not,
    NotEqualTo,
    NotNull,
    Or,
    Reference,
    Unsupported,
)

DIALECT = "postgres"
_INT = re.compile(r"[+-]?\d+")
_TEXT_TYPES = exp.DataType.TEXT_TYPES
_EXACT_NUMERIC_TYPES = (exp.DataType.INTEGER_TYPES - {exp.DataType.Type.BIT}) | {
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.DECIMAL32,
    exp.DataType.Type.DECIMAL64,
    exp.DataType.Type.DECIMAL128,
    exp.DataType.Type.DECIMAL256,
    exp.DataType.Type.BIGDECIMAL,
    exp.DataType.Type.UDECIMAL,
}
_FRACTION = re.compile(r"\d:\d\d\.(\d+)")
_TIMESTAMP_TYPES = {
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIMESTAMPLTZ,
    exp.DataType.Type.TIMESTAMPNTZ,
    exp.DataType.Type.DATETIME,
}
_TIME_TYPES = _TIMESTAMP_TYPES | {exp.DataType.Type.TIME, exp.DataType.Type.TIMETZ}


def parse(text: str, dialect: str = DIALECT) -> Expression:
    """Parse a SQL boolean expression (the part after WHERE).

    ``dialect`` is sqlglot's name of the SQL the text is written in: ``"spark"`` for a
    predicate Spark also runs (``"text"`` is a string there, ``\\`` escapes in
    literals), so that both read the same values.
    """
    if not isinstance(text, str) or not text.strip():
        raise PredicateError("the predicate is empty; write e.g. \"user_id = 'u1'\"")
    try:
        return _parse(text, dialect)
    except PredicateError as e:
        if dialect != "spark" and _SPARK_SUFFIX.search(text):
            raise PredicateError(
                f"{e} (Spark's literal suffixes, 5L or 1.5D, are not SQL here: write 5, 1.5)"
            ) from None
        raise


#: A number with one of Spark's type suffixes (5L, 5S, 5Y, 1.5D, 1.5F, 1.5BD).
_SPARK_SUFFIX = re.compile(r"(?<![\w.'\"])\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:BD|[LSYDF])\b", re.I)


def _parse(text: str, dialect: str) -> Expression:
    try:
        tree = sqlglot.parse_one(text, dialect=dialect)
        if tree is None:
            raise PredicateError(f"cannot parse predicate {text!r}")
        return _convert(tree)
    except sqlglot.errors.SqlglotError as e:
        if isinstance(e, sqlglot.errors.TokenError) and ("'" in text or '"' in text):
            why = (
                "a closing quote is missing ('text' for a string, \"name\" for a column; a "
                "quote inside is doubled)"
            )
        else:
            why = _parse_message(e)
        raise PredicateError(f"cannot parse predicate {text!r}: {why}") from None
    except RecursionError:  # sqlglot's parser recurses per parenthesis and NOT
        raise PredicateError(
            f"predicate nested too deeply ({len(text)} characters); "
            "use fewer parentheses or NOTs, or IN lists"
        ) from None


def _parse_message(e: Exception) -> str:
    """sqlglot's first parse error, said in SQL terms: what is wrong and at which column
    (not its class names, nor the text again with terminal colours)."""
    errors = getattr(e, "errors", None) or []
    first = errors[0] if errors and isinstance(errors[0], dict) else {}
    what = str(first.get("description") or "")
    missing = re.fullmatch(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>", what)
    if missing:
        what = f"{_OPERATORS.get(missing.group(1), missing.group(1))} lacks its right-hand side"
    if what and first.get("col"):
        return f"{what} (column {first['col']})"
    return what or re.sub(r"\x1b\[[0-9;]*m", "", str(e)).replace("\n", " ")


#: sqlglot's node names of the operators a predicate may leave unfinished.
_OPERATORS = {
    "EQ": "=", "NEQ": "<>", "And": "AND", "Or": "OR", "In": "IN", "Not": "NOT",
    "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "Is": "IS", "Like": "LIKE",
}  # fmt: skip


def _convert(node: exp.Expression) -> Expression:
    _check_condition(node)
    if isinstance(node, exp.Paren):
        return _convert(node.this)
    if isinstance(node, exp.And | exp.Or):
        # A chain (a = 1 OR a = 2 OR ..., as generated SQL writes) parses as a tree as
        # deep as it is long, and 1,000 terms overflowed the recursion here. Flatten it
        # (sqlglot walks it with a stack) and rebuild it balanced: every later pass
        # (NOT rewriting, binding, evaluation) then recurses log2(n) deep only.
        parts = [_convert(part) for part in node.flatten()]
        join = And if isinstance(node, exp.And) else Or
        while len(parts) > 1:
            pairs = zip(parts[::2], parts[1::2], strict=False)
            parts = [join(a, b) for a, b in pairs] + parts[len(parts) - len(parts) % 2 :]
        return parts[0]
    if isinstance(node, exp.Not):
        return Not(_convert(node.this))
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if node.this else AlwaysFalse()
    if isinstance(node, exp.Column):
        return EqualTo(_reference(node), Literal("boolean", True))
    if isinstance(node, exp.EQ | exp.NEQ | exp.NullSafeEQ):
        return _comparison(node)
    if isinstance(node, exp.In):
        return _in(node)
    if isinstance(node, exp.Is):
        return _is(node)
    return _unsupported(node)


#: Nodes that are values, never true or false: a WHERE clause cannot be one of them.
_NOT_CONDITIONS = (exp.Literal, exp.Query, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.DPipe)


def _check_condition(node: exp.Expression) -> None:
    """Refuse a statement (``SELECT ...``, ``DROP ...``) or a value (``5``, ``'x'``,
    ``a + 1``) where a condition must stand: engines reject ``WHERE 5``, and taking it
    as "may match" would hide the mistake."""
    if isinstance(node, _NOT_CONDITIONS) or not isinstance(node, exp.Condition):
        what = "a statement" if not isinstance(node, exp.Condition | exp.Literal) else "a value"
        if isinstance(node, exp.Query):
            what = "a query"
        raise PredicateError(
            f"{node.sql(dialect=DIALECT)[:80]!r} is {what}, not a condition; write what "
            "follows WHERE, e.g. \"user_id = 'u1'\""
        )


def _unsupported(node: exp.Expression) -> Unsupported:
    """``node`` as a condition not evaluated, with the columns it names (not those of a
    subquery, nor the bare words ``NaN``/``Inf`` a user means as numbers)."""
    names = dict.fromkeys(
        _reference(c).name
        for c in node.find_all(exp.Column)
        if not c.find_ancestor(exp.Query) and c.name.lower() not in _NUMBER_WORDS | _NILADIC
    )
    return Unsupported(node.sql(dialect=DIALECT), tuple(names))


_NUMBER_WORDS = frozenset({"nan", "inf", "infinity"})
#: SQL's niladic functions, which sqlglot may read as column names.
_NILADIC = frozenset(
    {"user", "current_user", "session_user", "current_role", "current_catalog", "current_schema"}
)


def _reference(col: exp.Column) -> Reference:
    return Reference(".".join(part.name for part in col.parts))


def _comparison(node: exp.Expression) -> Expression:
    left, right = node.this, node.expression
    if not isinstance(left, exp.Column):
        left, right = right, left
    if not isinstance(left, exp.Column):
        return _unsupported(node)
    lit = _literal(right)
    if lit is None:
        return _unsupported(node)
    ref = _reference(left)
    if isinstance(node, exp.NullSafeEQ):
        return IsNull(ref) if lit.kind == "null" else _null_safe_equal(ref, lit)
    return EqualTo(ref, lit) if isinstance(node, exp.EQ) else NotEqualTo(ref, lit)


def _in(node: exp.In) -> Expression:
    if not isinstance(node.this, exp.Column) or node.args.get("query") or not node.expressions:
        return _unsupported(node)
    literals = [_literal(e) for e in node.expressions]
    if any(lit is None for lit in literals):
        return _unsupported(node)
    if any(lit.approximate for lit in literals):  # type: ignore[union-attr]
        # DuckDB and Spark give an IN list one type: a DOUBLE among its values makes
        # every number (and numeric text) in it a DOUBLE - i64 IN (9007199254740993, 1e0)
        # matches 9007199254740992 there.
        literals = [
            Literal(lit.kind, lit.value, True) if lit.kind in ("number", "string") else lit
            for lit in literals  # type: ignore[union-attr]
        ]
    return In(_reference(node.this), tuple(literals))  # type: ignore[arg-type]


def _is(node: exp.Is) -> Expression:
    if not isinstance(node.this, exp.Column):
        return _unsupported(node)
    ref, what, negate = _reference(node.this), node.expression, bool(node.args.get("negate"))
    if isinstance(what, exp.Null):
        return NotNull(ref) if negate else IsNull(ref)
    if isinstance(what, exp.Boolean):
        positive = _null_safe_equal(ref, Literal("boolean", bool(what.this)))
        return Not(positive) if negate else positive
    return _unsupported(node)


def _null_safe_equal(ref: Reference, lit: Literal) -> Expression:
    """``col IS NOT DISTINCT FROM lit`` / ``col IS TRUE``: never NULL, so its negation
    selects NULL rows too. Written as ``col = lit AND col IS NOT NULL``, whose NOT is
    ``col != lit OR col IS NULL`` - exact under rewrite_not, where a bare EqualTo would
    lose the NULL rows."""
    return And(EqualTo(ref, lit), NotNull(ref))


def _literal(node: exp.Expression) -> Literal | None:
    """The literal a node denotes, or None when it is not a plain literal."""
    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Null):
        return Literal("null", None)
    if isinstance(node, exp.Boolean):
        return Literal("boolean", bool(node.this))
    if isinstance(node, exp.HexString):
        text = node.this
        try:
            return Literal("binary", bytes.fromhex(text if len(text) % 2 == 0 else "0" + text))
        except ValueError:
            return None
    if isinstance(node, exp.Neg):
        inner = _literal(node.this)
        if inner is None or inner.kind != "number":
            return None
        # copy_negate, not unary minus: that rounds a Decimal to the context's 28 digits
        # (-1234567890123456789012345678.9012345678 would lose its last ten).
        value = -inner.value if isinstance(inner.value, int) else inner.value.copy_negate()
        return Literal("number", value, inner.approximate)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return Literal("string", node.this)
        return _number(node.this)
    if isinstance(node, exp.Cast):
        return _cast(node)
    return None


def _number(text: str) -> Literal | None:
    text = text.strip()
    # DuckDB and Spark read a number with an exponent, or with more digits than a
    # DECIMAL(38) holds, as a DOUBLE: such a literal is approximate (see Literal).
    approximate = "e" in text.lower() or sum(ch.isdigit() for ch in text) > 38
    if _INT.fullmatch(text) and len(text) <= 400:  # int() refuses 4300+ digits: Decimal
        return Literal("number", int(text), approximate)
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return Literal("number", value, approximate) if value.is_finite() else None


def _cast(node: exp.Cast) -> Literal | None:
    """``DATE '…'``, ``TIMESTAMP '…'``, ``TIME '…'`` and casts of literals; None (the
    condition may match) for a cast whose result bloomskip cannot be sure of."""
    inner = _literal(node.this)
    to = node.to.this if isinstance(node.to, exp.DataType) else None
    if inner is None or to is None:
        return None
    if inner.kind == "null":
        return inner
    if to == exp.DataType.Type.DATE and inner.kind == "string":
        return Literal("date", inner.value.strip())
    if to in _TIME_TYPES and inner.kind == "string":
        # TIMESTAMP(3) and TIME(0) round the text to their precision first (DuckDB reads
        # '… 00:00:00.0015' as TIMESTAMP(3) .002): exact only when the text is no finer.
        if not _within_precision(inner.value, node.to):
            return None
        kind = "timestamp" if to in _TIMESTAMP_TYPES else "time"
        return Literal(kind, inner.value.strip())
    if to in _TEXT_TYPES and inner.kind == "string":
        return inner
    if to in _EXACT_NUMERIC_TYPES and inner.kind in ("number", "string"):
        # Only integral values: a cast may round (CAST(1.234 AS DECIMAL(5,2)) is 1.23),
        # and a literal bloomskip rounded differently would prune rows that match. A
        # cast to a floating type rounds too, to a width the dialects disagree on (FLOAT
        # is 4 bytes in DuckDB, 8 in PostgreSQL): never exact, so never taken.
        number = _number(str(inner.value)) if inner.kind == "string" else inner
        # (Bounded first, without a context that overflows: int() of 1e100000000
        # would take minutes.)
        value = None if number is None else number.value
        if value is not None and _magnitude(value) < 10**40 and value == int(value):
            # 9007199254740993e0 is a DOUBLE (2^53) before it is cast: still approximate
            return Literal("number", int(value), number.approximate)
    return None


def _within_precision(text: str, to: exp.DataType) -> bool:
    """Whether ``text``'s fraction of a second has no more significant digits than the
    precision ``to`` names (``TIMESTAMP(3)``); True when it names none."""
    if not to.expressions:
        return True
    try:
        (param,) = to.expressions
        digits = int(param.name)
    except (ValueError, TypeError):
        return False
    m = _FRACTION.search(text)
    return len(m.group(1).rstrip("0")) <= digits if m else True


def _magnitude(value: int | Decimal) -> int | Decimal:
    """``abs(value)``, without the context that overflows a Decimal beyond 1e999999."""
    return abs(value) if isinstance(value, int) else value.copy_abs()


def parse_literal(text: str) -> Literal | None:
    """A single SQL literal (``42``, ``'x'``, ``DATE '2024-01-31'``, ``X'00ff'``), or None."""
    try:
        node = sqlglot.parse_one(text, dialect=DIALECT)
    except sqlglot.errors.SqlglotError:
        return None
    return None if node is None else _literal(node)
