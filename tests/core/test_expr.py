"""The predicate layer: SQL parsing, NOT rewriting, binding and exact literal conversion."""

from __future__ import annotations

import contextlib
import datetime as dt
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bloomskip.errors import PredicateError
from bloomskip.expr import (
    And,
    Column,
    EqualTo,
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
    bind,
    parse,
    rewrite_not,
)
from bloomskip.expr.expressions import BoundReference, literal
from bloomskip.expr.literals import NoMatch, Unknown, Values, convert, to_arrow
from bloomskip.expr.sql import parse_literal
from tests.support.predicates import assert_converted, conv

a, b = Reference("a"), Reference("b")


def num(v) -> Literal:
    return Literal("number", v)


def s(v: str) -> Literal:
    return Literal("string", v)


# ------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "sql, tree",
    [
        ("a = 1", EqualTo(a, num(1))),
        ("1 = a", EqualTo(a, num(1))),
        ("a = 'it''s'", EqualTo(a, s("it's"))),
        ("a != -2", NotEqualTo(a, num(-2))),
        ("a <> 1.50", NotEqualTo(a, num(Decimal("1.50")))),
        ("a IN (1, 'x')", In(a, (num(1), s("x")))),
        ("a NOT IN (1)", Not(In(a, (num(1),)))),
        ("a IS NULL", IsNull(a)),
        ("a IS NOT NULL", NotNull(a)),
        ("a <=> NULL", IsNull(a)),
        ("a IS NOT DISTINCT FROM 3", And(EqualTo(a, num(3)), NotNull(a))),
        ("a <=> 3", And(EqualTo(a, num(3)), NotNull(a))),
        ("a", EqualTo(a, Literal("boolean", True))),
        ("a IS TRUE", And(EqualTo(a, Literal("boolean", True)), NotNull(a))),
        ("a = DATE '2024-01-31'", EqualTo(a, Literal("date", "2024-01-31"))),
        ("a = TIMESTAMP '2024-01-31 12:00:00'",
         EqualTo(a, Literal("timestamp", "2024-01-31 12:00:00"))),
        ("a = TIME '12:00:00'", EqualTo(a, Literal("time", "12:00:00"))),
        ("a = X'00ff'", EqualTo(a, Literal("binary", b"\x00\xff"))),
        ("a = true", EqualTo(a, Literal("boolean", True))),
        ("a = NULL", EqualTo(a, Literal("null", None))),
        ("a = 1e3", EqualTo(a, Literal("number", Decimal("1e3"), approximate=True))),
        ("a = -0.0", EqualTo(a, num(Decimal("-0.0")))),
        ("\"My Col\" = 1", EqualTo(Reference("My Col"), num(1))),
        ("s.x = 1", EqualTo(Reference("s.x"), num(1))),
        ("a = CAST('7' AS BIGINT)", EqualTo(a, num(7))),
        ("a = CAST(9007199254740993e0 AS BIGINT)",  # a DOUBLE before the cast
         EqualTo(a, Literal("number", 9007199254740993, approximate=True))),
        ("a = TIMESTAMP(3) '2024-01-31 12:00:00.120'",
         EqualTo(a, Literal("timestamp", "2024-01-31 12:00:00.120"))),
        ("a = 1 AND (b = 2 OR NOT b IS NULL)",
         And(EqualTo(a, num(1)), Or(EqualTo(b, num(2)), Not(IsNull(b))))),
    ],
)  # fmt: skip
def test_parse(sql, tree):
    assert parse(sql) == tree


@pytest.mark.parametrize(
    "sql",
    ["a < 5", "a LIKE 'x%'", "upper(a) = 'X'", "a = b", "CAST(a AS INT) = 1",
     "a IN (SELECT 1)", "a BETWEEN 1 AND 2", "a = CAST(1.5 AS INT)",
     # rounded to a float whose width dialects disagree on, or to a precision
     "a = CAST(5 AS DOUBLE)", "a = 5::real", "a = CAST(5 AS FLOAT)",
     "a = TIMESTAMP(3) '2024-01-31 12:00:00.0015'", "a = TIME(0) '12:00:00.5'"],
)  # fmt: skip
def test_what_is_not_understood_is_kept_as_unsupported(sql):
    assert isinstance(parse(sql), Unsupported)


