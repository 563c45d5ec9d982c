"""Columns whose value is known for every row of a file - a table's identity partition
columns - as evidence for the pruning engine, so partition pruning and bloom pruning are
decided in one predicate tree.

A table source gives, per data file, the value every row of it holds in each partition
column (:meth:`bloomskip.sources.Source.partition_values`). :class:`KnownValues` holds
them per *slot* (a file of a query's universe), converted once to the type the
predicate was bound with; :meth:`KnownValues.evidence` places them over units (files,
or zones: a zone holds its file's value):

* ``IS NULL`` cannot match where the value is not null; ``IS NOT NULL`` and every
  comparison cannot match where it is null;
* ``=`` / ``IN``: one stage, exact - a unit is ruled out when its value equals none of
  the literal's candidate values (Arrow's own equality, ``pyarrow.compute.is_in``), and
  proven present (may match, stop) when it equals one.

A value that does not convert to the bound type, or a column of a type whose equality is
not exact (floating point), gives no evidence: may match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bloomskip.expr.expressions import BoundReference, Expression
from bloomskip.expr.literals import Values, to_arrow
from bloomskip.prune.engine import Pruner
from bloomskip.prune.evidence import ColumnEvidence, Findings, Proof, Status


class KnownValues:
    """Per column, the value of each slot (file), as Arrow arrays of the bound types."""

    def __init__(self, values: Mapping[str, pa.Array], types: Mapping[str, pa.DataType]) -> None:
        self.values: dict[str, pa.Array] = {}
        for name, arr in values.items():
            t = types.get(name)
            if t is None or pa.types.is_floating(t) or pa.types.is_nested(t):
                continue
            try:
                self.values[name] = arr if arr.type == t else arr.cast(t, safe=True)
            except (pa.ArrowException, ValueError):
                continue  # a value of another type: no evidence

    def __bool__(self) -> bool:
        return bool(self.values)

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def take(self, slots: np.ndarray) -> KnownValues:
        """The values of the slots ``slots``, in that order."""
        out = KnownValues({}, {})
        idx = pa.array(np.asarray(slots, dtype=np.int64))
        out.values = {n: a.take(idx) for n, a in self.values.items()}
        return out

    def evidence(self, name: str, unit_slot: np.ndarray) -> ColumnEvidence:
        """The column ``name`` over units, unit ``i`` holding slot ``unit_slot[i]``'s value."""
        return _KnownEvidence(name, self.values[name], unit_slot)

    def uses(self, bound: Expression) -> bool:
        from bloomskip.expr.bind import referenced

        return any(r.name in self.values for r in referenced(bound))


class _KnownEvidence(ColumnEvidence):
    def __init__(self, name: str, values: pa.Array, unit_slot: np.ndarray) -> None:
        super().__init__(name)
        self.arr = values
        self.slot = np.asarray(unit_slot, dtype=np.int64)
        self.null = values.is_null().to_numpy(zero_copy_only=False).astype(np.bool_)
        self.stages = (_Equal(self),)

    def no_nulls(self, units: np.ndarray) -> Proof:
        return Proof(~self.null[self.slot[units]], f"{self.name}: partition value not null")

    def only_nulls(self, units: np.ndarray) -> Proof:
        return Proof(self.null[self.slot[units]], f"{self.name}: partition value null")


class _Equal:
    """Is the unit's value one of the candidates? Exact, so it also proves presence."""

    def __init__(self, ev: _KnownEvidence) -> None:
        self.ev = ev

    def test(self, values: Values, units: np.ndarray) -> Findings:
        n = units.shape[0]
        try:
            wanted = to_arrow(values.values, self.ev.arr.type)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return Findings.same(n, Status.UNAVAILABLE, "partition values not comparable")
        slots = self.ev.slot[units]
        hit = pc.is_in(self.ev.arr, value_set=wanted).fill_null(False)
        hit = hit.to_numpy(zero_copy_only=False).astype(np.bool_)[slots]
        status = np.where(hit, Status.INCLUDED, Status.EXCLUDED).astype(np.uint8)
        return Findings(status, "partition value")


def prune(
    bound: Expression,
    known: KnownValues,
    size: int,
    unit_slot: np.ndarray,
    others: Callable[[BoundReference], ColumnEvidence] | None = None,
    notes: list[str] | None = None,
) -> np.ndarray:
    """Which of ``size`` units may match ``bound`` from the known values alone (and
    ``others`` for the other columns; default: they may hold anything)."""

    def evidence(ref: BoundReference) -> ColumnEvidence:
        if ref.name in known:
            return known.evidence(ref.name, unit_slot)
        return others(ref) if others is not None else ColumnEvidence(ref.name)

    return (
        Pruner(size, evidence, reasons=False, notes=notes if notes is not None else [])
        .decide(bound)
        .may
    )


__all__ = ["KnownValues", "prune"]
