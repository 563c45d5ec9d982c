"""Predicates, tables and truth for the no-false-negative property tests of every format.

Hypothesis strategies for columns of every type, palettes of values, tables with row
groups, literals in every SQL form and predicate trees; the truth (DuckDB over the table
read whole, and an exact SQL oracle); and the checks that every unit holding a matching
row may match. Shared by the Parquet and ORC property tests.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import math
import os
import struct
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, note
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from bloomskip.expr.expressions import Literal
from bloomskip.parquet import probe, prune
from bloomskip.parquet.prune import STAGES

duckdb = pytest.importorskip("duckdb")


# No shrinking: every example writes files, and shrinking ran for minutes. A failure
# names the predicate, the stages, the row group, its reason and a matching row.
SETTINGS = dict(
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PREDICATES_PER_FILE = 8
# More examples when hunting: BLOOMSKIP_PRUNE_EXAMPLES=10 runs ten times as many.
SCALE = float(os.environ.get("BLOOMSKIP_PRUNE_EXAMPLES", "1"))


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


_EPOCH = dt.date(1970, 1, 1)
_DAY_NS = 86_400 * 10**9
_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}

# ---------------------------------------------------------------------------- columns


@dataclass(frozen=True)
class Col:
    """A column of the generated tables. ``st.x`` is the field of struct column ``st``."""

    name: str
    kind: str  # int, float, decimal, string, binary, date, ts, bool
    type: pa.DataType


ALL_COLUMNS = [
    Col("i8", "int", pa.int8()),
    Col("i16", "int", pa.int16()),
    Col("i32", "int", pa.int32()),
    Col("i64", "int", pa.int64()),
    Col("u8", "int", pa.uint8()),
    Col("u16", "int", pa.uint16()),
    Col("u32", "int", pa.uint32()),
    Col("u64", "int", pa.uint64()),
    Col("f32", "float", pa.float32()),
    Col("f64", "float", pa.float64()),
    Col("dt", "date", pa.date32()),
    Col("ts_ms", "ts", pa.timestamp("ms")),
    Col("ts_ms_tz", "ts", pa.timestamp("ms", tz="UTC")),
    Col("ts_us", "ts", pa.timestamp("us")),
    Col("ts_us_tz", "ts", pa.timestamp("us", tz="UTC")),
    Col("ts_ns", "ts", pa.timestamp("ns")),
    Col("ts_ns_ny", "ts", pa.timestamp("ns", tz="America/New_York")),
    Col("d5", "decimal", pa.decimal128(5, 2)),
    Col("d19", "decimal", pa.decimal128(19, 4)),
    Col("d38", "decimal", pa.decimal128(38, 10)),
    Col("s", "string", pa.string()),
    Col("bin", "binary", pa.binary()),
    Col("fsb", "binary", pa.binary(3)),
    Col("b", "bool", pa.bool_()),
    Col("st.x", "int", pa.int32()),
]
BY_NAME = {c.name: c for c in ALL_COLUMNS}
UNSIGNED = {"u8", "u16", "u32", "u64"}

# Spark has no unsigned integers; decimals of every storage; LTZ and NTZ timestamps.
SPARK_COLUMNS = [
    BY_NAME[n] for n in ("i8", "i16", "i32", "i64", "f32", "f64", "dt", "s", "bin", "b", "st.x")
] + [
    Col("ts", "ts", pa.timestamp("us", tz="UTC")),
    Col("ts_ntz", "ts", pa.timestamp("us")),
    Col("d9", "decimal", pa.decimal128(9, 2)),
    Col("d18", "decimal", pa.decimal128(18, 2)),
    Col("d19", "decimal", pa.decimal128(19, 4)),
    Col("d38", "decimal", pa.decimal128(38, 10)),
]


def _dec(unscaled: int, scale: int) -> Decimal:
    """``unscaled * 10**-scale``, exactly (the default context rounds to 28 digits)."""
    return Decimal(f"{unscaled}E-{scale}")


def _int_range(t: pa.DataType) -> tuple[int, int]:
    info = np.iinfo(t.to_pandas_dtype())
    return int(info.min), int(info.max)


# Timestamps within years 0001..9999 (ns: the whole int64 range but the two ends,
# which DuckDB reserves for +-infinity); dates likewise.
_MIN_US, _MAX_US = -62_135_596_800 * 10**6, 253_402_300_799_999_999
_DATE_MIN, _DATE_MAX = -719_162, 2_932_896


def _ts_range(unit: str) -> tuple[int, int]:
    if unit == "ns":
        return -(2**63) + 10**9, 2**63 - 10**9
    per_us = {"ms": 1000, "us": 1, "s": 10**6}[unit]
    return -(-_MIN_US // per_us), _MAX_US // per_us


# -------------------------------------------------------------------- value strategies


def values_of(col: Col) -> st.SearchStrategy:
    """Python values a column may hold (ints for dates and timestamps, in the unit)."""
    t, k = col.type, col.kind
    if k == "int":
        lo, hi = _int_range(t)
        edges = (lo, hi, lo + 1, hi - 1, 0, 1, -1, 2**31 - 1, 2**31, 2**53 + 1)
        edges = [v for v in edges if lo <= v <= hi]
        return st.one_of(
            st.sampled_from(edges), st.integers(max(lo, -300), min(hi, 300)), st.integers(lo, hi)
        )
    if k == "float":
        width = 32 if pa.types.is_float32(t) else 64
        specials = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.5, 0.1, 1e16, 2.0**53]
        specials += [float(np.finfo(np.float32).max), 1e-45] if width == 32 else [5e-324, 1e308]
        specials = [float(np.float32(x)) if width == 32 else x for x in specials]
        return st.one_of(st.sampled_from(specials), st.floats(width=width))
    if k == "decimal":
        p, s = t.precision, t.scale
        top = 10**p - 1
        edges = [0, top, -top, 1, 15 * 10 ** (s - 1), -7 * 10**s]
        return st.one_of(
            st.sampled_from(edges),
            st.integers(-min(top, 10**6), min(top, 10**6)),
            st.integers(-top, top),
        ).map(lambda k: _dec(k, s))
    if k == "string":
        chars = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
        edges = ["", "'", "a''b", "\\", "\\x41", "é", "中文", "😀", "A", "a" * 70 + "b", "a" * 70]
        return st.one_of(st.sampled_from(edges), st.text(chars, max_size=10))
    if k == "binary":
        if pa.types.is_fixed_size_binary(t):
            w = t.byte_width
            edges = [b"\x00" * w, b"\xff" * w, b"abc"[:w].ljust(w, b"\\")]
            return st.one_of(st.sampled_from(edges), st.binary(min_size=w, max_size=w))
        edges = [b"", b"\xff", b"\\xff", b"\x00", b"A", b"'"]
        return st.one_of(st.sampled_from(edges), st.binary(max_size=8))
    if k == "date":
        edges = [0, -1, 1, _DATE_MIN, _DATE_MAX, 10_957, -141_428]
        return st.one_of(st.sampled_from(edges), st.integers(_DATE_MIN, _DATE_MAX))
    if k == "ts":
        lo, hi = _ts_range(t.unit)
        per = _UNIT_NS[t.unit]
        day = _DAY_NS // per
        edges = [0, -1, 1, lo, hi, 1000, 10**6, day, -day, 1_700_000_000 * 10**9 // per]
        return st.one_of(
            st.sampled_from([v for v in edges if lo <= v <= hi]),
            st.integers(-3 * day, 3 * day),
            st.integers(lo, hi),
        )
    if k == "bool":
        return st.booleans()
    raise AssertionError(k)


def palettes_for(columns: list[Col]) -> st.SearchStrategy[dict[str, list]]:
    return st.fixed_dictionaries(
        {c.name: st.lists(values_of(c), min_size=1, max_size=6) for c in columns}
    )


def seeded_palettes(columns: list[Col], seed: int) -> dict[str, list]:
    """Palettes for the slow writer (Spark): seeded, with every edge value of a type."""
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {}
    for c in columns:
        t, k = c.type, c.kind
        if k == "int":
            lo, hi = _int_range(t)
            vals = [lo, hi, 0, -1] + [int(v) for v in rng.integers(max(lo, -999), min(hi, 999), 4)]
            vals += [int(rng.integers(lo, hi, endpoint=True, dtype=np.int64))]
        elif k == "float":
            f32 = pa.types.is_float32(t)
            vals = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.1, 1e16]
            vals += [float(v) for v in rng.normal(0, 1000, 4)]
            if f32:
                vals = [float(np.float32(v)) for v in vals]
        elif k == "decimal":
            top, s = 10**t.precision - 1, t.scale
            vals = [_dec(v, s) for v in (0, top, -top, 1, -75 * 10 ** (s - 1))]
            vals += [_dec(int(v), s) for v in rng.integers(-min(top, 10**6), min(top, 10**6), 4)]
        elif k == "string":
            vals = ["", "it's", "\\", "é中😀", "a" * 70 + "z"]
            vals += [f"user_{v}" for v in rng.integers(0, 10**6, 4)]
        elif k == "binary":
            vals = [b"", b"\xff\x00", b"\\xff", b"'"] + [bytes(rng.bytes(3)) for _ in range(4)]
        elif k == "date":
            vals = [0, -1, _DATE_MIN, _DATE_MAX, -141_428]
            vals += [int(v) for v in rng.integers(-30_000, 30_000, 4)]
        elif k == "ts":
            lo, hi = _ts_range(t.unit)
            vals = [0, -1, 1, lo, hi, 86_400 * 10**6]
            vals += [int(v) for v in rng.integers(-(10**15), 10**15, 4)]
        else:
            vals = [True, False]
        out[c.name] = vals
    return out


# ----------------------------------------------------------------------------- tables


def build_table(columns: list[Col], palettes: dict[str, list], seed: int, groups: list[int]):
    """Rows in blocks (one per intended row group), each block drawing from a random
    subset of each column's palette, so values are present in some groups and absent
    (yet often inside min/max) in others; some blocks are all null."""
    rng = np.random.default_rng(seed)
    n = sum(groups)
    arrays: dict[str, pa.Array] = {}
    for c in columns:
        pal = palettes[c.name]
        out: list = []
        for size in groups:
            mode = rng.random()
            if mode < 0.1:
                out += [None] * size
                continue
            k = int(rng.integers(1, len(pal) + 1))
            subset = [pal[i] for i in rng.choice(len(pal), size=k, replace=False)]
            idx = rng.integers(0, k, size=size)
            nulls = rng.random(size) < (0.0 if mode < 0.5 else 0.25)
            out += [None if z else subset[i] for i, z in zip(idx, nulls, strict=True)]
        if c.name == "st.x":
            parent_null = rng.random(n) < 0.1
            arrays["st"] = pa.StructArray.from_arrays(
                [pa.array(out, c.type)], names=["x"], mask=pa.array(parent_null)
            )
        else:
            arrays[c.name] = pa.array(out, c.type)
    return pa.table(arrays)


# --------------------------------------------------------------------------- literals


@dataclass(frozen=True)
class Lit:
    """A literal as SQL text and its exact meaning for the oracle:
    ``("null",)``, ``("num", Fraction)``, ``("nan",)``, ``("inf", +1/-1)``, ``("str", s)``,
    ``("bytes", b)``, ``("ns", nanoseconds since the epoch)``, ``("bool", b)``."""

    sql: str
    key: tuple


NULL = Lit("NULL", ("null",))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _num(text: str) -> Lit:
    body = text.strip("'")
    return Lit(text, ("num", Fraction(Decimal(body))))


def _ns_text(ns: int, digits: int = 9) -> str:
    """``YYYY-MM-DD HH:MM:SS.fffffffff`` for an instant (nanoseconds since the epoch)."""
    days, rest = divmod(ns, _DAY_NS)
    day = _EPOCH + dt.timedelta(days=days)
    secs, frac = divmod(rest, 10**9)
    h, m, s = secs // 3600, secs // 60 % 60, secs % 60
    text = f"{day.isoformat()} {h:02d}:{m:02d}:{s:02d}"
    if digits:
        text += "." + f"{frac:09d}"[:digits]
    return text


def _ns_ok(ns: int) -> bool:
    return _MIN_US * 1000 <= ns <= _MAX_US * 1000 + 999


@st.composite
def literals(draw, col: Col, palette: list) -> Lit:
    """One literal for ``col``: a present value, a near miss or an edge, in one of the
    SQL forms an engine accepts for the column's type."""
    if draw(st.integers(0, 24)) == 0:
        return NULL
    k, t = col.kind, col.type
    v = draw(st.one_of(st.sampled_from(palette), values_of(col)))
    if k == "int":
        lo, hi = _int_range(t)
        v = draw(st.sampled_from([v, v, v + 1, v - 1, lo - 1, hi + 1]))
        form = draw(st.sampled_from(["plain", "plain", "dot0", "e0", "str", "half", "long"]))
        text = {
            "plain": str(v),
            "dot0": f"{v}.0",
            "e0": f"{v}e0",
            "str": f"'{v}'",
            "half": f"{v}.5",
            "long": f"{v}." + "0" * 38 + "1",  # more than DECIMAL(38): DuckDB reads a DOUBLE
        }[form]
        return _num(text)
    if k == "float":
        f32 = pa.types.is_float32(t)
        if draw(st.booleans()) and math.isfinite(v):
            v = math.nextafter(v, draw(st.sampled_from([math.inf, -math.inf])))
        if math.isnan(v):
            return Lit(draw(st.sampled_from(["'NaN'", "'nan'"])), ("nan",))
        if math.isinf(v):
            sign = "" if v > 0 else "-"
            word = draw(st.sampled_from(["Infinity", "inf"]))
            return Lit(f"'{sign}{word}'", ("inf", 1 if v > 0 else -1))
        texts = [repr(v), "-0.0", "0.0", "0", "1e3", "1e400", "-1e400", "3.5e38"]
        if f32:
            texts.append(str(np.float32(v)))
        exact = format(Decimal(v), "f")
        if len(exact) <= 60:
            texts.append(exact)
        text = draw(st.sampled_from(texts))
        return _num(text)
    if k == "decimal":
        with decimal.localcontext(prec=100):  # exact arithmetic for DECIMAL(38)
            step = Decimal(1).scaleb(-t.scale)
            v = draw(st.sampled_from([v, v, v + step, v - step, v + step / 10]))
        plain = format(v, "f")
        texts = [
            plain,
            str(v),  # may be 0E-10 or 1.2E+3: scientific, a DOUBLE in DuckDB and Spark
            plain + ("" if "." in plain else ".") + "000",
            f"'{plain}'",
            f"{plain}e0",
            plain + ("" if "." in plain else ".") + "0" * 40,
            plain + ("" if "." in plain else ".") + "0" * 40 + "1",
        ]
        return _num(draw(st.sampled_from(texts)))
    if k == "string":
        v = draw(st.sampled_from([v, v, v + "x", v[:-1], v.upper(), " " + v]))
        if draw(st.integers(0, 4)) == 0:
            return Lit(f"X'{v.encode().hex()}'", ("bytes", v.encode()))
        return Lit(_quote(v), ("str", v))
    if k == "binary":
        fixed = pa.types.is_fixed_size_binary(t)
        variants = [v, v, v + b"\x00", v[:-1], bytes([x ^ 1 for x in v])]
        v = draw(st.sampled_from(variants if not fixed else [v, v, variants[4], v + b"!"]))
        forms = ["hex", "hex", "escape"]
        if all(32 <= x < 127 and x not in b"'\\" for x in v):
            forms.append("text")
        form = draw(st.sampled_from(forms))
        if form == "hex":
            return Lit(f"X'{v.hex()}'", ("bytes", v))
        if form == "text":
            return Lit(_quote(v.decode()), ("str", v.decode()))
        text = "".join(f"\\x{x:02x}" for x in v)  # DuckDB's escape form for a BLOB
        return Lit(_quote(text), ("str", text))
    if k == "date":
        v = draw(st.sampled_from([v, v, v + 1, v - 1]))
        if not _DATE_MIN <= v <= _DATE_MAX:
            v = 0
        iso = (_EPOCH + dt.timedelta(days=v)).isoformat()
        ns = v * _DAY_NS
        forms = [
            (f"DATE '{iso}'", ns),
            (f"'{iso}'", ns),
            (f"TIMESTAMP '{iso} 00:00:00'", ns),
            (f"TIMESTAMP '{iso} 00:00:00.0000001'", ns + 100),
            (f"TIMESTAMP '{iso} 12:34:56'", ns + 45_296 * 10**9),
            (f"'{iso} 12:34:56.5'", ns + 45_296_500_000_000),
        ]
        if v < _DATE_MAX:
            forms.append((f"TIMESTAMP '{iso} 23:59:59.9999999'", ns + _DAY_NS - 100))
        text, key = draw(st.sampled_from(forms))
        return Lit(text, ("ns", key))
    if k == "ts":
        per = _UNIT_NS[t.unit]
        ns = v * per
        ns = draw(st.sampled_from([ns, ns, ns + per, ns - per, ns + 1, ns - 1, ns + 1000]))
        if not all(_ns_ok(ns + d * 10**9) for d in (-7200, 0, 7200)):
            ns = 0
        digits = draw(st.sampled_from([9, 6, 3, 0]))
        text = _ns_text(ns, 9)
        if digits < 9 and ns % (10 ** (9 - digits)) == 0:
            text = _ns_text(ns, digits)
        forms = [(f"TIMESTAMP '{text}'", ns), (f"'{text}'", ns)]
        if t.tz is not None:
            shifted = _ns_text(ns + 7200 * 10**9, 9)
            forms += [
                (f"'{shifted}+02:00'", ns),
                (f"TIMESTAMPTZ '{shifted}+02:00'", ns),
                # A TIMESTAMP literal's offset: applied by some readers, ignored by
                # PostgreSQL and DuckDB (wall clock, here read as UTC).
                (f"TIMESTAMP '{shifted}+02:00'", ns),
            ]
        if ns % _DAY_NS == 0:
            forms.append((f"DATE '{_ns_text(ns, 0)[:10]}'", ns))
        text, key = draw(st.sampled_from(forms))
        return Lit(text, ("ns", key))
    if k == "bool":
        return draw(
            st.sampled_from(
                [
                    Lit("true", ("bool", True)),
                    Lit("false", ("bool", False)),
                    Lit("TRUE", ("bool", True)),
                    Lit("FALSE", ("bool", False)),
                ]
            )
        )
    raise AssertionError(k)


