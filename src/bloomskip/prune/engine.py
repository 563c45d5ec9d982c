"""The one pruning engine: which units may hold rows matching a bound predicate, and why.

Parquet row groups, ORC row groups and stripes, zone index zones and Lance's zones are
all decided here. A format supplies only evidence (:mod:`.evidence`): per column, facts
about nulls and stages of value evidence over a batch of units. The engine walks the
bound, NOT-free predicate tree (a visitor, after pyiceberg's inclusive metrics
evaluator) and answers with a :class:`Verdict` - per unit, *may match* or *cannot
match*, and the reason - for the whole batch at once:

==========================  ===========================================================
``AND``                     cannot match where either side cannot; the right side is
                            asked only about the units the left side kept
``OR``                      cannot match only where both sides cannot; the right side is
                            asked only about the units the left side ruled out
``TRUE`` / ``FALSE``        may / cannot match
unsupported condition       may match (a range, LIKE, a function...)
``col IS NULL``             cannot match where no null is proven
``col IS NOT NULL``         cannot match where only nulls are proven
``col = v``, ``IN (...)``   the candidate values of every literal together (a literal no
                            value of the column can equal drops out; one bloomskip cannot
                            convert makes the leaf may match): cannot match where coarse
                            evidence rules the values out for a whole group of units (ORC
                            stripe statistics), or where only nulls are proven, else the
                            stages in order, each asked only about the units still
                            undecided, until one rules the values out (cannot match) or
                            proves one present (may match)
``col != v``, ``NOT IN``    cannot match where only nulls are, or where the only value is
                            proven equal to a literal; never from a filter
anything blocked            may match (a column inside a list, a locked column)
==========================  ===========================================================

NOT is rewritten away at binding, so no answer is ever negated: a "may match" is not a
boolean, and negating it is how pruning drops rows that match.

Reasons are kept per unit when asked for (``reasons=True``: ``prune`` reports them);
the zone index decides millions of zones with arrays alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bloomskip.expr.expressions import (
    POSITIVE,
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundReference,
    Expression,
    IsNull,
    LiteralPredicate,
    NotNull,
    Or,
    Predicate,
    Unsupported,
)
from bloomskip.expr.literals import NoMatch, Unknown, Values
from bloomskip.prune.evidence import (
    ColumnEvidence,
    ProbeStatus,
    Status,
    Why,
    why_at,
)

_MAX_REASON = 400


#: Statuses as numpy scalars: an array compared with an IntEnum member takes numpy's
#: slow path for Python objects (8x slower over a lookup's 260,000 zones).
_EXCLUDED, _INCLUDED = np.uint8(Status.EXCLUDED), np.uint8(Status.INCLUDED)


@dataclass
class Verdict:
    """Per unit of the batch: may it match, and why (None where not asked, or without
    reasons)."""

    may: np.ndarray  # bool
    why: list[str | None] | None


def candidates(p: LiteralPredicate) -> tuple[Values | None, list[str], str | None]:
    """The values a bound ``=`` / ``IN`` leaf can equal, all literals together:
    ``(values or None if none is left, reasons of the literals that drop out, the
    reason a literal cannot be decided)``."""
    name = p.term.name
    found: list = []
    exact = True
    dropped: list[str] = []
    for lit, conv in zip(p.literals, p.conversions, strict=True):
        if isinstance(conv, Unknown):
            return None, dropped, f"{name} = {lit}: {conv.reason}"
        if isinstance(conv, NoMatch):
            dropped.append(f"{name} = {lit}: {conv.reason}")
            continue
        found.extend(conv.values)
        exact = exact and conv.exact
    return (Values(tuple(found), exact) if found else None), dropped, None


class Pruner:
    """Decides a batch of ``size`` units; ``evidence(column)`` gives a column's
    :class:`~.evidence.ColumnEvidence` over the batch (asked once per column).
    ``notes`` collects remarks that hold for the whole batch (a condition not used)."""

    def __init__(
        self,
        size: int,
        evidence: Callable[[BoundReference], ColumnEvidence],
        *,
        reasons: bool = True,
        notes: list[str] | None = None,
    ) -> None:
        self.size = size
        self._evidence_of = evidence
        self._columns: dict[str, ColumnEvidence] = {}
        self.reasons = reasons
        self.notes = notes if notes is not None else []

    def evidence(self, term: BoundReference) -> ColumnEvidence:
        ev = self._columns.get(term.name)
        if ev is None:
            ev = self._columns[term.name] = self._evidence_of(term)
        return ev

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # -- the tree -----------------------------------------------------------------

    def decide(self, expr: Expression, live: np.ndarray | None = None) -> Verdict:
        """The verdict of every unit for ``expr`` (bound, NOT-free). Units outside
        ``live`` (a bool mask) are not looked at: they get ``may`` False and no reason."""
        if live is None:
            live = np.ones(self.size, dtype=np.bool_)
        if isinstance(expr, And):
            left = self.decide(expr.left, live)
            right = self.decide(expr.right, live & left.may)
            return self._combine(left, right, live, both=True)
        if isinstance(expr, Or):
            left = self.decide(expr.left, live)
            right = self.decide(expr.right, live & ~left.may)
            return self._combine(left, right, live, both=False)
        idx = np.flatnonzero(live)
        if isinstance(expr, AlwaysTrue):
            return self._verdict(idx, np.ones(idx.shape[0], np.bool_), "TRUE")
        if isinstance(expr, AlwaysFalse):
            return self._verdict(idx, np.zeros(idx.shape[0], np.bool_), "FALSE is never true")
        if isinstance(expr, Unsupported):
            self.note(f"{expr.text}: not used for pruning")
            return self._verdict(
                idx, np.ones(idx.shape[0], np.bool_), f"{expr.text}: not used for pruning"
            )
        if isinstance(expr, Predicate) and isinstance(expr.term, BoundReference):
            return self._leaf(expr, idx)
        raise TypeError(f"the engine needs a bound, NOT-free predicate, got {expr!r}")

    def _combine(self, left: Verdict, right: Verdict, live: np.ndarray, *, both: bool) -> Verdict:
        may = (left.may & right.may) if both else (left.may | right.may)
        if not self.reasons:
            return Verdict(may, None)
        assert left.why is not None and right.why is not None
        why: list[str | None] = [None] * self.size
        lw, rw, lm, rm = left.why, right.why, left.may.tolist(), right.may.tolist()
        for i in np.flatnonzero(live).tolist():
            a, b = lw[i], rw[i]
            if both:
                why[i] = a if not lm[i] else b if not rm[i] else _join(a, b, "; ")
            else:
                why[i] = a if lm[i] else b if rm[i] else _join(a, b, " and ")
        return Verdict(may, why)

    def _verdict(self, idx: np.ndarray, may: np.ndarray, why: Why) -> Verdict:
        if idx.shape[0] == self.size:  # every unit, in order (idx is ascending, distinct)
            out = np.array(may, dtype=np.bool_)
        else:
            out = np.zeros(self.size, dtype=np.bool_)
            out[idx] = may
        if not self.reasons:
            return Verdict(out, None)
        if idx.shape[0] == self.size:  # every unit (idx is ascending and distinct)
            whole = [why] * self.size if isinstance(why, str) else list(why)
            return Verdict(out, whole)  # type: ignore[arg-type]
        reasons: list[str | None] = [None] * self.size
        if isinstance(why, str):
            for i in idx.tolist():
                reasons[i] = why
        else:
            for j, i in enumerate(idx.tolist()):
                reasons[i] = why[j]
        return Verdict(out, reasons)

    # -- leaves -------------------------------------------------------------------

    def _leaf(self, p: Predicate, idx: np.ndarray) -> Verdict:
        ev = self.evidence(p.term)  # type: ignore[arg-type]
        if isinstance(p, IsNull):
            proof = ev.no_nulls(idx)
            return self._verdict(idx, ~proof.proven, proof.why)
        blocked = ev.blocked(idx)
        if blocked.proven.any():
            open_ = ~blocked.proven
            rest = self._leaf_open(p, ev, idx[open_])
            mine = self._verdict(idx[blocked.proven], np.ones(int(blocked.proven.sum()), bool),
                                 _pick(blocked.why, blocked.proven))  # fmt: skip
            return _merge(mine, rest)
        return self._leaf_open(p, ev, idx)

    def _leaf_open(self, p: Predicate, ev: ColumnEvidence, idx: np.ndarray) -> Verdict:
        if isinstance(p, NotNull):
            proof = ev.only_nulls(idx)
            return self._verdict(idx, ~proof.proven, proof.why)
        if isinstance(p, POSITIVE):
            return self._any_value(p, ev, idx)  # type: ignore[arg-type]
        if isinstance(p, LiteralPredicate):  # != and NOT IN
            return self._none_equal(p, ev, idx)
        raise TypeError(f"no rule for {type(p).__name__}")  # pragma: no cover

    def _none_equal(self, p: LiteralPredicate, ev: ColumnEvidence, idx: np.ndarray) -> Verdict:
        nulls = ev.only_nulls(idx)
        may = ~nulls.proven
        why: list[str] | None = None
        if may.any():
            rest = np.flatnonzero(may)
            equal = ev.all_equal(p, idx[rest])
            may[rest[equal.proven]] = False
            if self.reasons:
                why = [why_at(nulls.why, j) for j in range(idx.shape[0])]
                for k, j in enumerate(rest.tolist()):
                    why[j] = why_at(equal.why, k)
        elif self.reasons:
            why = [why_at(nulls.why, j) for j in range(idx.shape[0])]
        return self._verdict(idx, may, why if why is not None else "")

    def _any_value(self, p: LiteralPredicate, ev: ColumnEvidence, idx: np.ndarray) -> Verdict:
        n = idx.shape[0]
        values, dropped, unknown = candidates(p)
        if unknown is not None:
            self.note(f"{unknown}; may match")
            return self._verdict(idx, np.ones(n, np.bool_), unknown)
        if values is None:
            return self._verdict(idx, np.zeros(n, np.bool_), _summary(p, dropped))
        label = _label(p)
        state = np.zeros(n, dtype=np.uint8)  # 0 pending; else the deciding Status
        said: list[list[str]] | None = [[] for _ in range(n)] if self.reasons else None
        final: list[str] = [""] * n if self.reasons else []
        for stage in ev.coarse:  # whole groups of units ruled out first
            pending = np.flatnonzero(state == 0)
            if pending.size == 0:
                break
            found = stage.test(values, idx[pending])
            out = np.flatnonzero(found.status == _EXCLUDED)
            state[pending[out]] = Status.EXCLUDED
            if self.reasons:
                for k in out.tolist():
                    final[int(pending[k])] = why_at(found.why, k)
        # ``everyone``: no unit decided yet, so the pending units are all of ``idx`` (the
        # common case of one lookup over many units: no index arrays to make)
        everyone = n > 0 and not state.any()
        rest = None if everyone else np.flatnonzero(state == 0)
        nulls = ev.only_nulls(idx if rest is None or rest.size == n else idx[rest])
        if nulls.proven.any():
            proven = np.flatnonzero(nulls.proven)
            if rest is not None:
                proven = rest[proven]
            state[proven] = Status.EXCLUDED
            everyone = False
            if self.reasons:
                for k, j in zip(
                    np.flatnonzero(nulls.proven).tolist(), proven.tolist(), strict=True
                ):
                    final[j] = why_at(nulls.why, k)
        for stage in ev.stages:
            pending = None if everyone else np.flatnonzero(state == 0)
            if pending is not None and pending.size == 0:
                break
            found = stage.test(values, idx if pending is None else idx[pending])
            status = found.status
            decided = (status == _EXCLUDED) | (status == _INCLUDED)
            if pending is None:
                if decided.all():
                    state[:] = status
                elif decided.any():
                    state[decided] = status[decided]
                pending = np.arange(n) if said is not None else None
            elif decided.any():
                state[pending[decided]] = status[decided]
            everyone = everyone and not decided.any()
            if said is not None:
                assert pending is not None
                texts = found.why
                if isinstance(texts, str):
                    texts = [texts] * pending.shape[0]
                for j, d, text in zip(pending.tolist(), decided.tolist(), texts, strict=True):
                    if d:
                        final[j] = text
                    elif text:
                        said[j].append(text)
        may = state != _EXCLUDED
        if said is None:
            return self._verdict(idx, may, "")
        why = []
        head = f"{label}: "
        for j, m in enumerate(may.tolist()):
            last, earlier = final[j], said[j]
            if not m:
                why.append(_cut(head + last) if not dropped else
                           _summary(p, [*dropped, head + last]))  # fmt: skip
            elif not earlier:
                why.append(head + (last or "no evidence"))
            else:
                parts = dict.fromkeys([*earlier, last] if last else earlier)
                why.append(f"{head}{'; '.join(parts)}")
        return self._verdict(idx, may, why)


def probe(
    ev: ColumnEvidence, p: LiteralPredicate, units: np.ndarray
) -> list[list[tuple[ProbeStatus, str]]]:
    """Per unit and literal of ``p`` (bound), what the probe stages (the bloom filter)
    say: absent, maybe (or in doubt), or no filter, with the reason."""
    n = units.shape[0]
    out: list[list[tuple[ProbeStatus, str]]] = [[] for _ in range(n)]
    for lit, conv in zip(p.literals, p.conversions, strict=True):
        if isinstance(conv, Unknown | NoMatch):
            status = ProbeStatus.MAYBE if isinstance(conv, Unknown) else ProbeStatus.ABSENT
            for row in out:
                row.append((status, f"{lit}: {conv.reason}"))
            continue
        answer = [(ProbeStatus.NO_FILTER, "no filter")] * n
        pending = np.arange(n)
        for stage in ev.probe_stages:
            if pending.size == 0:
                break
            found = stage.test(conv, units[pending])
            unavailable = []
            for k, j in enumerate(pending.tolist()):
                s, text = found.status[k], why_at(found.why, k)
                if s == Status.EXCLUDED:
                    answer[j] = (ProbeStatus.ABSENT, f"{lit}: absent")
                elif s == Status.INCONCLUSIVE:
                    answer[j] = (ProbeStatus.MAYBE, f"{lit}: maybe present")
                elif s == Status.INCLUDED:  # present, or in doubt: the reason says which
                    answer[j] = (ProbeStatus.MAYBE, f"{lit}: {text}")
                else:
                    answer[j] = (ProbeStatus.NO_FILTER, text or "no filter")
                    unavailable.append(j)
            pending = np.array(unavailable, dtype=np.int64)
        for row, a in zip(out, answer, strict=True):
            row.append(a)
    return out


def overall(statuses: Sequence[ProbeStatus]) -> ProbeStatus:
    """A unit's probe answer over all values: absent only if every value is."""
    if all(s is ProbeStatus.ABSENT for s in statuses):
        return ProbeStatus.ABSENT
    if ProbeStatus.MAYBE in statuses:
        return ProbeStatus.MAYBE
    return ProbeStatus.NO_FILTER


