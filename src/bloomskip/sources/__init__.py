"""Sources of data for an index: what a path or URI names, and what a manifest recorded.

* :mod:`.base` - the :class:`~.base.Source` protocol every source implements, and
  :class:`~.base.SourceFile` (a file's identity);
* :mod:`.files` - a lake of Parquet and ORC files in a directory or on an object store.

Datasets with their own layout are further kinds of source, found by name in
:data:`DATASETS` and loaded only when a path is one of them, so this package depends on
none of them: a Lance dataset directory (its fragments stand for files,
:mod:`bloomskip.lance.source`), a Delta Lake table (a directory holding ``_delta_log/``,
:mod:`bloomskip.tables.delta`) and an Iceberg table (``iceberg://CATALOG/NAMESPACE.TABLE``
or a ``*.metadata.json``, :mod:`bloomskip.tables.iceberg`): tables list the data files of
one snapshot, not a directory.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence

from bloomskip.errors import BloomskipError, CorruptFileError, SourceError
from bloomskip.objstore import first_line
from bloomskip.sources.base import IndexRead, Source, SourceFile
from bloomskip.sources.files import FileSource

#: Dataset kinds: the name a manifest records, and ``module:class`` of the source. Each
#: class is a :class:`~bloomskip.sources.base.DatasetSource` (``claims``, ``at``, ``from_json``).
DATASETS = {
    "lance": "bloomskip.lance.source:LanceSource",
    "delta": "bloomskip.tables.delta:DeltaSource",
    "iceberg": "bloomskip.tables.iceberg:IcebergSource",
}


def _kind(name: str) -> type:
    module, _, cls = DATASETS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def resolve(source: str | os.PathLike | Sequence[str | os.PathLike]) -> Source:
    """The source a path, URI or list of them (all on one file system) names."""
    if isinstance(source, str | os.PathLike):
        for name in DATASETS:
            kind = _kind(name)
            if kind.claims(source):
                return kind.at(os.fspath(source))
        return FileSource.resolve([source], single=True)
    items = list(source)
    if not items:
        raise SourceError("an empty list of files is not a source")
    return FileSource.resolve(items, single=False)


def from_json(data: dict) -> Source:
    """The source an index manifest recorded (:meth:`Source.to_json`); CorruptFileError
    if the record is not one (a manifest is untrusted input)."""
    try:
        kind = data.get("filesystem")
        if isinstance(kind, str) and kind in DATASETS:
            return _kind(kind).from_json(data)
        return FileSource.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        if isinstance(e, BloomskipError):
            raise
        raise CorruptFileError(f"the index's source is malformed: {e!r}") from None
    except OSError as e:  # pyarrow cannot make its file system (hdfs without a JVM, ...)
        if isinstance(e, BloomskipError):
            raise
        raise SourceError(
            f"the index's source {data.get('uri')!r} cannot be opened: {first_line(e)[:300]}"
        ) from None


__all__ = ["DATASETS", "FileSource", "IndexRead", "Source", "SourceFile", "from_json", "resolve"]