def test_null_safe_forms_keep_null_rows_under_not():
    """NOT (a IS TRUE) and NOT (a <=> 3) select NULL rows: the rewrite must keep them."""
    for sql in ("a IS NOT TRUE", "NOT (a <=> 3)", "NOT a IS NOT DISTINCT FROM 3"):
        rewritten = rewrite_not(parse(sql))
        assert isinstance(rewritten, Or) and rewritten.right == IsNull(a), sql


@pytest.mark.parametrize("sql", ["", "   ", "a = = 1", "a = 'unterminated"])
def test_parse_errors_are_typed(sql):
    with pytest.raises(PredicateError):
        parse(sql)


@pytest.mark.parametrize(
    "sql, said",
    [
        ("uuid = ", "= lacks its right-hand side (column 6)"),
        ("uuid = 'a' AND", "AND lacks its right-hand side (column 14)"),
        ("uuid IN (", "(column 9)"),
    ],
)
def test_parse_errors_say_what_is_wrong_in_sql_terms(sql, said):
    with pytest.raises(PredicateError) as e:
        parse(sql)
    assert str(e.value).endswith(said) and "class" not in str(e.value), str(e.value)


def test_parse_literal():
    assert parse_literal("42") == num(42)
    assert parse_literal("DATE '2024-01-31'") == Literal("date", "2024-01-31")
    assert parse_literal("X'0a'") == Literal("binary", b"\n")
    assert parse_literal("hello world") is None


# ------------------------------------------------------------------ NOT rewriting


def test_rewrite_not_pushes_not_to_the_leaves():
    e = Not(And(EqualTo(a, num(1)), Or(IsNull(b), Not(In(a, (num(2),))))))
    assert rewrite_not(e) == Or(NotEqualTo(a, num(1)), And(NotNull(b), In(a, (num(2),))))
    assert rewrite_not(Not(Not(IsNull(a)))) == IsNull(a)
    assert rewrite_not(Not(NotIn(a, (num(1),)))) == In(a, (num(1),))
    assert rewrite_not(Not(Unsupported("a < 5"))) == Unsupported("NOT (a < 5)")


def _has_not(e) -> bool:
    if isinstance(e, Not):
        return True
    if isinstance(e, And | Or):
        return _has_not(e.left) or _has_not(e.right)
    return False


leaves = st.sampled_from(
    [EqualTo(a, num(1)), In(b, (num(1), num(2))), IsNull(a), NotNull(b), Unsupported("a < 1")]
)
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)
    ),
    max_leaves=12,
)


@given(trees)
def test_rewrite_not_leaves_no_not_and_is_an_involution_on_the_truth(tree):
    rewritten = rewrite_not(tree)
    assert not _has_not(rewritten)
    assert rewrite_not(Not(Not(tree))) == rewritten


# ------------------------------------------------------------------------ binding


def test_bind_resolves_names_and_converts_once():
    schema = {"User_Id": Column(pa.string(), 3), "n": Column(pa.int8(), 4)}
    e = bind("user_id = 'x' AND n IN (1, 300)", schema)
    assert isinstance(e, And)
    assert isinstance(e.left, EqualTo) and e.left.term == BoundReference("User_Id", pa.string(), 3)
    assert e.left.converted == Values(("x",)) and e.left.conversions == (Values(("x",)),)
    assert isinstance(e.right, In) and e.right.bound
    assert e.right.converted[0] == Values((1,))
    assert isinstance(e.right.converted[1], NoMatch)


def test_bind_errors_name_the_columns():
    with pytest.raises(PredicateError, match="no column 'x'; columns are: a, b"):
        bind("x = 1", {"a": Column(pa.int8()), "b": Column(pa.int8())})
    with pytest.raises(PredicateError, match="ambiguous"):
        bind("Ab = 1", {"ab": Column(pa.int8()), "AB": Column(pa.int8())})
    # An exact match wins over case-insensitive ones.
    assert bind("ab = 1", {"ab": Column(pa.int8()), "AB": Column(pa.int8())}).term.name == "ab"


# -------------------------------------------------------------- literal conversion


