"""Row ranges inside a file: candidate zones merged, and cut at unit boundaries.

A zone index answers with zones - ``(start, length)`` row ranges of a file - and a
reader reads units (Parquet row groups, ORC stripes). :func:`merge_ranges` turns zones
into sorted, disjoint ``[start, end)`` ranges; :func:`overlap` gives the part of them
inside one unit, relative to the unit's first row. Used by the Spark data source
(:mod:`bloomskip.spark.readfile`) and by the readers of tables' data files
(:mod:`bloomskip.tables`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def merge_ranges(zones: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Zones (start, length) as sorted, disjoint [start, end) ranges."""
    out: list[list[int]] = []
    for a, n in sorted((int(a), int(n)) for a, n in zones):
        if n <= 0:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], a + n)
        else:
            out.append([a, a + n])
    return [(a, b) for a, b in out]


def overlap(ranges: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """The parts of ``ranges`` (from :func:`merge_ranges`) inside [lo, hi), relative to
    ``lo``."""
    i = bisect.bisect_right(ranges, (lo, float("inf"))) - 1
    i = max(i, 0)
    out = []
    for a, b in ranges[i:]:
        if a >= hi:
            break
        if b > lo:
            out.append((max(a, lo) - lo, min(b, hi) - lo))
    return out


__all__ = ["merge_ranges", "overlap"]
