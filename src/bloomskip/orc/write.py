"""Add ORC bloom filters to an existing ORC file without re-encoding its data.

:func:`add_bloom_filters` gives chosen columns the ``BLOOM_FILTER_UTF8`` streams ORC
Java writes for ``orc.bloom.filter.columns`` (one filter per row group, sized for the
row index stride at ``fpp``: :mod:`.build`). The file is rewritten as::

    [the bytes before the first stripe, copied]
    per stripe:
      [its index streams, copied byte for byte] [the new BLOOM_FILTER_UTF8 streams]
      [its data streams, copied byte for byte as one block]
      [its stripe footer: the stream list and ColumnEncoding.bloom_encoding updated]
    [Metadata (stripe statistics), copied]
    [Footer: stripe offsets and lengths, content length] [PostScript] [its length]

Nothing else changes (:mod:`.rewrite` edits the messages through protobuf, keeping every
field it does not name): the writer, versions, statistics, row indexes and data stay
what they were. Index streams, stripe footers and the Footer are compressed with the
file's codec (:func:`~bloomskip.orc.compression.compress`). Bytes between stripes
(ORC Java's HDFS block padding) are dropped.

ORC Java's readers use the new filters in every file whose writer they read: they ask
for the ``bloom_encoding`` of ORC-135, which the new streams have; ORC C++ reads only
``BLOOM_FILTER_UTF8`` streams. Both ignore every filter of ORC C++ files from 1.6.0 to
1.6.11 or 1.7.0 or without a software version (ORC-1024), which are refused here.

Files are replaced atomically (:mod:`bloomskip.replace`): the new file is written next
to the target, fsynced, and renamed over it only if the target is still the file that
was read; on any error or SIGINT/SIGTERM/SIGHUP the target is untouched.
"""

from __future__ import annotations

import collections
import itertools
import os
import queue
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from bloomskip._json import attributes
from bloomskip.errors import (
    InvalidParameterError,
    UnsupportedFileError,
    UnsupportedTypeError,
)
from bloomskip.orc.build import BuiltIndex, StripeReader, bloom_index, tree_paths
from bloomskip.orc.compression import compress
from bloomskip.orc.file import OrcFile, read_orc
from bloomskip.orc.filter import OrcBloomFilter
from bloomskip.orc.rewrite import StripeLayout, file_tail, read_layout, read_tail
from bloomskip.orc.rewrite import stripe_footer as new_stripe_footer
from bloomskip.orc.schema import OrcColumn, schema_of
from bloomskip.orc.stripes import BLOOM_FILTER_UTF8, ROW_INDEX
from bloomskip.orc.trust import readers_ignore_filters
from bloomskip.orc.types import BOOLEAN, KIND_NAMES, LIST, MAP, STRUCT, UNION
from bloomskip.progress import bar as progress_bar
from bloomskip.replace import (
    FileIdentity,
    atomic_path,
    copy_range,
    open_unchanged,
    require_unchanged,
    same_file,
)
from bloomskip.reports import AddReport, skip_lines

#: ORC's default false-positive probability before ORC 1.9 (``orc.bloom.filter.fpp``),
#: still pyarrow's and pyorc's.
DEFAULT_FPP = 0.05

_BOOLEAN_REFUSAL = (
    "BOOLEAN columns get no bloom filter: ORC Java adds nothing to them and no ORC "
    "reader tests them"
)


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class AddedIndex:
    """One BLOOM_FILTER_UTF8 stream written: a column's filters in one stripe."""

    stripe: int
    column: str
    row_groups: int  # filters in the stream, one per row group
    num_bits: int  # of each filter
    num_hash_functions: int
    offset: int  # where the stream starts in the new file
    length: int  # its bytes on disk (compressed as the file is)
    replaced: bool = False  # the stripe had a BLOOM_FILTER_UTF8 stream for the column


@dataclass(frozen=True)
class SkippedColumn:
    """A column (in one stripe, or with ``stripe=None`` in all) left without new filters."""

    stripe: int | None
    column: str
    reason: str


