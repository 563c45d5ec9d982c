"""Which rows of a candidate may match: the pruning engine run over rows, each row's own
hash its evidence.

A zone index answers with zones: ranges of thousands of rows, of which a point lookup
wants a few. Once a reader holds a zone's rows, the index's rule can be applied to each
row exactly: a row whose value hashes (as the index hashed it) to none of the literals'
hashes cannot equal any of them, just as a zone whose filter holds none of those hashes
cannot. Row by row there is no false positive of a filter to allow for, only equal
hashes, so this keeps the rows that match plus the rare row whose value shares a
64-bit hash with a literal. The reader still applies the predicate itself to what is
kept: a :class:`RowFilter` only drops rows that cannot match.

The decision is :mod:`bloomskip.prune.engine`'s, over the same bound, NOT-free tree as
the zones: per row, ``IS NULL`` / ``IS NOT NULL`` from the row's null bit, ``=`` / ``IN``
from its hash; a condition the index does not answer, a column it does not hold, and a
column whose values do not convert exactly to the index's type may match.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bloomskip.errors import BloomskipError
from bloomskip.expr.bind import referenced
from bloomskip.expr.expressions import Expression
from bloomskip.expr.literals import Values
from bloomskip.hashing import hash_values
from bloomskip.index.evidence import literal_hashes
from bloomskip.index.layout import ColumnIndex
from bloomskip.prune.engine import Pruner
from bloomskip.prune.evidence import ColumnEvidence, Findings, Proof, Status, Unavailable


class RowFilter:
    """The rows of a table that may match ``bound`` (an expression bound to the index's
    schema, as :meth:`ZoneIndex.query` binds it) by the index's ``columns``."""

    def __init__(
        self, bound: Expression, columns: dict[str, ColumnIndex], max_in_fpp: float
    ) -> None:
        self.bound = bound
        self.max_in_fpp = max_in_fpp
        names = {r.name for r in referenced(bound)}
        self.columns = {n: c for n, c in columns.items() if n in names}
        self.notes: list[str] = []

    @property
    def needs(self) -> list[str]:
        """The columns :meth:`may` reads from a table (those it has are used)."""
        return sorted(self.columns)

    def may(self, table: pa.Table) -> np.ndarray:
        """Per row of ``table``: may it match (bool array)?"""
        n = table.num_rows
        found: dict[str, ColumnEvidence] = {}

        def evidence(ref) -> ColumnEvidence:
            ev = found.get(ref.name)
            if ev is None:
                spec = self.columns.get(ref.name)
                if spec is None or ref.name not in table.column_names:
                    ev = _Unknown(ref.name)
                else:
                    ev = _RowEvidence(spec, table.column(ref.name), self)
                found[ref.name] = ev
            return ev

        return Pruner(n, evidence, reasons=False, notes=self.notes).decide(self.bound).may

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


class _Unknown(ColumnEvidence):
    """A column the index does not answer for: every row may match every condition."""

    def blocked(self, units: np.ndarray) -> Proof:
        return Proof(np.ones(units.shape[0], np.bool_), f"{self.name} is not indexed")


class _RowEvidence(ColumnEvidence):
    """One column over the rows of a table: each row's null bit and hash."""

    def __init__(self, spec: ColumnIndex, column: pa.ChunkedArray, owner: RowFilter) -> None:
        super().__init__(spec.name)
        self.spec, self.owner = spec, owner
        self.stages = [self]
        n = len(column)
        # Null or not is a fact of the row as read, whether or not its value converts.
        self.valid = np.ones(n, np.bool_)
        if column.null_count:
            self.valid = column.is_valid().to_numpy(zero_copy_only=False)
        self.hash: np.ndarray | None = None  # per row; None: values not hashed (blocked)
        try:
            if column.type != spec.arrow_type:
                column = column.cast(spec.arrow_type, safe=True)
            hashes = hash_values(column, physical=spec.physical, encoding=spec.encoding)
        except (BloomskipError, pa.ArrowException, ValueError, OverflowError) as e:
            owner.note(f"{spec.name}: values not hashed as the index does ({e}); may match")
            return
        if hashes.shape[0] != int(self.valid.sum()):  # one hash per non-null value
            owner.note(f"{spec.name}: {hashes.shape[0]} hashes for {n} rows; may match")
            return
        self.hash = np.zeros(n, np.uint64)
        self.hash[self.valid] = hashes

    def blocked(self, units: np.ndarray) -> Proof:
        return Proof(np.full(units.shape[0], self.hash is None), f"{self.name} not hashed")

    def no_nulls(self, units: np.ndarray) -> Proof:
        return Proof(self.valid[units], "the row's value is not null")

    def only_nulls(self, units: np.ndarray) -> Proof:
        return Proof(~self.valid[units], "the row's value is null")

    def test(self, values: Values, units: np.ndarray) -> Findings:
        h = literal_hashes(self.spec, values, self.owner.max_in_fpp, self.owner.note)
        if isinstance(h, Unavailable) or self.hash is None:
            return Findings.same(units.shape[0], Status.UNAVAILABLE, "not hashed")
        hit = np.isin(self.hash[units], h) | ~self.valid[units]
        status = np.where(hit, Status.INCONCLUSIVE, Status.EXCLUDED).astype(np.uint8)
        return Findings(status, "the row's hash")


__all__ = ["RowFilter"]
