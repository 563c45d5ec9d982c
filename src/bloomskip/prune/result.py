"""What pruning and probing answer, whatever the file format: one unit per row group.

:class:`PruneResult` (from ``prune``) and :class:`ProbeResult` (from ``probe``) are shared by
:mod:`bloomskip.parquet.prune` and :mod:`bloomskip.orc.prune`, so both formats print the
same ``--json``; a probe status is a :class:`~bloomskip.prune.evidence.ProbeStatus`.
Units are in file order and tile every row: ``first_row`` and
``num_rows`` of a Parquet row group, or of an ORC row group (stride rows, stripe by
stripe; ``row_group`` then counts them over the whole file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

from bloomskip._json import attributes
from bloomskip.prune.evidence import ProbeStatus


@dataclass(frozen=True)
class Unit:
    """One row group's answer."""

    row_group: int
    first_row: int
    num_rows: int
    may_match: bool
    reason: str

    #: Its JSON: its rows and answer (``row_group`` is its place in the list).
    to_json = partialmethod(attributes, "first_row num_rows may_match reason")


@dataclass
class PruneResult:
    """Every row group of a file, in order, with its answer."""

    file: str
    predicate: str
    units: list[Unit] = field(default_factory=list)

    @property
    def matching(self) -> list[Unit]:
        return [u for u in self.units if u.may_match]

    @property
    def rows_skipped(self) -> int:
        return sum(u.num_rows for u in self.units if not u.may_match)

    def to_json(self) -> dict[str, Any]:
        """``{"file": str, "units": [{"first_row", "num_rows", "may_match", "reason"}]}``."""
        return {"file": self.file, "units": [u.to_json() for u in self.units]}

    # -- text: what ``bloomskip prune`` prints ------------------------------------------

    def to_text(self) -> str:
        """A table: each row group, whether it may match and why; then the rows skipped."""
        lines = [
            f"{self.file}: WHERE {self.predicate}",
            f"{'rg':>4} {'first_row':>12} {'rows':>10}  {'may match':9}  reason",
        ]
        for u in self.units:
            answer = "yes" if u.may_match else "no"
            lines.append(
                f"{u.row_group:>4} {u.first_row:>12,} {u.num_rows:>10,}  {answer:9}  {u.reason}"
            )
        total = sum(u.num_rows for u in self.units)
        lines.append(
            f"{len(self.matching)} of {len(self.units)} row groups may match; "
            f"{self.rows_skipped:,} of {total:,} rows skipped"
        )
        return "\n".join(lines)


# ---------------------------------------------------------------------------- probe


@dataclass(frozen=True)
class ProbeUnit:
    row_group: int
    first_row: int
    num_rows: int
    result: ProbeStatus
    values: tuple[ProbeStatus, ...]  # per value
    reason: str

    #: Its JSON: every field, in order.
    to_json = attributes


@dataclass
class ProbeResult:
    file: str
    column: str
    values: list[str]
    units: list[ProbeUnit] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "column": self.column,
            "values": self.values,
            "row_groups": [u.to_json() for u in self.units],
        }

    # -- text: what ``bloomskip probe`` prints ------------------------------------------

    def to_text(self) -> str:
        """A table: each row group's answer for the values; then how many rule all out."""
        lines = [
            f"{self.file}: column {self.column}, values {', '.join(self.values)}",
            f"{'rg':>4} {'first_row':>12} {'rows':>10}  {'result':9}  reason",
        ]
        for u in self.units:
            lines.append(
                f"{u.row_group:>4} {u.first_row:>12,} {u.num_rows:>10,}  {u.result:9}  {u.reason}"
            )
        absent = sum(u.result == "absent" for u in self.units)
        lines.append(f"{absent} of {len(self.units)} row groups: every value absent")
        return "\n".join(lines)


__all__ = ["ProbeResult", "ProbeUnit", "PruneResult", "Unit"]
