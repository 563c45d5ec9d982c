"""The SBBF's block selection and in-block masks in plain numpy, for probing filters read
block by block (:mod:`bloomskip.index.serving`) without the compiled kernels.

For a 64-bit hash ``h`` (parquet-format ``BloomFilter.md``): the block is
``((h >> 32) * num_blocks) >> 32`` and the mask sets, in each of the block's eight 32-bit
words ``j``, the bit ``(key * SALT[j] mod 2**32) >> 27`` with ``key = h & 0xFFFFFFFF``.
A block may hold ``h`` when every bit of the mask is set.
"""

from __future__ import annotations

import numpy as np

#: The eight odd salts of the Parquet SBBF (parquet-format BloomFilter.md).
SALT = np.array(
    [
        0x47B6137B,
        0x44974D91,
        0x8824AD5B,
        0xA2B7289D,
        0x705495C7,
        0x2DF1424B,
        0x9EFC4947,
        0x5C6BFB31,
    ],
    dtype=np.uint32,
)


def block_masks(hashes: np.ndarray) -> np.ndarray:
    """The eight-word mask of each hash: ``(len(hashes), 8)`` uint32."""
    key = (np.asarray(hashes, dtype=np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    with np.errstate(over="ignore"):
        bits = (key[:, None] * SALT[None, :]) >> np.uint32(27)  # uint32 wraps: mod 2**32
    return (np.uint32(1) << bits).astype(np.uint32)


__all__ = ["SALT", "block_masks"]
