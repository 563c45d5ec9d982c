"""The zone index: an external bloom filter index over whole datasets, in the layout of
Lance's bloom filter index.

>>> from bloomskip import index
>>> index.build("lake/", ["user_id"], "lake.idx")            # doctest: +SKIP
>>> index.open("lake.idx").query("user_id = 'u-42'").paths   # doctest: +SKIP

An index lives in a local directory or under an object-store prefix (``s3://``,
``gs://``, ``az://``). Layers, data flowing one way:

* :mod:`.storage` - local directories and object stores behind one interface;
* :mod:`.kernels` - building and probing many zone filters in one compiled call;
* :mod:`.zones` - one file's zones; :mod:`.parts` - one task's files, written as parts;
* :mod:`.serving` - zone filters block-major, so a lookup reads a block per zone;
* :mod:`.segments` - a build's parts assembled into a segment (directory and slabs);
* :mod:`.layout` - names, tables and manifests; :mod:`.store` - atomic commits, vacuum;
* :mod:`.build` - build and refresh with a thread pool (or Spark: :mod:`bloomskip.spark`);
* :mod:`.zonedata`, :mod:`.evidence`, :mod:`.query` - answering predicates.
"""

import os

from bloomskip.index import params as _params
from bloomskip.index import store as _store
from bloomskip.index.build import BuildReport, build, refresh
from bloomskip.index.layout import DEFAULT_FPP, DEFAULT_ZONE_ROWS, ColumnIndex, Manifest, Zoning
from bloomskip.index.query import FileCandidate, QueryResult, ZoneIndex, open_index
from bloomskip.index.runner import LocalRunner, Runner
from bloomskip.index.storage import open_storage
from bloomskip.index.zones import FileZones, index_file

#: ``bloomskip.index.open(path)``, as the issue spells it.
open = open_index


def vacuum(
    index_path: str | os.PathLike, *, keep_versions: int = 5, min_age_s: float = 3600.0
) -> list[str]:
    """Delete the index's old manifests and the objects no kept version uses (older than
    ``min_age_s``): only names the index writes, never anything else in its root."""
    _params.path(index_path, "index_path")
    keep_versions = _params.count(keep_versions, "keep_versions", 1, _params.MAX_KEEP)
    min_age_s = _params.seconds(min_age_s, "min_age_s")
    return _store.vacuum(open_storage(index_path), keep_versions=keep_versions, min_age_s=min_age_s)


__all__ = [
    "DEFAULT_FPP",
    "DEFAULT_ZONE_ROWS",
    "BuildReport",
    "ColumnIndex",
    "FileCandidate",
    "FileZones",
    "LocalRunner",
    "Manifest",
    "QueryResult",
    "Runner",
    "ZoneIndex",
    "Zoning",
    "build",
    "index_file",
    "open",
    "open_index",
    "refresh",
    "vacuum",
]
