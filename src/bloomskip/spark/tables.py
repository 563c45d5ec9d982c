"""Delta Lake and Iceberg tables in the ``bloomskip`` data source: planning a read of one
snapshot through the table's zone index, and reading its partitions with deletes applied.

Spark's own Parquet reader cannot apply deletion vectors or delete files, so a table is
never handed to it: each candidate data file becomes one Spark partition that reads the
file's live rows through the table's library (:meth:`bloomskip.tables.base.ReadTask.read`:
Delta files read directly with their deletion vector's rows dropped, Iceberg files read
by pyiceberg's ``ArrowScan`` with their delete files), and, for Delta files and Iceberg
files without deletes, only the rows of its candidate zones.

Planning: the index answers for the table's latest snapshot, or the one the ``asOf``
option names (a Delta version, an Iceberg snapshot id); the partitions read exactly that
snapshot (:meth:`~bloomskip.tables.base.TableSource.as_of`), so a commit between the two
steps changes nothing. Files of the snapshot the index has not seen are read in full,
files it no longer holds are never read, partition values and filters rule files out
together. When the index cannot answer, every data file of the snapshot is read. A
delete the library cannot apply (Iceberg equality deletes) fails the read with a typed
error naming the table and the delete file: never silently.

Options: ``asOf`` (an integer); ``catalog.<property>`` (an Iceberg catalog's properties,
``catalog.uri``, ``catalog.warehouse``, ``catalog.type``, ...), handed to
``pyiceberg.catalog.load_catalog`` in the Python worker that plans the read, which may
not see the driver's environment variables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import datasource as sds
from pyspark.sql import types as st

from bloomskip.errors import InvalidParameterError
from bloomskip.formats.ranges import merge_ranges
from bloomskip.spark.readfile import conform, spark_arrow_schema
from bloomskip.spark.types import match_column

#: Dataset kinds (as manifests record them) that are tables.
TABLE_KINDS = ("delta", "iceberg")


@dataclass(frozen=True)
class TablePartition(sds.InputPartition):
    """One data file of a table snapshot to read: how (a ``ReadTask``), and its
    candidate zones as (start, length) ranges (None: every row)."""

    task: Any  # bloomskip.tables.base.ReadTask
    zones: tuple[tuple[int, int], ...] | None = None


def as_of_option(options: Mapping[str, str]) -> int | None:
    """The ``asOf`` option as a snapshot reference, or None (Spark hands options over
    with their keys in lower case)."""
    raw = {k.lower(): v for k, v in options.items()}.get("asof")
    if raw is None:
        return None
    if str(raw).strip() == "":  # a typo must not read the latest snapshot instead
        raise InvalidParameterError("option asOf is empty: give a version or snapshot id")
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise InvalidParameterError(
            f"option asOf is a Delta version or an Iceberg snapshot id (an integer), got {raw!r}"
        ) from None
    if value < 0:
        raise InvalidParameterError(f"option asOf must not be negative, got {value}")
    return value


def configure(uri: str, options: Mapping[str, str]) -> None:
    """Hand the ``catalog.*`` options to pyiceberg for the catalog ``uri`` names."""
    props = {
        k[len("catalog.") :].lower(): str(v)
        for k, v in options.items()
        if k.lower().startswith("catalog.")
    }
    if props and uri.startswith("iceberg://"):
        from bloomskip.tables.iceberg import configure_catalog, parse_name

        configure_catalog(parse_name(uri)[0], **props)


def is_table_path(path: str) -> bool:
    from bloomskip.tables.delta import is_delta_table
    from bloomskip.tables.iceberg import is_iceberg_table

    return is_iceberg_table(path) or is_delta_table(path)


def table_source(data: dict[str, Any] | str, options: Mapping[str, str]) -> Any:
    """The table a manifest's source (or a path) names, configured by ``options`` and
    pinned to ``asOf`` when given."""
    from bloomskip.sources import from_json, resolve

    uri = data if isinstance(data, str) else str(data.get("uri", ""))
    configure(uri, options)
    src = resolve(data) if isinstance(data, str) else from_json(data)
    as_of = as_of_option(options)
    return src if as_of is None else src.as_of(as_of)


def arrow_schema(data: dict[str, Any] | str, options: Mapping[str, str]) -> pa.Schema:
    """The schema of the snapshot a read will see."""
    return table_source(data, options).arrow_schema([])


def plan(zi: Any, predicate: Any, options: Mapping[str, str]) -> tuple[list[TablePartition], Any]:
    """Partitions for the candidates of ``predicate`` in the snapshot the options name,
    and the index's answer (a ``QueryResult``)."""
    src = table_source(zi.manifest.source, options)
    res = zi.query(predicate, as_of=as_of_option(options))
    ref = res.snapshot or {}
    sid = ref.get("version", ref.get("snapshot_id"))
    pinned = src if sid is None else src.as_of(int(sid))
    by_uri = {pinned.uri_of(f.path): f.path for f in pinned.loaded().files}
    zones = {f.path: f.zones for f in res.files}
    tasks = pinned.read_tasks([by_uri[f.path] for f in res.files])
    return [_partition(t, zones.get(t.uri)) for t in tasks], res


def every_file(src: Any) -> list[TablePartition]:
    """Partitions that read every data file of ``src``'s snapshot in full."""
    return [_partition(t, None) for t in src.read_tasks(None)]


def _partition(task: Any, zones: Any) -> TablePartition:
    merged = None if zones is None else tuple((a, b - a) for a, b in merge_ranges(zones))
    return TablePartition(task, merged)


def read(partition: TablePartition, schema: st.StructType) -> Iterator[pa.RecordBatch]:
    """The partition's live rows as batches of exactly ``schema``."""
    target = spark_arrow_schema(schema)
    task = partition.task
    names = list(task.columns) if getattr(task, "columns", None) else None
    if names is None:
        names = _iceberg_names(task)
    columns = {f.name: match_column(f.name, names) for f in target}
    wanted = [c for c in dict.fromkeys(columns.values()) if c is not None]
    for table in task.read(partition.zones, wanted or names[:1]):
        if table.num_rows:
            yield conform(table, target, columns, task.uri)


def _iceberg_names(task: Any) -> list[str]:
    from bloomskip.tables.iceberg import static_table

    tbl = static_table(task.metadata_location, task.io_properties)
    schema = {s.schema_id: s for s in tbl.schemas().values()}[task.schema_id]
    return [f.name for f in schema.fields]


__all__ = [
    "TABLE_KINDS",
    "TablePartition",
    "arrow_schema",
    "as_of_option",
    "configure",
    "every_file",
    "is_table_path",
    "plan",
    "read",
    "table_source",
]
