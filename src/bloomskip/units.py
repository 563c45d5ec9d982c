"""Byte counts for people: the one formatter every report and demo prints with."""

from __future__ import annotations


def human_bytes(n: float | None) -> str:
    """``n`` bytes in B, KiB, MiB or GiB (``"-"`` for None): ``"512 B"``, ``"5.6 MiB"``."""
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


__all__ = ["human_bytes"]