@dataclass
class AddResult(AddReport):
    """What :func:`add_bloom_filters` did."""

    added: list[AddedIndex] = field(default_factory=list)
    skipped: list[SkippedColumn] = field(default_factory=list)
    stripes: int = 0

    @property
    def filters_added(self) -> dict[str, int]:
        """Row-group filters written per column, in column order."""
        out: Counter[str] = Counter()
        for a in self.added:
            out[a.column] += a.row_groups
        return dict(out)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``bloomskip add-bloom --json`` prints for ORC)."""
        return {"format": "orc"} | attributes(
            self,
            "source path rewritten rows stripes row_groups filters_added filter_bytes "
            "bytes_added seconds:6 added skipped",
        )

    def to_text(self) -> str:
        """What ``bloomskip add-bloom`` prints: a summary, streams per column, skips."""
        where = self.where()
        count = sum(self.filters_added.values())
        lines = [
            f"{self.source}: {count} bloom filters added in {len(self.added)} "
            f"stream{'' if len(self.added) == 1 else 's'} "
            f"({self.filter_bytes:,} B, file +{self.bytes_added:,} B) in {self.seconds:.2f} s, "
            f"{where}"
        ]
        if self.added:
            lines.append(f"  {'column':24} {'filters':>7} {'bytes':>12} {'bits':>12} {'k':>3}")
        for column, filters in self.filters_added.items():
            mine = [a for a in self.added if a.column == column]
            size = sum(a.length for a in mine)
            bits, k = mine[0].num_bits, mine[0].num_hash_functions
            lines.append(f"  {column[:24]:24} {filters:>7} {size:>12,} {bits:>12,} {k:>3}")
        lines += skip_lines(((s.column, s.reason, s.stripe) for s in self.skipped), "stripe")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- public API


def add_bloom_filters(
    src: str | os.PathLike,
    dst: str | os.PathLike | None = None,
    columns: Sequence[str] | None = None,
    fpp: float = DEFAULT_FPP,
    replace: bool = False,
    progress: bool = False,
) -> AddResult:
    """Add bloom filters to the ORC file ``src`` without re-encoding its data.

    ``dst=None`` rewrites ``src`` in place (atomically: temporary file, fsync, rename);
    otherwise ``dst`` is written and ``src`` is only read. Each stripe of each chosen
    column gets a ``BLOOM_FILTER_UTF8`` stream with one filter per row group, the
    filter ORC Java writes for it: sized for ``row_index_stride`` entries at ``fpp``
    (ORC's formula; :data:`DEFAULT_FPP` 0.05 as pyarrow, pyorc and ORC Java before 1.9)
    and holding the row group's non-null values as ORC Java hashes them. The data
    streams are copied byte for byte.

    ``columns`` names columns as :meth:`OrcFile.column` does (dotted, ``"a.b"``);
    ``None`` means every column a filter can serve (the others are reported in
    ``skipped``). A named column that cannot have one raises
    :class:`UnsupportedTypeError`: BOOLEAN, lists, maps, unions and structs, columns
    inside a list, map or union, types bloomskip cannot hash as ORC's writers do. An
    unknown name raises :class:`InvalidParameterError` listing the columns.

    A stripe whose column already has a BLOOM_FILTER_UTF8 stream keeps it unless
    ``replace=True``; then that stream is dropped and a new one written (legacy
    BLOOM_FILTER streams are kept: readers prefer the new one). Files without a row
    index (``row_index_stride`` 0), encrypted files and ORC C++ files whose filters ORC's
    readers ignore (ORC-1024) raise :class:`UnsupportedFileError`; damaged files
    :class:`CorruptFileError`; nothing is written then. If another writer replaces,
    modifies or deletes ``src`` meanwhile, :class:`FileChangedError` is raised and nothing
    is written over it; SIGINT, SIGTERM and SIGHUP remove the temporary file and raise
    :class:`Interrupted` (see :mod:`bloomskip.replace`). ``progress=True`` shows a bar.
    """
    started = time.perf_counter()
    _check_fpp(fpp)
    src_name = os.fspath(src)
    in_place = dst is None or same_file(src_name, os.fspath(dst))
    target = os.path.realpath(src_name) if in_place else os.fspath(dst)  # type: ignore[arg-type]
    with open(src_name, "rb") as fh:
        identity = FileIdentity.of_file(fh)  # what must still be there when it is replaced
        orc = read_orc(fh, name=src_name)
        plan = _plan(fh, orc, columns, replace, fpp)
        result = AddResult(
            source=src_name,
            path=src_name if in_place else target,
            skipped=plan.skipped,
            rows=orc.num_rows,
            stripes=len(orc.stripes),
            row_groups=sum(orc.num_row_groups(s.index) for s in orc.stripes),
        )
        if plan.jobs or not in_place:
            with (
                atomic_path(
                    target, mode_from=src_name, expected=identity if in_place else None
                ) as tmp,
                open(tmp, "r+b", buffering=0) as out,
            ):
                if plan.jobs:
                    result.added = _rewrite(fh, orc, plan, out, fpp, progress, identity)
                else:  # nothing to add: an identical copy
                    copy_range(fh, 0, out, 0, orc.file_size, src_name)
                    out.seek(orc.file_size)
                result.bytes_added = out.tell() - orc.file_size
                require_unchanged(fh, identity, label=src_name)  # not written to meanwhile
            result.rewritten = True
    result.seconds = time.perf_counter() - started
    return result


# ----------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Job:
    column: OrcColumn
    replaced: bool


@dataclass
class _Plan:
    infos: list[OrcColumn]
    layouts: dict[int, StripeLayout] = field(default_factory=dict)
    jobs: dict[int, list[_Job]] = field(default_factory=dict)  # by stripe
    skipped: list[SkippedColumn] = field(default_factory=list)


def _check_fpp(fpp: object) -> None:
    if isinstance(fpp, bool) or not isinstance(fpp, int | float) or not 0.0 < fpp < 1.0:
        raise InvalidParameterError(f"fpp must be a number strictly between 0 and 1, got {fpp!r}")


def _plan(
    fh: BinaryIO, orc: OrcFile, names: Sequence[str] | None, replace: bool, fpp: float
) -> _Plan:
    """The columns to index, the stripes' layouts and one job per (stripe, column)."""
    _, infos = schema_of(orc)
    plan = _Plan(infos)
    cols = _plan_columns(orc, infos, names, plan.skipped)
    if not cols or not orc.stripes:
        return plan
    if orc.row_index_stride == 0:
        raise UnsupportedFileError(
            f"{orc.name}: the file has no row index (row_index_stride 0), and ORC's readers "
            "use bloom filters only with one; bloomskip does not build row indexes - write "
            "the file with a row index stride (pyarrow: row_index_stride, ORC Java: "
            "orc.row.index.stride)"
        )
    if orc.encrypted:
        raise UnsupportedFileError(f"{orc.name}: encrypted ORC files are not rewritten")
    ignored = readers_ignore_filters(orc)
    if ignored is not None:
        raise UnsupportedFileError(f"{orc.name}: {ignored}, so new ones would not be either")
    try:
        OrcBloomFilter(orc.row_index_stride, fpp)  # ORC's sizing must give a filter
    except InvalidParameterError as e:
        raise InvalidParameterError(f"{orc.name}: {e}") from None
    for s in orc.stripes:
        if s.num_rows == 0:
            continue
        layout = read_layout(fh, orc, s.index)
        jobs = []
        for col in cols:
            kinds = layout.kinds(col.id)
            if ROW_INDEX not in kinds:
                plan.skipped.append(
                    SkippedColumn(s.index, col.name, "the stripe has no row index for it")
                )
            elif BLOOM_FILTER_UTF8 in kinds and not replace:
                plan.skipped.append(
                    SkippedColumn(
                        s.index, col.name, "has a bloom filter, kept (replace rebuilds it)"
                    )
                )
            else:
                jobs.append(_Job(col, replaced=BLOOM_FILTER_UTF8 in kinds))
        if jobs:
            plan.layouts[s.index] = layout
            plan.jobs[s.index] = jobs
    return plan


def _plan_columns(
    orc: OrcFile, infos: list[OrcColumn], names: Sequence[str] | None, skipped: list
) -> list[OrcColumn]:
    if isinstance(names, str):
        names = [names]
    if names is None:
        chosen, explicit = infos[1:], False
    else:
        chosen, explicit = [infos[_column_id(orc, n)] for n in names], True
    out: list[OrcColumn] = []
    for col in chosen:
        if col in out:
            continue
        why = _why_no_filter(col)
        if why is None:
            out.append(col)
        elif explicit:
            raise UnsupportedTypeError(f"{orc.name}: column {col.name}: {why}")
        elif col.kind != STRUCT:  # a struct's fields speak for it
            skipped.append(SkippedColumn(None, col.name, why))
    out.sort(key=lambda c: c.id)
    return out


def _column_id(orc: OrcFile, name: str) -> int:
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(f"{orc.name}: a column is named by a non-empty string")
    try:
        return orc.column(name).id
    except KeyError:
        names = ", ".join(c.name for c in orc.columns[1:])
        raise InvalidParameterError(
            f"{orc.name}: no column {name!r}; columns are: {names}"
        ) from None


def _why_no_filter(col: OrcColumn) -> str | None:
    """Why ``col`` cannot get a bloom filter bloomskip writes, or None if it can."""
    if col.kind == BOOLEAN:
        return _BOOLEAN_REFUSAL
    if col.kind in (LIST, MAP, UNION, STRUCT):
        return (
            f"{KIND_NAMES[col.kind]} columns get no bloom filter: ORC's readers test "
            "filters of primitive columns only"
        )
    if col.nested:
        return f"inside a {col.nested}: ORC's readers never use its filters"
    if col.ntz:
        return None  # Spark's TIMESTAMP_NTZ: a LONG, hashed as one
    if col.orc_type is None:
        return (
            f"ORC {col.kind_name} column without the length, precision or scale ORC's "
            "writers hash by"
            if col.kind in (14, 16, 17)
            else f"ORC {col.kind_name} columns have no bloom filter bloomskip can build"
        )
    return None


# ----------------------------------------------------------------------------- writing


#: Threads that read and hash (stripe, column) units at once.
MAX_WORKERS = 4


@dataclass(frozen=True)
class _Unit:
    """One column of one stripe to build a filter index for."""

    stripe: int
    rows: int
    job: _Job
    zone: str | None  # the stripe's writer time zone


def _rewrite(
    fh: BinaryIO,
    orc: OrcFile,
    plan: _Plan,
    out: BinaryIO,
    fpp: float,
    progress: bool,
    identity: FileIdentity,
) -> list[AddedIndex]:
    """Write the new file into ``out`` (unbuffered, empty); return the streams added.

    The (stripe, column) units are read and hashed on a few threads (pyarrow and the
    kernels release the GIL), each with its own view of the file, checked to be the one
    read (``identity``), and written stripe by stripe in file order as they complete.
    """
    tail = read_tail(fh, orc)
    first = orc.stripes[0].offset
    copy_range(fh, 0, out, 0, first, orc.name)
    pos = first
    units = [
        _Unit(s.index, s.num_rows, job, _zone_of(plan.layouts[s.index]))
        for s in orc.stripes
        for job in plan.jobs.get(s.index, ())
    ]
    workers = max(1, min(os.cpu_count() or 1, MAX_WORKERS, len(units)))
    readers: queue.SimpleQueue[StripeReader] = queue.SimpleQueue()
    handles: list[BinaryIO] = []
    names = {c.id: c.name for c in plan.infos}
    paths = tree_paths(orc.columns)
    stride = orc.row_index_stride

    def build(unit: _Unit) -> tuple[BuiltIndex, bytes]:
        reader = readers.get()
        try:
            values = reader.read(unit.stripe, unit.rows, [unit.job.column.id])
        finally:
            readers.put(reader)
        built = bloom_index(values[unit.job.column.id], unit.job.column, stride, fpp, unit.zone)
        return built, compress(built.message, orc.compression)

    placed: list[tuple[int, int, int]] = []
    added: list[AddedIndex] = []
    try:
        for _ in range(workers):
            handles.append(open_unchanged(orc.name, identity, label=orc.name))
            reader = StripeReader(handles[-1], orc.name, names, paths)
            if reader.stripes != len(orc.stripes):
                raise UnsupportedFileError(
                    f"{orc.name}: pyarrow's ORC reader sees {reader.stripes} stripes, the "
                    f"footer lists {len(orc.stripes)}"
                )
            readers.put(reader)
        with (
            progress_bar(
                len(units), os.path.basename(orc.name), "column", show=progress, dynamic_ncols=True
            ) as bar,
            ThreadPoolExecutor(workers, thread_name_prefix="bloomskip-orc-add") as pool,
        ):
            built = _in_order(pool, build, units, window=2 * workers)
            for s in orc.stripes:
                jobs = plan.jobs.get(s.index)
                if not jobs:
                    size = s.index_length + s.data_length + s.footer_length
                    copy_range(fh, s.offset, out, pos, size, orc.name)
                    placed.append((pos, s.index_length, s.footer_length))
                    pos += size
                    continue
                results = [next(built)[1] for _ in jobs]
                bar.update(len(jobs))
                pos = _write_stripe(fh, orc, plan.layouts[s.index], jobs, results, out, pos,
                                    placed, added)  # fmt: skip
    finally:
        for h in handles:
            h.close()
    offset, length = tail.between  # Metadata: stripe statistics, unchanged
    copy_range(fh, offset, out, pos, length, orc.name)
    out.seek(pos + length)
    out.write(file_tail(tail, placed, pos, orc.compression))
    return added


def _zone_of(layout: StripeLayout) -> str | None:
    return layout.footer.writer_timezone.decode("utf-8", "replace") or None


def _write_stripe(
    fh: BinaryIO,
    orc: OrcFile,
    layout: StripeLayout,
    jobs: list[_Job],
    results: list[tuple[BuiltIndex, bytes]],
    out: BinaryIO,
    pos: int,
    placed: list[tuple[int, int, int]],
    added: list[AddedIndex],
) -> int:
    """Write one stripe at ``pos``: its index streams (the kept ones copied, the new
    ones after them), its data copied, its new footer; return where it ends."""
    s = layout.stripe
    dropped = {j.column.id for j in jobs if j.replaced}
    at = pos
    for kind, column, offset, length in layout.index:  # kept as they are
        if not (kind == BLOOM_FILTER_UTF8 and column in dropped):
            copy_range(fh, offset, out, at, length, orc.name)
            at += length
    streams: list[tuple[int, int]] = []
    out.seek(at)
    for job, (built, raw) in zip(jobs, results, strict=True):
        out.write(raw)
        streams.append((job.column.id, len(raw)))
        added.append(
            AddedIndex(
                s.index,
                job.column.name,
                built.row_groups,
                built.num_bits,
                built.num_hash_functions,
                at,
                len(raw),
                job.replaced,
            )
        )
        at += len(raw)
    index_length = at - pos
    copy_range(fh, layout.data_offset, out, at, s.data_length, orc.name)
    at += s.data_length
    footer = new_stripe_footer(layout, dropped, streams, orc.compression)
    out.seek(at)
    out.write(footer)
    placed.append((pos, index_length, len(footer)))
    return at + len(footer)


def _in_order(pool: ThreadPoolExecutor, fn, items: list, *, window: int):
    """``(item, fn(item))`` in the order of ``items``, at most ``window`` running ahead
    (memory stays bounded by a few units); the first error is raised."""
    pending: collections.deque = collections.deque()
    it = iter(items)
    for item in itertools.islice(it, window):
        pending.append((item, pool.submit(fn, item)))
    try:
        while pending:
            item, fut = pending.popleft()
            result = fut.result()
            for nxt in itertools.islice(it, 1):
                pending.append((nxt, pool.submit(fn, nxt)))
            yield item, result
    finally:
        for _, fut in pending:
            fut.cancel()
