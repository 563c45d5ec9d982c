"""ORC's Bloom filter: hashes, sizing, positions and serialization against ORC Java.

Three kinds of evidence:

* known answers - constants printed by ORC Java (orc-core 2.3.0 in pyspark's jars:
  ``Murmur3.hash64``, ``BloomFilter.getLongHash`` by reflection, ``BloomFilter(n, fpp)``
  sizes, ``HiveDecimalWritable.toString``) and a plain-Python transcription of the Java
  code; these always run;
* ORC Java itself through py4j (``@pytest.mark.spark``): the same functions on many
  more inputs, filters built by Java serialized by ``BloomFilterIO``, and files written
  by Spark and by ORC Java's writer API, whose stored filters a rebuild matches bit for
  bit;
* files written by pyarrow (ORC C++ 2.2.2) and hypothesis properties (no false
  negatives for every add/test pair, serialization round trips).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip.errors import (
    InvalidBitsetError,
    InvalidParameterError,
    ReadOnlyFilterError,
    UnsupportedTypeError,
)
from bloomskip.orc import OrcBloomFilter, kernels
from bloomskip.orc.feeds import base_hashes, decimal_strings
from bloomskip.orc.filter import (
    MAX_NUM_BITS,
    java_round,
    optimal_num_bits,
    optimal_num_hash_functions,
)
from bloomskip.orc.kernels import NULL_HASHCODE
from bloomskip.orc.types import OrcKind, OrcType

M64 = (1 << 64) - 1

# ----------------------------------------------------------------------------- constants
# All printed by ORC Java 2.3.0 (see the module docstring).

#: ``Murmur3.hash64`` of the first n bytes of PATTERN, n = 0..40 (high bytes included,
#: so a sign-extension slip would show).
PATTERN = bytes((i * 151 + 7) % 256 for i in range(40))
HASH64_PREFIX = [
    8404154273843829576, 46133464640892518, -3820900735471574597, 9014576172247281554,
    -8667536122064617261, -7916243640837729904, -1379750019045821498, 6171688986686180852,
    -6563946105240182185, 2711470582939615888, -4182352616330142881, 7148879517969464275,
    -2671133656260366512, 1999045453688431323, 5858695908104136578, -5318304611918215038,
    -7420489503353102921, -4572652871838286663, 2462858556646808641, 6704726514671919905,
    -6183826583850546315, 3856442882967786925, -1395938674536633064, -2709422924816210298,
    6704768399709955365, 6570080352465823892, -167992944678785398, 1039986936508281464,
    -1584913591151731100, -3878808555990584037, 7272654426612316879, -3094432739088772040,
    -1854369112223182390, 5218740489525786835, -2558797040287929699, -6475583431885235328,
    7492591262205742646, 6536665009228448449, 308974972662418666, 4756206325923217615,
    4307386365331135157,
]  # fmt: skip

#: ``Murmur3.hash64`` of UTF-8 strings.
HASH64_STRINGS = {
    "": 8404154273843829576,
    "a": -2460741455279943289,
    "abcdefgh": 729624805048849005,
    "abcdefghi": 3101789324417447593,
    "hello": 4118559451821261121,
    "éèÿ": 4865979624620081611,
    "日本語テキスト": -4643187419329430118,
    "😀 emoji": 7205030992623095727,
    "\x00": -4572469739064733624,
    "It was the best of times": -5769100616462281762,
}

#: ``BloomFilter.getLongHash``.
LONG_HASH = {
    0: 0,
    1: 6614235796240398542,
    -1: 6614246905173314819,
    2: -5218261022256003468,
    -2: -5218250166726157773,
    42: 1098236396662648698,
    100: -2656722120339171202,
    -100: -2656777098068069251,
    127: -8539678565170811780,
    -128: -1925314935671239215,
    255: 7984788104737148810,
    32767: -1628026943652924242,
    -32768: 5182827642979056891,
    2**31 - 1: -4118334305638520412,
    -(2**31): 1233635542594773612,
    2**32: -1436699843165044201,
    2**62: 2192665876042806619,
    -(2**62): 2158324264573792932,
    2**63 - 1: -9102528624353286089,
    -(2**63): 4316648529147585864,
    18000000000: -1097054448615658549,
    -18000000000: -1916800653812840926,
    1583661600000: 5077136305430494559,
}

#: ``getLongHash(Double.doubleToLongBits(d))``.
DOUBLE_HASH = [
    (0.0, 0),
    (-0.0, 4316648529147585864),
    (math.nan, 1428437071588918382),
    (math.inf, -4301090462295690352),
    (-math.inf, -7572940227573325380),
    (2.5, 5351376329623693259),
    (0.1, 8288650497498799360),
    (float(np.float32(0.1)), -9039942497934706462),
    (1e308, 8407920214530900130),
    (5e-324, 6614235796240398542),
]

#: ``new BloomFilter(n, fpp)``: (n, fpp, getBitSize(), getNumHashFunctions()).
SIZES = [
    (1, 0.3, 64, 44), (1, 0.05, 64, 44), (1, 0.02, 64, 44), (1, 0.01, 64, 44),
    (1, 0.001, 64, 44), (1, 1e-06, 64, 44), (2, 0.3, 64, 22), (2, 0.05, 64, 22),
    (2, 0.02, 64, 22), (2, 0.01, 64, 22), (2, 0.001, 64, 22), (2, 1e-06, 64, 22),
    (10, 0.3, 64, 4), (10, 0.05, 64, 4), (10, 0.02, 128, 9), (10, 0.01, 128, 9),
    (10, 0.001, 192, 13), (10, 1e-06, 320, 22), (63, 0.3, 192, 2), (63, 0.05, 448, 5),
    (63, 0.02, 576, 6), (63, 0.01, 640, 7), (63, 0.001, 960, 11), (63, 1e-06, 1856, 20),
    (64, 0.3, 192, 2), (64, 0.05, 448, 5), (64, 0.02, 576, 6), (64, 0.01, 640, 7),
    (64, 0.001, 960, 10), (64, 1e-06, 1856, 20), (100, 0.3, 256, 2), (100, 0.05, 640, 4),
    (100, 0.02, 832, 6), (100, 0.01, 960, 7), (100, 0.001, 1472, 10),
    (100, 1e-06, 2880, 20), (1000, 0.3, 2560, 2), (1000, 0.05, 6272, 4),
    (1000, 0.02, 8192, 6), (1000, 0.01, 9600, 7), (1000, 0.001, 14400, 10),
    (1000, 1e-06, 28800, 20), (5000, 0.3, 12544, 2), (5000, 0.05, 31232, 4),
    (5000, 0.02, 40768, 6), (5000, 0.01, 47936, 7), (5000, 0.001, 71936, 10),
    (5000, 1e-06, 143808, 20), (10000, 0.3, 25088, 2), (10000, 0.05, 62400, 4),
    (10000, 0.02, 81472, 6), (10000, 0.01, 95872, 7), (10000, 0.001, 143808, 10),
    (10000, 1e-06, 287552, 20), (12345, 0.3, 30976, 2), (12345, 0.05, 76992, 4),
    (12345, 0.02, 100544, 6), (12345, 0.01, 118336, 7), (12345, 0.001, 177536, 10),
    (12345, 1e-06, 355008, 20), (100000, 0.3, 250624, 2), (100000, 0.05, 623552, 4),
    (100000, 0.02, 814272, 6), (100000, 0.01, 958528, 7), (100000, 0.001, 1437760, 10),
    (100000, 1e-06, 2875520, 20), (1000000, 0.3, 2505920, 2),
    (1000000, 0.05, 6235264, 4), (1000000, 0.02, 8142400, 6), (1000000, 0.01, 9585088, 7),
    (1000000, 0.001, 14377600, 10), (1000000, 1e-06, 28755200, 20),
]  # fmt: skip

#: ``BloomFilterUtf8(10000, 0.05)`` after addLong(42), addString("hello"),
#: addDouble(2.5) and add(null): its non-zero words (index: signed long).
JAVA_WORDS = {
    16: 4611686018427387904, 25: 128, 117: 65536, 165: 2, 177: 4611686018427387904,
    214: 16777216, 224: 2097152, 268: 512, 403: 2199023255552, 458: 18014398509481984,
    469: 4096, 584: 4611686018427387904, 800: 268435456, 810: 18014398509481984,
    837: 36028797018963968, 874: 1073741824,
}  # fmt: skip

#: ``new HiveDecimalWritable(s).toString()``: the text the Java writer hashes.
HIVE_DECIMAL_TEXT = {
    "1.50": "1.5",
    "-0.050": "-0.05",
    "1E+3": "1000",
    "0.000": "0",
    "0.0000001": "0.0000001",
    "100.00": "100",
    "-1234567890123456789012345678.0000000001": "-1234567890123456789012345678.0000000001",
    "12345678901234567890123456789012345678": "12345678901234567890123456789012345678",
}


# ----------------------------------------------------------------------------- the Java
# code, transcribed into plain Python ints (the oracle for the compiled kernels)


def _signed(x: int, bits: int = 64) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M64


def py_hash64(data: bytes) -> int:
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h = 104729
    nblocks = len(data) >> 3
    for i in range(nblocks):
        k = int.from_bytes(data[8 * i : 8 * i + 8], "little")
        k = (_rotl((k * c1) & M64, 31) * c2) & M64
        h ^= k
        h = (_rotl(h, 27) * 5 + 0x52DCE729) & M64
    tail = data[8 * nblocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl((k * c1) & M64, 31) * c2) & M64
    h ^= len(data)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M64
    h ^= h >> 33
    return _signed(h)


def py_long_hash(key: int) -> int:
    # Python's >> on a negative int is arithmetic, like Java's; wrap after every step.
    key = _signed(~key + (key << 21))
    key = _signed(key ^ (key >> 24))
    key = _signed(key + (key << 3) + (key << 8))
    key = _signed(key ^ (key >> 14))
    key = _signed(key + (key << 2) + (key << 4))
    key = _signed(key ^ (key >> 28))
    return _signed(key + (key << 31))


def py_positions(h64: int, k: int, m: int) -> list[int]:
    hash1 = _signed(h64, 32)
    hash2 = _signed((h64 & M64) >> 32, 32)
    out = []
    for i in range(1, k + 1):
        c = _signed(hash1 + i * hash2, 32)
        if c < 0:
            c = ~c
        out.append(c % m)
    return out


def py_words(hashes: list[int], k: int, m: int) -> list[int]:
    words = [0] * (m // 64)
    for h in hashes:
        for p in py_positions(h, k, m):
            words[p >> 6] |= 1 << (p & 63)
    return words


# ----------------------------------------------------------------------------- known answers


def test_hash64_prefixes_and_strings_match_java_constants():
    assert base_hashes([PATTERN[:n] for n in range(41)], "binary").tolist() == HASH64_PREFIX
    assert base_hashes(list(HASH64_STRINGS), "string").tolist() == list(HASH64_STRINGS.values())
    assert [py_hash64(PATTERN[:n]) for n in range(41)] == HASH64_PREFIX


def test_long_and_double_hashes_match_java_constants():
    assert base_hashes(list(LONG_HASH), "long").tolist() == list(LONG_HASH.values())
    assert [py_long_hash(v) for v in LONG_HASH] == list(LONG_HASH.values())
    doubles = [d for d, _ in DOUBLE_HASH]
    assert base_hashes(doubles, "double").tolist() == [h for _, h in DOUBLE_HASH]


@pytest.mark.parametrize(("n", "fpp", "m", "k"), SIZES)
def test_sizing_matches_java(n, fpp, m, k):
    f = OrcBloomFilter(n, fpp)
    assert (f.num_bits, f.num_hash_functions) == (m, k)
    assert f.num_bytes == m // 8 and f.popcount() == 0


def test_sizing_corner_cases():
    assert OrcBloomFilter(0, 0.05).num_bits == OrcBloomFilter(1, 0.05).num_bits == 64
    assert java_round(0.49999999999999994) == 0 and java_round(2.5) == 3 and java_round(3.5) == 4
    # nb % 64 == 0 still adds a whole word ("m = nb + (64 - nb % 64)")
    n = next(n for n in range(1, 5000) if int(-n * math.log(0.05) / math.log(2) ** 2) % 64 == 0)
    nb = int(-n * math.log(0.05) / math.log(2) ** 2)
    assert optimal_num_bits(n, 0.05) == nb + 64
    assert optimal_num_hash_functions(10_000, 62_400) == 4


def test_java_filter_words_and_positions():
    f = OrcBloomFilter(10_000, 0.05)
    f.add_longs([42])
    f.add_strings(["hello"])
    f.add_doubles([2.5])
    f.add_hashes([NULL_HASHCODE])
    words = f.to_bitset_words().view(np.int64)
    assert {i: int(w) for i, w in enumerate(words) if w} == JAVA_WORDS
    assert f.positions(LONG_HASH[42]) == [25833, 13720, 1607, 51894]
    assert f.to_utf8bitset() == words.astype("<i8").tobytes()


def test_decimal_text_matches_hive_decimal_writable():
    got = decimal_strings([decimal.Decimal(s) for s in HIVE_DECIMAL_TEXT]).to_pylist()
    assert got == list(HIVE_DECIMAL_TEXT.values())
    arr = pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-0.05")], pa.decimal128(5, 2))
    assert decimal_strings(arr).to_pylist() == ["1.5", None, "-0.05"]
    expect = base_hashes(["1.5", "-0.05"], "string").tolist()
    assert base_hashes(arr, "decimal(5,2)").tolist() == expect


def test_decimal_text_of_the_extremes():
    halves = pa.py_buffer(np.array([0, 1 << 63, M64, (1 << 63) - 1], dtype=np.uint64))
    arr = pa.Array.from_buffers(pa.decimal128(38, 0), 2, [None, halves])
    assert decimal_strings(arr).to_pylist() == [str(-(2**127)), str(2**127 - 1)]
    arr38 = pa.Array.from_buffers(pa.decimal128(38, 38), 2, [None, halves])
    assert decimal_strings(arr38).to_pylist() == [
        "-1.70141183460469231731687303715884105728",
        "1.70141183460469231731687303715884105727",
    ]


def test_kernels_match_the_transcribed_java_on_random_input():
    rng = np.random.default_rng(4)
    blobs = [rng.bytes(int(n)) for n in rng.integers(0, 100, 300)]
    assert base_hashes(blobs, "binary").tolist() == [py_hash64(b) for b in blobs]
    longs = rng.integers(-(2**63), 2**63 - 1, 2000, dtype=np.int64, endpoint=True)
    assert base_hashes(longs, "long").tolist() == [py_long_hash(int(v)) for v in longs]
    hashes = [*base_hashes(longs[:200], "long").tolist(), NULL_HASHCODE, -1, 0, -(2**63)]
    for m, k in [(64, 44), (62_400, 4), (95_872, 7), (64 * 4099, 64)]:
        f = OrcBloomFilter.from_index(k, utf8bitset=bytes(m // 8))
        assert [f.positions(h) for h in hashes] == [py_positions(h, k, m) for h in hashes]
        f.add_hashes(hashes)
        assert f.to_bitset_words().tolist() == py_words(hashes, k, m)
        assert f.test_hashes(hashes).all()


def test_positions_at_the_largest_size():
    # m = 2**31 - 64: every combined hash (< 2**31) is reduced, none wraps
    hashes = np.array([-1, 0x7FFFFFFF7FFFFFFF, -(2**63), -0x7FFFFFFF00000001], dtype=np.int64)
    out = np.empty((4, 64), dtype=np.uint32)
    kernels.probe_positions(hashes, 64, MAX_NUM_BITS, out)
    assert out.tolist() == [py_positions(int(h), 64, MAX_NUM_BITS) for h in hashes]


# ----------------------------------------------------------------------------- column kinds


def test_integer_widths_feed_the_same_long():
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32()):
        arr = pa.array([0, 1, 100], t)
        assert base_hashes(arr, "bigint").tolist() == [LONG_HASH[0], LONG_HASH[1], LONG_HASH[100]]
    # Java's ByteTreeWriter casts to byte: 300 is hashed as 44
    assert base_hashes([300], "tinyint").tolist() == base_hashes([44], "long").tolist()


def test_float_is_rounded_to_float32_then_promoted():
    assert base_hashes([0.1], "float").tolist() == [DOUBLE_HASH[7][1]]
    assert base_hashes(pa.array([0.1], pa.float32()), "float").tolist() == [DOUBLE_HASH[7][1]]
    # ORC C++ hashes the double it is given (pyorc passes Python floats)
    assert base_hashes([0.1], "float", writer="c++").tolist() == [DOUBLE_HASH[6][1]]
    assert base_hashes([-0.0, 0.0], "double").tolist() == [LONG_HASH[-(2**63)], 0]


def test_nan_is_canonical_in_java_and_raw_in_cpp():
    other_nan = np.array([0x7FF0000000000001, -1], dtype=np.int64).view(np.float64)
    java = base_hashes(other_nan, "double").tolist()
    assert java == [DOUBLE_HASH[2][1]] * 2
    cpp = base_hashes(other_nan, "double", writer="c++").tolist()
    assert cpp == [py_long_hash(0x7FF0000000000001), py_long_hash(-1)]


def test_varchar_truncates_and_char_pads_by_characters():
    vals = ["", "a", "ab", "abc", "é", "éé€", "日本語テキスト", "😀😀😀"]
    h = {s: py_hash64(s.encode()) for s in ["", "a", "ab", "é", "éé", "日本", "😀😀"]}
    assert base_hashes(vals, "varchar(2)").tolist() == [
        h[""],
        h["a"],
        h["ab"],
        h["ab"],
        h["é"],
        h["éé"],
        h["日本"],
        h["😀😀"],
    ]
    padded = ["   ", "a  ", "ab ", "abc", "é  ", "éé€", "日本語", "😀😀😀"]
    assert base_hashes(vals, "char(3)").tolist() == [py_hash64(s.encode()) for s in padded]
    assert (
        base_hashes(vals, OrcType(OrcKind.CHAR, 3)).tolist()
        == base_hashes(vals, "char", max_length=3).tolist()
    )


def test_dates_and_timestamps():
    days = [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2020, 3, 8)]
    assert base_hashes(days, "date").tolist() == [py_long_hash(d) for d in (-1, 0, 18329)]
    ms64 = pa.array([-1, 0, 86_400_000 * 18329 + 5], pa.date64())
    assert base_hashes(ms64, "date").tolist() == [py_long_hash(d) for d in (-1, 0, 18329)]

    # Naive = the wall clock; in a UTC writer the floored ms, with Java's +1 s quirk
    ns = pa.array([-1_500_000_001, -500_000_000, -1, 0, 999_999], pa.timestamp("ns"))
    floor_ms = [-1501, -500, -1, 0, 0]
    java_ms = [-1501, 500, 999, 0, 0]
    trunc_ms = [-1500, -500, 0, 0, 0]
    for writer, ms in (("java", java_ms), ("c++", floor_ms), ("pyarrow", trunc_ms)):
        got = base_hashes(ns, "timestamp", writer=writer).tolist()
        assert got == [py_long_hash(v) for v in ms], writer
        got = base_hashes(ns, "timestamp_instant", writer=writer).tolist()
        assert got == [py_long_hash(v) for v in ms], writer

    # An instant is hashed as the wall clock in the writer's zone (LA: UTC-8 / UTC-7)
    la = "America/Los_Angeles"
    instants = pa.array([0, 1583661600000, 1583650800000], pa.timestamp("ms", tz="UTC"))
    wall = [-8 * 3_600_000, 1583661600000 - 7 * 3_600_000, 1583650800000 - 8 * 3_600_000]
    got = base_hashes(instants, "timestamp", writer_timezone=la).tolist()
    assert got == [py_long_hash(v) for v in wall]
    # ... a naive value already is that wall clock
    naive = pa.array(wall, pa.timestamp("ms"))
    assert base_hashes(naive, "timestamp", writer_timezone=la).tolist() == got
    # ... and TIMESTAMP_INSTANT ignores the zone
    got = base_hashes(instants, "timestamp_instant", writer_timezone=la).tolist()
    assert got == [py_long_hash(v) for v in (0, 1583661600000, 1583650800000)]


def test_zone_rules_apply_after_2037_and_custom_zones():
    # pyarrow's zone kernels keep standard time after 2037; Java (and zoneinfo) do not
    ms = 3830852530909  # 2091-05-21T11:42:10.909Z, daylight time in Los Angeles and Berlin
    inst = pa.array([ms], pa.timestamp("ms", tz="UTC"))
    for zone, hours in (("America/Los_Angeles", -7), ("Europe/Berlin", 2)):
        got = base_hashes(inst, "timestamp", writer_timezone=zone, writer="c++").tolist()
        assert got == [py_long_hash(ms + hours * 3_600_000)], zone
    for zone, minutes in (("GMT+05:30", 330), ("GMT-08:00", -480), ("Etc/GMT+8", -480)):
        got = base_hashes(inst, "timestamp", writer_timezone=zone).tolist()
        assert got == [py_long_hash(ms + minutes * 60_000)], zone


def test_lists_maps_unions_booleans_structs():
    lists = pa.array([[1, 2, 3], [], None, [4]])
    assert base_hashes(lists, "list").tolist() == [py_long_hash(v) for v in (3, 0, 1)]
    maps = pa.array([[("a", 1)], []], pa.map_(pa.string(), pa.int64()))
    assert base_hashes(maps, "map").tolist() == [py_long_hash(1), py_long_hash(0)]
    union = pa.UnionArray.from_sparse(
        pa.array([0, 1, 1], pa.int8()), [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])]
    )
    assert base_hashes(union, "uniontype").tolist() == [py_long_hash(v) for v in (0, 1, 1)]

    f = OrcBloomFilter(1000, 0.05)
    f.add_values([True, False, None], "boolean")  # ORC Java feeds booleans nowhere
    f.add_values(pa.array([{"a": 1}]), "struct")
    assert f.popcount() == 0
    assert f.test_values([True, None], "boolean").tolist() == [True, False]
    f.add_values([True], "boolean", writer="c++")  # ORC C++ adds 0/1 (its bytes are buggy)
    assert f.test_longs([1]).tolist() == [True]


def test_nulls_dictionaries_chunks_and_views():
    f = OrcBloomFilter(1000, 0.01)
    dict_arr = pa.array(["x", "y", None, "x"]).dictionary_encode()
    f.add_values(dict_arr, "string")
    chunked = pa.chunked_array([pa.array(["x", None]), pa.array(["y", "z"])])
    assert f.test_values(chunked, "string").tolist() == [True, False, True, False]
    view = pa.array(["x", "q", None], pa.string_view())
    assert f.test_values(view, "string").tolist() == [True, False, False]
    assert f.test_strings(pa.array(["x", None], pa.large_string())).tolist() == [True, False]
    sliced = pa.array(["a", "x", "y", "b"]).slice(1, 2)
    assert f.test_strings(sliced).tolist() == [True, True]
    assert f.test_values(pa.array([], pa.string()), "string").tolist() == []
    assert f.test_longs([]).tolist() == []


def test_orc_type_names():
    assert OrcType.parse("bigint").kind is OrcKind.LONG
    assert OrcType.parse(4).kind is OrcKind.LONG
    assert OrcType.parse("varchar(10)") == OrcType(OrcKind.VARCHAR, 10)
    assert OrcType.parse("CHAR( 4 )") == OrcType(OrcKind.CHAR, 4)
    assert OrcType.parse("decimal(38,10)").kind is OrcKind.DECIMAL
    assert OrcType.parse("timestamp with local time zone").kind is OrcKind.TIMESTAMP_INSTANT
    assert OrcType.parse(18).kind is OrcKind.TIMESTAMP_INSTANT
    assert [k.proto_id for k in (OrcKind.BOOLEAN, OrcKind.DECIMAL, OrcKind.CHAR)] == [0, 14, 17]


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize("k", [0, -1, 65, 10_000, 2**32 - 1, True, 4.0, None])
def test_bad_num_hash_functions(k):
    with pytest.raises(InvalidParameterError):
        OrcBloomFilter.from_index(k, utf8bitset=bytes(8))


@pytest.mark.parametrize("n", [0, 1, 7, 9, 100])
def test_bad_utf8bitset_length(n):
    if n % 8 == 0 and n:
        OrcBloomFilter.from_index(4, utf8bitset=bytes(n))
        return
    with pytest.raises(InvalidBitsetError):
        OrcBloomFilter.from_index(4, utf8bitset=bytes(n))


def test_bad_bitsets():
    with pytest.raises(InvalidBitsetError, match="empty"):
        OrcBloomFilter.from_index(4, bitset_words=[])
    with pytest.raises(InvalidBitsetError):
        OrcBloomFilter.from_index(4, bitset_words=[1.5])
    with pytest.raises(InvalidBitsetError):
        OrcBloomFilter.from_index(4, bitset_words=[2**64])
    with pytest.raises(InvalidBitsetError):
        OrcBloomFilter.from_index(4, bitset_words=[[1, 2]])
    with pytest.raises(InvalidBitsetError):
        OrcBloomFilter.from_index(4, utf8bitset="not bytes")
    huge = np.broadcast_to(np.uint64(0), (MAX_NUM_BITS // 64 + 1,))  # no memory behind it
    with pytest.raises(InvalidBitsetError, match="larger than"):
        OrcBloomFilter.from_index(4, bitset_words=huge)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        OrcBloomFilter.from_index(4)
    with pytest.raises(InvalidParameterError, match="exactly one"):
        OrcBloomFilter.from_index(4, bitset_words=[1], utf8bitset=bytes(8))


@pytest.mark.parametrize(
    ("n", "fpp"),
    [(-1, 0.05), (1.5, 0.05), (True, 0.05), (10, 0.0), (10, 1.0), (10, math.nan), (10, "0.1"),
     (10**9, 1e-6), (2**63, 0.05), (1, 1e-30)],
)  # fmt: skip
def test_bad_constructor_arguments(n, fpp):
    with pytest.raises(InvalidParameterError):
        OrcBloomFilter(n, fpp)


def test_largest_constructible_filter_is_the_java_int_limit():
    n = 223_000_000  # 0.05: just under 2**31 bits
    assert optimal_num_bits(n, 0.05) <= MAX_NUM_BITS < optimal_num_bits(n * 2, 0.05)


def test_unsupported_values_and_kinds():
    f = OrcBloomFilter(100, 0.05)
    with pytest.raises(UnsupportedTypeError):
        f.add_values(["a"], "bigint")
    with pytest.raises(UnsupportedTypeError):
        f.add_values([1], "string")
    with pytest.raises(UnsupportedTypeError):
        f.add_values([1], "geometry")
    with pytest.raises(InvalidParameterError, match="maximum length"):
        f.add_values(["a"], "char")
    with pytest.raises(InvalidParameterError):
        f.add_values(["a"], "varchar(0)")
    with pytest.raises(InvalidParameterError):
        f.add_values([dt.datetime(2020, 1, 1)], "timestamp", writer_timezone=5)
    with pytest.raises(InvalidParameterError, match="unknown writer_timezone"):
        f.add_values(pa.array([0], pa.timestamp("s", tz="UTC")), "timestamp", writer_timezone="X/Y")
    with pytest.raises(InvalidParameterError, match="unknown ORC writer"):
        f.add_values([1], "long", writer="go")
    with pytest.raises(UnsupportedTypeError):
        f.add_longs(pa.array([2**64 - 1], pa.uint64()))
    with pytest.raises(UnsupportedTypeError):
        f.add_values(pa.array([2**63], pa.uint64()), "long")
    # not an ORC decimal (41 digits), but its text is still well defined
    assert base_hashes([decimal.Decimal("1E+40")], "decimal").tolist() == [
        py_hash64(b"1" + b"0" * 40)
    ]


def test_read_only_view_and_copy():
    f = OrcBloomFilter(100, 0.05)
    f.add_longs([7])
    view = OrcBloomFilter.from_index(f.num_hash_functions, utf8bitset=f.to_utf8bitset(), copy=False)
    assert not view.writable and view == f
    with pytest.raises(ReadOnlyFilterError):
        view.add_longs([1])
    g = view.copy()
    g.add_longs([1])
    assert g != f and g.test_longs([1, 7]).all()
    assert f != OrcBloomFilter.from_index(f.num_hash_functions + 1, utf8bitset=f.to_utf8bitset())
    assert repr(f).startswith("OrcBloomFilter(num_bits=")
    assert 0 < f.fill_ratio() < 1


# ----------------------------------------------------------------------------- properties

_int64 = st.integers(-(2**63), 2**63 - 1)
_k = st.integers(1, 64)
_words = st.integers(1, 40)


@given(st.lists(_int64, max_size=50), _k, _words)
def test_no_false_negatives_longs(values, k, words):
    f = OrcBloomFilter.from_index(k, utf8bitset=bytes(8 * words))
    f.add_longs(values)
    assert f.test_longs(values).all()
    assert f.test_hashes([py_long_hash(v) for v in values]).all()


@given(st.lists(st.floats(allow_nan=True), max_size=50), _k, _words)
def test_no_false_negatives_doubles(values, k, words):
    f = OrcBloomFilter.from_index(k, utf8bitset=bytes(8 * words))
    f.add_doubles(values)
    assert f.test_doubles(values).all()
    assert f.test_values(values, "double").all()


@given(st.lists(st.binary(max_size=40), max_size=30), st.lists(st.text(max_size=20), max_size=30))
def test_no_false_negatives_bytes_and_strings(blobs, texts):
    f = OrcBloomFilter(100, 0.05)
    f.add_bytes(blobs)
    f.add_strings(texts)
    assert f.test_bytes(blobs).all() and f.test_strings(texts).all()
    assert f.test_bytes([t.encode() for t in texts]).all()
    assert base_hashes(blobs, "binary").tolist() == [py_hash64(b) for b in blobs]


_Y1900 = dt.datetime(1900, 1, 1)
_Y2100 = dt.datetime(2100, 1, 1)
_KIND_VALUES = st.one_of(
    st.tuples(st.sampled_from(["tinyint", "smallint", "int", "bigint"]), st.lists(_int64)),
    st.tuples(st.sampled_from(["float", "double"]), st.lists(st.floats())),
    st.tuples(
        st.sampled_from(["string", "varchar(1)", "varchar(3)", "char(1)", "char(4)"]),
        st.lists(st.one_of(st.none(), st.text(max_size=8))),
    ),
    st.tuples(st.just("binary"), st.lists(st.binary(max_size=12))),
    st.tuples(
        st.sampled_from(["decimal(38,4)", "decimal"]),
        st.lists(st.decimals(min_value=-(10**33), max_value=10**33, places=4, allow_nan=False)),
    ),
    st.tuples(st.just("date"), st.lists(st.dates())),
    st.tuples(
        st.sampled_from(["timestamp", "timestamp_instant"]),
        st.lists(
            st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2100, 1, 1))
        ),
    ),
    st.tuples(st.just("list"), st.lists(st.lists(st.integers(0, 3), max_size=4))),
)


@given(
    _KIND_VALUES,
    st.sampled_from(["java", "c++", "pyarrow"]),
    st.sampled_from(["UTC", "America/Los_Angeles", "Asia/Kolkata"]),
    st.booleans(),
)
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_no_false_negatives_for_every_kind(kind_values, writer, zone, aware):
    kind, values = kind_values
    if kind == "decimal(38,4)":
        arr = pa.array(values, pa.decimal128(38, 4))
    elif kind.startswith("timestamp"):
        arr = pa.array(values, pa.timestamp("us", tz="UTC" if aware else None))
    else:
        arr = pa.array(values)
    f = OrcBloomFilter(max(len(values), 1), 0.05)
    f.add_values(arr, kind, writer_timezone=zone, writer=writer)
    found = f.test_values(arr, kind, writer_timezone=zone, writer=writer)
    assert found.tolist() == arr.is_valid().to_pylist()
    assert f.test_hashes(base_hashes(arr, kind, writer_timezone=zone, writer=writer)).all()


@given(st.lists(_int64, max_size=30), _k, _words)
def test_serialization_round_trips(values, k, words):
    f = OrcBloomFilter.from_index(k, utf8bitset=bytes(8 * words))
    f.add_longs(values)
    raw = f.to_utf8bitset()
    assert len(raw) == 8 * words
    signed = f.to_bitset_words().view(np.int64)
    for g in (
        OrcBloomFilter.from_index(k, utf8bitset=raw),
        OrcBloomFilter.from_index(k, utf8bitset=bytearray(raw), copy=False),
        OrcBloomFilter.from_index(k, bitset_words=signed.tolist()),
        OrcBloomFilter.from_index(k, bitset_words=f.to_bitset_words().tolist()),
        OrcBloomFilter.from_index(k, bitset_words=signed),
        OrcBloomFilter.from_index(k, bitset_words=raw),
    ):
        assert g == f and g.to_utf8bitset() == raw
        assert g.num_bits == 64 * words and g.num_hash_functions == k


@given(
    # |value| <= 10**19 at scale <= 18 stays within DECIMAL(38), even after rounding
    st.decimals(min_value=-(10**19), max_value=10**19, allow_nan=False, places=None),
    st.integers(0, 18),
)
def test_decimal_text_matches_python(value, scale):
    value = value.quantize(decimal.Decimal(1).scaleb(-scale), context=decimal.Context(prec=80))
    arr = pa.array([value], pa.decimal128(38, scale))
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    text = "0" if text in ("-0", "") else text
    assert decimal_strings(arr).to_pylist() == [text]


# ----------------------------------------------------------------------------- files


def _rebuild(orc, stripe, column, values, kind, fpp, **kw):
    """(ours, stored) filters of every row group of ``column`` in ``stripe``."""
    bfs = orc.bloom_filters(stripe, column)
    for g in orc.row_groups(stripe):
        ours = OrcBloomFilter(orc.row_index_stride, fpp)
        ours.add_values(values.slice(g.first_row, g.num_rows), kind, **kw)
        stored = OrcBloomFilter.from_index(
            bfs.num_hash_functions(g.index), utf8bitset=bfs.bitset(g.index)
        )
        yield g, ours, stored


def test_pyarrow_files_rebuild_bit_for_bit(tmp_path):
    read_orc = pytest.importorskip("bloomskip.orc.file").read_orc
    n = 2500
    i = np.arange(n, dtype=np.int64)
    ns = -1_000_000_000_000 + i * 3_600_000_123  # negative, sub-ms, crossing the epoch
    table = pa.table(
        {
            "l": pa.array(i * 7919 - 10**6),
            "i": pa.array((i * 31 - 5000).astype(np.int32)),
            "s16": pa.array((i % 3000 - 1500).astype(np.int16)),
            "d": pa.array(i / 7.0 - 100),
            "f": pa.array((i / 3.0).astype(np.float32)),
            "str": pa.array([None if j % 13 == 0 else f"é{j % 97}日本" for j in range(n)]),
            "bin": pa.array([bytes([j % 256, 255, 0]) for j in range(n)]),
            "dec": pa.array([decimal.Decimal(j * 25 - 30000).scaleb(-2) for j in range(n)],
                            pa.decimal128(12, 2)),
            "dec30": pa.array([decimal.Decimal(j * 10**9 + 7).scaleb(-5) for j in range(n)],
                              pa.decimal128(30, 5)),
            "date": pa.array((i - 1200).astype(np.int32), pa.date32()),
            "ts": pa.array(ns, pa.timestamp("ns")),
            "tsi": pa.array(ns // 1000, pa.timestamp("us", tz="UTC")),
            # ORC C++ adds list lengths only from batches with nulls (none without)
            "lst": pa.array([None if j % 7 == 0 else [0] * (j % 5) for j in range(n)],
                            pa.list_(pa.int32())),
        }
    )  # fmt: skip
    path = tmp_path / "pyarrow.orc"
    pa_orc.write_table(
        table, path, bloom_filter_columns=list(range(1, 14)), row_index_stride=1000,
        bloom_filter_fpp=0.05, compression="zstd",
    )  # fmt: skip
    orc = read_orc(path)
    assert orc.writer.writer == 1 and orc.row_index_stride == 1000
    for col in orc.columns[1:]:
        if not col.path or len(col.path) != 1:
            continue  # the list's element column
        values = table.column(col.path[0]).combine_chunks()
        for g, ours, stored in _rebuild(
            orc, 0, col.id, values, col.type_name, 0.05,
            writer_timezone=orc.writer_timezone(0), writer="pyarrow",
        ):  # fmt: skip
            assert ours == stored, (col.type_name, g)
            assert ours.num_hash_functions == stored.num_hash_functions == 4
    # floored (not truncated) milliseconds miss the negative sub-millisecond values
    ts = orc.column("ts")
    _, floored, stored = next(
        _rebuild(orc, 0, ts.id, table.column("ts").combine_chunks(), "timestamp", 0.05,
                 writer="c++")
    )  # fmt: skip
    assert (
        floored != stored
        and not stored.test_values(table.column("ts").slice(1, 1), "timestamp", writer="c++")[0]
    )


# ----------------------------------------------------------------------------- ORC Java


class JavaOrc:
    """ORC Java's hash, sizing and filter classes, reached through Spark's py4j gateway."""

    def __init__(self, spark):
        self.jvm = jvm = spark._jvm
        self.gw = gw = spark.sparkContext._gateway
        self.murmur3 = jvm.org.apache.orc.util.Murmur3
        cls = jvm.java.lang.Class.forName("org.apache.orc.util.BloomFilter")
        params = gw.new_array(jvm.java.lang.Class, 1)
        params[0] = jvm.java.lang.Long.TYPE
        self._long_hash = cls.getDeclaredMethod("getLongHash", params)  # package-private
        self._long_hash.setAccessible(True)
        self._args = gw.new_array(jvm.java.lang.Object, 1)

    def hash64(self, data: bytes) -> int:
        return self.murmur3.hash64(bytearray(data))

    def long_hash(self, v: int) -> int:
        self._args[0] = self.jvm.java.lang.Long(v)
        return self._long_hash.invoke(None, self._args)

    def double_hash(self, d: float) -> int:
        return self.long_hash(self.jvm.java.lang.Double.doubleToLongBits(d))

    def utf8bitset(self, bloom_filter) -> bytes:
        """The ``utf8bitset`` field ``BloomFilterIO.serialize`` writes for a filter."""
        builder = getattr(self.jvm.org.apache.orc, "OrcProto$BloomFilter").newBuilder()
        self.jvm.org.apache.orc.util.BloomFilterIO.serialize(builder, bloom_filter)
        assert builder.getNumHashFunctions() == bloom_filter.getNumHashFunctions()
        return bytes(builder.getUtf8Bitset().toByteArray())

    def words(self, bloom_filter) -> bytes:
        """``getBitSet()`` (the legacy ``bitset`` longs) as little-endian bytes."""
        longs = bloom_filter.getBitSet()
        buf = self.jvm.java.nio.ByteBuffer.allocate(8 * len(longs))
        buf.order(self.jvm.java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().put(longs)
        return bytes(buf.array())


@pytest.fixture(scope="module")
def java(spark):
    return JavaOrc(spark)


@pytest.mark.spark
def test_java_hash64_every_length_and_non_ascii(java):
    rng = np.random.default_rng(7)
    blobs = [rng.bytes(n) for n in range(41)] + [bytes(range(256)), b"\xff" * 17, b"\x80" * 9]
    blobs += [s.encode() for s in ["", "é", "€uro", "日本語テキスト", "😀", "a\x00b", "ÿ" * 9]]
    assert base_hashes(blobs, "binary").tolist() == [java.hash64(b) for b in blobs]
    assert [java.hash64(PATTERN[:n]) for n in range(41)] == HASH64_PREFIX


@pytest.mark.spark
def test_java_long_and_double_hashes(java):
    rng = np.random.default_rng(8)
    longs = list(LONG_HASH) + rng.integers(-(2**63), 2**63 - 1, 150, dtype=np.int64).tolist()
    longs += [2**k for k in range(63)] + [-(2**k) for k in range(64)]
    assert base_hashes(longs, "long").tolist() == [java.long_hash(v) for v in longs]
    doubles = [d for d, _ in DOUBLE_HASH] + [1.5, -2.25, 1e-300, -1e300, 2.0**-1074, 3.4e38]
    assert base_hashes(doubles, "double").tolist() == [java.double_hash(d) for d in doubles]
    assert [java.double_hash(d) for d, _ in DOUBLE_HASH] == [h for _, h in DOUBLE_HASH]


@pytest.mark.spark
def test_java_sizing(java):
    table = [(n, p) for n in (1, 3, 64, 999, 1000, 10_000, 65_536, 10**7) for p in
             (0.5, 0.25, 0.1, 0.05, 0.03, 0.01, 1e-3, 1e-5, 1e-9)]  # fmt: skip
    for n, p in table:
        bf = java.jvm.org.apache.orc.util.BloomFilter(n, p)
        ours = OrcBloomFilter(n, p)
        assert (ours.num_bits, ours.num_hash_functions) == (
            bf.getBitSize(),
            bf.getNumHashFunctions(),
        ), (n, p)
    for n, p, m, k in SIZES[::7]:
        bf = java.jvm.org.apache.orc.util.BloomFilter(n, p)
        assert (bf.getBitSize(), bf.getNumHashFunctions()) == (m, k)


@pytest.mark.spark
def test_filter_built_by_java_serializes_to_the_same_words(java):
    rng = np.random.default_rng(9)
    longs = [*rng.integers(-(2**63), 2**63 - 1, 200, dtype=np.int64).tolist(), 0, -1, 2**63 - 1]
    doubles = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.1, 1e308]
    strings = ["", "a", "hello", "é", "日本語", "😀 emoji", "x" * 33]
    blobs = [bytes([i, 255 - i, 128]) for i in range(30)]
    for n, p in [(10_000, 0.05), (1000, 0.01), (64, 0.3)]:
        jf = java.jvm.org.apache.orc.util.BloomFilterUtf8(n, p)
        legacy = java.jvm.org.apache.orc.util.BloomFilter(n, p)
        for v in longs:
            jf.addLong(v)
            legacy.addLong(v)
        for d in doubles:
            jf.addDouble(d)
        for s in strings:
            jf.addString(s)
        for b in blobs:
            jf.addBytes(bytearray(b), 0, len(b))
        jf.add(None)
        ours = OrcBloomFilter(n, p)
        ours.add_longs(longs)
        ours.add_doubles(doubles)
        ours.add_strings(strings)
        ours.add_bytes(blobs)
        ours.add_hashes([NULL_HASHCODE])
        assert ours.num_hash_functions == jf.getNumHashFunctions()
        assert ours.to_utf8bitset() == java.utf8bitset(jf) == java.words(jf)
        only_longs = OrcBloomFilter(n, p)
        only_longs.add_longs(longs)
        legacy_words = np.frombuffer(java.words(legacy), dtype="<u8")
        assert only_longs.to_bitset_words().tolist() == legacy_words.tolist()
        back = OrcBloomFilter.from_index(jf.getNumHashFunctions(), utf8bitset=java.utf8bitset(jf))
        assert back == ours
        assert jf.testLong(longs[0]) and back.test_longs(longs[:1])[0]


@pytest.mark.spark
@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(-(10**38) + 1, 10**38 - 1),
    st.integers(0, 38),
)
def test_java_decimal_text(java, unscaled, scale):
    value = decimal.Decimal(unscaled).scaleb(-scale, context=decimal.Context(prec=80))
    arr = pa.array([value], pa.decimal128(38, scale))
    hive = java.jvm.org.apache.hadoop.hive.serde2.io.HiveDecimalWritable(format(value, "f"))
    assert decimal_strings(arr).to_pylist() == [hive.toString()]


@pytest.mark.spark
def test_java_utf8_truncation_and_padding(java):
    utf8 = java.jvm.org.apache.orc.impl.Utf8Utils
    values = ["", "a", "abcdef", "é", "éé€x", "日本語テキスト", "😀😀", "a😀b", "ÿÿÿÿÿÿ"]
    for n in (1, 2, 3, 5):
        trunc, pad = [], []
        for v in values:
            b = v.encode()
            trunc.append(b[: utf8.truncateBytesTo(n, bytearray(b), 0, len(b))])
            chars = utf8.charLength(bytearray(b), 0, len(b))
            pad.append(trunc[-1] if chars >= n else b + b" " * (n - chars))
        assert base_hashes(values, f"varchar({n})").tolist() == [java.hash64(b) for b in trunc]
        assert base_hashes(values, f"char({n})").tolist() == [java.hash64(b) for b in pad]


@pytest.mark.spark
def test_java_zone_offsets(java):
    """Wall clock of an instant = ``SerializationUtils.convertToUtc(zone, millis)``."""
    utils = java.jvm.org.apache.orc.impl.SerializationUtils
    rng = np.random.default_rng(10)
    ms = np.concatenate(
        [
            rng.integers(-2_208_988_800_000, 4_102_444_800_000, 60),  # 1900 .. 2100
            np.array([1583661599999, 1583661600000, 1604217599999, 1604217600000, -1, 0]),
        ]
    )
    for zone in ("America/Los_Angeles", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"):
        tz = java.jvm.java.util.TimeZone.getTimeZone(zone)
        expect = [utils.convertToUtc(tz, int(v)) for v in ms]
        arr = pa.array(ms, pa.timestamp("ms", tz="UTC"))
        got = base_hashes(arr, "timestamp", writer_timezone=zone, writer="c++")
        assert got.tolist() == [py_long_hash(v) for v in expect], zone


@pytest.mark.spark
def test_spark_files_rebuild_bit_for_bit(spark, java, tmp_path):
    """ORC Java 2.3.0 through Spark, the JVM in America/Los_Angeles: every row group of
    every column equals a rebuild, timestamps across a DST switch and the (-1 s, 0) quirk."""
    read_orc = pytest.importorskip("bloomskip.orc.file").read_orc
    n = 2500
    tz_class = java.jvm.java.util.TimeZone
    before = tz_class.getDefault()
    micros = np.where(
        np.arange(n) < 1000,
        -2_000_000 + np.arange(n) * 3_001,  # -2 s .. +1 s in 3.001 ms steps
        1583650000_000000 + (np.arange(n) - 1000) * 36_000_001,  # across 2020-03-08 10:00Z
    )
    df = spark.range(n).selectExpr(
        "id",
        "id * 7919 - 1000000 as l",
        "cast(id * 31 - 5000 as int) as i",
        "cast(id % 3000 - 1500 as smallint) as sm",
        "cast(id % 256 - 128 as tinyint) as ti",
        "cast(id / 3.0 as float) as f",
        "id / 7.0 - 100 as d",
        "if(id % 13 = 0, null, concat('é', id % 97, '日本')) as s",
        "cast(concat('b', id % 50) as binary) as b",
        "cast((id - 1250) / 8 as decimal(10,3)) as dec",
        "cast(id * 123456789.12345 as decimal(30,5)) as dec30",
        "date_add(date'1969-12-25', cast(id as int)) as dt",
        "timestamp_micros(if(id < 1000, -2000000 + id * 3001, "
        "1583650000000000 + (id - 1000) * 36000001)) as ts",
        "id % 2 = 0 as bo",
    )
    cols = "l,i,sm,ti,f,d,s,b,dec,dec30,dt,ts,bo"
    path = str(tmp_path / "spark")
    tz_class.setDefault(tz_class.getTimeZone("America/Los_Angeles"))
    try:
        (
            df.coalesce(1)
            .sortWithinPartitions("id")
            .write.option("orc.bloom.filter.columns", cols)
            .option("orc.bloom.filter.fpp", "0.05")
            .option("orc.row.index.stride", "1000")
            .option("compression", "zstd")
            .orc(path)
        )
    finally:
        tz_class.setDefault(before)
    import glob

    (file,) = glob.glob(f"{path}/*.orc")
    orc = read_orc(file)
    assert orc.writer.writer == 0 and orc.writer_timezone(0) == "America/Los_Angeles"
    table = pa_orc.read_table(file)
    checked = 0
    for name in cols.split(","):
        col = orc.column(name)
        if name == "ts":
            values = pa.array(micros, pa.timestamp("us", tz="UTC"))
        else:
            values = table.column(name).combine_chunks()
        for g, ours, stored in _rebuild(
            orc, 0, col.id, values, col.type_name, 0.05,
            writer_timezone=orc.writer_timezone(0), writer="java",
        ):  # fmt: skip
            assert ours == stored, (name, col.type_name, g)
            checked += 1
    assert checked == 13 * 3
    # the (-1 s, 0) quirk is in row group 0: floored milliseconds do not rebuild it
    ts_utc = pa.array(micros, pa.timestamp("us", tz="UTC"))
    _, floored, stored = next(
        _rebuild(orc, 0, orc.column("ts").id, ts_utc, "timestamp", 0.05,
                 writer_timezone="America/Los_Angeles", writer="c++")
    )  # fmt: skip
    assert floored != stored


@pytest.mark.spark
def test_java_writer_char_and_varchar_files(java, tmp_path):
    """ORC Java's own writer API (Spark writes CHAR as STRING): CHAR pads, VARCHAR cuts."""
    from py4j.java_gateway import get_field, set_field

    read_orc = pytest.importorskip("bloomskip.orc.file").read_orc
    jvm = java.jvm
    schema = jvm.org.apache.orc.TypeDescription.fromString("struct<c:char(5),v:varchar(3)>")
    conf = jvm.org.apache.hadoop.conf.Configuration()
    opts = (
        jvm.org.apache.orc.OrcFile.writerOptions(conf)
        .setSchema(schema)
        .bloomFilterColumns("c,v")
        .bloomFilterFpp(0.05)
        .rowIndexStride(1000)
    )
    path = str(tmp_path / "char.orc")
    writer = jvm.org.apache.orc.OrcFile.createWriter(jvm.org.apache.hadoop.fs.Path(path), opts)
    words = ["", "a", "ab", "é", "日本語テキスト", "😀x", "abcdefgh", "ÿé€"]
    values = [words[j % len(words)] + ("" if j % 3 else str(j % 10)) for j in range(1200)]
    batch = schema.createRowBatch(1200)
    c, v = get_field(batch, "cols")
    for j, s in enumerate(values):
        b = bytearray(s.encode())
        c.setVal(j, b)
        v.setVal(j, b)
    set_field(batch, "size", 1200)
    writer.addRowBatch(batch)
    writer.close()
    orc = read_orc(path)
    arr = pa.array(values)
    for col in (1, 2):
        kind = orc.column(col).type_name
        assert kind == ("char(5)", "varchar(3)")[col - 1]
        for g, ours, stored in _rebuild(orc, 0, col, arr, kind, 0.05):
            assert ours == stored, (kind, g)


