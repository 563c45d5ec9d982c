"""From Arrow arrays (and numpy arrays, sequences, scalars) to the bytes a filter hashes.

Two encodings:

``"parquet"`` (default) - the PLAIN bytes of the *Parquet physical type* the column is
stored as, which is what every Parquet writer hashes. :func:`parquet_spec` gives the
default mapping (that of pyarrow's and arrow-rs's writers); pass a :class:`PhysicalSpec`
to match how a particular file stored a column (INT96 timestamps from Spark, decimals
as FIXED_LEN_BYTE_ARRAY from pyarrow, timestamps coerced to another unit).

==============================================  ===========================================
Arrow type                                      Parquet physical type (bytes hashed)
==============================================  ===========================================
bool                                            BOOLEAN (1 byte)
int8, int16, uint8, uint16, int32               INT32 (widened to 4 bytes)
uint32                                          INT32 (same 32 bits)
int64, uint64                                   INT64 (same 64 bits)
float16                                         FIXED_LEN_BYTE_ARRAY(2), IEEE half LE
float32 / float64                               FLOAT / DOUBLE (raw IEEE bits)
date32, date64                                  INT32 days since the epoch
time32[s], time32[ms]                           INT32 milliseconds
time64[us], time64[ns]                          INT64 in the unit
timestamp[s]                                    INT64 milliseconds (Parquet has no seconds)
timestamp[ms/us/ns]                             INT64 in the unit, or INT96 on request
decimal, precision <= 9 / <= 18 / larger        INT32 / INT64 unscaled, else FLBA big-endian
                                                (minimal length, or the file's type_length)
string, large_string, string_view, binary,      BYTE_ARRAY (raw bytes, no length prefix)
large_binary, binary_view
fixed_size_binary(n), uuid                      FIXED_LEN_BYTE_ARRAY(n)
dictionary<_, T>                                as T (the values are hashed, not the keys)
==============================================  ===========================================

``"arrow"`` - each Arrow type at its own width: int8/uint8 as 1 byte, int16/uint16 as 2,
32-bit types as 4, 64-bit types (timestamps in their own unit) as 8, strings and
binaries as raw bytes. This is what Lance's bloom filter index hashes; it does *not*
match Parquet files for 8- and 16-bit integers.

Nulls are never hashed: :func:`to_plain_columns` yields the valid values of each chunk
together with the validity mask needed to put check results back in place.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import InvalidParameterError, UnsupportedTypeError, parse_choice
from bloomskip.hashing.physical import PhysicalType, int96_rows
from bloomskip.hashing.plain import PlainValues, Rows, VarBytes, Words

_JULIAN_EPOCH_DAY = 2_440_588  # Julian day number of 1970-01-01
_NANOS_PER_DAY = 86_400 * 10**9
_MILLIS_PER_DAY = 86_400_000
_UNIT_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


class Encoding(StrEnum):
    """How a value becomes the bytes that are hashed."""

    PARQUET = "parquet"
    ARROW = "arrow"

    @classmethod
    def parse(cls, value: str | Encoding) -> Encoding:
        use = "use 'parquet' (Parquet physical types) or 'arrow' (Arrow widths, as Lance)"
        return parse_choice(cls, value, "encoding", use)


@dataclass(frozen=True)
class PhysicalSpec:
    """How one Parquet column stores its values: physical type, FLBA length, time unit.

    ``time_unit`` applies to timestamps and times stored as INT32/INT64 (``"ms"``,
    ``"us"``, ``"ns"``); ``type_length`` to FIXED_LEN_BYTE_ARRAY.
    """

    physical_type: PhysicalType
    type_length: int | None = None
    time_unit: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "physical_type", PhysicalType(self.physical_type))
        if self.physical_type is PhysicalType.FIXED_LEN_BYTE_ARRAY and (
            self.type_length is None or self.type_length <= 0
        ):
            raise InvalidParameterError("FIXED_LEN_BYTE_ARRAY needs a type_length > 0")
        if self.time_unit is not None and self.time_unit not in _UNIT_NANOS:
            raise InvalidParameterError(
                f"time_unit must be one of s, ms, us, ns, got {self.time_unit!r}"
            )


def decimal_flba_length(precision: int) -> int:
    """Fewest bytes whose two's complement holds every unscaled value of ``precision``."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def parquet_spec(arrow_type: pa.DataType) -> PhysicalSpec:
    """The Parquet physical encoding pyarrow / arrow-rs give an Arrow type by default.

    Decimals follow arrow-rs, Spark and DuckDB (INT32 for precision <= 9, INT64 for <= 18);
    pyarrow writes them as FIXED_LEN_BYTE_ARRAY unless ``store_decimal_as_integer=True``.
    """
    t = _value_type(arrow_type)
    P = PhysicalType
    if pa.types.is_boolean(t):
        return PhysicalSpec(P.BOOLEAN)
    if pa.types.is_integer(t):
        if t.bit_width <= 32:
            return PhysicalSpec(P.INT32)
        return PhysicalSpec(P.INT64)
    if pa.types.is_float16(t):
        return PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, 2)
    if pa.types.is_float32(t):
        return PhysicalSpec(P.FLOAT)
    if pa.types.is_float64(t):
        return PhysicalSpec(P.DOUBLE)
    if pa.types.is_date(t):
        return PhysicalSpec(P.INT32)
    if pa.types.is_time32(t):
        return PhysicalSpec(P.INT32, time_unit="ms")
    if pa.types.is_time64(t):
        return PhysicalSpec(P.INT64, time_unit=t.unit)
    if pa.types.is_timestamp(t):
        return PhysicalSpec(P.INT64, time_unit="ms" if t.unit == "s" else t.unit)
    if pa.types.is_decimal(t):
        if t.precision <= 9:
            return PhysicalSpec(P.INT32)
        if t.precision <= 18:
            return PhysicalSpec(P.INT64)
        return PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, decimal_flba_length(t.precision))
    if is_var_binary(t):
        return PhysicalSpec(P.BYTE_ARRAY)
    if pa.types.is_fixed_size_binary(t):
        return PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, t.byte_width)
    raise UnsupportedTypeError(
        f"Arrow type {t} has no Parquet physical encoding that a bloom filter can hash; "
        "supported: bool, integers, floats, dates, times, timestamps, decimals, strings, "
        "binaries, fixed-size binaries and dictionaries of these"
    )


