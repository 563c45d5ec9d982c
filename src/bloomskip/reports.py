"""What add-bloom reports for every format (Parquet and ORC): the fields of a result,
and the lines that say what was left out, grouped by column and reason."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AddReport:
    """What adding bloom filters to one file did; each format adds what it wrote and
    skipped (``added``, ``skipped``) and its own units."""

    source: str
    path: str  # the file written (== source when in place)
    added: list[Any] = field(default_factory=list)  # what was written (each has .length)
    skipped: list[Any] = field(default_factory=list)
    bytes_added: int = 0  # size of the new file minus size of the source
    rewritten: bool = False  # False when there was nothing to do in place
    rows: int = 0
    row_groups: int = 0
    seconds: float = 0.0

    @property
    def filter_bytes(self) -> int:
        """Bytes of what was written for the filters, as stored."""
        return sum(a.length for a in self.added)

    def where(self) -> str:
        """Where the result went, as the text report says it."""
        if not self.rewritten:
            return "nothing to do, file unchanged"
        return "in place" if self.path == self.source else f"to {self.path}"


def skip_lines(skips: Iterable[tuple[str, str, int | None]], unit: str) -> list[str]:
    """One line per (column, reason) of ``skips`` - ``(column, reason, unit index or
    None for every unit)`` - counting the units: ``"  skipped uid (3 row group(s)): ..."``
    or ``"(all row groups)"``."""
    grouped: dict[tuple[str, str], list[int | None]] = {}
    for column, reason, where in skips:
        grouped.setdefault((column, reason), []).append(where)
    lines = []
    for (column, reason), at in grouped.items():
        which = f"all {unit}s" if at == [None] else f"{len(at)} {unit}(s)"
        lines.append(f"  skipped {column} ({which}): {reason}")
    return lines


__all__ = ["AddReport", "skip_lines"]
