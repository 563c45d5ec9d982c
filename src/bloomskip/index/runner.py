"""Who runs an index build's tasks: the :class:`Runner` protocol (index files and write
their parts; gather block rows into slabs) and :class:`LocalRunner`, a thread pool in
this process. :class:`bloomskip.spark.build.SparkRunner` runs the same tasks on Spark."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np

from bloomskip.index import params, serving
from bloomskip.index.layout import (
    ColumnIndex,
    Zoning,
)
from bloomskip.index.parts import TaskResult, run_task
from bloomskip.index.storage import Storage
from bloomskip.progress import bar as progress_bar
from bloomskip.sources import Source, SourceFile

#: The local engine makes at least this many tasks per thread, so threads stay busy.
TASKS_PER_THREAD = 3

Task = list[tuple[SourceFile, int]]  # files and the fragment id each gets


class Runner(Protocol):
    """An engine that runs indexing tasks and writes slabs: a thread pool, or Spark."""

    def index(
        self,
        storage: Storage,
        source: Source,
        tasks: list[Task],
        columns: list[ColumnIndex],
        zoning: Zoning,
    ) -> Iterator[TaskResult]: ...

    def slabs(self, storage: Storage, jobs: list[serving.SlabJob]) -> list[np.ndarray]:
        """Run :func:`~.serving.build_slab` for every job; what each returned, in order."""
        ...

    def parallelism(self) -> int:
        """How many threads the committing process may use for its own work."""
        ...

    def min_tasks(self) -> int:
        """At least how many tasks to cut the files into (at most one per file)."""
        ...


class LocalRunner:
    """Tasks and slabs on a thread pool in this process."""

    def __init__(self, threads: int | None = None, progress: bool | None = None) -> None:
        self.threads = params.threads(threads) or min(32, os.cpu_count() or 1)
        self.progress = progress

    def parallelism(self) -> int:
        return self.threads

    def min_tasks(self) -> int:
        return TASKS_PER_THREAD * self.threads

    def _show(self) -> bool:
        import sys

        return sys.stderr.isatty() if self.progress is None else self.progress

    def index(self, storage, source, tasks, columns, zoning) -> Iterator[TaskResult]:
        files = sum(len(t) for t in tasks)
        with (
            ThreadPoolExecutor(max_workers=self.threads) as pool,
            progress_bar(files, "indexing", "file", show=self._show()) as bar,
        ):
            futures = [pool.submit(run_task, storage, source, t, columns, zoning) for t in tasks]
            try:
                for fut, task in zip(futures, tasks, strict=True):
                    yield fut.result()
                    bar.update(len(task))
            finally:
                for fut in futures:  # an error or Ctrl-C: do not wait for queued tasks
                    fut.cancel()

    def slabs(self, storage, jobs) -> list[np.ndarray]:
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            futures = [pool.submit(serving.build_slab, storage, job) for job in jobs]
            try:
                return [fut.result() for fut in futures]
            finally:
                for fut in futures:
                    fut.cancel()


__all__ = ["LocalRunner", "Runner", "Task"]
