"""``bloomskip demo``: the lake generator and the three-way lookup job, at tiny sizes."""

from __future__ import annotations

import json
import re

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from bloomskip.demo.job import WAYS, DemoMismatchError, ThreeWays, ensure_native_copy, run_demo
from bloomskip.demo.lake import SCHEMA, STAMP, LakeSpec, ensure_lake, file_table
from bloomskip.errors import InvalidParameterError

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TINY = LakeSpec(files=12, rows=3_001, row_group_rows=100)


def test_lake_shape_keys_and_determinism(tmp_path):
    lake = ensure_lake(tmp_path / "a", TINY)
    assert lake.generated and len(lake.files) == 12
    table = pq.read_table(lake.path)
    assert table.schema.equals(SCHEMA) and table.num_rows == 3_001
    assert [pq.read_metadata(f).num_rows for f in lake.files] == [251] + [250] * 11
    assert pq.read_metadata(lake.files[0]).num_row_groups == 3
    uuids = table.column("uuid").to_pylist()
    assert len(set(uuids)) == len(uuids) and all(UUID4.match(u) for u in uuids)
    assert pc.count_distinct(table.column("user_id")).as_py() > 300  # of 750 ids
    k = lake.keys
    assert k.uuid_present in uuids and k.uuid_absent not in uuids
    assert UUID4.match(k.uuid_absent)
    assert k.user_id_present in table.column("user_id").to_pylist()
    assert len(k.uuid_in) == 10 == len(set(k.uuid_in)) and set(k.uuid_in) <= set(uuids)
    assert set(k.where) == {
        "uuid present",
        "uuid absent",
        "user_id present",
        "uuid IN (10 values)",
    }
    # The same spec gives the same data, file by file, and the same keys.
    other = ensure_lake(tmp_path / "b", TINY)
    assert other.keys == k
    assert all(
        pq.read_table(a).equals(pq.read_table(b))
        for a, b in zip(lake.files, other.files, strict=True)
    )
    assert not file_table(LakeSpec(files=12, rows=3_001, seed=1), 0).equals(file_table(TINY, 0))


def test_lake_reused_regenerated_and_foreign_dirs_left_alone(tmp_path):
    first = ensure_lake(tmp_path / "lake", TINY)
    again = ensure_lake(tmp_path / "lake", TINY)
    assert not again.generated and again.keys == first.keys
    assert ensure_lake(tmp_path / "lake", TINY, fresh=True).generated
    bigger = LakeSpec(files=12, rows=4_000, row_group_rows=100)
    assert ensure_lake(tmp_path / "lake", bigger).generated  # stamp differs: regenerated
    assert json.loads((tmp_path / "lake" / STAMP).read_text())["spec"]["rows"] == 4_000
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("not the demo's")
    with pytest.raises(InvalidParameterError, match="not written by the demo"):
        ensure_lake(foreign, TINY)
    assert (foreign / "keep.txt").exists()
    with pytest.raises(InvalidParameterError):
        LakeSpec(files=10, rows=5)


def test_three_ways_fail_loudly_when_rows_differ():
    class Lying(ThreeWays):
        def run_once(self, way, where):
            rows = [("a",)] if way != "bloomskip" else []
            return rows, 0.01, 0.0, None, None

    with pytest.raises(DemoMismatchError, match="bloomskip returned 0 rows"):
        Lying(None, "lake", "copy", "index").measure("q", "uuid = 'a'")


@pytest.mark.spark
def test_demo_job_end_to_end(spark, tmp_path):
    spec = LakeSpec(files=8, rows=4_000 * 8, row_group_rows=1_000)
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    result = run_demo(tmp_path / "demo", spec=spec, spark=spark, warm_up=False, say=lambda m: None)
    assert spark.conf.get("spark.sql.files.maxPartitionBytes") == before  # restored
    assert spark.range(3).count() == 3  # the shared session still runs

    assert result.native.files == 8 and result.native.bloom_bytes > 0
    assert result.index.files_indexed == 8 and result.index.bytes_written > 0
    by = {(m.query, m.way): m for m in result.measurements}
    assert len(by) == 4 * len(WAYS)
    for query in result.lake.keys.where:
        counts = {by[(query, w)].rows for w in WAYS}
        assert len(counts) == 1, (query, counts)  # run_demo also compared the rows
    assert by[("uuid present", "spark scan")].rows == 1
    assert by[("uuid absent", "spark scan")].rows == 0
    assert by[("uuid IN (10 values)", "spark scan")].rows == 10
    assert by[("user_id present", "spark scan")].rows >= 1
    # bloomskip opens only the file holding the uuid; the full scan opens all of them.
    if by[("uuid present", "bloomskip")].files_read is not None:  # classic Spark metrics
        assert by[("uuid present", "bloomskip")].files_read == 1
        assert by[("uuid absent", "bloomskip")].files_read == 0
        assert by[("uuid present", "spark scan")].files_read == 8
        assert by[("uuid present", "native bloom")].rows_scanned < spec.rows
    table = result.table()
    assert "uuid IN (10 values)" in table and "same rows" in table
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["rows_equal"] and len(doc["lookups"]) == 12

    # The next run re-uses the lake and the copy.
    lake = ensure_lake(tmp_path / "demo" / "lake", spec)
    assert not lake.generated and lake.keys == result.lake.keys
    copy = ensure_native_copy(spark, lake, result.native.path, say=lambda m: None)
    assert not copy.generated and copy.bloom_bytes == result.native.bloom_bytes
