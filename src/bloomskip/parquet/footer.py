"""Parquet file layout: magic, footer, schema leaves and column chunks, from our own parse.

``read_footer`` reads ``FileMetaData`` with the byte-preserving Thrift codec
(:mod:`.thrift`) so that the footer can be edited and written back (bloom filter offsets)
without losing fields a newer writer added. It exposes what bloom filter work needs:
each leaf column's physical type, type length and logical type, and each column chunk's
codec, encodings, page offsets and bloom filter location.

Encrypted files (Parquet modular encryption) are read with a
:class:`~bloomskip.parquet.crypto.Decryption`: the encrypted footer (``PARE``) is
decrypted, a plaintext footer's signature verified, and each encrypted column chunk gets a
:class:`~bloomskip.parquet.crypto.ChunkCrypto` whose decrypted ColumnMetaData
:attr:`ColumnChunk.meta` returns - or None, with :attr:`ColumnChunk.locked` saying why,
when its key is missing. A plaintext footer can be read without keys: its plaintext
columns stay usable.

Field ids follow ``parquet.thrift`` (apache/parquet-format).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from bloomskip.errors import CorruptFileError, MissingKeyError
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.aes import LENGTH_BYTES, SIGNATURE_LENGTH
from bloomskip.parquet.crypto import ChunkCrypto, Decryption, FileDecryptor
from bloomskip.parquet.thrift import STRUCT, List, Struct, decode_struct

MAGIC = b"PAR1"
ENCRYPTED_MAGIC = b"PARE"
#: Largest footer we agree to read (a footer of 4 GiB is a hostile file, not a big one).
MAX_FOOTER_BYTES = 512 * 1024 * 1024

_PHYSICAL = [
    PhysicalType.BOOLEAN,
    PhysicalType.INT32,
    PhysicalType.INT64,
    PhysicalType.INT96,
    PhysicalType.FLOAT,
    PhysicalType.DOUBLE,
    PhysicalType.BYTE_ARRAY,
    PhysicalType.FIXED_LEN_BYTE_ARRAY,
]
CODECS = ["UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"]


@dataclass(frozen=True)
class LeafColumn:
    """A leaf of the schema: one column chunk per row group."""

    index: int
    path: tuple[str, ...]
    physical_type: PhysicalType | None  # None for a type code this reader does not know
    type_length: int | None
    element: Struct  # the SchemaElement, for logical/converted type, scale, precision
    #: the leaf or one of its ancestors is REPEATED (a list element, a map key or value)
    repeated: bool = False
    #: the leaf and all its ancestors are REQUIRED, so it is never null
    required: bool = False

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class ColumnChunk:
    row_group: int
    column: int
    chunk: Struct  # the ColumnChunk struct (decoded on first use)
    #: set for the encrypted columns of an encrypted file
    crypto: ChunkCrypto | None = None

    @property
    def meta(self) -> Struct | None:
        """ColumnMetaData (decrypted for an encrypted column); None when absent or when
        the column's key is missing (:attr:`locked` says so)."""
        if self.crypto is not None:
            return self.crypto.metadata()
        md = self.chunk.get(3)
        return md if isinstance(md, Struct) else None

    @property
    def locked(self) -> str | None:
        """Why this encrypted chunk cannot be read (no key), or None."""
        return None if self.crypto is None else self.crypto.locked

    def _get(self, fid: int) -> int | None:
        """An integer field of ColumnMetaData; None if absent or not an integer."""
        return _int(None if self.meta is None else self.meta.get(fid))

    @property
    def codec(self) -> str:
        c = self._get(4)
        return CODECS[c] if isinstance(c, int) and 0 <= c < len(CODECS) else f"codec {c}"

    @property
    def num_values(self) -> int | None:
        return self._get(5)

    @property
    def bloom_filter_offset(self) -> int | None:
        return self._get(14)

    @property
    def bloom_filter_length(self) -> int | None:
        return self._get(15)

    @property
    def data_page_offset(self) -> int | None:
        return self._get(9)

    @property
    def dictionary_page_offset(self) -> int | None:
        return self._get(11)

    @property
    def total_compressed_size(self) -> int | None:
        return self._get(7)


@dataclass(frozen=True)
class RowGroup:
    index: int
    num_rows: int
    first_row: int
    columns: list[ColumnChunk]


class LazyRowGroups(Sequence[RowGroup]):
    """The row groups of a footer whose structure was already validated (by the compiled
    reader of :mod:`.chunks`), built from its FileMetaData on first use."""

    def __init__(self, meta: Struct, leaves: list[LeafColumn], label: str) -> None:
        self._args: tuple[Struct, list[LeafColumn], str] | None = (meta, leaves, label)
        self._items: list[RowGroup] = []

    def _all(self) -> list[RowGroup]:
        if self._args is not None:
            self._items = _row_groups(*self._args)
            self._args = None
        return self._items

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __iter__(self) -> Iterator[RowGroup]:
        return iter(self._all())