@pytest.mark.parametrize(
    "lit, t, expected",
    [
        ("5", pa.int8(), Values((5,))),
        ("5.0", pa.int8(), Values((5,))),
        ("1e2", pa.int16(), Values((100,))),
        ("'7'", pa.int32(), Values((7,))),
        ("-1", pa.uint32(), NoMatch),
        ("4294967295", pa.uint32(), Values((4294967295,))),
        ("300", pa.int8(), NoMatch),
        ("1.5", pa.int64(), NoMatch),
        ("'x'", pa.int64(), Unknown),
        ("0.0", pa.float64(), Values((0.0, -0.0))),
        ("-0.0", pa.float32(), Values((0.0, -0.0))),
        ("0.5", pa.float32(), Values((0.5,))),
        ("'NaN'", pa.float64(), Unknown),
        ("1.234", pa.decimal128(5, 2), NoMatch),
        ("1.230", pa.decimal128(5, 2), Values((Decimal("1.23"),))),
        ("1000", pa.decimal128(5, 2), NoMatch),
        ("999.99", pa.decimal128(5, 2), Values((Decimal("999.99"),))),
        ("'x'", pa.string(), Values(("x",))),
        ("X'78'", pa.string(), Unknown),  # DuckDB casts the column to BLOB
        ("X'ff'", pa.string(), Unknown),  # ... so the text '\\xFF' matches
        ("5", pa.string(), Unknown),
        ("'ab'", pa.binary(), Values((b"ab",))),
        ("X'0001'", pa.binary(3), NoMatch),
        ("X'000102'", pa.binary(3), Values((b"\x00\x01\x02",))),
        ("'12345678-1234-5678-1234-567812345678'", pa.uuid(),
         Values((bytes.fromhex("12345678123456781234567812345678"),))),
        ("DATE '2024-01-31'", pa.date32(), Values((dt.date(2024, 1, 31),))),
        ("'2024-01-31'", pa.date32(), Values((dt.date(2024, 1, 31),))),
        ("TIMESTAMP '2024-01-31 00:00:00'", pa.date32(), Values((dt.date(2024, 1, 31),))),
        ("TIMESTAMP '2024-01-31 00:00:01'", pa.date32(), NoMatch),
        ("TIMESTAMP '1970-01-01 00:00:01'", pa.timestamp("ms"), Values((1000,))),
        ("TIMESTAMP '1970-01-01 00:00:01'", pa.timestamp("us", tz="UTC"), Values((10**6,))),
        ("TIMESTAMP '1970-01-01 02:00:01+02:00'", pa.timestamp("s", tz="UTC"),
         Values((1, 7201), exact=False)),  # the offset applied, or ignored (PostgreSQL, DuckDB)
        ("TIMESTAMP '1970-01-01 00:00:01+02:00'", pa.timestamp("s"), Unknown),
        ("TIMESTAMP '1970-01-01 00:00:00.000000001'", pa.timestamp("ns"),
         Values((0, 1, 1000), exact=False)),  # exact, or kept to microseconds (DuckDB, PostgreSQL)
        ("TIMESTAMP '1970-01-01 00:00:00.000001'", pa.timestamp("ms"), NoMatch),
        ("DATE '1970-01-02'", pa.timestamp("s"), Values((86400,))),
        # INT96 columns are read as timestamp[ns] but hold years 1-9999: may match.
        ("TIMESTAMP '3000-01-01 00:00:00'", pa.timestamp("ns"), Unknown),
        ("TIME '00:00:01.5'", pa.time32("ms"), Values((1500,))),
        ("TIME '00:00:01.5'", pa.time32("s"), NoMatch),
        ("true", pa.bool_(), Values((True,))),
        ("NULL", pa.int64(), NoMatch),
    ],
)  # fmt: skip
def test_literal_conversion(lit, t, expected):
    assert_converted(lit, t, expected)


def test_float_literals_that_are_not_exact_probe_both_neighbours():
    got = conv("0.1", pa.float32())
    assert isinstance(got, Values) and len(got.values) == 2
    lo, hi = sorted(got.values)
    assert np.float32(lo) == lo and np.float32(hi) == hi
    assert np.nextafter(np.float32(lo), np.float32(1)) == np.float32(hi)
    assert Fraction(lo) < Fraction(1, 10) < Fraction(hi)
    lo, hi = sorted(conv("0.1", pa.float64()).values)
    assert Fraction(lo) < Fraction(1, 10) < Fraction(hi) and math.nextafter(lo, 1.0) == hi


@given(st.floats(allow_nan=False, width=32))
def test_every_float32_literal_probes_itself(x):
    lit = literal(float(x))
    got = convert(lit, pa.float32())
    assert isinstance(got, Values)
    assert float(x) in got.values


@given(st.floats(allow_nan=False))
def test_every_double_literal_probes_itself(x):
    got = convert(literal(x), pa.float64())
    assert isinstance(got, Values) and x in got.values


