"""The metadata of an ORC file whose stripes get new index streams: each stripe's layout
as read, and the stripe footers, Footer and PostScript written for the new places.

A stripe is ``[index streams][data streams][stripe footer]`` (ORC v1 specification,
apache/orc-format ``specification/ORCv1.md``, "Stripes"): the footer lists every stream
with its kind, column and length, and a stream starts where the ones before it end.
ORC C++ and ORC Java before 1.6 place streams by walking that list in order; ORC Java
from 1.6 (``StripePlanner``) walks the index streams (ROW_INDEX, DICTIONARY_COUNT,
BLOOM_FILTER, BLOOM_FILTER_UTF8) first, then the data streams. :func:`read_layout`
accepts a stripe only where both agree - every index stream listed before every data
stream, their lengths adding up to the stripe's index and data lengths - so that its
data section can be copied as one block and new index streams appended to its index
section.

The messages are edited through protobuf (:mod:`.messages_pb2`), which keeps every field
it does not declare: in a stripe footer only the stream list and the new columns'
``ColumnEncoding.bloom_encoding`` (1, ``UTF8_UTC``: what ORC Java's readers require of a
``BLOOM_FILTER_UTF8`` stream, ORC-135) change; in the Footer the stripes' offsets,
index and footer lengths and ``content_length``; in the PostScript ``footer_length``.
Among a column's bloom filter streams ORC Java uses the one listed last, so new streams
are listed after the existing index streams.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from bloomskip.errors import CorruptFileError, UnsupportedFileError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc import proto
from bloomskip.orc.compression import Compression, compress, decompress
from bloomskip.orc.file import MAX_FOOTER_BYTES
from bloomskip.orc.stripes import (
    BLOOM_FILTER,
    BLOOM_FILTER_UTF8,
    MAX_STRIPE_FOOTER_BYTES,
    ROW_INDEX,
    STREAM_KIND_NAMES,
)

if TYPE_CHECKING:
    from bloomskip.orc.file import OrcFile, Stripe

DICTIONARY_COUNT, ENCRYPTED_INDEX, ENCRYPTED_DATA = 4, 9, 10
#: Stream kinds of the index section (ORC Java's ``StreamName.getArea``).
INDEX_KINDS = frozenset({ROW_INDEX, DICTIONARY_COUNT, BLOOM_FILTER, BLOOM_FILTER_UTF8})
#: ``ColumnEncoding.bloom_encoding`` of BLOOM_FILTER_UTF8 streams (ORC-135, ``UTF8_UTC``).
UTF8_UTC = 1
#: The PostScript's length is the file's last byte.
MAX_POSTSCRIPT = 255


@dataclass
class StripeLayout:
    """One stripe's footer as parsed, and where its index streams are in the file."""

    stripe: Stripe
    footer: pb.StripeFooter
    #: (kind, column, offset in the file, length) of each index stream, in list order
    index: list[tuple[int, int, int, int]] = field(default_factory=list)

    @property
    def data_offset(self) -> int:
        return self.stripe.offset + self.stripe.index_length

    def kinds(self, column: int) -> set[int]:
        """The index stream kinds the stripe has for ``column``."""
        return {k for k, c, _, _ in self.index if c == column}


def read_at(fh: BinaryIO, offset: int, length: int, what: str) -> bytes:
    """``length`` bytes of the open file at ``offset`` (its position is not used)."""
    data = os.pread(fh.fileno(), length, offset)
    if len(data) != length:
        raise CorruptFileError(
            f"{what}: read {len(data)} of {length} bytes at offset {offset} (the file changed?)"
        )
    return data


