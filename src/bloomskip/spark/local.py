"""A small lookup answered on the driver: the candidate zones' rows, narrowed to the rows
whose hashes match, handed to Spark as a local relation.

A point lookup through the index leaves a few zones of a few files. Spark reading those
files costs a job (scheduling, tasks, opening every file whole) of 0.1-0.3 s, whatever
the few rows; reading the zones' row groups on the driver with pyarrow costs a few ms
each. So when the candidates hold at most ``local_rows`` rows, :func:`read_local` reads
them here, keeps each row the index's rule cannot rule out
(:class:`~bloomskip.index.rows.RowFilter`: its value hashes like a literal, or it is
null for ``IS NULL``...), and gives Spark those rows as an Arrow table. Spark holds
them as a ``LocalRelation``, applies the predicate itself (so the rows and their
semantics are Spark's), and collects with no job at all.

Only what reads exactly as Spark's own file readers would is read here; anything else
goes to Spark as before (the answer says why): reader options, columns of nested or
other types, ORC timestamps (ORC readers disagree on them around zone changes) and
CHAR(n) columns (Spark compares them padded), a
predicate on file metadata (``_metadata``, ``input_file_name()``), a file missing a
column (a partition column, or schema evolution), nanosecond timestamps (INT96 is read
at microseconds, floored, as Spark reads it), dates and timestamps before 1900
(Spark's calendar rebasing), a candidate whose row count the index does not hold (new or
rewritten since indexing), a file that changes while it is read, any read error.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import BloomskipError, SourceChangedError
from bloomskip.expr.expressions import (
    Connective,
    Expression,
    LiteralPredicate,
    Not,
    Unsupported,
)
from bloomskip.index.query import ZoneIndex
from bloomskip.index.results import FileCandidate, QueryResult
from bloomskip.index.rows import RowFilter
from bloomskip.sources.base import same_identity
from bloomskip.sources.files import hive_pairs
from bloomskip.spark.readfile import conform, file_identity, read_tables, spark_arrow_schema
from bloomskip.spark.session import session_zone

#: Candidate rows up to which a lookup reads them on the driver (``local_rows``).
LOCAL_ROWS = 1_000_000

_METADATA = re.compile(r"_metadata|input_file_", re.IGNORECASE)
_THREADS = 4
#: Spark rebases (or refuses) dates and timestamps before these in some files.
_OLDEST_DAY = -25_567  # 1900-01-01, in days since 1970-01-01
_OLDEST_MICROS = _OLDEST_DAY * 86_400 * 1_000_000


@dataclass
class LocalRead:
    """Rows read on the driver: a DataFrame, and what it took."""

    df: Any  # pyspark.sql.DataFrame: the rows that may match, ``where`` not applied
    rows_read: int
    rows_kept: int
    notes: list[str]  # what the row filter could not use (rows kept for it)


#: A TIMESTAMP (an instant) in a predicate: a literal, a cast, a function making one. Met
#: with a DATE or TIMESTAMP_NTZ column, Spark casts the column to it in a local relation,
#: but unwraps the cast onto the literal in a file scan (``UnwrapCastInBinaryComparison``):
#: over a daylight-saving gap the two differ (``ntz = TIMESTAMP '2024-03-10 02:30:00'``
#: in New York: the scan matches 03:30, a local relation 02:30 too).
_INSTANTS = re.compile(r"(?i)timestamp(?!_ntz)|\bnow\s*\(")


def _instant_meets(expr: Expression, walls: set[str]) -> str | None:
    """The DATE or TIMESTAMP_NTZ column (case-folded names ``walls``) that ``expr``
    compares with a TIMESTAMP (:data:`_INSTANTS`), or None."""
    if isinstance(expr, Connective):
        return _instant_meets(expr.left, walls) or _instant_meets(expr.right, walls)
    if isinstance(expr, Not):
        return _instant_meets(expr.child, walls)
    if isinstance(expr, LiteralPredicate):
        timestamp = any(lit.kind == "timestamp" for lit in expr.literals)
        return expr.term.name if timestamp and expr.term.name.casefold() in walls else None
    if isinstance(expr, Unsupported) and _INSTANTS.search(expr.text):
        return next((c for c in expr.columns if c.casefold() in walls), None)
    return None


def why_not_local(
    result: QueryResult, index: ZoneIndex, schema: Any, fmt: str, options: dict[str, str],
    where: str, local_rows: int, expr: Expression,
) -> str | None:  # fmt: skip
    """Why this lookup is not read on the driver, or None when it may be (``expr``: the
    predicate ``where`` parsed, as the index took it)."""
    from pyspark.sql import types as st

    if local_rows <= 0:
        return "local reads are off (local_rows=0)"
    if options:
        return "reader options are Spark's"
    if fmt not in ("parquet", "orc"):
        return f"{fmt} files are read by Spark"
    if _METADATA.search(where):
        return "the predicate reads file metadata"
    rows = [f.rows for f in result.files]
    if any(n is None for n in rows):
        return "a candidate's row count is not in the index (new since indexing)"
    total = sum(n for n in rows if n is not None)
    if total > local_rows:
        return f"{total:,} candidate rows > local_rows {local_rows:,}"
    flat = (
        st.StringType, st.BinaryType, st.BooleanType, st.ByteType, st.ShortType,
        st.IntegerType, st.LongType, st.FloatType, st.DoubleType, st.DecimalType,
        st.DateType, st.TimestampType, st.TimestampNTZType,
    )  # fmt: skip
    times = (st.TimestampType, st.TimestampNTZType)
    ntz = st.TimestampNTZType
    in_files = {f.name.lower() for f in index.manifest.schema}
    for f in schema.fields:
        if f.name.lower() not in in_files:
            return f"column {f.name} is not in the files (a partition column?)"
        if not isinstance(f.dataType, flat) or (fmt == "orc" and isinstance(f.dataType, times)):
            return f"column {f.name} ({f.dataType.simpleString()}) is read by Spark"
        declared = (f.metadata or {}).get("__CHAR_VARCHAR_TYPE_STRING", "")
        if str(declared).lower().startswith("char"):  # Spark pads what it compares
            return f"column {f.name} ({declared}) is read by Spark"
    walls = {f.name.casefold() for f in schema.fields if isinstance(f.dataType, (st.DateType, ntz))}
    met = None  # (a TIMESTAMP_NTZ literal is a "timestamp" too once parsed: the text says)
    if walls and _INSTANTS.search(where):
        met = _instant_meets(expr, walls)
    if met is not None:
        return (
            f"a TIMESTAMP meets a column of wall clocks ({met}): over a daylight-saving "
            "change Spark compares them one way in a file scan, another in a local relation"
        )
    names = {f.name.casefold() for f in schema.fields}
    for c in result.files:  # Spark gives such a column its directory's value
        for key, _ in hive_pairs(c.path):
            if key.casefold() in names:
                return f"a partition directory names column {key}"
    return None


def read_local(
    spark, index: ZoneIndex, result: QueryResult, where: Any, schema: Any, max_in_fpp: float,
    empty: Any = None,
) -> LocalRead:  # fmt: skip
    """The candidates' rows that may match ``where`` (SQL text or a parsed expression),
    as a DataFrame of ``schema`` over a local relation (``empty``, when given, if no row
    may match). Raises :class:`BloomskipError`
    (or an Arrow / OS error) when the rows cannot be read exactly as Spark would: the
    caller then lets Spark read the files."""
    rows = index.row_filter(where, max_in_fpp=max_in_fpp, zone=session_zone(spark))
    target = spark_arrow_schema(schema)
    files = result.files
    if len(files) == 1:
        parts = [_read(files[0], target, rows)]
    else:
        parts = list(_pool().map(lambda f: _read(f, target, rows), files))
    batches = [b for part, _ in parts for b in part]
    table = pa.Table.from_batches(batches, schema=target)
    _check_calendar(table)
    df = empty
    if table.num_rows or empty is None:
        df = spark.createDataFrame(table, schema=schema)
        if df.schema != schema:
            raise BloomskipError(f"the local relation's schema is {df.schema}, not {schema}")
    return LocalRead(df, sum(n for _, n in parts), table.num_rows, list(rows.notes))


_POOL: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """The threads that read candidates, started on the first lookup that needs them and
    kept (a new pool per lookup costs ~2 ms per thread started). A process forked since
    has none of the parent's threads, so it starts its own."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(_THREADS, thread_name_prefix="bloomskip-local"))
    return _POOL[1]


