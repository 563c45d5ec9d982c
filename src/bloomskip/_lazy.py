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


def exports(package: str, names: dict[str, str]) -> Any:
    """A package's ``__getattr__`` that imports ``name`` from ``package.names[name]`` on
    first use (the package's public names, without importing what they need)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__


def require(module: str, purpose: str, extra: str, distribution: str | None = None) -> Any:
    """``import module``, or :class:`~bloomskip.errors.MissingDependencyError` saying what
    needs it and how to install it: ``"<purpose> needs <distribution>: pip install
    'bloomskip[<extra>]'"``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        from bloomskip.errors import MissingDependencyError

        raise MissingDependencyError(
            f"{purpose} needs {distribution or module}: pip install 'bloomskip[{extra}]' ({e})"
        ) from None