# ------------------------------------------------------------------------- predicates

LEAF_OPS = ["=", "=", "!=", "in", "in", "not in", "is null", "is not null", "nsd", "lit="]
BOOL_OPS = ["bare", "is true", "is false", "is not true", "is not false"]


@dataclass(frozen=True)
class Leaf:
    op: str
    col: Col
    lits: tuple[Lit, ...] = ()

    def sql(self) -> str:
        c = self.col.name
        lits = ", ".join(lit.sql for lit in self.lits)
        return {
            "=": f"{c} = {lits}",
            "lit=": f"{lits} = {c}",
            "!=": f"{c} != {lits}",
            "in": f"{c} IN ({lits})",
            "not in": f"{c} NOT IN ({lits})",
            "is null": f"{c} IS NULL",
            "is not null": f"{c} IS NOT NULL",
            "nsd": f"{c} IS NOT DISTINCT FROM {lits}",
            "bare": c,
            "is true": f"{c} IS TRUE",
            "is false": f"{c} IS FALSE",
            "is not true": f"{c} IS NOT TRUE",
            "is not false": f"{c} IS NOT FALSE",
        }[self.op]


@dataclass(frozen=True)
class Node:
    op: str  # and, or, not
    kids: tuple

    def sql(self) -> str:
        if self.op == "not":
            return f"NOT ({self.kids[0].sql()})"
        return "(" + f" {self.op.upper()} ".join(k.sql() for k in self.kids) + ")"


