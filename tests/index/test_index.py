"""The zone index: layout (Lance's), sizing, zones, queries, staleness, refresh, errors.

Known answers come from bloomskip's own SBBF (itself pinned bit-exact to parquet-java,
arrow-rs and Arrow C++ in ``tests/parquet/test_interop_peers.py``) and from the files' own Parquet
filters written by pyarrow: a zone filter over the same rows equals them byte for byte.
"""

from __future__ import annotations

import datetime as dt
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip import index
from bloomskip.errors import (
    CorruptFileError,
    IndexNotFoundError,
    InvalidParameterError,
    PredicateError,
    SourceError,
    UnsupportedTypeError,
)
from bloomskip.index import store
from bloomskip.index.zones import zone_bounds
from bloomskip.parquet.bloom import read_bloom_filters
from bloomskip.sbbf import Sbbf
from bloomskip.sbbf.sizing import num_bytes_for
from tests.support import orc_files
from tests.support.index_dump import check_served


def _table(i: int, n: int = 3000) -> pa.Table:
    rng = np.random.default_rng(i)
    return pa.table(
        {
            "uid": [f"u-{i}-{j}" for j in range(n)],
            "k": pa.array(rng.integers(0, 10**12, n), pa.int64()),
            "low": pa.array(rng.integers(0, 5, n), pa.int16()),
            "opt": pa.array([None if j % 500 == 7 else j for j in range(n)], pa.int32()),
            "payload": pa.array(rng.random(n)),
        }
    )


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    d.mkdir()
    for i in range(4):
        pq.write_table(_table(i), d / f"part-{i}.parquet", row_group_size=1000)
    (d / "_SUCCESS").write_text("")
    return d


def _covers(res: index.QueryResult, path: str, row: int) -> bool:
    for f in res.files:
        if f.path == path:
            return f.zones is None or any(s <= row < s + n for s, n in f.zones)
    return False


# ----------------------------------------------------------------------------- layout


def test_zone_table_has_lances_columns_metadata_and_parquet_identical_filters(lake, tmp_path):
    idx = tmp_path / "idx"
    index.build(lake, ["uid", "k"], idx, zone_rows=1000, fpp=0.01, sizing="exact")
    t = index.open(idx).zones("uid")  # served from the slabs, as Lance's table
    assert t.schema.names[:5] == [
        "fragment_id",
        "zone_start",
        "zone_length",
        "has_null",
        "bloom_filter_data",
    ]
    assert [str(f.type) for f in t.schema][:5] == ["uint64", "uint64", "uint64", "bool", "binary"]
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    assert meta["bloomfilter_item"] == "1000"
    assert meta["bloomfilter_probability"] == "0.01"
    assert meta["bloomskip.physical_type"] == "BYTE_ARRAY"
    assert meta["bloomskip.encoding"] == "parquet"
    assert meta["bloomskip.hash"] == "xxhash64 seed 0"
    assert meta["bloomskip.sizing"] == "exact"
    # Zones of 1000 rows align with the 1000-row row groups: a pyarrow filter over the
    # same rows, sized the same, is byte-identical.
    src = lake / "part-2.parquet"
    pq.write_table(
        pq.read_table(src),
        tmp_path / "with_bloom.parquet",
        row_group_size=1000,
        bloom_filter_options={"uid": {"ndv": 1000, "fpp": 0.01}},
    )
    theirs = {
        f.row_group: f.filter
        for f in read_bloom_filters(tmp_path / "with_bloom.parquet")
        if f.column == 0 and f.filter is not None
    }
    ix = index.open(idx)
    frag = next(r for r in ix.fragments().to_pylist() if r["path"].endswith("part-2.parquet"))
    zones = ix.zones("uid").to_pylist()
    mine = [z for z in zones if z["fragment_id"] == frag["fragment_id"]]
    assert [(z["zone_start"], z["zone_length"]) for z in mine] == [
        (0, 1000),
        (1000, 1000),
        (2000, 1000),
    ]
    for rg, z in enumerate(mine):
        ours = Sbbf.from_bytes(z["bloom_filter_data"])
        if ours.num_bytes == theirs[rg].num_bytes:
            assert ours == theirs[rg]
        rebuilt = Sbbf(ours.num_bytes)
        rebuilt.insert(pq.read_table(src).column("uid")[rg * 1000 : (rg + 1) * 1000])
        assert ours == rebuilt
        assert z["ndv"] == 1000


def test_default_sizing_is_lances_32_kib_per_zone_and_exact_shrinks_low_cardinality(lake, tmp_path):
    index.build(lake, ["low", "k"], tmp_path / "a")
    index.build(lake, ["low", "k"], tmp_path / "b", sizing="exact")
    a, b = index.open(tmp_path / "a"), index.open(tmp_path / "b")
    assert {len(x) for x in a.zones("low").column("bloom_filter_data").to_pylist()} == {32768}
    assert num_bytes_for(8192, 0.00057, "putze") == 32768
    low = b.zones("low").to_pylist()
    assert all(z["ndv"] == 5 for z in low)
    assert {len(z["bloom_filter_data"]) for z in low} == {num_bytes_for(5, 0.00057, "putze")}
    sa, sb = a.status()["columns"], b.status()["columns"]
    assert sb["low"]["bytes_per_row"] < sa["low"]["bytes_per_row"] / 100
    assert sb["k"]["predicted_fpp_max"] <= 0.00057


def test_manifest_records_column_type_encoding_hash_sizing_and_version(lake, tmp_path):
    index.build(lake, "opt", tmp_path / "idx", fpp=0.001)
    with open(tmp_path / "idx" / store.manifest_name(1)) as fh:
        raw = json.load(fh)
    assert raw["format"] == "bloomskip.zone-index" and raw["format_version"] == 2
    col = raw["columns"]["opt"]
    assert col["arrow_type"] == "int32" and col["physical"]["physical_type"] == "INT32"
    assert (col["hash"], col["seed"], col["sizing"], col["fpp"]) == ("xxhash64", 0, "putze", 0.001)
    assert raw["zoning"] == {"zone_rows": 8192, "align": "rows"}


def test_zone_bounds_never_cross_files_or_row_groups():
    assert zone_bounds(10000, 8192, None).tolist() == [0, 8192, 10000]
    assert zone_bounds(0, 8192, None).tolist() == [0]
    assert zone_bounds(10, 4, [3, 7]).tolist() == [0, 3, 7, 10]
    assert zone_bounds(9000, 8192, [5000, 4000]).tolist() == [0, 5000, 9000]


def test_align_row_groups_cuts_at_every_row_group(lake, tmp_path):
    index.build(lake, "k", tmp_path / "idx", zone_rows=700, align="row_groups")
    z = index.open(tmp_path / "idx").zones("k").to_pylist()
    starts = sorted({(r["zone_start"], r["zone_length"]) for r in z})
    assert starts == [(0, 700), (700, 300), (1000, 700), (1700, 300), (2000, 700), (2700, 300)]


# ----------------------------------------------------------------------------- queries


def test_equals_in_and_or_find_the_zone_and_skip_the_rest(lake, tmp_path):
    index.build(lake, ["uid", "k"], tmp_path / "idx", zone_rows=1000)
    ix = index.open(tmp_path / "idx")
    p2 = str(lake / "part-2.parquet")
    res = ix.query("uid = 'u-2-1500'")
    assert [(f.path, f.zones) for f in res.files] == [(p2, [(1000, 1000)])]
    assert res.files_total == 4 and res.zones_total == 12 and res.zones_candidate == 1
    assert ix.query("uid = 'nope'").files == []
    k = _table(3).column("k")[2999].as_py()
    res = ix.query(f"uid IN ('u-0-0', 'u-1-999') OR k = {k}")
    got = {(os.path.basename(f.path), tuple(f.zones)) for f in res.files}
    assert got == {
        ("part-0.parquet", ((0, 1000),)),
        ("part-1.parquet", ((0, 1000),)),
        ("part-3.parquet", ((2000, 1000),)),
    }
    assert ix.query(f"uid = 'u-3-2999' AND k = {k}").paths == [str(lake / "part-3.parquet")]
    assert ix.query(f"uid = 'u-2-2999' AND k = {k}").files == []


