"""``bloomskip._json.attributes``: the keys a result's ``to_json`` names, in that order,
with values JSON-ready as the methods wrote them by hand (the CLI's shapes themselves are
pinned in tests/cli)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partialmethod

import pytest

from bloomskip._json import attributes


@dataclass(frozen=True)
class Part:
    name: str
    span: tuple[int, int]


@dataclass
class Whole:
    title: str
    parts: list[Part] = field(default_factory=list)
    ranges: list[tuple[int, int]] | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.parts)

    to_json = partialmethod(attributes, "count title ranges seconds:3 parts")


def test_named_attributes_in_the_order_given_properties_too():
    w = Whole("t", [Part("a", (1, 2))], [(0, 5), (9, 1)], 1.23456, ["n"])
    doc = w.to_json()
    assert list(doc) == ["count", "title", "ranges", "seconds", "parts"]
    assert doc == {
        "count": 1,
        "title": "t",
        "ranges": [[0, 5], [9, 1]],  # tuples as lists, inside lists too
        "seconds": 1.235,  # name:N rounds to N digits
        "parts": [{"name": "a", "span": (1, 2)}],  # dataclasses as dataclasses.asdict does
    }


def test_every_field_when_no_names_are_given():
    doc = attributes(Part("a", (1, 2)))
    assert doc == {"name": "a", "span": [1, 2]}
    assert json.dumps(doc) == '{"name": "a", "span": [1, 2]}'


def test_values_without_tuples_are_the_results_own():
    w = Whole("t", notes=["x"])
    assert attributes(w, "notes")["notes"] is w.notes
    assert attributes(w, "ranges") == {"ranges": None}


def test_an_unknown_name_is_an_error_not_a_missing_key():
    with pytest.raises(AttributeError):
        attributes(Whole("t"), "title nope")
