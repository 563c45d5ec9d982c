"""One vectorized hash function per Parquet physical type.

Each takes values already in the physical type's domain and returns the xxHash64
(seed 0) of their PLAIN encoding as a ``uint64`` array, exactly as parquet-java,
arrow-rs, Arrow C++ and DuckDB hash them before inserting into a bloom filter:

=========================  =======================================================
physical type              bytes hashed
=========================  =======================================================
BOOLEAN                    1 byte, 0x00 or 0x01
INT32 / FLOAT              4 bytes little-endian (FLOAT: raw IEEE bits, -0.0 != 0.0)
INT64 / DOUBLE             8 bytes little-endian (DOUBLE: raw IEEE bits)
INT96                      12 bytes: nanoseconds of day (LE int64) + Julian day (LE int32)
BYTE_ARRAY                 the raw bytes, without the 4-byte length of PLAIN pages
FIXED_LEN_BYTE_ARRAY       exactly ``type_length`` bytes
=========================  =======================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

import numpy as np

from bloomskip.errors import InvalidParameterError
from bloomskip.hashing.plain import HashAlgorithm, Rows, VarBytes, Words, hash_plain


class PhysicalType(StrEnum):
    """Parquet physical types (parquet.thrift ``Type``)."""

    BOOLEAN = "BOOLEAN"
    INT32 = "INT32"
    INT64 = "INT64"
    INT96 = "INT96"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    BYTE_ARRAY = "BYTE_ARRAY"
    FIXED_LEN_BYTE_ARRAY = "FIXED_LEN_BYTE_ARRAY"


def _words(values, dtype, unsigned) -> Words:
    arr = np.ascontiguousarray(np.asarray(values, dtype=dtype))
    return Words(arr.view(unsigned))


def hash_boolean(values: Sequence[bool] | np.ndarray) -> np.ndarray:
    return hash_plain(
        Words(np.ascontiguousarray(np.asarray(values, dtype=np.bool_)).view(np.uint8))
    )


def hash_int32(values: Sequence[int] | np.ndarray) -> np.ndarray:
    """INT32 values (signed; pass ``uint32`` arrays through ``.view(np.int32)`` or as is)."""
    arr = np.asarray(values)
    if arr.dtype == np.uint32:
        return hash_plain(Words(np.ascontiguousarray(arr)))
    return hash_plain(_words(arr, np.int32, np.uint32))


def hash_int64(values: Sequence[int] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == np.uint64:
        return hash_plain(Words(np.ascontiguousarray(arr)))
    return hash_plain(_words(arr, np.int64, np.uint64))


def hash_float(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return hash_plain(_words(values, np.float32, np.uint32))


def hash_double(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return hash_plain(_words(values, np.float64, np.uint64))


def int96_rows(nanos_of_day: np.ndarray, julian_day: np.ndarray) -> Rows:
    nod = np.ascontiguousarray(np.asarray(nanos_of_day, dtype=np.int64))
    jd = np.ascontiguousarray(np.asarray(julian_day, dtype=np.int32))
    if nod.shape != jd.shape:
        raise InvalidParameterError("INT96: nanos_of_day and julian_day differ in length")
    out = np.empty((nod.shape[0], 12), dtype=np.uint8)
    out[:, :8] = nod.view(np.uint8).reshape(-1, 8)
    out[:, 8:] = jd.view(np.uint8).reshape(-1, 4)
    return Rows(out.reshape(-1), 12, nod.shape[0])


def hash_int96(nanos_of_day: np.ndarray, julian_day: np.ndarray) -> np.ndarray:
    """INT96 values given as their two parts (Impala/Spark timestamp layout)."""
    return hash_plain(int96_rows(nanos_of_day, julian_day))


def var_bytes(values: Iterable[bytes | str]) -> VarBytes:
    """Arrow-layout buffers for a sequence of ``bytes`` (``str`` is encoded as UTF-8)."""
    parts = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    return VarBytes(offsets, data)


def hash_byte_array(
    values: Iterable[bytes | str] | VarBytes,
    algorithm: HashAlgorithm = HashAlgorithm.XXHASH64,
) -> np.ndarray:
    plain = values if isinstance(values, VarBytes) else var_bytes(values)
    return hash_plain(plain, algorithm)


def hash_fixed_len_byte_array(values: Iterable[bytes] | np.ndarray, type_length: int) -> np.ndarray:
    """FIXED_LEN_BYTE_ARRAY values of exactly ``type_length`` bytes each."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint8:
        data = np.ascontiguousarray(values).reshape(-1)
    else:
        parts = [bytes(v) for v in values]
        bad = [len(p) for p in parts if len(p) != type_length]
        if bad:
            raise InvalidParameterError(
                f"FIXED_LEN_BYTE_ARRAY({type_length}) values must be {type_length} bytes; "
                f"got a value of {bad[0]} bytes"
            )
        data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    if type_length <= 0 or data.shape[0] % type_length:
        raise InvalidParameterError(
            f"FIXED_LEN_BYTE_ARRAY data of {data.shape[0]} B is not a whole number of "
            f"{type_length}-byte values"
        )
    return hash_plain(Rows(data, type_length, data.shape[0] // type_length))
