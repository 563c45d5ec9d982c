"""Integer statistics of ORC row groups as arrays: many row groups decided at once.

A row group's row index entry (``RowIndexEntry.statistics``, ``orc_proto.proto``,
apache/orc-format) bounds an integer column's values by its ``IntegerStatistics``
minimum and maximum (timestamps without a time zone carry integer statistics too, see
:func:`~bloomskip.orc.statistics.statistics_field`). :func:`stripe_bounds` reads the
few fields it needs of a stripe's entries from protobuf's parsed message
(:func:`~bloomskip.orc.proto.row_index_message`) once into arrays, with the rules of
:func:`~bloomskip.orc.statistics.entry_range`: an entry that counts no values proves the
row group all null and has no bounds; an entry of a writer whose statistics are not
trusted has none either; bounds need both minimum and maximum. :func:`outside` then
rules candidate keys out for every row group in numpy.

:class:`UnitBounds` gathers them for the units (row groups) a stage asks about, each
stripe's row index read once, and :func:`findings` answers as the statistics stage
answers from ranges. What an entry without bounds says (its note) is left to
:class:`~bloomskip.orc.statistics.Range`: one is built only for those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bloomskip.errors import BloomskipError
from bloomskip.orc import messages_pb2 as pb
from bloomskip.orc.trust import statistics_policy
from bloomskip.orc.types import INTEGERS
from bloomskip.prune.evidence import Findings, Status

if TYPE_CHECKING:
    from bloomskip.orc.file import OrcFile
    from bloomskip.orc.schema import OrcColumn
    from bloomskip.orc.stripes import RowGroups

_INT64 = np.iinfo(np.int64)


@dataclass(frozen=True, slots=True)
class Bounds:
    """Per row group: whether its entry counts no values, whether ``lo``/``hi`` hold
    its minimum and maximum, and those."""

    zero: np.ndarray  # bool: number_of_values = 0
    bounded: np.ndarray  # bool
    lo: np.ndarray  # int64
    hi: np.ndarray  # int64

    @staticmethod
    def empty(n: int) -> Bounds:
        """``n`` row groups of which nothing is known."""
        return Bounds(
            np.zeros(n, np.bool_),
            np.zeros(n, np.bool_),
            np.zeros(n, np.int64),
            np.zeros(n, np.int64),
        )

    def take(self, at: np.ndarray) -> Bounds:
        return Bounds(self.zero[at], self.bounded[at], self.lo[at], self.hi[at])

    def put(self, where: np.ndarray, other: Bounds) -> None:
        """Set the row groups selected by ``where`` from ``other`` (as many, in order)."""
        self.zero[where], self.bounded[where] = other.zero, other.bounded
        self.lo[where], self.hi[where] = other.lo, other.hi


def stripe_bounds(index: pb.RowIndex | None, n: int, trusted: bool) -> Bounds:
    """The bounds of a stripe's ``n`` row groups from its row index (None: none, or
    unreadable, which gives no bounds), read field by field from protobuf's message."""
    out = Bounds.empty(n)
    if index is None or len(index.entry) != n:
        return out
    zero, bounded, lo, hi = out.zero, out.bounded, out.lo, out.hi
    for j, entry in enumerate(index.entry):
        if not entry.HasField("statistics"):
            continue
        cs = entry.statistics
        if cs.HasField("number_of_values") and cs.number_of_values == 0:
            zero[j] = True
        elif trusted and cs.HasField("int_statistics"):
            s = cs.int_statistics
            if s.HasField("minimum") and s.HasField("maximum"):
                bounded[j], lo[j], hi[j] = True, s.minimum, s.maximum  # sint64: fits
    return out


def outside(bounds: Bounds, keys: list) -> np.ndarray | None:
    """Per row group, whether its bounds rule out every key (nothing is ruled out by no
    keys); None when a key is not an integer of 64 bits (compare those one by one)."""
    if not all(type(k) is int and _INT64.min <= k <= _INT64.max for k in keys):
        return None
    if not keys:
        return np.zeros(bounds.bounded.shape[0], np.bool_)
    out = bounds.bounded.copy()
    for k in keys:
        out &= (k < bounds.lo) | (k > bounds.hi)
    return out


class UnitBounds:
    """The bounds of integer columns over the row groups of a file, stripe by stripe."""

    def __init__(self, orc: OrcFile, groups: RowGroups) -> None:
        self.orc, self.groups = orc, groups
        self._stripes: dict[tuple[int, int], Bounds] = {}

    def of(self, units: np.ndarray, col: int, info: OrcColumn) -> Bounds | None:
        """The bounds of ``col`` in ``units``; None where arrays do not apply (not an
        integer column, no row index)."""
        if not (info.ntz or info.kind in INTEGERS) or self.orc.row_index_stride == 0:
            return None
        stripes, at = self.groups.stripes[units], self.groups.indexes[units]
        out = Bounds.empty(units.shape[0])
        for stripe in np.unique(stripes).tolist():
            b = self._stripes.get((stripe, col))
            if b is None:
                n, trusted = self.orc.num_row_groups(stripe), not statistics_policy(self.orc, info)
                b = self._stripes[(stripe, col)] = stripe_bounds(
                    self._index(stripe, col), n, trusted
                )
            here = stripes == stripe
            out.put(here, b.take(at[here]))
        return out

    def _index(self, stripe: int, col: int) -> pb.RowIndex | None:
        try:
            return self.orc.row_index_message(stripe, col)
        except BloomskipError:  # the unit's Range says why
            return None


def findings(bounds: Bounds, out: np.ndarray, note: Callable[[int], str]) -> Findings:
    """The statistics stage's answer, as from ranges: ruled out (``out``) showing the
    bounds as :meth:`~bloomskip.orc.statistics.Range.show` shows integers, within them,
    or without bounds with ``note(j)`` of the ``j``-th unit (or "no statistics")."""
    bounded = bounds.bounded
    status = np.where(
        out, Status.EXCLUDED, np.where(bounded, Status.INCONCLUSIVE, Status.UNAVAILABLE)
    ).astype(np.uint8)
    why = []
    lo, hi = bounds.lo.tolist(), bounds.hi.tolist()
    for j, (o, k) in enumerate(zip(out.tolist(), bounded.tolist(), strict=True)):
        if o:
            why.append(f"statistics: outside [{lo[j]}, {hi[j]}]")
        elif k:
            why.append("within [min, max]")
        else:
            why.append(note(j) or "no statistics")
    return Findings(status, why)
