"""Literal conversion for TIME columns and for DECIMAL wider than 38 digits.

DuckDB (the reference peer) reads ``TIME '…'`` and text cast to TIME at microsecond
precision, truncating finer digits (PostgreSQL rounds them), and compares TIME columns
of seconds, milliseconds and microseconds as TIME (microseconds), nanosecond columns as
TIME_NS. A literal with digits finer than the column's unit was NoMatch: a false
negative. DuckDB reads a DECIMAL column of more than 38 digits as DOUBLE, so distinct
decimals equal one literal there: such literals must not prune.
"""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from bloomskip.expr.expressions import Literal
from bloomskip.expr.literals import NoMatch, Unknown, Values, convert
from tests.support.predicates import assert_converted, conv


@pytest.mark.parametrize(
    "lit, t, expected",
    [
        # Whole units: one exact value, as before.
        ("TIME '00:00:01.5'", pa.time32("ms"), Values((1500,))),
        ("TIME '01:00:00.123456'", pa.time64("us"), Values((3_600_123_456,))),
        ("'00:00:01'", pa.time32("s"), Values((1,))),
        ("TIME '00:00:00.000000001'", pa.time64("ns"), Values((0, 1, 1000), exact=False)),
        # Finer than the unit: truncated (DuckDB) or rounded (PostgreSQL) to microseconds.
        ("'00:00:00.0000015'", pa.time64("us"), Values((1, 2), exact=False)),
        ("TIME '01:00:00.123456789'", pa.time64("us"),
         Values((3_600_123_456, 3_600_123_457), exact=False)),
        ("'00:00:00.000000999'", pa.time32("ms"), Values((0,), exact=False)),
        ("'00:00:00.000000999'", pa.time32("s"), Values((0,), exact=False)),
        ("'00:00:00.999999999'", pa.time32("s"), Values((1,), exact=False)),  # rounded
        ("TIME '00:00:01.0000009'", pa.time32("s"), Values((1,), exact=False)),
        ("TIME '00:00:00.0000015'", pa.time64("ns"), Values((1000, 1500, 2000), exact=False)),
        # No reading is a whole unit: nothing can match (DuckDB agrees).
        ("TIME '00:00:01.5'", pa.time32("s"), NoMatch),
        ("'00:00:00.0054'", pa.time32("ms"), NoMatch),
        ("'00:00:00.005999'", pa.time32("ms"), NoMatch),
        ("'00:00:00.0000012'", pa.time32("ms"), NoMatch),
        # Not a time of day.
        ("'25:00:00'", pa.time64("us"), Unknown),
        ("TIMESTAMP '1970-01-01 00:00:00'", pa.time64("us"), Unknown),
    ],
)  # fmt: skip
def test_time_literals_probe_every_reading(lit, t, expected):
    assert_converted(lit, t, expected)


@pytest.mark.parametrize(
    "lit",
    ["1.0000000000000001", "1.00", "1", "'1.00'", "1e0", "12345678901234567890123456789012345.5"],
)
@pytest.mark.parametrize("t", [pa.decimal256(39, 2), pa.decimal256(50, 2), pa.decimal256(76, 0)])
def test_decimal_wider_than_38_digits_never_prunes(lit, t):
    got = conv(lit, t)
    assert isinstance(got, Unknown), got
    assert "DOUBLE" in got.reason


def test_decimal_of_38_digits_still_converts_exactly():
    t = pa.decimal256(38, 2)  # DuckDB reads it as DECIMAL(38,2), exactly
    assert conv("1.00", t) == Values((Decimal("1.00"),))
    assert isinstance(conv("1.0000000000000001", t), NoMatch)
    assert convert(Literal("null", None), pa.decimal256(50, 2)) == NoMatch(
        "a comparison with NULL is never true (use IS NULL)"
    )
