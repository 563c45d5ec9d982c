"""Delta Lake and Iceberg tables for the tests of ``tests/tables``, and their own readers
as the truth.

* :func:`delta_rows` - the rows ``deltalake`` reads at a version (``DeltaTable.scan()``,
  which applies deletion vectors);
* :func:`iceberg_catalog` - a pyiceberg ``SqlCatalog`` on sqlite in a temporary
  directory, registered for ``iceberg://NAME/...`` in this process;
  :func:`iceberg_rows` - ``table.scan(snapshot_id=...).to_arrow()``;
* :func:`commit_delete_file` - a position or equality delete file committed to an Iceberg
  table (pyiceberg writes only copy-on-write deletes);
* :func:`matching` - rows of an Arrow table matching a SQL predicate, by DuckDB;
* :func:`rows_via_index` - what bloomskip reads for a predicate: the index's candidate
  files and zones at a snapshot, read through :meth:`TableSource.read_tasks` (deletes
  applied), then the predicate applied - equal to the truth only if every matching row
  lies in a candidate zone and no deleted row comes back;
* :func:`canonical` - rows as a sorted list, comparable across readers.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa

from bloomskip import index

DATA = Path(__file__).resolve().parents[1] / "tables" / "data"


def copy_fixture(name: str, dest: Path) -> str:
    """A copy of a checked-in Delta table of ``tests/tables/data/delta-rs``."""
    target = dest / name
    shutil.copytree(DATA / "delta-rs" / name, target)
    return str(target)


def plain(table: pa.Table) -> pa.Table:
    """``table`` with view/large strings and binaries as plain ones, no metadata."""
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_string_view(t) or pa.types.is_large_string(t):
            t = pa.string()
        elif pa.types.is_binary_view(t) or pa.types.is_large_binary(t):
            t = pa.binary()
        fields.append(pa.field(f.name, t))
    return table.cast(pa.schema(fields))


def delta_rows(path: str, version: int | None = None) -> pa.Table:
    from deltalake import DeltaTable

    dt = DeltaTable(path, version=version)
    schema = pa.schema(dt.schema().to_arrow())
    got = pa.table(dt.scan())
    return plain(got.select(schema.names))


def iceberg_catalog(tmp_path: Path, name: str = "test"):
    """A SqlCatalog on sqlite under ``tmp_path`` with namespace ``ns``, reachable as
    ``iceberg://NAME/ns.TABLE`` by bloomskip in this process."""
    from pyiceberg.catalog.sql import SqlCatalog

    from bloomskip.tables import configure_catalog

    props = {"uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/wh"}
    catalog = SqlCatalog(name, **props)
    catalog.create_namespace("ns")
    configure_catalog(name, type="sql", **props)
    return catalog


def iceberg_rows(tbl: Any, snapshot_id: int | None = None) -> pa.Table:
    return plain(tbl.scan(snapshot_id=snapshot_id).to_arrow())


#: Iceberg's reserved field ids of a position delete file's columns.
POSITION_DELETE_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {"PARQUET:field_id": "2147483546"}),
        pa.field("pos", pa.int64(), False, {"PARQUET:field_id": "2147483545"}),
    ]
)


def commit_delete_file(tbl: Any, kind: str, rows: pa.Table, equality_ids=None) -> str:
    """Commit a delete file (``kind`` "position" or "equality") holding ``rows`` to the
    unpartitioned Iceberg table ``tbl``; returns its location.

    pyiceberg 0.12 has no API for merge-on-read deletes, and no library here writes them.
    This uses pyiceberg's own writers: a fast append whose manifest writer is pyiceberg's
    v2 writer declaring ``content = deletes``, so the manifest, the manifest list, the
    snapshot and the catalog commit are all pyiceberg's; the delete file is a Parquet
    file with the spec's columns (position deletes: ``file_path``, ``pos``).
    """
    import os

    import pyarrow.parquet as pq
    from pyiceberg.manifest import (
        DataFile,
        DataFileContent,
        FileFormat,
        ManifestContent,
        ManifestWriterV2,
    )
    from pyiceberg.typedef import Record

    class _DeletesWriter(ManifestWriterV2):
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    content = {
        "position": DataFileContent.POSITION_DELETES,
        "equality": DataFileContent.EQUALITY_DELETES,
    }[kind]
    base = tbl.location().removeprefix("file://")
    loc = f"{base}/data/{kind}-deletes-{len(tbl.snapshots())}.parquet"
    pq.write_table(rows, loc)
    df = DataFile.from_args(
        content=content, file_path="file://" + loc, file_format=FileFormat.PARQUET,
        partition=Record(), record_count=rows.num_rows, file_size_in_bytes=os.path.getsize(loc),
        equality_ids=equality_ids,
    )  # fmt: skip
    df.spec_id = 0
    with tbl.transaction() as tx, tx.update_snapshot().fast_append() as fa:

        def writer(spec):
            return _DeletesWriter(
                spec, fa.schema(), fa.new_manifest_output(), fa._snapshot_id, fa._compression
            )

        fa.new_manifest_writer = writer
        fa.append_data_file(df)
    return "file://" + loc


def matching(table: pa.Table, where: str) -> pa.Table:
    """The rows of ``table`` for which ``where`` is true (DuckDB's SQL)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("t", table)
        return con.sql(f"SELECT * FROM t WHERE {where}").to_arrow_table()
    finally:
        con.close()


def canonical(table: pa.Table, columns: list[str] | None = None) -> list[tuple]:
    names = columns or table.column_names
    rows = [tuple(r[n] for n in names) for r in plain(table).select(names).to_pylist()]
    return sorted(rows, key=repr)


def rows_via_index(
    index_path: str, where: str, as_of: int | None = None, columns: list[str] | None = None
) -> tuple[pa.Table, Any]:
    """The rows bloomskip reads for ``where`` through the index, and its answer."""
    zi = index.open(index_path)
    res = zi.query(where, as_of=as_of)
    src = zi.source
    ref = res.snapshot or {}
    sid = ref.get("version", ref.get("snapshot_id"))
    if sid is not None:
        src = src.as_of(int(sid))
    snap = src.loaded()
    names = columns or snap.schema.names
    by_uri = {src.uri_of(f.path): f.path for f in snap.files}
    tasks = src.read_tasks([by_uri[f.path] for f in res.files])
    zones = {f.path: f.zones for f in res.files}
    parts = [t for task in tasks for t in task.read(zones[task.uri], names)]
    empty = pa.schema([snap.schema.field(n) for n in names]).empty_table()
    got = pa.concat_tables(parts) if parts else empty
    return matching(got, where), res


__all__ = [
    "DATA",
    "POSITION_DELETE_SCHEMA",
    "canonical",
    "commit_delete_file",
    "copy_fixture",
    "delta_rows",
    "iceberg_catalog",
    "iceberg_rows",
    "matching",
    "plain",
    "rows_via_index",
]
