"""The arguments of the zone index's public functions, checked in one place.

``build``, ``refresh``, ``open``, ``vacuum`` and :class:`~bloomskip.index.ZoneIndex`'s
``query``, ``row_filter`` and ``zones`` check what they are given here, before doing
anything, so a wrong argument is one :class:`~bloomskip.errors.InvalidParameterError`
(a :class:`~bloomskip.errors.PredicateError` for a predicate that is not one) naming the
parameter, what is accepted and what was given - never a ``TypeError`` from deep inside,
nor nonsense (``max_in_fpp=-1``, an empty path) silently accepted. The limits are the
command line's (:mod:`bloomskip.cli.args`; a test keeps them equal), so both refuse the
same values. A Lance dataset's ``query`` (:mod:`bloomskip.lance.reader`) checks here too.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from bloomskip.errors import InvalidParameterError
from bloomskip.expr.bind import predicate as check_predicate
from bloomskip.expr.expressions import Expression

#: Reader threads at most (``threads=``, ``--threads``).
MAX_THREADS = 1024
#: Versions ``vacuum`` keeps at most (``keep_versions=``, ``--keep``).
MAX_KEEP = 1_000_000
#: A table version or snapshot id (``as_of=``, ``--as-of``): a non-negative int64.
MAX_AS_OF = 2**63 - 1


def _bad(what: str, accepted: str, value: object) -> InvalidParameterError:
    return InvalidParameterError(f"{what} must be {accepted}, got {_show(value)}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def path(value: object, what: str) -> str | os.PathLike:
    """A local path or URI: ``str`` or ``os.PathLike`` text, not empty, without NUL."""
    if not isinstance(value, str | os.PathLike):
        raise _bad(what, "a path or URI (str or os.PathLike)", value)
    text = os.fspath(value)
    if not isinstance(text, str):  # a PathLike of bytes
        raise _bad(what, "a path or URI as text (str), not bytes", value)
    if not text:
        raise InvalidParameterError(f"{what}: the path is empty (use '.' for this directory)")
    if "\0" in text:
        raise InvalidParameterError(f"{what}: {text!r}: a path cannot hold a NUL byte")
    return value


def source(value: object) -> object:
    """What an index covers: one path or URI, or a sequence of them."""
    if isinstance(value, str | os.PathLike):
        return path(value, "source")
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for item in value:
            path(item, "each path of source")
        return value
    raise _bad("source", "a path or URI, or a list of them", value)


def columns(value: object) -> list[str]:
    """Column names: one ``str`` or a sequence of distinct, non-empty ``str``."""
    if isinstance(value, str):
        names = [value]
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        names = list(value)
    else:
        raise _bad("columns", "a column name or a list of column names", value)
    for n in names:
        if not isinstance(n, str):
            raise _bad("each column", "a name (str)", n)
        if not n:
            raise InvalidParameterError("a column name cannot be empty")
    if not names or len(set(names)) != len(names):
        raise InvalidParameterError(f"columns must be distinct names, got {_show(names)}")
    return names


def column(value: object, indexed: Sequence[str], root: str) -> str:
    """One indexed column's name."""
    if not isinstance(value, str):
        raise _bad("column", "a column name (str)", value)
    if value not in indexed:
        raise InvalidParameterError(
            f"{root} has no index of column {value!r}; indexed columns are: "
            f"{', '.join(list(indexed)[:30]) or '(none)'}"
        )
    return value


def predicate(value: object) -> str | Expression:
    """SQL text or an expression tree (empty text is the parser's to refuse), checked
    before anything is listed: :func:`bloomskip.expr.bind.predicate`."""
    return check_predicate(value)


def _number(value: object, what: str, accepted: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _bad(what, accepted, value)
    number = float(value)
    if not math.isfinite(number):
        raise _bad(what, accepted, value)
    return number


def probability(value: object, what: str) -> float:
    """A probability from 0 to 1, both included (as ``--max-in-fpp`` takes it)."""
    accepted = "a probability from 0 to 1"
    number = _number(value, what, accepted)
    if not 0.0 <= number <= 1.0:
        raise _bad(what, accepted, value)
    return number


def seconds(value: object, what: str) -> float:
    """A non-negative, finite number of seconds."""
    accepted = "a non-negative number of seconds"
    number = _number(value, what, accepted)
    if number < 0:
        raise _bad(what, accepted, value)
    return number


def count(value: object, what: str, minimum: int, maximum: int) -> int:
    """A whole number (an ``int``, not a ``bool``) from ``minimum`` to ``maximum``."""
    accepted = f"a whole number from {minimum:,} to {maximum:,}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _bad(what, accepted, value)
    if not minimum <= int(value) <= maximum:
        raise _bad(what, accepted, value)
    return int(value)


def threads(value: object) -> int | None:
    """Reader threads: None (the CPU count) or 1 to :data:`MAX_THREADS`."""
    return None if value is None else count(value, "threads", 1, MAX_THREADS)


def version(value: object) -> int | None:
    """An index version: None (the latest) or a positive whole number."""
    return None if value is None else count(value, "version", 1, 2**63 - 1)


def flag(value: object, what: str, *, optional: bool = False) -> Any:
    """``True`` or ``False`` (a numpy bool too; or None, when ``optional``)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if optional and value is None:
        return value
    raise _bad(what, "True or False" + (" (or None)" if optional else ""), value)


__all__ = [
    "MAX_AS_OF",
    "MAX_KEEP",
    "MAX_THREADS",
    "column",
    "columns",
    "count",
    "flag",
    "path",
    "predicate",
    "probability",
    "seconds",
    "source",
    "threads",
    "version",
]
