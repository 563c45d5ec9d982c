"""ORC as a :class:`~bloomskip.formats.base.FileFormat`: files that start with ``ORC``,
units are stripes (their row groups are pruning units too); pruning, probing and
inspecting are :mod:`bloomskip.orc`'s."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, BinaryIO

import pyarrow as pa

from bloomskip.errors import CorruptFileError
from bloomskip.expr.bind import Column
from bloomskip.formats.base import FileFormat, FileReader


class OrcReader(FileReader):
    format = "orc"

    def __init__(self, fh: BinaryIO, label: str) -> None:
        import pyarrow.orc as po

        from bloomskip.orc.file import read_orc
        from bloomskip.orc.types import CHAR

        orc = read_orc(fh, name=label)
        stripes = [s.num_rows for s in orc.stripes]
        self._padded = frozenset(c.name for c in orc.columns if c.kind == CHAR and c.path)
        fh.seek(0)
        try:
            self._of = po.ORCFile(fh)
            super().__init__(self._of.schema, stripes)
        except (OSError, pa.ArrowException) as e:
            raise CorruptFileError(f"{label}: not a readable ORC file: {e}") from e

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self._of.read(columns=list(columns))

    def padded_columns(self) -> frozenset[str]:
        return self._padded

    def read_unit(self, unit: int, columns: Sequence[str]) -> pa.Table:
        return pa.Table.from_batches([self._of.read_stripe(unit, columns=list(columns))])


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
        return OrcReader(fh, label)

    def binding_schema(self, path: str | os.PathLike, **options: Any) -> dict[str, Column]:
        from bloomskip.orc.file import read_orc
        from bloomskip.orc.prune import schema_of

        return schema_of(read_orc(path))[0]