# ----------------------------------------------------------------------------- input


def as_arrow(values: Any, type: pa.DataType | None = None) -> pa.Array | pa.ChunkedArray:
    """Turn an Arrow array, numpy array, sequence or scalar into an Arrow array."""
    try:
        if isinstance(values, pa.ChunkedArray | pa.Array):
            arr = values
        elif isinstance(values, pa.Scalar):
            arr = pa.array([values.as_py()], type=values.type)
        elif isinstance(values, np.ndarray):
            arr = pa.array(values.reshape(-1)) if values.dtype != object else pa.array(values)
        elif isinstance(values, list | tuple):
            arr = pa.array(values, type=type)
        else:
            arr = pa.array([values], type=type or _scalar_type(values))
        if type is not None and arr.type != type:
            arr = arr.cast(type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError) as e:
        shown = repr(values)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise UnsupportedTypeError(
            f"cannot read {shown} as {type if type is not None else 'an Arrow array'}: {e}"
        ) from e
    return arr


def _scalar_type(value: Any) -> pa.DataType | None:
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    if isinstance(value, str):
        return pa.string()
    if isinstance(value, bytes | bytearray | memoryview):
        return pa.binary()
    if isinstance(value, _decimal.Decimal):
        return None  # let Arrow infer precision and scale
    if isinstance(value, _dt.datetime):
        return None
    if isinstance(value, _dt.date):
        return pa.date32()
    return None


def to_plain_columns(
    values: Any,
    type: pa.DataType | None,
    physical: PhysicalSpec | None,
    encoding: Encoding | str = Encoding.PARQUET,
) -> Iterator[tuple[PlainValues, np.ndarray | None]]:
    """Yield ``(plain values of the non-null entries, validity mask or None)`` per chunk."""
    encoding = Encoding.parse(encoding)
    arr = as_arrow(values, type)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if not chunks:
        yield Words(np.zeros(0, np.uint64)), None
        return
    for chunk in chunks:
        if isinstance(chunk.type, pa.BaseExtensionType):
            chunk = chunk.storage
        if pa.types.is_null(chunk.type):  # only nulls (e.g. an empty Python list)
            yield Words(np.zeros(0, np.uint64)), np.zeros(len(chunk), dtype=np.bool_)
            continue
        chunk = unview(chunk)
        valid = None
        if chunk.null_count:
            valid = chunk.is_valid().to_numpy(zero_copy_only=False)
            chunk = chunk.drop_null()
        yield encode(chunk, encoding, physical), valid


