"""Delta Lake tables as index sources (issue 15), against ``deltalake``'s own reader.

One module table, written by deltalake at test time: partitioned appends, a DELETE (delta-rs
rewrites the files), a MERGE, the index built, then a partition overwrite, a compaction
(OPTIMIZE) and another append. For every version (time travel) and every predicate, the
rows bloomskip reads through the index - candidate files and zones of that version's
snapshot, read with deletes applied, the predicate applied - equal the rows deltalake
reads at that version; no candidate is a file the version does not hold. Then the
deletion-vector and column-mapping tables of delta-rs's test data (checked in, see
``data/delta-rs/README.md``), the command line, and the errors.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from bloomskip import index, tables
from bloomskip.cli import main
from bloomskip.errors import InvalidParameterError, SourceError
from bloomskip.index.layout import Manifest
from tests.support.tables import (
    canonical,
    copy_fixture,
    delta_rows,
    matching,
    rows_via_index,
)

deltalake = pytest.importorskip("deltalake")
from deltalake import DeltaTable, write_deltalake  # noqa: E402

from bloomskip.tables.delta import DeltaSource  # noqa: E402

PREDICATES = [
    "id IN (1, 5, 250, 777, 999, 123456)",
    "key = 'k3'",
    "key = 'k3' AND part = 'a'",
    "part = 'b'",
    "part IS NULL OR grp IS NULL",
    "id = 7 OR part = 'c'",
    "key IN ('k1', 'k2') AND grp = 4",
]


def _rows(start: int, n: int, parts: list[str | None], seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + n, dtype=np.int64)
    grp = rng.integers(0, 9, n).astype(np.int32)
    return pa.table(
        {
            "id": ids,
            "key": [f"k{i % 37}" for i in ids],
            "grp": pa.array(grp, mask=grp == 0),
            "part": pa.array([parts[i % len(parts)] for i in range(n)], pa.string()),
        }
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A table with 7 versions; the index built at version 3 (zones of 25 rows)."""
    root = tmp_path_factory.mktemp("delta")
    path, idx = str(root / "events"), str(root / "events.idx")
    write_deltalake(path, _rows(0, 400, ["a", "b", None], 1), partition_by=["part"])  # v0
    write_deltalake(path, _rows(400, 200, ["a", "c"], 2), mode="append")  # v1
    DeltaTable(path).delete("id % 10 = 3")  # v2: rewrites files
    src = _rows(590, 30, ["b", "c"], 3)  # ids 590..619: 10 updated, 20 new
    (
        DeltaTable(path)
        .merge(src, predicate="t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )  # v3
    rep = index.build(path, ["id", "key", "grp"], idx, zone_rows=25)
    write_deltalake(
        path, _rows(1000, 50, ["b"], 4), mode="overwrite", predicate="part = 'b'"
    )  # v4: partition b replaced
    DeltaTable(path).optimize.compact()  # v5
    write_deltalake(path, _rows(2000, 40, ["d"], 5), mode="append")  # v6
    return path, idx, rep


def _uris(path: str, version: int) -> set[str]:
    return set(DeltaTable(path, version=version).file_uris())


def _check(path: str, idx: str, version: int, where: str) -> None:
    got, res = rows_via_index(idx, where, as_of=version)
    want = matching(delta_rows(path, version), where)
    assert canonical(got) == canonical(want), (version, where)
    held = _uris(path, version)
    assert {f.path for f in res.files} <= held, "a candidate the snapshot does not hold"
    assert res.snapshot == {"table": "delta", "version": version}


def test_the_index_records_its_snapshot(history):
    path, idx, rep = history
    assert rep.snapshot == {"table": "delta", "version": 3}
    assert rep.to_json()["snapshot"] == {"table": "delta", "version": 3}
    assert "delta version 3" in rep.to_text()
    m = index.open(idx).manifest
    assert m.snapshot == {"table": "delta", "version": 3}
    assert m.source == {"uri": path, "filesystem": "delta", "paths": [path]}
    old = m.to_json()
    del old["snapshot"]  # a manifest written before tables: still read
    assert Manifest.from_json(old, "old").snapshot is None


@pytest.mark.parametrize("version", range(7))
def test_every_version_reads_the_table_readers_rows(history, version):
    path, idx, _ = history
    for where in PREDICATES:
        _check(path, idx, version, where)


def test_the_index_prunes_at_its_own_version(history):
    _path, idx, _ = history
    zi = index.open(idx)
    res = zi.query("id = 5", as_of=3)
    assert res.files and all(f.zones is not None for f in res.files)
    assert res.zones_candidate < res.zones_total
    part = zi.query("part = 'b'", as_of=3)
    assert ("partition values" in {why for _, why in part.skipped}) and part.files
    named = Counter(why for _, why in part.skipped if why != "empty file")
    assert part.skip_reasons == dict(named) and part.files_skipped == len(part.skipped)
    assert all("/part=b/" in f.path for f in part.files)
    both = zi.query("key = 'k3' AND part = 'a'", as_of=3)
    assert all("/part=a/" in f.path for f in both.files)


def test_a_stale_index_reads_new_files_in_full_and_never_removed_ones(history):
    path, idx, _ = history
    res = index.open(idx).query("id = 2001")  # the latest version, 3 commits later
    assert res.snapshot == {"table": "delta", "version": 6}
    indexed = set(index.open(idx).fragments().column("path").to_pylist())
    latest = _uris(path, 6)
    assert {f.path for f in res.files} <= latest
    new = latest - indexed
    assert new and all(f.zones is None for f in res.files if f.path in new)
    assert any(f.reason == "not indexed" for f in res.files)


def test_refresh_reads_only_the_files_added_since(tmp_path):
    path, idx = str(tmp_path / "t"), str(tmp_path / "t.idx")
    write_deltalake(path, _rows(0, 300, ["a", "b"], 1), partition_by=["part"])
    write_deltalake(path, _rows(300, 100, ["a"], 2), mode="append")
    index.build(path, ["id"], idx, zone_rows=50)
    before = set(DeltaTable(path).file_uris())
    write_deltalake(path, _rows(400, 100, ["c"], 3), mode="append")
    DeltaTable(path).delete("part = 'b'")  # removes b's files
    after = set(DeltaTable(path).file_uris())
    rep = index.refresh(idx)
    assert rep.snapshot == {"table": "delta", "version": 3}
    assert rep.files_indexed == len(after - before)
    assert rep.files_dropped == len(before - after)
    assert rep.files_unchanged == len(before & after)
    st = index.open(idx).status()
    assert st["coverage"] == 1.0 and st["table_snapshot"] == st["snapshot"]
    assert st["removed_files"] == [] and st["unindexed_files"] == []
    for v in range(4):
        for where in ("id = 10", "id IN (350, 450)", "part = 'b'", "id = 5 OR part = 'c'"):
            _check(path, idx, v, where)


def test_status_says_which_snapshot_is_indexed_and_which_is_latest(history):
    _path, idx, _ = history
    st = index.open(idx).status()
    assert st["snapshot"] == {"table": "delta", "version": 3}
    assert st["table_snapshot"] == {"table": "delta", "version": 6}
    assert st["unindexed_files"] and st["removed_files"]
    text = index.ZoneIndex.status_text(st)
    assert "indexed delta version 3; the table is at delta version 6" in text


def test_the_directory_listing_is_not_the_table(history):
    """Files the table removed are still in the directory: a table source never lists
    them, so an index of the table never holds them."""
    path, idx, _ = history
    from bloomskip.sources.files import FileSource

    listed = {f.path for f in FileSource.resolve([path], single=True).list()}
    indexed = set(index.open(idx).fragments().column("path").to_pylist())
    assert indexed == _uris(path, 3) and indexed < listed


# ------------------------------------------------------------------ delta-rs test tables


def test_deletion_vectors_remove_rows_at_every_version(tmp_path):
    path = copy_fixture("table-with-dv-small", tmp_path)
    idx = str(tmp_path / "dv.idx")
    index.build(path, ["value"], idx, zone_rows=4)
    for v in (0, 1):
        for where in ("value = 0", "value = 9", "value IN (1, 9, 5)", "value IS NOT NULL"):
            got, _ = rows_via_index(idx, where, as_of=v)
            assert canonical(got) == canonical(matching(delta_rows(path, v), where))
    got, res = rows_via_index(idx, "value = 0")  # deleted by the vector: the zone stays
    assert got.num_rows == 0 and res.files and res.files[0].zones == [(0, 4)]


def test_deletion_vectors_changing_over_versions_and_checkpoints(tmp_path):
    path = copy_fixture("table_with_deletion_logs", tmp_path)
    idx = str(tmp_path / "logs.idx")
    index.build(path, ["id", "name"], idx, zone_rows=16)
    truth = delta_rows(path)
    ids = truth.column("id").to_pylist()
    wheres = [f"id = {ids[0]}", "id IN (12, 89, 13)", f"name = '{truth['name'][5]}'", "id = 12"]
    for v in (0, 2, 3, 4, 5, 10, 15, 20):
        for where in wheres:
            got, _ = rows_via_index(idx, where, as_of=v)
            assert canonical(got) == canonical(matching(delta_rows(path, v), where)), (v, where)


def test_column_mapping_reads_physical_names(tmp_path):
    path = copy_fixture("table_with_column_mapping", tmp_path)
    idx = str(tmp_path / "cm.idx")
    rep = index.build(path, ["Super Name"], idx, zone_rows=2)
    assert rep.failed == [] and rep.zones_written >= 2
    truth = delta_rows(path)
    name = truth.column("Super Name")[0].as_py()
    for where in (
        f"\"Super Name\" = '{name}'",
        "\"Company Very Short\" = 'BME'",
        f"\"Super Name\" = '{name}' AND \"Company Very Short\" = 'BMS'",
    ):
        got, _ = rows_via_index(idx, where)
        assert canonical(got) == canonical(matching(truth, where)), where


def _rename_columns(path: str, version: int, names: dict[str, str]) -> None:
    """Commit ``version`` renaming columns as Spark's ``RENAME COLUMN`` does under column
    mapping (delta-rs cannot): a metaData action, physical names kept."""
    import time

    log = f"{path}/_delta_log"
    with open(f"{log}/{0:020d}.json") as fh:
        meta = next(json.loads(line) for line in fh if '"metaData"' in line)["metaData"]
    schema = json.loads(meta["schemaString"])
    for f in schema["fields"]:
        f["name"] = names.get(f["name"], f["name"])
    meta["schemaString"] = json.dumps(schema)
    meta["partitionColumns"] = [names.get(c, c) for c in meta["partitionColumns"]]
    info = {"timestamp": int(time.time() * 1000), "operation": "RENAME COLUMN"}
    with open(f"{log}/{version:020d}.json", "x") as fh:
        fh.write(json.dumps({"commitInfo": info}) + "\n" + json.dumps({"metaData": meta}) + "\n")


def test_a_renamed_partition_column_under_column_mapping_is_followed(tmp_path):
    """Found (table probe): the partition column ``pc`` renamed to ``qc`` and ``v`` to
    ``pc``; ``pc = 'a'`` was answered from the index's ``pc`` - the old partition column -
    and missed every row (a Delta partition column had no physical name to be known by).
    Then a new column ``pc`` added after the rename: ``pc IS NULL`` missed the old rows."""
    path, idx = str(tmp_path / "t"), str(tmp_path / "t.idx")
    data = pa.table(
        {"id": pa.array([0, 1, 2, 3], pa.int64()), "v": ["a", "b", "a", "b"],
         "pc": ["x", "y", "x", "y"]}
    )  # fmt: skip
    config = {
        "delta.columnMapping.mode": "name",
        "delta.minReaderVersion": "2",
        "delta.minWriterVersion": "5",
    }
    write_deltalake(path, data, partition_by=["pc"], configuration=config)
    index.build(path, ["pc"], idx, zone_rows=2)
    _rename_columns(path, 1, {"pc": "qc", "v": "pc"})
    truth = delta_rows(path)
    for where in ("pc = 'a'", "qc = 'x'", "pc = 'x'", "qc = 'a'"):
        got, _ = rows_via_index(idx, where)
        assert canonical(got) == canonical(matching(truth, where)), where
    index.refresh(idx)
    for where in ("pc = 'a'", "qc = 'x'"):
        got, _ = rows_via_index(idx, where)
        assert canonical(got) == canonical(matching(truth, where)), where


# ------------------------------------------------------------------ command line, errors


def test_command_line_build_query_as_of_status(history, tmp_path, capsys):
    path, _, _ = history
    idx = str(tmp_path / "cli.idx")
    assert main(["index", "build", path, idx, "-c", "id", "--zone-rows", "50", "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert built["snapshot"] == {"table": "delta", "version": 6}
    assert main(["index", "query", idx, "id = 5", "--as-of", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["snapshot"] == {"table": "delta", "version": 2}
    assert {f["path"] for f in out["files"]} <= _uris(path, 2)
    assert main(["index", "query", idx, "id = 5"]) == 0
    assert "table delta version 6" in capsys.readouterr().out
    assert main(["index", "status", idx]) == 0
    assert "indexed delta version 6" in capsys.readouterr().out
    code = main(["index", "query", idx, "id = 5", "--as-of", "99"])
    err = capsys.readouterr().err
    assert code != 0 and "version 99" in err and "Traceback" not in err
    code = main(["index", "query", idx, "id = 5", "--as-of", "-1"])
    assert code != 0 and "Traceback" not in capsys.readouterr().err


def test_errors_are_typed(history, tmp_path):
    _path, idx, _ = history
    zi = index.open(idx)
    with pytest.raises(SourceError, match="version 42"):
        zi.query("id = 1", as_of=42)
    with pytest.raises(InvalidParameterError, match="check_source"):
        zi.query("id = 1", as_of=1, check_source=False)
    with pytest.raises(InvalidParameterError):
        zi.query("id = 1", as_of=True)
    lake = tmp_path / "lake"
    lake.mkdir()
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [1, 2]}), lake / "a.parquet")
    index.build(str(lake), ["id"], str(tmp_path / "lake.idx"))
    with pytest.raises(InvalidParameterError, match="not a table"):
        index.open(str(tmp_path / "lake.idx")).query("id = 1", as_of=0)


def test_a_table_made_again_at_the_same_place_is_read_afresh(tmp_path):
    """A table kept open between lookups is only moved forward while the commit it read
    is still there: deleted and written again, the new table is read from scratch."""
    import shutil

    path, idx = str(tmp_path / "again"), str(tmp_path / "again.idx")
    write_deltalake(path, _rows(0, 50, ["a"], 1))
    write_deltalake(path, _rows(50, 50, ["a"], 2), mode="append")
    index.build(path, ["id"], idx, zone_rows=10)
    assert index.open(idx).query("id = 60").snapshot == {"table": "delta", "version": 1}
    _check(path, idx, 1, "id IN (60, 515)")  # version 1 kept open
    shutil.rmtree(path)
    for i in range(3):
        write_deltalake(path, _rows(500 + 10 * i, 10, ["b"], i), mode="append")
    got, res = rows_via_index(idx, "id IN (60, 505, 525)")
    assert res.snapshot == {"table": "delta", "version": 2}
    assert sorted(got.column("id").to_pylist()) == [505, 525]
    _check(path, idx, 1, "id IN (60, 515)")  # a version kept open before: read afresh too


def test_the_latest_snapshot_is_kept_until_a_commit_follows(tmp_path):
    """Loads of the latest version share one snapshot while the log has no next commit
    file; a commit is seen at once."""
    path = str(tmp_path / "kept")
    write_deltalake(path, _rows(0, 20, ["a"], 1))
    first = DeltaSource.at(path).loaded()
    assert DeltaSource.at(path).loaded() is first
    write_deltalake(path, _rows(20, 20, ["b"], 2), mode="append")
    second = DeltaSource.at(path).loaded()
    assert second.id == 1 and len(second.files) == len(first.files) + 1
    assert DeltaSource.at(path).loaded() is second
    assert DeltaSource.at(path).as_of(0).loaded().files == first.files


def test_a_column_widened_since_indexing_still_finds_values_only_the_new_type_holds(tmp_path):
    """Found (probe): ``x`` int32 when indexed, overwritten as int64: ``x = 3000000000``
    was bound to the indexed type ("outside the range of int32": no row), and the
    partition pruning then dropped the file holding it, indexed column or not, stale
    index or refreshed."""
    t, idx = str(tmp_path / "t"), str(tmp_path / "idx")
    first = {"id": pa.array([1, 2], pa.int64()), "x": pa.array([1, 2], pa.int32())}
    write_deltalake(t, pa.table(first | {"p": ["a", "b"]}), partition_by=["p"])
    index.build(t, ["id", "x"], idx)
    later = {"id": pa.array([3], pa.int64()), "x": pa.array([3_000_000_000], pa.int64())}
    write_deltalake(
        t, pa.table(later | {"p": ["b"]}), mode="overwrite", schema_mode="overwrite",
        partition_by=["p"],
    )  # fmt: skip
    for refreshed in (False, True):
        if refreshed:
            index.refresh(idx)
        for where in ("x = 3000000000", "x = 3000000000 AND p = 'b'", "x = 3000000000 OR p = 'zz'"):
            res = index.open(idx).query(where)
            assert len(res.files) == 1, (refreshed, where, res.to_text())
            got = tables.open_table(t).read([f.path for f in res.files]).column("id").to_pylist()
            assert got == [3], (refreshed, where)