@st.composite
def leaves(draw, columns: list[Col], palettes: dict[str, list]) -> Leaf:
    col = draw(st.sampled_from(columns))
    ops = LEAF_OPS + (BOOL_OPS if col.kind == "bool" else [])
    op = draw(st.sampled_from(ops))
    if op in ("is null", "is not null", "bare") or op.startswith("is "):
        return Leaf(op, col)
    n = draw(st.integers(1, 4)) if op in ("in", "not in") else 1
    lits = tuple(draw(literals(col, palettes[col.name])) for _ in range(n))
    return Leaf(op, col, lits)


def predicates(columns: list[Col], palettes: dict[str, list]) -> st.SearchStrategy:
    leaf = leaves(columns, palettes)
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(["and", "or"]), kids, kids).map(
                lambda x: Node(x[0], (x[1], x[2]))
            ),
            kids.map(lambda k: Node("not", (k,))),
        ),
        max_leaves=4,
    )


# ----------------------------------------------------------------------------- oracle

T, F, N = 1, 2, 4  # bit masks: the set of truth values a row may take


def _members(mask: int) -> list[int]:
    return [b for b in (T, F, N) if mask & b]


def _lut(fn) -> np.ndarray:
    lut = np.zeros((8, 8), np.uint8)
    for a in range(1, 8):
        for b in range(1, 8):
            for x in _members(a):
                for y in _members(b):
                    lut[a, b] |= fn(x, y)
    return lut