@given(st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-999, max_value=999))
def test_every_decimal_value_converts_to_itself(d):
    got = convert(Literal("number", d), pa.decimal128(5, 2))
    assert got == Values((d.quantize(Decimal("0.01")),))


@given(st.integers(-(2**63), 2**63 - 1))
def test_integers_convert_exactly_or_do_not_fit(v):
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint32(), pa.uint64()):
        info = np.iinfo(t.to_pandas_dtype())
        got = convert(num(v), t)
        assert got == Values((v,)) if info.min <= v <= info.max else isinstance(got, NoMatch)


def test_to_arrow_builds_arrays_of_the_column_type():
    assert to_arrow((1000,), pa.timestamp("ms")).type == pa.timestamp("ms")
    assert to_arrow((5,), pa.time32("ms")).to_pylist() == [dt.time(0, 0, 0, 5000)]
    assert to_arrow((b"x" * 16,), pa.uuid()).type == pa.uuid()
    assert to_arrow((Decimal("1.23"),), pa.decimal128(5, 2)).to_pylist() == [Decimal("1.23")]


def test_python_literals():
    assert literal(5) == num(5)
    assert literal(0.5) == num(Decimal("0.5"))
    assert literal("x") == s("x")
    assert literal(b"x") == Literal("binary", b"x")
    assert literal(None) == Literal("null", None)
    assert literal(dt.date(2024, 1, 31)) == Literal("date", "2024-01-31")
    assert convert(literal(float("nan")), pa.float64()) == Unknown(
        "NaN never prunes (NaN equality differs between engines)"
    )
    with pytest.raises(TypeError):
        literal(object())


@pytest.mark.parametrize(
    "sql, what",
    [
        ("SELECT 1", "a query"),
        ("5", "a value"),
        ("'x'", "a value"),
        ("a + 1", "a value"),
        ("a = 1 AND 5", "a value"),
        ("NOT (a * 2)", "a value"),
        ("DROP TABLE t", "a statement"),
        ("a = 1; DELETE FROM t", "a statement"),
    ],
)
def test_what_is_not_a_condition_is_refused(sql, what):
    """Engines reject ``WHERE 5``; answering "may match" would hide the mistake."""
    with pytest.raises(PredicateError, match=f"is {what}, not a condition"):
        parse(sql)


@pytest.mark.parametrize("value", [None, b"a = 1", 5, ["a = 1"]])
def test_what_is_not_a_predicate_is_a_predicate_error_at_every_entry(value, tmp_path):
    """Found (API review): only the zone index checked; ``prune(path, None)`` and
    ``bind(None, ...)`` raised a bare ``TypeError`` ("not a predicate node")."""
    import pyarrow.parquet as pq

    from bloomskip.parquet import prune

    with pytest.raises(PredicateError, match=r"SQL text .* or an expression tree"):
        bind(value, {"a": Column(pa.int64())})
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(PredicateError, match="a predicate is SQL text"):
        prune(str(path), value)


def test_a_condition_not_evaluated_still_names_real_columns():
    """Found (new-user walkthrough): ``user_id = u_000123`` (quotes forgotten) and
    ``userid > 5`` (a misspelt column) were taken as conditions bloomskip does not
    evaluate - "may match", every row group read, exit 0. Their columns are resolved as
    ``=``'s are: a name that is no column is an error, with a hint where a string was
    most likely meant. A subquery's columns are another table's; ``NaN`` is a number."""
    from bloomskip.expr.bind import Column, bind

    schema = {"user_id": Column(pa.string()), "n": Column(pa.float64())}
    for text, hint in [
        ("user_id = u_000123", True),
        ('user_id = "u_000123"', True),
        ("userid > 5", False),
        ("NOT (userid LIKE 'a%')", False),
        ("upper(usr) = 'A'", False),
    ]:
        with pytest.raises(PredicateError, match="no column") as e:
            bind(text, schema)
        assert ("single quotes" in str(e.value)) == hint, str(e.value)
    schema["s"] = Column(pa.struct([("f", pa.int64())]))
    for text in [
        "user_id > 'a'",
        "USER_ID LIKE 'a%'",
        "user_id IN (SELECT x FROM t)",
        "n = NaN",
        "s.f > 1",  # a struct's field (found by a probe: it was refused)
        "length(user_id) > user",  # SQL's niladic user, not a column
    ]:
        assert str(bind(text, schema))  # not evaluated, and not an error
    with pytest.raises(PredicateError, match=r"no column 't.id' \(nor 't'\)"):
        bind("t.id > 1", schema)
    with pytest.raises(PredicateError, match="a closing quote is missing"):
        bind('user_id = "x', schema)


