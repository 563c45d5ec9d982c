"""Write Parquet bloom filters: add them to existing files, or write new files with them.

This module owns the *writing* side of bloomskip's Parquet support:

* :func:`add_bloom_filters` adds Split Block Bloom Filters to an existing file **without
  re-encoding a single page**. The file is rewritten as::

      [the bytes before the old footer, copied unchanged]
      [BloomFilterHeader + bitset] ... one per new filter
      [the old FileMetaData, with ColumnMetaData.bloom_filter_offset/length set]
      [4-byte little-endian footer length] PAR1

  The footer goes through bloomskip's byte-preserving Thrift codec
  (:mod:`bloomskip.parquet.thrift`), so every field of the old footer - known or not - is
  written back byte for byte; only fields 14 (``bloom_filter_offset``, i64) and 15
  (``bloom_filter_length``, i32, header + bitset) of the chosen ``ColumnMetaData`` change.
* :func:`write_table` writes a table with ``pyarrow.parquet.write_table`` and then adds
  the filters with the same code, after the last row group.

Each filter follows the Parquet spec (parquet-format ``BloomFilter.md``) and is what
arrow-rs, parquet-java, Arrow C++ and DuckDB would build for the same values: the values
are hashed as the file *stores* them (its physical type, FLBA length and time unit, from
:func:`bloomskip.parquet.schema.column_type`, never from the Arrow type pyarrow reads
back), the exact number of distinct hashes sizes the bitset with the "parquet" policy
(``bits = -8 ndv / ln(1 - fpp^(1/8))``, rounded up to a power of two, 32 B to 128 MiB),
and the header is the canonical one (:func:`bloomskip.parquet.bloom.encode_header`).
With ``ndv="auto"`` (or a number) the distinct values are not counted: the filter is
built at the size for that many (``"auto"``: the largest row group's row count, as
arrow-rs defaults to its row group size) and folded to the target FPP, which is what
arrow-rs and Arrow C++ write, byte for byte (:func:`bloomskip.sbbf.build_folded`).

Encrypted files (Parquet modular encryption, with ``decryption=`` giving the keys): the
filter of an encrypted column is written as two AES-GCM modules with the column's key -
the header (module type 8) and the bitset (type 9), fresh random nonces, AADs with the
file AAD and the chunk's row group and column ordinals - and its ColumnMetaData is sealed
again (field 9, module type 1) where the file keeps it encrypted; plaintext columns get
plaintext filters. The footer is encrypted again (``PARE``: the FileCryptoMetaData is
copied, the footer module gets a fresh nonce) or signed again (plaintext footer), so the
footer key is needed; the file AAD is unchanged, so every existing module stays valid.
The values are read through :mod:`bloomskip.parquet.plainview` (decrypted pages).

Files are replaced atomically (:mod:`bloomskip.replace`): the new file is written to a
temporary file in the same directory - the pages copied on a thread of their own while
the chunks are read and the filters written after them - fsynced, and renamed over the
target only if the target is still the file that was read (same inode, size and mtime;
else :class:`~bloomskip.errors.FileChangedError`). If anything fails, or SIGINT, SIGTERM
or SIGHUP arrives, the target is untouched and the temporary file removed.

Each chunk's filter is built in one pass over its hashes: a hash set counts the exact
distinct count (:func:`bloomskip.sbbf.build_filter`), which sizes the bitset, then every
hash is inserted - the same filter, bit for bit, as sorting and counting gave.
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import struct
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any, BinaryIO, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from bloomskip._json import attributes
from bloomskip.errors import (
    InvalidParameterError,
)
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet import thrift
from bloomskip.parquet.bloom import encode_header, encrypted_filter_modules
from bloomskip.parquet.crypto import Decryption
from bloomskip.parquet.footer import ENCRYPTED_MAGIC, MAGIC, Footer, read_footer
from bloomskip.parquet.values import DecryptedReader, ValueReader, chunk_hashes
from bloomskip.parquet.writeplan import (
    Job,
    SkippedChunk,
    check_ndv,
    plan_chunks,
    plan_columns,
    start_ndv,
)
from bloomskip.progress import bar as progress_bar
from bloomskip.replace import (
    BackgroundCopy,
    FileIdentity,
    atomic_path,
    require_unchanged,
    same_file,
)
from bloomskip.reports import AddReport, skip_lines
from bloomskip.sbbf import Sbbf, build_filter, build_folded
from bloomskip.sbbf.sizing import SizingPolicy, num_bytes_for

#: ColumnMetaData field ids (parquet.thrift).
BLOOM_FILTER_OFFSET = 14
BLOOM_FILTER_LENGTH = 15


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AddedFilter:
    """One filter written for one column chunk."""

    row_group: int
    column: str
    ndv: int  # distinct hashes inserted (exact; estimated from the fill when folded)
    num_bytes: int  # bitset size
    offset: int  # where its header starts in the new file
    length: int  # header + bitset (what bloom_filter_length says)
    replaced: bool = False  # the chunk had a filter before (replace=True)
    folded_from: int | None = None  # bitset size built before folding (ndv="auto" or N)


@dataclass
class AddResult(AddReport):
    """What :func:`add_bloom_filters` or :func:`write_table` did."""

    added: list[AddedFilter] = field(default_factory=list)
    skipped: list[SkippedChunk] = field(default_factory=list)

    @property
    def filters_added(self) -> dict[str, int]:
        """Filters written per column, in column order."""
        return dict(Counter(f.column for f in self.added))

    #: A JSON-ready summary (what ``bloomskip add-bloom --json`` prints).
    to_dict = partialmethod(
        attributes,
        "source path rewritten rows row_groups filters_added filter_bytes bytes_added "
        "seconds:6 added skipped",
    )

    def to_text(self) -> str:
        """What ``bloomskip add-bloom`` prints: a summary, filters per column, skips."""
        where = self.where()
        lines = [
            f"{self.source}: {len(self.added)} bloom filters added ({self.filter_bytes:,} B, "
            f"file +{self.bytes_added:,} B) in {self.seconds:.2f} s, {where}"
        ]
        if self.added:
            lines.append(
                f"  {'column':24} {'filters':>7} {'bytes':>12} "
                f"{'distinct values per row group':>30}"
            )
        for column, count in self.filters_added.items():
            mine = [f for f in self.added if f.column == column]
            ndvs = sorted(f.ndv for f in mine)
            spread = f"{ndvs[0]:,}" if ndvs[0] == ndvs[-1] else f"{ndvs[0]:,}..{ndvs[-1]:,}"
            if any(f.folded_from is not None for f in mine):
                spread = "~" + spread  # estimated from the fill, not counted
            size = sum(f.length for f in mine)
            lines.append(f"  {column[:24]:24} {count:>7} {size:>12,} {spread:>30}")
        lines += skip_lines(((s.column, s.reason, s.row_group) for s in self.skipped), "row group")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- public API


def add_bloom_filters(
    src: str | os.PathLike,
    dst: str | os.PathLike | None = None,
    columns: Sequence[str] | None = None,
    fpp: float = 0.01,
    replace: bool = False,
    progress: bool = False,
    *,
    policy: SizingPolicy = "parquet",
    ndv: int | Literal["auto"] | None = None,
    decryption: Decryption | None = None,
) -> AddResult:
    """Add bloom filters to the Parquet file ``src`` without re-encoding its pages.

    ``dst=None`` rewrites ``src`` in place (atomically: temporary file, fsync, rename);
    otherwise ``dst`` is written and ``src`` is only read. The bytes of ``src`` before its
    footer are copied unchanged, one filter per (row group, column) is appended after
    them, then the old footer with ``bloom_filter_offset`` and ``bloom_filter_length``
    set for each new filter.

    ``columns`` names leaf columns as :meth:`Footer.leaf` does (``"user_id"``,
    ``"address.city"``, ``"tags.list.element"``); ``None`` means every column a filter
    can serve (others are reported in ``skipped``). A named column that cannot have a
    filter raises :class:`UnsupportedTypeError`: BOOLEAN (no reader uses boolean
    filters), BYTE_ARRAY decimals, FLOAT16 and INTERVAL. List and map leaves get every
    element's value. An unknown name raises :class:`InvalidParameterError` listing the
    columns.

    Each filter holds the hashes of the chunk's non-null values, encoded as the file
    stores them, and is sized for their exact distinct count at ``fpp`` (``policy``
    "parquet" as arrow-rs and parquet-java, or "putze" to always meet ``fpp``); an
    empty or all-null chunk gets the smallest filter (32 B). ``ndv="auto"`` or a number
    skips the count: each filter is built at the size for that many distinct values
    (``"auto"``: the row count of the file's largest row group) and folded down to
    ``fpp``, as arrow-rs and Arrow C++ write filters - byte-identical to theirs for the
    same starting NDV with ``policy="parquet"``; ``AddedFilter.ndv`` is then estimated.

    A chunk that already has a filter keeps it unless ``replace=True``; then it gets a
    new one and the old filter's bytes stay where they were, unreferenced (pages and
    anything else before the footer are never moved). Damaged files raise
    :class:`CorruptFileError` and nothing is written. If another writer replaces,
    modifies or deletes ``src`` meanwhile, :class:`FileChangedError` is raised and
    nothing is written over it; SIGINT, SIGTERM and SIGHUP remove the temporary file
    and raise :class:`Interrupted` (see :mod:`bloomskip.replace`). ``progress=True``
    shows a bar on stderr.

    Encrypted files need ``decryption`` with the footer key (the footer is encrypted or
    signed again) and the key of each encrypted column to index: a named column without
    its key raises :class:`MissingKeyError`, an unnamed one is skipped with the reason.
    Filters of encrypted columns are encrypted with the column's key.
    """
    started = time.perf_counter()
    num_bytes_for(1, fpp, policy)  # validate fpp and policy before touching anything
    check_ndv(ndv)
    src_name = os.fspath(src)
    in_place = dst is None or same_file(src_name, os.fspath(dst))
    target = os.path.realpath(src_name) if in_place else os.fspath(dst)  # type: ignore[arg-type]
    with open(src_name, "rb") as fh:
        identity = FileIdentity.of_file(fh)  # what must still be there when it is replaced
        footer = read_footer(fh, name=src_name, decryption=decryption)
        if footer.crypto is not None:
            footer.crypto.require_footer_key()  # to encrypt or sign the new footer
        cols, skipped = plan_columns(footer, columns)
        jobs, chunk_skips = plan_chunks(fh, footer, cols, replace)
        result = AddResult(
            source=src_name,
            path=src_name if in_place else target,
            skipped=skipped + chunk_skips,
            rows=footer.num_rows,
            row_groups=len(footer.row_groups),
        )
        if jobs or not in_place:
            with (
                atomic_path(
                    target, mode_from=src_name, expected=identity if in_place else None
                ) as tmp,
                open(tmp, "r+b") as out,
                # the pages are copied while the chunks are read and the filters written
                BackgroundCopy(fh, out, footer.footer_offset, src_name) as copy,
            ):
                out.seek(footer.footer_offset)
                result.added = _append_filters(
                    src_name,
                    footer,
                    jobs,
                    out,
                    fpp,
                    policy,
                    progress,
                    ndv=start_ndv(footer, ndv),
                    identity=identity,
                )
                copy.wait()
                result.bytes_added = out.tell() - footer.file_size
                require_unchanged(fh, identity, label=src_name)  # not written to meanwhile
            result.rewritten = True
    result.seconds = time.perf_counter() - started
    return result


def write_table(
    table: pa.Table,
    path: str | os.PathLike,
    bloom_filter_columns: Sequence[str] | None = None,
    fpp: float = 0.01,
    *,
    policy: SizingPolicy = "parquet",
    ndv: int | Literal["auto"] | None = None,
    progress: bool = False,
    **pyarrow_kwargs: Any,
) -> AddResult:
    """Write ``table`` to ``path`` as Parquet, with bloom filters sized to each row group.

    The data is written by ``pyarrow.parquet.write_table(table, ..., **pyarrow_kwargs)``
    (``row_group_size``, ``compression``, ``store_decimal_as_integer``... all apply) to a
    temporary file next to ``path``; bloomskip then adds one filter per row group for
    each of ``bloom_filter_columns`` (``None``: every column a filter can serve), with
    the same code as :func:`add_bloom_filters`, after the last row group and with offset
    and length set; finally the file is renamed to ``path`` atomically. pyarrow's own
    ``bloom_filter_options`` is refused: its filters would be sized from a guessed NDV.
    ``policy`` and ``ndv`` (exact count, ``"auto"`` or a number, then folded) are those
    of :func:`add_bloom_filters`.
    """
    started = time.perf_counter()
    if "bloom_filter_options" in pyarrow_kwargs:
        raise InvalidParameterError(
            "write_table builds the bloom filters itself: pass bloom_filter_columns and "
            "fpp, not pyarrow's bloom_filter_options"
        )
    num_bytes_for(1, fpp, policy)
    check_ndv(ndv)
    name = os.fspath(path)
    with atomic_path(name, mode_from=None) as tmp:
        pq.write_table(table, tmp, **pyarrow_kwargs)
        with open(tmp, "r+b") as fh:
            footer = read_footer(fh, name=name)
            cols, skipped = plan_columns(footer, bloom_filter_columns)
            jobs, chunk_skips = plan_chunks(fh, footer, cols, replace=False)
            # Our own temporary file: the filters overwrite its footer, which was parsed
            # above; pyarrow reads only the pages before it.
            fh.seek(footer.footer_offset)
            added = _append_filters(
                tmp, footer, jobs, fh, fpp, policy, progress, label=name,
                ndv=start_ndv(footer, ndv),
            )  # fmt: skip
            fh.truncate()
            size = fh.tell()
    return AddResult(
        source=name,
        path=name,
        added=added,
        skipped=skipped + chunk_skips,
        bytes_added=size - footer.file_size,
        rewritten=True,
        rows=footer.num_rows,
        row_groups=len(footer.row_groups),
        seconds=time.perf_counter() - started,
    )


# ----------------------------------------------------------------------------- filters


def _append_filters(
    path: str,
    footer: Footer,
    jobs: list[Job],
    out: BinaryIO,
    fpp: float,
    policy: SizingPolicy,
    progress: bool,
    *,
    label: str | None = None,
    ndv: int | None = None,
    identity: FileIdentity | None = None,
) -> list[AddedFilter]:
    """Write each job's filter at ``out``'s position, then the edited footer and tail.

    ``identity``: the file whose footer was read; every reader opened checks it.
    """
    int96 = any(j.column.spec.physical_type is PhysicalType.INT96 for j in jobs)
    # Chunks are read, hashed and built on a few threads (pyarrow and the kernels release
    # the GIL), each with its own view of the file, opened now - before write_table
    # overwrites its temporary file's footer - and written in order as they complete.
    workers = max(1, min(os.cpu_count() or 1, MAX_WORKERS, len(jobs)))
    readers: queue.SimpleQueue[ValueReader] = queue.SimpleQueue()
    opened: list[ValueReader] = []

    def build(job: Job) -> tuple[Sbbf, int, int | None]:
        reader = readers.get()
        try:
            hashes = chunk_hashes(reader, job.row_group, job.column)
        finally:
            readers.put(reader)
        if ndv is None:  # sized for the exact distinct count
            return (*build_filter(hashes, fpp, policy), None)
        return build_folded(hashes, fpp, ndv, policy)

    added: list[AddedFilter] = []
    try:
        for _ in range(workers if jobs else 0):
            if footer.crypto is not None:
                opened.append(
                    DecryptedReader(path, label or footer.path, footer, identity=identity)
                )
            else:
                opened.append(
                    ValueReader(path, label or footer.path, int96=int96, identity=identity)
                )
            readers.put(opened[-1])
        with (
            progress_bar(
                len(jobs),
                os.path.basename(label or footer.path),
                "chunk",
                show=progress,
                dynamic_ncols=True,
            ) as bar,
            ThreadPoolExecutor(workers, thread_name_prefix="bloomskip-add") as pool,
        ):
            for job, (f, count, folded_from) in _in_order(pool, build, jobs, window=2 * workers):
                offset = out.tell()
                chunk = footer.row_groups[job.row_group].columns[job.column.leaf.index]
                if chunk.crypto is not None:  # encrypted with the column's key
                    modules = encrypted_filter_modules(chunk.crypto, f)
                    out.write(modules)
                    length = len(modules)
                    chunk.crypto.seal_metadata(
                        {
                            BLOOM_FILTER_OFFSET: (thrift.I64, offset),
                            BLOOM_FILTER_LENGTH: (thrift.I32, length),
                        }
                    )
                else:
                    length = _write_filter(out, f)
                    meta = chunk.meta
                    assert meta is not None  # chunks without metadata never become jobs
                    meta.set(BLOOM_FILTER_OFFSET, thrift.I64, offset)
                    meta.set(BLOOM_FILTER_LENGTH, thrift.I32, length)
                added.append(
                    AddedFilter(
                        job.row_group,
                        job.column.leaf.name,
                        count,
                        f.num_bytes,
                        offset,
                        length,
                        job.replaced,
                        folded_from,
                    )
                )
                bar.update(1)
    finally:
        for r in opened:
            r.close()
    _write_footer(out, footer)
    return added


def _in_order(pool: ThreadPoolExecutor, fn, items: list, *, window: int):
    """``(item, fn(item))`` in the order of ``items``, with at most ``window`` running
    ahead (so memory stays bounded by a few chunks); the first error is raised."""
    pending: collections.deque = collections.deque()
    it = iter(items)
    for item in itertools.islice(it, window):
        pending.append((item, pool.submit(fn, item)))
    try:
        while pending:
            item, fut = pending.popleft()
            result = fut.result()
            nxt = next(it, _END)
            if nxt is not _END:
                pending.append((nxt, pool.submit(fn, nxt)))
            yield item, result
    finally:
        for _, fut in pending:
            fut.cancel()


_END = object()
#: Threads that read and hash column chunks at once.
MAX_WORKERS = 4


def _write_filter(out: BinaryIO, f: Sbbf) -> int:
    """Write BloomFilterHeader + bitset; return their length."""
    header = encode_header(f.num_bytes)
    out.write(header)
    out.write(f.bitset)
    return len(header) + f.num_bytes


def _write_footer(out: BinaryIO, footer: Footer) -> None:
    """The (edited) footer and the tail: plaintext, signed plaintext or encrypted."""
    raw = thrift.encode_struct(footer.metadata)
    crypto = footer.crypto
    if crypto is None:
        tail, magic = raw, MAGIC
    elif crypto.encrypted_footer:
        assert footer.crypto_metadata is not None
        tail, magic = footer.crypto_metadata + crypto.encrypt_footer(raw), ENCRYPTED_MAGIC
    else:
        tail, magic = raw + crypto.sign_footer(raw), MAGIC
    out.write(tail)
    out.write(struct.pack("<I", len(tail)))
    out.write(magic)
