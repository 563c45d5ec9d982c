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

from collections.abc import Collection

import numpy as np
import pyarrow as pa

from bloomskip.errors import UnsupportedFileError
from bloomskip.formats.base import earliest_day

#: 1582-10-15, the first Gregorian day: days before it are Julian in a hybrid file.
CUTOVER_DAY = -141_427
#: 1900-01-02: Spark rebases a legacy file's timestamps before 1900 in its time zone
#: (local mean time offsets of the zone's history), a day of margin for the zone.
TIMESTAMP_REBASE_DAY = -25_566
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
    table: pa.Table, label: str, *, dates: bool = True, instants: Collection[str] = ()
) -> pa.Table:
    """``table``, read from a file in the hybrid calendar, as Spark reads it: its
    top-level dates before the cutover rebased (with ``dates``). ``instants``: timestamp
    columns Spark rebases too (a Spark 2 Parquet file's, not TIMESTAMP_NTZ), in a time
    zone and up to 1900, which bloomskip does not reproduce: a value before 1900 there is
    an :class:`~bloomskip.errors.UnsupportedFileError`."""
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
        elif name in instants and pa.types.is_timestamp(col.type):
            first = earliest_day(col)
            if first is not None and first < TIMESTAMP_REBASE_DAY:
                raise UnsupportedFileError(
                    f"{label}: column {name} holds timestamps before 1900 in Spark's "
                    "legacy calendar, which bloomskip cannot read as Spark does; read this "
                    "file with Spark's own reader"
                )
    return table


def spark_rebased(schema: pa.Schema, int96: frozenset[str]) -> dict[str, int]:
    """The top-level columns of a Parquet file Spark wrote in its legacy calendar that
    Spark rebases when it reads them, with the day (since 1970) before which it does:
    dates before 1582-10-15 (``org.apache.spark.legacyDateTime``), timestamps of instants
    before 1900 (INT64 ones with it, INT96 ones with ``legacyINT96``; never
    TIMESTAMP_NTZ, which Spark reads as written)."""
    meta = schema.metadata or {}
    dates = b"org.apache.spark.legacyDateTime" in meta
    ints = b"org.apache.spark.legacyINT96" in meta
    out = {}
    for f in schema:
        if dates and pa.types.is_date32(f.type):
            out[f.name] = CUTOVER_DAY
        elif pa.types.is_timestamp(f.type) and (
            (ints and f.name in int96) or (dates and f.name not in int96 and f.type.tz)
        ):
            out[f.name] = TIMESTAMP_REBASE_DAY
    return out


__all__ = [
    "CUTOVER_DAY",
    "TIMESTAMP_REBASE_DAY",
    "julian_to_gregorian_days",
    "rebase_hybrid",
    "spark_rebased",
]
