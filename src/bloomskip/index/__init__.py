"""The zone index: an external bloom filter index over whole datasets, in the layout of
Lance's bloom filter index.

>>> from bloomskip import index
>>> index.build("lake/", ["user_id"], "lake.idx")            # doctest: +SKIP
>>> index.open("lake.idx").query("user_id = 'u-42'").paths   # doctest: +SKIP

Layers, data flowing one way:

* :mod:`.sources` - listing a source and file identity (``pyarrow.fs``);
* :mod:`.kernels` - building and probing many zone filters in one compiled call;
* :mod:`.zones` - one file's zones (the per-file function Spark tasks run too);
* :mod:`.layout` - tables, manifest and metadata on disk; :mod:`.store` - atomic commits;
* :mod:`.build` - build and refresh with a thread pool; :mod:`.query` - answering predicates.
"""

from bloomskip.index.build import BuildReport, build, refresh
from bloomskip.index.layout import DEFAULT_FPP, DEFAULT_ZONE_ROWS, ColumnIndex, Manifest, Zoning
from bloomskip.index.query import FileCandidate, QueryResult, ZoneIndex, open_index
from bloomskip.index.store import vacuum
from bloomskip.index.zones import FileZones, index_file

#: ``bloomskip.index.open(path)``, as the issue spells it.
open = open_index

__all__ = [
    "DEFAULT_FPP",
    "DEFAULT_ZONE_ROWS",
    "BuildReport",
    "ColumnIndex",
    "FileCandidate",
    "FileZones",
    "Manifest",
    "QueryResult",
    "ZoneIndex",
    "Zoning",
    "build",
    "index_file",
    "open",
    "open_index",
    "refresh",
    "vacuum",
]
