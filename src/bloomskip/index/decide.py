"""Which files and zones of an index may match a predicate: the pruning engine
(:mod:`bloomskip.prune.engine`) run twice over an index's evidence
(:mod:`bloomskip.index.evidence`) - over the files, and over every zone any referenced
column holds for them - and the per-file answer a lookup returns. :func:`evaluate` is the
same for readers of other zone tables (Lance's), so every index answers with one set of
rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bloomskip.expr.bind import referenced
from bloomskip.expr.expressions import BoundReference, Expression
from bloomskip.index.evidence import Universe, column_evidence
from bloomskip.index.known import KnownValues
from bloomskip.index.known import prune as prune_known
from bloomskip.index.layout import (
    ColumnIndex,
)
from bloomskip.index.results import EMPTY, FileCandidate, QueryResult
from bloomskip.index.zonedata import KEY_SHIFT, ColumnData
from bloomskip.prune.engine import Pruner
from bloomskip.prune.evidence import ColumnEvidence, Proof


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` by a sort and a neighbour test (its hash table is ~20x slower on
    sorted runs of uint64 keys)."""
    a = np.sort(a)
    first = np.ones(a.shape[0], dtype=np.bool_)  # also right for an empty array
    first[1:] = a[1:] != a[:-1]
    return a[first]


