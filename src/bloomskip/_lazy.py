"""Modules loaded on first use: numba (and the compiled kernels), pyspark and pylance cost
seconds to import, so ``import bloomskip`` and the modules a Spark worker unpickles load
none of them until a kernel, a session or a dataset is really needed.

>>> from bloomskip._lazy import lazy
>>> kernels = lazy("bloomskip.sbbf.kernels")   # nothing imported yet
>>> kernels.insert_hashes                       # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _Lazy:
    """A module proxy: the module is imported when an attribute is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy(name: str) -> Any:
    """A stand-in for ``import name`` that imports on first attribute access."""
    return _Lazy(name)


__all__ = ["lazy"]