@dataclass
class Footer:
    """The parsed footer of one Parquet file."""

    path: str
    file_size: int
    footer_offset: int  # where FileMetaData starts
    footer_length: int
    metadata: Struct
    leaves: list[LeafColumn]
    row_groups: Sequence[RowGroup]
    #: the file's encryption state (None for a plaintext file)
    crypto: FileDecryptor | None = None
    #: FileCryptoMetaData of an encrypted footer (written back unchanged)
    crypto_metadata: bytes | None = None

    @property
    def encryption(self) -> str:
        """ "none", "encrypted footer" or "plaintext footer"."""
        if self.crypto is None:
            return "none"
        return "encrypted footer" if self.crypto.encrypted_footer else "plaintext footer"

    @property
    def num_rows(self) -> int:
        return _int(self.metadata.get(3)) or 0

    @property
    def created_by(self) -> str | None:
        v = self.metadata.get(6)
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else None

    def leaf(self, name: str) -> LeafColumn:
        for leaf in self.leaves:
            if leaf.name == name or (len(leaf.path) == 1 and leaf.path[0] == name):
                return leaf
        names = ", ".join(leaf.name for leaf in self.leaves[:20])
        raise KeyError(f"{self.path}: no column {name!r}; columns are: {names}")


def read_footer(
    source: str | os.PathLike | BinaryIO,
    *,
    name: str | None = None,
    decryption: Decryption | None = None,
) -> Footer:
    """Parse the footer of a Parquet file (a path or a binary file object).

    An encrypted footer (``PARE``) needs ``decryption`` with the footer key (or a key
    retriever that finds it): :class:`~bloomskip.errors.MissingKeyError` otherwise, and
    :class:`~bloomskip.errors.DecryptionError` for a wrong key or a changed footer.
    """
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as fh:
            return read_footer(fh, name=name or os.fspath(source), decryption=decryption)
    fh = source
    label = name or getattr(fh, "name", "<parquet>")
    size, start, raw, encrypted = read_tail(fh, label)
    footer_len = size - 8 - start
    crypto: FileDecryptor | None = None
    crypto_metadata: bytes | None = None
    if encrypted:
        fcmd, end = decode_struct(raw, name=f"{label} FileCryptoMetaData")
        key_metadata = fcmd.get(2)
        crypto = FileDecryptor(
            decryption,
            fcmd.get(1),
            key_metadata if isinstance(key_metadata, bytes) else None,
            encrypted_footer=True,
            label=label,
        )
        if crypto.footer_key() is None:
            raise MissingKeyError(
                f"{label}: the footer is encrypted; pass decryption= with its key "
                f"({crypto.footer_key_reason})"
            )
        crypto_metadata = raw[:end]
        if end + LENGTH_BYTES > len(raw):
            raise CorruptFileError(f"{label}: encrypted footer cut short")
        (n,) = struct.unpack_from("<I", raw, end)
        if end + LENGTH_BYTES + n != len(raw):
            raise CorruptFileError(
                f"{label}: encrypted footer of {n} B does not fill the {len(raw) - end} B left"
            )
        plain = crypto.decrypt_footer(raw[end + LENGTH_BYTES :])
        # parquet-java pads the encrypted footer with zeros after the struct: ignored.
        meta, _ = decode_struct(plain, name=f"{label} footer")
    else:
        meta, used = decode_struct(raw, name=f"{label} footer")
        if meta.get(8) is not None:  # encryption_algorithm: plaintext footer, signed
            if used + SIGNATURE_LENGTH != len(raw):
                raise CorruptFileError(
                    f"{label}: a signed plaintext footer ends with a {SIGNATURE_LENGTH}-byte "
                    f"signature, but {len(raw) - used} B follow it"
                )
            key_metadata = meta.get(9)
            crypto = FileDecryptor(
                decryption,
                meta.get(8),
                key_metadata if isinstance(key_metadata, bytes) else None,
                encrypted_footer=False,
                label=label,
            )
            crypto.verify_signature(raw[:used], raw[used:])
    leaves = _leaves(meta, label)
    groups = _row_groups(meta, leaves, label, crypto)
    return Footer(label, size, start, footer_len, meta, leaves, groups, crypto, crypto_metadata)


