"""Values -> PLAIN bytes -> 64-bit hashes, in compiled kernels.

* :mod:`.kernels` - xxHash64 and MurmurHash3 over numpy buffers (numba);
* :mod:`.plain` - the three buffer layouts the kernels read, and :func:`hash_plain`;
* :mod:`.physical` - one hash function per Parquet physical type;
* :mod:`.arrow` - Arrow types (and Python values) -> Parquet physical or Arrow-width bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bloomskip.hashing.arrow import Encoding, PhysicalSpec, parquet_spec, to_plain_columns
from bloomskip.hashing.physical import (
    PhysicalType,
    hash_boolean,
    hash_byte_array,
    hash_double,
    hash_fixed_len_byte_array,
    hash_float,
    hash_int32,
    hash_int64,
    hash_int96,
)
from bloomskip.hashing.plain import HashAlgorithm, hash_plain


def hash_values(
    values: Any,
    *,
    type: Any = None,
    physical: PhysicalSpec | None = None,
    encoding: str | Encoding = Encoding.PARQUET,
    hash: str | HashAlgorithm = HashAlgorithm.XXHASH64,
) -> np.ndarray:
    """64-bit hashes of the non-null values, in order, as a ``uint64`` array."""
    algorithm = HashAlgorithm.parse(hash)
    parts = [
        hash_plain(p, algorithm) for p, _ in to_plain_columns(values, type, physical, encoding)
    ]
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


__all__ = [
    "Encoding",
    "HashAlgorithm",
    "PhysicalSpec",
    "PhysicalType",
    "hash_boolean",
    "hash_byte_array",
    "hash_double",
    "hash_fixed_len_byte_array",
    "hash_float",
    "hash_int32",
    "hash_int64",
    "hash_int96",
    "hash_plain",
    "hash_values",
    "parquet_spec",
]