def _own_universe(data: ColumnData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The files, zone keys and each zone's file position of one column's zones, made
    once per loaded column (a warm lookup does not redo them)."""
    if data.universe is None:
        fragment = data.key >> KEY_SHIFT  # sorted, as the keys are
        first = np.ones(fragment.shape[0], dtype=np.bool_)
        first[1:] = fragment[1:] != fragment[:-1]
        data.universe = (fragment[first], data.key, np.cumsum(first, dtype=np.int64) - 1)
    return data.universe


def _own(data: ColumnData | None) -> np.ndarray | None:
    return data.universe[0] if data is not None and data.universe is not None else None


def _zones_per_file(zfile: np.ndarray, n: int, data: ColumnData | None) -> np.ndarray:
    """Per file (position): how many zones of the universe it has - kept with ``data``
    when its zones are the universe (read-only)."""
    got = data._derived.get("zones_per_file") if data is not None else None
    if got is None:
        got = np.bincount(zfile, minlength=n)
        if data is not None:
            got.flags.writeable = False
            data._derived["zones_per_file"] = got
    return got


@dataclass
class Decided:
    """Per candidate file (fragment id): its candidate zones (None: the whole file) and
    why; the files ruled out, as arrays (a lookup over a large lake rules out most of its
    files: no per-file Python object for them)."""

    candidates: dict[int, tuple[list[tuple[int, int]] | None, str]] = field(default_factory=dict)
    skipped: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # fids
    by_file_filter: np.ndarray = field(default_factory=lambda: np.zeros(0, np.bool_))
    #: Ruled out by a table's partition values (None: none were used).
    by_partition: np.ndarray | None = None
    #: The predicate itself cannot match (a literal no value of its column can equal,
    #: ``FALSE``): every ruled-out file is, whatever else the index holds.
    impossible: bool = False
    zones_total: int = 0
    zones_candidate: int = 0

    def _why(self) -> np.ndarray:
        """Per ruled-out file: 0 every zone ruled out, 1 file filter, 2 partition values,
        3 the predicate cannot match."""
        if self.impossible:
            return np.full(self.skipped.shape[0], 3, np.int8)
        why = self.by_file_filter.astype(np.int8)
        if self.by_partition is not None:
            why[self.by_partition] = 2
        return why

    def reasons(self) -> dict[str, int]:
        """How many files were ruled out, by reason."""
        counts = np.bincount(self._why(), minlength=len(_WHY))
        return {_WHY[k]: int(v) for k, v in enumerate(counts) if v}

    def skipped_reasons(self) -> list[str]:
        """Why each file of :attr:`skipped` was ruled out, in that order."""
        return _WHY_NAMES[self._why()].tolist()

    def skipped_items(self) -> dict[int, str]:
        """Each ruled-out file and why (for callers that name them all)."""
        return {
            int(f): _WHY[w]
            for f, w in zip(self.skipped.tolist(), self._why().tolist(), strict=True)
        }


_WHY = ("every zone ruled out", "file filter", "partition values", "predicate cannot match")
_WHY_NAMES = np.array(_WHY, dtype=object)


def decide(
    bound: Expression,
    fids: np.ndarray | None,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], ColumnData],
    max_in_fpp: float,
    notes: list[str],
    all_fids: Callable[[], np.ndarray] | None = None,
    known: KnownValues | None = None,
) -> Decided:
    """Decide the files ``fids`` (sorted uint64) for ``bound`` with the pruning engine over
    the files and the zones ``load(column)`` returns (``columns`` says how each column is
    hashed). ``fids`` None: every file the index holds - those with zones of a referenced
    column, those that column could not be indexed for, and (``all_fids``) every file
    when the predicate holds nothing the index answers. ``known``: per file of ``fids`` (in that
    order), the values of a table's partition columns, decided in the same tree."""
    out = Decided()
    out.impossible = _impossible(bound, notes)
    cols = [r.name for r in referenced(bound) if r.name in columns]
    partitions = known is not None and fids is not None and known.uses(bound)
    if not cols:
        everything = fids if fids is not None else (all_fids() if all_fids else np.zeros(0))
        may = np.ones(everything.shape[0], np.bool_)
        if partitions:
            n = everything.shape[0]
            may = prune_known(bound, known, n, np.arange(n), notes=notes)
        out.skipped = everything[~may].astype(np.uint64)
        out.by_file_filter = np.zeros(out.skipped.shape[0], np.bool_)
        out.by_partition = np.ones(out.skipped.shape[0], np.bool_)
        for fid in everything[may].tolist():
            out.candidates[int(fid)] = (None, "nothing the index answers")
        if not partitions:
            notes.append(
                f"{bound}: nothing the index answers (=, IN and IS [NOT] NULL on "
                f"{', '.join(columns)})"
            )
        return out
    data = {c: load(c) for c in cols}
    only = data[cols[0]] if len(cols) == 1 and not columns[cols[0]].failed else None
    if fids is None and only is not None:  # one column's zones are the universe
        fids, keys, zfile = _own_universe(only)
    else:
        if fids is None:  # every file the index holds for these columns
            parts = [d.fragment for d in data.values()]
            parts += [np.array(columns[c].failed, dtype=np.uint64) for c in cols]
            fids = _sorted_unique(np.concatenate(parts))
        # The zone universe: every zone any referenced column holds for these files.
        if len(data) == 1:
            keys = next(iter(data.values())).key  # sorted and unique already
        else:
            keys = _sorted_unique(np.concatenate([d.key for d in data.values()]))
        keys = keys[np.isin(keys >> KEY_SHIFT, fids)]
        zfile = np.searchsorted(fids, keys >> KEY_SHIFT).astype(np.int64)
    universe = Universe(fids, keys, zfile, max_in_fpp, notes)
    evidence = {c: column_evidence(columns[c], data[c], universe) for c in cols}
    rules = _IndexRules(columns, universe)

    nfiles = fids.shape[0]

    def files_of(ref: BoundReference) -> ColumnEvidence:
        if ref.name in evidence:
            return evidence[ref.name][0]
        if partitions and ref.name in known:
            return known.evidence(ref.name, np.arange(nfiles))
        return rules.unindexed(ref)

    def zones_of(ref: BoundReference) -> ColumnEvidence:
        if ref.name in evidence:
            return evidence[ref.name][1]
        if partitions and ref.name in known:
            return known.evidence(ref.name, zfile)
        return rules.unindexed(ref)

    file_may = Pruner(nfiles, files_of, reasons=False, notes=notes).decide(bound).may
    zone_may = Pruner(keys.shape[0], zones_of, reasons=False, notes=notes).decide(bound).may
    part_may = (
        prune_known(bound, known, nfiles, np.arange(nfiles)) if partitions else None
    )  # why a file is ruled out: its partition values alone
    out.zones_total = int(keys.shape[0])
    out.zones_candidate = int(np.count_nonzero(zone_may))
    # Per file: its candidate zones. A file without zones in the universe is not indexed
    # for any referenced column: a candidate in full (unless empty).
    n = fids.shape[0]
    zones_of_file = _zones_per_file(zfile, n, only if fids is _own(only) else None)
    hit = np.flatnonzero(zone_may)  # ascending, so grouped by file (zfile is sorted)
    hit_file = zfile[hit]
    hits = np.bincount(hit_file, minlength=n)
    ruled_out = (zones_of_file > 0) & (hits == 0)
    by_partition = np.zeros(n, np.bool_)
    if part_may is not None:  # a file without zones is decided by its partition values
        by_partition = ~part_may | ((zones_of_file == 0) & ~file_may)
        ruled_out |= by_partition
    out.skipped = fids[ruled_out]
    out.by_partition = by_partition[ruled_out]
    out.by_file_filter = ~file_may[ruled_out] & ~out.by_partition
    keep = np.flatnonzero(~ruled_out)
    ranges = _zone_ranges(keys[hit], hit, data, evidence)  # every candidate zone at once
    lo = np.searchsorted(hit_file, keep, side="left").tolist()
    hi = np.searchsorted(hit_file, keep, side="right").tolist()
    counts = zones_of_file[keep].tolist()
    for fid, a, b, total in zip(fids[keep].tolist(), lo, hi, counts, strict=True):
        if total == 0:
            out.candidates[fid] = (None, f"not indexed for {', '.join(cols)}")
            continue
        out.candidates[fid] = (ranges[a:b], f"{b - a} of {total} zones may match")
    return out


def evaluate(
    bound: Expression,
    indexed: list[dict[str, Any]],
    res: QueryResult,
    max_in_fpp: float,
    columns: dict[str, ColumnIndex],
    load: Callable[[str], ColumnData],
    uri_of: Callable[[str], str],
) -> None:
    """Fill ``res`` with the candidates among ``indexed`` (fragment rows: ``fragment_id``,
    ``path``, ``num_rows``, sorted by ``fragment_id``) for ``bound`` (:func:`decide`).
    Readers of other zone tables use it (:mod:`bloomskip.lance`), so every index
    answers with the same rules."""
    fids = np.array([r["fragment_id"] for r in indexed], dtype=np.uint64)
    res.rows_total = sum(r["num_rows"] for r in indexed) + sum(f.num_rows or 0 for f in res.files)
    decided = decide(bound, fids, columns, load, max_in_fpp, res.notes)
    skipped = decided.skipped_items()
    res.skip_reasons = decided.reasons()
    for r in indexed:
        fid, path = int(r["fragment_id"]), uri_of(r["path"])
        if fid in skipped:
            res.skipped.append((path, skipped[fid]))
            continue
        zones, why = decided.candidates[fid]
        if zones is None and r["num_rows"] == 0:
            res.skipped.append((path, EMPTY))
            continue
        res.files.append(FileCandidate(path, why, r["num_rows"], zones, fid))
    res.zones_total, res.zones_candidate = decided.zones_total, decided.zones_candidate


def _impossible(bound: Expression, notes: list[str]) -> bool:
    """Whether ``bound`` cannot match any row whatever the data: decided with no evidence
    at all (only its literals, converted to their columns' types, and ``TRUE``/``FALSE``);
    ``notes`` is told why. Files it rules out are then not the filters' doing."""
    verdict = Pruner(1, lambda ref: ColumnEvidence(ref.name), notes=[]).decide(bound)
    if verdict.may[0]:
        return False
    why = verdict.why[0] if verdict.why else None
    text = f"no row can match: {why}" if why else f"{bound}: no row can match"
    if text not in notes:
        notes.append(text)
    return True


class _IndexRules:
    """Notes for what the index does not answer: a column it does not index."""

    def __init__(self, columns: dict[str, ColumnIndex], universe: Universe) -> None:
        self.columns, self.universe = columns, universe

    def unindexed(self, ref: BoundReference) -> ColumnEvidence:
        self.universe.note(f"{ref.name} is not indexed: conditions on it may match")
        return _Unindexed(ref.name)


class _Unindexed(ColumnEvidence):
    """A column the index does not hold: every unit may match every condition."""

    def blocked(self, units: np.ndarray) -> Proof:
        return Proof(np.ones(units.shape[0], np.bool_), f"{self.name} is not indexed")


def _zone_ranges(
    keys: np.ndarray, hit: np.ndarray, data: dict[str, ColumnData], evidence: dict
) -> list[tuple[int, int]]:
    """(start, length) of candidate zones, lengths from any column holding each zone."""
    starts = (keys & np.uint64((1 << 40) - 1)).astype(np.int64)
    lengths = np.zeros(hit.shape[0], np.int64)
    found = np.zeros(hit.shape[0], np.bool_)
    for c, d in data.items():
        rows = evidence[c][1].c.zrow[hit]
        ok = (rows >= 0) & ~found
        lengths[ok] = d.length[rows[ok]].astype(np.int64)
        found |= ok
    return list(zip(starts.tolist(), lengths.tolist(), strict=True))


__all__ = ["Decided", "decide", "evaluate"]
