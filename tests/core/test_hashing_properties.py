"""Property-based tests: for every supported Arrow type, with nulls, empty arrays, NaN,
signed zeros, extreme integers and long non-ASCII strings,

* the hashes equal the independent oracle's (``tests/support/oracle.py``), and
* no inserted value is ever reported absent (no false negatives), under both encodings,
  in a fresh filter, after a union and after any fold.
"""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import Sbbf, hash_values
from tests.support.oracle import arrow_bytes, parquet_bytes, xxh

_EXACT = decimal.Context(prec=100)  # no rounding of 76-digit decimals
_INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(),
              pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]  # fmt: skip


def _nullable(values: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.one_of(st.none(), values), max_size=40)


def _ints(t: pa.DataType) -> st.SearchStrategy:
    info = np.iinfo(t.to_pandas_dtype())
    edge = st.sampled_from([int(info.min), int(info.max), 0, -1 if info.min < 0 else 1])
    return _nullable(st.one_of(edge, st.integers(int(info.min), int(info.max)))).map(
        lambda v: pa.array(v, t)
    )


def _decimals(precision: int, scale: int, factory=pa.decimal128) -> st.SearchStrategy:
    bound = 10**precision - 1
    unscaled = st.one_of(st.sampled_from([bound, -bound, 0, -1]), st.integers(-bound, bound))
    values = unscaled.map(lambda u: decimal.Decimal(u).scaleb(-scale, context=_EXACT))
    return _nullable(values).map(lambda v: pa.array(v, factory(precision, scale)))


def _temporal(t: pa.DataType, lo: int, hi: int) -> st.SearchStrategy:
    storage = pa.int32() if t.bit_width == 32 else pa.int64()
    return _nullable(st.integers(lo, hi)).map(lambda v: pa.array(v, storage).cast(t))


_FLOATS64 = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0])
_FLOATS32 = st.floats(width=32, allow_nan=True) | st.sampled_from([0.0, -0.0])
_TEXT = st.text(max_size=300)  # includes non-ASCII and long values
_DAY_NS = 86_400 * 10**9

ARRAYS = st.one_of(
    *[_ints(t) for t in _INT_TYPES],
    st.lists(st.one_of(st.none(), st.booleans()), max_size=40).map(
        lambda v: pa.array(v, pa.bool_())
    ),
    _nullable(_FLOATS64).map(lambda v: pa.array(v, pa.float64())),
    _nullable(_FLOATS32).map(lambda v: pa.array(v, pa.float32())),
    _nullable(st.floats(width=16)).map(
        lambda v: pa.array(np.array([x if x is not None else 0 for x in v], np.float16))
    ),
    _nullable(_TEXT).map(lambda v: pa.array(v, pa.string())),
    _nullable(_TEXT).map(lambda v: pa.array(v, pa.large_string())),
    _nullable(_TEXT).map(lambda v: pa.array(v, pa.string()).cast(pa.string_view())),
    _nullable(st.binary(max_size=100)).map(lambda v: pa.array(v, pa.binary())),
    _nullable(st.binary(max_size=100)).map(lambda v: pa.array(v, pa.large_binary())),
    _nullable(st.binary(max_size=50)).map(
        lambda v: pa.array(v, pa.binary()).cast(pa.binary_view())
    ),
    _nullable(st.binary(min_size=7, max_size=7)).map(lambda v: pa.array(v, pa.binary(7))),
    _nullable(_TEXT).map(lambda v: pa.array(v, pa.string()).dictionary_encode()),
    _nullable(st.dates()).map(lambda v: pa.array(v, pa.date32())),
    _nullable(st.dates()).map(lambda v: pa.array(v, pa.date64())),
    _temporal(pa.time32("s"), 0, 86_399),
    _temporal(pa.time32("ms"), 0, 86_399_999),
    _temporal(pa.time64("us"), 0, 86_400 * 10**6 - 1),
    _temporal(pa.time64("ns"), 0, _DAY_NS - 1),
    _temporal(pa.timestamp("s"), -(10**11), 10**11),
    _temporal(pa.timestamp("ms"), -(2**62), 2**62),
    _temporal(pa.timestamp("us", tz="UTC"), -(2**63) + 1, 2**63 - 1),
    _temporal(pa.timestamp("ns"), -(2**63) + 1, 2**63 - 1),
    _decimals(4, 2),
    _decimals(9, 0),
    _decimals(18, 6),
    _decimals(19, 2),
    _decimals(38, 10),
    _decimals(60, 5, pa.decimal256),
)

# Types Lance's rule (encoding="arrow") covers.
ARROW_ENCODABLE = st.one_of(
    *[_ints(t) for t in _INT_TYPES],
    _nullable(_FLOATS64).map(lambda v: pa.array(v, pa.float64())),
    _nullable(_TEXT).map(lambda v: pa.array(v, pa.string())),
    _nullable(st.binary(max_size=60)).map(lambda v: pa.array(v, pa.binary())),
    _nullable(st.dates()).map(lambda v: pa.array(v, pa.date32())),
    _temporal(pa.timestamp("s"), -(10**11), 10**11),
    _temporal(pa.time32("ms"), 0, 86_399_999),
)

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(ARRAYS)
def test_hashes_equal_the_independent_oracle(arr):
    assert hash_values(arr).tolist() == xxh(parquet_bytes(arr))


@_SETTINGS
@given(ARRAYS, st.sampled_from([32, 64, 1024]), st.integers(0, 5))
def test_no_inserted_value_is_ever_reported_absent(arr, num_bytes, split):
    f = Sbbf(num_bytes)
    f.insert(arr)
    valid = np.asarray(arr.is_valid())
    found = f.check(arr)
    assert found[valid].all()
    assert not found[~valid].any()  # nulls are never "present"
    # Split the values over two filters: their union must still hold every value.
    cut = min(split, len(arr))
    a, b = Sbbf(num_bytes), Sbbf(num_bytes)
    a.insert(arr.slice(0, cut))
    b.insert(arr.slice(cut))
    merged = a | b
    assert merged == f
    # Folding keeps every value.
    for k in range(f.num_blocks.bit_length()):
        assert f.fold(k).check(arr)[valid].all()
    # Chunked arrays and Python lists give the same filter.
    g = Sbbf(num_bytes)
    g.insert(pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=arr.type))
    assert g == f


@_SETTINGS
@given(ARROW_ENCODABLE)
def test_arrow_encoding_no_false_negatives_and_oracle(arr):
    assert hash_values(arr, encoding="arrow").tolist() == xxh(arrow_bytes(arr))
    f = Sbbf(64, encoding="arrow")
    f.insert(arr)
    assert f.check(arr)[np.asarray(arr.is_valid())].all()


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60))
def test_empty_and_scalar_inputs(values):
    f = Sbbf(128)
    f.insert(pa.array([], pa.int64()))
    assert f.popcount() == 0
    for v in values:
        f.insert(v)
    assert all(v in f for v in values)


def test_signed_zero_and_nan_are_distinct_bit_patterns():
    # Raw IEEE bits are hashed, as every writer does; readers must probe both zeros.
    f = Sbbf(1 << 16)
    f.insert(pa.array([-0.0, float("nan")]))
    assert f.check(pa.array([-0.0, float("nan")])).all()
    assert not f.check(pa.array([0.0]))[0]


def test_extreme_dates_and_times():
    arr = pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31)], pa.date32())
    f = Sbbf(32)
    f.insert(arr)
    assert f.check(arr).all()
