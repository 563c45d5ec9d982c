"""ORC as a :class:`~bloomskip.formats.base.FileFormat`: files that start with ``ORC``,
units are stripes (their row groups are pruning units too); pruning, probing and
inspecting are :mod:`bloomskip.orc`'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, BinaryIO

import pyarrow as pa

from bloomskip.errors import CorruptFileError, UnsupportedFileError
from bloomskip.expr.bind import Column
from bloomskip.formats.base import FileFormat, FileReader, earliest_day
from bloomskip.formats.calendar import rebase_hybrid


class OrcReader(FileReader):
    format = "orc"

    def __init__(self, fh: BinaryIO, label: str, *, spark_values: bool = False) -> None:
        import pyarrow.orc as po

        from bloomskip.orc.file import read_orc
        from bloomskip.orc.trust import PROLEPTIC_GREGORIAN
        from bloomskip.orc.types import CHAR, TIMESTAMP

        orc = read_orc(fh, name=label)
        stripes = [s.num_rows for s in orc.stripes]
        self._padded = frozenset(c.name for c in orc.columns if c.kind == CHAR and c.path)
        self._clocks = frozenset(
            c.name for c in orc.columns if c.kind == TIMESTAMP and len(c.path) == 1
        )
        self._hybrid = orc.writer.calendar != PROLEPTIC_GREGORIAN
        self._spark, self._label = spark_values, label
        fh.seek(0)
        try:
            self._of = po.ORCFile(fh)
            super().__init__(self._of.schema, stripes)
        except (OSError, pa.ArrowException) as e:
            raise CorruptFileError(f"{label}: not a readable ORC file: {e}") from e

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self._checked(self._of.read(columns=list(columns)), columns)

    def _checked(self, table: pa.Table, columns: Sequence[str]) -> pa.Table:
        """``table`` as read for ``columns``, checked: pyarrow's ORC reader takes a name
        for a path, and for ``s.a`` may return a struct ``s`` (beside a column named
        ``s.a``). With ``spark_values``, dates of a hybrid-calendar file as Spark reads them
        (rebased); timestamps before 1677 do not get here, pyarrow refuses them."""
        if sorted(table.column_names) != sorted(columns):  # in the file's order
            raise UnsupportedFileError(
                f"{self._label}: pyarrow's ORC reader returns {table.column_names} for the "
                f"columns {list(columns)} (a column named like a struct's field?)"
            )
        if not (self._spark and self._hybrid):
            return table
        return rebase_hybrid(table, self._label)

    def doubts(self, table: pa.Table) -> dict[str, str]:
        """CHAR(n) columns (Spark compares them padded to n, other readers as written),
        and dates or timestamps before the Gregorian cutover in a file not written in
        the proleptic Gregorian calendar (readers rebase them differently)."""
        from bloomskip.orc.trust import CALENDAR_SAFE_DAY

        out = {}
        for name in table.column_names:
            col = table.column(name)
            if name in self._padded:
                out[name] = "CHAR(n), which Spark compares padded to n and other readers as written"
            elif self._hybrid and (pa.types.is_date32(col.type) or pa.types.is_timestamp(col.type)):
                first = earliest_day(col)
                if first is not None and first < CALENDAR_SAFE_DAY:
                    out[name] = (
                        "before 1582-10-16 in a file not in the proleptic Gregorian calendar, "
                        "which readers rebase differently"
                    )
        return out

    def jvm_clock_columns(self) -> frozenset[str]:
        return self._clocks

    def read_unit(self, unit: int, columns: Sequence[str]) -> pa.Table:
        stripe = self._of.read_stripe(unit, columns=list(columns))
        return self._checked(pa.Table.from_batches([stripe]), columns)


class OrcFormat(FileFormat):
    name = "orc"

    prune_module = "bloomskip.orc.prune"
    inspect_function = "bloomskip.orc.inspect:inspect_orc"
    inspect_text_function = "bloomskip.orc.inspect:inspect_orc_text"

    def sniff(self, head: bytes) -> bool:
        return head[:3] == b"ORC"

    def sniff_tail(self, tail: bytes) -> bool:
        return tail[-4:-1] == b"ORC"  # the postscript's magic, before its length byte

    def reader(self, fh: BinaryIO, label: str, *, spark_values: bool = False) -> FileReader:
        return OrcReader(fh, label, spark_values=spark_values)

    def binding_schema(self, path: str | os.PathLike, **options: Any) -> dict[str, Column]:
        from bloomskip.orc.file import read_orc
        from bloomskip.orc.prune import schema_of

        return schema_of(read_orc(path))[0]
