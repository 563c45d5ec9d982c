"""No false negatives for TIME columns and DECIMAL wider than 38 digits, against DuckDB.

A probe found two: a TIME literal with digits finer than the column's unit was "no match"
although DuckDB reads TIME literals at microsecond precision (truncating the rest) and
compares second, millisecond and microsecond columns as TIME (µs) - rows matched; and
DuckDB reads DECIMAL(50,2) Parquet columns as DOUBLE, so ``d = 1.0000000000000001``
matches 1.00 there. The truth here is DuckDB reading the Parquet file itself and DuckDB
over the table pyarrow reads, together with exact equality (PostgreSQL's reading of
whole microseconds).
"""

from __future__ import annotations

import os
import tempfile
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from bloomskip import index
from bloomskip.parquet import prune
from bloomskip.parquet.prune import STAGES
from tests.support.predicates import SETTINGS, examples, one_row_per_group

duckdb = pytest.importorskip("duckdb")

_DAY_NS = 86_400 * 10**9
_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_TYPES = {"s": pa.time32("s"), "ms": pa.time32("ms"), "us": pa.time64("us"), "ns": pa.time64("ns")}
# Offsets (ns) from a stored value that cross microsecond and unit boundaries.
_OFFSETS = [0, 1, 499, 500, 501, 999, 1000, 1001, 1499, 1500, 1999, 10**6 - 1, 10**6 + 1]


def _text(ns: int, digits: int) -> str:
    """``hh:mm:ss[.f]`` with ``digits`` fractional digits (finer ones dropped)."""
    s, frac = divmod(ns, 10**9)
    out = f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
    return out + "." + f"{frac:09d}"[:digits] if digits else out


def _parsed_ns(text: str) -> int:
    hms, _, frac = text.partition(".")
    h, m, s = map(int, hms.split(":"))
    return ((h * 60 + m) * 60 + s) * 10**9 + int(frac.ljust(9, "0"))


@st.composite
def time_files(draw):
    unit = draw(st.sampled_from(list(_TYPES)))
    per = _UNIT_NS[unit]
    top = _DAY_NS // per - 1
    unit_value = st.one_of(st.integers(0, top), st.sampled_from([0, 1, 2, top - 1, top]))
    values = draw(st.lists(st.one_of(unit_value, st.none()), min_size=1, max_size=8))
    return unit, values


@st.composite
def time_literals(draw, unit: str, values: list):
    per = _UNIT_NS[unit]
    present = [v for v in values if v is not None] or [0]
    base = draw(st.sampled_from(present)) * per
    offset = draw(st.one_of(st.sampled_from(_OFFSETS), st.integers(0, 2 * per + 2000)))
    ns = min(max(base + draw(st.sampled_from([1, -1])) * offset, 0), _DAY_NS - 1)
    text = _text(ns, draw(st.integers(0, 9)))
    return draw(st.sampled_from([f"TIME '{text}'", f"'{text}'", f"CAST('{text}' AS TIME)"]))


def _rows(con: duckdb.DuckDBPyConnection, source: str, where: str) -> set[int] | None:
    try:
        found = con.execute(f"SELECT __row FROM {source} WHERE {where}").fetchall()
    except duckdb.Error:
        return None
    return {r for (r,) in found}


def _truth(path: str, table: pa.Table, where: str, exact: set[int]) -> set[int]:
    con = duckdb.connect()
    try:
        con.register("mem", table.append_column("__row", pa.array(range(table.num_rows))))
        parquet = (
            "(SELECT *, file_row_number AS __row FROM "
            f"read_parquet('{path}', file_row_number=true))"
        )
        rows = set(exact)
        for source in (parquet, "mem"):
            found = _rows(con, source, where)
            if found is not None:
                rows |= found
        return rows
    finally:
        con.close()


@settings(max_examples=examples(60), **SETTINGS)
@given(case=time_files(), data=st.data())
def test_time_columns_have_no_false_negatives(case, data):
    unit, values = case
    per = _UNIT_NS[unit]
    table = pa.table({"t": pa.array(values, _TYPES[unit])})
    use_dictionary = data.draw(st.booleans(), label="use_dictionary")
    group = data.draw(st.sampled_from([1, 2, 8]), label="row_group_size")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.parquet")
        pq.write_table(
            table,
            path,
            row_group_size=group,
            use_dictionary=use_dictionary,
            bloom_filter_options={"t": {"ndv": 8, "fpp": 0.01}},
        )
        for _ in range(4):
            lits = data.draw(st.lists(time_literals(unit, values), min_size=1, max_size=3))
            op = data.draw(st.sampled_from(["=", "!=", "IN", "NOT IN"]))
            if op in ("=", "!="):
                lits = lits[:1]
                where = f"t {op} {lits[0]}"
            else:
                where = f"t {op} ({', '.join(lits)})"
            wanted = {_parsed_ns(lit.split("'")[1]) for lit in lits}
            hits = {i for i, v in enumerate(values) if v is not None and v * per in wanted}
            if op in ("!=", "NOT IN"):  # exact reading: differs from every literal
                hits = {i for i, v in enumerate(values) if v is not None} - hits
            rows = _truth(path, table, where, hits)
            stages = data.draw(st.sampled_from([STAGES, ("statistics",), ("bloom",)]))
            note(f"{unit}: {values}  {where}  stages {stages}  truth {sorted(rows)}")
            units = prune(path, where, stages=stages).units
            for u in units:
                held = rows & set(range(u.first_row, u.first_row + u.num_rows))
                assert u.may_match or not held, (
                    f"FALSE NEGATIVE: {where!r} pruned row group {u.row_group} "
                    f"({u.reason!r}) holding matching rows {sorted(held)}"
                )


