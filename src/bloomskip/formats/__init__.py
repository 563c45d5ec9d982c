"""The file formats bloomskip reads, in one registry: every place that must tell Parquet
from ORC asks here.

>>> from bloomskip import formats
>>> formats.of_path("events.parquet").prune("events.parquet", "id = 7")   # doctest: +SKIP

Each format (:mod:`.parquet`, :mod:`.orc`) declares how it is recognised (its magic
bytes and file extensions), opens a :class:`~.base.FileReader` (schema, rows per unit,
reads of whole files or single units) and answers ``prune``, ``probe`` and ``inspect``.
Datasets that are not files (Lance, and tables) are *sources*, not formats
(:mod:`bloomskip.sources`).
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from bloomskip.errors import NotDataFileError, UnsupportedFileError
from bloomskip.formats.base import FileFormat, FileReader
from bloomskip.formats.orc import OrcFormat
from bloomskip.formats.parquet import ParquetFormat
from bloomskip.localfiles import open_regular

#: Every format, in the order files are tested.
FORMATS: tuple[FileFormat, ...] = (ParquetFormat(), OrcFormat())


def by_name(name: str) -> FileFormat:
    for f in FORMATS:
        if f.name == name:
            return f
    raise UnsupportedFileError(f"no file format {name!r}; bloomskip reads {_names()}")


def detect(head: bytes, label: str) -> FileFormat:
    """The format of a file that starts with ``head``, or
    :class:`~bloomskip.errors.UnsupportedFileError`."""
    if len(head) < 4:
        raise UnsupportedFileError(f"{label}: {len(head)} bytes, too short for a {_names()}")
    for f in FORMATS:
        if f.sniff(head):
            return f
    raise UnsupportedFileError(f"{label}: not a {_names()} (it starts {head[:4]!r})")


def of_path(path: str | os.PathLike) -> FileFormat:
    """The format of the local file ``path`` (a regular file: FIFOs and devices are
    refused before anything reads them)."""
    with open_regular(path) as fh:
        return detect(fh.read(4), os.fspath(path))


def open_reader(fh: BinaryIO, label: str, *, spark_values: bool = False) -> FileReader:
    """A reader over the open file ``fh``, whatever its format; for a file that is none
    (:func:`is_data`), :class:`~bloomskip.errors.NotDataFileError`. ``spark_values``: as
    :meth:`~.base.FileFormat.reader`."""
    head = fh.read(4)
    try:
        fmt = detect(head, label)
    except UnsupportedFileError as e:
        end = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, end - 4))
        tail = fh.read(4)
        whole = len(head) == len(tail) == min(4, end)  # else it shrank while being read
        if whole and not is_data(head, tail):
            raise NotDataFileError(str(e), size=end) from None
        raise
    fh.seek(0)
    return fmt.reader(fh, label, spark_values=spark_values)


def is_data(head: bytes, tail: bytes) -> bool:
    """Could a file of these first and last 4 bytes be a Parquet or ORC file to a reader?
    Readers check the magic at the end (Parquet's footer, ORC's postscript), some never
    the first bytes, so a file is data unless neither end is a format's magic."""
    return any(f.sniff(head) or f.sniff_tail(tail) for f in FORMATS)


def options_for(fmt: FileFormat, **options: Any) -> dict[str, Any]:
    """``options`` without those ``fmt`` does not take (e.g. Parquet keys for ORC)."""
    return {k: v for k, v in options.items() if k in fmt.options}


def _names() -> str:
    """ "Parquet or ORC file", from the registry."""
    names = [f.name.capitalize() if f.name == "parquet" else f.name.upper() for f in FORMATS]
    return f"{', '.join(names[:-1])} or {names[-1]} file"


__all__ = [
    "FORMATS",
    "FileFormat",
    "FileReader",
    "by_name",
    "detect",
    "is_data",
    "of_path",
    "open_reader",
    "options_for",
]
