"""The demo's report records: dataclasses whose JSON (``bloomskip demo --json``) is their
fields, as :func:`dataclasses.asdict` gives them."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


class Record:
    """Base of the demo's dataclasses that report themselves: :meth:`to_json` is every
    field (nested dataclasses as dicts); a record that reports more, or a field in another
    form, changes or adds its keys to it."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # (subclasses are dataclasses)


__all__ = ["Record"]
