"""An independent, per-value, pure-Python statement of the encoding rules.

Written from the Parquet spec and the reference tables, with ``struct`` and Python ints,
so that the vectorized encoders in ``bloomskip.hashing.arrow`` are checked against a
second implementation that shares no code with them.
"""

from __future__ import annotations

import decimal
import struct

import numpy as np
import pyarrow as pa
import xxhash

_UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def _raw_ints(arr: pa.Array) -> list[int | None]:
    """Integer storage of a temporal or integer array, as Python ints."""
    storage = {32: pa.int32(), 64: pa.int64()}[arr.type.bit_width]
    return arr.view(storage).to_pylist()


def parquet_bytes(arr: pa.Array) -> list[bytes | None]:
    """PLAIN bytes of each value under the default Parquet mapping; None for nulls."""
    t = arr.type
    if pa.types.is_dictionary(t):
        return parquet_bytes(arr.dictionary_decode())
    py = arr.to_pylist() if not pa.types.is_temporal(t) else []
    if pa.types.is_boolean(t):
        return [None if v is None else (b"\x01" if v else b"\x00") for v in py]
    if pa.types.is_integer(t):
        if t.bit_width <= 32:
            return [None if v is None else (v & 0xFFFFFFFF).to_bytes(4, "little") for v in py]
        return [None if v is None else (v & (2**64 - 1)).to_bytes(8, "little") for v in py]
    if pa.types.is_float16(t):
        return [None if v is None else np.float16(v).tobytes() for v in py]
    if pa.types.is_float32(t):
        return [None if v is None else struct.pack("<f", v) for v in py]
    if pa.types.is_float64(t):
        return [None if v is None else struct.pack("<d", v) for v in py]
    if pa.types.is_date32(t):
        return [None if v is None else struct.pack("<i", v) for v in _raw_ints(arr)]
    if pa.types.is_date64(t):
        return [None if v is None else struct.pack("<i", v // 86_400_000) for v in _raw_ints(arr)]
    if pa.types.is_time32(t):
        mult = 1000 if t.unit == "s" else 1
        return [None if v is None else struct.pack("<i", v * mult) for v in _raw_ints(arr)]
    if pa.types.is_time64(t):
        return [None if v is None else struct.pack("<q", v) for v in _raw_ints(arr)]
    if pa.types.is_timestamp(t):
        mult = 1000 if t.unit == "s" else 1
        return [None if v is None else struct.pack("<q", v * mult) for v in _raw_ints(arr)]
    if pa.types.is_decimal(t):
        out: list[bytes | None] = []
        length = 1
        while 2 ** (8 * length - 1) < 10**t.precision:
            length += 1
        for v in py:
            if v is None:
                out.append(None)
                continue
            unscaled = int(v.scaleb(t.scale, context=decimal.Context(prec=100)))
            if t.precision <= 9:
                out.append(struct.pack("<i", unscaled))
            elif t.precision <= 18:
                out.append(struct.pack("<q", unscaled))
            else:
                out.append(unscaled.to_bytes(length, "big", signed=True))
        return out
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return [None if v is None else v.encode("utf-8") for v in py]
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return [None if v is None else bytes(v) for v in py]
    raise TypeError(f"oracle has no rule for {t}")


def arrow_bytes(arr: pa.Array) -> list[bytes | None]:
    """Bytes under Lance's rule: each Arrow type at its own width."""
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t):
        width = t.bit_width // 8
        if pa.types.is_floating(t):
            fmt = {4: "<f", 8: "<d"}[width]
            return [None if v is None else struct.pack(fmt, v) for v in arr.to_pylist()]
        storage = {1: pa.int8(), 2: pa.int16(), 4: pa.int32(), 8: pa.int64()}[width]
        ints = arr.view(storage).to_pylist() if not pa.types.is_integer(t) else arr.to_pylist()
        mask = 2 ** (8 * width) - 1
        return [None if v is None else (v & mask).to_bytes(width, "little") for v in ints]
    return parquet_bytes(arr)


def xxh(values: list[bytes | None]) -> list[int]:
    return [xxhash.xxh64_intdigest(v) for v in values if v is not None]