def duckdb_rows(path: str, where: str) -> set[int]:
    sql = f"SELECT file_row_number FROM read_parquet('{path}', file_row_number=true) WHERE {where}"
    return {r for (r,) in duckdb.sql(sql).fetchall()}


def kept(path: str, where: str) -> set[int]:
    return {u.row_group for u in prune(path, where).units if u.may_match}


def test_regression_time_digits_finer_than_the_unit(tmp_path):
    """The probe's cases: each was pruned although DuckDB returns the row."""
    path = one_row_per_group(tmp_path, "tu", pa.array([1, 3_600_123_456], pa.time64("us")))
    for where, rows in [("tu = '00:00:00.0000015'", {0}), ("tu = TIME '01:00:00.123456789'", {1})]:
        assert duckdb_rows(path, where) == rows
        assert rows <= kept(path, where), where
    path = one_row_per_group(tmp_path, "tm", pa.array([0, 5], pa.time32("ms")))
    assert duckdb_rows(path, "tm = '00:00:00.000000999'") == {0}
    assert kept(path, "tm = '00:00:00.000000999'") == {0}
    # Still useful: no reading is a whole millisecond, and DuckDB agrees.
    assert duckdb_rows(path, "tm = '00:00:00.0054'") == set() == kept(path, "tm = '00:00:00.0054'")
    path = one_row_per_group(tmp_path, "tn", pa.array([1000, 1500], pa.time64("ns")))
    assert duckdb_rows(path, "tn = TIME '00:00:00.0000015'") == {0}  # truncated to 1 µs
    assert kept(path, "tn = TIME '00:00:00.0000015'") == {0, 1}


def covers(files, row: int) -> bool:
    """Whether the zone index's candidates (one file, zones as (first row, rows)) hold ``row``."""
    return any(first <= row < first + n for f in files for first, n in f.zones)


def test_regression_time_through_the_zone_index(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(
        pa.table(
            {
                "tu": pa.array([1, 3_600_123_456], pa.time64("us")),
                "tm": pa.array([0, 5], pa.time32("ms")),
            }
        ),
        lake / "a.parquet",
    )
    index.build(str(lake), ["tu", "tm"], str(tmp_path / "idx"), zone_rows=1)
    ix = index.open(str(tmp_path / "idx"))
    for where, row in [
        ("tu = '00:00:00.0000015'", 0),
        ("tu = TIME '01:00:00.123456789'", 1),
        ("tm = '00:00:00.000000999'", 0),
    ]:
        assert covers(ix.query(where).files, row), where
    assert not ix.query("tm = '00:00:00.0054'").files  # no reading is a whole ms


def test_regression_decimal_wider_than_38_digits_is_a_double_in_duckdb(tmp_path):
    values = [Decimal("1.00"), Decimal("2.50"), None]
    path = one_row_per_group(tmp_path, "d", pa.array(values, pa.decimal256(50, 2)))
    assert duckdb.sql(f"DESCRIBE SELECT d FROM read_parquet('{path}')").fetchall()[0][1] == "DOUBLE"
    where = "d = 1.0000000000000001"
    assert duckdb_rows(path, where) == {0}
    assert kept(path, where) == {0, 1, 2}  # equality on the column never prunes
    units = prune(path, where).units
    assert all("DOUBLE" in u.reason for u in units), units
    assert kept(path, "d IN (1.00, '2.5')") == {0, 1, 2}
    assert kept(path, "d != 1.00") == {0, 1}  # the null row group cannot match
    assert kept(path, "d IS NULL") == {2}  # statistics' null counts still decide
    assert kept(path, "d IS NOT NULL") == {0, 1}

    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"d": pa.array(values[:2], pa.decimal256(50, 2))}), lake / "a.parquet")
    index.build(str(lake), ["d"], str(tmp_path / "idx"), zone_rows=1)
    assert covers(index.open(str(tmp_path / "idx")).query(where).files, 0)