_AND = _lut(lambda x, y: F if F in (x, y) else (T if x == y == T else N))
_OR = _lut(lambda x, y: T if T in (x, y) else (F if x == y == F else N))
_NOT = np.array([0] + [sum({T: F, F: T, N: N}[b] for b in _members(m)) for m in range(1, 8)])


def _column_keys(table: pa.Table, col: Col) -> list:
    """The file's values of ``col`` for the oracle (dates in days, timestamps in ns)."""
    if col.name == "st.x":
        return [None if r is None else r["x"] for r in table.column("st").to_pylist()]
    arr = table.column(col.name)
    t = arr.type
    if pa.types.is_timestamp(t):
        per = _UNIT_NS[t.unit]
        ints = pc.cast(arr, pa.int64()).to_pylist()
        return [None if x is None else x * per for x in ints]
    if pa.types.is_date32(t):
        return pc.cast(arr, pa.int32()).to_pylist()
    return arr.to_pylist()


def _eq(col: Col, f32: bool, v: Any, key: tuple) -> int:
    """The truth values ``v = literal`` may take under exact SQL semantics (and, for
    floats, with the literal rounded to the column's width or to double)."""
    tag = key[0]
    if v is None or tag == "null":
        return N
    k = col.kind
    if k in ("int", "decimal") or (k == "bool" and tag == "num"):
        return T if tag == "num" and Fraction(v) == key[1] else F
    if k == "float":
        if math.isnan(v):
            return T | F if tag == "nan" else F  # IEEE says no, total-order engines yes
        if tag == "nan":
            return F
        if tag == "inf":
            return T if v == key[1] * math.inf else F
        x = key[1]
        try:
            d = float(x)
        except OverflowError:
            d = math.inf if x > 0 else -math.inf
        hits = [math.isfinite(v) and Fraction(v) == x, v == d]
        if f32:
            with np.errstate(over="ignore"):
                hits.append(v == float(np.float32(d)))
        return (T if any(hits) else 0) | (0 if all(hits) else F)
    if k == "string":
        if tag == "bytes":
            try:
                return T if v == key[1].decode("utf-8") else F
            except UnicodeDecodeError:
                return F
        return T if v == key[1] else F
    if k == "binary":
        b = key[1].encode("utf-8") if tag == "str" else key[1]
        return T if v == b else F
    if k == "date":
        return T if v * _DAY_NS == key[1] else F
    if k == "ts":
        return T if v == key[1] else F
    if k == "bool":
        return T if v == key[1] else F
    raise AssertionError(k)