def read_layout(fh: BinaryIO, orc: OrcFile, stripe: int) -> StripeLayout:
    """The layout of ``stripe``, or :class:`UnsupportedFileError` where the index and
    data sections cannot be told apart as every reader does (the module doc)."""
    s = orc.stripes[stripe]
    where = f"{orc.name}: stripe {stripe} footer at offset {s.footer_offset}"
    raw = read_at(fh, s.footer_offset, s.footer_length, where)
    data = decompress(
        raw, orc.compression, name=where, offset=s.footer_offset, limit=MAX_STRIPE_FOOTER_BYTES
    )
    footer = proto.parse(pb.StripeFooter, data, where)
    if len(footer.encryption) or orc.encrypted:
        raise UnsupportedFileError(f"{orc.name}: encrypted stripes are not rewritten")
    layout = StripeLayout(s, footer)
    kinds = []
    for i, st in enumerate(footer.streams):
        what = f"{orc.name}: stripe {stripe} stream {i}"
        if not st.HasField("kind"):
            raise CorruptFileError(f"{what} has no kind")
        if st.column >= len(orc.columns):
            raise CorruptFileError(
                f"{what} names column {st.column}, but the file has {len(orc.columns)} columns"
            )
        if st.kind in (ENCRYPTED_INDEX, ENCRYPTED_DATA) or st.kind >= 100:
            raise UnsupportedFileError(
                f"{what} is a {STREAM_KIND_NAMES.get(st.kind, st.kind)} stream: not rewritten"
            )
        kinds.append(st.kind in INDEX_KINDS)
    lengths = [st.length for st in footer.streams]
    for area, want, index in (("index", s.index_length, True), ("data", s.data_length, False)):
        got = sum(n for n, k in zip(lengths, kinds, strict=True) if k is index)
        if got != want:
            raise CorruptFileError(
                f"{orc.name}: stripe {stripe}: its {area} streams take {got:,} bytes, but "
                f"its {area} length is {want:,}"
            )
    n_index = kinds.count(True)
    if any(not k for k in kinds[:n_index]):
        raise UnsupportedFileError(
            f"{orc.name}: stripe {stripe} lists an index stream after data streams; ORC's "
            "readers place such streams differently, so bloomskip does not rewrite it"
        )
    pos = s.offset
    for st in footer.streams[:n_index]:
        layout.index.append((st.kind, st.column, pos, st.length))
        pos += st.length
    if len(footer.columns) < len(orc.columns):
        raise CorruptFileError(
            f"{orc.name}: stripe {stripe} footer has {len(footer.columns)} column encodings "
            f"for {len(orc.columns)} columns"
        )
    return layout


def stripe_footer(
    layout: StripeLayout,
    dropped: set[int],
    added: list[tuple[int, int]],
    compression: Compression,
) -> bytes:
    """The stripe footer, compressed, for an index section that keeps the index streams
    except the BLOOM_FILTER_UTF8 streams of ``dropped`` columns, in their order, followed
    by one BLOOM_FILTER_UTF8 stream per ``(column, length)`` of ``added``."""
    out = pb.StripeFooter()
    out.CopyFrom(layout.footer)
    n = len(layout.index)
    old = list(layout.footer.streams)
    del out.streams[:]
    for st in old[:n]:
        if not (st.kind == BLOOM_FILTER_UTF8 and st.column in dropped):
            out.streams.add().CopyFrom(st)
    for column, length in added:
        out.streams.add(kind=BLOOM_FILTER_UTF8, column=column, length=length)
        out.columns[column].bloom_encoding = UTF8_UTC
    for st in old[n:]:
        out.streams.add().CopyFrom(st)
    return compress(out.SerializeToString(), compression)


@dataclass(frozen=True)
class Tail:
    """The file's Footer and PostScript as parsed, and where the bytes between the last
    stripe and the Footer (Metadata, stripe statistics) are."""

    footer: pb.Footer
    postscript: pb.PostScript
    between: tuple[int, int]  # offset, length


def read_tail(fh: BinaryIO, orc: OrcFile) -> Tail:
    """The Footer and PostScript messages of ``orc`` (already checked by ``read_orc``)."""
    size = orc.file_size
    ps_len = read_at(fh, size - 1, 1, f"{orc.name}: PostScript length")[0]
    ps_start = size - 1 - ps_len
    where = f"{orc.name}: PostScript at offset {ps_start}"
    ps = proto.parse(pb.PostScript, read_at(fh, ps_start, ps_len, where), where)
    footer_start = ps_start - ps.footer_length
    where = f"{orc.name}: footer at offset {footer_start}"
    raw = read_at(fh, footer_start, ps.footer_length, where)
    data = decompress(raw, orc.compression, name=where, offset=footer_start, limit=MAX_FOOTER_BYTES)
    footer = proto.parse(pb.Footer, data, where)
    between = ps.metadata_length + ps.stripe_statistics_length
    return Tail(footer, ps, (footer_start - between, between))


def file_tail(
    tail: Tail, stripes: list[tuple[int, int, int]], content_length: int, compression: Compression
) -> bytes:
    """Footer (compressed), PostScript and its length byte for stripes now at
    ``(offset, index_length, footer_length)``; ``content_length`` is where they end."""
    footer = pb.Footer()
    footer.CopyFrom(tail.footer)
    for info, (offset, index_length, footer_length) in zip(footer.stripes, stripes, strict=True):
        info.offset = offset
        info.index_length = index_length
        info.footer_length = footer_length
    if footer.HasField("content_length"):
        footer.content_length = content_length
    raw = compress(footer.SerializeToString(), compression)
    ps = pb.PostScript()
    ps.CopyFrom(tail.postscript)
    ps.footer_length = len(raw)
    ps_raw = ps.SerializeToString()
    if len(ps_raw) > MAX_POSTSCRIPT:
        raise UnsupportedFileError(f"the new PostScript would take {len(ps_raw)} bytes (max 255)")
    return raw + ps_raw + bytes([len(ps_raw)])
