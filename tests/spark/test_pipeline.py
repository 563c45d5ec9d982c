"""The Spark pipeline (issue 6): index builds in Spark tasks, lake retrofits, pruned reads.

* Builds and refreshes on Spark give the local engine's index, table for table.
* A task killed half-way and retried by Spark leaves no duplicate or missing zone; a job
  that fails for good commits nothing.
* ``read`` returns exactly what ``spark.read.parquet(source).where(where)`` returns, for
  every query here and for hypothesis-chosen lakes and predicates, including files
  added, rewritten and deleted after indexing, and Spark's scan opens only the files the
  index could not rule out.
* ``add_bloom_filters`` adds filters to every file atomically, leaves data bytes as they
  were, skips files that have them, and Spark then prunes row groups with them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloomskip import index
from bloomskip.errors import SparkJobError
from bloomskip.index import store
from bloomskip.parquet.footer import read_footer
from bloomskip.spark import (
    add_bloom_filters,
    build_index,
    open_lake,
    plan_read,
    read,
    refresh_index,
)
from bloomskip.spark.wire import decode, encode
from tests.support import orc_files
from tests.support.index_dump import assert_same_index, index_tables

pytestmark = pytest.mark.spark

_T0 = 1_700_000_000_000_000_000


def _table(i: int, n: int) -> pa.Table:
    """Rows ``i * 10_000 + j``: ``k`` int64 (every 9th null), ``s`` strings, ``c`` int32."""
    base = i * 10_000
    k = np.arange(base, base + n, dtype=np.int64)
    return pa.table(
        {
            "k": pa.array(k, mask=(k % 9 == 0)),
            "s": pa.array([f"user-{v:07d}" for v in k], pa.string()),
            "c": pa.array((k % 7).astype(np.int32)),
        }
    )


def _write(path: Path, table: pa.Table, stamp: int, *, fmt: str = "parquet") -> None:
    if fmt == "orc":
        orc.write_table(table, str(path))
    else:
        pq.write_table(table, str(path), row_group_size=500)
    os.utime(path, ns=(_T0 + stamp, _T0 + stamp))


@pytest.fixture
def lake(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    for i in range(8):
        _write(root / f"part-{i:02d}.parquet", _table(i, 1200 + 97 * i), i)
    return root


def _index_tables(path: Path) -> dict[str, pa.Table]:
    return index_tables(path)


def _assert_same_index(a: Path, b: Path) -> None:
    assert_same_index(a, b)


def _rows(df) -> list:
    rows = [tuple(r) for r in df.collect()]
    return sorted(rows, key=lambda r: [(v is None, 0 if v is None else v) for v in r])


def _scan_metric(df, name: str) -> int:
    """A metric of the executed plan's file scans, summed (classic Spark): ``numFiles``,
    ``numOutputRows`` (whole row groups, as the vectorized reader emits them)."""
    total = []

    def walk(p):
        if p.nodeName() == "AdaptiveSparkPlan":
            return walk(p.executedPlan())
        if "Scan" in p.nodeName():
            it = p.metrics().iterator()
            while it.hasNext():
                kv = it.next()
                if kv._1() == name:
                    total.append(kv._2().value())
        ch = p.children()
        for i in range(ch.size()):
            walk(ch.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    return sum(total)


def _scan_files(df) -> int:
    return _scan_metric(df, "numFiles")


def _scan_rows(df) -> int:
    df.collect()
    return _scan_metric(df, "numOutputRows")


# --------------------------------------------------------------------------- building


@pytest.mark.parametrize(
    "settings_",
    [
        {"zone_rows": 256},
        {"zone_rows": 300, "align": "row_groups", "sizing": "exact"},
        {"zone_rows": 1000, "file_filters": False, "fpp": 0.01},
    ],
    ids=["putze", "row-groups-exact", "no-file-filters"],
)
def test_spark_build_equals_the_local_build(spark, lake, tmp_path, settings_):
    (lake / "sub").mkdir()
    _write(lake / "sub" / "x.orc", _table(20, 900), 30, fmt="orc")
    rep = build_index(spark, lake, ["k", "s"], tmp_path / "s", tasks=3, **settings_)
    index.build(lake, ["k", "s"], tmp_path / "l", threads=2, **settings_)
    _assert_same_index(tmp_path / "s", tmp_path / "l")
    assert rep.files_indexed == 9 and not rep.failed and rep.zones_written > 0


def test_spark_build_of_bit_planes_equals_the_local_build(spark, lake, tmp_path, monkeypatch):
    from bloomskip.index import serving

    # the driver plans each slab's layout: Spark's workers write what the job says
    monkeypatch.setattr(serving, "PLANES_MIN_ZONES", 2)
    build_index(spark, lake, ["k", "s"], tmp_path / "s", tasks=3, zone_rows=256)
    index.build(lake, ["k", "s"], tmp_path / "l", threads=2, zone_rows=256)
    dirs = sorted((tmp_path / "s").glob("columns/*/*.dir"))
    assert dirs and all(d.read_bytes()[:8] == serving.DIR_MAGIC_PLANES for d in dirs)
    _assert_same_index(tmp_path / "s", tmp_path / "l")


def test_spark_tasks_run_ranges_of_tasks_and_the_index_is_the_same(
    spark, lake, tmp_path, monkeypatch
):
    """Many small tasks (one per file here) run as a few Spark tasks, each a range of
    them, which saves Spark's start-up per task; the index is byte for byte the local one."""
    import importlib

    from bloomskip.spark import build as spark_build

    index_build = importlib.import_module("bloomskip.index.build")  # not the function

    monkeypatch.setattr(index_build, "TASK_BYTES", 1)  # one task per file
    slices = []
    real = spark_build.SparkRunner._slices
    monkeypatch.setattr(
        spark_build.SparkRunner,
        "_slices",
        lambda self, sizes: slices.append((len(sizes), real(self, sizes))) or slices[-1][1],
    )
    rep = build_index(spark, lake, ["k", "s"], tmp_path / "s", tasks=2, zone_rows=256)
    index.build(lake, ["k", "s"], tmp_path / "l", threads=2, zone_rows=256)
    assert rep.files_indexed == 8 and not rep.failed
    assert slices[0] == (8, 2)  # 8 tasks (one a file) in 2 Spark tasks
    _assert_same_index(tmp_path / "s", tmp_path / "l")