def read_exactly(path: str, columns: list[Col]) -> pa.Table:
    """The whole file. INT96 timestamps are read as nanoseconds only for columns written
    from nanoseconds: pyarrow wraps INT96 values beyond 1677..2262 read as ns (an INT96
    of year 1 is not a valid timestamp[ns]), so the others are read as microseconds."""
    table = pq.read_table(path, coerce_int96_timestamp_unit="us")
    ns_names = [c.name for c in columns if c.kind == "ts" and c.type.unit == "ns"]
    if ns_names:
        exact = pq.read_table(path, columns=ns_names, coerce_int96_timestamp_unit="ns")
        for name in ns_names:
            i = table.schema.get_field_index(name)
            table = table.set_column(i, name, exact.column(name))
    return table


class Truth:
    """Which rows of a file match a predicate: DuckDB over the whole file read by
    pyarrow, united with this module's exact-semantics oracle."""

    def __init__(self, path: str, columns: list[Col]) -> None:
        self.table = read_exactly(path, columns)
        self.n = self.table.num_rows
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone='UTC'")
        self.con.register("t", self.table.append_column("__row", pa.array(range(self.n))))
        self.keys = {c.name: _column_keys(self.table, c) for c in columns}
        self.f32 = {
            c.name: c.name != "st.x" and pa.types.is_float32(self.table.column(c.name).type)
            for c in columns
        }

    def close(self) -> None:
        self.con.close()

    def duckdb_rows(self, sql: str) -> np.ndarray | None:
        try:
            rows = self.con.execute(f"SELECT __row FROM t WHERE {sql}").fetchall()
        except duckdb.Error:
            return None  # e.g. a literal DuckDB cannot cast: the oracle decides alone
        return np.array(sorted(r for (r,) in rows), dtype=np.int64)

    def _leaf(self, leaf: Leaf) -> np.ndarray:
        vals = self.keys[leaf.col.name]
        f32 = self.f32[leaf.col.name]
        cache: dict[Any, int] = {}
        out = np.empty(self.n, np.uint8)
        for i, v in enumerate(vals):
            ck = ("f", struct.pack("<d", v)) if isinstance(v, float) else (type(v), v)
            m = cache.get(ck)
            if m is None:
                m = cache[ck] = self._leaf_value(leaf, f32, v)
            out[i] = m
        return out

    def _leaf_value(self, leaf: Leaf, f32: bool, v: Any) -> int:
        op, col = leaf.op, leaf.col
        if op == "is null":
            return T if v is None else F
        if op == "is not null":
            return F if v is None else T
        if op == "bare":
            return N if v is None else (T if v else F)
        if op in ("is true", "is false", "is not true", "is not false"):
            hit = v is op.endswith("true")
            return (F if hit else T) if op.startswith("is not") else (T if hit else F)
        eqs = [_eq(col, f32, v, lit.key) for lit in leaf.lits]
        if op in ("=", "lit="):
            return eqs[0]
        if op == "!=":
            return int(_NOT[eqs[0]])
        if op == "nsd":
            if leaf.lits[0].key[0] == "null":
                return T if v is None else F
            return F if v is None else eqs[0]
        acc = eqs[0]
        for m in eqs[1:]:
            acc = int(_OR[acc, m])
        return acc if op == "in" else int(_NOT[acc])

    def oracle(self, tree) -> np.ndarray:
        if isinstance(tree, Leaf):
            return self._leaf(tree)
        if tree.op == "not":
            return _NOT[self.oracle(tree.kids[0])].astype(np.uint8)
        a, b = (self.oracle(k) for k in tree.kids)
        return (_AND if tree.op == "and" else _OR)[a, b]

    def rows(self, tree) -> np.ndarray:
        sql = tree.sql()
        mine = np.flatnonzero(self.oracle(tree) & T)
        theirs = self.duckdb_rows(sql)
        return mine if theirs is None else np.union1d(mine, theirs)


