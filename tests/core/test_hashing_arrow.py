"""Arrow type -> Parquet physical encoding: the mapping table, case by case."""

from __future__ import annotations

import datetime as dt
import decimal
import struct

import numpy as np
import pyarrow as pa
import pytest
import xxhash

from bloomskip import (
    InvalidParameterError,
    PhysicalSpec,
    PhysicalType,
    UnsupportedTypeError,
    hash_values,
    parquet_spec,
)
from bloomskip.hashing.arrow import decimal_flba_length
from tests.support.oracle import arrow_bytes, parquet_bytes, xxh

P = PhysicalType


def _x(*raw: bytes) -> list[int]:
    return [xxhash.xxh64_intdigest(r) for r in raw]


@pytest.mark.parametrize(
    ("arrow_type", "physical", "length"),
    [
        (pa.bool_(), P.BOOLEAN, None),
        (pa.int8(), P.INT32, None),
        (pa.int16(), P.INT32, None),
        (pa.uint8(), P.INT32, None),
        (pa.uint16(), P.INT32, None),
        (pa.uint32(), P.INT32, None),
        (pa.int64(), P.INT64, None),
        (pa.uint64(), P.INT64, None),
        (pa.float16(), P.FIXED_LEN_BYTE_ARRAY, 2),
        (pa.float32(), P.FLOAT, None),
        (pa.float64(), P.DOUBLE, None),
        (pa.date32(), P.INT32, None),
        (pa.date64(), P.INT32, None),
        (pa.time32("s"), P.INT32, None),
        (pa.time64("ns"), P.INT64, None),
        (pa.timestamp("s"), P.INT64, None),
        (pa.timestamp("ns", tz="UTC"), P.INT64, None),
        (pa.decimal128(9, 2), P.INT32, None),
        (pa.decimal128(18, 2), P.INT64, None),
        (pa.decimal128(19, 2), P.FIXED_LEN_BYTE_ARRAY, 9),
        (pa.decimal128(38, 10), P.FIXED_LEN_BYTE_ARRAY, 16),
        (pa.decimal256(76, 0), P.FIXED_LEN_BYTE_ARRAY, 32),
        (pa.string(), P.BYTE_ARRAY, None),
        (pa.large_binary(), P.BYTE_ARRAY, None),
        (pa.string_view(), P.BYTE_ARRAY, None),
        (pa.binary(16), P.FIXED_LEN_BYTE_ARRAY, 16),
        (pa.dictionary(pa.int32(), pa.string()), P.BYTE_ARRAY, None),
        (pa.uuid(), P.FIXED_LEN_BYTE_ARRAY, 16),
    ],
)
def test_default_physical_type(arrow_type, physical, length):
    spec = parquet_spec(arrow_type)
    assert spec.physical_type is physical
    assert spec.type_length == length


def test_decimal_flba_lengths():
    assert [decimal_flba_length(p) for p in (1, 2, 9, 18, 19, 38, 76)] == [1, 1, 4, 8, 9, 16, 32]


def test_small_ints_widen_to_int32():
    # DataFusion #9779: int8/int16 hashed as 1/2 bytes never matched the file.
    for t in (pa.int8(), pa.int16()):
        assert hash_values(pa.array([-1, 5], t)).tolist() == _x(
            struct.pack("<i", -1), struct.pack("<i", 5)
        )
    assert hash_values(pa.array([200], pa.uint8())).tolist() == _x(struct.pack("<i", 200))


def test_uint32_keeps_its_bits_and_uint64_too():
    assert hash_values(pa.array([2**32 - 1], pa.uint32())).tolist() == _x(b"\xff" * 4)
    assert hash_values(pa.array([2**64 - 1], pa.uint64())).tolist() == _x(b"\xff" * 8)