def test_a_session_time_zone_reads_wall_clock_literals_against_instants():
    """Spark reads ``TIMESTAMP '…'`` (no offset) in its session time zone: New York's
    10:00 is 15:00 UTC. Around a daylight-saving change both offsets are kept (Java moves
    a skipped wall clock forward and takes the earlier of a repeated one)."""
    t = pa.timestamp("us", tz="UTC")
    ts = Literal("timestamp", "2024-01-01 10:00:00")
    us = 1704103200 * 10**6  # 2024-01-01 10:00 UTC
    hour = 3600 * 10**6
    assert convert(ts, t) == convert(ts, t, "UTC") == Values((us,))
    assert convert(ts, t, "America/New_York") == Values((us + 5 * hour,))
    assert convert(ts, t, "+05:30") == convert(ts, t, "GMT+5:30") == Values((us - 11 * hour // 2,))
    skipped = convert(Literal("timestamp", "2024-03-10 02:30:00"), t, "America/New_York")
    assert skipped == Values((1710052200 * 10**6, 1710055800 * 10**6), exact=False)
    assert convert(Literal("date", "2024-01-01"), t, "Asia/Kolkata") == Values(
        (us - 10 * hour - 11 * hour // 2,)
    )
    # without a zone: a wall clock (Parquet), or an instant read as UTC (Spark's ORC)
    both = Values((us - 11 * hour // 2, us), exact=False)
    assert convert(ts, pa.timestamp("us"), "Asia/Kolkata") == both
    assert convert(ts, pa.timestamp("us"), "UTC") == Values((us,))
    assert convert(Literal("timestamp", "2024-01-01 10:00:00+00:00"), t, "Asia/Kolkata") == (
        Values((us,))
    )
    assert isinstance(convert(ts, t, "Nowhere/Else"), Unknown)


def test_without_a_zone_both_utc_and_this_machine_s_zone_are_probed():
    """DuckDB and Spark default to the machine's time zone: on a machine in New York,
    ``ts = TIMESTAMP '2024-01-01 10:00:00'`` is 15:00 UTC there. Without a zone bloomskip
    reads the literal both as UTC (its documented rule) and in the machine's zone."""
    t = pa.timestamp("us", tz="UTC")
    ts = Literal("timestamp", "2024-01-01 10:00:00")
    us, hour = 1704103200 * 10**6, 3600 * 10**6
    with _machine_zone("America/New_York"):
        assert convert(ts, t) == Values((us, us + 5 * hour), exact=False)
        assert convert(ts, t, "UTC") == Values((us,))  # a zone given: that zone only
        assert convert(ts, pa.timestamp("us")) == Values((us,))  # wall clocks: unchanged
    with _machine_zone("UTC"):
        assert convert(ts, t) == Values((us,))  # a machine on UTC: one reading


@contextlib.contextmanager
def _machine_zone(zone: str):
    """This process in ``zone`` (``TZ``), as it was afterwards."""
    import os
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_a_date_equals_a_timestamp_at_its_day_s_first_instant_in_the_session_zone():
    """Found (tables and time zones probe): Spark compares ``d = TIMESTAMP '…'`` as the
    first instant of the date's day in the session zone; in Sao Paulo 2018-11-04 starts
    at 01:00 (daylight saving skipped midnight), so ``TIMESTAMP '2018-11-04 01:00:00'``
    equals that date there. bloomskip said no date equals a time not at midnight."""
    gap = Literal("timestamp", "2018-11-04 01:00:00")
    assert isinstance(convert(gap, pa.date32(), "America/Sao_Paulo"), Unknown)
    assert isinstance(convert(gap, pa.date32(), "Nowhere/Else"), Unknown)
    assert isinstance(convert(gap, pa.date32(), "UTC"), NoMatch)
    later = Literal("timestamp", "2018-11-05 01:00:00")  # a day that starts at midnight
    assert isinstance(convert(later, pa.date32(), "America/Sao_Paulo"), NoMatch)
    midnight = Literal("timestamp", "2018-11-05 00:00:00")
    assert convert(midnight, pa.date32(), "America/Sao_Paulo") == Values((dt.date(2018, 11, 5),))
    with _machine_zone("America/Sao_Paulo"):  # without a zone, this machine's is probed
        assert isinstance(convert(gap, pa.date32()), Unknown)
    with _machine_zone("UTC"):
        assert isinstance(convert(gap, pa.date32()), NoMatch)


def test_a_timestamp_against_wall_clocks_moves_over_a_gap_as_spark_casts_it():
    """Found (time-zone interop probe, 2026-11-29): Spark compares a TIMESTAMP_NTZ or DATE
    column with a TIMESTAMP literal through the session zone (a file scan casts the
    literal to the column's type): in New York ``ntz = TIMESTAMP '2024-03-10 02:30:00'``
    matches 03:30, the hour that day skipped moved on, and in Samoa, which skipped
    2011-12-30, ``d = TIMESTAMP '2011-12-30 00:00:00'`` matches 2011-12-31. The index
    probed only the literal's own wall clock and date: files holding the match were
    ruled out."""
    second = 10**6
    skipped = Literal("timestamp", "2024-03-10 02:30:00")
    got = convert(skipped, pa.timestamp("us"), "America/New_York")
    wall = 1710037800 * second  # 2024-03-10 02:30 on the wall
    assert isinstance(got, Values) and {wall, wall + 3600 * second} <= set(got.values)
    day = Literal("timestamp", "2011-12-30 00:00:00")
    got = convert(day, pa.date32(), "Pacific/Apia")
    assert isinstance(got, Values)
    assert {dt.date(2011, 12, 30), dt.date(2011, 12, 31)} <= set(got.values)  # and 29th
    ordinary = Literal("timestamp", "2024-07-01 12:00:00")
    assert convert(ordinary, pa.date32(), "Pacific/Apia") == convert(ordinary, pa.date32())


@given(
    zone=st.sampled_from(["America/New_York", "Australia/Lord_Howe", "Pacific/Apia"]),
    year=st.integers(1920, 2120),
    change=st.integers(0, 1),
    minutes=st.integers(-150, 150),
)
def test_a_timestamp_literal_probes_the_wall_clock_spark_casts_it_to(zone, year, change, minutes):
    """Wall clocks around a zone's changes of offset (1920-2120): every wall clock Spark
    may equate with the literal is probed - the literal cast to TIMESTAMP_NTZ (read as an
    instant in the session zone, a skipped one moved on, and back), and each column value
    whose own instant is the literal's (Spark casts the column for an IN list)."""
    import zoneinfo

    tz = zoneinfo.ZoneInfo(zone)
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
    changes = [
        start + dt.timedelta(hours=h)
        for h in range(1, 366 * 24)
        if (start + dt.timedelta(hours=h)).astimezone(tz).utcoffset()
        != (start + dt.timedelta(hours=h - 1)).astimezone(tz).utcoffset()
    ]
    at = changes[change % len(changes)] if changes else start
    wall = at.astimezone(tz).replace(tzinfo=None) + dt.timedelta(minutes=minutes)

    def instant(w: dt.datetime) -> dt.datetime:  # Java's: a skipped wall clock moves on
        return w.replace(tzinfo=tz, fold=0).astimezone(dt.UTC)

    def micros(w: dt.datetime) -> int:
        return (w - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)

    got = convert(Literal("timestamp", wall.isoformat(sep=" ")), pa.timestamp("us"), zone)
    assert isinstance(got, Values)
    cast = instant(wall).astimezone(tz).replace(tzinfo=None)  # the literal cast to NTZ
    assert micros(cast) in got.values
    for minutes in range(-180, 181, 15):  # the column cast to TIMESTAMP (IN, no unwrap)
        other = wall + dt.timedelta(minutes=minutes)
        if instant(other) == instant(wall):
            assert micros(other) in got.values, other


def test_spark_literal_suffixes_get_a_way_out():
    """Found (tables probe): ``ZoneIndex.query("id = 5L")`` said "'id = 5 AS L' is a
    statement": 5L is Spark's BIGINT literal, which the generic SQL reads as an alias.
    The error now says so; Spark's SQL (``dialect="spark"``, as ``plan_read`` and the
    data source read) takes them."""
    for q in ["id = 5L", "id IN (5L, 6L)", "x = 0.25BD"]:
        with pytest.raises(PredicateError, match=r"Spark.s literal suffixes, 5L or 1\.5D"):
            parse(q)
    assert str(parse("id = 5L", dialect="spark")) == "id = 5"
    assert str(parse("s = '5L'")) == "s = '5L'"