def test_block_rows_kept_for_later_lookups_stay_within_their_budget(lake, tmp_path, monkeypatch):
    import gc

    from bloomskip.index import serving

    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    monkeypatch.setattr(serving, "ROW_CACHE_BYTES", 1)  # keeps one row at a time
    ix = index.open(tmp_path / "idx")
    for i, j in [(0, 5), (2, 1500), (3, 2999), (0, 5), (1, 999)]:
        res = ix.query(f"uid = 'u-{i}-{j}'")
        assert _covers(res, str(lake / f"part-{i}.parquet"), j)
    (served,) = [
        o
        for o in gc.get_objects()
        if isinstance(o, serving.ServedFilters) and o.storage is ix.storage
    ]
    assert len(served._rows) == 1 and served._cached == next(iter(served._rows.values())).nbytes


def test_null_predicates_use_has_null_and_ndv(lake, tmp_path):
    index.build(lake, ["opt", "uid"], tmp_path / "idx", zone_rows=1000)
    ix = index.open(tmp_path / "idx")
    res = ix.query("opt IS NULL")  # rows 7, 507, 1007, ... : every zone has a null
    assert res.zones_candidate == 12
    assert ix.query("uid IS NULL").files == []
    assert ix.query("uid IS NOT NULL").zones_candidate == 12
    assert ix.query("opt = NULL").files == []  # never true


def test_what_the_index_cannot_answer_may_match_and_says_why(lake, tmp_path):
    index.build(lake, ["uid", "k"], tmp_path / "idx", zone_rows=1000)
    ix = index.open(tmp_path / "idx")
    for sql in ["uid != 'x'", "k NOT IN (1, 2)", "payload > 0.5", "k > 5", "NOT (uid = 'u-0-1')"]:
        res = ix.query(sql)
        assert len(res.files) == 4 and res.notes, sql
    for sql in ["k BETWEEN 1 AND 2", "k > 5"]:  # an indexed column, an operator it cannot
        res = ix.query(sql)
        assert {f.reason for f in res.files} == {"nothing the index answers"}, sql
        said = f"{sql}: nothing the index answers (=, IN and IS [NOT] NULL on k, uid)"
        assert res.notes == [said]
    res = ix.query("uid = 'u-0-1' AND payload > 0.5")
    assert res.paths == [str(lake / "part-0.parquet")]
    res = ix.query("k = 'not a number'")
    assert len(res.files) == 4 and "may match" in res.notes[0]
    with pytest.raises(PredicateError):
        ix.query("nope = 1")


def test_long_in_list_stops_using_the_index_when_its_compounded_fpp_is_useless(lake, tmp_path):
    index.build(lake, ["k"], tmp_path / "idx", zone_rows=1000, fpp=0.01)
    ix = index.open(tmp_path / "idx")
    few = ix.query("k IN (" + ", ".join(str(-i) for i in range(1, 11)) + ")")
    assert few.files == [] and not few.notes  # 1-(0.99)^10 = 0.096
    many = ix.query("k IN (" + ", ".join(str(-i) for i in range(1, 101)) + ")")
    assert len(many.files) == 4 and "0.63 > max_in_fpp 0.5" in many.notes[0]
    used = ix.query("k IN (" + ", ".join(str(-i) for i in range(1, 101)) + ")", max_in_fpp=0.7)
    assert not used.notes and used.zones_candidate < used.zones_total  # some false positives


# ----------------------------------------------------------------------------- staleness


