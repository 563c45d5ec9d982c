"""What a format tells the pruning engine about its units: typed evidence, never booleans.

A *unit* is what a reader can skip: a Parquet row group, an ORC row group (or stripe), a
zone of the zone index. The engine (:mod:`.engine`) decides many units at once; for each
column a predicate uses, the format hands it a :class:`ColumnEvidence` over those units:

* facts about nulls - units proven to hold no null, or only nulls (:class:`Proof`);
* optionally, *coarse* stages: evidence over groups of units, asked first, that can
  only rule values out (ORC stripe statistics for a stripe's row groups);
* *stages* of value evidence, cheapest first (statistics, dictionary, bloom filter; file
  filter, zone filter): each tests the candidate values of a literal against the units
  it is asked about and answers, per unit, with a :class:`Status` and a reason;
* for ``!=`` / ``NOT IN``: units proven to hold one value only, equal to a literal.

Evidence a unit does not have is a typed value too: :class:`Unavailable` (with why) in a
format's own code, :attr:`Status.UNAVAILABLE` in a stage's answer. No status is ever a
boolean to negate: "cannot rule out" and "proven present" both mean *may match*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol

import numpy as np

from bloomskip.expr.expressions import LiteralPredicate
from bloomskip.expr.literals import Values

#: A reason: one text for every unit asked about, or one text per unit.
Why = str | Sequence[str]


def why_at(why: Why, i: int) -> str:
    """The reason of the ``i``-th unit asked about."""
    return why if isinstance(why, str) else why[i]


class Status(IntEnum):
    """One stage's answer for one unit and the candidate values of one literal."""

    UNAVAILABLE = 0  #: no evidence here (none stored, not trusted, unreadable): go on
    INCONCLUSIVE = 1  #: evidence consulted, a value may be there: go on
    EXCLUDED = 2  #: proven: none of the values is in the unit - it cannot match
    INCLUDED = 3  #: present, or in doubt with no later stage allowed: it may match, stop


class ProbeStatus(StrEnum):
    """What ``probe`` answers for a value in a unit (compares equal to its text)."""

    ABSENT = "absent"
    MAYBE = "maybe"
    NO_FILTER = "no filter"


@dataclass(frozen=True)
class Unavailable:
    """Evidence a unit does not have, and why (a filter that is absent, invalid or
    untrusted, a dictionary in a codec bloomskip does not decode, a locked column)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Findings:
    """A stage's answer for the units it was asked about, in their order."""

    status: np.ndarray  # uint8, a Status per unit
    why: Why

    @staticmethod
    def same(n: int, status: Status, why: str) -> Findings:
        """The same answer for ``n`` units."""
        return Findings(np.full(n, status, dtype=np.uint8), why)


@dataclass(frozen=True)
class Proof:
    """Units for which a fact is proven (``proven``), and per unit why or why not."""

    proven: np.ndarray  # bool per unit asked about
    why: Why

    @staticmethod
    def none(n: int, why: str) -> Proof:
        return Proof(np.zeros(n, dtype=np.bool_), why)


class Stage(Protocol):
    """One kind of value evidence (statistics, a dictionary, a bloom filter...)."""

    def test(self, values: Values, units: np.ndarray) -> Findings:
        """May any of ``values`` (one literal's candidates, or every candidate of an IN
        list) be in each of ``units`` (indexes into the batch, ascending)?"""
        ...


class ColumnEvidence:
    """What a format knows of one column over a batch of units. The defaults know
    nothing: every unit may hold nulls, values, anything; subclasses override what
    their format can prove."""

    #: Evidence over groups of units (an ORC stripe's statistics for its row groups),
    #: asked first for ``=`` and ``IN``: only its EXCLUDED answers count, so a group it
    #: rules out is never looked at unit by unit (no row index read).
    coarse: Sequence[Stage] = ()
    #: Value evidence, cheapest first, for ``=`` and ``IN``.
    stages: Sequence[Stage] = ()
    #: The evidence ``probe`` asks (usually the bloom filter alone).
    probe_stages: Sequence[Stage] = ()

    def __init__(self, name: str) -> None:
        self.name = name

    def blocked(self, units: np.ndarray) -> Proof:
        """Units where nothing about the column may be used (a column inside a list,
        a locked column): every predicate but ``IS NULL`` may match there."""
        return Proof.none(units.shape[0], "")

    def no_nulls(self, units: np.ndarray) -> Proof:
        """Units proven to hold no null of the column (``IS NULL`` cannot match)."""
        return Proof.none(units.shape[0], f"{self.name} may be null")

    def only_nulls(self, units: np.ndarray) -> Proof:
        """Units proven to hold nothing but nulls (no comparison can be true)."""
        return Proof.none(units.shape[0], f"{self.name} may be non-null")

    def all_equal(self, p: LiteralPredicate, units: np.ndarray) -> Proof:
        """Units proven to hold a single non-null value equal to one of the literals of
        ``p`` (a bound ``!=`` / ``NOT IN``), so ``p`` cannot be true there."""
        return Proof.none(
            units.shape[0], f"{self.name} != ...: only all-equal statistics could rule it out"
        )


__all__ = [
    "ColumnEvidence",
    "Findings",
    "ProbeStatus",
    "Proof",
    "Stage",
    "Status",
    "Unavailable",
    "Why",
    "why_at",
]
