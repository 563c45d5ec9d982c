"""Parquet as a :class:`~bloomskip.formats.base.FileFormat`: files that start with ``PAR1``
(``PARE``: an encrypted footer), units are row groups; pruning, probing and inspecting
are :mod:`bloomskip.parquet`'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa

from bloomskip.errors import CorruptFileError
from bloomskip.expr.bind import Column
from bloomskip.formats.base import FileFormat, FileReader, earliest_day
from bloomskip.formats.calendar import CUTOVER_DAY, rebase_hybrid, spark_rebased
from bloomskip.hashing.arrow import PhysicalSpec


class ParquetReader(FileReader):
    format = "parquet"

    def __init__(self, fh: BinaryIO, label: str, *, spark_values: bool = False) -> None:
        import pyarrow.parquet as pq

        try:
            unit = "us" if spark_values else "ns"
            self._pf = pq.ParquetFile(fh, coerce_int96_timestamp_unit=unit)
            meta = self._pf.metadata
            groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
            super().__init__(self._pf.schema_arrow, groups)
        except (OSError, pa.ArrowException) as e:
            raise CorruptFileError(f"{label}: not a readable Parquet file: {e}") from e
        self._fh, self._label = fh, label
        self._rebased = spark_rebased(self._pf.schema_arrow, self.microsecond_columns())
        self._spark = spark_values

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self._as_spark(self._pf.read(columns=list(columns), use_threads=False))

    def read_unit(self, unit: int, columns: Sequence[str]) -> pa.Table:
        group = self._pf.read_row_group(unit, columns=list(columns), use_threads=False)
        return self._as_spark(group)

    def _as_spark(self, table: pa.Table) -> pa.Table:
        """With ``spark_values``, a file Spark 2 wrote in its legacy calendar as Spark
        reads it: dates before the cutover rebased, instants before 1900 refused."""
        if not (self._spark and self._rebased):
            return table
        dates = CUTOVER_DAY in self._rebased.values()
        instants = [n for n, day in self._rebased.items() if day != CUTOVER_DAY]
        return rebase_hybrid(table, self._label, dates=dates, instants=instants)

    def doubts(self, table: pa.Table) -> dict[str, str]:
        """INT96 values pyarrow's nanoseconds cannot hold (before 1677 or after 2262: they
        wrap, and would be hashed as other instants), and dates and timestamps before the
        Gregorian cutover, and instants before 1900, in a file Spark wrote in its legacy
        (hybrid) calendar, which Spark rebases when it reads them and pyarrow does not."""
        import pyarrow.parquet as pq

        out: dict[str, str] = {}
        int96 = sorted(self.microsecond_columns() & set(table.column_names))
        if int96:
            self._fh.seek(0)
            us = pq.ParquetFile(self._fh, coerce_int96_timestamp_unit="us").read(
                columns=int96, use_threads=False
            )
            for name in int96:
                # nulls as 0 on both sides: a float64 detour would round big values
                ns = table.column(name).cast(pa.int64()).fill_null(0).to_numpy()
                ok = us.column(name).cast(pa.int64()).fill_null(0).to_numpy()
                if ns.shape != ok.shape or not np.array_equal(ns // 1000, ok):
                    out[name] = (
                        "INT96 values beyond the years 1677-2262, which pyarrow reads wrapped"
                    )
        for name, before in self._rebased.items():
            if name in out or name not in table.column_names:
                continue
            first = earliest_day(table.column(name))
            if first is not None and first < before + 1:  # a day of margin for zones
                when = "1582-10-16" if pa.types.is_date32(table.column(name).type) else "1900"
                out[name] = (
                    f"before {when} in Spark's legacy calendar, which Spark rebases when "
                    "it reads it"
                )
        return out

    def microsecond_columns(self) -> frozenset[str]:
        """INT96 leaves, by path: a top-level column's is its name (dots and all)."""
        schema = self._pf.schema
        return frozenset(
            schema.column(i).path
            for i in range(len(schema))
            if schema.column(i).physical_type == "INT96"
        )

    def physical_spec(self, column: str, arrow_type: pa.DataType) -> PhysicalSpec | None:
        from bloomskip.parquet.footer import read_footer
        from bloomskip.parquet.schema import column_type

        self._fh.seek(0)
        ctype = column_type(read_footer(self._fh, name=self._label).leaf(column))
        return ctype.spec if ctype.arrow_type == arrow_type else None


class ParquetFormat(FileFormat):
    name = "parquet"
    options = frozenset({"decryption"})

    prune_module = "bloomskip.parquet.prune"
    inspect_function = "bloomskip.parquet.inspect:inspect_file"
    inspect_text_function = "bloomskip.parquet.inspect:inspect_text"

    def sniff(self, head: bytes) -> bool:
        return head[:4] in (b"PAR1", b"PARE")

    def sniff_tail(self, tail: bytes) -> bool:
        return tail[-4:] in (b"PAR1", b"PARE")  # the footer's magic

    def reader(self, fh: BinaryIO, label: str, *, spark_values: bool = False) -> FileReader:
        return ParquetReader(fh, label, spark_values=spark_values)

    def binding_schema(self, path: str | os.PathLike, **options: Any) -> dict[str, Column]:
        from bloomskip.parquet.footer import read_footer
        from bloomskip.parquet.prune import schema_of

        return schema_of(read_footer(path, **options))[0]
