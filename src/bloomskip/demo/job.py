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

:class:`ThreeWays` (the lookups) and :func:`ensure_native_copy` are shared with
``bench/spark.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bloomskip.demo.lake import KEY_COLUMNS, STAMP, Lake, LakeSpec, ensure_lake, remove_generated
from bloomskip.errors import BloomskipError
from bloomskip.index import DEFAULT_FPP
from bloomskip.units import human_bytes

WAYS = ("spark scan", "native bloom", "bloomskip")
WAY_HELP = {
    "spark scan": "Spark reads every file of the lake, bloom filters off",
    "native bloom": "Spark over the copy with Parquet bloom filters in every row group",
    "bloomskip": "bloomskip.spark.open_lake(...).plan: Spark opens only the files the index "
    "cannot rule out, and skips row groups in them with the filters bloomskip added",
}
NATIVE_DIR, INDEX_DIR, LAKE_DIR = "lake-native-bloom", "index", "lake"


class DemoMismatchError(BloomskipError, RuntimeError):
    """The three ways returned different rows for a lookup: a bug, never expected."""


Say = Callable[[str], None]


def stderr(msg: str) -> None:
    print(f"[demo] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def spark_conf(spark, settings: Mapping[str, Any]) -> Iterator[None]:
    """Set runtime SQL settings for a block, then restore them (the session may be shared)."""
    old = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, str(v))
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


# ----------------------------------------------------------------------------- native copy


@dataclass
class NativeCopy:
    """The lake rewritten by Spark with native Parquet bloom filters on the key columns."""

    path: Path
    files: int
    bytes: int
    bloom_bytes: int  # the bloom filters in all footers
    row_groups: int
    block_size: int  # parquet.block.size given to the writer
    expected_ndv: int  # parquet.bloom.filter.expected.ndv#col
    fpp: float
    generated: bool
    seconds: float

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


def lake_bytes_per_row(lake: Lake) -> float:
    """Uncompressed bytes per row of the lake's row groups (what parquet.block.size counts)."""
    meta = pq.read_metadata(lake.files[0])
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return size / max(meta.num_rows, 1)


def ensure_native_copy(
    spark,
    lake: Lake,
    path: str | os.PathLike,
    *,
    fpp: float = DEFAULT_FPP,
    fresh: bool = False,
    say: Say = stderr,
) -> NativeCopy:
    """Write (or re-use) a copy of ``lake`` with Spark's own Parquet bloom filters.

    One output file per lake file (no shuffle: every file is its own read split). The
    row-group size ``parquet.block.size`` is chosen so that row groups hold about as many
    rows as the lake's, and ``expected.ndv`` is that row count (the keys are distinct
    within a row group) - so native filters skip at the lake's row-group granularity,
    sized for the same false-positive rate as the zone index.
    """
    path = Path(path).absolute()
    rows = lake.spec.row_group_rows
    block_size = max(64 * 1024, int(rows * lake_bytes_per_row(lake)))
    settings = {
        "source": lake.spec.to_json(),
        "block_size": block_size,
        "expected_ndv": rows,
        "fpp": fpp,
        "columns": list(KEY_COLUMNS),
    }
    stamp = _stamp(path)
    if not fresh and stamp is not None and stamp.get("settings") == settings:
        say(f"re-using the native-bloom copy at {path}")
        return _native_info(path, stamp, generated=False)
    remove_generated(path)
    say(
        f"writing a copy with Spark's native bloom filters on {', '.join(KEY_COLUMNS)} to "
        f"{path} (parquet.block.size {block_size:,} B, expected.ndv {rows:,}, fpp {fpp})"
    )
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    split = 1 << 40  # larger than any file: every file is one split, alone in its task
    with spark_conf(
        spark,
        {
            "spark.sql.files.maxPartitionBytes": split,
            "spark.sql.files.openCostInBytes": split,
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        },
    ):
        writer = spark.read.parquet(str(lake.path)).write.option("parquet.block.size", block_size)
        for col in KEY_COLUMNS:
            writer = (
                writer.option(f"parquet.bloom.filter.enabled#{col}", "true")
                .option(f"parquet.bloom.filter.expected.ndv#{col}", str(rows))
                .option(f"parquet.bloom.filter.fpp#{col}", str(fpp))
            )
        writer.parquet(str(tmp))
    seconds = time.perf_counter() - t0
    doc = {"settings": settings, "seconds": seconds, "created": time.time()}
    (tmp / STAMP).write_text(json.dumps(doc, indent=2) + "\n")
    tmp.rename(path)
    say(f"wrote the copy in {seconds:.1f}s")
    return _native_info(path, doc, generated=True)