def test_decimal_flba_is_big_endian_sign_extended_to_type_length():
    # DataFusion #22994: FLBA decimals must use the file's type_length, big-endian.
    arr = pa.array([decimal.Decimal("-1.00"), decimal.Decimal("123.45")], pa.decimal128(19, 2))
    got = hash_values(arr)
    assert got.tolist() == _x(b"\xff" * 8 + b"\x9c", (12345).to_bytes(9, "big"))
    wide = hash_values(arr, physical=PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, 16))
    assert wide.tolist() == _x(b"\xff" * 15 + b"\x9c", (12345).to_bytes(16, "big"))
    # pyarrow's default writes small decimals as FLBA too; the same value, other bytes:
    small = pa.array([decimal.Decimal("4.20")], pa.decimal128(4, 2))
    assert hash_values(small).tolist() == _x(struct.pack("<i", 420))
    as_flba = hash_values(small, physical=PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, 2))
    assert as_flba.tolist() == _x((420).to_bytes(2, "big"))
    as_int64 = hash_values(small, physical=PhysicalSpec(P.INT64))
    assert as_int64.tolist() == _x(struct.pack("<q", 420))


def test_decimal_that_does_not_fit_is_refused_not_truncated():
    arr = pa.array([decimal.Decimal("99999999999.99")], pa.decimal128(13, 2))
    with pytest.raises(InvalidParameterError, match="do not fit in INT32"):
        hash_values(arr, physical=PhysicalSpec(P.INT32))
    with pytest.raises(InvalidParameterError, match="FIXED_LEN_BYTE_ARRAY\\(2\\)"):
        hash_values(arr, physical=PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY, 2))


