"""The values of one column chunk, read to be hashed into its bloom filter: through pyarrow
for plaintext files, through the decrypted pages of :mod:`.plainview` for encrypted ones,
then hashed as the file *stores* them (its physical type, INT96 from its own bytes).

Readers open the file by path again (one view per thread), so each open is checked
(``fstat``) to be the file whose footer was read
(:func:`bloomskip.replace.open_unchanged`): were the path renamed over meanwhile, the
filters would otherwise describe another file's pages. Each chunk is read on one thread
(``use_threads=False``): the callers already read several chunks at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bloomskip.errors import BloomskipError, CorruptFileError, UnsupportedTypeError
from bloomskip.hashing import hash_int96, hash_values
from bloomskip.hashing.arrow import PhysicalSpec, is_list_like
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.footer import Footer, LeafColumn
from bloomskip.parquet.plainview import plaintext_chunk_file
from bloomskip.parquet.schema import ColumnType
from bloomskip.replace import FileIdentity, open_unchanged

_JULIAN_EPOCH_DAY = 2_440_588  # Julian day number of 1970-01-01
_US_PER_DAY = 86_400 * 10**6
_NS_PER_DAY = 86_400 * 10**9


@dataclass(frozen=True)
class ChunkColumn:
    """A column a filter is added to: its leaf, type and physical encoding."""

    leaf: LeafColumn
    ctype: ColumnType
    spec: PhysicalSpec


class ValueReader:
    """Reads one column chunk's values as the leaf's non-nested values, with pyarrow.

    The files are opened (and their footers read) up front: :func:`write_table` then
    overwrites the old footer of its temporary file while pages are still being read.
    INT96 columns need a second view of the file (see :func:`_int96_hashes`). With
    ``identity``, every view is checked to be that file (:class:`FileChangedError`).
    """

    def __init__(
        self, path: str, label: str, *, int96: bool, identity: FileIdentity | None = None
    ) -> None:
        self.path = path
        self.label = label
        self._files: dict[str, pq.ParquetFile] = {}
        self._handles: list = []
        try:
            for unit in ("ns", "us") if int96 else ("ns",):
                fh = self._guard(
                    "open the file", lambda: open_unchanged(path, identity, label=label)
                )
                self._handles.append(fh)
                self._files[unit] = self._guard(
                    "open the file",
                    lambda unit=unit, fh=fh: pq.ParquetFile(fh, coerce_int96_timestamp_unit=unit),
                )
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for pf in self._files.values():
            pf.close()
        for fh in self._handles:
            fh.close()

    def read(self, row_group: int, leaf: LeafColumn, int96_unit: str = "ns") -> pa.ChunkedArray:
        what = f"read row group {row_group} column {leaf.name}"
        pf = self._files[int96_unit]
        table = self._guard(
            what, lambda: pf.read_row_group(row_group, columns=[leaf.name], use_threads=False)
        )
        if table.num_columns != 1:
            raise UnsupportedTypeError(
                f"{self.label}: column name {leaf.name!r} selects {table.num_columns} columns"
            )
        return _leaf_values(table.column(0), leaf, self.label)

    def _guard(self, what: str, call):
        try:
            return call()
        except (pa.ArrowException, OSError) as e:
            raise CorruptFileError(f"{self.label}: cannot {what}: {e}") from e


class DecryptedReader(ValueReader):
    """Reads one column chunk of an encrypted file from its decrypted pages: a one-chunk
    plaintext file built by :func:`~bloomskip.parquet.plainview.plaintext_chunk_file`."""

    def __init__(
        self, path: str, label: str, footer: Footer, *, identity: FileIdentity | None = None
    ) -> None:
        self.path = path
        self.label = label
        self.footer = footer
        self.identity = identity
        self._cache: tuple[tuple[int, int], bytes] | None = None

    def close(self) -> None:
        self._cache = None

    def read(self, row_group: int, leaf: LeafColumn, int96_unit: str = "ns") -> pa.ChunkedArray:
        key = (row_group, leaf.index)
        if self._cache is None or self._cache[0] != key:  # INT96 reads a chunk twice
            chunk = self.footer.row_groups[row_group].columns[leaf.index]
            with open_unchanged(self.path, self.identity, label=self.label) as fh:
                self._cache = (key, plaintext_chunk_file(fh, self.footer, chunk))
        data = self._cache[1]
        what = f"read row group {row_group} column {leaf.name}"
        table = self._guard(
            what,
            lambda: pq.ParquetFile(
                pa.BufferReader(data), coerce_int96_timestamp_unit=int96_unit
            ).read_row_group(0, columns=[leaf.name], use_threads=False),
        )
        if table.num_columns != 1:
            raise UnsupportedTypeError(
                f"{self.label}: column name {leaf.name!r} selects {table.num_columns} columns"
            )
        return _leaf_values(table.column(0), leaf, self.label)


def _leaf_values(arr: pa.ChunkedArray, leaf: LeafColumn, label: str) -> pa.ChunkedArray:
    """Unwrap lists, maps and structs down to the leaf's values (every element, in order).

    Reading one leaf gives a top-level column that holds only that leaf, so each struct
    has one field and each list one child. Null lists contribute no values; null structs
    make their fields null (``flatten`` merges the parent's validity).
    """
    while True:
        t = arr.type
        if is_list_like(t):
            arr = pc.list_flatten(arr)
        elif pa.types.is_struct(t):
            names = [t.field(i).name for i in range(t.num_fields)]
            wanted = [i for i, n in enumerate(names) if n in leaf.path]
            if t.num_fields != 1 and len(wanted) != 1:
                raise UnsupportedTypeError(
                    f"{label}: cannot find leaf {leaf.name} in a struct of {', '.join(names)}"
                )
            arr = arr.flatten()[0 if t.num_fields == 1 else wanted[0]]
        else:
            return arr


def chunk_hashes(reader: ValueReader, row_group: int, col: ChunkColumn) -> np.ndarray:
    """xxHash64 of every non-null value of one column chunk, as the file stores it."""
    if col.spec.physical_type is PhysicalType.INT96:
        return _int96chunk_hashes(reader, row_group, col.leaf)
    values = reader.read(row_group, col.leaf)
    try:
        return _hash_as_stored(values, col)
    except BloomskipError as e:
        where = f"{reader.label}: row group {row_group} column {col.leaf.name}"
        raise type(e)(f"{where}: {e}") from e


def _hash_as_stored(values: pa.ChunkedArray, col: ChunkColumn) -> np.ndarray:
    try:
        return hash_values(values, physical=col.spec)
    except UnsupportedTypeError:
        # An Arrow type the hashing does not know (pyarrow restores e.g. durations from
        # the Arrow schema): hash the file's own logical type instead.
        if col.ctype.arrow_type is None:
            raise
        try:
            values = values.cast(col.ctype.arrow_type, safe=True)
        except (pa.ArrowException, ValueError) as e:
            raise UnsupportedTypeError(
                f"cannot hash {values.type} as {col.ctype.logical}: {e}"
            ) from e
        return hash_values(values, physical=col.spec)


def _int96chunk_hashes(reader: ValueReader, row_group: int, leaf: LeafColumn) -> np.ndarray:
    """Exact hashes of INT96 timestamps (nanos of day, Julian day) read through pyarrow.

    pyarrow converts INT96 to one int64 in a chosen unit: in nanoseconds it silently
    wraps outside 1677..2262, in microseconds it drops sub-microsecond digits. Both
    together are exact: the microsecond read gives the day and the microseconds of the
    day, the wrapped nanosecond read (modulo 2**64) gives the last three digits.
    """
    us = _int64s(reader.read(row_group, leaf, int96_unit="us"))
    ns = _int64s(reader.read(row_group, leaf, int96_unit="ns"))
    days = np.floor_divide(us, _US_PER_DAY)
    us_of_day = us - days * _US_PER_DAY
    base = days.astype(np.uint64) * np.uint64(_NS_PER_DAY) + us_of_day.astype(
        np.uint64
    ) * np.uint64(1000)
    sub_us = ns.view(np.uint64) - base  # wraps modulo 2**64 exactly as pyarrow's read did
    if ns.shape != us.shape or np.any(sub_us >= 1000):
        raise CorruptFileError(
            f"{reader.label}: row group {row_group} column {leaf.name}: INT96 values read "
            "in microseconds and nanoseconds disagree"
        )
    nanos_of_day = us_of_day * 1000 + sub_us.astype(np.int64)
    return hash_int96(nanos_of_day, days + _JULIAN_EPOCH_DAY)


def _int64s(values: pa.ChunkedArray) -> np.ndarray:
    valid = pc.drop_null(values)
    if len(valid) == 0:
        return np.zeros(0, dtype=np.int64)
    return valid.combine_chunks().cast(pa.int64()).to_numpy()