def test_added_rewritten_and_deleted_files_after_indexing(lake, tmp_path):
    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    new = lake / "sub" / "part-9.parquet"
    new.parent.mkdir()
    pq.write_table(_table(9), new)
    t = _table(5)
    p1 = lake / "part-1.parquet"
    st = os.stat(p1)
    pq.write_table(t, p1, row_group_size=1000)  # part-1 now holds u-5-*
    os.utime(p1, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    os.unlink(lake / "part-3.parquet")
    ix = index.open(tmp_path / "idx")
    res = ix.query("uid IN ('u-9-5', 'u-5-5', 'u-3-5')")
    reasons = {os.path.basename(f.path): f.reason for f in res.files}
    assert reasons == {"part-9.parquet": "not indexed", "part-1.parquet": "changed since indexing"}
    # their rows are unknown: counted apart, not as 0 rows to read
    assert (res.rows_candidate, res.files_rows_unknown, res.to_json()["files_rows_unknown"]) == (
        0, 2, 2,
    )  # fmt: skip
    assert "0 of 6,000 rows to read, and 2 files not indexed, read in full" in res.to_text()
    assert ix.status()["stale_files"] == [str(p1)]
    # A refresh indexes the new and changed files and leaves the others untouched.
    opened = []
    from bloomskip.index import parts

    real = parts.index_file

    def spy(src, f, cols, zoning):
        opened.append(os.path.basename(f.path))
        return real(src, f, cols, zoning)

    parts.index_file = spy
    try:
        rep = index.refresh(tmp_path / "idx")
    finally:
        parts.index_file = real
    assert sorted(opened) == ["part-1.parquet", "part-9.parquet"]
    assert (rep.files_indexed, rep.files_unchanged, rep.files_dropped) == (2, 2, 2)
    ix = index.open(tmp_path / "idx")
    res = ix.query("uid IN ('u-9-5', 'u-5-5', 'u-3-5', 'u-1-5')")
    assert {(os.path.basename(f.path), f.reason) for f in res.files} == {
        ("part-9.parquet", "1 of 3 zones may match"),
        ("part-1.parquet", "1 of 3 zones may match"),
    }
    st = ix.status()
    assert st["coverage"] == 1.0 and st["files_indexed"] == 4 and st["version"] == 2


def test_a_rewrite_whose_modification_time_was_put_back_is_stale(lake, tmp_path):
    """``cp -p``, ``rsync -t`` and ``tar`` put a file's old modification time back: with
    the same size, size and time cannot tell. Its status change time, which no one can
    set, can (found by a probe: the index ruled the rewritten file out)."""
    from bloomskip.sources.base import local_tag, same_identity
    from bloomskip.spark.readfile import read_tables

    p1 = lake / "part-1.parquet"
    options = dict(compression="none", use_dictionary=False, write_statistics=False)
    pq.write_table(pa.table({"k": np.arange(100, dtype=np.int64)}), p1, **options)
    index.build(lake, ["k"], tmp_path / "idx", zone_rows=50)
    before = os.stat(p1)
    other = pa.table({"k": np.arange(1000, 1100, dtype=np.int64)})
    pq.write_table(other, tmp_path / "new.parquet", **options)
    os.utime(tmp_path / "new.parquet", ns=(before.st_atime_ns, before.st_mtime_ns))
    os.system(f"cp -p {tmp_path / 'new.parquet'} {p1}")  # in place, times kept
    after = os.stat(p1)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    ix = index.open(tmp_path / "idx")
    res = ix.query("k = 1050")
    assert [(f.path, f.reason) for f in res.files] == [(str(p1), "changed since indexing")]
    # Trusted (check_source=False), a zone of the old file is a candidate; its reader
    # (Spark's tasks) still sees the file is not the one indexed and reads every row.
    (f,) = ix.query("k = 60", check_source=False).files
    assert f.path == str(p1) and f.zones == [(50, 50)] and f.identity[2] == local_tag(before)
    got = pa.concat_tables([t for t, _ in read_tables(f.path, f.zones, f.identity, ["k"])])
    assert got.column("k").to_pylist() == other.column("k").to_pylist()
    assert index.refresh(tmp_path / "idx").files_indexed == 1
    assert [f.path for f in index.open(tmp_path / "idx").query("k = 1050").files] == [str(p1)]
    # An index made before local files had a change tag (None) trusts size and time.
    assert same_identity((5, 7, None), (5, 7, "ctime:9"))
    assert not same_identity((5, 7, None), (5, 8, "ctime:9"))
    assert not same_identity((5, 7, None), (5, 7, "an-etag"))  # object stores: as before
    assert not same_identity((5, 7, "ctime:8"), (5, 7, "ctime:9"))


def test_int96_timestamps_are_matched_as_duckdb_and_spark_read_them(tmp_path):
    """DuckDB and Spark read INT96 at microseconds, dropping the nanoseconds below:
    ``ts = TIMESTAMP '… .123456'`` returns a stored ``… .123456789``, which the index
    ruled out (it compared nanoseconds). An INT96 file in a lake indexed from INT64
    nanoseconds is left unindexed for the column (read in full), with the reason."""
    duckdb = pytest.importorskip("duckdb")
    lake = tmp_path / "lake"
    lake.mkdir()
    ns = pa.table({"ts": pa.array([1706702400123456789, 0], pa.timestamp("ns"))})
    later = pa.table({"ts": pa.array([1706702400123457001], pa.timestamp("ns"))})
    for first_int96 in (True, False):
        pq.write_table(ns, lake / "a.parquet", use_deprecated_int96_timestamps=first_int96)
        pq.write_table(later, lake / "b.parquet", use_deprecated_int96_timestamps=True)
        rep = index.build(lake, ["ts"], tmp_path / "idx", overwrite=True)
        assert [why for _, why in rep.failed] == (
            [] if first_int96 else
            ["ts: INT96 here, read at microseconds by DuckDB and Spark; indexed as INT64 [ns]"]
        )  # fmt: skip
        ix, found = index.open(tmp_path / "idx"), 0
        for sql in (
            "ts = TIMESTAMP '2024-01-31 12:00:00.123456'",
            "ts = TIMESTAMP '2024-01-31 12:00:00.123457'",
            "ts = '1970-01-01 00:00:00.000000999'",
        ):
            want = set()  # each file read alone, in its own type
            for f in ("a", "b"):
                q = f"SELECT filename FROM read_parquet('{lake}/{f}.parquet', filename=true)"
                want |= {name for (name,) in duckdb.sql(f"{q} WHERE {sql}").fetchall()}
            assert want <= set(ix.query(sql).paths), (sql, first_int96)
            found += bool(want)
        assert found == (3 if first_int96 else 1)  # b.parquet's microsecond at least


def test_orc_char_columns_stay_unindexed(tmp_path):
    """Found (ORC on Spark probe): Spark compares an ORC CHAR(5) padded (``c = 'c1'``
    matches the stored ``'c1   '``), other readers as written: the index ruled the file
    out. A CHAR column of a file is left unindexed (read in full), with the reason."""
    pytest.importorskip("pyorc")
    lake = tmp_path / "lake"
    lake.mkdir()
    orc_files.write_char5(lake / "a.orc")
    rep = index.build(lake, ["c", "k"], tmp_path / "idx")
    assert [why for _, why in rep.failed] == [
        "c: CHAR(n), which Spark compares padded to n and other readers as written"
    ]
    ix = index.open(tmp_path / "idx")
    for q in ("c = 'c1'", "c = 'c1   '", "c = 'zz'"):
        assert ix.query(q).paths == [str(lake / "a.orc")], q
    assert ix.query("k = 5").paths == []  # the other columns still prune


def test_orc_dates_before_the_gregorian_cutover_stay_unindexed(tmp_path):
    """Found (ORC on Spark probe): a file not written in the proleptic Gregorian calendar
    (ORC C++ names none) holds hybrid-calendar days before 1582-10-15, which Spark rebases
    (1580-01-13 reads as 1580-01-03) and pyarrow does not: the index ruled out the file
    for Spark's day. Such a column of such a file is left unindexed, with the reason."""
    lake = tmp_path / "lake"
    lake.mkdir()
    old = pa.table({"d": [dt.date(1580, 1, 13), dt.date(2020, 1, 1)], "k": [0, 1]})
    orc.write_table(old, lake / "a.orc")
    orc.write_table(pa.table({"d": [dt.date(2020, 1, 2)], "k": [2]}), lake / "b.orc")
    rep = index.build(lake, ["d", "k"], tmp_path / "idx")
    assert [(os.path.basename(p), why) for p, why in rep.failed] == [(
        "a.orc",
        "d: before 1582-10-16 in a file not in the proleptic Gregorian calendar, which "
        "readers rebase differently",
    )]  # fmt: skip
    ix = index.open(tmp_path / "idx")
    assert ix.query("d = DATE '1580-01-03'").paths == [str(lake / "a.orc")]
    assert ix.query("d = DATE '2020-01-02'").paths == [str(lake / "a.orc"), str(lake / "b.orc")]
    assert ix.query("k = 2").paths == [str(lake / "b.orc")]  # other columns still prune


def test_parquet_values_pyarrow_cannot_read_as_spark_does_stay_unindexed(tmp_path):
    """pyarrow reads INT96 as nanoseconds, which wrap beyond 1677-2262 (9999-12-31, a
    common "no end" date, was hashed as another instant), and reads the days of Spark's
    legacy (hybrid) calendar as written, where Spark rebases them (1580-01-13 is
    1580-01-03 there). Such a column of such a file is left unindexed, with the reason."""
    lake = tmp_path / "lake"
    lake.mkdir()
    end = dt.datetime(9999, 12, 31, 23, 59, 59)
    ts = pa.array([end, dt.datetime(2020, 1, 1)], pa.timestamp("us"))
    days = pa.array([dt.date(2020, 1, 2), dt.date(2020, 1, 3)])
    int96 = {"use_deprecated_int96_timestamps": True}
    pq.write_table(pa.table({"ts": ts, "d": days, "k": [0, 1]}), lake / "a.parquet", **int96)
    old = pa.array([dt.date(1580, 1, 13), dt.date(2020, 1, 1)])
    legacy = pa.table({"ts": ts[1:].take([0, 0]), "d": old, "k": [2, 3]})
    legacy = legacy.replace_schema_metadata({"org.apache.spark.legacyDateTime": ""})
    pq.write_table(legacy, lake / "b.parquet", **int96)
    pq.write_table(pa.table({"ts": ts[1:], "d": days[:1], "k": [4]}), lake / "c.parquet", **int96)
    rep = index.build(lake, ["ts", "d", "k"], tmp_path / "idx")
    assert sorted((os.path.basename(p), why) for p, why in rep.failed) == [
        ("a.parquet", "ts: INT96 values beyond the years 1677-2262, which pyarrow reads wrapped"),
        ("b.parquet", "d: before 1582-10-16 in Spark's legacy calendar, which Spark rebases "
                      "when it reads it"),
    ]  # fmt: skip
    ix = index.open(tmp_path / "idx")
    assert str(lake / "a.parquet") in ix.query("ts = TIMESTAMP '9999-12-31 23:59:59'").paths
    assert str(lake / "b.parquet") in ix.query("d = DATE '1580-01-03'").paths
    assert ix.query("k = 4").paths == [str(lake / "c.parquet")]  # the rest still prunes


def test_a_refresh_or_build_with_nothing_new_commits_no_version(lake, tmp_path, capsys):
    """Nothing added, changed or gone: no file is opened, nothing is written, the version
    stays (an hourly refresh of a quiet lake does not pile up versions); the next change
    commits the next version."""
    from bloomskip.cli import main

    idx = tmp_path / "idx"
    index.build(lake, ["uid"], idx, zone_rows=1000)
    before = sorted(p.relative_to(idx) for p in idx.rglob("*"))
    for again in (
        lambda: index.refresh(idx),
        lambda: index.build(lake, ["uid"], idx, zone_rows=1000),
    ):
        rep = again()
        assert (rep.version, rep.committed, rep.files_unchanged) == (1, False, 4)
        assert (rep.files_indexed, rep.zones_written, rep.bytes_written) == (0, 0, 0)
    assert sorted(p.relative_to(idx) for p in idx.rglob("*")) == before
    assert main(["index", "refresh", str(idx)]) == 0
    assert "version 1 (nothing new: kept, no version committed)" in capsys.readouterr().out
    pq.write_table(_table(9), lake / "part-9.parquet")
    rep = index.refresh(idx)
    assert (rep.version, rep.committed, rep.files_indexed) == (2, True, 1)
    for p in lake.glob("*.parquet"):  # a new column is a change, even over no files
        p.unlink()
    assert index.refresh(idx).files_dropped == 5
    rep = index.build(lake, ["k"], idx, zone_rows=1000)
    assert (rep.version, rep.committed) == (4, True) and "k" in index.open(idx).columns


def test_a_trusted_lookup_after_the_last_files_were_dropped(lake, tmp_path):
    """A refresh that drops the files with the highest fragment ids leaves the segment
    with zones no longer alive at its end; a lookup that trusts the index (no listing)
    answers from the live ones, as a checked lookup does."""
    for i in range(4, 8):  # enough live files that one dropped is not compacted away
        pq.write_table(_table(i), lake / f"part-{i}.parquet", row_group_size=1000)
    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    os.unlink(lake / "part-7.parquet")
    assert index.refresh(tmp_path / "idx").files_dropped == 1
    ix = index.open(tmp_path / "idx")
    assert len(ix.manifest.columns["uid"].segments) == 1 and ix.manifest.dropped == (7,)
    for q in ("uid = 'u-2-5'", "uid IN ('u-0-1', 'u-7-5')", "uid IS NULL"):
        trusted = ix.query(q, check_source=False)
        checked = ix.query(q)
        assert [(f.path, f.zones) for f in trusted.files] == [
            (f.path, f.zones) for f in checked.files
        ], q
    assert [
        os.path.basename(f.path) for f in ix.query("uid = 'u-2-5'", check_source=False).files
    ] == ["part-2.parquet"]


@pytest.mark.parametrize(
    ("indexed", "found", "where"),
    [
        ((pa.decimal128(10, 2), [1]), (pa.float64(), [0.105]), "c = 0.105"),
        ((pa.date32(), [1]), (pa.timestamp("us"), [1704105000000000]),
         "c = TIMESTAMP '2024-01-01 10:30:00'"),
        ((pa.string(), ["a"]), (pa.float64(), [100.0]), "c = '100.0'"),
        ((pa.string(), ["a"]), (pa.float64(), [-0.0]), "c = '-0.0'"),
        ((pa.string(), ["a"]), (pa.int64(), [1]), "c = '01'"),
        ((pa.string(), ["a"]), (pa.timestamp("us"), [1704067200000000]),
         "c = '2024-01-01 00:00:00'"),
        ((pa.int64(), [5]), (pa.float64(), [1.0]), "c = 1.0000000000000001"),
        ((pa.float64(), [5.0]), (pa.float32(), [0.1]), "c = 0.1"),
        ((pa.decimal128(10, 2), [1]), (pa.decimal256(40, 2), [1]), "c = 1.0000000000000001"),
        ((pa.timestamp("us"), [1]), (pa.timestamp("us", "UTC"), [1704067200000000]),
         "c = '2024-01-01 00:00:00'"),
    ],
)  # fmt: skip
def test_a_file_whose_column_readers_compare_otherwise_is_not_indexed(
    tmp_path, indexed, found, where
):
    """The index takes a column's type from the first file; a later file whose type is
    compared otherwise (DuckDB compares each file in its own type) is left unindexed, read
    in full - a cast that keeps every value still lost these matches (a probe found them:
    pyarrow's safe cast turns DOUBLE 0.105 into DECIMAL 0.10 and 100.0 into "100")."""
    duckdb = pytest.importorskip("duckdb")
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"c": pa.array(indexed[1], indexed[0])}), lake / "a.parquet")
    pq.write_table(pa.table({"c": pa.array(found[1], found[0])}), lake / "b.parquet")
    rep = index.build(lake, ["c"], tmp_path / "idx", zone_rows=1)
    assert [os.path.basename(p) for p, _ in rep.failed] == ["b.parquet"]
    rows = duckdb.sql(f"SELECT * FROM read_parquet('{lake / 'b.parquet'}') WHERE {where}")
    assert rows.fetchall()  # the peer matches the row
    for check in (True, False):
        got = index.open(tmp_path / "idx").query(where, check_source=check)
        assert ("b.parquet", None) in [(os.path.basename(f.path), f.zones) for f in got.files]


