"""What every file format bloomskip reads declares: how it is recognised, its schema and
units, how units are read, pruned, probed and inspected.

A *unit* is what a reader can skip: a Parquet row group, an ORC stripe (ORC's row groups
inside stripes are pruning units too, but reading happens by stripe). The zone index cuts
zones at unit boundaries (``align="row_groups"``), the Spark data source reads only the
units its candidate zones overlap, and ``prune`` decides units with the pruning engine
(:mod:`bloomskip.prune`), from the evidence of each format's own module.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO, ClassVar

import pyarrow as pa

from bloomskip.expr.bind import Column
from bloomskip.hashing.arrow import PhysicalSpec
from bloomskip.prune.result import ProbeResult, PruneResult


class FileReader(ABC):
    """One open data file: its Arrow schema, the rows of each unit, and reads."""

    #: The format's name ("parquet", "orc").
    format: ClassVar[str]

    def __init__(self, schema: pa.Schema, unit_rows: Sequence[int]) -> None:
        self.schema = schema
        self.unit_rows = list(unit_rows)

    @property
    def num_rows(self) -> int:
        return sum(self.unit_rows)

    @abstractmethod
    def read(self, columns: Sequence[str]) -> pa.Table:
        """The whole file's ``columns``."""

    @abstractmethod
    def read_unit(self, unit: int, columns: Sequence[str]) -> pa.Table:
        """One unit's ``columns``."""

    def physical_spec(self, column: str, arrow_type: pa.DataType) -> PhysicalSpec | None:
        """How the file stores ``column`` (Parquet: its physical type), when it says and
        the column reads as ``arrow_type``."""
        return None

    def doubts(self, table: pa.Table) -> dict[str, str]:
        """Columns of ``table`` (read from this file) whose values readers disagree on,
        and why: an index leaves them unindexed in this file (read in full)."""
        return {}

    def microsecond_columns(self) -> frozenset[str]:
        """Top-level columns that engines read at whole microseconds although they hold
        nanoseconds (Parquet INT96: DuckDB and Spark drop the nanoseconds below)."""
        return frozenset()

    def jvm_clock_columns(self) -> frozenset[str]:
        """Top-level columns of wall clocks that Spark reads as instants in its JVM's
        default time zone (ORC's TIMESTAMP)."""
        return frozenset()


class FileFormat(ABC):
    """A file format: recognised by its first bytes, read through :class:`FileReader`."""

    name: ClassVar[str]

    @abstractmethod
    def sniff_tail(self, tail: bytes) -> bool:
        """Do a file's last 4 bytes end it as this format does?"""

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` (at least 4 bytes) is of this format."""

    @abstractmethod
    def reader(self, fh: BinaryIO, label: str, *, spark_values: bool = False) -> FileReader:
        """A reader over the open, seekable binary file ``fh`` (``label`` names it in
        errors). ``spark_values``: read values as Spark reads them where a format's
        readers differ (Parquet INT96: microseconds, floored; otherwise pyarrow's
        nanoseconds, which wrap outside the years 1677-2262)."""

    #: Where the format's ``prune``, ``probe``, ``inspect`` and its text live (imported on
    #: use, so a registry lookup loads no format's code).
    prune_module: ClassVar[str]
    inspect_function: ClassVar[str]  # "module:function"
    inspect_text_function: ClassVar[str]

    @abstractmethod
    def binding_schema(self, path: str | os.PathLike, **options: Any) -> dict[str, Column]:
        """The columns a predicate on ``path`` may name, with their logical types."""

    def prune(self, path: str | os.PathLike, predicate: Any, **options: Any) -> PruneResult:
        """Which units of ``path`` may hold rows matching ``predicate``, and why."""
        return importlib.import_module(self.prune_module).prune(path, predicate, **options)

    def probe(
        self, path: str | os.PathLike, column: str, values: Iterable[Any], **options: Any
    ) -> ProbeResult:
        """What each unit's bloom filter says of ``values``."""
        return importlib.import_module(self.prune_module).probe(path, column, values, **options)

    def inspect(self, path: str | os.PathLike, **options: Any) -> dict[str, Any]:
        """A JSON-ready description of every bloom filter in ``path``."""
        return _function(self.inspect_function)(path, **options)

    def inspect_text(self, report: dict[str, Any]) -> str:
        """``inspect``'s report as a table for people."""
        return _function(self.inspect_text_function)(report)

    #: Options its ``prune``/``probe``/``inspect`` accept beyond the common ones
    #: (Parquet: ``decryption``).
    options: ClassVar[frozenset[str]] = frozenset()


#: Field metadata of a column a Parquet file stores as INT96 (an instant to Spark, Hive
#: and Impala, which pyarrow reads as a timestamp without a time zone), in an index's
#: schema of a lake.
INT96_KEY = b"bloomskip.int96"
#: Field metadata of a column an ORC file stores as TIMESTAMP: wall clocks, which Spark
#: reads as instants in its JVM's default time zone.
JVM_CLOCK_KEY = b"bloomskip.jvm_clock"
#: Schema metadata of a lake's schema in an index: its columns were marked (the two keys
#: above). An index built before bloomskip marked them lacks it, and its timestamp columns
#: without a time zone are taken as possibly ORC TIMESTAMPs (every UTC offset probed).
MARKED_KEY = b"bloomskip.marked"


_PER_DAY = {"s": 86_400, "ms": 86_400 * 10**3, "us": 86_400 * 10**6, "ns": 86_400 * 10**9}


def earliest_day(col: pa.ChunkedArray) -> int | None:
    """The earliest day (since 1970-01-01) of a date32 or timestamp column, None if it has
    no value; in integers, so years Python's ``datetime`` cannot hold (0, or a raw day
    count of a calendar the file was not written in) are no error."""
    import pyarrow.compute as pc

    if pa.types.is_date32(col.type):
        return pc.min(col.cast(pa.int32())).as_py()
    low = pc.min(col.cast(pa.int64())).as_py()
    return None if low is None else low // _PER_DAY[col.type.unit]


def _function(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


__all__ = ["FileFormat", "FileReader"]