def encode(
    arr: pa.Array, encoding: Encoding | str = Encoding.PARQUET, physical: PhysicalSpec | None = None
) -> PlainValues:
    """The PLAIN bytes of a null-free Arrow array under ``encoding``."""
    encoding = Encoding.parse(encoding)
    if pa.types.is_dictionary(arr.type):
        return encode(arr.dictionary_decode(), encoding, physical)
    if encoding is Encoding.ARROW:
        if physical is not None:
            raise InvalidParameterError("a PhysicalSpec only applies to encoding='parquet'")
        return _arrow_width(arr)
    return to_physical(arr, physical or parquet_spec(arr.type))


# ----------------------------------------------------------------------------- parquet


def to_physical(arr: pa.Array, spec: PhysicalSpec) -> PlainValues:
    """PLAIN values of physical type ``spec`` for a null-free Arrow array."""
    t = arr.type
    P = PhysicalType
    pt = spec.physical_type
    if pt is P.BOOLEAN and pa.types.is_boolean(t):
        return Words(arr.to_numpy(zero_copy_only=False).astype(np.uint8))
    if pt in (P.INT32, P.INT64):
        ints = _integers_for(arr, spec)
        if pt is P.INT32:
            _require_32_bits(ints, arr.type)
            return Words(_truncate(ints, np.uint32))
        return Words(_truncate(ints, np.uint64))
    if pt is P.FLOAT and pa.types.is_floating(t) and not pa.types.is_float16(t):
        if pa.types.is_float64(t):
            raise UnsupportedTypeError(
                "a float64 value cannot be hashed as FLOAT without rounding; convert the "
                "literal first (bloomskip.parquet does this exactly)"
            )
        return Words(_fixed_numpy(arr, np.float32).view(np.uint32))
    if pt is P.DOUBLE and pa.types.is_floating(t) and not pa.types.is_float16(t):
        # Read with the array's own width (float32 -> float64 is exact), then widen.
        values = _fixed_numpy(arr, t.to_pandas_dtype()).astype(np.float64)
        return Words(values.view(np.uint64))
    if pt is P.INT96 and pa.types.is_timestamp(t):
        nanos = _rescale(_fixed_numpy(arr, np.int64), t.unit, "ns")
        days = np.floor_divide(nanos, _NANOS_PER_DAY)
        return int96_rows(nanos - days * _NANOS_PER_DAY, days + _JULIAN_EPOCH_DAY)
    if pt is P.BYTE_ARRAY and (is_var_binary(t)):
        return var_bytes(arr)
    if pt is P.FIXED_LEN_BYTE_ARRAY:
        return _flba(arr, spec.type_length or 0)
    raise UnsupportedTypeError(
        f"cannot hash Arrow {t} as Parquet {pt.value}"
        + (f"({spec.type_length})" if spec.type_length else "")
        + f"; the default for {t} is {parquet_spec(t).physical_type.value}"
    )


def _integers_for(arr: pa.Array, spec: PhysicalSpec) -> np.ndarray:
    """The int64 (or uint64) value an INT32/INT64 column stores for each entry."""
    t = arr.type
    if pa.types.is_integer(t):
        np_type = t.to_pandas_dtype()
        return _fixed_numpy(arr, np_type)
    if pa.types.is_date32(t):
        days = _fixed_numpy(arr, np.int32).astype(np.int64)
        if spec.physical_type is PhysicalType.INT64 and spec.time_unit is not None:
            return _rescale(days * 86_400, "s", spec.time_unit)  # date as a timestamp
        return days
    if pa.types.is_date64(t):
        ms = _fixed_numpy(arr, np.int64)
        if spec.physical_type is PhysicalType.INT64 and spec.time_unit is not None:
            return _rescale(ms, "ms", spec.time_unit)
        return np.floor_divide(ms, _MILLIS_PER_DAY)
    if pa.types.is_time32(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t):
        raw = _fixed_numpy(arr, np.int32 if pa.types.is_time32(t) else np.int64)
        unit = spec.time_unit or parquet_spec(t).time_unit
        return _rescale(raw.astype(np.int64), t.unit, unit)
    if pa.types.is_decimal(t):
        width = 4 if spec.physical_type is PhysicalType.INT32 else 8
        return _decimal_le(arr, width)
    raise UnsupportedTypeError(
        f"cannot hash Arrow {t} as Parquet {spec.physical_type.value}; the default for "
        f"{t} is {parquet_spec(t).physical_type.value}"
    )


