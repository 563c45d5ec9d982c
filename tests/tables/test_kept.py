"""An index kept open across a table's commits answers as a fresh open does.

A lookup of a table keeps, with the open index, how a snapshot's files match the index's
fragments (what does not depend on the predicate: which files are indexed and unchanged,
their URIs, sizes, rows and partition values): a snapshot's files never change, and the
table layers hand out the same snapshot object while the snapshot is the same. So a
lookup of an unchanged table costs what its candidates cost. These tests hold one index
open through appends, deletes, partition overwrites, a table deleted and written again
at its path, and time travel back and forth, and compare every answer with a fresh
``index.open`` (which matches afresh) and the rows with the table's own reader.
"""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pytest

from bloomskip import index
from tests.support.tables import (
    canonical,
    delta_rows,
    iceberg_catalog,
    iceberg_rows,
    matching,
    rows_via_index,
)

WHERES = ["id = 7", "id IN (3, 150, 260)", "part = 'b'", "id = 151 OR part = 'c'", "id >= 0"]


def _rows(start: int, n: int, part: str) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "part": pa.array([part] * n, pa.string())})


def _answer(res) -> dict:
    out = res.to_json()
    out.pop("seconds")
    out["skipped"] = sorted(out["skipped"], key=lambda d: d["path"])
    return out


def _same(kept, idx: str, where: str, as_of=None) -> None:
    """The open index's answer equals a fresh open's."""
    a = kept.query(where, as_of=as_of)
    b = index.open(idx).query(where, as_of=as_of)
    assert _answer(a) == _answer(b), (where, as_of)


def test_delta_an_index_kept_open_follows_commits_and_time_travel(tmp_path):
    from deltalake import DeltaTable, write_deltalake

    path, idx = str(tmp_path / "t"), str(tmp_path / "t.idx")
    write_deltalake(path, _rows(0, 100, "a"), partition_by=["part"])
    write_deltalake(path, _rows(100, 100, "b"), mode="append")
    index.build(path, ["id"], idx, zone_rows=20)
    kept = index.open(idx)
    steps = [
        lambda: write_deltalake(path, _rows(200, 100, "c"), mode="append"),
        lambda: DeltaTable(path).delete("id >= 140 AND id < 160"),
        lambda: write_deltalake(
            path, _rows(300, 30, "b"), mode="overwrite", predicate="part = 'b'"
        ),
    ]
    for step in [lambda: None, *steps]:
        step()
        latest = DeltaTable(path).version()
        for where in WHERES:
            _same(kept, idx, where)
            for v in range(latest + 1):  # time travel, back and forth
                _same(kept, idx, where, as_of=v)
            got, _ = rows_via_index(idx, where)
            assert canonical(got) == canonical(matching(delta_rows(path), where)), where
    assert len(kept._matched) <= 4  # snapshots kept per open index
    shutil.rmtree(path)  # deleted and written again at its path: another table
    write_deltalake(path, _rows(500, 10, "a"), partition_by=["part"])
    for where in [*WHERES, "id = 505"]:
        _same(kept, idx, where)
    res = kept.query("id = 505")
    assert [f.zones for f in res.files] == [None]  # a file the index has not seen


def test_iceberg_an_index_kept_open_follows_commits_and_time_travel(tmp_path):
    pytest.importorskip("pyiceberg")
    catalog = iceberg_catalog(tmp_path, "keptopen")
    tbl = catalog.create_table("ns.t", schema=_rows(0, 1, "a").schema)
    with tbl.update_spec() as spec:
        spec.add_identity("part")
    tbl.append(_rows(0, 100, "a"))
    tbl.append(_rows(100, 100, "b"))
    idx = str(tmp_path / "t.idx")
    index.build("iceberg://keptopen/ns.t", ["id"], idx, zone_rows=20)
    kept = index.open(idx)
    steps = [
        lambda: catalog.load_table("ns.t").append(_rows(200, 100, "c")),
        lambda: catalog.load_table("ns.t").delete("id >= 140 and id < 160"),
        lambda: catalog.load_table("ns.t").overwrite(
            _rows(300, 30, "b"), overwrite_filter="part == 'b'"
        ),
    ]
    for step in [lambda: None, *steps]:
        step()
        tbl = catalog.load_table("ns.t")
        for where in WHERES:
            _same(kept, idx, where)
            for snap in tbl.snapshots():
                _same(kept, idx, where, as_of=snap.snapshot_id)
            got, _ = rows_via_index(idx, where)
            assert canonical(got) == canonical(matching(iceberg_rows(tbl), where)), where
    catalog.drop_table("ns.t")  # made again under its name: another table
    again = catalog.create_table("ns.t", schema=_rows(0, 1, "a").schema)
    again.append(_rows(500, 10, "a"))
    for where in [*WHERES, "id = 505"]:
        _same(kept, idx, where)
    assert [f.zones for f in kept.query("id = 505").files] == [None]
