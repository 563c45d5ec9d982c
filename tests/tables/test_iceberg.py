"""Iceberg tables as index sources (issue 15), against pyiceberg's own reader.

The module table lives in a pyiceberg ``SqlCatalog`` on sqlite in a temporary directory,
reached as ``iceberg://<catalog>/ns.events``. It is partitioned by identity on a string
and a date column; its history: two appends, a delete (pyiceberg deletes copy-on-write),
the index built, an overwrite of one partition, a column added and a column renamed,
another append. For every snapshot (time travel) and predicate, the rows bloomskip reads
through the index equal ``table.scan(snapshot_id=...).to_arrow()`` filtered by DuckDB, and
no candidate is a file the snapshot does not hold. Then: a static ``*.metadata.json``,
position deletes (applied) and equality deletes (refused, naming the table and the file),
the command line with the catalog from ``PYICEBERG_CATALOG__*`` variables.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from bloomskip import index
from bloomskip.errors import SourceError, UnsupportedFileError
from bloomskip.tables import open_table
from tests.support.tables import (
    POSITION_DELETE_SCHEMA,
    canonical,
    commit_delete_file,
    iceberg_catalog,
    iceberg_rows,
    matching,
    rows_via_index,
)

pytest.importorskip("pyiceberg")
from pyiceberg.types import LongType

DAY0 = dt.date(2026, 5, 1)
STABLE = [  # predicates on columns every snapshot has
    "id IN (1, 5, 250, 777, 1010, 123456)",
    "part = 'b'",
    "part IS NULL OR grp IS NULL",
    "id = 7 OR part = 'c'",
    "day = DATE '2026-05-02' AND grp = 3",
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
            "day": pa.array([DAY0 + dt.timedelta(days=int(i % 3)) for i in ids], pa.date32()),
        }
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    root = tmp_path_factory.mktemp("iceberg")
    catalog = iceberg_catalog(root, "hist")
    first = _rows(0, 400, ["a", "b", None], 1)
    tbl = catalog.create_table("ns.events", schema=first.schema)
    with tbl.update_spec() as spec:
        spec.add_identity("part")
        spec.add_identity("day")
    tbl.append(first)
    tbl.append(_rows(400, 200, ["a", "c"], 2))
    tbl.delete("id >= 100 and id < 130")  # copy-on-write: files rewritten
    idx = str(root / "events.idx")
    rep = index.build("iceberg://hist/ns.events", ["id", "key", "grp"], idx, zone_rows=25)
    tbl.overwrite(_rows(1000, 50, ["b"], 4), overwrite_filter="part == 'b'")
    with tbl.update_schema() as upd:
        upd.add_column("extra", LongType())
        upd.rename_column("key", "label")
    more = _rows(2000, 40, ["d"], 5).rename_columns(["id", "label", "grp", "part", "day"])
    more = more.append_column("extra", pa.array(np.arange(40), pa.int64()))
    tbl.append(more.select([f.name for f in tbl.schema().fields]))
    snaps = [s.snapshot_id for s in tbl.snapshots()]
    return catalog.load_table("ns.events"), idx, rep, snaps


def _held(tbl, sid) -> set[str]:
    from bloomskip.tables.iceberg import fs_path

    return {fs_path(t.file.file_path)[1] for t in tbl.scan(snapshot_id=sid).plan_files()}


def _check(tbl, idx: str, sid: int, where: str, columns=None) -> None:
    got, res = rows_via_index(idx, where, as_of=sid, columns=columns)
    want = matching(iceberg_rows(tbl, sid), where)
    if columns:
        want = want.select(columns)
    assert canonical(got) == canonical(want), (sid, where)
    assert {f.path for f in res.files} <= _held(tbl, sid)
    assert res.snapshot == {"table": "iceberg", "snapshot_id": sid}


def test_the_index_records_its_snapshot(history):
    _tbl, idx, rep, snaps = history
    assert rep.snapshot == {"table": "iceberg", "snapshot_id": snaps[2]}
    m = index.open(idx).manifest
    assert m.snapshot == rep.snapshot
    assert m.source["filesystem"] == "iceberg" and m.source["uri"] == "iceberg://hist/ns.events"


def test_every_snapshot_reads_the_table_readers_rows(history):
    tbl, idx, _, snaps = history
    assert len(snaps) >= 6
    for sid in snaps:
        for where in STABLE:
            _check(tbl, idx, sid, where, columns=["id", "grp", "part", "day"])


def test_partition_values_prune_with_the_filters(history):
    _tbl, idx, _, snaps = history
    zi = index.open(idx)
    res = zi.query("day = DATE '2026-05-02' AND part = 'a'", as_of=snaps[2])
    assert res.files and {"partition values"} == {why for _, why in res.skipped}
    assert res.skip_reasons == {"partition values": len(res.skipped)}
    assert all("part=a" in f.path and "day=2026-05-02" in f.path for f in res.files)
    zoned = zi.query("id = 3 AND part = 'a'", as_of=snaps[2])  # 3 % 3: 'a'
    assert zoned.files and all(f.zones is not None for f in zoned.files)


def test_schema_evolution_renamed_and_added_columns(history):
    tbl, idx, _, snaps = history
    latest = snaps[-1]
    for where in ("label = 'k3'", "label = 'k3' AND part = 'd'", "extra = 5", "extra IS NULL"):
        _check(tbl, idx, latest, where)
    rep = index.refresh(idx)  # the renamed column is found by its field id
    assert rep.failed == [] and rep.files_indexed > 0
    zi = index.open(idx)
    res = zi.query("label = 'k3'")
    indexed = set(zi.fragments().column("path").to_pylist())
    assert all(f.zones is not None for f in res.files if f.path in indexed)
    _check(tbl, idx, latest, "label = 'k3'")
    _check(tbl, idx, latest, "label IN ('k1', 'k30') OR extra = 7")


def test_two_indexed_columns_that_swap_names_are_followed_by_field_id(tmp_path):
    """Found (review): after ``a`` and ``b`` swapped names, ``a = v`` was answered from
    the index's ``a`` - the other column - and missed the files holding ``v`` (a false
    negative), and a refresh indexed the new files' columns under the swapped names."""
    catalog = iceberg_catalog(tmp_path, "swap")
    first = pa.table({"a": pa.array(range(0, 300), pa.int64()),
                      "b": pa.array(range(5000, 5300), pa.int64())})  # fmt: skip
    tbl = catalog.create_table("ns.t", schema=first.schema)
    tbl.append(first)
    idx = str(tmp_path / "swap.idx")
    index.build("iceberg://swap/ns.t", ["a", "b"], idx, zone_rows=50)
    for old, new in (("a", "tmp"), ("b", "a"), ("tmp", "b")):
        with tbl.update_schema() as upd:
            upd.rename_column(old, new)
    tbl = catalog.load_table("ns.t")
    more = pa.table({"b": pa.array([7, 8], pa.int64()), "a": pa.array([9000, 9001], pa.int64())})
    tbl.append(more.select([f.name for f in tbl.schema().as_arrow()]))
    tbl = catalog.load_table("ns.t")
    wheres = ["a = 5001", "b = 3", "a = 3", "b = 5001", "a IN (9000, 5299)", "b = 8"]
    for refreshed in (False, True):
        for where in wheres:
            got, res = rows_via_index(idx, where)
            assert canonical(got) == canonical(matching(iceberg_rows(tbl), where)), where
        if not refreshed:
            assert index.refresh(idx).files_indexed == 1
    res = index.open(idx).query("a = 5001")  # the first file, by the zone holding it
    assert [f.zones for f in res.files] == [[(0, 50)]]