def test_decimal256_and_negative_scales():
    wide = pa.array(
        [decimal.Decimal("1.50"), decimal.Decimal("-1" + "0" * 40)], pa.decimal256(60, 10)
    )
    assert decimal_strings(wide).to_pylist() == ["1.5", "-1" + "0" * 40]
    neg = pa.array([decimal.Decimal("1E+3"), decimal.Decimal("-2E+3")], pa.decimal128(3, -3))
    assert decimal_strings(neg).to_pylist() == ["1000", "-2000"]
    assert decimal_strings(pa.array([5, -7])).to_pylist() == ["5", "-7"]
    mixed = [decimal.Decimal("1.5"), decimal.Decimal("12345678901234567890123456789012345678")]
    assert decimal_strings(mixed).to_pylist() == ["1.5", str(mixed[1])]  # decimal256(48, 10)


def test_pyorc_files_and_the_cpp_writer_quirks():
    """pyorc (ORC C++ 2.3.1), writer zone America/Los_Angeles: VARCHAR and timestamps
    across the epoch rebuild with ``writer="c++"`` (floored ms, no Java quirk). Pinned
    ORC C++ bugs a reader must not trust: FLOAT hashes the double it was given, not the
    float it stores; CHAR(n) hashes the unpadded buffer over the padded length."""
    pyorc = pytest.importorskip("pyorc")
    import io
    import zoneinfo

    read_orc = pytest.importorskip("bloomskip.orc.file").read_orc
    la = "America/Los_Angeles"
    start = dt.datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=dt.UTC)
    rows = [
        (0.1 * i, f"a{i % 7}", "é" * (i % 3), start + dt.timedelta(seconds=i * 3.7))
        for i in range(2500)
    ]
    buf = io.BytesIO()
    with pyorc.Writer(
        buf, "struct<f:float,c:char(4),v:varchar(2),t:timestamp>",
        bloom_filter_columns=["f", "c", "v", "t"], bloom_filter_fpp=0.05,
        row_index_stride=1000, timezone=zoneinfo.ZoneInfo(la),
    ) as w:  # fmt: skip
        for r in rows:
            w.write(r)
    orc = read_orc(buf.getvalue())
    assert orc.writer.writer == 1 and orc.writer_timezone(0) == la
    f, c, v, t = (list(col) for col in zip(*rows, strict=True))
    ts = pa.array(t, pa.timestamp("us", tz="UTC"))
    for col, kind, values in ((3, "varchar(2)", pa.array(v)), (4, "timestamp", ts)):
        for g, ours, stored in _rebuild(orc, 0, col, values, kind, 0.05, writer_timezone=la,
                                        writer="c++"):  # fmt: skip
            assert ours == stored, (kind, g)
    floats = pa.array(f, pa.float64())
    for _g, ours, stored in _rebuild(orc, 0, 1, floats, "float", 0.05, writer="c++"):
        assert ours == stored  # the unrounded doubles ...
    java = next(_rebuild(orc, 0, 1, floats, "float", 0.05, writer="java"))
    assert java[1] != java[2]  # ... not the float32 values the column holds
    _, padded, stored = next(_rebuild(orc, 0, 2, pa.array(c), "char(4)", 0.05))
    assert padded != stored
    # the column holds "a1  ", the filter does not (pyorc's buffer had NULs after "a1")
    assert not stored.test_strings(["a1  "])[0]
