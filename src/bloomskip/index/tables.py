"""An index's Parquet tables on storage: written with a checksum per row group, read back
checked - checksums, required columns and their types - before any value is used.

The zone, file and fragment tables (:mod:`.layout`) are Parquet, zstd-compressed, in row
groups of a size the writer chooses. :func:`encode` stores one CRC per row group, of its
decoded values (:func:`.integrity.table_crc`), seeded with the table's name, in the file's
key-value metadata; :func:`decode` reads a whole table and checks every row group;
:func:`lazy` opens a table for reading some row groups (a lookup reads the fragment rows
of its candidates only) and checks each as it is read. A table written before checksums
existed has none and is checked for its columns only. Every error is a one-line
:class:`~bloomskip.errors.CorruptFileError` naming the table.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip.errors import CorruptFileError
from bloomskip.index import integrity
from bloomskip.index.layout import FILE_SCHEMA, FRAGMENT_SCHEMA, ZONE_SCHEMA
from bloomskip.objstore import first_line


def encode(table: pa.Table, rel: str, **options) -> pa.Buffer:
    """``table`` as the Parquet file ``rel`` (``options`` as ``pyarrow.parquet``'s writer
    takes them), with its row group checksums."""
    group_rows = options.pop("row_group_size", None) or TABLE_GROUP_ROWS
    meta = dict(table.schema.metadata or {})
    meta.pop(integrity.TABLE_KEY.encode(), None)  # a table read back carries its own
    table = table.replace_schema_metadata(meta or None)
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.schema, compression="zstd", **options) as writer:
        for start in range(0, table.num_rows, group_rows):
            writer.write_table(table.slice(start, group_rows), row_group_size=group_rows)
        sums = integrity.table_checksums(table, rel, group_rows)
        writer.add_key_value_metadata({integrity.TABLE_KEY: json.dumps(sums)})
    return sink.getvalue()


def decode(data: bytes, rel: str, label: str, max_rows: int | None = None) -> pa.Table:
    """The whole table in ``data`` (the file ``rel``), checked; ``max_rows``: at most
    that many rows (what the manifest says it holds)."""
    try:
        pf = pq.ParquetFile(pa.py_buffer(data))
        _shape(pf, rel, label, len(data), max_rows)
        table = _read(pf, None, len(data), label)
    except CorruptFileError:
        raise
    except (OSError, pa.ArrowException, ValueError) as e:
        raise CorruptFileError(f"{label}: unreadable index table: {first_line(e)}") from None
    meta = pf.metadata
    sums = integrity.stored_checksums(meta.metadata, meta.num_row_groups, label)
    if sums is not None:
        start = 0
        for g, want in enumerate(sums):
            n = meta.row_group(g).num_rows
            integrity.check_table(table.slice(start, n), rel, g, want, label)
            start += n
        if start != table.num_rows:
            raise CorruptFileError(f"{label}: damaged (its row groups do not add up)")
    return conform(table, rel, label)


def lazy(source, rel: str, label: str, max_rows: int | None = None) -> pq.ParquetFile:
    """The table ``rel`` in the file-like ``source``, for reading some row groups."""
    try:
        return CheckedParquetFile(source, rel, label, max_rows)
    except CorruptFileError:
        raise
    except (OSError, pa.ArrowException, ValueError) as e:
        raise CorruptFileError(f"{label}: unreadable index table: {first_line(e)}") from None


#: Rows per row group of a table written without a row group size.
TABLE_GROUP_ROWS = 64 * 1024

#: What each kind of table must hold (by the end of its name): columns and their types.
_SCHEMAS = (
    (".zones.parquet", ZONE_SCHEMA),
    (".files.parquet", FILE_SCHEMA),
    ("", FRAGMENT_SCHEMA),  # fragments/<uuid>.parquet
)


def conform(table: pa.Table, rel: str, label: str) -> pa.Table:
    """``table`` with the columns its kind of table must have, each of its type (cast
    exactly), with no nulls where none may be; else CorruptFileError."""
    schema = _expected(table.schema, rel, label)
    for field in schema:
        if field.name not in table.column_names:
            if field.nullable:
                continue
            raise CorruptFileError(f"{label}: damaged (no column {field.name!r})")
        i = table.column_names.index(field.name)
        column = table.column(i)
        if column.null_count and not field.nullable:
            raise CorruptFileError(f"{label}: damaged (nulls in {field.name!r})")
        if column.type == field.type or (
            pa.types.is_large_binary(column.type) and pa.types.is_binary(field.type)
        ):
            continue
        same_kind = (pa.types.is_integer(column.type) and pa.types.is_integer(field.type)) or (
            pa.types.is_large_string(column.type) and pa.types.is_string(field.type)
        )
        try:
            if not same_kind:
                raise TypeError
            table = table.set_column(i, field.name, column.cast(field.type))
        except (TypeError, pa.ArrowException):
            raise CorruptFileError(
                f"{label}: damaged ({field.name!r} is {column.type}, not {field.type})"
            ) from None
    return table


def _expected(schema: pa.Schema, rel: str, label: str) -> pa.Schema:
    """The schema a table named ``rel`` must have; its required columns must come first,
    in order (readers of some row groups use the first column's statistics)."""
    expected = next(s for suffix, s in _SCHEMAS if rel.endswith(suffix))
    required = [f for f in expected if not f.nullable]
    got = list(schema)[: len(required)]
    if [f.name for f in got] != [f.name for f in required] or any(
        _kind(a.type) != _kind(b.type) for a, b in zip(got, required, strict=True)
    ):
        raise CorruptFileError(
            f"{label}: damaged (its columns are "
            f"{', '.join(f'{f.name} {f.type}' for f in list(schema)[:8])}, not "
            f"{', '.join(f'{f.name} {f.type}' for f in required)})"
        )
    return expected


#: Decoded, a table holds at most this many times its bytes on disk (plus 1 MiB): its
#: values are ids, sizes, paths and Bloom filters, none of which compress that well. A
#: table that says (or turns out) otherwise is a decompression bomb, refused before it
#: is decoded (or, for repeated dictionary values, before they are expanded).
MAX_EXPANSION = 64


def _limit(size: int) -> int:
    return MAX_EXPANSION * size + (1 << 20)


def _shape(pf: pq.ParquetFile, rel: str, label: str, size: int, max_rows: int | None) -> None:
    """Before any value is decoded: only the columns of the table's kind, each of its
    kind (no nested ones); no more rows than the manifest says; no more bytes decoded
    than :data:`MAX_EXPANSION` times the file's, as its footer declares them."""
    expected = {f.name: f for f in _expected(pf.schema_arrow, rel, label)}
    for f in pf.schema_arrow:
        want = expected.get(f.name)
        if want is None or _kind(f.type) != _kind(want.type):
            raise CorruptFileError(f"{label}: damaged (unexpected column {f.name!r}: {f.type})")
    meta = pf.metadata
    if max_rows is not None and meta.num_rows > max_rows:
        raise CorruptFileError(
            f"{label}: damaged ({meta.num_rows:,} rows where the manifest says {max_rows:,})"
        )
    declared = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    if declared > _limit(size):
        raise CorruptFileError(
            f"{label}: damaged ({declared:,} bytes decoded from {size:,} on disk; refused)"
        )


def _read(pf: pq.ParquetFile, groups: list[int] | None, size: int, label: str) -> pa.Table:
    """The row groups ``groups`` (None: all) of ``pf``, decoded a few rows at a time and
    refused as soon as they exceed the limit for a file of ``size`` bytes: a value
    repeated by its encoding (a dictionary, a shared prefix) is not in the sizes the
    footer declares."""
    limit, total, batches = _limit(size), 0, []
    for batch in pf.iter_batches(batch_size=_BATCH_ROWS, row_groups=groups, use_threads=False):
        total += batch.nbytes
        if total > limit:
            raise CorruptFileError(
                f"{label}: damaged (more than {limit:,} bytes decoded from {size:,} on disk; "
                "refused)"
            )
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=pf.schema_arrow)


