"""Delta and Iceberg tables on an S3 API (moto on loopback, ``tests/support/s3.py``), and
a Delta table on Azure's Blob API (Azurite, ``tests/support/azure.py``):
deltalake writes the Delta table through its own S3 client (configured by the standard
``AWS_*`` variables moto's fixture sets), pyiceberg's ``SqlCatalog`` keeps its warehouse
on S3 (``s3.endpoint`` and keys as catalog properties); the index lives on S3 too for
one of them. Built, made stale, refreshed and queried at the latest snapshot and an
older one, the rows read through the index equal the table reader's.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from bloomskip import index
from tests.support.tables import canonical, delta_rows, iceberg_rows, matching, rows_via_index

pytest.importorskip("moto")
deltalake = pytest.importorskip("deltalake")
pytest.importorskip("pyiceberg")


def _table(start: int, n: int, parts) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "part": [parts[i % len(parts)] for i in range(n)]})


def test_a_delta_table_on_s3(s3, tmp_path):
    from deltalake import DeltaTable, write_deltalake

    uri = s3.uri(s3.fresh(), "events")
    idx = s3.uri(s3.fresh(), "events.idx")  # the index on S3 as well
    write_deltalake(uri, _table(0, 200, ["a", "b"]), partition_by=["part"])
    index.build(uri, ["id"], idx, zone_rows=20)
    DeltaTable(uri).delete("id = 5")
    write_deltalake(uri, _table(200, 40, ["c"]), mode="append")
    for version in (0, 1, 2):
        for where in ("id IN (5, 6, 210)", "part = 'b' AND id = 7"):
            got, res = rows_via_index(idx, where, as_of=version)
            want = matching(delta_rows(uri, version), where)
            assert canonical(got) == canonical(want), (version, where)
            assert {f.path for f in res.files} <= set(DeltaTable(uri, version=version).file_uris())
    rep = index.refresh(idx)
    assert rep.snapshot == {"table": "delta", "version": 2} and rep.files_indexed == 2
    got, res = rows_via_index(idx, "id = 210")
    assert [r["id"] for r in got.to_pylist()] == [210] and all(f.zones for f in res.files)


def test_an_iceberg_table_on_s3(s3, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    from bloomskip.tables import configure_catalog

    props = {
        "uri": f"sqlite:///{tmp_path}/catalog.db",
        "warehouse": s3.uri(s3.fresh(), "wh"),
        "s3.endpoint": s3.endpoint,
        "s3.access-key-id": "testing",
        "s3.secret-access-key": "testing",
        "s3.region": "us-east-1",
    }
    catalog = SqlCatalog("s3cat", **props)
    catalog.create_namespace("ns")
    configure_catalog("s3cat", type="sql", **props)
    first = _table(0, 200, ["a", "b"])
    tbl = catalog.create_table("ns.t", schema=first.schema)
    tbl.append(first)
    idx = str(tmp_path / "t.idx")
    index.build("iceberg://s3cat/ns.t", ["id"], idx, zone_rows=20)
    s0 = tbl.current_snapshot().snapshot_id
    tbl.delete("id < 10")
    tbl.append(_table(200, 40, ["c"]))
    tbl = catalog.load_table("ns.t")
    for sid in (s0, tbl.current_snapshot().snapshot_id):
        for where in ("id IN (5, 60, 210)", "part = 'b' AND id = 7"):
            got, _ = rows_via_index(idx, where, as_of=sid)
            assert canonical(got) == canonical(matching(iceberg_rows(tbl, sid), where))


def test_a_delta_table_on_azure_named_either_way(azure, tmp_path):
    """Found (probe on Azurite): answers for a table named ``abfss://container@account...``
    lost the container (``abfss://@account.../container/...``), so no answer was a file of
    the table; and ``open_table(uri).read(paths)``, as docs/tables.md shows, refused the
    paths an index answers with on any object store."""
    from deltalake import DeltaTable, write_deltalake

    from bloomskip.tables import open_table

    prefix = azure.fresh()
    host = "devstoreaccount1.dfs.core.windows.net"
    for uri in (azure.uri(prefix, "az"), f"abfss://{azure.root}@{host}/{prefix}/abfss"):
        write_deltalake(uri, _table(0, 200, ["a", "b"]), partition_by=["part"])
        DeltaTable(uri).delete("id = 5")
        idx = str(tmp_path / (uri.rsplit("/", 1)[1] + ".idx"))
        index.build(uri, ["id"], idx, zone_rows=20)
        for where in ("id IN (5, 6, 150)", "part = 'b' AND id = 7"):
            got, res = rows_via_index(idx, where)
            assert canonical(got) == canonical(matching(delta_rows(uri, 1), where))
            files = [f.path for f in res.files]
            assert files and set(files) <= set(DeltaTable(uri).file_uris()), (uri, files)
            read = open_table(uri).read(files)  # the answers' own names
            assert canonical(matching(read, where)) == canonical(got)
