"""Adding native bloom filters to every Parquet and ORC file of a lake, on Spark.

Each task runs, in place on its files, :func:`bloomskip.parquet.add_bloom_filters` on
Parquet files (the bytes before each footer copied unchanged, the filters appended, the
footer rewritten) and :func:`bloomskip.orc.add_bloom_filters` on ORC files (the data
streams copied unchanged, BLOOM_FILTER_UTF8 streams added to each stripe's index); the
new file is renamed over the old one (atomic per file). A row group (Parquet) or stripe
(ORC) that already has a filter keeps it, so a file that has every filter asked for is
left untouched, and a task Spark retries does nothing twice. A file that cannot be
changed (damaged, a column it lacks, an ORC file without a row index) is reported, not
fatal; files of other formats are listed as skipped.
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
    fpp: float | None  # None: each format's default (Parquet 0.01, ORC 0.05)
    files: list[FileOutcome] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): not Parquet/ORC
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
            f"{len(self.skipped)} not Parquet or ORC, in {self.seconds:.1f} s"
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
    fpp: float | None = None,
    *,
    tasks: int | None = None,
) -> RetrofitReport:
    """Add bloom filters for ``columns`` (``None``: every column a filter can serve) to
    every Parquet and ORC file under ``source``, in place, with Spark tasks.

    Parquet filters are sized per column chunk for its exact distinct count at ``fpp``
    (as :func:`bloomskip.parquet.add_bloom_filters`; ``None``: 0.01); ORC files get
    ORC Java's filters, one per row group sized for the row index stride at ``fpp``
    (as :func:`bloomskip.orc.add_bloom_filters`; ``None``: 0.05). Row groups or
    stripes that have a filter keep it. The files must be local or mounted at the same
    path on every executor (they are rewritten with a rename). Returns what changed;
    files that could not be changed are listed in ``failed`` with the reason, and their
    bytes are as they were.
    """
    require_pyspark()
    from bloomskip.sbbf.sizing import num_bytes_for

    if fpp is not None:
        num_bytes_for(1, fpp, "parquet")  # a bad fpp fails here, not in every task
    names = None if columns is None else ([columns] if isinstance(columns, str) else list(columns))
    t0 = time.perf_counter()
    src = resolve(source)
    if src.scheme != "local":
        raise BloomskipError(f"{src.uri}: bloom filters are added in place to local files only")
    fpp = None if fpp is None else float(fpp)
    report = RetrofitReport(src.uri, names, fpp)
    files, kinds = [], []
    for f in src.list():
        kind = _format(f.path)
        if kind is None:
            report.skipped.append((f.path, "not a Parquet or ORC file"))
        else:
            files.append(f)
            kinds.append(kind)
    if files:
        job = _Retrofit(files, kinds, names, fpp, plan_tasks(files, tasks or 3 * cores(spark)))
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


def _format(path: str) -> str | None:
    """ "parquet" or "orc" (by the file's first bytes), else None."""
    try:
        name = formats.of_path(path).name
    except (BloomskipError, OSError):
        return None
    return name if name in _DEFAULT_FPP else None


#: What ``fpp=None`` means, per format.
_DEFAULT_FPP = {"parquet": 0.01, "orc": 0.05}


def _add(kind: str, path: str, columns: list[str] | None, fpp: float | None):
    if kind == "orc":
        from bloomskip.orc.write import add_bloom_filters as add_orc

        return add_orc(path, columns=columns, fpp=_DEFAULT_FPP[kind] if fpp is None else fpp)
    from bloomskip.parquet.write import add_bloom_filters as add_parquet

    return add_parquet(path, columns=columns, fpp=_DEFAULT_FPP[kind] if fpp is None else fpp)


@dataclass
class _Retrofit:
    files: list[SourceFile]
    kinds: list[str]  # "parquet" or "orc", per file
    columns: list[str] | None
    fpp: float | None
    tasks: list[list[int]]

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for task in batch.column(0).to_pylist():
                rows: dict[str, list] = {n: [] for n in _RESULT_SCHEMA.names}
                for pos in self.tasks[task]:
                    f = self.files[pos]
                    try:
                        res = _add(self.kinds[pos], f.path, self.columns, self.fpp)
                        out = (
                            res.rewritten,
                            sum(res.filters_added.values()),
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