def test_a_query_that_trusts_the_index_reads_files_it_could_not_read_in_full(tmp_path):
    """A file the build could not read (here: an older file without the column) has no
    fragment; a query that lists nothing (``check_source=False``) returned it for no
    predicate - a false negative a probe found. The manifest lists such files; a refresh
    that reads them takes them off."""
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"other": [1, 2]}), lake / "old.parquet")
    pq.write_table(pa.table({"k": [3, 4], "other": [5, 6]}), lake / "new.parquet")
    rep = index.build(lake, ["k"], tmp_path / "idx", zone_rows=1)
    assert [os.path.basename(p) for p, _ in rep.failed] == ["old.parquet"]
    for where in ("k = 3", "k IS NULL", "other = 1"):
        for check in (True, False):
            res = index.open(tmp_path / "idx").query(where, check_source=check)
            got = {os.path.basename(f.path): f.zones for f in res.files}
            assert got.get("old.parquet", "missing") is None, (where, check)
    assert index.open(tmp_path / "idx").query("k = 3", check_source=False).files_total == 2
    pq.write_table(pa.table({"k": [7, 8], "other": [1, 2]}), lake / "old.parquet")
    index.refresh(tmp_path / "idx")
    ix = index.open(tmp_path / "idx")
    assert ix.manifest.unreadable == ()
    assert [os.path.basename(f.path) for f in ix.query("k = 3", check_source=False).files] == [
        "new.parquet"
    ]


def test_adding_a_column_later_indexes_every_current_file_for_it(lake, tmp_path):
    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    index.build(lake, ["k"], tmp_path / "idx", zone_rows=1000)
    ix = index.open(tmp_path / "idx")
    assert set(ix.columns) == {"uid", "k"} and ix.version == 2
    k = _table(0).column("k")[10].as_py()
    assert ix.query(f"k = {k} AND uid = 'u-0-10'").files[0].zones == [(0, 1000)]
    with pytest.raises(InvalidParameterError, match="shares its zones"):
        index.build(lake, ["low"], tmp_path / "idx", zone_rows=500)
    with pytest.raises(InvalidParameterError, match="already indexed"):
        index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000, fpp=0.1)


def test_a_column_added_without_settings_takes_the_index_s(lake, tmp_path, capsys):
    """Found (new-user walkthrough): on an index of 1,000-row zones, ``index build ... -c
    low`` without ``--zone-rows`` was refused for the default's 8,192 (and the advice was
    to overwrite, dropping the columns indexed). Unset settings are the index's now: its
    zoning, and an indexed column's FPP and sizing; the report says the column was added
    to the unchanged files."""
    from bloomskip.cli import main

    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000, fpp=0.01, sizing="exact")
    rep = index.build(lake, ["low"], tmp_path / "idx")
    assert rep.columns_added == ["low"] and rep.files_indexed == 0 and rep.files_unchanged
    assert "unchanged (low added to them)" in rep.to_text()
    ix = index.open(tmp_path / "idx")
    assert ix.manifest.zoning.zone_rows == 1000
    assert (ix.columns["low"].fpp, ix.columns["low"].sizing) == (index.DEFAULT_FPP, "putze")
    assert (ix.columns["uid"].fpp, ix.columns["uid"].sizing) == (0.01, "exact")
    assert index.build(lake, ["uid"], tmp_path / "idx").committed is False  # as it is
    assert main(["index", "build", str(lake), str(tmp_path / "idx"), "-c", "k"]) == 0
    assert "(k added to them)" in capsys.readouterr().out
    assert index.open(tmp_path / "idx").manifest.zoning.zone_rows == 1000


def test_a_new_column_over_a_file_that_fails_now_leaves_it_read_in_full(
    lake, tmp_path, monkeypatch
):
    """Adding a column reads the unchanged files again; one that fails then keeps its
    fragment for the old column but holds no zones of the new one. A trusted query on the
    new column did not return it (the column's zones were its universe); it is failed for
    the new column now (read in full for it, in every later version too), and named once
    whatever the query."""
    from bloomskip.sources.files import FileSource

    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    bad = str(lake / "part-1.parquet")
    read = FileSource.read_for_index

    def failing(self, file, names):
        if file.path == bad:
            raise OSError("a read that failed")
        return read(self, file, names)

    monkeypatch.setattr(FileSource, "read_for_index", failing)
    rep = index.build(lake, ["k"], tmp_path / "idx", zone_rows=1000)
    assert [p for p, _ in rep.failed] == [bad]
    ix = index.open(tmp_path / "idx")
    k = _table(1).column("k")[5].as_py()
    for where in (f"k = {k}", "uid = 'u-1-5'", f"uid = 'u-1-5' OR k = {k}"):
        got = [(f.path, f.zones) for f in ix.query(where, check_source=False).files]
        assert [p for p, _ in got].count(bad) == 1, where
        assert _covers(ix.query(where, check_source=False), bad, 5), where
    # Found (probe): the next version - another column, a refresh - forgot it for k.
    index.build(lake, ["opt"], tmp_path / "idx", zone_rows=1000)
    pq.write_table(_table(8), lake / "part-8.parquet")
    index.refresh(tmp_path / "idx")
    got = index.open(tmp_path / "idx").query(f"k = {k}", check_source=False).files
    assert (bad, None) in [(f.path, f.zones) for f in got]


def test_a_lake_that_is_itself_a_partition_directory_leaves_that_column_unindexed(tmp_path):
    """Found (probe): ``.../c=DE/`` given as the lake, its file holding ``c = 'de'``:
    DuckDB's hive detection reads ``c`` as 'DE' from the path; the index answered from
    the file's (``c = 'DE'``: no file)."""
    duckdb = pytest.importorskip("duckdb")
    lake = tmp_path / "c=DE"
    lake.mkdir()
    pq.write_table(pa.table({"k": [1, 2], "c": ["de", "de"]}), lake / "f.parquet")
    rep = index.build(lake, ["k", "c"], tmp_path / "idx", zone_rows=1)
    assert [why for _, why in rep.failed] == [
        "c: a partition directory names this column: readers take its value there, not the file's"
    ]
    assert duckdb.sql(f"SELECT * FROM read_parquet('{lake}/*.parquet') WHERE c = 'DE'").fetchall()
    assert index.open(tmp_path / "idx").query("c = 'DE'").paths == [str(lake / "f.parquet")]