def test_a_schema_change_with_no_commit_since_is_the_latest_reads(tmp_path):
    """Found (table probe): pyiceberg's ``scan()`` and Spark read the current snapshot
    with the table's *current* schema. A column dropped and added again, or two names
    swapped, with no commit since: the index answered for the snapshot's column of that
    name (``a IS NULL`` and ``a = 'p'`` found no file - false negatives against the
    latest read). Such names now may match."""
    from pyiceberg.types import StringType

    catalog = iceberg_catalog(tmp_path, "drift")
    data = pa.table({"id": pa.array([0, 1], pa.int64()), "a": ["x", "y"], "b": ["p", "q"]})
    tbl = catalog.create_table("ns.t", schema=data.schema)
    tbl.append(data)
    idx = str(tmp_path / "drift.idx")
    index.build("iceberg://drift/ns.t", ["a", "b"], idx, zone_rows=1)

    def candidates_hold_every_match(where: str, pyiceberg_filter: str) -> None:
        want = catalog.load_table("ns.t").scan(row_filter=pyiceberg_filter).to_arrow()
        assert want.num_rows, where
        res = index.open(idx).query(where)
        assert len(res.files) == 1 and res.files[0].zones in (None, [(0, 1), (1, 1)]), where

    with tbl.update_schema() as upd:
        upd.delete_column("a")
    with tbl.update_schema() as upd:
        upd.add_column("a", StringType())
    candidates_hold_every_match("a IS NULL", "a is null")
    for old, new in (("a", "tmp"), ("b", "a"), ("tmp", "b")):
        with tbl.update_schema() as upd:
            upd.rename_column(old, new)
    candidates_hold_every_match("a = 'p'", "a == 'p'")
    tbl = catalog.load_table("ns.t")
    more = pa.table({"id": pa.array([2], pa.int64()), "b": ["s"], "a": ["r"]})
    # a commit: the snapshot's schema is the current one again
    tbl.append(more.select([f.name for f in tbl.schema().as_arrow()]))
    res = index.open(idx).query("a = 'p'")  # the old b, followed by field id
    assert [f.zones for f in res.files if f.zones is not None] == [[(0, 1)]]


