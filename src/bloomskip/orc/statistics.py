"""What one ORC statistics entry says about a column: a range of comparison keys.

:func:`column_range` reads a ``ColumnStatistics`` (a row group's row index entry, or a
stripe's statistics) into a :class:`Range` (:func:`statistics_field` says which of its
sub-messages it reads): the value count, ``has_null``, and - when
:func:`~bloomskip.orc.trust.statistics_policy` trusts the writer - inclusive bounds of
the keys :func:`comparison_keys` makes of literals: integers and floats as numbers,
decimals as ``Decimal``, dates as days, timestamps as floored milliseconds widened by
:data:`TIMESTAMP_MARGIN_MS`, strings as UTF-8 bytes (ORC orders them byte-wise); booleans
give the count of ``true`` instead. Statistics that are absent, NaN or unreadable give no
bounds, with the reason. Message fields follow ``orc_proto.proto`` (apache/orc-format).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import numpy as np

from bloomskip.orc import proto
from bloomskip.orc.trust import CPP, statistics_policy
from bloomskip.orc.types import (
    BOOLEAN,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INTEGERS,
    STRING,
    TIMESTAMPS,
    VARCHAR,
)

if TYPE_CHECKING:
    from bloomskip.orc.file import OrcFile
    from bloomskip.orc.schema import OrcColumn

#: Milliseconds of margin around timestamp statistics (ORC Java's (-1 s, 0) quirk adds
#: 1000 ms, Arrow's truncation 1 ms).
TIMESTAMP_MARGIN_MS = 2000
_NS_PER_MS = 1_000_000
_EPOCH = dt.date(1970, 1, 1)
_EPOCH_DT = dt.datetime(1970, 1, 1)


@dataclass(frozen=True)
class Range:
    """What one statistics entry says about a column in a unit."""

    count: int | None = None  # non-null values
    has_null: bool | None = None
    lo: Any = None  # inclusive bounds of the comparison keys; None: unbounded
    hi: Any = None
    exact: bool = False  # lo/hi are values of the column (min = max proves equality)
    true_count: int | None = None  # BOOLEAN
    note: str = ""  # why there are no bounds
    unit: str = ""  # "ms" (timestamps, bounds widened), "days" (dates): how to show bounds

    def excludes(self, key: Any) -> bool:
        return (self.lo is not None and key < self.lo) or (self.hi is not None and key > self.hi)

    def show(self) -> str:
        def one(v: Any) -> str:
            if v is None:
                return "?"
            if isinstance(v, bytes):
                text = v[:24].decode("utf-8", "backslashreplace")
                return repr(text + ("..." if len(v) > 24 else ""))
            try:
                if self.unit == "ms":
                    return (_EPOCH_DT + dt.timedelta(milliseconds=v)).isoformat(sep=" ")
                if self.unit == "days":
                    return (_EPOCH + dt.timedelta(days=v)).isoformat()
            except OverflowError:
                pass
            return str(v)

        text = f"[{one(self.lo)}, {one(self.hi)}]"
        if self.unit == "ms":
            text += f" (min/max widened by {TIMESTAMP_MARGIN_MS // 1000} s)"
        return text


def excluded(ranges: list[Range], keys: list) -> np.ndarray:
    """Per range, whether its bounds rule out every key (none rules anything out when
    ``keys`` is empty): in numpy when keys and bounds are all integers (or all floats),
    else range by range."""
    n = len(ranges)
    if not keys:
        return np.zeros(n, np.bool_)
    los = [r.lo for r in ranges]
    his = [r.hi for r in ranges]
    for kind, dtype in ((int, np.int64), (float, np.float64)):
        if all(type(k) is kind for k in keys) and all(
            type(v) is kind for v in (*los, *his) if v is not None
        ):
            try:
                lo = np.array([0 if v is None else v for v in los], dtype=dtype)
                hi = np.array([0 if v is None else v for v in his], dtype=dtype)
                key_array = np.array(keys, dtype=dtype)
            except OverflowError:
                break
            has_lo = np.array([v is not None for v in los], np.bool_)
            has_hi = np.array([v is not None for v in his], np.bool_)
            out = has_lo | has_hi
            for key in key_array:
                out &= (has_lo & (key < lo)) | (has_hi & (key > hi))
            return out
    return np.array([all(r.excludes(k) for k in keys) for r in ranges], np.bool_)


def column_range(
    orc: OrcFile, col: OrcColumn, cs: proto.ColumnStatistics | None, why: str
) -> Range:
    if cs is None:
        return Range(note=why)
    field = statistics_field(col)
    sub = None if field is None else getattr(cs, field)
    return entry_range(orc, col, cs.number_of_values, cs.has_null, sub)


def entry_range(
    orc: OrcFile, col: OrcColumn, count: int | None, has_null: bool | None, sub: Any
) -> Range:
    """:func:`column_range` from a statistics entry's value count, ``has_null`` and its
    sub-message :func:`statistics_field` names (None when absent)."""
    base = {"count": count, "has_null": has_null}
    if count == 0:
        return Range(**base, note="no values")
    policy = statistics_policy(orc, col)
    if policy:
        return Range(**base, note=policy)
    k = col.kind
    try:
        if col.ntz or k in INTEGERS:
            s = sub
            if s is None or s.minimum is None or s.maximum is None:
                return Range(**base, note="no integer min/max")
            return Range(**base, lo=s.minimum, hi=s.maximum, exact=True)
        if k in (FLOAT, DOUBLE):
            s = sub
            if s is None or s.minimum is None or s.maximum is None:
                return Range(**base, note="no double min/max")
            if any(v is not None and math.isnan(v) for v in (s.minimum, s.maximum, s.sum)):
                return Range(**base, note="statistics hold NaN")
            lo, hi = s.minimum, s.maximum
            if k == FLOAT:
                # The stored floats are the bounds rounded to float32 (ORC C++ records the
                # doubles it was given; rounding is monotonic).
                with np.errstate(over="ignore"):
                    lo, hi = float(np.float32(lo)), float(np.float32(hi))
            return Range(**base, lo=lo, hi=hi)
        if k == DECIMAL:
            s = sub
            if s is None or s.minimum is None or s.maximum is None:
                return Range(**base, note="no decimal min/max")
            lo, hi = Decimal(s.minimum), Decimal(s.maximum)
            if not (lo.is_finite() and hi.is_finite()):
                return Range(**base, note="decimal statistics are not numbers")
            return Range(**base, lo=lo, hi=hi, exact=True)
        if k == DATE:
            s = sub
            if s is None or s.minimum is None or s.maximum is None:
                return Range(**base, note="no date min/max")
            return Range(**base, lo=s.minimum, hi=s.maximum, exact=True, unit="days")
        if k in (STRING, VARCHAR):
            return _string_range(orc, sub, base)
        if k in TIMESTAMPS:
            s = sub
            if s is None or s.minimum_utc is None or s.maximum_utc is None:
                return Range(**base, note="no UTC timestamp min/max")
            m = TIMESTAMP_MARGIN_MS
            return Range(**base, lo=s.minimum_utc - m, hi=s.maximum_utc + m, unit="ms")
        if k == BOOLEAN:
            s = sub
            if s is None or len(s.count) != 1 or count is None:
                return Range(**base, note="no true count")
            return Range(**base, true_count=s.count[0])
    except (InvalidOperation, ValueError, TypeError, OverflowError) as e:
        return Range(**base, note=f"unreadable statistics: {e}")
    return Range(**base, note=f"no min/max for ORC {col.kind_name}")


def statistics_field(col: OrcColumn) -> str | None:
    """The ColumnStatistics sub-message :func:`column_range` reads for ``col`` (None:
    only the value count and ``has_null``)."""
    k = col.kind
    if col.ntz or k in INTEGERS:
        return "int_statistics"
    if k in (FLOAT, DOUBLE):
        return "double_statistics"
    if k == DECIMAL:
        return "decimal_statistics"
    if k == DATE:
        return "date_statistics"
    if k in (STRING, VARCHAR):
        return "string_statistics"
    if k in TIMESTAMPS:
        return "timestamp_statistics"
    if k == BOOLEAN:
        return "bucket_statistics"
    return None


def _string_range(orc: OrcFile, s: proto.StringStatistics | None, base: dict) -> Range:
    if s is None:
        return Range(**base, note="no string min/max")
    lo = s.minimum if s.minimum is not None else s.lower_bound
    hi = s.maximum if s.maximum is not None else s.upper_bound
    if lo is None and hi is None:
        return Range(**base, note="no string min/max")
    if orc.writer.writer == CPP and any(b is not None and b"\x00" in b for b in (lo, hi)):
        # ORC C++ compares strings with strncmp: a NUL byte ends the comparison, so
        # bounds holding one may not bound the values.
        return Range(**base, note="ORC C++ string bounds with NUL bytes are unreliable")
    exact = s.minimum is not None and s.maximum is not None
    return Range(**base, lo=lo, hi=hi, exact=exact)


def comparison_keys(info: OrcColumn, values: tuple) -> list:
    """The candidates as statistics compare them (empty: not comparable)."""
    k = info.kind
    out: list = []
    for v in values:
        if info.ntz or k in INTEGERS or k in (FLOAT, DOUBLE):
            out.append(v)
        elif k == DECIMAL:
            out.append(Decimal(v))
        elif k == DATE:
            out.append((v - _EPOCH).days)
        elif k in TIMESTAMPS:
            out.append(v // _NS_PER_MS)  # the wall clock (or instant), floored ms
        elif k == STRING:
            out.append(v.encode("utf-8"))
        elif k == VARCHAR:
            out.append(v.encode("utf-8"))
            n = info.orc_type.max_length if info.orc_type else None
            if n is not None and len(v) > n:
                out.append(v[:n].encode("utf-8"))  # the value a writer would have stored
        else:
            return []
    return out
