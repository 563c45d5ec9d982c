"""SQL literals -> the exact values a column of a given Arrow type could hold.

:func:`convert` answers, for one literal and one column type, which column values the
literal can equal:

* :class:`Values` - the candidates, as Python values of the column's *logical* type
  (``int`` for integers, ``Decimal`` for decimals, ``float`` for floats, ``str``,
  ``bytes``, ``datetime.date``, and ``int`` counts of the column's unit for times and
  timestamps). More than one candidate when equality is not one bit pattern: a zero
  float probes ``+0.0`` and ``-0.0``; a literal that is not a FLOAT exactly probes the
  two FLOAT neighbours around it (engines differ in how they round). Likewise wherever
  engines read a literal differently, every reading is a candidate (and ``exact`` is
  False): ``1e3`` and numbers of 39+ digits are a DOUBLE in DuckDB and Spark; text cast
  to a DECIMAL, DATE or TIMESTAMP column rounds to it; digits finer than microseconds
  in a TIMESTAMP or TIME literal are truncated (DuckDB) or rounded (PostgreSQL), and
  DuckDB compares s, ms and us TIME columns as TIME (us); a TIMESTAMP literal's offset is
  ignored by PostgreSQL and DuckDB; DuckDB reads ``\\xNN`` escapes in text cast to BLOB.
* :class:`NoMatch` - no value of the type can equal it (``int8 = 300``,
  ``DECIMAL(5,2) = 1.234``, ``= NULL``, a 17-byte value for a 16-byte column). Rows
  cannot match, so pruning may drop them.
* :class:`Unknown` - bloomskip cannot tell (``NaN``, a string literal for an integer
  column that engines cast differently, a time zone on a wall-clock timestamp, any
  literal for a DECIMAL wider than 38 digits, which DuckDB reads as DOUBLE). Rows may
  match.

Timestamp literals are read as UTC for instant columns (``tz`` set, Parquet
``isAdjustedToUTC``) and as wall-clock time for local ones - the same number either way;
a literal with an explicit offset is converted to UTC for instant columns (or, as a
TIMESTAMP, taken as wall-clock time too) and is Unknown for wall-clock ones.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa

from bloomskip.expr.expressions import Literal

_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = dt.date(1970, 1, 1)
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?",
    re.IGNORECASE,
)
_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?")


@dataclass(frozen=True)
class Values:
    """The column values the literal equals (one or a few bit patterns).

    ``exact`` is False when the values are what the literal *may* equal, depending on
    how an engine reads it (an approximate number, text cast with rounding, digits
    finer than microseconds...): good to rule ``=`` out when none is present, but never
    proof that a value equals the literal, so ``!=`` must not be decided by them.
    """

    values: tuple[Any, ...]
    exact: bool = True


@dataclass(frozen=True)
class NoMatch:
    """No value of the column's type equals the literal."""

    reason: str


@dataclass(frozen=True)
class Unknown:
    """bloomskip cannot decide; rows may match."""

    reason: str


Converted = Values | NoMatch | Unknown


def convert(
    lit: Literal, t: pa.DataType | None, zone: str | None = None, *, any_clock: bool = False
) -> Converted:
    """What values of Arrow type ``t`` the literal can equal. ``zone``: the time zone a
    date or timestamp without an offset names a wall clock of, against a column of
    instants (Spark's session time zone); None: UTC, and this machine's zone when that
    is another (DuckDB and Spark sessions default to it: a literal in doubt probes both).
    ``any_clock``: with a ``zone``, the column (timestamps without a zone) holds wall
    clocks Spark reads as instants in its JVM's default time zone, which may be any
    (ORC's TIMESTAMP): the instant's wall clock at every offset is probed."""
    if lit.kind == "null":
        return NoMatch("a comparison with NULL is never true (use IS NULL)")
    if t is None:
        return Unknown("the column's type has no literal form")
    if isinstance(t, pa.UuidType):
        return _uuid(lit)
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    try:
        if zone is not None and pa.types.is_timestamp(t):
            if t.tz is not None:
                return _timestamp(lit, t, zone)
            # A column without a zone is a wall clock to Parquet's readers (Spark's
            # TIMESTAMP_NTZ), but Spark reads an ORC TIMESTAMP as an instant (its wall
            # clock taken in the JVM's default time zone, UTC on most clusters).
            instant = _timestamp(lit, pa.timestamp(t.unit, "UTC"), zone)
            if any_clock:
                instant = _at_every_offset(instant, t.unit)
            return _either(_timestamp(lit, t, zone), instant)
        if pa.types.is_date(t):
            return _date(lit, zone)
        return _convert(lit, t)
    except (ValueError, OverflowError, InvalidOperation, ArithmeticError) as e:
        return Unknown(f"cannot convert {lit} to {t}: {e}")


