"""Arrow types as Spark reads them, for the ``bloomskip`` data source: which Spark type a
column is declared as (as Spark's Parquet reader does: unsigned integers widen, UINT64
becomes ``DECIMAL(20,0)``), and whether that reading keeps distinct values distinct, so
that a filter pushed on it may be answered by the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import types as st

from bloomskip.errors import UnsupportedTypeError
from bloomskip.formats.base import INT96_KEY


def spark_type(t: pa.DataType) -> st.DataType:
    """The Spark type a column of Arrow type ``t`` is read as (as Spark's Parquet reader
    does: unsigned integers widen, UINT64 becomes DECIMAL(20,0))."""
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_dictionary(t):
        return spark_type(t.value_type)
    simple: list[tuple[Any, st.DataType]] = [
        (pa.types.is_boolean, st.BooleanType()),
        (pa.types.is_int8, st.ByteType()),
        (pa.types.is_int16, st.ShortType()),
        (pa.types.is_int32, st.IntegerType()),
        (pa.types.is_int64, st.LongType()),
        (pa.types.is_uint8, st.ShortType()),
        (pa.types.is_uint16, st.IntegerType()),
        (pa.types.is_uint32, st.LongType()),
        (pa.types.is_uint64, st.DecimalType(20, 0)),
        (pa.types.is_float16, st.FloatType()),
        (pa.types.is_float32, st.FloatType()),
        (pa.types.is_float64, st.DoubleType()),
        (pa.types.is_date, st.DateType()),
        (pa.types.is_null, st.NullType()),
    ]
    for test, spark in simple:
        if test(t):
            return spark
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise UnsupportedTypeError(f"{t}: Spark decimals have at most 38 digits")
        return st.DecimalType(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return st.StringType()
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return st.BinaryType()
    if pa.types.is_timestamp(t):
        return st.TimestampNTZType() if t.tz is None else st.TimestampType()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return st.ArrayType(spark_type(t.value_type), True)
    if pa.types.is_map(t):
        return st.MapType(spark_type(t.key_type), spark_type(t.item_type), True)
    if pa.types.is_struct(t):
        return st.StructType([st.StructField(f.name, spark_type(f.type), True) for f in t])
    raise UnsupportedTypeError(f"{t} has no Spark type this reader converts to")


def spark_schema(schema: pa.Schema) -> st.StructType:
    """The Spark schema of a source with Arrow ``schema``; every field nullable (files
    added later may hold nulls). A column a lake's files store as INT96 is an instant,
    ``TIMESTAMP``, as Spark's reader has it (pyarrow has no time zone for it)."""
    fields = []
    for f in schema:
        try:
            t = spark_type(f.type)
            if INT96_KEY in (f.metadata or {}) and isinstance(t, st.TimestampNTZType):
                t = st.TimestampType()
            fields.append(st.StructField(f.name, t, True))
        except UnsupportedTypeError as e:
            raise UnsupportedTypeError(
                f"column {f.name!r}: {e}; pass .schema(...) without it to read the others"
            ) from None
    return st.StructType(fields)


def lossless(t: pa.DataType) -> bool:
    """Whether reading ``t`` as :func:`spark_type` keeps distinct values distinct, so that
    Spark's equality on what is read is the index's equality on what is stored."""
    if pa.types.is_dictionary(t):
        return lossless(t.value_type)
    if pa.types.is_timestamp(t):
        return t.unit in ("s", "ms", "us")  # Spark keeps microseconds: ns are truncated
    try:
        spark_type(t)
    except UnsupportedTypeError:
        return False
    return not pa.types.is_nested(t)


def match_column(name: str, names: Sequence[str]) -> str | None:
    """``name`` among ``names``: exactly, else the one equal ignoring case (as Spark)."""
    if name in names:
        return name
    folded = [n for n in names if n.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None