#: Rows decoded at a time (a table's values are at most a filter, 128 MiB, each).
_BATCH_ROWS = 256


def _kind(t: pa.DataType) -> str:
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "binary"
    return str(t)


class CheckedParquetFile(pq.ParquetFile):
    """A table's row groups, each checked against its checksum as it is read."""

    def __init__(self, source, rel: str, label: str, max_rows: int | None = None) -> None:
        super().__init__(source)
        self._rel, self._label = rel, label
        self._size = source.size()
        _shape(self, rel, label, self._size, max_rows)
        meta = self.metadata
        self._sums = integrity.stored_checksums(meta.metadata, meta.num_row_groups, label)

    def read_row_groups(
        self, row_groups, columns=None, use_threads=True, use_pandas_metadata=False
    ):
        tables = []
        for g in row_groups:
            try:
                t = _read(self, [g], self._size, self._label)
            except (OSError, pa.ArrowException, ValueError) as e:
                raise CorruptFileError(
                    f"{self._label}: unreadable index table: {first_line(e)}"
                ) from None
            if self._sums is not None:
                integrity.check_table(t, self._rel, g, self._sums[g], self._label)
            tables.append(conform(t, self._rel, self._label))
        if not tables:
            return self.schema_arrow.empty_table()
        table = pa.concat_tables(tables, promote_options="permissive")
        return table.select(columns) if columns is not None else table


__all__ = ["TABLE_GROUP_ROWS", "CheckedParquetFile", "conform", "decode", "encode", "lazy"]