def test_a_static_metadata_file(history, tmp_path):
    tbl, _, _, snaps = history
    idx = str(tmp_path / "static.idx")
    rep = index.build(tbl.metadata_location, ["id"], idx, zone_rows=50)
    assert rep.snapshot == {"table": "iceberg", "snapshot_id": snaps[-1]}
    for where in ("id = 2005", "id IN (5, 1001)", "part = 'd'"):
        got, _ = rows_via_index(idx, where)
        assert canonical(got) == canonical(matching(iceberg_rows(tbl), where))


def test_position_deletes_are_applied_and_zones_stay(tmp_path):
    catalog = iceberg_catalog(tmp_path, "posdel")
    data = pa.table({"id": np.arange(40, dtype=np.int64), "s": [f"v{i}" for i in range(40)]})
    tbl = catalog.create_table("ns.t", schema=data.schema)
    tbl.append(data)
    idx = str(tmp_path / "t.idx")
    index.build("iceberg://posdel/ns.t", ["id", "s"], idx, zone_rows=10)
    path = next(iter(tbl.scan().plan_files())).file.file_path
    rows = pa.table({"file_path": [path] * 3, "pos": [3, 7, 31]}, schema=POSITION_DELETE_SCHEMA)
    commit_delete_file(tbl, "position", rows)
    tbl = catalog.load_table("ns.t")
    for where in ("id = 3", "id = 4", "id IN (7, 8, 31)", "s = 'v31'", "id IS NOT NULL"):
        got, res = rows_via_index(idx, where)
        assert canonical(got) == canonical(matching(iceberg_rows(tbl), where)), where
    got, res = rows_via_index(idx, "id = 3")
    assert got.num_rows == 0 and res.files and res.files[0].zones == [(0, 10)]  # AtMost


def test_equality_deletes_are_refused_naming_the_table_and_file(tmp_path):
    catalog = iceberg_catalog(tmp_path, "eqdel")
    data = pa.table({"id": np.arange(20, dtype=np.int64)})
    tbl = catalog.create_table("ns.t", schema=data.schema)
    tbl.append(data)
    idx = str(tmp_path / "t.idx")
    index.build("iceberg://eqdel/ns.t", ["id"], idx, zone_rows=10)
    eq = pa.table({"id": pa.array([5], pa.int64())})
    eq = eq.cast(pa.schema([pa.field("id", pa.int64(), True, {"PARQUET:field_id": "1"})]))
    where = commit_delete_file(tbl, "equality", eq, equality_ids=[1])
    res = index.open(idx).query("id = 5")  # candidates stay a superset: answered
    assert res.files
    assert index.refresh(idx).failed == []
    with pytest.raises(UnsupportedFileError) as e:
        open_table("iceberg://eqdel/ns.t").read_tasks()
    msg = str(e.value)
    assert "iceberg://eqdel/ns.t" in msg and where in msg and "equality delete" in msg


def test_errors_are_typed(history, tmp_path):
    _, idx, _, _ = history
    with pytest.raises(SourceError, match="no snapshot 42"):
        index.open(idx).query("id = 1", as_of=42)
    with pytest.raises(SourceError, match="cannot load"):
        index.build("iceberg://hist/ns.nothing", ["id"], str(tmp_path / "x.idx"))
    with pytest.raises(ValueError, match=r"NAMESPACE\.TABLE"):
        index.build("iceberg://hist/nodots", ["id"], str(tmp_path / "y.idx"))