def test_spark_task_counts_group_only_long_ranges():
    from bloomskip.spark.build import GROUPED_UNITS, SPARK_TASK_BYTES, SparkRunner

    class Ctx:
        defaultParallelism = 2

    class Session:
        sparkContext = Ctx()

    r = SparkRunner(Session())  # at least 2 per core: 4
    assert r._slices([1] * 7) == 7  # 7 < 4 * GROUPED_UNITS: one per unit
    assert r._slices([1] * (4 * GROUPED_UNITS)) == 4
    assert r._slices([SPARK_TASK_BYTES // 4] * 80) == 20  # about one per SPARK_TASK_BYTES
    assert r._slices([]) == 1
    assert SparkRunner(Session(), tasks=40)._slices([1] * 80) == 40
    assert SparkRunner(Session(), tasks=41)._slices([1] * 80) == 80


def test_spark_refresh_equals_the_local_refresh_after_changes(spark, lake, tmp_path):
    for p in ("s", "l"):
        index.build(lake, ["k", "s"], tmp_path / p, zone_rows=256)
    _write(lake / "part-08.parquet", _table(8, 700), 40)  # added
    _write(lake / "part-03.parquet", _table(13, 1500), 41)  # rewritten
    (lake / "part-05.parquet").unlink()  # deleted
    rep = refresh_index(spark, tmp_path / "s")
    index.refresh(tmp_path / "l")
    _assert_same_index(tmp_path / "s", tmp_path / "l")
    assert (rep.files_indexed, rep.files_unchanged, rep.files_dropped) == (
        2,
        6,
        2,
    )  # dropped: the deleted file and the rewritten one's old fragment


def test_spark_build_of_odd_names_and_files_that_are_not_data_equals_the_local_build(
    spark, lake, tmp_path
):
    """Every file not hidden is listed, as Spark's reader lists it: a Parquet file named
    without an extension of its kind is indexed, and a README holds no rows - on Spark as
    in the local engine (the task's result carries the fragment's format)."""
    _write(lake / "events-2024.01.02", _table(9, 300), 42)
    (lake / "README.md").write_text("not data")
    rep = build_index(spark, lake, ["k", "s"], tmp_path / "s", zone_rows=256)
    index.build(lake, ["k", "s"], tmp_path / "l", zone_rows=256)
    _assert_same_index(tmp_path / "s", tmp_path / "l")
    assert rep.files_not_data == 1 and rep.failed == []
    res = index.open(tmp_path / "s").query("k = -5")
    assert (str(lake / "README.md"), "not a Parquet or ORC file") in res.skipped


def test_adding_a_column_on_spark(spark, lake, tmp_path):
    build_index(spark, lake, ["k"], tmp_path / "s", zone_rows=256)
    build_index(spark, lake, ["s"], tmp_path / "s", zone_rows=256)
    index.build(lake, ["k"], tmp_path / "l", zone_rows=256)
    index.build(lake, ["s"], tmp_path / "l", zone_rows=256)
    _assert_same_index(tmp_path / "s", tmp_path / "l")


def test_unreadable_file_is_reported_and_stays_a_candidate(spark, lake, tmp_path):
    (lake / "broken.parquet").write_bytes(b"PAR1" + b"\0" * 100)
    bad = os.fsdecode(os.fsencode(str(lake)) + b"/\xff-not-utf8.parquet")  # pyarrow: no name
    with open(bad, "wb") as fh, open(lake / "part-00.parquet", "rb") as src:
        fh.write(src.read())
    rep = build_index(spark, lake, ["k"], tmp_path / "s", zone_rows=256)
    assert sorted(p for p, _ in rep.failed) == sorted([str(lake / "broken.parquet"), bad])
    res = index.open(tmp_path / "s").query("k = -5")
    assert res.paths == sorted([str(lake / "broken.parquet"), bad])


def test_a_job_that_fails_for_good_commits_nothing(spark, lake, tmp_path):
    build_index(spark, lake, ["k"], tmp_path / "s", zone_rows=256)
    before = _index_tables(tmp_path / "s")
    _write(lake / "part-09.parquet", _table(9, 300), 50)

    def fail(task, attempt, done):
        raise RuntimeError("simulated executor failure")

    with pytest.raises(SparkJobError, match="nothing was committed"):
        refresh_index(spark, tmp_path / "s", task_hook=fail)
    assert store.versions(str(tmp_path / "s")) == [1]
    after = _index_tables(tmp_path / "s")
    assert all(before[r].equals(after[r]) for r in before)


# Builds that need a Spark session of their own (more attempts per task, a small
# maxResultSize) run in one subprocess, one after another: a JVM start is 10-20 s here.
_OWN_SESSION = textwrap.dedent(
    """
    import importlib, json, os, sys
    from bloomskip import index
    from bloomskip.spark import build_index, local_session

    jobs = json.loads(sys.argv[1])
    # local[2,4]: up to 4 attempts per task; the shared test session allows one.
    spark = local_session("local[2,4]", conf={
        "spark.driver.maxResultSize": "16m",
        "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    })
    build = importlib.import_module("bloomskip.index.build")
    done = {}
    for job in jobs:
        if job["kind"] == "small-results":
            # 1 MiB per zone (Putze sizing for 65,536 values at 1e-6), one zone per file:
            # 40 MiB of filters, which a build collecting them would refuse (> 16 MiB).
            rep = build_index(spark, job["lake"], ["k"], job["out"], zone_rows=65536, fpp=1e-6)
            st = index.open(job["out"]).status()["columns"]["k"]
            done[job["name"]] = {"failed": rep.failed, "filter_bytes": st["zone_filter_bytes"]}
            continue
        marks, saved = job["marks"], build.TASK_BYTES
        if job["grouped"]:  # one task per file, two Spark tasks each running a range
            build.TASK_BYTES = 1

        def kill_once(task, attempt, files, marks=marks):
            # The first attempt of every task dies (the Python worker exits) after writing
            # its parts and handing Spark its result: Spark must retry it, keep one attempt.
            mark = os.path.join(marks, f"task-{task}")
            if attempt == 0 and not os.path.exists(mark):
                open(mark, "w").close()
                os._exit(137)

        try:
            rep = build_index(spark, job["lake"], ["k", "s"], job["out"] + "/spark",
                              zone_rows=256, tasks=2 if job["grouped"] else 3,
                              task_hook=kill_once)
        finally:
            build.TASK_BYTES = saved
        index.build(job["lake"], ["k", "s"], job["out"] + "/local", zone_rows=256)
        done[job["name"]] = {"failed": rep.failed, "killed": sorted(os.listdir(marks))}
    print(json.dumps(done))
    spark.stop()
    """
)


@pytest.fixture(scope="module")
def own_session_builds(tmp_path_factory):
    """Runs the builds of :data:`_OWN_SESSION` once; returns (what each printed, dirs)."""
    root = tmp_path_factory.mktemp("own-session")
    jobs, dirs = [], {}
    for name, grouped in (("task-per-spark-task", False), ("ranges", True)):
        d = root / name
        (d / "lake").mkdir(parents=True)
        (d / "marks").mkdir()
        for i in range(8):
            _write(d / "lake" / f"part-{i:02d}.parquet", _table(i, 1200 + 97 * i), i)
        job = {"kind": "killed", "name": name, "grouped": grouped, "out": str(d)}
        jobs.append(job | {"lake": str(d / "lake"), "marks": str(d / "marks")})
        dirs[name] = d
    d = dirs["small-results"] = root / "small-results"
    (d / "lake").mkdir(parents=True)
    for i in range(40):
        _write(d / "lake" / f"p{i:02d}.parquet", _table(i, 300), i)
    jobs.insert(0, {"kind": "small-results", "name": "small-results", "lake": str(d / "lake"),
                    "out": str(d / "idx")})  # fmt: skip
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    run = subprocess.run(
        [sys.executable, "-c", _OWN_SESSION, json.dumps(jobs)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), dirs


@pytest.mark.parametrize("grouped", [False, True], ids=["task-per-spark-task", "ranges"])
def test_a_killed_task_retried_by_spark_leaves_no_duplicate_or_missing_zone(
    own_session_builds, grouped
):
    """Spark (``local[2,4]``: up to 4 attempts per task) in a process of its own, since
    the shared session allows one attempt; every task's first attempt dies mid-output
    (grouped: a Spark task dies after the first task of its range, and its retry runs
    the whole range again)."""
    printed, dirs = own_session_builds
    name = "ranges" if grouped else "task-per-spark-task"
    killed = ["task-0", "task-4"] if grouped else ["task-0", "task-1", "task-2"]
    assert printed[name] == {"failed": [], "killed": killed}
    out = dirs[name]
    _assert_same_index(out / "spark", out / "local")
    zones = index.open(out / "spark").zones("k")
    keys = list(zip(zones["fragment_id"].to_pylist(), zones["zone_start"].to_pylist(), strict=True))
    assert len(keys) == len(set(keys))


def test_task_output_that_does_not_make_one_whole_file_leaves_it_unindexed(lake):
    """What the driver does if a task's output were ever wrong or missing."""
    from dataclasses import replace

    import numpy as np

    from bloomskip.index.layout import Zoning
    from bloomskip.index.parts import run_task
    from bloomskip.index.storage import open_storage
    from bloomskip.sources import resolve

    src = resolve(lake)
    files = src.list()[:2]
    index.build(lake, ["k"], lake.parent / "i", zone_rows=256)
    col = index.open(lake.parent / "i").columns["k"]
    planned = [(f, 100 + i) for i, f in enumerate(files)]
    result = run_task(open_storage(lake.parent / "i"), src, planned, [col], Zoning(256, "rows"))
    whole = pa.Table.from_batches([encode(0, result)])
    (good,) = decode(whole, [planned])
    assert [r.error for r in good.files] == [None, None]
    part = result.columns["k"]
    drop = np.ones(part.keys.shape[0], bool)
    drop[1] = False  # one zone of the first file lost
    lost = replace(
        result,
        columns={"k": replace(part, fragment=part.fragment[drop], keys=part.keys[drop],
                              lengths=part.lengths[drop], flags=part.flags[drop])},
    )  # fmt: skip
    (bad,) = decode(pa.Table.from_batches([encode(0, lost)]), [planned])
    assert "zones do not cover" in bad.files[0].error and bad.files[1].error is None
    elsewhere = [(f, fid + 50) for f, fid in planned]  # the result names other files
    other, nothing = decode(whole, [elsewhere, planned])  # task 1 returned nothing
    assert "not the files it was given" in other.files[0].error
    assert nothing.files[0].error == "its Spark task returned nothing"


# --------------------------------------------------------------------------- reading

QUERIES = [
    "k = 30005",
    "k = -1",
    "s = 'user-0050001'",
    "k IN (5, 10009, 70003, 123456789)",
    "s IN ('user-0010000', 'user-0040400') AND c = 3",
    "k = 20007 OR s = 'user-0060002'",
    "k IS NULL AND s = 'user-0030000'",
    "k IS NOT NULL AND k = 40003",
    "k > 70000",
    "NOT (k = 5)",
    "k = '10010'",
    's = "user-0000003"',
    "K = 10",
]


def test_read_equals_plain_spark_and_opens_only_candidate_files(spark, lake, tmp_path):
    """Both ways: Spark reading the candidate files (``local_rows=0``), and the driver
    reading their candidate zones (a local relation)."""
    build_index(spark, lake, ["k", "s"], tmp_path / "idx", zone_rows=256)
    plain = spark.read.parquet(str(lake))
    for q in QUERIES:
        plan = plan_read(spark, lake, tmp_path / "idx", q, local_rows=0)
        assert _rows(plan.df) == _rows(plain.where(q)), q
        assert _scan_files(plan.df) == plan.files_read and plan.way == "spark", q
        local = plan_read(spark, lake, tmp_path / "idx", q)
        assert _rows(local.df) == _rows(plain.where(q)), q
        assert local.way == ("driver" if local.files_read else "spark"), q
    point = plan_read(spark, lake, tmp_path / "idx", "k = 30005")
    assert (point.files_total, point.files_read) == (8, 1)
    assert point.skip_reasons == {"every zone ruled out": 7}
    assert point.read_reasons == {"zones may match": 1}
    assert point.bytes_skipped > 0 and point.bytes_read + point.bytes_skipped == point.bytes_total
    assert "reading 1 of 8 files" in point.summary()
    absent = plan_read(spark, lake, tmp_path / "idx", "k = -1")
    assert absent.files_read == 0 and _rows(absent.df) == []


def test_literals_are_read_in_the_session_time_zone(spark, tmp_path):
    """Found (Spark probe): Spark reads ``TIMESTAMP '2024-01-01 10:00:00'`` as a wall clock
    of its session time zone; plan_read read it as UTC, and in New York ruled out the file
    holding 15:00 UTC (a false negative). Daylight-saving edges keep both readings."""
    lake = tmp_path / "tz"
    lake.mkdir()
    utc = [dt.datetime(2024, 1, 1, 15), dt.datetime(2024, 3, 10, 7, 30), dt.datetime(2024, 1, 1)]
    for i, when in enumerate(utc):
        ts = pa.array([when], pa.timestamp("us", tz="UTC"))
        ntz = pa.array([when], pa.timestamp("us"))
        pq.write_table(pa.table({"ts": ts, "ntz": ntz, "id": [i]}), lake / f"p{i}.parquet")
    index.build(lake, ["ts", "ntz"], tmp_path / "idx")
    queries = [
        "ts = TIMESTAMP '2024-01-01 10:00:00'",
        "ts = '2024-01-01 10:00:00'",
        "ts IN (TIMESTAMP_LTZ '2024-01-01 10:00:00', TIMESTAMP '1999-01-01 00:00:00')",
        "ts = TIMESTAMP_NTZ '2024-01-01 10:00:00'",
        "ts = TIMESTAMP '2024-03-10 03:30:00'",  # the hour the clocks skip, moved forward
        "ts = DATE '2023-12-31'",  # New York's midnight: 05:00 UTC, no row
        "ts = TIMESTAMP '2024-01-01 15:00:00+00:00'",
        "ntz = TIMESTAMP '2024-01-01 15:00:00'",
    ]
    orc_lake = tmp_path / "orc"  # Spark reads an ORC TIMESTAMP as an instant (UTC)
    orc_lake.mkdir()
    ts = pa.array([dt.datetime(2024, 3, 10, 6, 37), dt.datetime(2024, 1, 1)], pa.timestamp("us"))
    orc.write_table(pa.table({"k": [1, 2], "ts": ts}), orc_lake / "a.orc")
    index.build(orc_lake, ["ts"], tmp_path / "orc.idx")
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        for zone in ("America/New_York", "+05:30", "UTC"):
            spark.conf.set("spark.sql.session.timeZone", zone)
            for q in ("ts = TIMESTAMP '2024-03-10 01:37:00'", "ts = '2024-01-01 00:00:00'"):
                want = _rows(spark.read.orc(str(orc_lake)).where(q))
                got = plan_read(spark, orc_lake, tmp_path / "orc.idx", q)
                assert _rows(got.df) == want, (zone, q)
        for zone in ("America/New_York", "+05:30", "UTC"):
            spark.conf.set("spark.sql.session.timeZone", zone)
            plain = spark.read.parquet(str(lake))
            for q in queries:
                want = _rows(plain.where(q))
                for local_rows in (0, 1000):
                    got = plan_read(spark, lake, tmp_path / "idx", q, local_rows=local_rows)
                    assert _rows(got.df) == want, (zone, q, local_rows)
            ny = plan_read(spark, lake, tmp_path / "idx", queries[0])
            if zone == "America/New_York":
                assert (ny.files_read, _rows(ny.df)[0][-1]) == (1, 0)
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


def test_orc_char_columns_are_compared_as_spark_pads_them(spark, tmp_path):
    """Found (ORC on Spark probe): Spark compares an ORC CHAR(5) padded, so ``c = 'c1'``
    matches the stored ``'c1   '``. The index leaves the column unindexed, and the
    driver must not answer either: its local relation holds plain strings."""
    pytest.importorskip("pyorc")
    lake = tmp_path / "char"
    lake.mkdir()
    orc_files.write_char5(lake / "a.orc")
    index.build(lake, ["c"], tmp_path / "idx")
    for q in ("c = 'c1'", "c = 'c1   '", "c IN ('c22', 'x')"):
        want = _rows(spark.read.orc(str(lake)).where(q))
        got = plan_read(spark, lake, tmp_path / "idx", q)
        assert want and _rows(got.df) == want, q
        assert got.way == "spark" and "char(5)" in got.way_why, q


def test_read_sees_files_added_rewritten_and_deleted_after_indexing(spark, lake, tmp_path):
    build_index(spark, lake, ["k", "s"], tmp_path / "idx", zone_rows=256)
    _write(lake / "part-08.parquet", _table(8, 700), 40)  # added
    _write(lake / "part-03.parquet", _table(13, 1500), 41)  # rewritten: 30000s gone
    (lake / "part-05.parquet").unlink()  # deleted
    plain = spark.read.parquet(str(lake))
    queries = ["k = 80001", "k = 130002", "k = 30001", "k = 50001", "s = 'user-0080600'"]
    for q in queries + QUERIES:
        plan = plan_read(spark, lake, tmp_path / "idx", q)
        assert _rows(plan.df) == _rows(plain.where(q)), q
    plan = plan_read(spark, lake, tmp_path / "idx", "k = 80001")
    assert plan.read_reasons == {"not indexed": 1, "changed since indexing": 1}
    refresh_index(spark, tmp_path / "idx")
    plan = plan_read(spark, lake, tmp_path / "idx", "k = 80002")
    assert plan.files_read == 1 and _rows(plan.df) == _rows(plain.where("k = 80002"))
    assert _rows(plan.df) == [(80002, "user-0080002", 80002 % 7)]


def test_paths_spark_writes_in_other_forms_are_matched(spark, tmp_path):
    """Spaces, ``#``, ``%``, brackets, ``?`` and non-ASCII names: Spark percent-encodes
    some; files are still skipped, and rows still equal."""
    lake = tmp_path / "lake dir#1"
    lake.mkdir()
    names = ["sp ace", "hash#x", "pct%41", "uni-é漢", "brk[1]", "q?mark", "amp&eq=+;,@$"]
    names += ["quo'te", "back\\slash"]
    for i, n in enumerate(names):
        _write(lake / f"{n}.parquet", _table(i, 500), i)
    build_index(spark, lake, ["s"], tmp_path / "idx", zone_rows=128)
    plain = spark.read.parquet(str(lake))
    for i in range(len(names)):
        q = f"s = 'user-{i * 10_000 + 2:07d}'"
        plan = plan_read(spark, lake, tmp_path / "idx", q, local_rows=0)
        assert (plan.files_read, plan.files_skipped) == (1, len(names) - 1), q
        assert _rows(plan.df) == _rows(plain.where(q)) and _scan_files(plan.df) == 1
        local = plan_read(spark, lake, tmp_path / "idx", q)  # pyarrow opens the file
        assert local.way == "driver" and _rows(local.df) == _rows(plain.where(q)), q


def test_without_a_usable_index_every_file_is_read_and_the_plan_says_why(spark, lake, tmp_path):
    plain = spark.read.parquet(str(lake))
    missing = plan_read(spark, lake, tmp_path / "nowhere", "k = 30005")
    assert missing.files_read == 8 and "index not used" in missing.notes[0]
    assert _rows(missing.df) == _rows(plain.where("k = 30005"))
    other = tmp_path / "other"
    other.mkdir()
    _write(other / "o.parquet", _table(0, 10), 0)
    index.build(other, ["k"], tmp_path / "oidx")
    plan = plan_read(spark, lake, tmp_path / "oidx", "k = 30005")
    assert plan.files_skipped == 0 and "the index covers" in plan.notes[-1]
    assert _rows(plan.df) == _rows(plain.where("k = 30005"))
    build_index(spark, lake, ["k"], tmp_path / "idx")
    with pytest.raises(Exception, match=r"PARSE_SYNTAX_ERROR"):  # Spark's own error
        plan_read(spark, lake, tmp_path / "idx", "k = 1 AND (")


def test_read_of_an_orc_lake(spark, tmp_path):
    lake = tmp_path / "orc"
    lake.mkdir()
    for i in range(4):
        _write(lake / f"p{i}.orc", _table(i, 800), i, fmt="orc")
    build_index(spark, lake, ["k", "s"], tmp_path / "idx", zone_rows=200)
    plan = plan_read(spark, lake, tmp_path / "idx", "s = 'user-0020005'")
    assert plan.files_read == 1
    assert _rows(plan.df) == _rows(spark.read.orc(str(lake)).where("s = 'user-0020005'"))
    assert _rows(read(spark, lake, tmp_path / "idx", "k IN (1, 30001)")) == _rows(
        spark.read.orc(str(lake)).where("k IN (1, 30001)")
    )


_values = st.one_of(
    st.integers(0, 9).map(lambda i: i * 10_000 + 3),  # present (unless null or rewritten)
    st.integers(-5, 200_000),  # mostly absent
)


def _leaf(draw) -> str:
    kind = draw(st.sampled_from(["k=", "s=", "kin", "sin", "null", "c"]))
    if kind == "k=":
        return f"k = {draw(_values)}"
    if kind == "s=":
        return f"s = 'user-{draw(_values):07d}'"
    if kind == "kin":
        return (
            f"k IN ({', '.join(str(v) for v in draw(st.lists(_values, min_size=1, max_size=4)))})"
        )
    if kind == "sin":
        vals = draw(st.lists(_values, min_size=1, max_size=3))
        return f"s IN ({', '.join(repr(f'user-{v:07d}') for v in vals)})"
    if kind == "null":
        return "k IS NULL"
    return f"c = {draw(st.integers(0, 7))}"


@st.composite
def _predicate(draw, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return _leaf(draw)
    op = draw(st.sampled_from(["AND", "OR"]))
    return f"({draw(_predicate(depth - 1))} {op} {draw(_predicate(depth - 1))})"


@settings(
    max_examples=int(os.environ.get("BLOOMSKIP_SPARK_EXAMPLES", "8")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sizes=st.lists(st.integers(0, 900), min_size=1, max_size=6),
    zone_rows=st.sampled_from([64, 250, 1000]),
    changes=st.lists(st.sampled_from(["add", "rewrite", "delete"]), max_size=3),
    predicates=st.lists(_predicate(), min_size=3, max_size=5),
    local_rows=st.sampled_from([0, 500, 1_000_000]),  # Spark, either, the driver
)
def test_property_read_always_equals_plain_spark(
    spark, tmp_path_factory, sizes, zone_rows, changes, predicates, local_rows
):
    root = tmp_path_factory.mktemp("prop")
    lake = root / "lake"
    lake.mkdir()
    for i, n in enumerate(sizes):
        _write(lake / f"f{i}.parquet", _table(i, n), i)
    build_index(spark, lake, ["k", "s"], root / "idx", zone_rows=zone_rows, tasks=2)
    for j, change in enumerate(changes):
        files = sorted(lake.iterdir())
        if change == "add" or not files:
            _write(lake / f"n{j}.parquet", _table(10 + j, 300), 100 + j)
        elif change == "rewrite":
            _write(files[j % len(files)], _table(20 + j, 400), 200 + j)
        else:
            files[j % len(files)].unlink()
    if not any(lake.iterdir()):
        return
    plain = spark.read.parquet(str(lake))
    for q in predicates:
        got = read(spark, lake, root / "idx", q, local_rows=local_rows)
        assert _rows(got) == _rows(plain.where(q)), q


# --------------------------------------------------------------------------- retrofit


def test_add_bloom_filters_to_a_lake(spark, lake, tmp_path):
    (lake / "notes").write_bytes(b"neither Parquet nor ORC")
    (lake / "broken.orc").write_bytes(b"ORC" + b"\0" * 10)
    (lake / "broken.parquet").write_bytes(b"PAR1" + b"\0" * 40 + b"PAR1")
    before = {p.name: p.read_bytes() for p in lake.glob("part-*.parquet")}
    rep = add_bloom_filters(spark, lake, ["k", "s"], fpp=0.01)
    assert rep.files_changed == 8 and rep.files_unchanged == 0
    assert sorted(os.path.basename(p) for p, _ in rep.failed) == ["broken.orc", "broken.parquet"]
    assert [os.path.basename(p) for p, _ in rep.skipped] == ["notes"]
    assert rep.filters_added == sum(2 * pq.ParquetFile(lake / n).num_row_groups for n in before)
    assert rep.bytes_added > 0 and "8 changed" in rep.summary()
    for name, data in before.items():
        with open(lake / name, "rb") as fh:
            footer = read_footer(fh, name=name)
        prefix = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
        assert (lake / name).read_bytes()[:prefix] == data[:prefix]  # data bytes unchanged
        for rg in footer.row_groups:
            for leaf in ("k", "s"):
                assert rg.columns[footer.leaf(leaf).index].bloom_filter_offset
    again = add_bloom_filters(spark, lake, ["k", "s"], fpp=0.01)
    assert again.files_changed == 0 and again.files_unchanged == 8


def test_spark_prunes_row_groups_with_the_filters_added(spark, tmp_path):
    """Shuffled rows, so that statistics cannot prune: only the bloom filters do."""
    lake = tmp_path / "lake"
    lake.mkdir()
    rng = np.random.default_rng(7)
    for i in range(3):
        t = _table(i, 2000)
        _write(lake / f"p{i}.parquet", t.take(rng.permutation(t.num_rows)), i)
    add_bloom_filters(spark, lake, ["s"])

    def lookup(bloom: bool):
        return (
            spark.read.option("parquet.filter.bloom.enabled", str(bloom).lower())
            .option("parquet.filter.dictionary.enabled", "false")
            .parquet(str(lake))
            .where("s = 'user-0010005'")
        )

    with_filters, without = lookup(True), lookup(False)
    assert _rows(with_filters) == _rows(without) == [(10005, "user-0010005", 10005 % 7)]
    assert _scan_rows(with_filters) == 500 < _scan_rows(without)  # one row group of 500


def test_index_commands_run_on_spark(spark, lake, tmp_path, capsys):
    from bloomskip.cli import main

    args = ["index", "build", str(lake), str(tmp_path / "s"), "-c", "k", "--zone-rows", "256"]
    assert main([*args, "--spark", "local[2]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files_indexed"] == 8
    index.build(lake, ["k"], tmp_path / "l", zone_rows=256)
    _assert_same_index(tmp_path / "s", tmp_path / "l")
    _write(lake / "part-08.parquet", _table(8, 700), 40)
    assert main(["index", "refresh", str(tmp_path / "s"), "--spark", "local[2]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files_indexed"] == 1


def test_an_open_lake_infers_the_schema_once_and_lists_files_every_query(spark, tmp_path):
    """Hive-style partitions too: the partition column is part of the kept schema."""
    lake = tmp_path / "lake"
    for day in ("2024-01-01", "2024-01-02"):
        (lake / f"day={day}").mkdir(parents=True)
        for i in range(2):
            n = 10 * (day[-1] == "2") + i
            _write(lake / f"day={day}" / f"p{i}.parquet", _table(n, 400), n)
    build_index(spark, lake, ["k"], tmp_path / "idx", zone_rows=100)
    opened = open_lake(spark, lake, tmp_path / "idx")
    plain = lambda q: _rows(spark.read.parquet(str(lake)).where(q))  # noqa: E731
    queries = ["k = 100005", "k = 5 AND day = '2024-01-01'", "k IN (1, 100001, 110003)"]
    queries.append("k = 100005 AND NOT (day > '2024-01-01')")  # no rows
    for q in queries:
        assert _rows(opened.read(q)) == plain(q), q
    # the partition column is no column of the files: the rest of the predicate prunes
    plan = opened.plan("k = 100005 AND day > '2024-01-01'")
    assert "index not used" not in plan.read_reasons, plan.read_reasons
    assert any(n.startswith("not used for pruning: day") for n in plan.notes), plan.notes
    schema = opened.schema
    _write(lake / "day=2024-01-02" / "p9.parquet", _table(19, 400), 99)  # added
    (lake / "day=2024-01-01" / "p0.parquet").unlink()  # deleted
    for q in [*queries, "k = 190007"]:
        plan = opened.plan(q)
        assert _rows(plan.df) == plain(q), q
    assert opened.schema is schema and "day" in schema.fieldNames()
    assert opened.plan("k = 190007").read_reasons == {"not indexed": 1}


def test_a_partitioned_lake_named_by_a_uri_keeps_its_partition_values(spark, tmp_path):
    """A lake given as ``file:///...`` (as an object store's always is): Spark is told the
    lake's root (``basePath``). Without it, Spark took each candidate's folder for the
    root: ``day`` was null and ``k = 5 AND day = '...'`` returned no row (a false
    negative). The index serves the lake by either name."""
    lake = tmp_path / "lake"
    for day in ("2024-01-01", "2024-01-02"):
        (lake / f"day={day}").mkdir(parents=True)
        _write(lake / f"day={day}" / "p.parquet", _table(int(day[-1]), 300), 7)
    index.build(lake.as_uri(), ["k"], tmp_path / "idx", zone_rows=100)
    cases = [  # (name, predicate, local_rows: 0 is Spark's reader, else the driver's)
        (lake.as_uri(), "k = 10005", 0),
        (lake.as_uri(), "k = 20005 AND day = '2024-01-02'", 0),
        (lake.as_uri(), "k = 20005 AND day = '2024-01-02'", 1000),
        (str(lake), "k = 5 OR day = '2024-01-01'", 0),
    ]
    for name, q, local_rows in cases:
        plan = plan_read(spark, name, tmp_path / "idx", q, local_rows=local_rows)
        assert "index not used" not in plan.read_reasons, (name, plan.notes)
        assert _rows(plan.df) == _rows(spark.read.parquet(str(lake)).where(q)), (name, q)
    for name in (lake.as_uri(), str(lake)):
        plan = plan_read(spark, name, tmp_path / "idx", "k = 10005 AND day = '2024-01-01'")
        assert plan.files_read == 1 and plan.notes == [
            "not used for pruning: day (no column of the indexed files)"
        ], plan.notes


def test_a_lake_s_files_are_the_ones_spark_reads(spark, tmp_path):
    """Found (Spark probe): bloomskip skipped every ``_`` name, so ``_y=1.parquet`` (data
    to Spark: it holds ``=``) was never a candidate; it indexed ``f.parquet._COPYING_``
    (a copy in progress, which Spark skips) and files in ``sub/`` (Spark reads a lake's
    subdirectories only as partitions): missing rows and extra ones. Spark's rules now
    decide what a lake holds, and plan_read leaves out what Spark would not read."""
    lake = tmp_path / "lake"
    (lake / "sub").mkdir(parents=True)
    for name, base in [("a.parquet", 0), ("_y=1.parquet", 1000), ("f.parquet._COPYING_", 2000)]:
        _write(lake / name, _table(base // 1000, 100).select(["k"]), 1)
    _write(lake / "sub" / "c.parquet", _table(4, 100).select(["k"]), 1)
    index.build(lake, ["k"], tmp_path / "idx")
    where = "k IN (5, 10005, 20005, 40004)"
    want = _rows(spark.read.parquet(str(lake)).where(where))
    assert want == [(5,), (10005,)]
    for local_rows in (0, 1000):
        plan = plan_read(spark, lake, tmp_path / "idx", where, local_rows=local_rows)
        assert _rows(plan.df) == want, (local_rows, plan.notes)
    assert plan.skip_reasons.get("in a subdirectory Spark does not read") == 1
    opts = {"recursiveFileLookup": "true"}
    plan = plan_read(spark, lake, tmp_path / "idx", where, options=opts)
    got = _rows(plan.df)
    assert got == _rows(spark.read.options(**opts).parquet(str(lake)).where(where)), got
    assert got == [(5,), (10005,), (40004,)]
    # with partitions Spark reads every file below them: day=1/sub/ has day = 1
    parted = tmp_path / "parted"
    for d, i in (("day=1", 0), ("day=1/sub", 1), ("day=2", 2)):
        (parted / d).mkdir(parents=True)
        _write(parted / d / "f.parquet", _table(i, 100).select(["k"]), 1)
    index.build(parted, ["k"], tmp_path / "pidx")
    where = "k IN (5, 10005, 20005)"
    want = _rows(spark.read.parquet(str(parted)).where(where))
    assert len(want) == 3, want
    for local_rows in (0, 1000):
        plan = plan_read(spark, parted, tmp_path / "pidx", where, local_rows=local_rows)
        assert _rows(plan.df) == want, (local_rows, plan.notes)


def test_a_file_uri_with_a_percent_sign_is_refused():
    """Found (Spark probe): ``file:///x/a%20b/lake`` is ``/x/a b/lake`` to pyarrow and
    ``/x/a%20b/lake`` to Spark: the index covered one, Spark read the other."""
    from bloomskip.errors import SourceError
    from bloomskip.sources import resolve

    for uri in ("file:///x/a%20b/lake", "file:/x/a%20b/lake"):
        with pytest.raises(SourceError, match="give the plain path"):
            resolve(uri)


def test_spark_is_told_the_root_of_a_lake_on_an_object_store():
    from bloomskip.spark.scan import _base_path

    files = ["s3://b/lake/day=1/f.parquet", "s3://b/lake/day=2/f.parquet"]
    assert _base_path(["s3a://b/lake/"], files) == "s3a://b/lake"
    assert _base_path(["s3://b/lake"], files) == "s3a://b/lake"
    assert _base_path(["s3a://b/lake/f.parquet"], ["s3://b/lake/f.parquet"]) is None  # a file
    assert _base_path(["s3://b/x", "s3://b/y"], files) is None  # several roots: no one base
    az = "abfss://c@acct.dfs.core.windows.net/lake"
    assert _base_path([az], [az + "/day=1/f.parquet"]) == az


def test_a_spark_build_never_collects_filters_on_the_driver(own_session_builds):
    """``spark.driver.maxResultSize=16m`` and 40 MiB of filters: the build succeeds, since
    tasks write their zones and return only small facts."""
    printed, dirs = own_session_builds
    out = printed["small-results"]
    assert out["failed"] == [] and out["filter_bytes"] >= 40 << 20
    lake, idx = dirs["small-results"] / "lake", dirs["small-results"] / "idx"
    ix = index.open(idx)
    assert ix.query("k = 50003").paths == [str(lake / "p05.parquet")]
    assert_same_index(idx, idx)  # the serving layout holds them
