"""A local SparkSession set up the way bloomskip's jobs need it.

Spark's Python workers run ``PYSPARK_PYTHON`` (``python3`` on PATH by default), which may
be another interpreter without pyarrow or bloomskip; this session makes them run the
current one. It binds to 127.0.0.1, turns the UI off and enables filter pushdown into
Python data sources (``spark.read.format("bloomskip")``, registered here too).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import Any

from bloomskip._lazy import require


def require_pyspark() -> None:
    """Raise :class:`MissingDependencyError` unless pyspark is importable."""
    require("pyspark", "the Spark pipeline", "spark")


def session_zone(spark) -> str | None:
    """Spark's session time zone: the wall clock of a date or timestamp literal without
    an offset (``spark.sql.session.timeZone``; None if it cannot be read)."""
    try:
        zone = spark.conf.get("spark.sql.session.timeZone", None)
    except Exception:  # a closed session, Spark Connect without the key
        return None
    return zone or None


def spark_schema(schema):
    """The Spark ``StructType`` of an Arrow schema: what ``mapInArrow`` is told its
    batches hold (they must match it type for type)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def local_session(
    master: str = "local[*]",
    app_name: str = "bloomskip",
    conf: Mapping[str, Any] | None = None,
):
    """A SparkSession on ``master`` (local by default; any master URL works) with
    bloomskip's settings; a local one binds to 127.0.0.1.

    ``conf`` adds or overrides Spark settings (``{"spark.driver.memory": "4g"}``). An
    already running session is returned as it is (Spark allows one per process).
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings: dict[str, Any] = {}
    if master.startswith("local"):  # executors of a cluster must reach the driver
        settings["spark.driver.bindAddress"] = settings["spark.driver.host"] = "127.0.0.1"
    settings |= {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.python.filterPushdown.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    session = builder.getOrCreate()
    with contextlib.suppress(Exception):  # Spark Connect has no sparkContext
        session.sparkContext.setLogLevel("ERROR")
    try:
        from bloomskip.spark.datasource import register
    except ImportError:  # pragma: no cover - the data source ships with this package
        pass
    else:
        register(session)
    return session


__all__ = ["local_session", "require_pyspark", "spark_schema"]
