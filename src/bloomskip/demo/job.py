"""The Spark job behind ``bloomskip demo``: one lake, three ways to look rows up.

1. a synthetic lake (:mod:`.lake`), generated once and re-used;
2. a zone index on ``uuid`` and ``user_id``, built with Spark (:func:`bloomskip.spark.
   build_index`);
3. a copy of the lake written by Spark with its native Parquet bloom filters on both
   keys (one output file per lake file, row groups of about the lake's size);
4. point and IN lookups, each answered three ways - a full Spark scan of the lake, Spark
   over the copy with native bloom filters, and bloomskip (:func:`bloomskip.spark.
   plan_read`: Spark reads only the files the index cannot rule out) - checked to return
   the same rows, and timed.

The steps live in :mod:`.lake`, :mod:`.native` (the native copy and the filters added in
place), :mod:`.ways` (the three ways, checked and measured) and :mod:`.report` (the
table); this module runs them in order. Their shared names are re-exported here.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bloomskip.demo.lake import KEY_COLUMNS, Lake, LakeSpec, ensure_lake
from bloomskip.demo.native import NativeCopy, ensure_native_copy, retrofit_lake, spark_conf
from bloomskip.demo.record import Record
from bloomskip.demo.report import describe_machine, lookup_table, machine_info, render
from bloomskip.demo.ways import (
    WAY_HELP,
    WAYS,
    DemoMismatchError,
    Measurement,
    Say,
    ThreeWays,
    scan_metrics,
    stderr,
)

NATIVE_DIR, INDEX_DIR, LAKE_DIR = "lake-native-bloom", "index", "lake"

#: Session settings of the demo's own session (``bloomskip.spark.local_session`` adds
#: loopback binding, UI off, UTC and Python data source pushdown). No
#: -XX:TieredStopAtLevel=1 here: that speeds up JVM start but turns off the C2 compiler.
DEMO_CONF = {
    "spark.driver.memory": "3g",
    "spark.sql.shuffle.partitions": str(max(2, os.cpu_count() or 2)),
}


@dataclass
class IndexInfo(Record):
    path: str
    seconds: float
    files_indexed: int
    zones_written: int
    bytes_written: int


@dataclass
class DemoResult:
    lake: Lake
    native: NativeCopy
    index: IndexInfo
    measurements: list[Measurement]
    machine: dict[str, Any]
    seconds: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "machine": self.machine,
            "lake": self.lake.to_json(),
            "native_copy": self.native.to_json(),
            "index": self.index.to_json(),
            "lookups": [m.to_json() for m in self.measurements],
            "rows_equal": True,
            "steps_seconds": {k: round(v, 3) for k, v in self.steps.items()},
            "seconds": round(self.seconds, 3),
        }

    def table(self) -> str:
        return render(self)


def run_demo(
    directory: str | os.PathLike = "demo-lake",
    *,
    spec: LakeSpec | None = None,
    fresh: bool = False,
    spark=None,
    repeat: int = 1,
    warm_up: bool = True,
    say: Say = stderr,
) -> DemoResult:
    """Generate (or re-use) the lake under ``directory``, build the index and the native
    copy, answer the lookups three ways and check them. ``spark``: a session to use (kept
    running); None starts ``bloomskip.spark.local_session`` and stops it at the end."""
    t_start = time.perf_counter()
    spec = spec or LakeSpec()
    root = Path(directory).absolute()
    root.mkdir(parents=True, exist_ok=True)
    steps: dict[str, float] = {}
    say(f"working directory {root}")

    t = time.perf_counter()
    lake = ensure_lake(root / LAKE_DIR, spec, fresh=fresh, progress=say)
    steps["lake"] = time.perf_counter() - t

    import bloomskip.spark as bs

    own = spark is None
    if own:
        say("starting a local Spark session (local[*])")
        t = time.perf_counter()
        spark = bs.local_session(master="local[*]", app_name="bloomskip-demo", conf=DEMO_CONF)
        steps["spark start"] = time.perf_counter() - t
    try:
        t = time.perf_counter()
        retrofit_lake(spark, lake, say=say)
        steps["add filters"] = time.perf_counter() - t
        say(f"building the zone index on {', '.join(KEY_COLUMNS)} with Spark")
        t = time.perf_counter()
        rep = bs.build_index(
            spark, str(lake.path), list(KEY_COLUMNS), str(root / INDEX_DIR), overwrite=True
        )
        seconds = time.perf_counter() - t
        steps["index build"] = seconds
        index = IndexInfo(
            str(root / INDEX_DIR),
            seconds,
            rep.files_indexed,
            rep.zones_written,
            rep.bytes_written,
        )
        say(
            f"index built in {seconds:.1f}s: {rep.files_indexed:,} files, "
            f"{rep.zones_written:,} zones, {rep.bytes_written / 2**20:.1f} MiB"
        )

        t = time.perf_counter()
        native = ensure_native_copy(spark, lake, root / NATIVE_DIR, fresh=fresh, say=say)
        steps["native copy"] = time.perf_counter() - t

        ways = ThreeWays(spark, lake.path, native.path, index.path)
        queries = lake.keys.where
        if warm_up:
            # One lookup per key column: the JVM compiles the readers, Python workers
            # start, and bloomskip loads each column's filters once (plan_read keeps the
            # index open), as in any long-running application.
            say("warming up (an untimed lookup per key column, each way)")
            t = time.perf_counter()
            ways.warm_up(queries["uuid absent"])
            ways.warm_up(queries["user_id present"])
            steps["warm-up"] = time.perf_counter() - t
        measurements: list[Measurement] = []
        t = time.perf_counter()
        for name, where in queries.items():
            say(f"lookup {name}: {', '.join(WAYS)}")
            ms = ways.measure(name, where, repeat=repeat)
            measurements += ms
            say(
                "  "
                + ", ".join(f"{m.way} {m.seconds:.2f}s" for m in ms)
                + f" - {ms[0].rows:,} rows, equal"
            )
        steps["lookups"] = time.perf_counter() - t
        info = machine_info(spark)
    finally:
        if own:
            spark.stop()
    return DemoResult(lake, native, index, measurements, info, time.perf_counter() - t_start, steps)


__all__ = [
    "DEMO_CONF",
    "WAYS",
    "WAY_HELP",
    "DemoMismatchError",
    "DemoResult",
    "IndexInfo",
    "Measurement",
    "NativeCopy",
    "ThreeWays",
    "describe_machine",
    "ensure_native_copy",
    "lookup_table",
    "machine_info",
    "retrofit_lake",
    "run_demo",
    "scan_metrics",
    "spark_conf",
]