def test_a_file_emptied_while_it_was_read_is_not_taken_for_one_that_is_not_data(
    lake, tmp_path, monkeypatch
):
    """Found (probe): a file truncated while the build read it (``cp -p`` over it), then
    back with its old size and time, was recorded as no Parquet or ORC file - no rows,
    for good. Its first and last bytes must be all there, and its size the one listed,
    for it to be judged: else it is not indexed (read in full, tried again)."""
    from bloomskip import formats

    victim = lake / "part-2.parquet"
    opened, data, st = formats.open_reader, victim.read_bytes(), victim.stat()

    def emptied(fh, label):
        if label != str(victim):
            return opened(fh, label)
        victim.write_bytes(b"")  # truncated while it is read ...
        try:
            return opened(fh, label)
        finally:  # ... and back, with its old time, before the build looks again
            victim.write_bytes(data)
            os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))

    monkeypatch.setattr(formats, "open_reader", emptied)
    rep = index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    assert rep.files_not_data == 0
    assert [p for p, _ in rep.failed] == [str(victim)]  # not indexed: read in full
    monkeypatch.undo()
    assert index.refresh(tmp_path / "idx").files_indexed == 1  # tried again


def test_a_column_the_lake_gained_since_is_indexed_where_files_hold_it(lake, tmp_path):
    """Found (schema probe): a column added to a lake over time could not be indexed - the
    index took the first file's schema ("has no column 'w'", or an index to rebuild) -
    and a file lacking one indexed column was left unindexed for all of them, tried
    again (and a version committed) at every refresh. Now a column is looked for in the
    first and last files, a file lacking it is unindexed for that column only, and a
    column the index does not know is not used for pruning, with a note."""
    idx = str(tmp_path / "idx")
    index.build(lake, ["k"], idx, zone_rows=1000)
    w = _table(9).append_column("w", pa.array(range(3000)))
    pq.write_table(w, lake / "part-9.parquet")
    rep = index.build(lake, ["w"], idx, zone_rows=1000)
    assert sorted(os.path.basename(p) for p, _ in rep.failed) == [
        f"part-{i}.parquet" for i in range(4)
    ]
    assert {why for _, why in rep.failed} == {"w: not a column of this file"}
    ix = index.open(idx)
    assert ix.query("w = 5").paths == [str(lake / f"part-{i}.parquet") for i in (0, 1, 2, 3, 9)]
    k = int(w.column("k")[0].as_py())
    assert ix.query(f"k = {k}").paths == [str(lake / "part-9.parquet")]
    assert index.refresh(idx).committed is False
    for cols, first in ((["uid", "w"], "uid"), (["w"], "w")):  # a lake that gained w first
        res = index.build(lake, cols, tmp_path / f"new-{first}", zone_rows=1000, overwrite=True)
        assert index.open(res.index).query("w = 3000").paths == [
            str(lake / f"part-{i}.parquet") for i in (0, 1, 2, 3)
        ]
    res = ix.query(f"k = {k} AND (z = 1 OR tag IS NULL)")
    assert res.paths == [str(lake / "part-9.parquet")]
    assert "not used for pruning: z, tag (not a column the index knows" in " ".join(res.notes)
    assert ix.query("k = -1 AND s.f = 1").paths == []  # s is no column: not pruning on it
    with pytest.raises(PredicateError, match="no column 'z'"):
        ix.query("z = 1 OR tag IS NULL")  # nothing the index knows: a misspelling?


def test_a_first_file_with_only_nulls_or_a_partition_key_does_not_stop_a_build(tmp_path):
    """Found (schema probe): a first file whose column held only nulls (Arrow's null type,
    as pandas writes an all-None column) failed the build; a hive lake's partition key was
    "no column" in index queries."""
    lake = tmp_path / "lake"
    for i, c in enumerate(["DE", "FR"]):
        (lake / f"country={c}").mkdir(parents=True)
        t = pa.table({"id": [i], "c": pa.array([None], pa.null()) if i == 0 else [5]})
        pq.write_table(t, lake / f"country={c}" / "part-0.parquet")
    index.build(str(lake), ["c"], str(tmp_path / "idx"))
    ix = index.open(str(tmp_path / "idx"))
    assert ix.query("c = 5").paths == [str(lake / "country=FR" / "part-0.parquet")]
    res = ix.query("country = 'DE' AND c = 5")
    assert res.paths == [str(lake / "country=FR" / "part-0.parquet")]
    assert "not used for pruning: country" in " ".join(res.notes)


def test_a_file_whose_column_does_not_convert_stays_a_candidate(lake, tmp_path):
    index.build(lake, ["k"], tmp_path / "idx", zone_rows=1000)
    bad = lake / "part-7.parquet"
    t = _table(7).set_column(1, "k", pa.array([f"x{i}" for i in range(3000)]))
    pq.write_table(t, bad)
    rep = index.refresh(tmp_path / "idx")
    assert len(rep.failed) == 1 and "string is not compared as int64" in rep.failed[0][1]
    res = index.open(tmp_path / "idx").query("k = 5")
    assert [(os.path.basename(f.path), f.zones) for f in res.files] == [("part-7.parquet", None)]
    # status says so too (it counted the file as indexed, and nothing else)
    ix = index.open(tmp_path / "idx")
    st = ix.status()
    assert st["columns"]["k"]["files_failed"] == 1 and st["files_indexed"] == 5
    assert "k: 1 file not indexed for this column" in ix.status_text(st)


def test_unreadable_file_is_reported_and_always_a_candidate(lake, tmp_path):
    (lake / "broken.parquet").write_bytes(b"PAR1 garbage")
    rep = index.build(lake, ["k"], tmp_path / "idx")
    assert [os.path.basename(p) for p, _ in rep.failed] == ["broken.parquet"]
    res = index.open(tmp_path / "idx").query("k = 5")
    assert [(os.path.basename(f.path), f.reason) for f in res.files] == [
        ("broken.parquet", "not indexed")
    ]


def test_an_index_kept_inside_the_lake_is_not_its_data(lake, tmp_path):
    """Found (issue 17 probe): an index inside the lake made every other index of that
    lake take its schema from the index's fragment table ("no column 'k'; columns are:
    fragment_id, path, ...") and list its tables as data files never indexed."""
    index.build(lake, ["uid"], tmp_path / "outer", zone_rows=1000)
    index.build(lake, ["uid"], lake / "sub" / "inner.idx", zone_rows=1000)
    rep = index.build(lake, ["k"], tmp_path / "other", zone_rows=1000)
    assert rep.files_indexed == 4 and not rep.failed
    res = index.open(tmp_path / "outer").query("uid = 'u-1-5'")
    assert res.paths == [str(lake / "part-1.parquet")]
    assert index.refresh(tmp_path / "outer").files_indexed == 0
    with pytest.raises(SourceError, match="is a bloomskip zone index, not a lake"):
        index.build(lake / "sub" / "inner.idx", ["fragment_id"], tmp_path / "of-an-index")


def test_symbolic_link_loops_in_the_lake_are_listed_once(lake, tmp_path):
    """Found (issue 17 probe): two links to the lake's own directory made the listing
    (pyarrow's, which follows links) grow as 2**40 paths - build, query and refresh hung.
    Links are still followed, each directory once."""
    import signal

    os.symlink(".", lake / "again")
    os.symlink(str(lake), lake / "back")
    (tmp_path / "elsewhere").mkdir()
    pq.write_table(_table(7), tmp_path / "elsewhere" / "linked.parquet")
    os.symlink(tmp_path / "elsewhere", lake / "linked-dir")

    def hung(signum, frame):
        raise TimeoutError("the listing did not finish")

    signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        rep = index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
        res = index.open(tmp_path / "idx").query("uid = 'u-7-5'")
        again = index.refresh(tmp_path / "idx")
    finally:
        signal.alarm(0)
    assert rep.files_indexed == 5 and not rep.failed
    assert res.paths == [str(lake / "linked-dir" / "linked.parquet")]
    assert again.files_indexed == 0 and again.files_unchanged == 5


