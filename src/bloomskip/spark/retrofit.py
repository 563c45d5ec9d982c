"""Adding native Parquet bloom filters to every file of a lake, on Spark.

Each task runs :func:`bloomskip.parquet.add_bloom_filters` in place on its files: the
bytes before each footer are copied unchanged, the filters appended, the footer
rewritten, and the new file renamed over the old one (atomic per file). A chunk that
already has a filter keeps it, so a file whose chunks all have filters for the asked
columns is left untouched, and a task Spark retries does nothing twice. A file that
cannot be changed (damaged, not Parquet, a column it lacks) is reported, not fatal.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from bloomskip import formats
from bloomskip.errors import BloomskipError, SparkJobError
from bloomskip.index.build import plan_tasks
from bloomskip.sources import SourceFile, resolve
from bloomskip.spark.build import cores
from bloomskip.spark.session import require_pyspark, spark_schema

_RESULT_SCHEMA = pa.schema(
    [
        ("file", pa.int64()),
        ("rewritten", pa.bool_()),
        ("filters_added", pa.int64()),
        ("filter_bytes", pa.int64()),
        ("bytes_added", pa.int64()),
        ("error", pa.string()),
    ]
)


@dataclass
class FileOutcome:
    path: str
    rewritten: bool
    filters_added: int
    filter_bytes: int
    bytes_added: int
    error: str | None = None


@dataclass
class RetrofitReport:
    """What :func:`add_bloom_filters` did to a lake."""

    source: str
    columns: list[str] | None
    fpp: float
    files: list[FileOutcome] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): not Parquet
    seconds: float = 0.0

    @property
    def files_changed(self) -> int:
        return sum(f.rewritten for f in self.files)

    @property
    def files_unchanged(self) -> int:
        """Files that already had every filter asked for."""
        return sum(not f.rewritten and f.error is None for f in self.files)

    @property
    def failed(self) -> list[tuple[str, str]]:
        return [(f.path, f.error) for f in self.files if f.error is not None]

    @property
    def filters_added(self) -> int:
        return sum(f.filters_added for f in self.files)

    @property
    def bytes_added(self) -> int:
        return sum(f.bytes_added for f in self.files)

    def summary(self) -> str:
        text = (
            f"{self.source}: {len(self.files)} files, {self.files_changed} changed "
            f"({self.filters_added} filters, {self.bytes_added:,} bytes added), "
            f"{self.files_unchanged} already had the filters, {len(self.failed)} failed, "
            f"{len(self.skipped)} not Parquet, in {self.seconds:.1f} s"
        )
        for path, why in self.failed[:10]:
            text += f"\n  failed: {path}: {why}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "columns": self.columns,
            "fpp": self.fpp,
            "files": len(self.files),
            "files_changed": self.files_changed,
            "files_unchanged": self.files_unchanged,
            "filters_added": self.filters_added,
            "bytes_added": self.bytes_added,
            "seconds": round(self.seconds, 3),
            "failed": [{"path": p, "reason": r} for p, r in self.failed],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "outcomes": [asdict(f) for f in self.files],
        }


def add_bloom_filters(
    spark,
    source: str | os.PathLike | Sequence[str | os.PathLike],
    columns: str | Sequence[str] | None = None,
    fpp: float = 0.01,
    *,
    tasks: int | None = None,
) -> RetrofitReport:
    """Add bloom filters for ``columns`` (``None``: every column a filter can serve) to
    every Parquet file under ``source``, in place, with Spark tasks.

    Filters are sized per column chunk for its exact distinct count at ``fpp`` (as
    :func:`bloomskip.parquet.add_bloom_filters`); chunks that have a filter keep it. The
    files must be local or mounted at the same path on every executor (they are
    rewritten with a rename). Returns what changed; files that could not be changed are
    listed in ``failed`` with the reason, and their bytes are as they were.
    """
    require_pyspark()
    from bloomskip.sbbf.sizing import num_bytes_for

    num_bytes_for(1, fpp, "parquet")  # a bad fpp fails here, not in every task
    names = None if columns is None else ([columns] if isinstance(columns, str) else list(columns))
    t0 = time.perf_counter()
    src = resolve(source)
    if src.scheme != "local":
        raise BloomskipError(f"{src.uri}: bloom filters are added in place to local files only")
    report = RetrofitReport(src.uri, names, float(fpp))
    files = []
    for f in src.list():
        if _is_parquet(f.path):
            files.append(f)
        else:
            report.skipped.append((f.path, "not a Parquet file"))
    if files:
        job = _Retrofit(files, names, float(fpp), plan_tasks(files, tasks or 3 * cores(spark)))
        df = spark.range(0, len(job.tasks), 1, len(job.tasks))
        df = df.mapInArrow(job, spark_schema(_RESULT_SCHEMA))
        try:
            rows = df.toArrow().sort_by("file").to_pylist()
        except Exception as e:
            raise SparkJobError(
                f"the Spark job adding filters to {src.uri} failed: {str(e).strip()[:500]} "
                "(each file is either as it was or complete with its filters)"
            ) from e
        seen = {r["file"]: r for r in rows}
        for pos, f in enumerate(files):
            r = seen.get(pos)
            if r is None:
                report.files.append(FileOutcome(f.path, False, 0, 0, 0, "no result from its task"))
                continue
            report.files.append(
                FileOutcome(
                    f.path,
                    r["rewritten"],
                    r["filters_added"],
                    r["filter_bytes"],
                    r["bytes_added"],
                    r["error"],
                )
            )
    report.seconds = time.perf_counter() - t0
    return report


def _is_parquet(path: str) -> bool:
    try:
        return formats.of_path(path).name == "parquet"
    except (BloomskipError, OSError):
        return False


@dataclass
class _Retrofit:
    files: list[SourceFile]
    columns: list[str] | None
    fpp: float
    tasks: list[list[int]]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from bloomskip.parquet.write import add_bloom_filters as add

        for batch in batches:
            for task in batch.column(0).to_pylist():
                rows: dict[str, list] = {n: [] for n in _RESULT_SCHEMA.names}
                for pos in self.tasks[task]:
                    f = self.files[pos]
                    try:
                        res = add(f.path, columns=self.columns, fpp=self.fpp)
                        out = (
                            res.rewritten,
                            len(res.added),
                            res.filter_bytes,
                            res.bytes_added,
                            None,
                        )
                    except (BloomskipError, OSError, ValueError, pa.ArrowException) as e:
                        out = (False, 0, 0, 0, f"{type(e).__name__}: {e}")
                    for name, value in zip(_RESULT_SCHEMA.names, (pos, *out), strict=True):
                        rows[name].append(value)
                yield pa.RecordBatch.from_pydict(rows, schema=_RESULT_SCHEMA)


__all__ = ["FileOutcome", "RetrofitReport", "add_bloom_filters"]