# ---------------------------------------------------------------------------- checks


def check_tiling(result, num_rows: int) -> None:
    expect = 0
    for i, u in enumerate(result.units):
        assert u.row_group == i
        assert u.first_row == expect, (i, u)
        assert u.num_rows >= 0
        assert isinstance(u.reason, str) and u.reason.strip(), u
        expect += u.num_rows
    assert expect == num_rows


def tree_columns(tree) -> list[str]:
    if isinstance(tree, Leaf):
        return [tree.col.name]
    return [c for kid in tree.kids for c in tree_columns(kid)]


#: Every stage, and subsets: each stage alone must be safe too (DuckDB's filters are
#: otherwise never reached: its dictionaries answer first).
STAGE_SETS = [STAGES, STAGES, ("statistics", "bloom"), ("bloom",), ("dictionary",)]


def check_prune(path: str, truth: Truth, tree, stages=STAGES) -> None:
    sql = tree.sql()
    with contextlib.suppress(InvalidArgument):  # outside a hypothesis test: no notes
        note(f"predicate: {sql}  (stages {stages})")
    result = prune(path, sql, stages=stages)
    check_tiling(result, truth.n)
    rows = truth.rows(tree)
    for u in result.units:
        lo, hi = np.searchsorted(rows, [u.first_row, u.first_row + u.num_rows])
        if hi > lo and not u.may_match:
            row = int(rows[lo])
            values = {c: truth.keys[c][row] for c in dict.fromkeys(tree_columns(tree))}
            raise AssertionError(
                f"FALSE NEGATIVE: {sql!r} (stages {stages}) pruned row group {u.row_group} "
                f"({u.reason!r}) but its row {row} matches: {values}"
            )


