"""bloomskip on Spark (PySpark): index, retrofit and read whole lakes in parallel.

Everything here drives the same per-file functions as the local engine, inside Spark's
Python workers, so the bytes written are the same:

* :func:`build_index` / :func:`refresh_index` - the zone index (:mod:`bloomskip.index`),
  one task per file or group of small files, committed by the driver (:mod:`.build`);
* :func:`add_bloom_filters` - native Parquet and ORC bloom filters added to every file of
  a lake, atomically per file (:mod:`.retrofit`);
* :func:`read` / :func:`plan_read` - a DataFrame over only the files that may match, with
  the full predicate still applied; :func:`open_lake` for many queries (:mod:`.scan`);
* ``spark.read.format("bloomskip")`` - a Python data source that also skips zones inside
  files (:mod:`.datasource`; :func:`register` it first);
* :func:`local_session` - a local SparkSession set up for bloomskip (:mod:`.session`).

Needs the ``spark`` extra (``pip install 'bloomskip[spark]'``) and Java 17+. On a cluster,
bloomskip must be installed on every executor, and the tasks read files through
``pyarrow.fs`` (local or mounted paths, ``s3://``, ``hdfs://``), not through Hadoop.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_index": "build",
    "refresh_index": "build",
    "add_bloom_filters": "retrofit",
    "RetrofitReport": "retrofit",
    "read": "scan",
    "plan_read": "scan",
    "ReadPlan": "scan",
    "open_lake": "scan",
    "IndexedLake": "scan",
    "BloomskipDataSource": "datasource",
    "register": "datasource",
    "local_session": "session",
}


def __getattr__(name: str) -> Any:  # imported on first use: pyspark is an optional extra
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bloomskip.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(f"bloomskip.spark.{module}"), name)


__all__ = sorted(_EXPORTS)
