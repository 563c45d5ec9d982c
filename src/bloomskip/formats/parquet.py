"""Parquet as a :class:`~bloomskip.formats.base.FileFormat`: files that start with ``PAR1``
(``PARE``: an encrypted footer), units are row groups; pruning, probing and inspecting
are :mod:`bloomskip.parquet`'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, BinaryIO

import pyarrow as pa

from bloomskip.errors import CorruptFileError
from bloomskip.expr.bind import Column
from bloomskip.formats.base import FileFormat, FileReader
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

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self._pf.read(columns=list(columns), use_threads=False)

    def read_unit(self, unit: int, columns: Sequence[str]) -> pa.Table:
        return self._pf.read_row_group(unit, columns=list(columns), use_threads=False)

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