def probe_literal(col: Col, v: Any) -> Literal | Any:
    """A value of the file for :func:`probe`: Python values, or literal text for
    timestamps (nanoseconds have no Python type)."""
    if col.kind == "ts":
        return Literal("timestamp", _ns_text(v, 9))
    if col.kind == "date":
        return _EPOCH + dt.timedelta(days=v)
    return v


def check_probe(path: str, truth: Truth, columns: list[Col]) -> None:
    meta = pq.ParquetFile(path).metadata
    bounds = [0]
    for r in range(meta.num_row_groups):
        bounds.append(bounds[-1] + meta.row_group(r).num_rows)
    for col in columns:
        vals = truth.keys[col.name]
        chosen: dict[Any, int] = {}
        for r in range(meta.num_row_groups):
            for v in vals[bounds[r] : bounds[r + 1]][:50]:
                if v is not None and len(chosen) < 6:
                    ck = repr(v)
                    chosen.setdefault(ck, v)
        if not chosen:
            continue
        items = list(chosen.values())
        result = probe(path, col.name, [probe_literal(col, v) for v in items])
        for u in result.units:
            present = set(map(repr, vals[u.first_row : u.first_row + u.num_rows]))
            for v, status in zip(items, u.values, strict=True):
                if repr(v) in present:
                    assert status != "absent", (
                        f"probe {col.name}={v!r}: absent in row group {u.row_group} "
                        f"which holds it ({u.reason})"
                    )


