"""Building and refreshing a zone index on Spark, without collecting filters.

The plan, the commit and every byte written are the local engine's
(:func:`bloomskip.index.build` / :func:`bloomskip.index.refresh`); the work moves into
Spark's Python workers (:class:`SparkRunner`):

1. the driver lists the source, decides which files to read (new and changed ones), gives
   each a fragment id and groups them into tasks of consecutive files, balanced by size;
2. one ``mapInArrow`` job over ``spark.range(tasks)``, each Spark task running a range of
   tasks (about :data:`SPARK_TASK_BYTES` of files) one after another: each task reads
   its files (:func:`bloomskip.index.parts.run_task`: pyarrow reads, numba kernels
   build), writes their parts *straight to the index's storage*, and returns one small
   row (:mod:`.wire`): per file its row count or error, per column the part names and
   ~18 bytes per zone;
3. the driver writes each column's serving directory, and a second job writes the slabs:
   each slab job gathers one block range of one size class from every part (a Spark
   task runs several);
4. the driver writes the fragment table and creates the next manifest.

The driver holds memory for the number of files and zones, never for the filters:
``spark.driver.maxResultSize`` no longer bounds a build. The index's storage must be
reachable from the executors under the same name: an object-store URI, or a local path
on a single machine or a shared mount.

Spark keeps the output of one successful attempt per task, so a task that fails (a
worker killed, a read error that raises) and is retried adds no zone twice (a failed
attempt's parts are orphans, which vacuum removes); the driver still checks that each
file's zones tile its rows once, and leaves a file that does not unindexed (always a
candidate). Nothing is committed when a job fails, so the previous index stays as it was.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from bloomskip.errors import InvalidParameterError, SparkJobError
from bloomskip.index.build import BuildReport, build, refresh
from bloomskip.index.layout import ColumnIndex, Zoning
from bloomskip.index.parts import TaskResult, run_task
from bloomskip.index.runner import Task
from bloomskip.index.serving import SlabJob, build_slab
from bloomskip.index.storage import Storage, open_storage
from bloomskip.sources import Source
from bloomskip.spark.session import require_pyspark, spark_schema
from bloomskip.spark.wire import WIRE_SCHEMA, decode, encode

#: About how many bytes (of files read, or of slabs written) one Spark task works
#: through. An empty ``mapInArrow`` task takes 0.05-0.1 s on a 2-core machine (the Python
#: worker waits for the JVM most of it); a task of 128 MiB of files about 0.5 s.
SPARK_TASK_BYTES = 1 << 30
#: A Spark task runs a range of at least this many units (tasks or slabs), or one unit.
GROUPED_UNITS = 2

#: ``task_hook(task, attempt, files_done)``: called in the task after its result is handed
#: to Spark (tests use it to kill a task after its parts are written).
TaskHook = Callable[[int, int, int], None]


def build_index(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    columns: str | Sequence[str],
    index_path: str | os.PathLike,
    *,
    tasks: int | None = None,
    task_hook: TaskHook | None = None,
    **options: Any,
) -> BuildReport:
    """Index ``columns`` of every Parquet/ORC file under ``source`` with Spark tasks.

    ``options`` are :func:`bloomskip.index.build`'s (``zone_rows``, ``fpp``, ``sizing``,
    ``align``, ``file_filters``, ``encoding``, ``overwrite``) and the index is the same,
    plus ``tasks``: at least how many Spark tasks read the files (default: about one per
    GiB of files, at least two per core, at most one per file; each reads its files 128
    MiB at a time, holding one such group's filters). The source and the
    index must be readable and writable by the executors under the same names.
    """
    require_pyspark()
    if "runner" in options:
        raise InvalidParameterError("build_index runs its tasks on Spark: no runner option")
    runner = SparkRunner(spark, tasks=tasks, task_hook=task_hook)
    return build(source, columns, index_path, runner=runner, **options)


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
    return refresh(index_path, runner=SparkRunner(spark, tasks=tasks, task_hook=task_hook))


class SparkRunner:
    """A :class:`~bloomskip.index.runner.Runner` on Spark: tasks and slabs as jobs."""

    def __init__(self, spark, *, tasks: int | None = None, task_hook: TaskHook | None = None):
        self.spark, self.tasks, self.hook = spark, tasks, task_hook

    def parallelism(self) -> int:
        return min(8, os.cpu_count() or 1)  # the driver's own threads

    def min_tasks(self) -> int:
        return self.tasks or 3 * cores(self.spark)

    def _slices(self, sizes: list[int]) -> int:
        """How many Spark tasks run ``len(sizes)`` units of work (tasks of files, or
        slabs) of these sizes in bytes: about one per :data:`SPARK_TASK_BYTES`, at least
        two per core (or ``tasks``). A Spark task runs its range of units one after
        another, so a unit's memory bound holds while a Spark task's start-up - 0.05-0.1 s
        measured here, most of it the JVM readying the Python runner - is paid once per
        range, not per unit. Units are grouped only when every range gets at least
        :data:`GROUPED_UNITS` of them; fewer run one per Spark task."""
        n = len(sizes)
        want = max(self.tasks or 2 * cores(self.spark), math.ceil(sum(sizes) / SPARK_TASK_BYTES))
        if n < GROUPED_UNITS * want:
            return max(1, min(n, 10_000))
        return max(1, min(want, 10_000))

    def index(
        self,
        storage: Storage,
        source: Source,
        tasks: list[Task],
        columns: list[ColumnIndex],
        zoning: Zoning,
    ) -> Iterator[TaskResult]:
        if not tasks:
            return
        job = _IndexJob(storage.uri, source, tasks, columns, zoning, self.hook)
        sizes = [sum(max(f.size, 1) for f, _ in t) for t in tasks]
        df = self.spark.range(0, len(tasks), 1, self._slices(sizes))
        df = df.mapInArrow(job, spark_schema(WIRE_SCHEMA))
        try:
            rows = df.toArrow()
        except Exception as e:  # Py4JJavaError, SparkConnectException, ...
            raise SparkJobError(_job_failure(e, f"indexing {source.uri}")) from e
        yield from decode(rows, tasks, tiled=source.default_encoding != "arrow")

    def slabs(self, storage: Storage, jobs: list[SlabJob]) -> list[np.ndarray]:
        if not jobs:
            return []
        sizes = [(j.b1 - j.b0) * j.count * 32 for j in jobs]
        df = self.spark.range(0, len(jobs), 1, self._slices(sizes))
        df = df.mapInArrow(_SlabJob(storage.uri, jobs), "job long, ends binary")
        try:
            rows = df.toArrow()
        except Exception as e:
            raise SparkJobError(_job_failure(e, f"writing {storage.uri}")) from e
        ends: dict[int, np.ndarray] = {}
        got = zip(rows.column("job").to_pylist(), rows.column("ends").to_pylist(), strict=True)
        for j, e in got:
            if j is not None and 0 <= j < len(jobs) and e is not None and len(e) % 16 == 0:
                ends.setdefault(j, np.frombuffer(e, "<u8").astype(np.uint64).reshape(2, -1))
        if len(ends) != len(jobs):
            raise SparkJobError(f"{len(ends)} of {len(jobs)} slabs written; nothing was committed")
        return [ends[j] for j in range(len(jobs))]


@dataclass
class _IndexJob:
    """What every indexing task gets (pickled once into the job)."""

    index: str
    source: Source
    tasks: list[Task]
    columns: list[ColumnIndex]
    zoning: Zoning
    hook: TaskHook | None

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx is not None else 0
        storage = open_storage(self.index)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                files = self.tasks[task]
                yield encode(task, run_task(storage, self.source, files, self.columns, self.zoning))
                if self.hook is not None:
                    self.hook(task, attempt, len(files))


@dataclass
class _SlabJob:
    index: str
    jobs: list[SlabJob]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        storage = open_storage(self.index)
        for batch in batches:
            for j in batch.column(0).to_pylist():
                ends = build_slab(storage, self.jobs[j]).astype("<u8").tobytes()
                yield pa.RecordBatch.from_pydict(
                    {"job": [j], "ends": [ends]},
                    schema=pa.schema([("job", pa.int64()), ("ends", pa.binary())]),
                )


def cores(spark) -> int:
    """The cores Spark runs tasks on."""
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no sparkContext
        return max(1, int(spark.conf.get("spark.default.parallelism", "2") or 2))


def _job_failure(e: Exception, what: str) -> str:
    text = str(e).strip().splitlines()
    first = next((line for line in text if "Error" in line or "Exception" in line), "")
    first = first or (text[0] if text else type(e).__name__)
    return (
        f"the Spark job {what} failed, nothing was committed "
        f"(the index is as it was): {first[:500]}"
    )


__all__ = ["SparkRunner", "build_index", "cores", "refresh_index"]
