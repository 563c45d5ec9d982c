"""The three ways ``bloomskip demo`` answers a lookup, checked to agree, and measured.

* ``spark scan`` - Spark reads every file of the lake, bloom filters off;
* ``native bloom`` - Spark over a copy with native Parquet bloom filters
  (:mod:`.native`), skipping row groups the filters rule out;
* ``bloomskip`` - :meth:`bloomskip.spark.IndexedLake.plan`: only the files the zone index
  cannot rule out (their candidate zones read on the driver when they hold few rows).

:class:`ThreeWays` runs them interleaved, checks that every run returns the rows of the
first, and reads Spark's scan metrics (:func:`scan_metrics`) into :class:`Measurement`s.
Shared with ``bench/spark.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bloomskip.demo.record import Record
from bloomskip.errors import BloomskipError

WAYS = ("spark scan", "native bloom", "bloomskip")
WAY_HELP = {
    "spark scan": "Spark reads every file of the lake, bloom filters off",
    "native bloom": "Spark over the copy with Parquet bloom filters in every row group",
    "bloomskip": "bloomskip.spark.open_lake(...).plan: only the files the index cannot rule "
    "out - their candidate zones read on the driver when they are few (a local relation), "
    "else Spark opens the files and skips row groups with the filters bloomskip added",
}


class DemoMismatchError(BloomskipError, RuntimeError):
    """The three ways returned different rows for a lookup: a bug, never expected."""


Say = Callable[[str], None]


def stderr(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


def scan_metrics(df) -> dict[str, int] | None:
    """numFiles, filesSize and numOutputRows of the executed plan's file scans, summed.

    Classic Spark only (it walks the JVM plan); None where that is not possible (Spark
    Connect) or no scan node reports them."""
    try:
        plan = df._jdf.queryExecution().executedPlan()
    except Exception:  # Spark Connect DataFrames have no _jdf
        return None
    out: dict[str, int] = {}
    found = False

    def walk(p) -> None:
        nonlocal found
        name = p.nodeName()
        if name == "AdaptiveSparkPlan":
            walk(p.executedPlan())
            return
        if "Scan" in name:
            metrics = p.metrics()
            for key in ("numFiles", "filesSize", "numOutputRows"):
                if metrics.contains(key):
                    found = True
                    out[key] = out.get(key, 0) + int(metrics.apply(key).value())
        children = p.children()
        for i in range(children.size()):
            walk(children.apply(i))

    try:
        walk(plan)
    except Exception:
        return None
    return out if found else None


@dataclass
class Measurement(Record):
    """One lookup answered one way."""

    query: str
    way: str
    where: str
    seconds: float  # median over runs, planning included
    runs: list[float]
    rows: int
    files_read: int | None = None  # numFiles of the scan
    files_total: int | None = None
    bytes_read: int | None = None  # filesSize: bytes of the files the scan opened
    rows_scanned: int | None = None  # numOutputRows of the scan: rows of unskipped row groups
    plan_seconds: float | None = None  # bloomskip: the index lookup (median)


class ThreeWays:
    """Answer lookups over ``lake`` by a full scan, over ``native`` (the copy with native
    bloom filters) with Spark's bloom filtering, and with bloomskip's ``index``; check
    that all three return the same rows."""

    def __init__(self, spark, lake: str | os.PathLike, native: str | os.PathLike, index: str):
        self.spark = spark
        self.lake = str(lake)
        self.native = str(native)
        self.index = str(index)
        self.files_total: int | None = None
        self.schema = self.native_schema = self.opened = None

    def _open(self) -> None:
        """Every way reads with its table's schema known, as from a catalog: none pays for
        schema inference per query, and every one still lists its files each time."""
        import bloomskip.spark as bs

        self.schema = self.spark.read.parquet(self.lake).schema
        self.native_schema = self.spark.read.parquet(self.native).schema
        self.opened = bs.open_lake(self.spark, self.lake, self.index, schema=self.schema)

    def dataframe(self, way: str, where: str):
        """``(DataFrame, ReadPlan or None, planning seconds)`` for one way."""
        if self.opened is None:
            self._open()
        if way in ("spark scan", "native bloom"):
            # spark scan: the lake with no bloom filter used, a scan of every row group;
            # native bloom: the copy written with Parquet's own filters, read with them on
            native = way == "native bloom"
            path, schema = (self.native, self.native_schema) if native else (self.lake, self.schema)
            bloom = "true" if native else "false"
            reader = self.spark.read.option("parquet.filter.bloom.enabled", bloom)
            return reader.schema(schema).parquet(path).where(where), None, 0.0
        if way == "bloomskip":
            t = time.perf_counter()
            plan = self.opened.plan(where)
            return plan.df, plan, time.perf_counter() - t
        raise ValueError(f"unknown way {way!r}; one of {WAYS}")

    def run_once(self, way: str, where: str) -> tuple[list[tuple], float, float, Any, Any]:
        t = time.perf_counter()
        df, plan, planning = self.dataframe(way, where)
        rows = [tuple(r) for r in df.collect()]
        return rows, time.perf_counter() - t, planning, df, plan

    def measure(self, name: str, where: str, *, repeat: int = 1) -> list[Measurement]:
        """Each way ``repeat`` times (interleaved, so drift hits all alike); the rows of
        every run must equal those of the first way's first run."""
        runs: dict[str, list[float]] = {w: [] for w in WAYS}
        plans: dict[str, list[float]] = {w: [] for w in WAYS}
        last: dict[str, tuple[list[tuple], Any, Any]] = {}
        expected: list[tuple] | None = None
        for _ in range(max(1, repeat)):
            for way in WAYS:
                rows, seconds, planning, df, plan = self.run_once(way, where)
                rows.sort()
                if expected is None:
                    expected = rows
                elif rows != expected:
                    raise DemoMismatchError(
                        f"{name!r} ({where}): {way} returned {len(rows):,} rows, "
                        f"{WAYS[0]} {len(expected):,} - the rows differ"
                    )
                runs[way].append(seconds)
                plans[way].append(planning)
                last[way] = (rows, df, plan)
        out = []
        for way in WAYS:
            rows, df, plan = last[way]
            m = Measurement(
                query=name,
                way=way,
                where=where,
                seconds=statistics.median(runs[way]),
                runs=runs[way],
                rows=len(rows),
            )
            metrics = scan_metrics(df) if getattr(plan, "way", "spark") == "spark" else None
            if metrics:
                m.files_read = metrics.get("numFiles")
                m.bytes_read = metrics.get("filesSize")
                m.rows_scanned = metrics.get("numOutputRows")
            if plan is not None:
                m.plan_seconds = statistics.median(plans[way])
                m.files_total = plan.files_total
                self.files_total = plan.files_total
                if m.files_read is None:  # no scan metrics: the plan's own count
                    m.files_read, m.bytes_read = plan.files_read, plan.bytes_read
                if plan.way == "driver":  # the rows of the candidate zones it decoded
                    m.rows_scanned = plan.rows_read
            out.append(m)
        if self.files_total is not None:
            for m in out:
                m.files_total = self.files_total
        return out

    def warm_up(self, where: str) -> None:
        """One untimed run per way: JIT, first listings, first Python workers."""
        for way in WAYS:
            self.run_once(way, where)


__all__ = ["WAYS", "WAY_HELP", "DemoMismatchError", "Measurement", "ThreeWays", "scan_metrics"]
