"""Building and refreshing a zone index on Spark.

The plan, the commit and every byte written are the local engine's
(:func:`bloomskip.index.build` / :func:`bloomskip.index.refresh`); only the reading of
files moves into Spark's Python workers:

1. the driver lists the source and decides which files to read (new and changed ones);
2. it groups them into tasks - one per file, or several small files per task, balanced
   by size - and runs one ``mapInArrow`` job over ``spark.range(tasks)``: each task runs
   :func:`bloomskip.index.zones.index_file` (pyarrow reads, numba kernels build) and
   returns its zones as Arrow rows (:mod:`.wire`);
3. the driver collects the rows, rebuilds each file's zones and commits them atomically
   (new tables, then one manifest), exactly as a local build does.

Spark keeps the output of one successful attempt per task, so a task that fails (a
worker killed, a read error that raises) and is retried adds no zone twice; the driver
still checks that each file's zones tile its rows once, and leaves a file that does not
unindexed (always a candidate) rather than trust it. Nothing is committed when the job
fails, so the previous index stays as it was.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from bloomskip.errors import SparkJobError
from bloomskip.index.build import BuildReport, build, refresh
from bloomskip.index.layout import DEFAULT_FPP, DEFAULT_ZONE_ROWS, ColumnIndex, Zoning
from bloomskip.index.zones import FileZones, index_file
from bloomskip.sources import Source, SourceFile
from bloomskip.spark.session import require_pyspark, spark_schema
from bloomskip.spark.wire import WIRE_SCHEMA, decode, encode

#: A task reads about this many bytes of files (several small files share one task).
TASK_BYTES = 128 << 20

#: ``task_hook(task, attempt, files_done)``: called in the task after each file's rows
#: are handed to Spark (tests use it to kill a task half-way).
TaskHook = Callable[[int, int, int], None]


def build_index(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    columns: str | Sequence[str],
    index_path: str | os.PathLike,
    *,
    zone_rows: int = DEFAULT_ZONE_ROWS,
    fpp: float = DEFAULT_FPP,
    sizing: str = "putze",
    align: str = "rows",
    file_filters: bool = True,
    encoding: str | None = None,
    overwrite: bool = False,
    tasks: int | None = None,
    task_hook: TaskHook | None = None,
) -> BuildReport:
    """Index ``columns`` of every Parquet/ORC file under ``source`` with Spark tasks.

    Same arguments and same index as :func:`bloomskip.index.build` (zone rows, FPP,
    sizing, alignment, file filters, encoding, adding columns to an existing index),
    plus ``tasks``: how many Spark tasks read the files (default: about one per 128 MiB
    of files, at least three per core, at most one per file). The index directory must
    be local to the driver (or mounted); the source must be readable by the executors
    through ``pyarrow.fs`` under the same path.

    ``spark.driver.maxResultSize`` (1 GiB by default) bounds the filters one build
    collects: about 4 bytes per row and column at the default zone settings.
    """
    require_pyspark()
    return build(
        source,
        columns,
        index_path,
        zone_rows=zone_rows,
        fpp=fpp,
        sizing=sizing,
        align=align,
        file_filters=file_filters,
        encoding=encoding,
        overwrite=overwrite,
        index_files=spark_runner(spark, tasks=tasks, task_hook=task_hook),
    )


def refresh_index(
    spark,
    index_path: str | os.PathLike,
    *,
    tasks: int | None = None,
    task_hook: TaskHook | None = None,
) -> BuildReport:
    """Index the source's new and changed files with Spark tasks and drop removed ones,
    as :func:`bloomskip.index.refresh`; unchanged files are not opened."""
    require_pyspark()
    return refresh(index_path, index_files=spark_runner(spark, tasks=tasks, task_hook=task_hook))


def spark_runner(spark, *, tasks: int | None = None, task_hook: TaskHook | None = None):
    """The ``index_files`` hook of :func:`bloomskip.index.build`: ``index_file`` over
    the given files in Spark tasks, yielding each file's :class:`FileZones`."""

    def run(
        src: Source, files: list[SourceFile], cols: list[ColumnIndex], zoning: Zoning
    ) -> Iterator[FileZones]:
        if not files:
            return
        job = _Job(src, files, cols, zoning, plan_tasks(spark, files, tasks), task_hook)
        df = spark.range(0, len(job.tasks), 1, len(job.tasks))
        df = df.mapInArrow(job, spark_schema(WIRE_SCHEMA))
        try:
            rows = df.toArrow()
        except Exception as e:  # Py4JJavaError, SparkConnectException, ...
            raise SparkJobError(_job_failure(e, src)) from e
        tiled = getattr(src, "read_for_index", None) is None  # Lance zones have gaps
        yield from decode(rows, files, [c.name for c in cols], tiled=tiled)

    return run


@dataclass
class _Job:
    """What every task gets (pickled once into the job): the plan and its part of it."""

    source: Source
    files: list[SourceFile]
    columns: list[ColumnIndex]
    zoning: Zoning
    tasks: list[list[int]]  # file positions per task
    hook: TaskHook | None

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx is not None else 0
        names = [c.name for c in self.columns]
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for done, pos in enumerate(self.tasks[task], start=1):
                    fz = index_file(self.source, self.files[pos], self.columns, self.zoning)
                    yield from encode(fz, pos, names)
                    if self.hook is not None:
                        self.hook(task, attempt, done)


def plan_tasks(spark, files: list[SourceFile], tasks: int | None = None) -> list[list[int]]:
    """File positions per Spark task: ``tasks`` tasks (default: about one per 128 MiB of
    files, at least three per core, at most one per file), balanced by size."""
    return _assign(files, tasks or _default_tasks(spark, files))


def _default_tasks(spark, files: list[SourceFile]) -> int:
    try:
        cores = int(spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no sparkContext
        cores = int(spark.conf.get("spark.default.parallelism", "2") or 2)
    total = sum(f.size for f in files)
    return max(1, min(len(files), max(math.ceil(total / TASK_BYTES), 3 * cores)))


def _assign(files: list[SourceFile], n: int) -> list[list[int]]:
    """File positions for ``n`` tasks, largest file first to the least loaded task
    (each task's files in listing order); no empty task."""
    n = max(1, min(n, len(files)))
    heap = [(0, t) for t in range(n)]
    out: list[list[int]] = [[] for _ in range(n)]
    for pos in sorted(range(len(files)), key=lambda i: -files[i].size):
        load, t = heapq.heappop(heap)
        out[t].append(pos)
        heapq.heappush(heap, (load + max(files[pos].size, 1), t))
    return [sorted(t) for t in out if t]


def _job_failure(e: Exception, src: Source) -> str:
    text = str(e).strip().splitlines()
    first = next((line for line in text if "Error" in line or "Exception" in line), "")
    first = first or (text[0] if text else type(e).__name__)
    return (
        f"the Spark job indexing {src.uri} failed, nothing was committed "
        f"(the index is as it was): {first[:500]}"
    )


__all__ = ["build_index", "plan_tasks", "refresh_index", "spark_runner"]