def _convert(lit: Literal, t: pa.DataType) -> Converted:
    k, v = lit.kind, lit.value
    if pa.types.is_boolean(t):
        return Values((v,)) if k == "boolean" else Unknown(f"{lit} is not a boolean")
    if pa.types.is_integer(t):
        return _integer(lit, t)
    if pa.types.is_floating(t):
        return _floating(lit, t)
    if pa.types.is_decimal(t):
        return _decimal(lit, t)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        if k == "string":
            return Values((v,))
        if k == "binary":
            # DuckDB compares them as BLOB, casting the column's text with its \xNN
            # escapes read: str_col = X'78' matches 'x' and the text '\x78' alike.
            return Unknown(f"engines compare a string column with {lit} differently")
        return Unknown(f"engines cast a {k} literal and a string column differently")
    if (
        pa.types.is_fixed_size_binary(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or (pa.types.is_binary_view(t))
    ):
        if k not in ("binary", "string"):
            return Unknown(f"a {k} literal is not comparable with binary")
        data = v if k == "binary" else v.encode("utf-8")
        candidates = [data]
        if k == "string" and "\\" in v:
            # Cast to BLOB, DuckDB reads \xNN escapes in the text ('\xff' is one byte);
            # other readers take the text's UTF-8 bytes. Either may be meant.
            escaped = _blob_escapes(v)
            if escaped is None:
                return Unknown(f"engines read the backslashes of {lit} differently")
            candidates.append(escaped)
        if pa.types.is_fixed_size_binary(t):
            candidates = [c for c in candidates if len(c) == t.byte_width]
            if not candidates:
                return NoMatch(f"{lit} does not have {t.byte_width} bytes, as the column's values")
        return Values(tuple(candidates), exact=candidates == [data])
    if pa.types.is_date(t):
        return _date(lit)
    if pa.types.is_timestamp(t):
        return _timestamp(lit, t)
    if pa.types.is_time(t):
        return _time(lit, t)
    return Unknown(f"literals for {t} columns are not supported")


_BLOB_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


def _blob_escapes(text: str) -> bytes | None:
    """The bytes DuckDB reads from text cast to BLOB (``\\xNN`` escapes, other characters
    as UTF-8), or None for a backslash that is not such an escape."""
    parts = _BLOB_ESCAPE.split(text)
    out = bytearray()
    for i, part in enumerate(parts):
        if i % 2:
            out.append(int(part, 16))
        elif "\\" in part:
            return None
        else:
            out += part.encode("utf-8")
    return bytes(out)


# -------------------------------------------------------------------------- numbers


def _fraction(value: int | Decimal) -> Fraction:
    """``value`` as an exact rational, but a Decimal beyond 10**+-400 clamped there:
    Fraction(Decimal('1e100000000')) takes minutes, and no column value (doubles reach
    1.8e308 and 4.9e-324, decimals 76 digits) tells 1e400 from anything larger, nor
    1e-400 from anything smaller but zero - exactly or as a DOUBLE (inf, 0.0)."""
    if isinstance(value, Decimal) and value.is_finite() and value:
        sign = -1 if value.is_signed() else 1
        if value.adjusted() > 400:
            return Fraction(sign * 10**400)
        if value.adjusted() < -400:
            return Fraction(sign, 10**400)
    return Fraction(value)


def _exact_number(lit: Literal) -> Fraction | None:
    """The literal as an exact rational, or None if it is not a number."""
    if lit.kind == "number":
        return _fraction(lit.value)
    if lit.kind == "string":
        text = lit.value.strip()
        if re.fullmatch(r"[+-]?\d+", text):
            return Fraction(int(text))
    return None


def _integer(lit: Literal, t: pa.DataType) -> Converted:
    x = _exact_number(lit)
    if x is None:
        return Unknown(f"{lit} is not an integer literal")
    info = np.iinfo(t.to_pandas_dtype())
    if lit.approximate:
        return _approximate(lit, x, t, 0, int(info.min), int(info.max))
    if x.denominator != 1:
        return NoMatch(f"{lit} is not a whole number, so no {t} equals it")
    if not int(info.min) <= x.numerator <= int(info.max):
        return NoMatch(f"{lit} is outside the range of {t}")
    return Values((x.numerator,))


#: Most values an approximate literal may equal before bloomskip gives up (Unknown).
MAX_APPROXIMATE_CANDIDATES = 1024


def _approximate(
    lit: Literal, x: Fraction, t: pa.DataType, scale: int, lo: int, hi: int
) -> Converted:
    """An approximate literal (``1e3``, 39+ digits) against an integer or decimal column.

    Read exactly (PostgreSQL), it equals ``x``; read as a DOUBLE (DuckDB, Spark), the
    column is compared as DOUBLE too, so it equals every value whose double is
    ``float(x)``: ``int_col = 9007199254740993e0`` matches 9007199254740992, and
    ``dec_col = 1e-400`` matches 0. The candidates are the unscaled values in
    [lo, hi] within one ulp of ``float(x)`` (a ulp, not half of one, in case an engine
    converts the column value to double inexactly), plus ``x`` itself.
    """
    try:
        d = float(x)
    except OverflowError:
        d = math.inf
    found: set[int] = set()
    if math.isfinite(d):
        ulp = Fraction(math.ulp(d))
        first = math.ceil((Fraction(d) - ulp) * 10**scale)
        last = math.floor((Fraction(d) + ulp) * 10**scale)
        first, last = max(first, lo), min(last, hi)
        if last - first >= MAX_APPROXIMATE_CANDIDATES:
            return Unknown(f"{lit} may be read as a DOUBLE, which too many {t} values equal")
        found.update(range(first, last + 1))
    exact = x * 10**scale
    if exact.denominator == 1 and lo <= exact.numerator <= hi:
        found.add(exact.numerator)
    if not found:
        return NoMatch(f"no {t} equals {lit}, read exactly or as a DOUBLE")
    certain = found == {exact}  # both readings give this one value
    if pa.types.is_decimal(t):
        return Values(tuple(_scaled(v, scale) for v in sorted(found)), certain)
    return Values(tuple(sorted(found)), certain)


def _floating(lit: Literal, t: pa.DataType) -> Converted:
    if lit.kind == "string" and lit.value.strip().lower() in ("nan", "+nan", "-nan"):
        return Unknown("NaN never prunes (NaN equality differs between engines)")
    if lit.kind == "string" and lit.value.strip().lower() in ("inf", "+inf", "infinity", "-inf"):
        return Values((float(lit.value),))
    x = _exact_number(lit)
    if x is None:
        return Unknown(f"{lit} is not a number")
    if pa.types.is_float16(t):
        return Unknown("FLOAT16 literals are not supported")
    if x == 0:
        return Values((0.0, -0.0))
    single = pa.types.is_float32(t)
    out: dict[tuple[float, float], float] = {}  # keyed by value and sign: 0.0 == -0.0
    for candidate in _neighbours(x, single):
        # A literal that rounds to zero equals -0.0 as well (SQL: -0.0 = 0.0), and the
        # filter holds their bits apart: DuckDB's double_col = 1e-400 matches both.
        for c in (0.0, -0.0) if candidate == 0 else (candidate,):
            out.setdefault((c, math.copysign(1.0, c)), c)
    return Values(tuple(out.values()), exact=len(out) == 1)


def _neighbours(x: Fraction, single: bool) -> list[float]:
    """The float(s) of the column's width nearest to ``x``: one if exact, else the two
    around it (so any rounding an engine applies to the literal is covered)."""
    try:
        d = float(x)  # correctly rounded to double
    except OverflowError:
        d = math.inf if x > 0 else -math.inf  # (copysign(inf, x) would overflow again)
    if not single:
        if math.isinf(d) or Fraction(d) == x:
            return [d]
        other = math.nextafter(d, math.inf if Fraction(d) < x else -math.inf)
        return [d, other]
    with np.errstate(over="ignore"):
        f = np.float32(d)  # may overflow to inf: that is what a cast does
    if not np.isfinite(f):
        big = float(np.finfo(np.float32).max)
        return [math.copysign(big, d), math.copysign(math.inf, d)]
    if Fraction(float(f)) == x:
        return [float(f)]
    toward = np.float32(np.inf if Fraction(float(f)) < x else -np.inf)
    with np.errstate(over="ignore"):  # FLOAT's largest value steps up to inf
        return [float(f), float(np.nextafter(f, toward))]


#: Decimal arithmetic that never rounds. The default context keeps 28 digits: a
#: DECIMAL(38, s) literal rounded to 28 would be hashed as another value and pruned.
_EXACT = decimal.Context(prec=100)


def _scaled(unscaled: int, scale: int) -> Decimal:
    """``unscaled * 10**-scale`` exactly, at any precision up to DECIMAL(76)."""
    return Decimal(unscaled).scaleb(-scale, _EXACT)


def _decimal(lit: Literal, t: pa.DataType) -> Converted:
    if t.precision > 38:
        # DuckDB has no DECIMAL beyond 38 digits and reads such a Parquet column as
        # DOUBLE (with more than one rounding on the way): d = 1.0000000000000001 matches
        # 1.00, and distinct values that round to one double all match one literal.
        return Unknown(f"DuckDB reads DECIMAL wider than 38 digits ({t}) as DOUBLE")
    x = _exact_number(lit)
    if x is None and lit.kind == "string":
        try:
            x = _fraction(Decimal(lit.value.strip()))
        except (InvalidOperation, ValueError):
            x = None
    if x is None:
        return Unknown(f"{lit} is not a number")
    top = 10**t.precision - 1
    if lit.approximate:
        return _approximate(lit, x, t, t.scale, -top, top)
    unscaled = x * 10**t.scale
    if unscaled.denominator != 1:
        if lit.kind == "string":
            # Engines cast a string literal to the column's type, and the cast rounds
            # (DuckDB: dec_col = '1.234' matches 1.23 in DECIMAL(5,2)); rounding modes
            # differ, so both neighbours at the column's scale may match.
            below = math.floor(unscaled)
            near = [v for v in (below, below + 1) if abs(v) <= top]
            if near:
                return Values(tuple(_scaled(v, t.scale) for v in near), exact=False)
            return NoMatch(f"{lit} is outside the range of {t}")
        return NoMatch(f"{lit} has more than {t.scale} decimal places, so no {t} equals it")
    if abs(unscaled.numerator) > top:
        return NoMatch(f"{lit} is outside the range of {t}")
    return Values((_scaled(unscaled.numerator, t.scale),))


# ---------------------------------------------------------------- dates and times


def _parse_timestamp(text: str) -> tuple[dt.date, int, int | None] | None:
    """(date, nanoseconds since midnight, UTC offset in seconds or None)."""
    m = _TIMESTAMP.fullmatch(text.strip())
    if m is None:
        return None
    year, month, day, hh, mm, ss, frac, zone = m.groups()
    date = dt.date(int(year), int(month), int(day))
    nanos = 0
    if hh is not None:
        h, mi, s = int(hh), int(mm), int(ss or 0)
        if h > 23 or mi > 59 or s > 59:
            raise ValueError(f"invalid time of day in {text!r}")
        nanos = ((h * 60 + mi) * 60 + s) * 10**9 + int((frac or "").ljust(9, "0"))
    offset = None
    if zone is not None:
        z = zone.upper()
        if z in ("Z", "UTC"):
            offset = 0
        else:
            sign = -1 if z[0] == "-" else 1
            digits = z[1:].replace(":", "")
            offset = sign * (int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60)
    return date, nanos, offset


def _date_and_time(lit: Literal, what: str) -> tuple[dt.date, int, int | None] | Unknown:
    """A DATE, TIMESTAMP or text literal as :func:`_parse_timestamp` reads it, or Unknown:
    the literal is not a ``what`` (the column's type)."""
    parsed = None
    if lit.kind in ("date", "string", "timestamp"):
        parsed = _parse_timestamp(lit.value)
    return Unknown(f"{lit} is not a {what}") if parsed is None else parsed


def _date(lit: Literal, zone: str | None = None) -> Converted:
    parsed = _date_and_time(lit, "date")
    if isinstance(parsed, Unknown):
        return parsed
    date, nanos, offset = parsed
    if offset is not None:
        return Unknown(f"{lit} has a time zone; a date column has none")
    if lit.kind == "timestamp" and nanos == 0:
        # Spark compares date_col = TIMESTAMP '2011-12-30 00:00:00' as date_col = the
        # literal's date in the session zone: Samoa skipped that day, so 2011-12-31.
        walls = _round_trips(date, 0, (date - _EPOCH).days * _DAY_NS, zone)
        if isinstance(walls, Unknown):
            return walls
        days = sorted({w // _DAY_NS for w in walls if w % _DAY_NS == 0})
        dates = tuple(_EPOCH + dt.timedelta(days=d) for d in days)
        return Values(dates, exact=dates == (date,))
    if nanos == 0 or lit.kind in ("date", "string"):
        # Text cast to DATE loses its time of day (PostgreSQL, DuckDB, Spark):
        # date_col = '2024-01-31 10:00' matches 2024-01-31, as DATE '2024-01-31 10:00' is.
        return Values((date,), exact=nanos == 0)
    # A TIMESTAMP equals a date only at midnight - possibly once engines keep only
    # microseconds of it: TIMESTAMP '2024-01-31 00:00:00.0000001' matches in DuckDB.
    days = sorted(i // _DAY_NS for i in _microsecond_readings(nanos) if i % _DAY_NS == 0)
    if days:
        return Values(tuple(date + dt.timedelta(days=d) for d in days), exact=False)
    if nanos < _DAY_NS // 8 and _midnight_moves(date, zone):
        # Spark compares a date as the first instant of its day in the session zone:
        # where a daylight-saving change skips midnight that is 01:00, say.
        return Unknown(f"{lit}: {date} may start after midnight (a daylight-saving change)")
    return NoMatch(f"{lit} is not midnight, so no date equals it")


def _midnight_moves(date: dt.date, zone: str | None) -> bool:
    """Whether midnight of ``date`` is in a daylight-saving change in ``zone`` (None: this
    machine's zone), or the zone is unknown: then the day may start later."""
    clock = dt.datetime.combine(date, dt.time())
    try:
        if zone is None:  # a naive datetime is a wall clock of the machine's zone
            a, b = (clock.replace(fold=f).astimezone(dt.UTC) for f in (0, 1))
            return a != b
        tz = time_zone(zone)
        if tz is None:
            return True
        return (
            clock.replace(tzinfo=tz, fold=0).utcoffset()
            != clock.replace(tzinfo=tz, fold=1).utcoffset()
        )
    except (OverflowError, OSError, ValueError):
        return True


_DAY_NS = 86_400 * 10**9


def _microsecond_readings(ns: int) -> set[int]:
    """The instants (ns) engines may read a literal as: exactly and, when it has digits
    finer than microseconds, at microsecond precision - DuckDB truncates the extra
    digits, PostgreSQL rounds them - so the microseconds below and above too."""
    if ns % 1000 == 0:
        return {ns}
    below = ns // 1000 * 1000
    return {ns, below, below + 1000}


def _timestamp(lit: Literal, t: pa.TimestampType, zone: str | None = None) -> Converted:
    parsed = _date_and_time(lit, "timestamp")
    if isinstance(parsed, Unknown):
        return parsed
    date, nanos, offset = parsed
    if lit.kind == "date":
        nanos, offset = 0, None  # DATE '2024-01-31 10:00' is that date's midnight
    if offset is not None and t.tz is None:
        return Unknown(f"{lit} has a time zone; the column holds wall-clock times")
    wall = (date - _EPOCH).days * _DAY_NS + nanos
    if offset is None and zone is not None and t.tz is not None:
        instants = _in_zone(date, nanos, wall, zone)
        if isinstance(instants, Unknown):
            return instants
    elif offset is None and t.tz is not None:
        # No zone given: UTC (bloomskip's rule), and this machine's zone, which DuckDB
        # and Spark sessions take by default - a literal in doubt probes both.
        local = _local_readings(date, nanos, wall)
        if local is None:
            return Unknown(f"{lit}: this machine's time zone cannot place it")
        instants = {wall} | local
    elif offset is None and lit.kind == "timestamp":
        # A column of wall clocks: Spark casts a TIMESTAMP literal to it through the session
        # zone, so one a daylight-saving change skips moves on (02:30 -> 03:30).
        walls = _round_trips(date, nanos, wall, zone)
        if isinstance(walls, Unknown):
            return walls
        instants = walls
    else:
        instants = {wall if offset is None else wall - offset * 10**9}
    if offset is not None and lit.kind == "timestamp":
        # PostgreSQL and DuckDB ignore the offset of a TIMESTAMP literal (a wall-clock
        # type): instant_col = TIMESTAMP '… 02:00:00+02:00' matches 02:00 UTC there.
        instants.add(wall)
    per_unit = 10**9 // _UNIT_PER_SECOND[t.unit]
    values: set[int] = set()
    readings = set().union(*map(_microsecond_readings, instants))
    for instant in readings:
        whole, rest = divmod(instant, per_unit)
        if not rest:
            values.add(whole)
        elif lit.kind == "string":
            # Text is cast to the column's unit, rounding ('… 00:00:00.0015' is 2 ms in
            # DuckDB): the two neighbouring values may match.
            values.update((whole, whole + 1))
    if not values:
        return NoMatch(f"{lit} is finer than the column's unit ({t.unit})")
    if not all(-(2**63) <= v < 2**63 for v in values):
        # Not NoMatch: an INT96 column (read as timestamp[ns]) holds years 1 to 9999,
        # far beyond int64 nanoseconds; bloomskip cannot hash such a literal, so it
        # may match.
        return Unknown(f"{lit} is outside the 64-bit range of {t}")
    certain = len(readings) == 1 and len(values) == 1 and next(iter(readings)) % per_unit == 0
    return Values(tuple(sorted(values)), exact=certain)


_FIXED_ZONE = re.compile(r"(?i:Z|(?:UTC|GMT|UT)?(?:([+-])(\d{1,2})(?::?(\d{2}))?)?)")


def time_zone(zone: str) -> dt.tzinfo | None:
    """The time zone named ``zone`` - an IANA name (``America/New_York``) or a fixed
    offset as Spark writes one (``+02:00``, ``UTC+2``, ``GMT-05:30``, ``Z``) - or None if
    bloomskip does not know it."""
    import zoneinfo

    fixed = _FIXED_ZONE.fullmatch(zone.strip())
    try:
        if fixed is not None:
            sign, hh, mm = fixed.groups()
            minutes = (int(hh or 0) * 60 + int(mm or 0)) * (-1 if sign == "-" else 1)
            return dt.timezone(dt.timedelta(minutes=minutes))
        return zoneinfo.ZoneInfo(zone.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return None


#: Every UTC offset time zones have used since 1973, in quarter hours: -12:00 to +14:00
#: (before, some had others: local mean time, Liberia's -0:44:30 until 1972).
_OFFSETS = range(-48, 57)
_QUARTER_HOURS_SINCE = 94_694_400  # 1973-01-01, in seconds


def _at_every_offset(c: Converted, unit: str) -> Converted:
    """The wall clocks of instants ``c`` (in ``unit``) at every UTC offset."""
    if not isinstance(c, Values):
        return c
    if any(v < _QUARTER_HOURS_SINCE * _UNIT_PER_SECOND[unit] for v in c.values):
        return Unknown("before 1973 a time zone's offset may be any, not quarter hours")
    quarter = 900 * _UNIT_PER_SECOND[unit]
    values = sorted({v + k * quarter for v in c.values for k in _OFFSETS})
    if not all(-(2**63) <= v < 2**63 for v in values):
        return Unknown("outside the 64-bit range at some time zone's offset")
    return Values(tuple(values), exact=False)


def _either(a: Converted, b: Converted) -> Converted:
    """What the literal equals under either of two readings."""
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return a if isinstance(a, Unknown) else b
    if isinstance(a, NoMatch) or isinstance(b, NoMatch):
        return b if isinstance(a, NoMatch) else a
    values = tuple(sorted(set(a.values) | set(b.values)))
    return Values(values, a.exact and b.exact and values == a.values)


def _in_zone(date: dt.date, nanos: int, wall: int, zone: str) -> set[int] | Unknown:
    """The instants (ns) the wall clock ``date`` + ``nanos`` names in ``zone``: one, or
    two around a daylight-saving change (a wall clock the change skips or repeats: Java,
    as Spark, moves a skipped one forward, and takes the earlier of a repeated one)."""
    tz = time_zone(zone)
    if tz is None:
        return Unknown(f"the session time zone {zone!r} is not one bloomskip knows")
    seconds = nanos // 10**9
    clock = dt.datetime.combine(date, dt.time()) + dt.timedelta(seconds=seconds)
    out = set()
    for fold in (0, 1):
        offset = clock.replace(tzinfo=tz, fold=fold).utcoffset()
        if offset is None:  # pragma: no cover - every tzinfo here answers
            return Unknown(f"no offset of {zone!r} at {clock}")
        out.add(wall - (offset // dt.timedelta(microseconds=1)) * 1000)
    return out


def _round_trips(date: dt.date, nanos: int, wall: int, zone: str | None) -> set[int] | Unknown:
    """The wall clocks Spark may equate with the wall clock ``date`` + ``nanos`` (ns since
    1970 on the wall: ``wall``) read as an instant in ``zone`` (None: this machine's
    zone), comparing a TIMESTAMP literal with a TIMESTAMP_NTZ or DATE column: itself;
    the literal cast to the column (a skipped wall clock moved on: 02:30 -> 03:30); and
    the column cast to the literal (02:30, skipped, is the instant of 03:30). That is,
    the literal's instants at each offset in force within a day of them (a superset)."""
    out = {wall}
    if zone is None:
        instants = _local_readings(date, nanos, wall)
        if instants is None:
            return Unknown(f"{date}: this machine's time zone cannot place it")
        tz: dt.tzinfo | None = None
    else:
        tz = time_zone(zone)
        got = _in_zone(date, nanos, wall, zone)
        if isinstance(got, Unknown):
            return got
        instants = got
    day = dt.timedelta(days=1)
    for instant in instants:
        try:
            at = dt.datetime.fromtimestamp(instant // 10**9, dt.UTC)
            for near in (at - day, at, at + day):
                local = near.astimezone(tz) if tz is not None else near.astimezone()
                offset = local.utcoffset()
                if offset is None:  # pragma: no cover - every tzinfo here answers
                    return Unknown(f"{date}: no offset of {zone!r}")
                out.add(instant + (offset // dt.timedelta(microseconds=1)) * 1000)
        except (OverflowError, OSError, ValueError):
            return Unknown(f"{date}: outside the years the time zone can place")
    return out


def _local_readings(date: dt.date, nanos: int, wall: int) -> set[int] | None:
    """The instants (ns) this machine's time zone makes of the wall clock ``date`` +
    ``nanos`` (both around a daylight-saving change); None if the platform cannot place
    it in a zone other than UTC."""
    import time

    if time.timezone == 0 and not time.daylight:  # the machine is on UTC
        return set()
    clock = dt.datetime.combine(date, dt.time()) + dt.timedelta(seconds=nanos // 10**9)
    out = set()
    for fold in (0, 1):
        try:  # a naive datetime is a wall clock of the machine's zone (TZ, /etc/localtime)
            utc = clock.replace(fold=fold).astimezone(dt.UTC).replace(tzinfo=None)
        except (OverflowError, OSError, ValueError):
            return None
        out.add(wall + (utc - clock) // dt.timedelta(microseconds=1) * 1000)
    return out


def whole_microseconds(c: Converted) -> Converted:
    """``c``, nanosecond values, for a column engines read at microseconds, flooring the
    nanoseconds below (DuckDB and Spark read INT96 so: a stored ``… .123456789`` equals
    ``TIMESTAMP '… .123456'`` there, and -1 ns equals ``'1969-12-31 23:59:59.999999'``):
    every value of each value's microsecond, and the value itself (pyarrow's reading)."""
    if not isinstance(c, Values):
        return c
    found = set(c.values)
    for v in c.values:
        first = v // 1000 * 1000
        found.update(range(max(first, -(2**63)), min(first + 1000, 2**63)))
    return Values(tuple(sorted(found)), exact=False)


def _time(lit: Literal, t: pa.DataType) -> Converted:
    if lit.kind not in ("time", "string"):
        return Unknown(f"{lit} is not a time of day")
    m = _TIME.fullmatch(lit.value.strip())
    if m is None:
        return Unknown(f"{lit} is not a time of day")
    hh, mm, ss, frac = m.groups()
    h, mi, s = int(hh), int(mm), int(ss or 0)
    if h > 23 or mi > 59 or s > 59:
        return Unknown(f"{lit} is not a valid time of day")
    nanos = ((h * 60 + mi) * 60 + s) * 10**9 + int((frac or "").ljust(9, "0"))
    per_unit = 10**9 // _UNIT_PER_SECOND[t.unit]
    # DuckDB reads TIME literals and text cast to TIME at microsecond precision
    # (truncating finer digits; PostgreSQL rounds them) and compares columns of s, ms
    # and us as TIME (us), ns columns as TIME_NS: tm = '00:00:00.000000999' matches 0 ms.
    # A reading that is not a whole unit equals no value (DuckDB does not round text to
    # the column's unit, as it does for TIMESTAMP_MS).
    readings = _microsecond_readings(nanos)
    values = sorted(r // per_unit for r in readings if r % per_unit == 0)
    if not values:
        return NoMatch(
            f"{lit} is finer than the column's unit ({t.unit}), "
            "read exactly or at microsecond precision"
        )
    return Values(tuple(values), exact=readings == {nanos})


def _uuid(lit: Literal) -> Converted:
    if lit.kind == "binary":
        if len(lit.value) != 16:
            return NoMatch(f"{lit} has {len(lit.value)} bytes, a UUID has 16")
        return Values((lit.value,))
    if lit.kind != "string":
        return Unknown(f"{lit} is not a UUID")
    try:
        return Values((uuid.UUID(lit.value.strip()).bytes,))
    except ValueError:
        return Unknown(f"{lit} is not a UUID string")


def to_arrow(values: tuple[Any, ...], t: pa.DataType) -> pa.Array:
    """Candidates from :class:`Values` as an Arrow array of the column's type."""
    if isinstance(t, pa.BaseExtensionType):
        storage = pa.array(list(values), type=t.storage_type)
        return pa.ExtensionArray.from_storage(t, storage)
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        width = pa.int32() if pa.types.is_time32(t) else pa.int64()
        return pa.array(list(values), type=width).view(t)
    return pa.array(list(values), type=t)