def check_predicates(path: str, truth: Truth, columns: list[Col], palettes, data) -> None:
    """Predicates drawn by hypothesis against one file, then probes of present values."""
    for _ in range(PREDICATES_PER_FILE):
        tree = data.draw(predicates(columns, palettes))
        check_prune(path, truth, tree, data.draw(st.sampled_from(STAGE_SETS), label="stages"))
    check_probe(path, truth, data.draw(st.lists(st.sampled_from(columns), max_size=3)))


def check_file(path: str, columns: list[Col], palettes: dict[str, list], data) -> None:
    truth = Truth(path, columns)
    try:
        check_predicates(path, truth, columns, palettes, data)
    finally:
        truth.close()


def conv(sql_literal: str, t: pa.DataType):
    """A SQL literal converted to the type ``t`` as pruning converts it."""
    from bloomskip.expr.literals import convert
    from bloomskip.expr.sql import parse_literal

    lit = parse_literal(sql_literal)
    assert lit is not None, sql_literal
    return convert(lit, t)


def assert_converted(sql_literal: str, t: pa.DataType, expected) -> None:
    """``sql_literal`` converts to ``expected`` for ``t``: equal values, or an instance of
    the class given (NoMatch, Unknown) with a reason."""
    got = conv(sql_literal, t)
    if isinstance(expected, type):
        assert isinstance(got, expected), got
        assert got.reason
    else:
        assert got == expected


def one_row_per_group(tmp_path, name: str, values: pa.Array) -> str:
    """A Parquet file of one column, one row per row group, with bloom filters and no
    dictionary: every stage judges each value on its own."""
    path = str(tmp_path / f"{name}.parquet")
    pq.write_table(
        pa.table({name: values}),
        path,
        row_group_size=1,
        use_dictionary=False,
        bloom_filter_options={name: {"ndv": 1, "fpp": 0.01}},
    )
    return path