def test_command_line_with_a_catalog_from_the_environment(history, tmp_path):
    """A fresh process: the catalog comes from PYICEBERG_CATALOG__HIST__* (SqlCatalog
    keys its tables by catalog name, so the name is the one the table was made in)."""
    tbl, _, _, snaps = history
    root = tbl.location().removeprefix("file://").split("/wh/")[0]
    env = dict(os.environ)
    env.update(
        PYICEBERG_CATALOG__HIST__TYPE="sql",
        PYICEBERG_CATALOG__HIST__URI=f"sqlite:///{root}/catalog.db",
        PYICEBERG_CATALOG__HIST__WAREHOUSE=f"file://{root}/wh",
        PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(index.__file__)), *sys.path]),
    )
    idx = str(tmp_path / "env.idx")
    script = (  # one process, two commands: bloomskip's import and kernels load once
        "import os, sys\nfrom bloomskip.cli import main\n"
        f"main(['index', 'build', 'iceberg://hist/ns.events', {idx!r}, '-c', 'id', '--json'])\n"
        f"code = main(['index', 'query', {idx!r}, 'id = 5', '--as-of', '{snaps[0]}', '--json'])\n"
        # as the bloomskip executable exits (cli.run): pyarrow's thread pools can abort a
        # finished process at interpreter teardown (apache/arrow#34314)
        "sys.stdout.flush()\nos._exit(code)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    built, got = (json.loads(part) for part in out.stdout.strip().split("\n", 1))
    assert built["snapshot"]["snapshot_id"] == snaps[-1]
    assert got["snapshot"] == {"table": "iceberg", "snapshot_id": snaps[0]}
    assert {f["path"] for f in got["files"]} <= _held(tbl, snaps[0])


def test_a_column_promoted_since_indexing_still_finds_values_only_the_new_type_holds(
    tmp_path,
):
    """Found (probe): ``k`` int promoted to long after indexing; ``k = 3000000000 AND
    p = 'b'`` bound ``k`` as int ("outside the range of int32": no row) and the
    partition pruning dropped the file holding it, even after a refresh."""
    catalog = iceberg_catalog(tmp_path, "widen")
    tbl = catalog.create_table("ns.t", schema=pa.schema([("k", pa.int32()), ("p", pa.string())]))
    with tbl.update_spec() as spec:
        spec.add_identity("p")
    tbl.append(pa.table({"k": pa.array([1], pa.int32()), "p": ["a"]}))
    idx = str(tmp_path / "idx")
    index.build("iceberg://widen/ns.t", ["k"], idx)
    with tbl.update_schema() as upd:
        upd.update_column("k", field_type=LongType())
    tbl = catalog.load_table("ns.t")
    tbl.append(pa.table({"k": pa.array([3_000_000_000], pa.int64()), "p": ["b"]}))
    for refreshed in (False, True):
        if refreshed:
            index.refresh(idx)
        for where in ("k = 3000000000 AND p = 'b'", "k = 3000000000 OR p = 'zz'"):
            got, _res = rows_via_index(idx, where)
            assert got.column("k").to_pylist() == [3_000_000_000], (refreshed, where)


def test_a_snapshot_that_lists_a_data_file_twice_is_refused_in_one_line(tmp_path, capsys):
    """Found (probe): ``add_files(..., check_duplicate_files=False)`` of a file already in
    the table: pyiceberg reads its rows twice; the build failed on an assertion."""
    import pyarrow.parquet as pq

    from bloomskip.cli import main

    catalog = iceberg_catalog(tmp_path, "dup")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
    tbl = catalog.create_table("ns.t", schema=data.schema)
    path = str(tmp_path / "f.parquet")
    pq.write_table(data, path)
    tbl.add_files(["file://" + path])
    catalog.load_table("ns.t").add_files(["file://" + path], check_duplicate_files=False)
    idx = str(tmp_path / "idx")
    with pytest.raises(UnsupportedFileError, match=r"lists the data file .* more than once"):
        index.build("iceberg://dup/ns.t", ["id"], idx)
    assert main(["index", "build", "iceberg://dup/ns.t", idx, "-c", "id"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than once" in err, err


def _appended(tmp_path, name: str, appends: int, rows: int):
    """A catalog ``name`` whose table ``ns.t`` had ``appends`` appends (a manifest each) of
    ``rows`` ids; returns the catalog and the maker of the ``i``-th batch of ids."""
    catalog = iceberg_catalog(tmp_path, name)

    def batch(i: int) -> pa.Table:
        return pa.table({"id": pa.array(range(i * rows, i * rows + rows), pa.int64())})

    tbl = catalog.create_table("ns.t", schema=batch(0).schema)
    for i in range(appends):
        tbl.append(batch(i))
    return catalog, batch


@contextlib.contextmanager
def _manifest_reads():
    """The manifests pyiceberg reads inside the block (their paths, in order)."""
    from pyiceberg.manifest import ManifestFile

    reads: list[str] = []
    fetch = ManifestFile.fetch_manifest_entry

    def counted(self, io, discard_deleted=True):
        reads.append(self.manifest_path)
        return fetch(self, io, discard_deleted=discard_deleted)

    ManifestFile.fetch_manifest_entry = counted
    try:
        yield reads
    finally:
        ManifestFile.fetch_manifest_entry = fetch


def test_a_lookup_reads_only_the_manifests_a_commit_wrote(tmp_path, monkeypatch):
    """Iceberg never rewrites a metadata file, so snapshots and manifests read once are
    kept: a lookup of an unchanged table reads no manifest, and after a commit only the
    manifests it wrote. Every answer still holds every match: after an append, a delete
    (files rewritten), a table dropped and made again under the same name, and with the
    bound on kept entries forcing manifests out."""
    from bloomskip.tables import iceberg as ice

    catalog, batch = _appended(tmp_path, "kept", 5, 100)
    idx = str(tmp_path / "kept.idx")
    index.build("iceberg://kept/ns.t", ["id"], idx, zone_rows=25)

    def lookup(where: str) -> int:
        """Manifests the lookup read; its rows checked against pyiceberg's."""
        with _manifest_reads() as reads:
            index.open(idx).query(where)
        got, _ = rows_via_index(idx, where)
        want = matching(iceberg_rows(catalog.load_table("ns.t")), where)
        assert canonical(got) == canonical(want), where
        return len(reads)

    ice.forget()
    assert lookup("id = 7") == 5
    assert lookup("id = 307") == 0
    catalog.load_table("ns.t").append(batch(9))  # not indexed: a candidate in full
    assert lookup("id = 907") == 1
    catalog.load_table("ns.t").delete("id >= 300 and id < 310")  # a file rewritten
    assert lookup("id = 305 OR id = 311") <= 2
    assert lookup("id = 311") == 0
    monkeypatch.setattr(ice._MANIFESTS, "weight", 2)  # each manifest holds 1-2 entries
    ice.forget()
    for where in ("id = 7", "id = 311", "id = 907"):
        ice._SNAPSHOTS.clear()  # so that the manifests are looked for
        assert lookup(where) >= 5
        assert 0 < ice._MANIFESTS.held() <= 2
    monkeypatch.undo()
    catalog.drop_table("ns.t")
    again = catalog.create_table("ns.t", schema=batch(0).schema)
    again.append(batch(50))  # another table: the index covers none of its files
    got, res = rows_via_index(idx, "id = 5007")
    assert got.column("id").to_pylist() == [5007]
    assert [f.zones for f in res.files] == [None]


def test_reading_a_few_files_plans_their_manifests_with_every_delete(tmp_path):
    """Reading candidates plans only the manifests holding them, and every delete
    manifest: each file's task equals the whole scan's (the same delete files), position
    deletes written before and after later appends are applied, and only the data
    manifests of the files read are opened."""
    from bloomskip.tables.iceberg import fs_path

    catalog, batch = _appended(tmp_path, "plan", 3, 10)

    def delete(tbl, file_no: int, positions: list[int]) -> None:
        path = sorted(t.file.file_path for t in tbl.scan().plan_files())[file_no]
        n = len(positions)
        rows = pa.table({"file_path": [path] * n, "pos": positions}, schema=POSITION_DELETE_SCHEMA)
        commit_delete_file(tbl, "position", rows)

    delete(catalog.load_table("ns.t"), 0, [1, 2])
    tbl = catalog.load_table("ns.t")
    for i in range(3, 6):
        tbl.append(batch(i))
    delete(catalog.load_table("ns.t"), 4, [0])
    delete(catalog.load_table("ns.t"), 0, [9])
    tbl = catalog.load_table("ns.t")
    whole = {t.file.file_path: t for t in tbl.scan().plan_files()}
    assert len(whole) == 6 and any(t.delete_files for t in whole.values())
    src = open_table("iceberg://plan/ns.t")
    by_path = {f.path: src.uri_of(f.path) for f in src.loaded().files}
    one_by_one = []
    for raw, want in whole.items():
        with _manifest_reads() as reads:
            (task,) = src.read_tasks([by_path[fs_path(raw)[1]]])
        assert len(reads) <= 4  # its data manifest and the three delete manifests
        got = {d.file_path for d in task.task.delete_files}
        assert got == {d.file_path for d in want.delete_files}, raw
        one_by_one += [i for part in task.read(None, ["id"]) for i in part["id"].to_pylist()]
    truth = sorted(iceberg_rows(tbl).column("id").to_pylist())
    assert sorted(one_by_one) == truth and len(truth) == 60 - 4  # 4 rows deleted
    every = src.read_tasks()  # all files: the whole scan's plan
    ids = [i for t in every for part in t.read(None, ["id"]) for i in part["id"].to_pylist()]
    assert sorted(ids) == truth
