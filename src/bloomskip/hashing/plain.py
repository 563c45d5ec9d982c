"""PLAIN-encoded values in the three layouts the kernels hash, and hashing them.

A Parquet bloom filter hashes the PLAIN encoding of each value of the column's
*physical* type. Values reach the kernels in one of three layouts:

=====================  ==============================================  =======================
layout                 physical types                                  bytes hashed per value
=====================  ==============================================  =======================
:class:`Words`         BOOLEAN, INT32, INT64, FLOAT, DOUBLE            1, 4 or 8 (little-endian)
:class:`Rows`          INT96, FIXED_LEN_BYTE_ARRAY                     12 or ``type_length``
:class:`VarBytes`      BYTE_ARRAY                                      the raw bytes, no length
=====================  ==============================================  =======================

Nothing here knows about Arrow or Parquet logical types: :mod:`bloomskip.hashing.arrow`
turns typed arrays into these layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from bloomskip._lazy import lazy
from bloomskip.errors import InvalidParameterError

kernels = lazy("bloomskip.hashing.kernels")


class HashAlgorithm(StrEnum):
    """The 64-bit hash a filter uses. Parquet files only ever use ``XXHASH64``."""

    XXHASH64 = "xxhash64"
    #: The hash of the initial Parquet bloom filter draft (low 64 bits of x64_128).
    MURMUR3_X64_128 = "murmur3_x64_128"

    @classmethod
    def parse(cls, value: str | HashAlgorithm) -> HashAlgorithm:
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(repr(m.value) for m in cls)
            raise InvalidParameterError(f"unknown hash {value!r}: use one of {names}") from None

    @property
    def code(self) -> int:
        return kernels.XXHASH64 if self is HashAlgorithm.XXHASH64 else kernels.MURMUR3_X64_128


_WORD_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))


@dataclass(frozen=True)
class Words:
    """Fixed-width values as unsigned integers whose little-endian bytes are hashed."""

    values: np.ndarray

    def __post_init__(self) -> None:
        if self.values.dtype not in _WORD_DTYPES or self.values.ndim != 1:
            raise InvalidParameterError(
                f"Words needs a 1-D uint8/16/32/64 array, got {self.values.dtype} "
                f"with {self.values.ndim} dimensions"
            )

    def __len__(self) -> int:
        return int(self.values.shape[0])

    def as_rows(self) -> Rows:
        values = np.ascontiguousarray(self.values)
        return Rows(values.view(np.uint8), values.dtype.itemsize, len(values))


@dataclass(frozen=True)
class Rows:
    """``count`` byte strings of ``width`` bytes each, back to back in ``data`` (uint8)."""

    data: np.ndarray
    width: int
    count: int

    def __post_init__(self) -> None:
        if self.data.dtype != np.uint8 or self.data.ndim != 1:
            raise InvalidParameterError("Rows needs a flat uint8 data array")
        if self.width < 0 or self.data.shape[0] < self.width * self.count:
            raise InvalidParameterError(
                f"Rows: {self.count} rows of {self.width} B need {self.width * self.count} B, "
                f"data has {self.data.shape[0]} B"
            )

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class VarBytes:
    """Variable-length byte strings in Arrow layout: ``data[offsets[i]:offsets[i+1]]``."""

    offsets: np.ndarray
    data: np.ndarray

    def __post_init__(self) -> None:
        if self.offsets.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise InvalidParameterError("VarBytes offsets must be int32 or int64")
        if self.data.dtype != np.uint8 or self.offsets.shape[0] < 1:
            raise InvalidParameterError("VarBytes needs uint8 data and at least one offset")
        n = self.offsets.shape[0]
        if n > 1 and (
            self.offsets[0] < 0
            or self.offsets[-1] > self.data.shape[0]
            or np.any(self.offsets[1:] < self.offsets[:-1])
        ):
            raise InvalidParameterError(
                "VarBytes offsets must be non-decreasing and inside the data buffer"
            )

    @classmethod
    def trusted(cls, offsets: np.ndarray, data: np.ndarray) -> VarBytes:
        """Skip the O(n) offset checks: for buffers of an Arrow array, already valid."""
        self = object.__new__(cls)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "data", data)
        return self

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)


PlainValues = Words | Rows | VarBytes


def hash_plain(plain: PlainValues, algorithm: HashAlgorithm = HashAlgorithm.XXHASH64) -> np.ndarray:
    """The 64-bit hash of every value, as a ``uint64`` array."""
    out = np.empty(len(plain), dtype=np.uint64)
    if isinstance(plain, Words) and algorithm is not HashAlgorithm.XXHASH64:
        plain = plain.as_rows()
    if isinstance(plain, Words):
        kernels.hash_words(plain.values, out)
    elif isinstance(plain, Rows):
        kernels.hash_rows(plain.data, plain.width, out, algorithm.code)
    else:
        kernels.hash_var(plain.offsets, plain.data, out, algorithm.code)
    return out
