"""Helpers for the tests of adding ORC bloom filters: a file's parts as bytes (to prove
that data streams are copied unchanged), the filters a file stores, Java's filters
hidden from ORC's readers, and the rows ORC C++ reads with a predicate (pyorc)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bloomskip.orc import OrcBloomFilter, read_orc
from bloomskip.orc.stripes import BLOOM_FILTER_UTF8
from tests.support.orc_wire import stripe_footer_edit

DICTIONARY_COUNT = 4


@dataclass
class Parts:
    """A file cut at its structures: per stripe the data section and each index stream
    (by (kind, column)), and the Metadata section."""

    rows: list[int]
    data: list[bytes]
    index: list[dict[tuple[int, int], bytes]]
    metadata: bytes
    row_index_stride: int


def parts(path: str | Path) -> Parts:
    raw = Path(path).read_bytes()
    f = read_orc(raw, name=str(path))
    out = Parts([], [], [], b"", f.row_index_stride)
    for s in f.stripes:
        out.rows.append(s.num_rows)
        start = s.offset + s.index_length
        out.data.append(raw[start : start + s.data_length])
        out.index.append(
            {
                (st.kind, st.column): raw[st.offset : st.offset + st.length]
                for st in f.streams(s.index)
                if st.offset < start
            }
        )
    offset, length = f.metadata_range
    out.metadata = raw[offset : offset + length]
    return out


def stored_filters(path: str | Path, column: str) -> list[list[OrcBloomFilter] | None]:
    """The filters of ``column`` per stripe and row group (BLOOM_FILTER_UTF8 first), None
    for a stripe without any."""
    f = read_orc(path)
    cid = f.column(column).id
    out: list[list[OrcBloomFilter] | None] = []
    for s in f.stripes:
        idx = f.bloom_filters(s.index, cid)
        if idx is None:
            out.append(None)
            continue
        k, bits = idx.num_hash_functions, idx.bitset
        out.append(
            [
                OrcBloomFilter.from_index(k(g.index), utf8bitset=bits(g.index))
                for g in f.row_groups(s.index)
            ]
        )
    return out


def stream_kinds(path: str | Path, column: str) -> list[list[int]]:
    """The index stream kinds of ``column`` in each stripe, in list order."""
    f = read_orc(path)
    cid = f.column(column).id
    return [
        [st.kind for st in f.streams(s.index) if st.column == cid and st.kind in (6, 7, 8)]
        for s in f.stripes
    ]


def hide_utf8_streams(data: bytes) -> bytes:
    """An uncompressed file whose BLOOM_FILTER_UTF8 streams became DICTIONARY_COUNT
    streams, an index stream no reader of ORC v1 asks for: the same bytes, no filters."""

    def edit(sf) -> None:
        for stream in sf.streams:
            if stream.kind == BLOOM_FILTER_UTF8:
                stream.kind = DICTIONARY_COUNT

    return stripe_footer_edit(data, edit)


def pyorc_rows(
    path: str | Path, column: str, kind: str, value, columns: list[str], **options
) -> list:
    """The rows ORC C++ returns for ``column = value`` (pyorc's predicate read: whole row
    groups its statistics and bloom filters cannot rule out); ``options`` go to
    ``pyorc.Reader`` (``timezone``)."""
    import pyorc
    from pyorc.enums import TypeKind
    from pyorc.predicates import PredicateColumn

    with open(path, "rb") as fh:
        reader = pyorc.Reader(
            fh,
            column_names=columns,
            predicate=PredicateColumn(getattr(TypeKind, kind), column) == value,
            **options,
        )
        return list(reader)