def _require_32_bits(ints: np.ndarray, t: pa.DataType) -> None:
    """INT32 holds int32 values, or uint32 bits: anything wider would hash another value."""
    if ints.dtype.itemsize <= 4 or ints.size == 0:
        return
    if ints.min() < -(2**31) or ints.max() > 2**32 - 1:
        raise InvalidParameterError(
            f"{t} values outside the 32-bit range cannot be stored in an INT32 column"
        )


def _truncate(ints: np.ndarray, unsigned: type) -> np.ndarray:
    """The low 32 or 64 bits of each integer, as the column's physical type stores them."""
    if ints.dtype.itemsize == np.dtype(unsigned).itemsize:
        return np.ascontiguousarray(ints).view(unsigned)
    return ints.astype(unsigned)  # numpy wraps modulo 2**bits, as Parquet stores them


def _rescale(values: np.ndarray, unit: str, target: str | None) -> np.ndarray:
    """Convert between time units; refuses to drop precision (that would hash wrongly)."""
    if target is None or unit == target:
        return values
    src, dst = _UNIT_NANOS[unit], _UNIT_NANOS[target]
    if src > dst:
        factor = src // dst
        limit = np.iinfo(np.int64).max // factor
        if values.size and np.abs(values).max() > limit:
            raise InvalidParameterError(f"time values overflow int64 when converted to {target}")
        return values * factor
    factor = dst // src
    if values.size and np.any(values % factor):
        raise InvalidParameterError(
            f"time values in {unit} are not whole {target}; a {target} column cannot hold them"
        )
    return values // factor


def _decimal_le(arr: pa.Array, width: int) -> np.ndarray:
    """Unscaled decimal values as little-endian integers of ``width`` bytes (4 or 8)."""
    rows = _decimal_rows_le(arr)
    if rows.shape[1] < width:
        raise UnsupportedTypeError(f"{arr.type} is narrower than {width} bytes")
    low = np.ascontiguousarray(rows[:, :width])
    value = low.view(np.int32 if width == 4 else np.int64).reshape(-1)
    # Every higher byte must be the sign extension of the low part, or it does not fit.
    sign = np.where(value < 0, 0xFF, 0x00).astype(np.uint8)
    if rows.shape[1] > width and np.any(rows[:, width:] != sign[:, None]):
        raise InvalidParameterError(f"decimal values of {arr.type} do not fit in INT{8 * width}")
    return value


def _decimal_rows_le(arr: pa.Array) -> np.ndarray:
    width = arr.type.byte_width
    if len(arr) == 0:
        return np.zeros((0, width), dtype=np.uint8)
    data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    start = arr.offset * width
    return data[start : start + len(arr) * width].reshape(-1, width)


def _flba(arr: pa.Array, length: int) -> Rows:
    t = arr.type
    n = len(arr)
    if pa.types.is_fixed_size_binary(t):
        if t.byte_width != length:
            raise UnsupportedTypeError(
                f"{t} values are {t.byte_width} bytes; cannot hash them as "
                f"FIXED_LEN_BYTE_ARRAY({length})"
            )
        data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        start = arr.offset * length
        return Rows(data[start : start + n * length], length, n)
    if pa.types.is_float16(t):
        if length != 2:
            raise UnsupportedTypeError(f"float16 is FIXED_LEN_BYTE_ARRAY(2), not ({length})")
        data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        return Rows(data[arr.offset * 2 : (arr.offset + n) * 2], 2, n)
    if pa.types.is_decimal(t):
        le = _decimal_rows_le(arr)
        be = le[:, ::-1]
        width = be.shape[1]
        if length <= width:
            head = be[:, : width - length]
            sign = np.where(be[:, width - length] >= 0x80, 0xFF, 0x00).astype(np.uint8)
            if head.size and np.any(head != sign[:, None]):
                raise InvalidParameterError(
                    f"decimal values of {t} do not fit in FIXED_LEN_BYTE_ARRAY({length})"
                )
            out = be[:, width - length :]
        else:
            sign = np.where(be[:, 0] >= 0x80, 0xFF, 0x00).astype(np.uint8)
            out = np.concatenate([np.repeat(sign[:, None], length - width, axis=1), be], axis=1)
        return Rows(np.ascontiguousarray(out).reshape(-1), length, n)
    raise UnsupportedTypeError(f"cannot hash Arrow {t} as FIXED_LEN_BYTE_ARRAY({length})")


