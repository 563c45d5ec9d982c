"""The ``--json`` of result types: keys named once, values read from the result.

Result dataclasses (:mod:`bloomskip.prune.result`, :mod:`bloomskip.index.query`, the
``AddResult`` of :mod:`bloomskip.parquet.write` and :mod:`bloomskip.orc.write`,
:mod:`bloomskip.spark.scan`) print JSON objects whose keys are their own attribute names.
:func:`attributes` builds such an object from the names, in order - one list, not a
``"name": self.name`` line per key. A result whose JSON is just such attributes says so
in one line, ``to_json = partialmethod(attributes, "path reason ...")`` (``to_json =
attributes`` for all its fields); one whose JSON holds other keys too adds them.
Values are made JSON-ready as those methods did by hand: a tuple becomes a list, inside
lists too (``zones``, ``values``), a dataclass its :func:`dataclasses.asdict`, and a name
written ``seconds:6`` has its value rounded to 6 digits; anything else is kept as it is.
The shapes are the CLI's (``tests/cli`` pins them): this module changes how they are
written, never what.
"""

from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass
from typing import Any


def attributes(obj: Any, names: str | None = None) -> dict[str, Any]:
    """``{name: obj.name}`` for each of the space-separated ``names`` (fields or
    properties), in that order, the values JSON-ready; ``name:N`` rounds the value to
    ``N`` digits. ``None``: every field of the dataclass ``obj``."""
    if names is None:
        return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}
    out = {}
    for spec in names.split():
        name, _, digits = spec.partition(":")
        value = _plain(getattr(obj, name))
        out[name] = round(value, int(digits)) if digits else value
    return out


def _plain(value: Any) -> Any:
    """``value`` with its tuples as lists and its dataclasses as dicts."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, list) and any(isinstance(v, tuple) or _is_record(v) for v in value):
        return [_plain(v) for v in value]
    if _is_record(value):
        return asdict(value)
    return value


def _is_record(value: Any) -> bool:
    return is_dataclass(value) and not isinstance(value, type)


__all__ = ["attributes"]