def read_tail(fh: BinaryIO, label: str) -> tuple[int, int, bytes, bool]:
    """The footer bytes of a Parquet file, checked against its size and magic:
    ``(file size, footer offset, footer bytes, whether the footer is encrypted)``."""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    if size < 12:
        raise CorruptFileError(f"{label}: {size} bytes is too small for a Parquet file")
    fh.seek(0)
    head = fh.read(4)
    fh.seek(size - 8)
    tail = fh.read(8)
    (footer_len,) = struct.unpack("<I", tail[:4])
    encrypted = tail[4:] == ENCRYPTED_MAGIC
    if (head, tail[4:]) not in ((MAGIC, MAGIC), (ENCRYPTED_MAGIC, ENCRYPTED_MAGIC)):
        if head in (MAGIC, ENCRYPTED_MAGIC) and tail[4:] not in (MAGIC, ENCRYPTED_MAGIC):
            raise CorruptFileError(
                f"{label}: not a Parquet file: it starts as one but ends without its footer "
                f"(last bytes {tail[4:]!r}): cut short, damaged, or still being written"
            )
        raise CorruptFileError(f"{label}: not a Parquet file (magic {head!r} / {tail[4:]!r})")
    if footer_len > size - 12 or footer_len > MAX_FOOTER_BYTES:
        raise CorruptFileError(
            f"{label}: footer length {footer_len} does not fit in a file of {size} bytes"
        )
    start = size - 8 - footer_len
    fh.seek(start)
    return size, start, fh.read(footer_len), encrypted


def _int(value) -> int | None:
    """``value`` if it is an integer (not a bool), else None: hostile footers can put any
    Thrift type in a field."""
    return value if type(value) is int else None


def _structs(value, what: str, label: str) -> list[Struct]:
    """The elements of a list-of-structs field ([] if absent); anything else is corrupt."""
    if value is None:
        return []
    if not isinstance(value, List) or value.elem_type != STRUCT:
        raise CorruptFileError(f"{label}: {what} is not a list of structs")
    return value.items


def _leaves(meta: Struct, label: str) -> list[LeafColumn]:
    return leaves_of(meta.get(2), label)


def leaves_of(schema, label: str) -> list[LeafColumn]:
    """The leaf columns of a FileMetaData's ``schema`` field (its decoded value)."""
    elements = _structs(schema, "the schema", label)
    if not elements:
        raise CorruptFileError(f"{label}: footer has no schema")
    leaves: list[LeafColumn] = []
    # Depth-first walk; the first element is the root. Iterative, so hostile
    # num_children values cannot recurse deeply or loop. Each stack entry carries the
    # group's path, its children left to read, and whether the group is repeated /
    # required all the way up.
    stack: list[tuple[tuple[str, ...], int, bool, bool]] = [
        ((), _num_children(elements[0]), False, True)
    ]
    i = 1
    while stack and i < len(elements):
        path, remaining, repeated, required = stack.pop()
        if remaining <= 0:
            continue
        stack.append((path, remaining - 1, repeated, required))
        el = elements[i]
        i += 1
        nm = el.get(4)
        name = nm.decode("utf-8", "replace") if isinstance(nm, bytes) else f"_{i}"
        rep = el.get(3)  # FieldRepetitionType: 0 REQUIRED, 1 OPTIONAL, 2 REPEATED
        is_repeated = repeated or rep == 2
        is_required = required and rep == 0
        children = _num_children(el)
        if children > 0:
            stack.append(((*path, name), children, is_repeated, is_required))
        else:
            code = el.get(1)
            ptype = _PHYSICAL[code] if isinstance(code, int) and 0 <= code < 8 else None
            leaves.append(
                LeafColumn(
                    len(leaves), (*path, name), ptype, _int(el.get(2)), el, is_repeated, is_required
                )
            )
    return leaves


def _num_children(el: Struct) -> int:
    n = el.get(5)
    return n if isinstance(n, int) and n > 0 else 0


def _row_groups(
    meta: Struct, leaves: list[LeafColumn], label: str, crypto: FileDecryptor | None = None
) -> list[RowGroup]:
    out: list[RowGroup] = []
    first = 0
    for r, rg in enumerate(_structs(meta.get(4), "row_groups", label)):
        num_rows = _int(rg.get(3))
        if num_rows is None or num_rows < 0:
            raise CorruptFileError(f"{label}: row group {r} has no valid num_rows")
        cols = _structs(rg.get(1), f"row group {r} columns", label)
        if crypto is None:
            chunks = [ColumnChunk(r, c, cc) for c, cc in enumerate(cols)]
        else:
            # AADs use RowGroup.ordinal when the writer set it (it is authenticated with
            # the footer), else the row group's position, as parquet-java reads it.
            ordinal = _int(rg.get(7))
            ordinal = r if ordinal is None or ordinal < 0 else ordinal
            chunks = []
            for c, cc in enumerate(cols):
                name = leaves[c].name if c < len(leaves) else f"#{c}"
                enc = None if cc.get(8) is None else crypto.chunk(cc, ordinal, c, name)
                chunks.append(ColumnChunk(r, c, cc, enc))
        if len(chunks) != len(leaves):
            raise CorruptFileError(
                f"{label}: row group {r} has {len(chunks)} column chunks for {len(leaves)} columns"
            )
        out.append(RowGroup(r, num_rows, first, chunks))
        first += num_rows
    return out