def retrofit_lake(spark, lake: Lake, *, fpp: float = DEFAULT_FPP, say: Say = stderr):
    """Add native Parquet bloom filters on the key columns to every file of the lake, in
    place, with Spark tasks (``bloomskip.spark.add_bloom_filters``): inside the files the
    index cannot rule out, Spark then skips row groups too. Files that have the filters
    are left alone, so a re-used lake costs one footer read per file."""
    import bloomskip.spark as bs

    say(f"adding bloom filters on {', '.join(KEY_COLUMNS)} to the lake's files (in place)")
    rep = bs.add_bloom_filters(spark, str(lake.path), list(KEY_COLUMNS), fpp=fpp)
    say(
        f"  {rep.files_changed:,} files changed ({rep.bytes_added / 2**20:.1f} MiB added), "
        f"{rep.files_unchanged:,} had them, {len(rep.failed)} failed, in {rep.seconds:.1f}s"
    )
    if rep.failed:
        raise DemoMismatchError(f"adding filters failed: {rep.failed[:3]}")
    return rep


def _stamp(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads((path / STAMP).read_text())
    except (OSError, ValueError):
        return None


def _native_info(path: Path, doc: dict[str, Any], *, generated: bool) -> NativeCopy:
    files = sorted(path.glob("*.parquet"))
    bloom = groups = 0
    for f in files:
        meta = pq.read_metadata(f)
        groups += meta.num_row_groups
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            for j in range(rg.num_columns):
                bloom += max(rg.column(j).bloom_filter_length or 0, 0)
    s = doc["settings"]
    return NativeCopy(
        path=path,
        files=len(files),
        bytes=sum(f.stat().st_size for f in files),
        bloom_bytes=bloom,
        row_groups=groups,
        block_size=s["block_size"],
        expected_ndv=s["expected_ndv"],
        fpp=s["fpp"],
        generated=generated,
        seconds=float(doc.get("seconds", 0.0)),
    )


# ----------------------------------------------------------------------------- three ways


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
class Measurement:
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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
        reader = self.spark.read
        if way == "spark scan":  # no bloom filter may be used: a scan of every row group
            return (
                reader.option("parquet.filter.bloom.enabled", "false")
                .schema(self.schema)
                .parquet(self.lake)
                .where(where),
                None,
                0.0,
            )
        if way == "native bloom":
            return (
                reader.option("parquet.filter.bloom.enabled", "true")
                .schema(self.native_schema)
                .parquet(self.native)
                .where(where),
                None,
                0.0,
            )
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
            metrics = scan_metrics(df)
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
            out.append(m)
        if self.files_total is not None:
            for m in out:
                m.files_total = self.files_total
        return out

    def warm_up(self, where: str) -> None:
        """One untimed run per way: JIT, first listings, first Python workers."""
        for way in WAYS:
            self.run_once(way, where)


# ----------------------------------------------------------------------------- machine


def machine_info(spark=None) -> dict[str, Any]:
    """Cores, memory and versions, for reports."""
    import numpy
    import pyarrow

    from bloomskip import __version__

    info: dict[str, Any] = {
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "bloomskip": __version__,
        "pyarrow": pyarrow.__version__,
        "numpy": numpy.__version__,
    }
    with contextlib.suppress(ValueError, OSError, AttributeError):
        info["ram_gib"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    try:
        import pyspark

        info["pyspark"] = pyspark.__version__
    except ImportError:
        pass
    if spark is not None:
        with contextlib.suppress(Exception):
            info["java"] = spark.sparkContext._jvm.System.getProperty("java.version")
        with contextlib.suppress(Exception):
            info["spark_master"] = spark.sparkContext.master
    return info


def describe_machine(info: Mapping[str, Any]) -> str:
    parts = [f"{info.get('cores')} cores"]
    if "ram_gib" in info:
        parts.append(f"{info['ram_gib']:g} GiB RAM")
    parts.append(f"{info.get('machine')}")
    parts.append(f"Python {info.get('python')}")
    for k in ("pyspark", "java", "pyarrow"):
        if k in info:
            parts.append(f"{'Java' if k == 'java' else k} {info[k]}")
    return ", ".join(parts)


# ----------------------------------------------------------------------------- the demo


#: Session settings of the demo's own session (``bloomskip.spark.local_session`` adds
#: loopback binding, UI off, UTC and Python data source pushdown). No
#: -XX:TieredStopAtLevel=1 here: that speeds up JVM start but turns off the C2 compiler.
DEMO_CONF = {
    "spark.driver.memory": "3g",
    "spark.sql.shuffle.partitions": str(max(2, os.cpu_count() or 2)),
}


@dataclass
class IndexInfo:
    path: str
    seconds: float
    files_indexed: int
    zones_written: int
    bytes_written: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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


# ----------------------------------------------------------------------------- report


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def lookup_table(measurements: list[Measurement]) -> list[str]:
    """The lookup rows: query, way, seconds, speed-up over the scan, files, bytes, rows."""
    head = (
        f"{'lookup':22} {'way':13} {'seconds':>8} {'vs scan':>8} {'files read':>11} "
        f"{'bytes read':>11} {'rows scanned':>13} {'rows':>5}"
    )
    lines = [head, "-" * len(head)]
    by_query: dict[str, list[Measurement]] = {}
    for m in measurements:
        by_query.setdefault(m.query, []).append(m)
    for name, ms in by_query.items():
        scan = next((m.seconds for m in ms if m.way == "spark scan"), None)
        for i, m in enumerate(ms):
            files = _count(m.files_read)
            if m.files_read is not None and m.files_total is not None:
                files = f"{m.files_read:,}/{m.files_total:,}"
            speed = f"{scan / m.seconds:.1f}x" if scan and m.seconds > 0 else "-"
            lines.append(
                f"{name if i == 0 else '':22} {m.way:13} {m.seconds:8.2f} {speed:>8} "
                f"{files:>11} {human_bytes(m.bytes_read):>11} {_count(m.rows_scanned):>13} "
                f"{m.rows:>5,}"
            )
    return lines


def render(r: DemoResult) -> str:
    s = r.lake.spec
    lines = [
        f"bloomskip demo - {describe_machine(r.machine)}",
        f"lake      {r.lake.path}: {len(r.lake.files):,} Parquet files, {s.rows:,} rows, row "
        f"groups of {s.row_group_rows:,}, {human_bytes(r.lake.bytes)}"
        + ("" if r.lake.generated else " (re-used)")
        + f"; generated in {r.lake.seconds:.1f}s",
        f"index     {r.index.path}: {', '.join(KEY_COLUMNS)}, {r.index.zones_written:,} zones, "
        f"{human_bytes(r.index.bytes_written)}, built with Spark in {r.index.seconds:.1f}s",
        f"native    {r.native.path}: {r.native.files:,} files, {r.native.row_groups:,} row "
        f"groups, {human_bytes(r.native.bytes)} of which bloom filters "
        f"{human_bytes(r.native.bloom_bytes)}; written by Spark in {r.native.seconds:.1f}s"
        + ("" if r.native.generated else " (re-used)"),
        "",
    ]
    lines += lookup_table(r.measurements)
    lines += [
        "",
        "ways:  " + "\n       ".join(f"{w:13} {WAY_HELP[w]}" for w in WAYS),
        "files read, bytes read, rows scanned: Spark's scan metrics numFiles, filesSize (the "
        "size of the files the",
        "scan opens) and numOutputRows (the rows of the row groups it decodes); native bloom "
        "opens every file",
        "but decodes only the row groups its bloom filters keep.",
    ]
    plans = [m for m in r.measurements if m.way == "bloomskip" and m.plan_seconds is not None]
    if plans:
        lines.append(
            "bloomskip seconds include planning (the index lookup and Spark's listing): "
            + ", ".join(f"{m.plan_seconds:.2f}s" for m in plans)
            + "."
        )
    lines.append(f"All three ways returned the same rows for every lookup. Total {r.seconds:.0f}s.")
    return "\n".join(lines)
