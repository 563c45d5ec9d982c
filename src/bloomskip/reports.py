"""Lines that several text reports share (add-bloom on Parquet and on ORC): what was
left out, grouped by column and reason."""

from __future__ import annotations

from collections.abc import Iterable


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


__all__ = ["skip_lines"]
