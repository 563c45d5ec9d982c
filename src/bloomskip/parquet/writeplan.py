"""Which column chunks of a Parquet file get a bloom filter, and the distinct count each
is built for: the planning half of :mod:`bloomskip.parquet.write`.

A column gets filters if writers hash its values (its physical and logical type,
:func:`bloomskip.parquet.schema.column_type`) and it is not BOOLEAN (no reader uses
boolean filters); chunks whose column is encrypted with a key we lack, chunks without
metadata, and chunks that already have a filter (unless ``replace``) are skipped with a
reason. Sizing follows ``ndv``: None counts the distinct values, ``"auto"`` builds for the
largest row group's row count and folds, a number builds for that many and folds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO, Literal

from bloomskip.errors import InvalidParameterError, MissingKeyError, UnsupportedTypeError
from bloomskip.hashing.physical import PhysicalType
from bloomskip.parquet.bloom import load_filter
from bloomskip.parquet.footer import Footer, LeafColumn
from bloomskip.parquet.schema import ColumnType, column_type
from bloomskip.parquet.values import ChunkColumn
from bloomskip.sbbf.sizing import MAX_NDV

_BOOLEAN_REFUSAL = (
    "BOOLEAN columns get no bloom filter: no reader uses boolean bloom filters "
    "(parquet-java writes them all zeros, so none trusts them), and min/max statistics "
    "already answer equality on two values"
)


@dataclass(frozen=True)
class SkippedChunk:
    """A column chunk (or, with ``row_group=None``, a whole column) left without a new filter."""

    row_group: int | None
    column: str
    reason: str


@dataclass(frozen=True)
class Job:
    row_group: int
    column: ChunkColumn
    replaced: bool


def why_no_filter(leaf: LeafColumn, ctype: ColumnType) -> str | None:
    """Why this column cannot get a filter, or None if it can."""
    if leaf.physical_type is PhysicalType.BOOLEAN:
        return _BOOLEAN_REFUSAL
    if ctype.spec is None:
        return f"{ctype.logical} values cannot be hashed as writers do: {ctype.why_not}"
    return None


def plan_columns(
    footer: Footer, names: Sequence[str] | None
) -> tuple[list[ChunkColumn], list[SkippedChunk]]:
    """The columns to index, and (when ``names`` is None) the ones that cannot be."""
    if isinstance(names, str):
        names = [names]
    if names is None:
        leaves, explicit = list(footer.leaves), False
    else:
        leaves, explicit = [_leaf(footer, n) for n in names], True
    out: list[ChunkColumn] = []
    skipped: list[SkippedChunk] = []
    seen: set[int] = set()
    for leaf in leaves:
        if leaf.index in seen:
            continue
        seen.add(leaf.index)
        ctype = column_type(leaf)
        why = why_no_filter(leaf, ctype)
        locked = footer.row_groups[0].columns[leaf.index].locked if footer.row_groups else None
        if why is None and locked:
            if explicit:
                raise MissingKeyError(f"{footer.path}: {locked}")
            skipped.append(SkippedChunk(None, leaf.name, locked))
        elif why is None:
            out.append(ChunkColumn(leaf, ctype, ctype.spec))  # type: ignore[arg-type]
        elif explicit:
            raise UnsupportedTypeError(f"{footer.path}: column {leaf.name}: {why}")
        else:
            skipped.append(SkippedChunk(None, leaf.name, why))
    out.sort(key=lambda c: c.leaf.index)
    return out, skipped


def _leaf(footer: Footer, name: str) -> LeafColumn:
    try:
        return footer.leaf(name)
    except KeyError:
        names = ", ".join(leaf.name for leaf in footer.leaves)
        raise InvalidParameterError(
            f"{footer.path}: no column {name!r}; columns are: {names}"
        ) from None


def plan_chunks(
    fh: BinaryIO, footer: Footer, cols: list[ChunkColumn], replace: bool
) -> tuple[list[Job], list[SkippedChunk]]:
    """One job per (row group, column) to fill, row group by row group, in file order."""
    jobs: list[Job] = []
    skipped: list[SkippedChunk] = []
    for rg in footer.row_groups:
        for col in cols:
            chunk = rg.columns[col.leaf.index]
            name = col.leaf.name
            if chunk.locked:
                skipped.append(SkippedChunk(rg.index, name, chunk.locked))
            elif chunk.meta is None:
                skipped.append(SkippedChunk(rg.index, name, "column chunk has no metadata"))
            elif chunk.bloom_filter_offset is None:
                jobs.append(Job(rg.index, col, replaced=False))
            elif replace:
                jobs.append(Job(rg.index, col, replaced=True))
            else:
                old = load_filter(fh, footer, chunk)
                why = (
                    "has a bloom filter"
                    if old.status == "ok"
                    else f"has an unusable bloom filter ({old.reason})"
                )
                skipped.append(SkippedChunk(rg.index, name, f"{why}, kept (replace rebuilds it)"))
    return jobs, skipped


def check_ndv(ndv: object) -> None:
    """``ndv`` is None (count), ``"auto"`` or a distinct count to build for, then fold."""
    if ndv is None or ndv == "auto":
        return
    if isinstance(ndv, bool) or not isinstance(ndv, int) or not 0 <= ndv <= MAX_NDV:
        raise InvalidParameterError(
            f"ndv must be None (count the distinct values), 'auto' (the largest row group's "
            f"row count) or an int from 0 to 2**63-1, got {ndv!r}"
        )


def start_ndv(footer: Footer, ndv: int | Literal["auto"] | None) -> int | None:
    """The NDV filters are built for before folding; None to size from the exact count."""
    if ndv == "auto":
        return max((rg.num_rows for rg in footer.row_groups), default=0)
    return ndv


__all__ = [
    "Job",
    "SkippedChunk",
    "check_ndv",
    "plan_chunks",
    "plan_columns",
    "start_ndv",
    "why_no_filter",
]
