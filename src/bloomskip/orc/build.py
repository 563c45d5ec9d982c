"""The bloom filter index ORC Java would write for one column of one stripe, from the
values the stripe holds.

:func:`stripe_values` reads a stripe's columns with pyarrow's ORC reader (ORC C++), the
columns inside structs taken with their parents' nulls; :func:`bloom_index` cuts a
column's values into row groups of ``row_index_stride`` rows and builds one
:class:`~bloomskip.orc.filter.OrcBloomFilter` per row group, sized as ORC's writers size
it (``expected_entries`` = the stride, ``fpp``) and fed as ORC Java's tree writers feed
it (:mod:`.feeds`: integers and dates as longs, FLOAT widened, decimals as text,
timestamps as the milliseconds of the writer zone's wall clock, CHAR padded, VARCHAR
cut), and returns the ``BloomFilterIndex`` message of a ``BLOOM_FILTER_UTF8`` stream:
one ``BloomFilter`` (``num_hash_functions``, ``utf8bitset``) per row group (ORC v1
specification, apache/orc-format ``specification/ORCv1.md``, "Bloom Filter Index").

One departure from ORC Java, on purpose: a timestamp within 18 hours and 2 seconds of
the epoch is also added one second earlier and later, in ORC C++'s form. Around the
epoch ORC's writers and readers disagree by a second about such values (ORC Java hashes
instants in (-1 s, 0) a second late; ORC C++ stores and reads them a second apart), and
a filter that holds all three answers "may match" for every reader. Elsewhere the
filters are ORC Java's, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.errors import BloomskipError, CorruptFileError, UnsupportedFileError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc.filter import OrcBloomFilter
from bloomskip.orc.schema import OrcColumn
from bloomskip.orc.types import OrcKind, Writer
from bloomskip.orc.zones import zone_name

if TYPE_CHECKING:
    from bloomskip.orc.file import Column

#: Timestamps this close to the epoch (ns, in the hashed form: the writer zone's wall
#: clock or the instant) are also added a second either side: 2 s, plus the widest zone
#: offset, 18 h, for wall clocks.
NEAR_EPOCH_NS = (2 + 18 * 3600) * 1_000_000_000
_SECOND_NS = 1_000_000_000
_TIMESTAMPS = (OrcKind.TIMESTAMP, OrcKind.TIMESTAMP_INSTANT)


@dataclass(frozen=True)
class BuiltIndex:
    """The bloom filter index of one column in one stripe, serialized (not compressed)."""

    message: bytes
    row_groups: int
    num_bits: int
    num_hash_functions: int


class StripeReader:
    """A column's values stripe by stripe, read with pyarrow's ORC reader (ORC C++)."""

    def __init__(
        self, fh: BinaryIO, name: str, names: dict[int, str], paths: dict[int, tuple[int, ...]]
    ) -> None:
        """``names[c]`` is column ``c``'s name (for errors), ``paths[c]`` its position in
        the tree (:func:`tree_paths`)."""
        self.name = name
        self._names = names
        self._paths = paths
        import pyarrow.orc as po  # loads Arrow's ORC adapter: only when filters are built

        try:
            self._file = po.ORCFile(fh)
        except (OSError, pa.ArrowException) as e:
            raise CorruptFileError(f"{name}: pyarrow's ORC reader cannot open it: {e}") from None

    @property
    def stripes(self) -> int:
        return self._file.nstripes

    def read(self, stripe: int, rows: int, columns: Sequence[int]) -> dict[int, pa.Array]:
        """The values of ``columns`` (ids) in ``stripe``, which must hold ``rows`` rows."""
        tops = sorted({self._paths[c][0] for c in columns})
        try:
            batch = self._file.read_stripe(stripe, columns=tops)
        except (OSError, pa.ArrowException) as e:
            raise UnsupportedFileError(
                f"{self.name}: stripe {stripe}: pyarrow's ORC reader cannot read columns "
                f"{', '.join(self._names[c] for c in columns)}: {e}"
            ) from None
        if batch.num_rows != rows:
            raise CorruptFileError(
                f"{self.name}: stripe {stripe} holds {batch.num_rows:,} rows as read, "
                f"but its footer says {rows:,}"
            )
        out = {}
        for c in columns:
            path = self._paths[c]
            arr = batch.column(tops.index(path[0]))
            for i in path[1:]:  # struct fields, with their parents' nulls
                arr = arr.flatten()[i]
            out[c] = arr
        return out


def tree_paths(columns: Sequence[Column]) -> dict[int, tuple[int, ...]]:
    """For each column id (of the file's pre-order tree), the index of each of its
    ancestors and itself among its parent's children, top-level first (root excluded)."""
    paths: dict[int, tuple[int, ...]] = {0: ()}
    for c in columns[1:]:
        assert c.parent is not None
        paths[c.id] = (*paths[c.parent], columns[c.parent].children.index(c.id))
    return paths


def bloom_index(
    values: pa.Array,
    column: OrcColumn,
    stride: int,
    fpp: float,
    writer_timezone: str | None,
) -> BuiltIndex:
    """The ``BloomFilterIndex`` of ``values`` (one stripe's), one filter per ``stride``
    rows, as ORC Java builds it for ``column`` at ``fpp``."""
    kind = column.orc_type
    assert kind is not None
    zone = _zone(writer_timezone) if kind.kind is OrcKind.TIMESTAMP else "UTC"
    message = pb.BloomFilterIndex()
    n = len(values)
    f = None
    for start in range(0, n, stride):
        part = values.slice(start, min(stride, n - start))
        f = OrcBloomFilter(stride, fpp)
        f.add_values(part, kind, writer_timezone=zone, writer=Writer.JAVA)
        if kind.kind in _TIMESTAMPS:
            _add_near_epoch(f, part, kind, zone)
        entry = message.bloom_filter.add()
        entry.num_hash_functions = f.num_hash_functions
        entry.utf8bitset = f.to_utf8bitset()
    if f is None:  # no rows: no row groups
        f = OrcBloomFilter(stride, fpp)
    return BuiltIndex(
        message.SerializeToString(),
        len(message.bloom_filter),
        f.num_bits,
        f.num_hash_functions,
    )


def _zone(writer_timezone: str | None) -> str:
    """The stripe's writer zone, or UTC when it has none or one zoneinfo does not know
    (it only decides ORC Java's quirk near the epoch, which the extra values cover)."""
    try:
        return zone_name(writer_timezone or "UTC")
    except BloomskipError:
        return "UTC"


def _add_near_epoch(f: OrcBloomFilter, part: pa.Array, kind, zone: str) -> None:
    """Add timestamps near the epoch also a second either side, floored (ORC C++'s form)."""
    if isinstance(part, pa.ChunkedArray):
        part = part.combine_chunks()
    part = part.cast(pa.timestamp("ns", tz=part.type.tz))
    ns = pc.fill_null(part.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    valid = part.is_valid().to_numpy(zero_copy_only=False)
    near = ns[valid & (np.abs(ns) <= NEAR_EPOCH_NS)]
    if near.size == 0:
        return
    ts = pa.timestamp("ns", tz=part.type.tz)
    for shift in (-_SECOND_NS, 0, _SECOND_NS):
        moved = pa.array(near + shift, pa.int64()).cast(ts)
        f.add_values(moved, kind, writer_timezone=zone, writer=Writer.CPP)
