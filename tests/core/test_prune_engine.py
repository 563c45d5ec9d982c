"""The pruning engine on its own: no false negatives, whatever evidence a format supplies.

Units hold small lists of values (ints or NULL) for two columns. The evidence is backed
by that data and exact where it answers - no null proven only where there is none, a
value excluded only where it is absent - but hypothesis degrades it at random (a stage
unavailable or inconclusive, a unit blocked), as real formats are: filters missing,
statistics unusable, columns locked. The truth is the predicate evaluated row by row in
SQL's three-valued logic; every unit holding a row where it is TRUE must may match.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomskip.expr import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Column,
    EqualTo,
    In,
    IsNull,
    Literal,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
    Reference,
    Unsupported,
    bind,
)
from bloomskip.expr.literals import Values
from bloomskip.prune import ColumnEvidence, Findings, Proof, Pruner, Status
from bloomskip.prune.engine import overall, probe
from bloomskip.prune.evidence import ProbeStatus

COLUMNS = ("a", "b")
VALUES = st.one_of(st.none(), st.integers(0, 3))
LITERALS = st.one_of(
    st.integers(0, 4).map(lambda v: Literal("number", v)), st.just(Literal("null", None))
)


def leaves():
    ref = st.sampled_from(COLUMNS).map(Reference)
    many = st.lists(LITERALS, min_size=1, max_size=3).map(tuple)
    return st.one_of(
        st.builds(EqualTo, ref, LITERALS),
        st.builds(NotEqualTo, ref, LITERALS),
        st.builds(In, ref, many),
        st.builds(NotIn, ref, many),
        st.builds(IsNull, ref),
        st.builds(NotNull, ref),
        st.just(Unsupported("a < 1")),
        st.just(AlwaysTrue()),
        st.just(AlwaysFalse()),
    )


TREES = st.recursive(
    leaves(),
    lambda kids: st.one_of(
        st.builds(And, kids, kids), st.builds(Or, kids, kids), st.builds(Not, kids)
    ),
    max_leaves=10,
)


def truth(e, row: dict, rng) -> bool | None:
    """SQL three-valued logic over one row (Unsupported: any value, drawn per row)."""
    if isinstance(e, And):
        x, y = truth(e.left, row, rng), truth(e.right, row, rng)
        return False if False in (x, y) else (True if x is y is True else None)
    if isinstance(e, Or):
        x, y = truth(e.left, row, rng), truth(e.right, row, rng)
        return True if True in (x, y) else (False if x is y is False else None)
    if isinstance(e, Not):
        x = truth(e.child, row, rng)
        return None if x is None else not x
    if isinstance(e, AlwaysTrue | AlwaysFalse):
        return isinstance(e, AlwaysTrue)
    if isinstance(e, Unsupported):
        return rng.choice([True, False, None])
    v = row[e.term.name]
    if isinstance(e, IsNull | NotNull):
        return (v is None) == isinstance(e, IsNull)
    lits = [lit.value for lit in e.literals]
    if v is None:
        return None
    hit = v in [x for x in lits if x is not None]
    unknown = None in lits
    if isinstance(e, EqualTo | In):
        return True if hit else (None if unknown else False)
    return False if hit else (None if unknown else True)


class DataEvidence(ColumnEvidence):
    """Exact where it answers, degraded by ``noise`` (per unit: 0 exact, 1 unavailable,
    2 inconclusive, 3 blocked)."""

    def __init__(self, name: str, units: list[list[int | None]], noise: list[int]) -> None:
        super().__init__(name)
        self.units, self.noise = units, noise
        self.stages = [self._Stage(self)]
        self.probe_stages = self.stages

    def blocked(self, units: np.ndarray) -> Proof:
        return Proof(np.array([self.noise[u] == 3 for u in units], bool), "blocked")

    def no_nulls(self, units: np.ndarray) -> Proof:
        ok = [self.noise[u] == 0 and None not in self.units[u] for u in units]
        return Proof(np.array(ok, bool), "no nulls")

    def only_nulls(self, units: np.ndarray) -> Proof:
        ok = [self.noise[u] == 0 and all(v is None for v in self.units[u]) for u in units]
        return Proof(np.array(ok, bool), "only nulls")

    def all_equal(self, p, units: np.ndarray) -> Proof:
        lits = {v for c in p.conversions if isinstance(c, Values) for v in c.values}
        out = []
        for u in units:
            vals = {v for v in self.units[u] if v is not None}
            out.append(self.noise[u] == 0 and len(vals) == 1 and vals <= lits)
        return Proof(np.array(out, bool), "all equal")

    class _Stage:
        def __init__(self, ev: DataEvidence) -> None:
            self.ev = ev

        def test(self, values: Values, units: np.ndarray) -> Findings:
            status = []
            for u in units:
                present = any(v in values.values for v in self.ev.units[u])
                noise = self.ev.noise[u]
                if noise == 1:
                    status.append(Status.UNAVAILABLE)
                elif noise == 2 or present:
                    status.append(
                        Status.INCLUDED if present and noise == 0 else Status.INCONCLUSIVE
                    )
                else:
                    status.append(Status.EXCLUDED)
            return Findings(np.array(status, np.uint8), "data")


@st.composite
def batches(draw):
    n = draw(st.integers(1, 6))
    rows = [
        [{c: draw(VALUES) for c in COLUMNS} for _ in range(draw(st.integers(0, 4)))]
        for _ in range(n)
    ]
    noise = {c: [draw(st.sampled_from([0, 0, 0, 1, 2, 3])) for _ in range(n)] for c in COLUMNS}
    return rows, noise


@settings(max_examples=400)
@given(TREES, batches(), st.randoms(use_true_random=False), st.booleans())
def test_a_unit_holding_a_matching_row_always_may_match(tree, batch, rng, reasons):
    rows, noise = batch
    schema = {c: Column(pa.int64(), c) for c in COLUMNS}
    bound = bind(tree, schema)
    evidence = {
        c: DataEvidence(c, [[r[c] for r in unit] for unit in rows], noise[c]) for c in COLUMNS
    }
    live = np.array([bool(unit) for unit in rows])
    verdict = Pruner(len(rows), lambda ref: evidence[ref.name], reasons=reasons).decide(bound, live)
    for u, unit in enumerate(rows):
        if any(truth(tree, row, rng) is True for row in unit):
            assert verdict.may[u], (str(tree), u, unit, verdict.why)
        if reasons and live[u]:
            assert verdict.why[u], (str(tree), u)
        if not live[u]:
            assert not verdict.may[u]


@given(st.lists(st.lists(VALUES, max_size=4), min_size=1, max_size=5), st.data())
def test_probe_never_calls_a_present_value_absent(units, data):
    noise = data.draw(
        st.lists(st.sampled_from([0, 1, 2]), min_size=len(units), max_size=len(units))
    )
    ev = DataEvidence("a", units, noise)
    lits = tuple(Literal("number", v) for v in range(4))
    leaf = bind(In(Reference("a"), lits), {"a": Column(pa.int64(), "a")})
    answers = probe(ev, leaf, np.arange(len(units)))
    for u, answer in enumerate(answers):
        for v, (status, _) in zip(range(4), answer, strict=True):
            if v in units[u]:
                assert status is not ProbeStatus.ABSENT, (u, v, answer)
        statuses = [s for s, _ in answer]
        if any(v in units[u] for v in range(4)):
            assert overall(statuses) is not ProbeStatus.ABSENT
