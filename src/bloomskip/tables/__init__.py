"""Delta Lake and Apache Iceberg tables as sources of a zone index (the
``bloomskip[tables]`` extra: deltalake, pyiceberg).

>>> from bloomskip import index
>>> index.build("events_delta/", ["user_id"], "events.idx")          # doctest: +SKIP
>>> index.open("events.idx").query("user_id = 42", as_of=3).paths     # doctest: +SKIP

A table is indexed and queried as of a snapshot: its own file list, never a directory
listing. Each index version records the snapshot it covers; a query against a newer (or
older) snapshot reads the files the index has not seen in full and never returns a file
the snapshot no longer holds. Modules:

* :mod:`.base` - what both kinds share: the snapshot, partition values, reading a data
  file's columns under the table's names, reading its live rows;
* :mod:`.delta` - Delta tables, with ``deltalake`` (deletion vectors applied);
* :mod:`.iceberg` - Iceberg tables, with ``pyiceberg`` (its reader applies position
  deletes and deletion vectors; equality deletes are refused).

Nothing here is imported by ``import bloomskip``: the sources registry
(:data:`bloomskip.sources.DATASETS`) loads a kind by name when a path is a table, and
names below are imported on first use.
"""

from __future__ import annotations

from typing import Any

from bloomskip._lazy import exports

_EXPORTS = {
    "DeltaSource": "delta",
    "IcebergSource": "iceberg",
    "TableSource": "base",
    "configure_catalog": "iceberg",
    "is_delta_table": "delta",
    "is_iceberg_table": "iceberg",
}


__getattr__ = exports(__name__, _EXPORTS)


def open_table(path: str, as_of: int | None = None) -> Any:
    """The table ``path`` names (a Delta directory, ``iceberg://...``, a metadata file)
    as a source, at its latest snapshot or ``as_of``."""
    from bloomskip.sources import resolve

    src = resolve(path)
    if not hasattr(src, "read_tasks"):
        from bloomskip.errors import InvalidParameterError

        raise InvalidParameterError(
            f"{path} is not a Delta or Iceberg table (a directory holding _delta_log/, "
            "iceberg://CATALOG/NAMESPACE.TABLE, or a *.metadata.json)"
        )
    return src if as_of is None else src.as_of(as_of)


__all__ = sorted([*_EXPORTS, "open_table"])