# ----------------------------------------------------------------------------- arrow


def _arrow_width(arr: pa.Array) -> PlainValues:
    t = arr.type
    if is_var_binary(t):
        return var_bytes(arr)
    if pa.types.is_fixed_size_binary(t):
        return _flba(arr, t.byte_width)
    if pa.types.is_boolean(t) or pa.types.is_decimal(t) or pa.types.is_float16(t):
        raise UnsupportedTypeError(
            f"encoding='arrow' (Lance's) has no rule for {t}; use encoding='parquet'"
        )
    if pa.types.is_primitive(t) and t.bit_width in (8, 16, 32, 64):
        unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[t.bit_width]
        data = np.frombuffer(arr.buffers()[1], dtype=unsigned)
        return Words(np.ascontiguousarray(data[arr.offset : arr.offset + len(arr)]))
    raise UnsupportedTypeError(f"encoding='arrow' cannot hash Arrow type {t}")


# ----------------------------------------------------------------------------- helpers


def _value_type(t: pa.DataType) -> pa.DataType:
    while True:
        if isinstance(t, pa.BaseExtensionType):
            t = t.storage_type
        elif pa.types.is_dictionary(t):
            t = t.value_type
        else:
            return t


_VAR_BINARY = (
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_binary,
    pa.types.is_large_binary,
    pa.types.is_string_view,
    pa.types.is_binary_view,
)
_LIST_LIKE = (
    pa.types.is_list,
    pa.types.is_large_list,
    pa.types.is_fixed_size_list,
    pa.types.is_list_view,
    pa.types.is_large_list_view,
    pa.types.is_map,
)


def is_var_binary(t: pa.DataType) -> bool:
    """String or binary of any offset width, or a view type (shared with the ORC filter)."""
    return any(is_kind(t) for is_kind in _VAR_BINARY)


def is_list_like(t: pa.DataType) -> bool:
    """A list of any layout (offsets of either width, fixed size, view) or a map: a type
    whose values are lists of child values (the Parquet and ORC readers unwrap them)."""
    return any(is_kind(t) for is_kind in _LIST_LIKE)


def _fixed_numpy(arr: pa.Array, np_type: Any) -> np.ndarray:
    """The values of a null-free fixed-width array as numpy, zero-copy when possible."""
    dtype = np.dtype(np_type)
    if len(arr) == 0:
        return np.zeros(0, dtype=dtype)
    data = np.frombuffer(arr.buffers()[1], dtype=dtype)
    return data[arr.offset : arr.offset + len(arr)]


def unview(arr: pa.Array) -> pa.Array:
    """string_view/binary_view as large_string/large_binary (offsets + data buffers)."""
    if pa.types.is_string_view(arr.type):
        return pc.cast(arr, pa.large_string())
    if pa.types.is_binary_view(arr.type):
        return pc.cast(arr, pa.large_binary())
    return arr


def var_bytes(arr: pa.Array) -> VarBytes:
    """The offsets and data buffers of a string/binary array (views unviewed), zero-copy."""
    arr = unview(arr)
    t = arr.type
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    bufs = arr.buffers()
    off_dtype = np.int64 if large else np.int32
    offsets = np.frombuffer(bufs[1], dtype=off_dtype)[arr.offset : arr.offset + len(arr) + 1]
    if len(arr) == 0:
        return VarBytes(np.zeros(1, dtype=off_dtype), np.zeros(0, dtype=np.uint8))
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return VarBytes.trusted(offsets, data)