def test_files_whose_names_are_not_utf8_are_listed_as_not_indexed(lake, tmp_path, capsys):
    """One such file used to fail a whole build (pyarrow cannot decode its name): now it is
    listed as not indexed, with the reason, and every query reads it in full."""
    from bloomskip.cli import main

    (lake / "part-0.parquet").rename(lake / "moved.parquet")
    bad = os.fsencode(str(lake)) + b"/\xff\xfe-part.parquet"
    inner = os.fsencode(str(lake)) + b"/d\xe9j\xe0"  # a directory name in Latin-1
    os.mkdir(inner)
    for name in (bad, inner + b"/x.parquet"):
        with open(name, "wb") as fh:
            fh.write((lake / "moved.parquet").read_bytes())
    names = sorted(os.fsdecode(n) for n in (bad, inner + b"/x.parquet"))
    rep = index.build(lake, ["k"], tmp_path / "idx", zone_rows=1000)
    assert rep.files_indexed == 4 and sorted(p for p, _ in rep.failed) == names
    assert all("not UTF-8" in why for _, why in rep.failed)
    ix = index.open(tmp_path / "idx")
    k = _table(0).column("k")[5].as_py()
    res = ix.query(f"k = {k}")
    assert set(res.paths) == {str(lake / "moved.parquet"), *names}
    assert [f.reason for f in res.files if f.path in names] == ["not indexed"] * 2
    assert sorted(ix.status()["unindexed_files"]) == names
    again = index.refresh(tmp_path / "idx")
    assert again.files_unchanged == 4 and sorted(p for p, _ in again.failed) == names
    assert main(["index", "status", str(tmp_path / "idx")]) == 0
    assert main(["index", "query", str(tmp_path / "idx"), f"k = {k}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert sorted(f["path"] for f in out["files"] if f["reason"] == "not indexed") == names


def test_orc_sources_and_mixed_types(tmp_path):
    d = tmp_path / "lake"
    d.mkdir()
    orc.write_table(_table(0), str(d / "a.orc"))
    t = _table(1)
    pq.write_table(t.set_column(1, "k", t.column("k")), d / "b.parquet")
    index.build(d, ["uid", "k"], tmp_path / "idx", zone_rows=1000, align="row_groups")
    ix = index.open(tmp_path / "idx")
    assert {r["format"] for r in ix.fragments().to_pylist()} == {"orc", "parquet"}
    assert [os.path.basename(p) for p in ix.query("uid = 'u-0-2500'").paths] == ["a.orc"]
    assert ix.query("uid = 'u-0-2500'").files[0].zones == [(2000, 1000)]


def test_arrow_encoding_hashes_int16_at_two_bytes_as_lance(lake, tmp_path):
    index.build(lake, ["low"], tmp_path / "idx", encoding="arrow", sizing="exact")
    ix = index.open(tmp_path / "idx")
    z = ix.zones("low").to_pylist()[0]
    lance_like = Sbbf(len(z["bloom_filter_data"]), encoding="arrow")
    lance_like.insert(_table(0).column("low"))
    assert Sbbf.from_bytes(z["bloom_filter_data"], encoding="arrow") == lance_like
    assert ix.columns["low"].physical is None
    assert len(ix.query("low = 3").files) == 4 and ix.query("low = 7").files == []


# ----------------------------------------------------------------------------- errors


def test_errors_are_typed_and_name_the_problem(lake, tmp_path):
    with pytest.raises(IndexNotFoundError):
        index.open(tmp_path / "nothing")
    with pytest.raises(SourceError, match="does not exist"):
        index.build(tmp_path / "missing", ["k"], tmp_path / "i1")
    with pytest.raises(InvalidParameterError, match="no column"):
        index.build(lake, ["nope"], tmp_path / "i2")
    with pytest.raises(InvalidParameterError, match="sizing"):
        index.build(lake, ["k"], tmp_path / "i3", sizing="fancy")
    with pytest.raises(InvalidParameterError, match="zone_rows"):
        index.build(lake, ["k"], tmp_path / "i3", zone_rows=0)
    with pytest.raises(SourceError, match="not a store for an index"):
        index.build(lake, ["k"], "ftp://example.invalid/idx")
    nested = tmp_path / "nested"
    nested.mkdir()
    pq.write_table(pa.table({"l": [[1, 2]]}), nested / "a.parquet")
    with pytest.raises(UnsupportedTypeError, match="non-nested"):
        index.build(nested, ["l"], tmp_path / "i4")
    index.build(lake, ["k"], tmp_path / "idx")
    with pytest.raises(InvalidParameterError, match="indexes"):
        index.build(nested, ["l"], tmp_path / "idx")
    path = tmp_path / "idx" / store.manifest_name(1)
    with open(path, "w") as fh:
        fh.write("{not json")
    with pytest.raises(CorruptFileError, match="not JSON"):
        index.open(tmp_path / "idx")


def test_missing_or_corrupt_index_files_are_typed_errors(lake, tmp_path):
    index.build(lake, ["k"], tmp_path / "idx")
    m = store.read_manifest(str(tmp_path / "idx"))
    seg = m.columns["k"].segments[0]
    directory = tmp_path / "idx" / seg.directory
    good = directory.read_bytes()
    directory.write_bytes(b"garbage")
    with pytest.raises(CorruptFileError, match="the manifest says"):
        index.open(tmp_path / "idx").query("k = 1")
    directory.write_bytes(b"garbage".ljust(len(good), b"!"))
    with pytest.raises(CorruptFileError, match="checksum"):
        index.open(tmp_path / "idx").query("k = 1")
    directory.write_bytes(good[:-5])
    with pytest.raises(CorruptFileError):
        index.open(tmp_path / "idx").query("k = 1")
    os.unlink(directory)
    with pytest.raises(CorruptFileError, match=r"missing|not a bloomskip"):
        index.open(tmp_path / "idx").query("k = 1")
    directory.write_bytes(good)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 1
    directory.write_bytes(bytes(flipped))
    with pytest.raises(CorruptFileError, match="checksum"):
        index.open(tmp_path / "idx").query("k = 1")
    directory.write_bytes(good)
    slab = tmp_path / "idx" / seg.slabs[0]
    data = slab.read_bytes()
    slab.write_bytes(data[:10])
    with pytest.raises(CorruptFileError, match="cut short"):
        index.open(tmp_path / "idx").query("k = 1")
    for at in (0, len(data) // 2, len(data) - 1):  # one bit of a filter: never a new answer
        flipped = bytearray(data)
        flipped[at] ^= 0x10
        slab.write_bytes(bytes(flipped))
        with pytest.raises(CorruptFileError, match="checksum"):
            index.open(tmp_path / "idx").zones("k")


def _as_format_1(root, column: str) -> str:
    """Rewrite the index at ``root`` as format 1 wrote it: the column's zones in one
    Lance zone table, no serving layout. Returns the table's name."""
    import json

    rel = f"columns/0-{column}/{'ab' * 16}.zones.parquet"
    pq.write_table(index.open(root).zones(column), root / rel, use_dictionary=False)
    name = root / store.manifest_name(1)
    doc = json.loads(name.read_text())
    doc["format_version"] = 1
    del doc["checksum"]  # format 1 manifests had none
    for key in ("dropped", "num_files", "num_rows"):
        doc.pop(key, None)
    segs = doc["columns"][column]["segments"]
    doc["columns"][column]["segments"] = [
        {
            "zones": rel,
            "files": [],
            "num_fragments": sum(s["num_fragments"] for s in segs),
            "num_zones": sum(s["num_zones"] for s in segs),
            "zone_bytes": sum(s["zone_bytes"] for s in segs),
            "file_bytes": 0,
        }
    ]
    name.write_text(json.dumps(doc))
    return rel


def test_a_format_1_index_is_read_and_its_unusable_filters_may_match(lake, tmp_path):
    """An index as format 1 wrote it (zone tables only, no serving layout) is queried from
    its zone tables; zones whose filters are not whole blocks may match."""
    index.build(lake, ["k"], tmp_path / "v1", zone_rows=1000)
    rel = _as_format_1(tmp_path / "v1", "k")
    t = pq.read_table(tmp_path / "v1" / rel)
    bitsets = t.column("bloom_filter_data").to_pylist()
    bitsets[0] = b"\x00" * 33  # not whole blocks
    bitsets[1] = b""
    t = t.set_column(4, "bloom_filter_data", pa.array(bitsets, pa.binary()))
    pq.write_table(t, tmp_path / "v1" / rel)
    ix = index.open(tmp_path / "v1")
    assert ix.manifest.format_version == 1
    assert ix.query("k = -1").zones_candidate == 2
    k = _table(3).column("k")[5].as_py()
    assert str(lake / "part-3.parquet") in ix.query(f"k = {k}").paths


def test_vacuum_removes_unreferenced_tables_only(lake, tmp_path):
    index.build(lake, ["k"], tmp_path / "idx")
    pq.write_table(_table(8), lake / "part-8.parquet")
    index.refresh(tmp_path / "idx")
    orphan = tmp_path / "idx" / "columns" / "0-k" / ("0" * 32 + ".zones.parquet")
    orphan.write_bytes(b"x")
    foreign = tmp_path / "idx" / "columns" / "notes.txt"
    foreign.write_bytes(b"mine")
    removed = index.vacuum(tmp_path / "idx", keep_versions=1, min_age_s=0)
    assert f"columns/0-k/{'0' * 32}.zones.parquet" in removed
    assert foreign.read_bytes() == b"mine" and "columns/notes.txt" not in removed
    assert store.versions(str(tmp_path / "idx")) == [2]
    k = _table(8).column("k")[0].as_py()
    assert index.open(tmp_path / "idx").query(f"k = {k}").paths == [str(lake / "part-8.parquet")]


def test_another_engine_running_the_tasks_gives_the_same_zones(lake, tmp_path):
    """What a Spark task does: run the indexing task in another process, which writes its
    parts itself and hands back only the small result."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from bloomskip.index.parts import run_task
    from bloomskip.index.runner import LocalRunner

    class InProcesses(LocalRunner):
        def index(self, storage, source, tasks, columns, zoning):
            # spawn, not fork: a process that loaded pylance (other tests) is not fork-safe
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(2, mp_context=ctx) as pool:
                n = len(tasks)
                yield from pool.map(
                    run_task, [storage] * n, [source] * n, tasks, [columns] * n, [zoning] * n
                )

    index.build(lake, ["uid", "opt"], tmp_path / "a", zone_rows=700, sizing="exact")
    index.build(lake, ["uid", "opt"], tmp_path / "b", zone_rows=700, sizing="exact",
                runner=InProcesses(threads=2))  # fmt: skip
    a, b = index.open(tmp_path / "a"), index.open(tmp_path / "b")
    for col in ("uid", "opt"):
        assert a.zones(col).equals(b.zones(col))
    assert a.fragments().equals(b.fragments())
    for q in ("uid = 'u-3-7'", "opt IS NULL", "uid = 'nope'"):
        assert [(f.path, f.zones) for f in a.query(q).files] == [
            (f.path, f.zones) for f in b.query(q).files
        ]


def test_a_build_that_loses_a_race_checks_the_winners_settings(lake, tmp_path):
    """Two builds with different zonings race on one directory: the loser must not commit
    its zoning over the winner's zones (found by the crash tests' review)."""
    import threading

    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(zone_rows: int, cols: list[str]) -> None:
        barrier.wait()
        try:
            index.build(lake, cols, tmp_path / "idx", zone_rows=zone_rows, threads=1)
        except InvalidParameterError as e:
            errors.append(e)

    threads = [
        threading.Thread(target=run, args=(512, ["uid"])),
        threading.Thread(target=run, args=(1024, ["uid", "k"])),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 1 and "shares its zones" in str(errors[0])
    ix = index.open(tmp_path / "idx")
    rows = ix.manifest.zoning.zone_rows
    for col in ix.columns:
        assert max(ix.zones(col).column("zone_length").to_pylist()) == rows


def test_segments_are_merged_past_eight_and_dropped_files_go(lake, tmp_path):
    index.build(lake, ["uid"], tmp_path / "idx", zone_rows=1000)
    for i in range(10, 20):
        pq.write_table(_table(i, 100), lake / f"part-{i}.parquet")
        if i == 15:
            os.unlink(lake / "part-10.parquet")
        index.refresh(tmp_path / "idx")
    m = store.read_manifest(str(tmp_path / "idx"))
    assert len(m.columns["uid"].segments) <= 8
    ix = index.open(tmp_path / "idx")
    live = set(ix.fragments().column("fragment_id").to_pylist())
    assert set(ix.zones("uid").column("fragment_id").to_pylist()) == live
    assert not any(p.endswith("part-10.parquet") for p in ix.fragments().column("path").to_pylist())
    on_disk = sum(
        pq.read_metadata(tmp_path / "idx" / rel).num_rows
        for s in m.columns["uid"].segments
        for rel in s.zones
    )
    assert on_disk < 3 * 4 + 10  # the merge dropped part-10's zone
    for i in (0, 11, 15, 19):
        assert ix.query(f"uid = 'u-{i}-50'").paths == [str(lake / f"part-{i}.parquet")]
    assert ix.query("uid = 'u-10-50'").files == []
    assert ix.status()["columns"]["uid"]["files"] == 13


def test_two_column_predicate_over_files_without_rows(tmp_path):
    """Empty files have no zones: a two-column query over them must not fail (found by
    the property test: the zone universe of no zones)."""
    d = tmp_path / "lake"
    d.mkdir()
    pq.write_table(_table(0, 1).slice(0, 0), d / "empty.parquet")
    index.build(d, ["uid", "k"], tmp_path / "idx")
    res = index.open(tmp_path / "idx").query("uid = 'a' AND k = 1")
    assert res.files == [] and res.skipped == [(str(d / "empty.parquet"), "empty file")]


def test_refreshes_compaction_and_a_format_1_segment_keep_every_filter(lake, tmp_path):
    """Segments pile up over refreshes, a format 1 segment among them; compaction (more
    than 8 segments, or a quarter of the files dropped) rewrites them as one from the
    older slabs and the format 1 table, and every live zone's filter stays what the
    indexing function makes of its file."""
    from bloomskip.index.build import MAX_SEGMENTS

    idx = tmp_path / "idx"
    index.build(lake, ["k", "uid"], idx, zone_rows=700)
    _as_format_1(idx, "k")
    for i in range(8, 8 + MAX_SEGMENTS - 1):
        pq.write_table(_table(i, 1500), lake / f"part-{i}.parquet")
        index.refresh(idx)
    m = store.read_manifest(str(idx))
    assert len(m.columns["k"].segments) == MAX_SEGMENTS
    assert check_served(idx) > 0
    pq.write_table(_table(99, 900), lake / "part-99.parquet")
    index.refresh(idx)  # the ninth segment: compacted
    m = store.read_manifest(str(idx))
    assert [len(c.segments) for c in m.columns.values()] == [1, 1]
    assert all(s.directory and not s.zones for c in m.columns.values() for s in c.segments)
    compared = check_served(idx)
    assert compared == sum(c.segments[0].num_zones for c in m.columns.values())
    for f in sorted(lake.glob("part-*.parquet"))[::3]:  # a quarter and more dropped
        f.unlink()
    index.refresh(idx)
    m2 = store.read_manifest(str(idx))
    assert m2.dropped == () and check_served(idx) < compared
    ix = index.open(idx)
    for f in sorted(lake.glob("part-*.parquet")):
        t = pq.read_table(f)
        k, uid = t.column("k")[-1].as_py(), t.column("uid")[7].as_py()
        assert str(f) in ix.query(f"k = {k}").paths
        assert str(f) in ix.query(f"uid = '{uid}'").paths


def test_a_listing_keeps_every_file_outside_hidden_directories_as_spark_does(tmp_path):
    """The listing against pyarrow's own recursive listing, filtered by Spark's rule: no
    part of the path starting with ``_`` or ``.``; any name (Spark reads
    ``events-2024.01.02`` and ``x.parquet.1`` as Parquet: the build tells data by its
    bytes)."""
    import pyarrow.fs as pafs

    from bloomskip.sources import resolve

    root = tmp_path / "lake"
    names = [
        "a.parquet", "B.PARQUET", "noext", "c.orc", "d.b.orc", "e.txt", ".f.parquet",
        "_g.parquet", "h.", "..i", "p=1/q=2/j.parquet", "p=1/q=2/_SUCCESS", "p=1/.k.parq",
        ".hid/l.parquet", "_tmp/m.parquet", "_manifests/n.parquet", "p=2/_x/o.pq",
        "p=2/y.pq", "p=2/z.Parq", "p=3/.crc/q.parquet", "events-2024.01.02", "r.parquet.1",
    ]  # fmt: skip
    for n in names:
        (root / n).parent.mkdir(parents=True, exist_ok=True)
        (root / n).write_bytes(b"x")
    infos = pafs.LocalFileSystem().get_file_info(pafs.FileSelector(str(root), recursive=True))
    want = set()
    for i in infos:
        rel = os.path.relpath(i.path, root)
        hidden = any(p.startswith(("_", ".")) for p in rel.split(os.sep))
        if i.type == pafs.FileType.File and not hidden:
            want.add(rel)
    got = {os.path.relpath(f.path, root) for f in resolve(str(root)).list()}
    assert got == want and {"p=1/q=2/j.parquet", "noext", "e.txt", "r.parquet.1"} <= got


def test_files_of_any_name_are_indexed_by_their_bytes_and_others_hold_no_rows(tmp_path):
    """Spark's reader reads every file a listing keeps, whatever its name: a Parquet file
    named ``events-2024.01.02`` must be indexed (it was skipped by its extension - a
    false negative). A file neither of whose ends is a format's magic holds no rows for
    any reader: indexed as such, never a candidate while unchanged, and said so. One
    whose footer is Parquet's but not its first bytes is not indexed: read in full."""
    lake = tmp_path / "lake"
    lake.mkdir()
    t = pa.table({"k": pa.array(range(10), pa.int64())})
    pq.write_table(t, lake / "events-2024.01.02")
    pq.write_table(t.slice(0, 3), lake / "part-1.snappy.parquet.1")
    orc.write_table(t, str(lake / "x.orcfile"))
    (lake / "notes.txt").write_text("not data")
    (lake / "zero").write_bytes(b"")
    raw = (lake / "events-2024.01.02").read_bytes()
    (lake / "headless.bin").write_bytes(b"XXXX" + raw[4:])
    rep = index.build(lake, ["k"], tmp_path / "idx", zone_rows=5)
    assert [os.path.basename(p) for p, _ in rep.failed] == ["headless.bin"]
    assert rep.to_json()["files_not_data"] == 2
    ix = index.open(tmp_path / "idx")
    for check in (True, False):
        res = ix.query("k = 1", check_source=check)
        got = {os.path.basename(f.path): f.zones for f in res.files}
        assert got["events-2024.01.02"] == [(0, 5)] and got["part-1.snappy.parquet.1"] == [(0, 3)]
        assert got["x.orcfile"] == [(0, 5)]
        assert "notes.txt" not in got and "zero" not in got
        assert got["headless.bin"] is None  # failed: read in full, trusted or not
        if check:
            skipped = {os.path.basename(p): why for p, why in res.skipped}
            assert skipped["notes.txt"] == skipped["zero"] == "not a Parquet or ORC file"
    (lake / "notes.txt").write_bytes(raw)  # now data: a checked query reads it in full
    res = ix.query("k = 1")
    assert {os.path.basename(f.path): f.zones for f in res.files}["notes.txt"] is None


@given(
    sizes=st.lists(st.integers(0, 10**9), min_size=1, max_size=60),
    at_least=st.integers(1, 80),
)
@settings(max_examples=300, deadline=None)
def test_tasks_are_balanced_runs_of_consecutive_files_covering_each_once(sizes, at_least):
    """Fragment ids follow the listing, so runs keep a task's zones side by side in every
    size class (a slab job copies them as one slice); balanced to within a file."""
    from bloomskip.index.build import TASK_BYTES, plan_tasks
    from bloomskip.sources import SourceFile

    files = [SourceFile(f"f{i}", s, 0) for i, s in enumerate(sizes)]
    tasks = plan_tasks(files, at_least)
    assert [p for t in tasks for p in t] == list(range(len(files)))  # runs, in order, once
    assert all(t for t in tasks)
    total = sum(max(s, 1) for s in sizes)
    n = max(1, min(len(files), max(-(-total // TASK_BYTES), at_least)))
    assert len(tasks) == n
    if len(set(sizes)) == 1:  # equal files: counts one file apart
        assert max(map(len, tasks)) - min(map(len, tasks)) <= 1
    biggest = max(max(s, 1) for s in sizes)
    for t in tasks:
        assert sum(max(sizes[p], 1) for p in t) <= total / n + biggest


def test_a_lake_gone_since_indexing_says_how_to_answer_without_it(tmp_path):
    """Found (new-user walkthrough): with the lake moved, a query said "<lake>: <lake>
    does not exist" and nothing more."""
    lake = tmp_path / "lake"
    lake.mkdir()
    pq.write_table(pa.table({"k": np.arange(100)}), lake / "p.parquet")
    index.build(lake, ["k"], tmp_path / "idx")
    lake.rename(tmp_path / "moved")
    with pytest.raises(SourceError) as e:
        index.open(tmp_path / "idx").query("k = 5")
    assert str(e.value).startswith(f"{lake} does not exist (the index checks its source;")
    assert "check_source=False" in str(e.value)
    got = index.open(tmp_path / "idx").query("k = 5", check_source=False)
    assert [f.path for f in got.files] == [str(lake / "p.parquet")]


def test_a_lake_by_another_of_its_names_is_the_indexed_lake(tmp_path):
    """Adding a column by ``file:///lake`` to an index built by ``/lake`` was refused
    ("now indexes /lake, not file:///lake"); another lake still is."""
    lake, other = tmp_path / "lake", tmp_path / "other"
    for d in (lake, other):
        d.mkdir()
        pq.write_table(pa.table({"k": [1, 2, 3], "s": ["a", "b", "c"]}), d / "p.parquet")
    index.build(lake, ["k"], tmp_path / "idx")
    before = index.open(tmp_path / "idx").manifest.source
    rep = index.build(lake.as_uri() + "/", ["s"], tmp_path / "idx")
    assert rep.columns_added == ["s"] and index.open(tmp_path / "idx").manifest.source == before
    with pytest.raises(InvalidParameterError, match=f"indexes {lake}, not {other}"):
        index.build(other, ["s"], tmp_path / "idx")


def test_a_lake_holds_the_files_spark_reads_by_name(tmp_path):
    """Spark's rule (found by a Spark probe): a name starting with ``_`` is data when it
    holds ``=``; ``*._COPYING_`` is a copy in progress, not data."""
    from bloomskip.sources.files import hidden_name, unescape

    lake = tmp_path / "lake"
    names = ["a.parquet", "_y=1.parquet", "f.parquet._COPYING_", "_x=1/b.parquet",
             "_tmp/c.parquet", ".h/d.parquet", "_SUCCESS"]  # fmt: skip
    for name in names:
        (lake / name).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"k": [1]}), lake / name)
    rep = index.build(lake, ["k"], tmp_path / "idx")
    got = sorted(
        os.path.relpath(f.path, lake) for f in index.open(tmp_path / "idx").query("k = 1").files
    )
    assert got == ["_x=1/b.parquet", "_y=1.parquet", "a.parquet"], got
    assert rep.files_indexed == 3
    assert [hidden_name(n) for n in ("_metadata", "_a=b", ".x=1", "a._COPYING_")] == [
        True, False, True, True,
    ]  # fmt: skip
    assert unescape("%C3%A9%2F%zz%4") == "Ã©/%zz%4"  # one character per %XX, as Spark


def test_a_column_named_like_a_struct_field_may_match(tmp_path):
    """Found (schema probe): a file holding a column named ``s.a`` and a struct ``s`` with
    a field ``a``. ``s.a`` names the field in DuckDB and Spark, ``"s.a"`` the column, and
    SQL text loses the quotes here: the index answered ``s.a = 1`` from the column's
    zones and ruled the file out; ``prune`` bound both to one leaf. Both may match now,
    with the reason, in the index, ``prune`` (Parquet and ORC) and the data's binder."""
    import duckdb

    from bloomskip import formats

    lake = tmp_path / "lake"
    lake.mkdir()
    t = pa.table({"s.a": pa.array([99, 98], pa.int64()), "s": pa.array([{"a": 1}, {"a": 2}])})
    pq.write_table(t, lake / "p.parquet")
    orc.write_table(t, lake / "o.orc")
    index.build(str(lake), ["s.a"], str(tmp_path / "idx"))
    files = sorted(
        os.path.basename(f.path) for f in index.open(str(tmp_path / "idx")).query("s.a = 1").files
    )
    assert files == ["o.orc", "p.parquet"]
    con = duckdb.connect()
    for q in ['"s.a" = 99', "s.a = 1"]:
        assert con.execute(f"SELECT count(*) FROM '{lake}/p.parquet' WHERE {q}").fetchone()[0]
        for name in ("p.parquet", "o.orc"):
            res = formats.of_path(lake / name).prune(lake / name, q)
            assert [u.may_match for u in res.units] == [True], (name, q)
            assert "two columns of the file are named 's.a'" in res.units[0].reason
