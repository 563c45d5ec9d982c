"""Dates written in the hybrid Julian/Gregorian calendar, read as Spark reads them.

ORC Java (unless told ``orc.proleptic.gregorian``) and Spark 2 (Parquet files marked
``org.apache.spark.legacyDateTime``) store a date before the Gregorian cutover
(1582-10-15) as its day count in the *Julian* calendar. pyarrow returns that count as it
is, a proleptic Gregorian day: Spark's ``DATE '0001-01-01'`` comes back as 0000-12-30.
Spark rebases it, keeping the year, month and day: a Julian date that the Gregorian
calendar does not have (1500-02-29) becomes the day after the month's last
(1500-03-01), as Spark's ``RebaseDateTime.rebaseJulianToGregorianDays`` does.

Days count from 1970-01-01; the formulas are the standard civil-calendar conversions
through the Julian day number, in integers, vectorized.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bloomskip.errors import UnsupportedFileError
from bloomskip.formats.base import earliest_day

#: 1582-10-15, the first Gregorian day: days before it are Julian in a hybrid file.
CUTOVER_DAY = -141_427
#: The Julian day number of 1970-01-01.
_EPOCH_JDN = 2_440_588


def julian_to_gregorian_days(days: np.ndarray) -> np.ndarray:
    """``days`` (int32 or int64) with those before the cutover read as Julian calendar
    dates and counted again in the proleptic Gregorian calendar (same year, month, day)."""
    d = days.astype(np.int64)
    early = d < CUTOVER_DAY
    if not early.any():
        return days
    c = d[early] + _EPOCH_JDN + 32_082  # Julian calendar from the day number
    b = (4 * c + 3) // 1461
    e = c - (1461 * b) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = b - 4800 + m // 10
    y = year - (month <= 2)  # the proleptic Gregorian day of (year, month, 1)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5
    first = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
    out = d.copy()
    out[early] = first + day - 1
    return out.astype(days.dtype)


def rebase_hybrid(
    table: pa.Table, label: str, *, dates: bool = True, timestamps: bool = False
) -> pa.Table:
    """``table``, read from a file in the hybrid calendar, as Spark reads it: its
    top-level dates before the cutover rebased (with ``dates``). ``timestamps``: the
    file's timestamps are hybrid too (a Spark 2 Parquet file), and one before the cutover is an
    :class:`~bloomskip.errors.UnsupportedFileError` - Spark rebases those in a time
    zone, which bloomskip does not reproduce."""
    for i, (name, col) in enumerate(zip(table.column_names, table.columns, strict=True)):
        if dates and pa.types.is_date32(col.type):
            first = earliest_day(col)
            if first is None or first >= CUTOVER_DAY:
                continue
            ints = col.cast(pa.int32()).combine_chunks()
            days = ints.fill_null(0).to_numpy(zero_copy_only=False)
            nulls = ints.is_null().to_numpy(zero_copy_only=False)
            rebased = pa.array(julian_to_gregorian_days(days), pa.int32(), mask=nulls)
            table = table.set_column(i, table.field(i), rebased.cast(pa.date32()))
        elif timestamps and pa.types.is_timestamp(col.type):
            first = earliest_day(col)
            if first is not None and first < CUTOVER_DAY:
                raise UnsupportedFileError(
                    f"{label}: column {name} holds timestamps before 1582-10-15 in Spark's "
                    "legacy calendar, which bloomskip cannot read as Spark does; read this "
                    "file with Spark's own reader"
                )
    return table


__all__ = ["CUTOVER_DAY", "julian_to_gregorian_days", "rebase_hybrid"]