def test_timestamps_units_and_int96():
    ts = pa.array([dt.datetime(2024, 5, 6, 7, 8, 9, 123456)], pa.timestamp("us"))
    micros = ts.view(pa.int64())[0].as_py()
    assert hash_values(ts).tolist() == _x(struct.pack("<q", micros))
    as_ms = hash_values(ts.cast(pa.timestamp("ms"), safe=False))
    assert as_ms.tolist() == _x(struct.pack("<q", micros // 1000))
    as_ns = hash_values(ts, physical=PhysicalSpec(P.INT64, time_unit="ns"))
    assert as_ns.tolist() == _x(struct.pack("<q", micros * 1000))
    with pytest.raises(InvalidParameterError, match="not whole ms"):
        hash_values(ts, physical=PhysicalSpec(P.INT64, time_unit="ms"))
    # INT96 (Spark's default): nanoseconds of the day, then the Julian day, little-endian.
    days, rem = divmod(micros * 1000, 86_400 * 10**9)
    raw = struct.pack("<q", rem) + struct.pack("<i", days + 2_440_588)
    assert hash_values(ts, physical=PhysicalSpec(P.INT96)).tolist() == _x(raw)
    before_epoch = pa.array([-1], pa.timestamp("ns"))
    raw = struct.pack("<q", 86_400 * 10**9 - 1) + struct.pack("<i", 2_440_587)
    assert hash_values(before_epoch, physical=PhysicalSpec(P.INT96)).tolist() == _x(raw)
    sec = pa.array([1], pa.timestamp("s"))  # Parquet has no seconds: stored as ms
    assert hash_values(sec).tolist() == _x(struct.pack("<q", 1000))


def test_dates_and_times():
    d = dt.date(2000, 1, 2)
    days = (d - dt.date(1970, 1, 1)).days
    assert hash_values(pa.array([d], pa.date32())).tolist() == _x(struct.pack("<i", days))
    assert hash_values(pa.array([d], pa.date64())).tolist() == _x(struct.pack("<i", days))
    t = pa.array([3600], pa.time32("s"))
    assert hash_values(t).tolist() == _x(struct.pack("<i", 3_600_000))
    t64 = pa.array([5], pa.time64("ns"))
    assert hash_values(t64).tolist() == _x(struct.pack("<q", 5))


def test_dictionary_hashes_values_not_keys_and_sliced_arrays_respect_offset():
    words = pa.array(["b", "a", None, "b", "c"])
    assert hash_values(words.dictionary_encode()).tolist() == _x(b"b", b"a", b"b", b"c")
    assert hash_values(words.slice(3)).tolist() == _x(b"b", b"c")
    ints = pa.array([1, 2, 3, 4], pa.int64()).slice(2, 1)
    assert hash_values(ints).tolist() == _x(struct.pack("<q", 3))
    fsb = pa.array([b"ab", b"cd", b"ef"], pa.binary(2)).slice(1)
    assert hash_values(fsb).tolist() == _x(b"cd", b"ef")
    dec = pa.array([decimal.Decimal(1), decimal.Decimal(2)], pa.decimal128(20, 0)).slice(1)
    assert hash_values(dec).tolist() == _x((2).to_bytes(9, "big"))


def test_python_scalars_and_numpy():
    assert hash_values(7).tolist() == _x(struct.pack("<q", 7))  # Python int -> int64
    assert hash_values(7, type=pa.int16()).tolist() == _x(struct.pack("<i", 7))
    assert hash_values(0.5).tolist() == _x(struct.pack("<d", 0.5))
    assert hash_values("é").tolist() == _x("é".encode())
    assert hash_values(b"\x00\xff").tolist() == _x(b"\x00\xff")
    assert hash_values(True).tolist() == _x(b"\x01")
    assert hash_values(dt.date(1970, 1, 2)).tolist() == _x(struct.pack("<i", 1))
    assert hash_values(np.array([1, 2], dtype=np.int8)).tolist() == _x(
        struct.pack("<i", 1), struct.pack("<i", 2)
    )
    assert hash_values(pa.scalar(3, pa.int32())).tolist() == _x(struct.pack("<i", 3))


def test_arrow_encoding_uses_arrow_widths_like_lance():
    assert hash_values(pa.array([-1], pa.int8()), encoding="arrow").tolist() == _x(b"\xff")
    assert hash_values(pa.array([1], pa.int16()), encoding="arrow").tolist() == _x(b"\x01\x00")
    ts = pa.array([1], pa.timestamp("s"))
    assert hash_values(ts, encoding="arrow").tolist() == _x(struct.pack("<q", 1))
    assert hash_values(pa.array(["x"]), encoding="arrow").tolist() == _x(b"x")
    for arr in (pa.array([True]), pa.array([decimal.Decimal("1.5")], pa.decimal128(5, 2))):
        with pytest.raises(UnsupportedTypeError, match="encoding='parquet'"):
            hash_values(arr, encoding="arrow")


@pytest.mark.parametrize(
    "arr",
    [
        pa.array([[1]], pa.list_(pa.int64())),
        pa.array([{"a": 1}]),
        pa.array([1], pa.duration("s")),
    ],
)
def test_types_without_encoding_are_typed_errors(arr):
    with pytest.raises(UnsupportedTypeError, match="no Parquet physical encoding"):
        hash_values(arr)


def test_float32_values_widen_exactly_for_a_double_column():
    got = hash_values(pa.array([1.5, -0.0], pa.float32()), physical=PhysicalSpec(P.DOUBLE))
    assert got.tolist() == _x(struct.pack("<d", 1.5), struct.pack("<d", -0.0))


def test_wide_integers_that_do_not_fit_int32_are_refused_not_wrapped():
    with pytest.raises(InvalidParameterError, match="32-bit range"):
        hash_values(pa.array([2**40]), physical=PhysicalSpec(P.INT32))
    ok = hash_values(pa.array([-1, 2**32 - 1]), physical=PhysicalSpec(P.INT32))
    assert ok.tolist() == _x(b"\xff" * 4, b"\xff" * 4)


def test_mismatched_physical_spec_is_a_typed_error():
    with pytest.raises(UnsupportedTypeError, match="as Parquet BYTE_ARRAY"):
        hash_values(pa.array([1]), physical=PhysicalSpec(P.BYTE_ARRAY))
    with pytest.raises(UnsupportedTypeError, match="as FLOAT without rounding"):
        hash_values(pa.array([0.1]), physical=PhysicalSpec(P.FLOAT))
    with pytest.raises(InvalidParameterError, match="type_length"):
        PhysicalSpec(P.FIXED_LEN_BYTE_ARRAY)
    with pytest.raises(UnsupportedTypeError, match="cannot read"):
        hash_values(["x"], type=pa.int32())
    with pytest.raises(InvalidParameterError, match="unknown encoding"):
        hash_values([1], encoding="lance")


def test_oracle_agrees_on_a_mixed_table():
    # The oracle used by the property tests, checked once on hand-picked edge values.
    arr = pa.array([0, -1, 2**31 - 1, -(2**31), None], pa.int32())
    assert hash_values(arr).tolist() == xxh(parquet_bytes(arr))
    assert hash_values(arr, encoding="arrow").tolist() == xxh(arrow_bytes(arr))
