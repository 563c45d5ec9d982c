"""What a zone index answers for one predicate: the candidate files, each with its
candidate zones (row ranges) or in full, the files ruled out and why, and the tallies a
lookup reports (``index query``'s text and ``--json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any

from bloomskip._json import attributes
from bloomskip.index.layout import (
    snapshot_text,
)

#: Why a file of no rows is ruled out: it is empty, or it is no Parquet or ORC file.
EMPTY = "empty file"
NOT_DATA_REASON = "not a Parquet or ORC file"


@dataclass(frozen=True)
class FileCandidate:
    """A file that may hold matching rows; ``zones`` None means the whole file."""

    path: str
    reason: str
    num_rows: int | None = None
    zones: list[tuple[int, int]] | None = None  # (zone_start, zone_length) row ranges
    fragment_id: int | None = None
    #: The file's (size, mtime_ns, etag) when indexed: its zones' row offsets hold while
    #: the file still has them (None: not indexed).
    identity: tuple[int, int, str | None] | None = None

    @property
    def rows(self) -> int | None:
        if self.zones is None:
            return self.num_rows
        return sum(n for _, n in self.zones)

    #: Its JSON, in the key order ``index query --json`` has always printed.
    to_json = partialmethod(attributes, "path reason fragment_id num_rows zones")


@dataclass
class QueryResult:
    """Candidate files and zones for one predicate."""

    index: str
    version: int
    predicate: str
    files: list[FileCandidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why), when named
    skip_reasons: dict[str, int] = field(default_factory=dict)  # why -> files ruled out
    files_total: int = 0
    zones_total: int = 0
    zones_candidate: int = 0
    rows_total: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sizes: dict[str, int] = field(default_factory=dict)  # path -> bytes, as listed
    total_bytes: int | None = None  # the lake's bytes when not every size is known
    #: The table snapshot the answer is for (a table source, the source checked).
    snapshot: dict[str, Any] | None = None

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def rows_candidate(self) -> int:
        """Rows of the candidates the index knows (see :attr:`files_rows_unknown`)."""
        return sum(f.rows or 0 for f in self.files)

    @property
    def files_rows_unknown(self) -> int:
        """Candidates read in full whose rows the index does not know (added or changed
        since indexing): not in :attr:`rows_candidate` nor in ``rows_total``."""
        return sum(1 for f in self.files if f.rows is None)

    @property
    def bytes_total(self) -> int:
        return self.total_bytes if self.total_bytes is not None else sum(self.sizes.values())

    @property
    def files_skipped(self) -> int:
        """Files ruled out (empty files, and files that are not data, among them)."""
        empty = sum(1 for _, why in self.skipped if why in (EMPTY, NOT_DATA_REASON))
        return sum(self.skip_reasons.values()) + empty

    @property
    def bytes_candidate(self) -> int:
        """Bytes of the candidate files (all of each: zones are row ranges, not bytes)."""
        return sum(self.sizes.get(f.path, 0) for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "version": self.version,
            "predicate": self.predicate,
            "files_total": self.files_total,
            "files_candidate": len(self.files),
            "zones_total": self.zones_total,
            "zones_candidate": self.zones_candidate,
            "rows_total": self.rows_total,
            "rows_candidate": self.rows_candidate,
            "files_rows_unknown": self.files_rows_unknown,
            "bytes_total": self.bytes_total,
            "bytes_candidate": self.bytes_candidate,
            "notes": self.notes,
            "seconds": round(self.seconds, 6),
            "files": [f.to_json() for f in self.files],
            "skip_reasons": self.skip_reasons,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        } | ({} if self.snapshot is None else {"snapshot": self.snapshot})

    # -- text: what ``bloomskip index query`` prints ----------------------------------

    def to_text(self) -> str:
        """Each candidate file with its row ranges (or whole file) and why; notes; totals."""
        at = "" if self.snapshot is None else f", table {snapshot_text(self.snapshot)}"
        lines = [f"{self.index} (version {self.version}{at}): WHERE {self.predicate}"]
        fragments = self.files and self.files[0].path.startswith("fragment:")
        for f in self.files:
            zones = (
                "whole file"
                if f.zones is None
                else "rows "
                + ", ".join(_rows(s, n) for s, n in f.zones[:4])
                + (f", ... ({len(f.zones)} ranges)" if len(f.zones) > 4 else "")
            )
            lines.append(f"  {f.path}: {zones} ({f.reason})")
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(
            f"{len(self.files)} of {self.files_total} {'fragments' if fragments else 'files'}, "
            f"{self.zones_candidate:,} of {self.zones_total:,} zones may match; "
            f"{self.rows_candidate:,} of {self.rows_total:,} rows to read"
            f"{unknown_rows_text(self.files_rows_unknown)} ({self.seconds * 1000:.1f} ms)"
        )
        return "\n".join(lines)


def unknown_rows_text(n: int) -> str:
    """What the totals leave out: files read in full whose rows the index does not know."""
    if not n:
        return ""
    return f", and {n:,} {'file' if n == 1 else 'files'} not indexed, read in full"


def _rows(start: int, length: int) -> str:
    """Rows ``[start, start + length)`` as a reader counts them: first-last, from 0."""
    return f"{start:,}" if length == 1 else f"{start:,}-{start + length - 1:,}"


__all__ = ["FileCandidate", "QueryResult", "unknown_rows_text"]