def _read(f: FileCandidate, target: pa.Schema, rows: RowFilter) -> tuple[list[pa.RecordBatch], int]:
    """One candidate's rows that may match, and how many rows were read. A file that is
    no longer the file indexed (its zones' row offsets no longer apply, and the index
    does not know its rows), or that changes while it is read, raises
    SourceChangedError."""
    before = file_identity(f.path)
    if f.identity is not None and (before is None or not same_identity(f.identity, before)):
        raise SourceChangedError(f"{f.path} changed since it was indexed")
    out: list[pa.RecordBatch] = []
    counted = _Counted(rows)
    for kept, columns in read_tables(f.path, f.zones, None, target.names, counted):
        missing = [name for name, c in columns.items() if c is None]
        if missing:  # a partition column, or one the file lacks: Spark's to fill
            raise BloomskipError(f"{f.path} has no column {', '.join(missing)}")
        for field in kept.schema:  # nanosecond timestamps (INT64): not Spark's values
            if pa.types.is_timestamp(field.type) and field.type.unit == "ns":
                raise BloomskipError(f"{f.path}: {field.name} holds nanosecond timestamps")
        out.append(conform(kept, target, columns, f.path))
    if file_identity(f.path) != before:
        raise SourceChangedError(f"{f.path} changed while it was read")
    return out, counted.count


class _Counted:
    """A row filter that counts the rows it is asked about."""

    def __init__(self, rows: RowFilter) -> None:
        self.rows, self.needs, self.count = rows, rows.needs, 0

    def may(self, table: pa.Table) -> np.ndarray:
        self.count += table.num_rows
        return self.rows.may(table)


def _check_calendar(table: pa.Table) -> None:
    """Dates and timestamps before 1900: Spark's readers may rebase them between
    calendars (or refuse them), so Spark reads those files itself."""
    for name, col in zip(table.column_names, table.columns, strict=True):
        t = col.type
        if pa.types.is_date32(t):
            oldest, ints = _OLDEST_DAY, pa.int32()
        elif pa.types.is_timestamp(t) and t.unit == "us":
            oldest, ints = _OLDEST_MICROS, pa.int64()
        else:
            continue
        low = pc.min(col.cast(ints)).as_py()
        if low is not None and low < oldest:
            raise BloomskipError(f"column {name} holds values before 1900")


__all__ = ["LOCAL_ROWS", "LocalRead", "read_local", "why_not_local"]