def _merge(a: Verdict, b: Verdict) -> Verdict:
    """Two verdicts over disjoint units."""
    may = a.may | b.may
    if a.why is None or b.why is None:
        return Verdict(may, None)
    return Verdict(may, [x if x is not None else y for x, y in zip(a.why, b.why, strict=True)])


def _pick(why: Why, mask: np.ndarray) -> Why:
    return why if isinstance(why, str) else [w for w, m in zip(why, mask, strict=True) if m]


def _label(p: LiteralPredicate) -> str:
    if len(p.literals) == 1:
        return f"{p.term.name} = {p.literals[0]}"
    if len(p.literals) <= 3:
        return str(p)
    return f"{p.term.name} IN ({len(p.literals)} values)"


def _summary(p: LiteralPredicate, parts: list[str]) -> str:
    if len(parts) > 3:
        return f"{p.term.name}: all {len(p.literals)} values ruled out"
    return _join("; ".join(parts), "", "")


def _join(a: str | None, b: str | None, sep: str) -> str:
    """``a`` and ``b`` joined (once if equal), cut to a readable length."""
    a, b = a or "", b or ""
    return _cut(a if (a == b or not b) else b if not a else f"{a}{sep}{b}")


def _cut(text: str) -> str:
    """``text`` cut to a readable length."""
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


__all__ = ["Pruner", "Verdict", "candidates", "overall", "probe"]
